// Running a child process for a tool: its own process group (so a timeout or Ctrl-C kills what it
// started too), output capped per stream, a timeout, and an abort signal.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { looksSecret } from '../text/secrets.js';

export const STREAM_CAP_BYTES = 50 * 1024;
const KILL_GRACE_MS = 2000;
/** What a run-to-completion result says when the command left processes running (they were stopped). */
export const BACKGROUND_NOTE = 'stopped what the command left running; use the process tool for long-running commands';
/** How long the pipes may still drain after the shell has exited, before what it left is stopped. */
const DRAIN_MS = 200;
/**
 * After the shell exited, the drain and the group's kill with its grace: whatever still holds the
 * command's output open then is not in its group (setsid, a daemon), and is not waited for.
 */
const RELEASE_MS = DRAIN_MS + KILL_GRACE_MS + 500;
/** What a run-to-completion result says when a process outside the command's group held its output. */
export const DETACHED_NOTE = 'a process the command started left its process group (setsid, a daemon) and kept its output open: Argo stopped waiting for it, but could not stop it';

export interface Captured {
  text: string;
  /** Bytes the stream produced, including those past the cap. */
  bytes: number;
  truncated: boolean;
}

export interface RunResult {
  exit_code: number | null;
  signal: string | null;
  stdout: Captured;
  stderr: Captured;
  timed_out: boolean;
  aborted: boolean;
  /** The command's shell ended leaving processes running in its group; they were stopped. */
  background: boolean;
  /** A process outside the group held the output open after the rest had ended: no longer read. */
  detached: boolean;
}

export interface RunSpec {
  file: string;
  args: string[];
  cwd: string;
  /** Kills the group after this long; without it, only `signal` ends the process early. */
  timeoutMs?: number;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
}

/** A bounded buffer of a stream's first bytes. */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  bytes = 0;

  constructor(private readonly cap = STREAM_CAP_BYTES) {}

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.kept >= this.cap) return;
    const part = chunk.subarray(0, this.cap - this.kept);
    this.chunks.push(part);
    this.kept += part.length;
  }

  result(): Captured {
    return { text: Buffer.concat(this.chunks).toString('utf8'), bytes: this.bytes, truncated: this.bytes > this.kept };
  }
}

export const UNREAD_CAP_CHARS = 50 * 1024;

/**
 * A long-running stream's output not read yet: at most the last `cap` characters, the oldest
 * dropped first (and counted). Decoded as it comes, so a character split across chunks stays whole.
 */
export class UnreadOutput {
  private readonly decoder = new StringDecoder('utf8');
  private unread = '';
  private dropped = 0;

  constructor(private readonly cap = UNREAD_CAP_CHARS) {}

  push(chunk: Buffer): void {
    this.keep(this.decoder.write(chunk));
  }

  /** The stream has ended: a last incomplete character comes out as U+FFFD. */
  end(): void {
    this.keep(this.decoder.end());
  }

  /** What came since the last take, and how many characters before it were dropped. */
  take(): { text: string; dropped: number } {
    const taken = { text: this.unread, dropped: this.dropped };
    this.unread = '';
    this.dropped = 0;
    return taken;
  }

  private keep(text: string): void {
    this.unread += text;
    let excess = this.unread.length - this.cap;
    if (excess <= 0) return;
    // Never start on the second half of a surrogate pair.
    const code = this.unread.charCodeAt(excess);
    if (code >= 0xdc00 && code <= 0xdfff) excess++;
    this.unread = this.unread.slice(excess);
    this.dropped += excess;
  }
}

/** Signals every process of the group `pid` leads or led; false when the group is empty (ESRCH). */
function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Groups sent SIGTERM and still within their grace: Argo exiting sooner must not spare them. */
const awaitingKill = new Set<number>();

function killAwaitingOnExit(): void {
  for (const pid of awaitingKill) signalGroup(pid, 'SIGKILL');
}

/**
 * SIGTERM to the whole group, SIGKILL after a grace period to whatever is left. The leader may have
 * gone already: what it started still holds the group (and often the pipes).
 */
