// Locks between Argo processes, with proper-lockfile (an atomic mkdir, refreshed while held and
// taken over once stale, so a crashed holder does not block anyone for long). Two kinds:
//   - the log lock: held by each append (briefly) and by `logs rm` / `logs prune` for the whole
//     rewrite, so no line is appended to a file while it is being replaced;
//   - one lock per session id: held by turn completion (index line, record update) and by session
//     maintenance (rename, rm), so neither works on a state the other is changing.
// Waiting is bounded: past `waitMs` the caller gets an error naming the lock and what to do.
import type * as ProperLockfile from 'proper-lockfile';
import * as fs from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { RuntimeError } from '../errors.js';
import { ensurePrivateDir, errnoOf } from './fs.js';

/**
 * The file system proper-lockfile works with, its lock directories made private (0700) like the
 * rest of the data home rather than by the umask.
 */
export const privateLockFs = {
  ...fs,
  mkdir: (path: string, done: (error: NodeJS.ErrnoException | null) => void): void => {
    fs.mkdir(path, 0o700, done);
  },
};

/** How long a lock may be awaited before giving up (a `logs rm` of a large history takes a while). */
export const DEFAULT_LOCK_WAIT_MS = 30_000;
/** A holder that stopped refreshing its lock this long ago is taken to have crashed. */
const STALE_MS = 10_000;

export class LockTimeoutError extends RuntimeError {
  override name = 'LockTimeoutError';
}

/** The caller gave up its wait for a lock (its signal aborted): the work never ran. */
export class LockWaitAbortedError extends RuntimeError {
  override name = 'LockWaitAbortedError';
}

/** A wait on another process this long is said, once: otherwise the command just looks stuck. */
const QUIET_WAIT_MS = 1_000;
let longWait: { say: (line: string) => void; afterMs: number } | null = null;

/** Where a wait for another process's lock longer than `afterMs` is said (the CLI: stderr); null to say nothing. */
export function whenLockWaitIsLong(say: ((line: string) => void) | null, afterMs = QUIET_WAIT_MS): void {
  longWait = say === null ? null : { say, afterMs };
}

/** The folder of lock files, beside `logs/` and `sessions/` in the data home (give either folder). */
export function locksDir(dataDir: string): string {
  return join(dirname(dataDir), 'locks');
}

/**
 * Callers in this process queue here per lock file, so only the first of them polls the lock
 * directory. Hundreds of turns of one server each polling it (mkdir, stat, sleep) filled libuv's
 * thread pool and starved the holder's own file work: the queue of unlogged turns grew without end.
 */
const queues = new Map<string, Promise<void>>();

/**
 * Waits until this process's earlier callers of the lock file `key` are done, or until `deadline`
 * (then null). Returns the function that lets the next caller go.
 */
async function takeTurn(key: string, deadline: number, signal?: AbortSignal): Promise<(() => void) | null> {
  const previous = queues.get(key);
  let done!: () => void;
  const mine = new Promise<void>((resolve) => (done = resolve));
  const tail = previous ? previous.then(() => mine) : mine;
  queues.set(key, tail);
  const leave = (): void => {
    done();
    // The last in line leaves nothing behind: the map holds only locks in use.
    void tail.then(() => {
      if (queues.get(key) === tail) queues.delete(key);
    });
  };
  if (previous === undefined) return leave;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    onAbort = () => resolve(false);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  const ready = await Promise.race([previous.then(() => true), late]);
  clearTimeout(timer);
  if (onAbort) signal?.removeEventListener('abort', onAbort);
  if (ready && signal?.aborted !== true) return leave;
  // Given up: those behind still wait for the ones ahead, not for this caller.
  leave();
  return null;
}

/** Lock files this process is holding or waiting for (for tests: empty once all work is done). */
export function locksInUse(): number {
  return queues.size;
}

/**
 * A lock wait as its message says it: ms under a second (500ms), else seconds to a tenth, rounded
 * down (1.5s, 30s), so "more than" it stays true.
 */
export function waitWords(waitMs: number): string {
  return waitMs < 1000 ? `${waitMs}ms` : `${Math.floor(waitMs / 100) / 10}s`;
}

/** Lets a lock taken by takeLock go: its folder removed, then this process's next caller in. */
type Release = () => Promise<void>;

let lockLibrary: Promise<Pick<typeof ProperLockfile, 'lock'>> | null = null;

/**
 * Takes the lock named `name` in the folder `dir`, waiting at most `waitMs`, the time spent behind
 * this process's own callers included; it is always tried at least once. `what` says in words what
 * it guards, for the message when it cannot be had in time. `prepare` runs once this process's
 * earlier callers are done, before the lock file is tried (making the folder). `signal` aborted
 * ends the wait with LockWaitAbortedError, and no lock is left taken.
 */
