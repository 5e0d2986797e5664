// A data home used hard for two years (generate-home.ts): what must not grow with it. Each figure is
// a ratio against a baseline taken in the same run, alternating, so load from elsewhere hits both:
// a listing against the same command on an empty home, a long session's memory against its newest
// five turns', a search through the server against the same search by `argo logs -q`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BIG, TWO_YEARS, generateHome } from './generate-home.js';
import type { HomeMeta, HomeParams } from './generate-home.js';
import { ARGO_BIN, cleanEnv, expectSuccess, runNode } from './process.js';
import type { Outcome } from './process.js';
import type { Row } from './report.js';
import { spawnListening, stop } from './serve.js';
import { round, summarize } from './stats.js';
import type { Summary } from './stats.js';

/** The quick run's home: a year, a fifth of the turns. */
const QUICK_HOME: Omit<HomeParams, 'end'> = { ...TWO_YEARS, days: 365, turns: 40_000, sessions: 800, bigTurns: 8_000, forks: 40 };
/** A word the generated prompts hold now and then (corpus.ts: "borrow checking"). */
const WORD = 'borrow';

interface Measured {
  wallMs: Summary;
  maxRssMb: Summary;
}

export interface ScaleResult {
  meta: HomeMeta;
  home: string;
  logs: Record<'full' | 'empty', Measured>;
  completion: Record<'full' | 'empty', Measured>;
  show: Record<'whole' | 'newest', Measured>;
  exportAll: Record<'full' | 'empty', Measured>;
  search: { serveMs: Summary; logsMs: Summary };
  reindex: { reindex: Measured; check: Measured };
}

type Progress = (message: string) => void;

export async function benchScale(runs: number, quick: boolean, dataDir: string, progress: Progress): Promise<{ result: ScaleResult; rows: Row[] }> {
  const params: HomeParams = { ...(quick ? QUICK_HOME : TWO_YEARS), end: new Date().toISOString().slice(0, 10) };
  const home = join(dataDir, 'scale-home');
  const meta = generateHome(home, params, (message) => progress(`scale: ${message}`));
  progress(`scale: ${meta.files} day files, ${(meta.bytes / 1e6).toFixed(0)} MB, ${meta.turns.toLocaleString('en-US')} turns, ${meta.sessions} sessions in ${meta.generatedSeconds} s`);
  const empty = mkdtempSync(join(tmpdir(), 'argo-bench-scale-empty-'));
  const argo = (where: string, args: string[]): Promise<Outcome> => runNode({ args: [ARGO_BIN, ...args], env: cleanEnv(where), stdout: 'null', instrument: true });
  const measured = (outcomes: Outcome[]): Measured => ({
    wallMs: summarize(outcomes.map((o) => o.wallMs)),
    maxRssMb: summarize(outcomes.map((o) => (o.report?.maxRssKb ?? Number.NaN) / 1024)),
  });
  /** Two runs side by side, alternating which goes first; one untimed run of each first. */
  const pair = async <K extends string>(label: string, sides: Record<K, [string, string[]]>): Promise<Record<K, Measured>> => {
    const keys = Object.keys(sides) as K[];
    const outcomes = new Map<K, Outcome[]>(keys.map((key) => [key, []]));
    for (let i = -1; i < runs; i++) {
      for (const key of i % 2 === 0 ? keys : [...keys].reverse()) {
        const [where, args] = sides[key];
        const outcome = expectSuccess(await argo(where, args), `argo ${args.join(' ')}`);
        if (i >= 0) outcomes.get(key)?.push(outcome);
      }
    }
    progress(`scale: ${label}: ${runs}/${runs}`);
    return Object.fromEntries(keys.map((key) => [key, measured(outcomes.get(key) ?? [])])) as Record<K, Measured>;
  };

  try {
    const logs = await pair('argo logs', { full: [home, ['logs']], empty: [empty, ['logs']] });
    const completion = await pair('argo __complete sessions', { full: [home, ['__complete', 'sessions']], empty: [empty, ['__complete', 'sessions']] });
    const show = await pair(`sessions show ${BIG} --json`, { whole: [home, ['sessions', 'show', BIG, '--json']], newest: [home, ['sessions', 'show', BIG, '-n', '5', '--json']] });
    const exportAll = await pair('export --format sharegpt', { full: [home, ['export', '--format', 'sharegpt']], empty: [empty, ['export', '--format', 'sharegpt']] });
    const reindex = await pair('sessions reindex vs logs check', { reindex: [home, ['sessions', 'reindex']], check: [home, ['logs', 'check']] });

    // The server's session search against the same word found by argo logs -q: both are one scan of the log.
    const server = await spawnListening([ARGO_BIN, 'serve', '--port', '0'], cleanEnv(home, { OLLAMA_HOST: 'http://127.0.0.1:1' }), /listening on (\S+)/);
    const serveMs: number[] = [];
    const logsMs: number[] = [];
    try {
      for (let i = -1; i < runs; i++) {
        const started = performance.now();
        const answer = await fetch(`${server.url}/api/sessions?q=${WORD}`);
        await answer.arrayBuffer();
        if (!answer.ok) throw new Error(`GET /api/sessions?q=${WORD} answered ${answer.status}`);
        const took = performance.now() - started;
        const logsRun = expectSuccess(await argo(home, ['logs', '-q', WORD, '--json']), `argo logs -q ${WORD} --json`);
        if (i < 0) continue;
        serveMs.push(took);
        logsMs.push(logsRun.wallMs);
      }
    } finally {
      await stop(server);
    }
    progress(`scale: GET /api/sessions?q=${WORD} vs argo logs -q: ${runs}/${runs}`);
    const result: ScaleResult = { meta, home, logs, completion, show, exportAll, search: { serveMs: summarize(serveMs), logsMs: summarize(logsMs) }, reindex };
    return { result, rows: scaleRows(result) };
  } finally {
    // Made again by every run (it is dated today), so not kept: it is as big as the history it holds.
    rmSync(empty, { recursive: true, force: true });
    rmSync(home, { recursive: true, force: true });
  }
}

