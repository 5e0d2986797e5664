// Issue 4: the cost of replay and log queries with a large history, against an empty data dir and
// against grep over the same files. Every argo run carries the instrument preload, so each timing
// comes with the process's own peak RSS.
import { closeSync, mkdtempSync, openSync, readSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BIG_SESSION, DEFAULT_SESSION, ensureHistory } from './generate-history.js';
import type { HistoryMeta } from './generate-history.js';
import { NEEDLE } from './corpus.js';
import type { HistoryParams, Repetitions } from './options.js';
import { ARGO_BIN, cleanEnv, expectSuccess, runCommand, runNode } from './process.js';
import type { Outcome } from './process.js';
import type { Row } from './report.js';
import { round, summarize } from './stats.js';
import type { Summary } from './stats.js';

const PROMPT = 'continue with the retry logic';
/** Peak RSS with the full history may exceed the empty case by this factor and still count as flat. */
const FLAT_RSS_FACTOR = 1.25;

interface Sample {
  wallMs: Summary;
  /** user + system CPU of the argo process: less disturbed than wall time by whatever else runs. */
  cpuMs: Summary;
  maxRssMb: Summary;
}

export interface CommandResult {
  command: string;
  available: boolean;
  /** Anything that makes the timing mean less than it seems (a missing flag, a wrong answer). */
  note: string | null;
  empty: Sample | null;
  full: Sample | null;
}

/** What one `argo logs` run printed over the full history, against what the history holds. */
interface OutputCheck {
  linesPrinted: number;
  linesExpected: number;
  ndjson: boolean;
}

export interface HistoryResult {
  params: HistoryParams;
  data: { bytes: number; files: number; turns: number; reused: boolean; generatedSeconds: number; setupSeconds: number; home: string };
  meta: HistoryMeta;
  lastN: CommandResult;
  lastNBig: CommandResult;
  session: CommandResult;
  logsQuery: CommandResult & { output: OutputCheck | null };
  /** `logs --json` with the verified record (logs/.verified.json) kept from an earlier read: what a user sees from the second read on. */
  logsAll: CommandResult & { output: OutputCheck };
  /** The same with the record removed before every run: each line is parsed and checked (the first read of a history). */
  logsAllCold: CommandResult;
  grep: { command: string; exact: Summary; exactCount: number; ignoreCase: Summary; ignoreCaseCount: number; locale: string };
  indexUntouched: boolean;
}

type Progress = (message: string) => void;

function sample(outcomes: Outcome[]): Sample {
  return {
    wallMs: summarize(outcomes.map((o) => o.wallMs)),
    cpuMs: summarize(outcomes.map((o) => ((o.report?.userUs ?? Number.NaN) + (o.report?.systemUs ?? Number.NaN)) / 1000)),
    maxRssMb: summarize(outcomes.map((o) => (o.report?.maxRssKb ?? Number.NaN) / 1024)),
  };
}

/** Pages the log files into the cache once, so neither argo nor grep pays the first disk read. */
function warmCache(files: string[]): void {
  const buffer = Buffer.allocUnsafe(8 << 20);
  for (const file of files) {
    const fd = openSync(file, 'r');
    while (readSync(fd, buffer, 0, buffer.length, null) > 0);
    closeSync(fd);
  }
}

function indexStamps(sessionsDir: string): string {
  return readdirSync(sessionsDir)
    .sort()
    .map((name) => `${name}:${statSync(join(sessionsDir, name)).mtimeMs}`)
    .join('\n');
}