async function takeLock(dir: string, name: string, what: string, waitMs: number, prepare?: () => Promise<void>, signal?: AbortSignal): Promise<Release> {
  const deadline = Date.now() + waitMs;
  const aborted = (): LockWaitAbortedError => new LockWaitAbortedError(`stopped waiting for ${what}: the work was cut`);
  // Asked anew at each look (a property read would be narrowed across the awaits between them).
  const givenUp = (): boolean => signal?.aborted === true;
  if (givenUp()) throw aborted();
  const target = join(dir, name);
  const timedOut = (cause?: unknown): LockTimeoutError =>
    new LockTimeoutError(
      `${what} has been locked by another argo process${waitMs > 0 ? ` for more than ${waitWords(waitMs)}` : ''} (a long "argo logs rm" or "prune"?); ` +
        `try again when it is done, or remove ${target}.lock if no argo process is running`,
      { cause },
    );
  const next = await takeTurn(target, deadline, signal);
  if (next === null) throw givenUp() ? aborted() : timedOut();
  try {
    const locks = await loadLockLibrary();
    await prepare?.();
    const options = { realpath: false, stale: STALE_MS, lockfilePath: `${target}.lock`, fs: privateLockFs, onCompromised: () => undefined };
    let pause = 5;
    const waitStarted = Date.now();
    let said = false;
    for (;;) {
      if (givenUp()) throw aborted();
      try {
        const release = await locks.lock(target, options);
        // Cut while the lock was being taken: the work must not run after its caller gave up.
        if (givenUp()) {
          await release().catch(() => undefined);
          throw aborted();
        }
        return async () => {
          try {
            await release().catch(() => undefined);
          } finally {
            next();
          }
        };
      } catch (error) {
        if (errnoOf(error) !== 'ELOCKED') throw error;
        if (Date.now() >= deadline) throw timedOut(error);
        if (!said && longWait !== null && Date.now() - waitStarted >= longWait.afterMs) {
          said = true;
          longWait.say(`waiting for ${what}, locked by another argo process (a lock left by one that died is taken over after ${STALE_MS / 1000} s)`);
        }
        // Its timer would keep a cut process alive until the wait ran out.
        await sleep(pause, undefined, signal ? { signal } : undefined).catch(() => undefined);
        pause = Math.min(100, pause * 1.5);
      }
    }
  } catch (error) {
    next();
    throw error;
  }
}

/**
 * Runs `work` while holding the lock named `name` in `dir`; `what` says in words what the lock
 * guards, for the message when it cannot be had in time. The wait is bounded from the call, the
 * time spent behind this process's own callers included; the lock is always tried at least once.
 * `signal` ends the wait early (LockWaitAbortedError): the work does not run.
 */
export async function withLock<T>(dir: string, name: string, what: string, work: () => Promise<T>, waitMs = DEFAULT_LOCK_WAIT_MS, signal?: AbortSignal): Promise<T> {
  const release = await takeLock(dir, name, what, waitMs, () => ensurePrivateDir(dir), signal);
  try {
    return await work();
  } finally {
    await release();
  }
}

/**
 * The lock library, loaded on first use (a plain question takes no lock) and kept; a failed load
 * (too many open files) is tried again next time.
 */
export function loadLockLibrary(): Promise<Pick<typeof ProperLockfile, 'lock'>> {
  // The default export (module.exports) is the one shape both Node and the bundled build give a CommonJS module.
  lockLibrary ??= import('proper-lockfile').then(
    (module) => module.default,
    (error: unknown) => {
      lockLibrary = null;
      throw error;
    },
  );
  return lockLibrary;
}

export function withLogLock<T>(logsDir: string, work: () => Promise<T>, waitMs?: number): Promise<T> {
  return withLock(locksDir(logsDir), 'log', `the log in ${logsDir}`, work, waitMs);
}

/** The lock file's name for a session id, and the words for it. */
function sessionLock(sessionId: string): { name: string; what: string } {
  // An id is a UUID; one from a hand-edited record could hold anything, so it never becomes a path as is.
  const key = /^[A-Za-z0-9-]{1,64}$/.test(sessionId) ? sessionId : Buffer.from(sessionId).toString('hex').slice(0, 128);
  return { name: `session-${key}`, what: `session ${sessionId}` };
}

/** `dataDir` is the logs or the sessions folder. */
export function withSessionLock<T>(dataDir: string, sessionId: string, work: () => Promise<T>, waitMs?: number): Promise<T> {
  const { name, what } = sessionLock(sessionId);
  return withLock(locksDir(dataDir), name, what, work, waitMs);
}

/**
 * Takes the locks of these sessions one after another, in the order given, each waited for as
 * withSessionLock waits (`waitMs` from when its turn comes); returns what lets them all go, the
 * last taken first. One that cannot be had lets those taken go and throws. The same locks, taken
 * as withSessionLock takes them, for work that needs thousands of them (withEveryLock): the locks
 * folder is made private once, not once a lock.
 */
export async function takeSessionLocks(dataDir: string, sessionIds: readonly string[], waitMs = DEFAULT_LOCK_WAIT_MS): Promise<Release> {
  const dir = locksDir(dataDir);
  const taken: Release[] = [];
  const releaseAll: Release = async () => {
    for (let release = taken.pop(); release !== undefined; release = taken.pop()) await release();
  };
  try {
    await ensurePrivateDir(dir);
    for (const id of sessionIds) {
      const { name, what } = sessionLock(id);
      taken.push(await takeLock(dir, name, what, waitMs));
    }
  } catch (error) {
    await releaseAll();
    throw error;
  }
  return releaseAll;
}
