// Bench settings from flags and the environment (the only place either is read). Flags win.
//   --quick               50,000 turns and fewer repetitions (ARGO_BENCH_QUICK=1)
//   --turns N             history size (ARGO_BENCH_TURNS), default 1,000,000
//   --sessions N --days N --big-turns N --seed N
//   --only stream|history|serve|agent|rules|scale run one part (ARGO_BENCH_ONLY)
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export interface HistoryParams {
  turns: number;
  sessions: number;
  days: number;
  bigTurns: number;
  seed: number;
}

export const FULL_HISTORY: HistoryParams = { turns: 1_000_000, sessions: 1_000, days: 30, bigTurns: 10_000, seed: 20260105 };
export const QUICK_TURNS = 50_000;

export type Part = 'all' | 'stream' | 'history' | 'serve' | 'agent' | 'rules' | 'scale';

export interface Repetitions {
  /** argo and baseline each, end-to-end wall time */
  wall: number;
  /** instrumented runs per client and stream length (writes, CPU) */
  cpu: number;
  /** slow-stream runs per client (first token → first byte) */
  latency: number;
  /** `--explain` runs per data dir */
  explain: number;
  /** full scans (argo logs, grep) per data dir */
  scan: number;
  /** argo serve: sequential streams per path, and requests per path in the concurrent run */
  serveSequential: number;
  serveConcurrent: number;
  /** in-process runs of the replay rules per adversarial prompt */
  rules: number;
  /** runs per side of each figure on the two-year data home */
  scale: number;
}

export interface BenchOptions {
  history: HistoryParams;
  quick: boolean;
  only: Part;
  runs: Repetitions;
  dataDir: string;
}

type Env = Readonly<Record<string, string | undefined>>;

interface HistoryFlags {
  turns?: string | undefined;
  sessions?: string | undefined;
  days?: string | undefined;
  'big-turns'?: string | undefined;
  seed?: string | undefined;
}

/** A whole-number option (`1_000_000` allowed), `fallback` when unset or empty; at least `min`. */
export function count(value: string | undefined, name: string, fallback: number, min = 1): number {
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value.replaceAll('_', ''));
  if (!Number.isInteger(parsed) || parsed < min) throw new Error(`${name} must be ${min === 1 ? 'a positive integer' : `an integer of at least ${min}`}, got "${value}"`);
  return parsed;
}

/** Whether the module at `filename` (its import.meta.filename) is the script node was started with. */
export function isMain(filename: string): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(filename);
}

export function historyParamsFrom(flags: HistoryFlags, env: Env, quick = false): HistoryParams {
  const turns = count(flags.turns ?? env.ARGO_BENCH_TURNS, '--turns', quick ? QUICK_TURNS : FULL_HISTORY.turns);
  const params: HistoryParams = {
    turns,
    sessions: count(flags.sessions, '--sessions', FULL_HISTORY.sessions),
    days: count(flags.days, '--days', FULL_HISTORY.days),
    bigTurns: count(flags['big-turns'], '--big-turns', Math.min(FULL_HISTORY.bigTurns, Math.floor(turns / 5))),
    seed: count(flags.seed, '--seed', FULL_HISTORY.seed),
  };
  if (params.sessions < 2 || params.sessions > 65_535) throw new Error('--sessions must be between 2 and 65535');
  if (params.turns < params.bigTurns + params.sessions - 1) {
    throw new Error(`--turns ${params.turns} is too small for ${params.sessions} sessions with one of ${params.bigTurns} turns`);
  }
  return params;
}

export function benchOptions(argv: string[], env: Env): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean' },
      turns: { type: 'string' },
      sessions: { type: 'string' },
      days: { type: 'string' },
      'big-turns': { type: 'string' },
      seed: { type: 'string' },
      only: { type: 'string' },
    },
  });
  const quick = values.quick ?? (env.ARGO_BENCH_QUICK === '1');
  const only = values.only ?? env.ARGO_BENCH_ONLY ?? 'all';
  if (only !== 'all' && only !== 'stream' && only !== 'history' && only !== 'serve' && only !== 'agent' && only !== 'rules' && only !== 'scale') {
    throw new Error(`--only must be stream, history, serve, agent, rules or scale, got "${only}"`);
  }
  return {
    history: historyParamsFrom(values, env, quick),
    quick,
    only,
    runs: quick
      ? { wall: 15, cpu: 5, latency: 8, explain: 10, scan: 2, serveSequential: 40, serveConcurrent: 500, rules: 5, scale: 3 }
      : { wall: 60, cpu: 15, latency: 20, explain: 40, scan: 5, serveSequential: 150, serveConcurrent: 2000, rules: 20, scale: 7 },
    dataDir: resolve(import.meta.dirname, '.data'),
  };
}