export async function benchHistory(params: HistoryParams, dataDir: string, runs: Repetitions, progress: Progress): Promise<{ result: HistoryResult; rows: Row[] }> {
  const setupStarted = performance.now();
  const history = ensureHistory(dataDir, params, (message) => progress(`history: ${message}`));
  const { meta } = history;
  progress(`history: ${history.reused ? 'reusing' : 'generated'} ${(meta.bytes / 1e9).toFixed(2)} GB in ${history.home} (${meta.turns.toLocaleString('en-US')} turns)`);
  const full = history.home;
  const empty = mkdtempSync(join(tmpdir(), 'argo-bench-empty-'));
  const files = meta.files.map((name) => join(full, 'logs', name));
  progress('history: reading the logs once to warm the page cache');
  warmCache(files);
  const setupSeconds = round((performance.now() - setupStarted) / 1000, 1);
  const stampsBefore = indexStamps(join(full, 'sessions'));

  const argo = (home: string, args: string[], stdout: 'pipe' | 'count' | 'null' = 'null'): Promise<Outcome> =>
    runNode({ args: [ARGO_BIN, ...args.map((arg) => (arg === '{home}' ? home : arg))], env: cleanEnv(home), stdout, instrument: true });

  /** Runs a command against both data dirs, alternating which goes first; `prepare` runs before each run. */
  const compare = async (label: string, args: string[], count: number, prepare?: (home: string) => void): Promise<CommandResult> => {
    const outcomes: Record<'empty' | 'full', Outcome[]> = { empty: [], full: [] };
    for (let i = 0; i < count; i++) {
      const order = i % 2 === 0 ? (['empty', 'full'] as const) : (['full', 'empty'] as const);
      for (const which of order) {
        const home = which === 'empty' ? empty : full;
        prepare?.(home);
        outcomes[which].push(expectSuccess(await argo(home, args), `argo ${args.join(' ')}`));
      }
      if ((i + 1) % 5 === 0 || i + 1 === count) progress(`${label}: ${i + 1}/${count}`);
    }
    return { command: display(args), available: true, note: null, empty: sample(outcomes.empty), full: sample(outcomes.full) };
  };

  // Argo must answer from the generated history, through the index, or the timings measure something else.
  const check = async (args: string[], expected: number): Promise<void> => {
    const outcome = expectSuccess(await argo(full, [...args, '--json'], 'pipe'), `argo ${args.join(' ')} --json`);
    const loaded = (JSON.parse(outcome.stdout) as { replay_policy: { entries_available: number } | null }).replay_policy?.entries_available;
    if (loaded !== expected) throw new Error(`argo ${args.join(' ')} loaded ${loaded} turns, the generated history holds ${expected} ok turns`);
  };
  const bigOk = meta.sessions[BIG_SESSION]?.ok ?? 0;
  const defaultOk = meta.sessions[DEFAULT_SESSION]?.ok ?? 0;
  const lastArgs = ['--home', '{home}', '--replay', 'last:5', '--explain', PROMPT];
  const lastBigArgs = ['--home', '{home}', '--replay', 'last:5', '--explain', '--session', BIG_SESSION, PROMPT];
  const sessionArgs = ['--home', '{home}', '--replay', 'session', '--explain', '--session', BIG_SESSION, PROMPT];
  await check(lastArgs, Math.min(5, defaultOk));
  await check(sessionArgs, bigOk);

  const lastN = await compare('--replay last:5 --explain', lastArgs, runs.explain);
  const lastNBig = await compare(`--replay last:5 --explain --session ${BIG_SESSION}`, lastBigArgs, runs.explain);
  const session = await compare(`--replay session --explain --session ${BIG_SESSION}`, sessionArgs, runs.explain);

  const checkOutput = async (args: string[], linesExpected: number): Promise<{ output: OutputCheck; note: string | null }> => {
    const outcome = expectSuccess(await argo(full, args, 'count'), display(args));
    const ndjson = isTurn(outcome.stdout.split('\n')[0] ?? '');
    const problems = [
      ...(ndjson ? [] : ['printed text, not NDJSON: --json was not honoured']),
      ...(outcome.stdoutLines === linesExpected ? [] : [`printed ${outcome.stdoutLines} lines, the history holds ${linesExpected} matching turns`]),
    ];
    return { output: { linesPrinted: outcome.stdoutLines, linesExpected, ndjson }, note: problems.length > 0 ? problems.join('; ') : null };
  };

  // `argo logs -q` is being built alongside this bench: measure it when it exists, say so when not.
  const queryArgs = ['logs', '--home', '{home}', '-q', NEEDLE, '--json'];
  const probe = await argo(empty, queryArgs, 'pipe');
  let logsQuery: HistoryResult['logsQuery'];
  if (probe.code === 0) {
    const { output, note } = await checkOutput(queryArgs, meta.needleTurns);
    if (note) progress(`warning: ${display(queryArgs)} ${note}`);
    logsQuery = { ...(await compare(`logs -q ${NEEDLE} --json`, queryArgs, runs.scan)), note, output };
  } else {
    const reason = probe.stderr.trim().split('\n')[0] ?? `exit ${probe.code}`;
    progress(`argo logs -q is not available yet (${reason}); skipping its timing`);
    logsQuery = { command: display(queryArgs), available: false, note: reason, empty: null, full: null, output: null };
  }
  const allArgs = ['logs', '--home', '{home}', '--json'];
  // `logs --json` keeps a record of the files it found clean and copies those unread next time:
  // measured once without it (removed before every run) and once with it.
  const forgetVerified = (home: string): void => rmSync(join(home, 'logs', '.verified.json'), { force: true });
  const logsAllCold = { ...(await compare('logs --json, first read (no verified record)', allArgs, runs.scan, forgetVerified)), note: null };
  const all = await checkOutput(allArgs, meta.turns);
  if (all.note) progress(`warning: ${display(allArgs)} ${all.note}`);
  const logsAll = { ...(await compare('logs --json (every line, no filter)', allArgs, runs.scan)), note: all.note, output: all.output };

  const locale = process.env.LC_ALL ?? process.env.LANG ?? 'C';
  const grepEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: locale };
  const grep = async (flags: string): Promise<{ summary: Summary; count: number }> => {
    const outcomes: Outcome[] = [];
    for (let i = 0; i < runs.scan; i++) outcomes.push(expectSuccess(await runCommand('grep', [flags, NEEDLE, ...files], { env: grepEnv, stdout: 'pipe' }), `grep ${flags}`));
    const count = (outcomes[0]?.stdout ?? '').split('\n').reduce((sum, line) => sum + Number(line.split(':').at(-1) ?? 0), 0);
    progress(`grep ${flags} ${NEEDLE}: ${runs.scan}/${runs.scan}`);
    return { summary: summarize(outcomes.map((o) => o.wallMs)), count };
  };
  const exact = await grep('-c');
  const ignoreCase = await grep('-ci');

  rmSync(empty, { recursive: true, force: true });
  const result: HistoryResult = {
    params,
    data: { bytes: meta.bytes, files: files.length, turns: meta.turns, reused: history.reused, generatedSeconds: meta.generatedSeconds, setupSeconds, home: full },
    meta,
    lastN,
    lastNBig,
    session,
    logsQuery,
    logsAll,
    logsAllCold,
    grep: { command: `grep -c ${NEEDLE} logs/*.log`, exact: exact.summary, exactCount: exact.count, ignoreCase: ignoreCase.summary, ignoreCaseCount: ignoreCase.count, locale },
    indexUntouched: indexStamps(join(full, 'sessions')) === stampsBefore,
  };
  return { result, rows: historyRows(result) };
}