export function killGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined || emptied.has(child) || awaitingKill.has(pid) || !signalGroup(pid, 'SIGTERM')) return;
  if (awaitingKill.size === 0) process.once('exit', killAwaitingOnExit);
  awaitingKill.add(pid);
  const timer = setTimeout(() => {
    awaitingKill.delete(pid);
    if (awaitingKill.size === 0) process.removeListener('exit', killAwaitingOnExit);
    signalGroup(pid, 'SIGKILL');
  }, KILL_GRACE_MS);
  timer.unref();
}

/**
 * The environment commands run with: Argo's own, less the variables that look like secrets (by name
 * or by value) — a command's output goes to the model and the log — except those the user passes by
 * name.
 */
export function commandEnvironment(env: NodeJS.ProcessEnv, pass: readonly string[] = []): NodeJS.ProcessEnv {
  const kept: NodeJS.ProcessEnv = {};
  // The server's own key is never passed.
  for (const [name, value] of Object.entries(env)) if (!looksSecret(name, value) || (pass.includes(name) && name !== 'ARGO_API_KEY')) kept[name] = value;
  return kept;
}

/**
 * Groups found empty when their leader exited. Their id may be given to another process's group
 * later: a kill at the end of the run (the process tool's close) must not reach it.
 */
const emptied = new WeakSet<ChildProcess>();

export function spawnGroup(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = commandEnvironment(process.env)): ChildProcess {
  const child = spawn(file, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  child.once('exit', () => {
    if (child.pid !== undefined && !signalGroup(child.pid, 0)) emptied.add(child);
  });
  return child;
}

/** Runs to completion (or timeout / abort) and returns what it printed. Never rejects for a failing command. */
export function runProcess(spec: RunSpec): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGroup(spec.file, spec.args, spec.cwd, spec.env);
    const stdout = new CappedOutput();
    const stderr = new CappedOutput();
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    let timedOut = false;
    let aborted = false;
    let background = false;
    let detached = false;
    let drain: NodeJS.Timeout | undefined;
    let release: NodeJS.Timeout | undefined;
    // Run-to-completion: what the command left running in its group is stopped once it has exited.
    const stopLeftovers = (): void => {
      clearTimeout(drain);
      if (timedOut || aborted || child.pid === undefined || !signalGroup(child.pid, 0)) return;
      background = true;
      killGroup(child);
    };
    child.once('exit', () => {
      drain = setTimeout(stopLeftovers, DRAIN_MS);
      // Without this, such a process would hold the call, and Argo's own exit, for as long as it runs.
      release = setTimeout(() => {
        detached = true;
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, RELEASE_MS);
    });
    const timer =
      spec.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            killGroup(child);
          }, spec.timeoutMs);
    const onAbort = (): void => {
      aborted = true;
      killGroup(child);
    };
    if (spec.signal.aborted) onAbort();
    spec.signal.addEventListener('abort', onAbort, { once: true });
    child.once('error', (error) => {
      clearTimeout(timer);
      clearTimeout(drain);
      clearTimeout(release);
      spec.signal.removeEventListener('abort', onAbort);
      reject(error);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(release);
      stopLeftovers();
      spec.signal.removeEventListener('abort', onAbort);
      resolve({ exit_code: code, signal, stdout: stdout.result(), stderr: stderr.result(), timed_out: timedOut, aborted, background, detached });
    });
  });
}

/**
 * Whether `name` can be run: looked up on PATH, or, with a "/", a path (a relative one from `cwd`, the
 * folder the command runs in). `not-executable` when a file of that name is there without the x bit.
 */
export async function findCommand(name: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<'found' | 'not-executable' | 'missing'> {
  const candidates = name.includes('/') ? [resolve(cwd, name)] : (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '').map((dir) => resolve(cwd, dir, name));
  let seen = false;
  for (const candidate of candidates) {
    const found = await stat(candidate).catch(() => null);
    if (found?.isFile() !== true) continue;
    try {
      await access(candidate, constants.X_OK);
      return 'found';
    } catch {
      seen = true;
    }
  }
  return seen ? 'not-executable' : 'missing';
}

/** Whether `name` is an executable on PATH (or a path to one, from the working directory). */
export async function onPath(name: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  return (await findCommand(name, process.cwd(), env)) === 'found';
}
