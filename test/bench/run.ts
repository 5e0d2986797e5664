// `npm run bench`: builds argo, then measures the figures issues 3 and 4 ask for. Progress goes to
// stderr, the table to stdout, every number to test/bench/.data/results.json.
//   npm run bench                      full size (1,000,000 turns of history)
//   npm run bench -- --quick           50,000 turns, fewer repetitions
//   npm run bench -- --only stream     just issue 3 (or --only history, --only serve for issue 12, --only agent for issue 11, --only rules for issue 9,
//                                      --only scale for a data home used hard for two years)
import { execFileSync } from 'node:child_process';
import { benchAgent } from './agent.js';
import type { AgentBenchResult } from './agent.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchHistory } from './history.js';
import type { HistoryResult } from './history.js';
import { benchOptions } from './options.js';
import { benchPhraseRules } from './phrase-rules.js';
import type { PhraseRulesResult } from './phrase-rules.js';
import { cleanupProcesses } from './process.js';
import { formatMarkdown, formatTable } from './report.js';
import type { Row } from './report.js';
import { benchScale } from './scale.js';
import type { ScaleResult } from './scale.js';
import { benchServe } from './serve.js';
import type { ServeResult } from './serve.js';
import { benchStreaming } from './streaming.js';
import type { StreamingResult } from './streaming.js';

const started = performance.now();
const elapsed = (): string => {
  const seconds = Math.round((performance.now() - started) / 1000);
  return `${String(Math.floor(seconds / 60)).padStart(2, '0')}:${String(seconds % 60).padStart(2, '0')}`;
};
const progress = (message: string): void => console.error(`[bench ${elapsed()}] ${message}`);

/** Which code was measured: others edit src/ while the bench runs, so a dirty tree is worth knowing. */
function sourceState(): { commit: string; changedInSrc: string[] } {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trimEnd();
    } catch {
      return '';
    }
  };
  const changed = git('status', '--porcelain', '--', 'src').split('\n').filter((line) => line !== '');
  return { commit: git('rev-parse', '--short', 'HEAD') || 'unknown', changedInSrc: changed.map((line) => line.slice(3)) };
}

async function main(): Promise<void> {
  const options = benchOptions(process.argv.slice(2), process.env);
  const machine = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
    loadAverageAtStart: loadavg().map((value) => Math.round(value * 100) / 100),
  };
  const source = sourceState();
  progress(`${machine.nproc} cores (${machine.cpu}), node ${machine.node}, load ${machine.loadAverageAtStart.join(' ')}; ${options.quick ? 'quick' : 'full'} run`);
  if (source.changedInSrc.length > 0) progress(`measuring ${source.commit} plus ${source.changedInSrc.length} uncommitted changes in src/`);
  const rows: Row[] = [];
  const sections: { streaming?: StreamingResult; history?: HistoryResult; serve?: ServeResult; agent?: AgentBenchResult; phraseRules?: PhraseRulesResult; scale?: ScaleResult } = {};
  const seconds: Record<string, number> = {};

  if (options.only === 'all' || options.only === 'stream') {
    const t = performance.now();
    progress('issue 3: argo vs the ollama client against the Ollama stand-in');
    const { result, rows: streamingRows } = await benchStreaming(options.runs, progress);
    sections.streaming = result;
    rows.push(...streamingRows);
    seconds.streaming = Math.round((performance.now() - t) / 1000);
  }
  if (options.only === 'all' || options.only === 'history') {
    const t = performance.now();
    progress(`issue 4: history of ${options.history.turns.toLocaleString('en-US')} turns`);
    const { result, rows: historyRows } = await benchHistory(options.history, options.dataDir, options.runs, progress);
    sections.history = result;
    rows.push(...historyRows);
    seconds.history = Math.round((performance.now() - t) / 1000);
  }
  if (options.only === 'all' || options.only === 'serve') {
    const t = performance.now();
    progress('issue 12: argo serve vs the same requests sent straight to the stand-in');
    const { result, rows: serveRows } = await benchServe({ sequential: options.runs.serveSequential, concurrentRequests: options.runs.serveConcurrent }, progress);
    sections.serve = result;
    rows.push(...serveRows);
    seconds.serve = Math.round((performance.now() - t) / 1000);
  }
  if (options.only === 'all' || options.only === 'agent') {
    const t = performance.now();
    progress('issue 11: agent loop overhead, parallel tools, start-up with tools');
    const { result, rows: agentRows } = await benchAgent(options.runs, progress);
    sections.agent = result;
    rows.push(...agentRows);
    seconds.agent = Math.round((performance.now() - t) / 1000);
  }
  if (options.only === 'all' || options.only === 'rules') {
    const t = performance.now();
    progress('issue 9: replay rules on adversarial prompts');
    const { result, rows: ruleRows } = benchPhraseRules(options.runs.rules, progress);
    sections.phraseRules = result;
    rows.push(...ruleRows);
    seconds.rules = Math.round((performance.now() - t) / 1000);
  }
  if (options.only === 'all' || options.only === 'scale') {
    const t = performance.now();
    progress('scale: a data home used hard for two years');
    const { result, rows: scaleRows } = await benchScale(options.runs.scale, options.quick, options.dataDir, progress);
    sections.scale = result;
    rows.push(...scaleRows);
    seconds.scale = Math.round((performance.now() - t) / 1000);
  }
  seconds.total = Math.round((performance.now() - started) / 1000);

  const judged = rows.filter((row) => row.pass !== null);
  const met = judged.filter((row) => row.pass).length;
  process.stdout.write(formatTable(rows));
  process.stdout.write(`\n${met} of ${judged.length} targets met; bench took ${elapsed()} (mm:ss)\n`);

  mkdirSync(options.dataDir, { recursive: true });
  const resultsPath = join(options.dataDir, 'results.json');
  const loadAverageAtEnd = loadavg().map((value) => Math.round(value * 100) / 100);
  const results = { date: new Date().toISOString(), machine: { ...machine, loadAverageAtEnd }, source, options, seconds, rows, markdown: formatMarkdown(rows), ...sections };
  writeFileSync(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
  progress(`results written to ${resultsPath}`);
}

main()
  .catch((error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  })
  .finally(cleanupProcesses);