const ms = (value: number): string => `${round(value, 1)} ms`;
const mb = (value: number): string => `${round(value, 1)} MB`;

function ratioRow(section: string, measure: string, argo: number, reference: number, unit: (value: number) => string, limit: number | null): Row {
  const ratio = argo / reference;
  return { section, measure, argo: unit(argo), reference: unit(reference), comparison: `${ratio.toFixed(2)}×`, target: limit === null ? 'report' : `≤ ${limit}×`, pass: limit === null ? null : ratio <= limit };
}

function scaleRows(r: ScaleResult): Row[] {
  const section = `Scale: ${r.meta.files} day files, ${r.meta.turns.toLocaleString('en-US')} turns, ${r.meta.sessions.toLocaleString('en-US')} sessions (${BIG}: ${r.meta.params.bigTurns.toLocaleString('en-US')} turns)`;
  return [
    ratioRow(section, 'argo logs (the newest 20), median wall, full vs empty home', r.logs.full.wallMs.median, r.logs.empty.wallMs.median, ms, 1.5),
    ratioRow(section, 'argo __complete sessions, median wall, full vs empty home', r.completion.full.wallMs.median, r.completion.empty.wallMs.median, ms, 1.5),
    {
      ...ratioRow(section, `peak RSS, sessions show ${BIG} --json vs its newest 5 turns (max of runs)`, r.show.whole.maxRssMb.max, r.show.newest.maxRssMb.max, mb, 2.5),
      note: 'about 50 MB of it is V8 growing its young generation under the allocation rate, whatever the length; held whole, the session was 5–7×',
    },
    ratioRow(section, 'peak RSS, export --format sharegpt, full vs empty home (max of runs)', r.exportAll.full.maxRssMb.max, r.exportAll.empty.maxRssMb.max, mb, 1.5),
    ratioRow(section, `GET /api/sessions?q=${WORD} vs argo logs -q ${WORD} --json, median wall`, r.search.serveMs.median, r.search.logsMs.median, ms, 2),
    ratioRow(section, 'sessions reindex (every index already right) vs logs check, median wall', r.reindex.reindex.wallMs.median, r.reindex.check.wallMs.median, ms, null),
  ];
}
