// Running a child process for a tool: its own process group (so a timeout or Ctrl-C kills what it
// started too), the end of each stream kept, a timeout, and an abort signal.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { tailOf } from '../output/cut.js';
import { groupThousands } from '../text/decimal.js';
import { looksSecret } from '../text/secrets.js';
import { errnoOf } from '../log/fs.js';
import { ToolError, fittedFrom, isOverBudget, largestFitting } from './types.js';
import type { ToolResult } from './types.js';

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
  /** Bytes the stream produced, including those not kept. */
  bytes: number;
  /** Its start was not kept: only its last UNREAD_CAP_CHARS characters are. */
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

export const UNREAD_CAP_CHARS = 50 * 1024;

/** A stream's output since it was last read, and how many characters before it were dropped unread. */
export interface Taken {
  text: string;
  dropped: number;
}

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
  take(): Taken {
    const taken = { text: this.unread, dropped: this.dropped };
    this.unread = '';
    this.dropped = 0;
    return taken;
  }

  private keep(text: string): void {
    this.unread += text;
    if (this.unread.length <= this.cap) return;
    const kept = tailOf(this.unread, this.cap);
    this.dropped += this.unread.length - kept.length;
    this.unread = kept;
  }
}

/** A bounded buffer of a stream's last characters (UNREAD_CAP_CHARS of them), for a run to completion. */
export class LastOutput {
  private readonly kept = new UnreadOutput();
  bytes = 0;

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    this.kept.push(chunk);
  }

  result(): Captured {
    this.kept.end();
    const { text, dropped } = this.kept.take();
    return { text, bytes: this.bytes, truncated: dropped > 0 };
  }
}

/** The last `max` characters of `text`, from the start of a line when they begin inside one and hold a later one. */
export function lineTailOf(text: string, max: number): string {
  const tail = tailOf(text, max);
  if (tail.length === text.length || text[text.length - tail.length - 1] === '\n') return tail;
  const lineEnd = tail.indexOf('\n');
  return lineEnd === -1 || lineEnd === tail.length - 1 ? tail : tail.slice(lineEnd + 1);
}

/**
 * The result whose JSON fits `budget`, built from the end of each text (where a command's errors
 * are): as many last characters of each as fit (lineTailOf), the same number for each, so a shorter
 * text kept whole leaves the rest to the others. Even with none shown it may not fit (long notes, a
 * tiny budget): it is then cut later as any result. No budget: the texts whole.
 */
export function tailsWithin(texts: readonly string[], budget: number | undefined, resultOf: (tails: readonly string[]) => ToolResult): ToolResult {
  const at = (share: number): ToolResult => resultOf(texts.map((text) => lineTailOf(text, share)));
  const longest = Math.max(0, ...texts.map((text) => text.length));
  const whole = at(longest);
  if (budget === undefined || !isOverBudget(JSON.stringify(whole), budget)) return whole;
  // The largest share that fits. What was cut stays the user's: the loop saves the whole result, as
  // for any result past its budget.
  return fittedFrom(at(largestFitting(longest, budget, at)), whole);
}

/** A stream's fields in a finished command's result: the end of it `shown` holds, after a note when that is not all of it. */
function streamResult(name: string, captured: Captured, shown: string, howToNarrow: string | undefined): Record<string, unknown> {
  if (!captured.truncated && shown.length === captured.text.length) return { [name]: shown };
  // Before the text, so a result cut to its head still says what it holds.
  const note = `showing the last ${groupThousands(shown.length)} characters of ${groupThousands(captured.bytes)} bytes${howToNarrow === undefined ? '' : `; ${howToNarrow}`}`;
  return { [`${name}_truncated`]: note, [name]: shown };
}

/**
 * A finished command's result (run_command's, a command tool's), fitted to `budget` here rather than
 * cut to its head by the loop: the exit code, the notes, and the end of both streams (where errors
 * are) all stay. `howToNarrow` ends the note of a stream not shown whole, when the model can.
 */
