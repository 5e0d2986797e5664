// The STOP signal (seed 004): a file named STOP in the data home halts every agent loop.
// One rule everywhere: STOP is set when `STOP` is a regular file, by lstat. A link is not followed
// (a dangling one would otherwise be "set" to one check and "not set" to another); a folder or a
// link there is reported as what it is, never as the signal.
import type { Stats } from 'node:fs';
import { lstatSync, readdirSync, watch } from 'node:fs';
import { rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { createFileExclusive, errnoOf, fileKind } from '../log/fs.js';

export const STOP_FILE = 'STOP';

export function stopPath(home: string): string {
  return join(home, STOP_FILE);
}

/** What is at STOP: the signal (since its file's time), nothing, or something else, said in words ("a named pipe"). */
export type StopState = { kind: 'set'; since: Date } | { kind: 'unset' } | { kind: 'other'; what: string };

/** fileKind's word for a folder: what clearStop removes with rmdir. */
const FOLDER = 'a folder';

/** Synchronous on purpose: it is checked on every streamed chunk, and a stat is cheaper than a promise. */
export function stopState(home: string): StopState {
  let stats: Stats | undefined;
  try {
    stats = lstatSync(stopPath(home), { throwIfNoEntry: false });
  } catch {
    // An unreadable home (not a folder, no permission) has no signal in it, as existsSync said before.
    return { kind: 'unset' };
  }
  if (stats === undefined) return { kind: 'unset' };
  return stats.isFile() ? { kind: 'set', since: stats.mtime } : { kind: 'other', what: fileKind(stats) };
}

export function isStopSet(home: string): boolean {
  return stopState(home).kind === 'set';
}

/**
 * How much older than this boot a STOP must be to count as left from before it: the boot time is
 * known to about a second, and a clock may be stepped as the machine starts. Unsure means kept.
 */
export const STALE_STOP_MARGIN_MS = 60_000;

/**
 * A STOP set (`since`, its file's time) before this machine last booted, `uptimeSeconds` ago:
 * nothing this machine ran when it was set can still be running, so it only blocks what starts now.
 */
export function isStaleStop(since: Date, now: Date, uptimeSeconds: number): boolean {
  const bootedAt = now.getTime() - uptimeSeconds * 1000;
  return since.getTime() < bootedAt - STALE_STOP_MARGIN_MS;
}

/** `now` when this call set it; otherwise what was there already (an earlier STOP, or something else). */
export async function setStop(home: string, now: Date): Promise<{ kind: 'now' } | { kind: 'set'; since: Date } | { kind: 'other'; what: string }> {
  // Twice at most: a STOP cleared between our create and our look is created again.
  for (let attempt = 0; attempt < 2; attempt += 1) {
    if (await createFileExclusive(stopPath(home), `${now.toISOString()}\n`, { inHome: true })) return { kind: 'now' };
    const state = stopState(home);
    if (state.kind !== 'unset') return state;
  }
  throw new RuntimeError(`${stopPath(home)} kept appearing and vanishing while STOP was being set; run "argo stop" again`);
}

/** What `clearStop` says of a folder with files in it at STOP (`path`, as the message shows it), which it leaves: the user moves it. */
export function fullFolderAtStop(path: string): string {
  return `${path} is a folder with files in it, not the STOP signal; move or delete it yourself`;
}

/** Whether `clearStop` would leave what is at STOP: a folder with files in it (one that cannot be looked into is tried). */
export function clearLeaves(home: string, state: StopState): boolean {
  if (state.kind !== 'other' || state.what !== FOLDER) return false;
  try {
    return readdirSync(stopPath(home)).length > 0;
  } catch {
    return false;
  }
}

/**
 * Removes what is at STOP and returns what it was. A link or an empty folder goes too (neither was
 * the signal, but either would block setting it); a folder with files in it is left, with an error.
 */
export async function clearStop(home: string): Promise<StopState> {
  const state = stopState(home);
  const path = stopPath(home);
  if (state.kind === 'unset') return state;
  try {
    // rm of a link removes the link, never what it points to; rmdir removes only an empty folder.
    await (state.kind === 'other' && state.what === FOLDER ? rmdir(path) : rm(path, { force: true }));
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT') return state;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') throw new RuntimeError(fullFolderAtStop(path), { cause: error });
    throw new RuntimeError(`could not remove ${path} (${code ?? String(error)}); remove it yourself`, { cause: error });
  }
  return state;
}

/** How often a watch waiting for a missing home looks whether it has been made. */
export const HOME_WAIT_MS = 250;

/**
 * Calls `onChange` whenever something happens to STOP in `home` (or may have: an event without a
 * name, as when the event queue overflowed), heard through a watch of the folder; the listener looks
 * with stopState. A home not made yet (a first run makes it later; `argo stop` may make it) is looked
 * for every HOME_WAIT_MS, never made here, and watched once it is there. Returns how to stop
 * watching, or null when there is no watch (no inotify, a home that is not a folder): then only the
 * loops' check points see STOP. `onEnd` is told if the watch fails later.
 */
export function watchStopFile(home: string, onChange: () => void, onEnd?: () => void): (() => void) | null {
  let watcher: ReturnType<typeof watch> | undefined;
  /** The watch, 'missing' while the home is not there, or null when it cannot be watched. */
  const open = (): 'missing' | null | ReturnType<typeof watch> => {
    try {
      return watch(home, { persistent: false }, (_event, name) => {
        // Any case: where the file system ignores it (macOS), a hand-made "stop" is STOP to lstat.
        if (name === null || name.toUpperCase() === STOP_FILE) onChange();
      });
    } catch (error) {
      return errnoOf(error) === 'ENOENT' ? 'missing' : null;
    }
  };
  const started = (opened: ReturnType<typeof watch>): void => {
    watcher = opened;
    opened.on('error', () => {
      opened.close();
      onEnd?.();
    });
  };
  const first = open();
  if (first === null) return null;
  if (first !== 'missing') {
    started(first);
    return () => watcher?.close();
  }
  const wait = setInterval(() => {
    const opened = open();
    if (opened === 'missing') return;
    clearInterval(wait);
    if (opened === null) {
      onEnd?.();
      return;
    }
    started(opened);
    // STOP may have been made with the home, before the watch began.
    onChange();
  }, HOME_WAIT_MS);
  wait.unref();
  return () => {
    clearInterval(wait);
    watcher?.close();
  };
}

/** The reason an agent run's signal carries when STOP cut it (see abortOnStop). */
export const STOP_ABORT = 'stop';

/**
 * A signal that aborts (with STOP_ABORT) the moment STOP is set in `home`, so a run waiting on a
 * tool or on a model still loading is cut there, not at its next check point. `close` stops watching.
 */
export function abortOnStop(home: string): { signal: AbortSignal; close: () => void } {
  const controller = new AbortController();
  const close = watchStopFile(home, () => {
    if (!controller.signal.aborted && stopState(home).kind === 'set') controller.abort(STOP_ABORT);
  });
  return { signal: controller.signal, close: close ?? (() => undefined) };
}