function isTurn(line: string): boolean {
  try {
    return typeof (JSON.parse(line) as { id?: unknown }).id === 'string';
  } catch {
    return false;
  }
}

function display(args: string[]): string {
  return `argo ${args.map((arg) => (arg === '{home}' ? 'DIR' : /\s/.test(arg) ? `"${arg}"` : arg)).join(' ')}`;
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;
const noted = (note: string | null): { note?: string } => (note ? { note } : {});
const mb = (value: number): string => `${value.toFixed(1)} MB`;

function rssRow(section: string, label: string, command: CommandResult): Row {
  if (!command.empty || !command.full) {
    return { section, measure: `peak RSS, ${label}`, argo: 'n/a', reference: 'n/a', comparison: '', target: 'flat', pass: null };
  }
  // The highest peak over all runs of each: the memory a user must have for the command.
  const ratio = command.full.maxRssMb.max / command.empty.maxRssMb.max;
  return {
    section,
    measure: `peak RSS, ${label} (full vs empty, max of runs)`,
    argo: mb(command.full.maxRssMb.max),
    reference: mb(command.empty.maxRssMb.max),
    comparison: `${ratio.toFixed(2)}×`,
    target: `flat (≤ ${FLAT_RSS_FACTOR}×)`,
    pass: ratio <= FLAT_RSS_FACTOR,
  };
}

function historyRows(r: HistoryResult): Row[] {
  const section = `Issue 4: ${r.data.turns.toLocaleString('en-US')} turns, ${(r.data.bytes / 1e9).toFixed(2)} GB, ${r.data.files} files vs an empty data dir`;
  const rows: Row[] = [];
  const last = r.lastN;
  if (last.full && last.empty) {
    const ratio = last.full.wallMs.median / last.empty.wallMs.median;
    rows.push({ section, measure: '--replay last:5 --explain, median wall (full vs empty)', argo: ms(last.full.wallMs.median), reference: ms(last.empty.wallMs.median), comparison: `${ratio.toFixed(2)}×`, target: '≤ 1.2×', pass: ratio <= 1.2 });
  }
  const session = r.session;
  if (session.full && session.empty) {
    const delta = session.full.wallMs.median - session.empty.wallMs.median;
    rows.push({ section, measure: `--replay session --explain, ${r.meta.sessions[BIG_SESSION]?.turns.toLocaleString('en-US')}-turn session, median wall`, argo: ms(session.full.wallMs.median), reference: ms(session.empty.wallMs.median), comparison: `+${delta.toFixed(1)} ms`, target: '≤ +150 ms', pass: delta <= 150 });
  }
  const lastBig = r.lastNBig;
  if (lastBig.full && lastBig.empty) {
    const ratio = lastBig.full.wallMs.median / lastBig.empty.wallMs.median;
    rows.push({ section, measure: '--replay last:5 --explain on the big session, median wall', argo: ms(lastBig.full.wallMs.median), reference: ms(lastBig.empty.wallMs.median), comparison: `${ratio.toFixed(2)}×`, target: 'report', pass: null });
  }
  const query = r.logsQuery;
  if (query.full) {
    const ratio = query.full.wallMs.median / r.grep.exact.median;
    rows.push({ section, measure: `logs -q ${NEEDLE} --json > /dev/null vs grep -c, median wall`, argo: ms(query.full.wallMs.median), reference: ms(r.grep.exact.median), comparison: `${ratio.toFixed(1)}×`, target: 'report', pass: null, ...noted(query.note) });
  } else {
    rows.push({ section, measure: `logs -q ${NEEDLE} --json > /dev/null vs grep -c`, argo: 'n/a', reference: ms(r.grep.exact.median), comparison: '', target: 'report', pass: null, note: `not measured: ${query.note ?? 'unavailable'}` });
  }
  if (r.logsAll.full) {
    const ratio = r.logsAll.full.wallMs.median / r.grep.exact.median;
    rows.push({ section, measure: 'logs --json > /dev/null (no filter) vs grep -c, median wall', argo: ms(r.logsAll.full.wallMs.median), reference: ms(r.grep.exact.median), comparison: `${ratio.toFixed(1)}×`, target: 'report', pass: null, ...noted(r.logsAll.note) });
  }
  if (r.logsAllCold.full) {
    const ratio = r.logsAllCold.full.wallMs.median / r.grep.exact.median;
    rows.push({ section, measure: 'logs --json > /dev/null, first read (no verified record) vs grep -c, median wall', argo: ms(r.logsAllCold.full.wallMs.median), reference: ms(r.grep.exact.median), comparison: `${ratio.toFixed(1)}×`, target: 'report', pass: null });
  }
  rows.push(
    rssRow(section, '--replay last:5 --explain', r.lastN),
    rssRow(section, '--replay session --explain (big)', r.session),
    rssRow(section, '--replay last:5 --explain (big)', r.lastNBig),
    rssRow(section, `logs -q ${NEEDLE} --json`, r.logsQuery),
    rssRow(section, 'logs --json', r.logsAll),
    rssRow(section, 'logs --json, first read (no verified record)', r.logsAllCold),
  );
  return rows;
}
