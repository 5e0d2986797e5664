// Spawning measured processes: wall time from spawn to exit in the bench's clock, the time the first
// stdout byte arrived, and (with the instrument preload) the child's own write count, CPU and peak RSS.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

export const REPO = resolve(import.meta.dirname, '../..');
export const ARGO_BIN = join(REPO, 'bin/argo');
export const BASELINE = join(REPO, 'test/bench/baseline-client.mjs');
const INSTRUMENT = join(REPO, 'test/bench/instrument.mjs');

/** What the preload reports from inside the measured process. */
export interface Report {
  code: number;
  writes: number;
  bytes: number;
  userUs: number;
  systemUs: number;
  maxRssKb: number;
  uptimeMs: number;
}

export interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() in the bench just before the spawn. */
  startedAt: number;
  wallMs: number;
  /** performance.now() in the bench when the first stdout byte arrived; null if none or not piped. */
  firstByteAt: number | null;
  /** All of stdout with 'pipe'; its first 64 KiB with 'count'. */
  stdout: string;
  /** Newlines seen on stdout ('pipe' and 'count'). */
  stdoutLines: number;
  stderr: string;
  report: Report | null;
}

export interface Launch {
  /** Arguments after `node`: a script and its arguments. */
  args: string[];
  env?: Record<string, string>;
  /**
   * 'pipe' keeps stdout and notes its first byte; 'count' counts its lines and keeps only its start
   * (for outputs too big to hold); 'null' sends it to /dev/null as `> /dev/null` would.
   */
  stdout: 'pipe' | 'count' | 'null';
  instrument?: boolean;
}

/** A scrubbed environment: nothing from the caller's shell leaks into a measured run. */
export function cleanEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, ARGO_HOME: home, NO_COLOR: '1', ...extra };
}

let devNull: number | undefined;
const HEAD_BYTES = 64 * 1024;
const reportDir = mkdtempSync(join(tmpdir(), 'argo-bench-report-'));
let reports = 0;

export function cleanupProcesses(): void {
  rmSync(reportDir, { recursive: true, force: true });
  if (devNull !== undefined) closeSync(devNull);
}

/** Runs `node …args` and resolves once it has exited and its pipes are closed. */
export function runNode(launch: Launch): Promise<Outcome> {
  return runCommand(process.execPath, launch.instrument ? ['--import', INSTRUMENT, ...launch.args] : launch.args, launch);
}

export function runCommand(command: string, args: string[], launch: Omit<Launch, 'args'>): Promise<Outcome> {
  devNull ??= openSync('/dev/null', 'w');
  const reportPath = launch.instrument ? join(reportDir, `${++reports}.json`) : undefined;
  const env = { ...(launch.env ?? cleanEnv(tmpdir())), ...(reportPath ? { ARGO_BENCH_REPORT: reportPath } : {}) };
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, stdio: ['ignore', launch.stdout === 'null' ? devNull : 'pipe', 'pipe'] });
    let exitedAt = 0;
    let firstByteAt: number | null = null;
    const out: Buffer[] = [];
    let kept = 0;
    let lines = 0;
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => {
      firstByteAt ??= performance.now();
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
      if (launch.stdout === 'pipe' || kept < HEAD_BYTES) {
        out.push(chunk);
        kept += chunk.length;
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('exit', () => (exitedAt = performance.now()));
    child.on('close', (code, signal) => {
      let report: Report | null = null;
      if (reportPath) {
        try {
          report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
        } catch {
          report = null; // the process died before its exit hook ran
        }
        rmSync(reportPath, { force: true });
      }
      resolvePromise({
        code,
        signal,
        startedAt: started,
        wallMs: (exitedAt || performance.now()) - started,
        firstByteAt,
        stdout: Buffer.concat(out).toString('utf8'),
        stdoutLines: lines,
        stderr: Buffer.concat(err).toString('utf8'),
        report,
      });
    });
  });
}

/** Fails loudly when a measured run did not do what it was meant to: a timing of a failure is no timing. */
export function expectSuccess(outcome: Outcome, what: string): Outcome {
  if (outcome.code !== 0) {
    throw new Error(`${what} exited with ${outcome.code ?? outcome.signal}: ${outcome.stderr.trim().split('\n')[0] ?? ''}`);
  }
  return outcome;
}