export function commandResult(
  result: Pick<RunResult, 'exit_code' | 'signal' | 'stdout' | 'stderr' | 'background' | 'detached'>,
  budget: number | undefined,
  howToNarrow?: string,
): ToolResult {
  return tailsWithin([result.stdout.text, result.stderr.text], budget, ([stdout = '', stderr = '']) => ({
    exit_code: result.exit_code,
    ...(result.signal !== null ? { signal: result.signal } : {}),
    ...streamResult('stdout', result.stdout, stdout, howToNarrow),
    ...streamResult('stderr', result.stderr, stderr, howToNarrow),
    ...(result.background ? { background: BACKGROUND_NOTE } : {}),
    ...(result.detached ? { detached: DETACHED_NOTE } : {}),
  }));
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

/** Groups sent SIGTERM and still within their grace. */
const awaitingKill = new Set<number>();
/** Groups Argo started whose leader has not been reaped yet (ownGroup). */
const runningGroups = new Set<number>();
let exitListened = false;

/**
 * Argo exiting at any moment (a second Ctrl-C, a signal while an MCP server is still starting or
 * closing) must not leave a group it started running: nothing can be waited for then, so SIGKILL.
 */
function killOwnedOnExit(): void {
  for (const pid of new Set([...runningGroups, ...awaitingKill])) signalGroup(pid, 'SIGKILL');
}

function listenForExit(): void {
  if (exitListened) return;
  exitListened = true;
  process.on('exit', killOwnedOnExit);
}

/**
 * Keeps the group `child` leads (spawned detached) to be killed if Argo exits while it runs; from
 * its leader's exit on, its group id may be given to another process, so it is let go then (what
 * the leader left is killGroup's to stop).
 */
export function ownGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  listenForExit();
  runningGroups.add(pid);
  child.once('exit', () => runningGroups.delete(pid));
}

/**
 * SIGTERM to the whole group, SIGKILL after a grace period to whatever is left. The leader may have
 * gone already: what it started still holds the group (and often the pipes). True when the group is
 * being killed (now, or by an earlier call still within its grace); false when nothing of it was left.
 */
export function killGroup(child: ChildProcess): boolean {
  const pid = child.pid;
  if (pid === undefined || emptied.has(child)) return false;
  if (awaitingKill.has(pid)) return true;
  if (!signalGroup(pid, 'SIGTERM')) return false;
  listenForExit();
  awaitingKill.add(pid);
  const timer = setTimeout(() => {
    awaitingKill.delete(pid);
    signalGroup(pid, 'SIGKILL');
  }, KILL_GRACE_MS);
  timer.unref();
  return true;
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
  ownGroup(child);
  child.once('exit', () => {
    if (child.pid !== undefined && !signalGroup(child.pid, 0)) emptied.add(child);
  });
  return child;
}

/**
 * Why these arguments cannot reach a process, or null: one of `names` contains a NUL byte, which no
 * command line, argument or path can (spawn would refuse it). The model can give it without one.
 */
export function nulByteIn(args: Record<string, unknown>, names: readonly string[]): string | null {
  const name = names.find((key) => typeof args[key] === 'string' && args[key].includes('\u0000'));
  return name === undefined ? null : nulInCommand(name);
}

/** The refusal of argument `name`, which holds a NUL byte no command line can. */
export function nulInCommand(name: string): string {
  return `"${name}" contains a NUL byte, which no command can hold; give it without one`;
}

/**
 * The system's refusal of a command line too long to pass to a program (E2BIG: one argument over
 * 128 KiB on Linux, or all of them with the environment over ARG_MAX) as a failure the model can
 * mend, `what` naming the text it gave; null for any other error.
 */
export function tooLongToPass(error: unknown, what: string): ToolError | null {
  if (errnoOf(error) !== 'E2BIG') return null;
  return new ToolError(`${what} is too long for the system to pass to a program (E2BIG); put long text in a file and have the command read it`);
}

/** Runs to completion (or timeout / abort) and returns the end of what it printed. Never rejects for a failing command. */
export function runProcess(spec: RunSpec): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnGroup(spec.file, spec.args, spec.cwd, spec.env);
    // The end of each stream, where a failing command says why.
    const stdout = new LastOutput();
    const stderr = new LastOutput();
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
 * folder the command runs in). `not-executable` when a file of that name is there without the x bit;
 * `folder` when the path names a folder.
 */
export async function findCommand(name: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<'found' | 'not-executable' | 'folder' | 'missing'> {
  const candidates = name.includes('/') ? [resolve(cwd, name)] : (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '').map((dir) => resolve(cwd, dir, name));
  let seen = false;
  let folder = false;
  for (const candidate of candidates) {
    const found = await stat(candidate).catch(() => null);
    // A folder of that name in a PATH directory is no answer: the search goes on.
    if (found?.isDirectory() === true && name.includes('/')) folder = true;
    if (found?.isFile() !== true) continue;
    try {
      await access(candidate, constants.X_OK);
      return 'found';
    } catch {
      seen = true;
    }
  }
  return seen ? 'not-executable' : folder ? 'folder' : 'missing';
}

/** Whether `name` is an executable on PATH (or a path to one, from the working directory). */
export async function onPath(name: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  return (await findCommand(name, process.cwd(), env)) === 'found';
}
