// Times every read path a user has against a heavy data home (test/bench/generate-home.ts), with the
// built bin/argo and the Ollama stand-in as its own process: median wall time of several runs and
// the highest peak RSS (/usr/bin/time's %M) of each command. A report, not a test.
//
//   npm run build
//   node --import tsx test/bench/generate-home.ts               # prints /tmp/argo-two-years
//   node --import tsx test/bench/scale-audit.ts --home /tmp/argo-two-years [--runs 5] [--only REGEX] [--json FILE]
//        [--before OTHER/bin/argo]
// --before times another build too (a copy of bin/, dist/ and package.json made before a change, with
// node_modules linked), its runs alternating with this build's so load from elsewhere hits both.
//
// Commands that log a turn append it to the home (as a user's would), and the recovery row logs ten
// interrupted turns per run: run the audit on a copy you can throw away. Questions name the model
// (-m argo), the one the stand-in has.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, loadavg } from 'node:os';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { bootId, machineId, pidNamespace, writeUnfinished } from '../../src/log/unfinished.js';
import { rulesFingerprint } from '../../src/replay/classify.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { ARGO_BIN, REPO, cleanEnv, runCommand } from './process.js';
import { median, round } from './stats.js';
import type { HomeMeta } from './generate-home.js';
import { makeDraft } from '../query/helpers.js';

interface Case {
  name: string;
  /** A function when each run needs its own (a new session's name). */
  args: string[] | (() => string[]);
  /** A line piped to its standard input (a chat's). */
  stdin?: string;
  /** Runs before each timed run (not timed): leftovers for the recovery scan. */
  before?: () => Promise<void>;
}

export interface Side {
  medianMs: number;
  minMs: number;
  maxMs: number;
  peakRssMb: number;
  exit: number | null;
}

export interface Timed {
  name: string;
  command: string;
  runs: number;
  /** By build: "before" (--before) and "after" (this checkout's bin/argo). */
  sides: Partial<Record<Build, Side>>;
}

type Build = 'before' | 'after';

function sideOf(walls: readonly number[], rssMb: number, exit: number | null): Side {
  return { medianMs: round(median(walls), 0), minMs: round(Math.min(...walls), 0), maxMs: round(Math.max(...walls), 0), peakRssMb: round(rssMb, 0), exit };
}

interface Spawned {
  url: string;
  child: ChildProcess;
}

function spawnListening(command: string, args: string[], env: Record<string, string> | undefined, pattern: RegExp, stream: 'stdout' | 'stderr'): Promise<Spawned & { startedAt: number; readyAt: number }> {
  const startedAt = performance.now();
  const child = spawn(command, args, { cwd: REPO, env, stdio: ['ignore', stream === 'stdout' ? 'pipe' : 'ignore', stream === 'stderr' ? 'pipe' : 'ignore'] });
  return new Promise((resolvePromise, reject) => {
    const lines = createInterface({ input: (stream === 'stdout' ? child.stdout : child.stderr) as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      const url = pattern.exec(line)?.[1];
      if (url) resolvePromise({ url, child, startedAt, readyAt: performance.now() });
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited early (${code})`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolvePromise) => {
    if (child.exitCode !== null) {
      resolvePromise();
      return;
    }
    child.once('exit', () => resolvePromise());
    child.kill('SIGTERM');
  });
}

function fetchTimed(url: string, method: 'GET' | 'POST', body?: string): Promise<{ ms: number; bytes: number; status: number }> {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    let bytes = 0;
    const req = request(url, { method, headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.on('data', (chunk: Buffer) => (bytes += chunk.length));
      res.on('end', () => resolvePromise({ ms: performance.now() - started, bytes, status: res.statusCode ?? 0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function timeCase(home: string, ollama: string, spec: Case, runs: number, bins: Partial<Record<Build, string>>): Promise<Timed> {
  const builds = Object.keys(bins) as Build[];
  const walls: Record<Build, number[]> = { before: [], after: [] };
  const rss: Record<Build, number> = { before: 0, after: 0 };
  const exits: Record<Build, number | null> = { before: 0, after: 0 };
  // One untimed run first: the page cache and Node's compile cache warm, as for a user's second command.
  for (let i = -1; i < runs; i++) {
    for (const build of i % 2 === 0 ? builds : [...builds].reverse()) {
      if (spec.before) await spec.before();
      const argo = [process.execPath, bins[build] ?? ARGO_BIN, ...argsOf(spec)];
      // Piped through sh: time's %M is the largest of the processes it waited for, argo among them.
      const command = spec.stdin === undefined ? argo : ['sh', '-c', `printf '%s\\n' "$0" | "$@"`, spec.stdin, ...argo];
      const outcome = await runCommand('/usr/bin/time', ['-f', 'RSS %M', ...command], { env: cleanEnv(home, { OLLAMA_HOST: ollama, COLUMNS: '120' }), stdout: 'null' });
      const kb = Number(/RSS (\d+)\s*$/.exec(outcome.stderr)?.[1] ?? Number.NaN);
      exits[build] = outcome.code;
      if (outcome.code !== 0 && i < 0) console.error(`${spec.name} (${build}): exit ${outcome.code}: ${outcome.stderr.split('\n')[0] ?? ''}`);
      if (i < 0) continue;
      walls[build].push(outcome.wallMs);
      rss[build] = Math.max(rss[build], kb / 1024);
    }
  }
  const sides: Partial<Record<Build, Side>> = {};
  for (const build of builds) sides[build] = sideOf(walls[build], rss[build], exits[build]);
  return { name: spec.name, command: `argo ${argsOf(spec).join(' ')}`, runs, sides };
}

function argsOf(spec: Case): string[] {
  return typeof spec.args === 'function' ? spec.args() : spec.args;
}

/** argo serve: spawn → its listening line, then the first requests a client makes on the big session. */
async function timeServe(home: string, ollama: string, runs: number, big: string, bins: Partial<Record<Build, string>>): Promise<Timed[]> {
  const builds = Object.keys(bins) as Build[];
  const keys = ['start', 'first', 'second', 'sessions', 'show', 'search', 'jobs'] as const;
  const samples = new Map<string, number[]>();
  const peak: Record<Build, number> = { before: 0, after: 0 };
  for (let i = -1; i < runs; i++) {
    for (const build of i % 2 === 0 ? builds : [...builds].reverse()) {
      const server = await spawnListening(process.execPath, [bins[build] ?? ARGO_BIN, 'serve', '--port', '0'], cleanEnv(home, { OLLAMA_HOST: ollama }), /listening on (\S+)/, 'stdout');
      try {
        const ask = (content: string): string => JSON.stringify({ model: 'argo', stream: true, messages: [{ role: 'user', content }], argo: { session: big, replay: 'last:5' } });
        const first = await fetchTimed(`${server.url}/v1/chat/completions`, 'POST', ask('what next?'));
        const second = await fetchTimed(`${server.url}/v1/chat/completions`, 'POST', ask('and then?'));
        const sessions = await fetchTimed(`${server.url}/api/sessions`, 'GET');
        const show = await fetchTimed(`${server.url}/api/sessions/${big}`, 'GET');
        const search = await fetchTimed(`${server.url}/api/sessions?q=borrow`, 'GET');
        const jobs = await fetchTimed(`${server.url}/api/jobs`, 'GET');
        for (const answer of [first, second, sessions, show, search, jobs]) if (answer.status !== 200) throw new Error(`argo serve (${build}) answered ${answer.status}`);
        if (i < 0) continue;
        const values: Record<(typeof keys)[number], number> = { start: server.readyAt - server.startedAt, first: first.ms, second: second.ms, sessions: sessions.ms, show: show.ms, search: search.ms, jobs: jobs.ms };
        for (const key of keys) samples.set(`${build} ${key}`, [...(samples.get(`${build} ${key}`) ?? []), values[key]]);
        peak[build] = Math.max(peak[build], rssMb(server.child.pid ?? 0));
      } finally {
        await stop(server.child);
      }
    }
  }
  const row = (name: string, key: (typeof keys)[number], command: string): Timed => {
    const sides: Partial<Record<Build, Side>> = {};
    for (const build of builds) sides[build] = sideOf(samples.get(`${build} ${key}`) ?? [], peak[build], 0);
    return { name, command, runs, sides };
  };
  return [
    row('serve: start-up', 'start', 'argo serve (spawn → "listening on")'),
    row('serve: first request, big session, last:5', 'first', 'POST /v1/chat/completions {argo:{session:big,replay:"last:5"}}'),
    row('serve: second request, same', 'second', 'the same again'),
    row('serve: session list', 'sessions', 'GET /api/sessions'),
    row('serve: the big session', 'show', `GET /api/sessions/${big}`),
    row('serve: session search', 'search', 'GET /api/sessions?q=borrow'),
    row('serve: job list', 'jobs', 'GET /api/jobs'),
  ];
}

function rssMb(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Ten turns of the big session an argo that was killed left in unfinished/, for the recovery scan to log. */
async function leaveUnfinished(home: string, day: string): Promise<void> {
  const record = JSON.parse(readFileSync(join(home, 'sessions', 'big.json'), 'utf8')) as SessionRecord;
  // A pid no process has: the owner is gone.
  const owner = { pid: 4_000_000, host: hostname(), boot: bootId(), machine: machineId(), start: 1, pidns: pidNamespace() };
  for (let i = 0; i < 10; i++) {
    const id = `leftover${String(leftovers++).padStart(4, '0')}`;
    const entry = makeDraft(id, { timestamp: `${day}T12:00:00.000+00:00`, session: record.name, session_id: record.id, user_prompt: `what about ${id}?` });
    await writeUnfinished(home, { owner, day, session: { id: record.id, name: record.name }, rules: rulesFingerprint(DEFAULT_REPLAY_POLICY.classify), entry });
  }
}

let leftovers = 0;
let forks = 0;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { before: { type: 'string' }, home: { type: 'string' }, runs: { type: 'string' }, only: { type: 'string' }, json: { type: 'string' } } });
  const home = resolve(values.home ?? '/tmp/argo-two-years');
  const metaPath = `${home}.meta.json`;
  if (!existsSync(metaPath)) throw new Error(`${metaPath} not found: make the home with test/bench/generate-home.ts first`);
  const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as HomeMeta;
  const runs = Number(values.runs ?? 5);
  const bins: Partial<Record<Build, string>> = { ...(values.before !== undefined ? { before: resolve(values.before) } : {}), after: ARGO_BIN };
  const only = values.only === undefined ? null : new RegExp(values.only);
  const big = 'big';
  const ollama = await spawnListening(process.execPath, ['--import', 'tsx', 'test/support/fake-ollama.ts', '--port', '0', '--tokens', '40'], undefined, /^listening (\S+)/, 'stdout');
  const cases: Case[] = [
    { name: 'logs (newest 20)', args: ['logs'] },
    { name: 'logs --since 7d', args: ['logs', '--since', '7d'] },
    { name: 'logs --since 2w --all', args: ['logs', '--since', '2w', '--all'] },
    { name: 'logs --session big', args: ['logs', '--session', big] },
    { name: 'logs --session (small)', args: ['logs', '--session', meta.smallSession] },
    { name: 'logs --tool read_file', args: ['logs', '--tool', 'read_file'] },
    { name: 'logs --status error', args: ['logs', '--status', 'error'] },
    { name: 'logs -n 500', args: ['logs', '-n', '500'] },
    { name: 'logs -q (rare word)', args: ['logs', '-q', 'argonaut'] },
    { name: 'logs --json (everything)', args: ['logs', '--json'] },
    { name: 'logs --tool fetch_url --json', args: ['logs', '--tool', 'fetch_url', '--json'] },
    { name: 'logs --json -n 5', args: ['logs', '--json', '-n', '5'] },
    { name: 'logs --stats', args: ['logs', '--stats'] },
    { name: 'logs check', args: ['logs', 'check'] },
    { name: 'last', args: ['last'] },
    { name: 'last 5 -s big', args: ['last', '5', '-s', big] },
    { name: 'sessions', args: ['sessions'] },
    { name: 'sessions --json', args: ['sessions', '--json'] },
    { name: 'sessions show big', args: ['sessions', 'show', big] },
    { name: 'sessions show big -n 5', args: ['sessions', 'show', big, '-n', '5'] },
    { name: 'sessions show (fork of big)', args: ['sessions', 'show', meta.bigFork ?? big, '-n', '5'] },
    { name: 'sessions fork big', args: () => ['sessions', 'fork', big, `audit-fork-${++forks}`] },
    { name: 'sessions reindex big', args: ['sessions', 'reindex', big] },
    { name: 'sessions reindex (all)', args: ['sessions', 'reindex'] },
    { name: 'completion: session names', args: ['__complete', 'sessions'] },
    { name: 'memo list', args: ['memo', 'list'] },
    { name: 'tools', args: ['tools'] },
    { name: 'doctor', args: ['doctor'] },
    { name: 'export sharegpt (all)', args: ['export', '--format', 'sharegpt'] },
    { name: 'export sharegpt -s big', args: ['export', '--format', 'sharegpt', '-s', big] },
    { name: 'ask, new session --no-log', args: ['-m', 'argo', '--no-log', '--no-stdin', 'hi'] },
    { name: '-c "q" (latest session, replay session)', args: ['-c', '-m', 'argo', '--no-stdin', 'and then?'] },
    { name: '-s big --replay last:5 "q"', args: ['-s', big, '-m', 'argo', '--replay', 'last:5', '--no-stdin', 'what next?'] },
    { name: '-s big --replay session "q"', args: ['-s', big, '-m', 'argo', '--replay', 'session', '--no-stdin', 'summarise'] },
    { name: '-s big --replay session --explain', args: ['-s', big, '--replay', 'session', '--explain', '--no-stdin', 'summarise'] },
    { name: 'rerun --explain (an old turn)', args: ['rerun', '--explain', meta.oldestTurn] },
    { name: 'chat -s big (one line piped)', args: ['chat', '-s', big, '-m', 'argo'], stdin: 'and then?' },
    { name: 'recovery: 10 leftover turns, then logs -n 1', args: ['logs', '-n', '1'], before: () => leaveUnfinished(home, meta.params.end) },
  ];
  const results: Timed[] = [];
  const said = (timed: Timed): string =>
    (Object.entries(timed.sides) as [Build, Side][]).map(([build, side]) => `${build} ${side.medianMs} ms (${side.minMs}–${side.maxMs}), ${side.peakRssMb} MB, exit ${side.exit}`).join('; ');
  try {
    for (const spec of cases) {
      if (only && !only.test(spec.name)) continue;
      const timed = await timeCase(home, ollama.url, spec, runs, bins);
      results.push(timed);
      console.error(`${timed.name}: ${said(timed)}`);
    }
    if (!only || only.test('serve')) {
      for (const timed of await timeServe(home, ollama.url, runs, big, bins)) {
        results.push(timed);
        console.error(`${timed.name}: ${said(timed)}`);
      }
    }
  } finally {
    await stop(ollama.child);
  }
  const cell = (side: Side | undefined): string => (side === undefined ? '' : `${side.medianMs} ms (${side.minMs}–${side.maxMs}), ${side.peakRssMb} MB`);
  process.stdout.write(bins.before === undefined ? '| command | median (min–max), peak RSS |\n|---|---|\n' : '| command | before | after |\n|---|---|---|\n');
  for (const r of results) process.stdout.write(`| \`${r.command}\` |${bins.before === undefined ? '' : ` ${cell(r.sides.before)} |`} ${cell(r.sides.after)} |\n`);
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify({ home, meta, runs, loadAverage: loadavg(), results }, null, 2)}\n`);
}

main().catch((error: unknown) => {
  console.error(`scale audit failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
