import { uptime as osUptime } from 'node:os';
import { RuntimeError } from '../errors.js';
import { clearStop, isStaleStop, setStop, stopPath, stopState, watchStopFile } from '../agent/stop.js';
import type { StopSignal } from './types.js';

/**
 * How often the server looks at STOP on disk besides its watch: a STOP no watch hears (written from
 * another machine on a shared data home, or after the watch failed) is seen this late at most.
 */
export const STOP_POLL_MS = 1000;

export interface StopSignalOptions {
  pollMs?: number;
  /** The directory watch; tests inject one that hears nothing. */
  watchFile?: typeof watchStopFile;
  /** Seconds since this machine booted (os.uptime). */
  uptime?: () => number;
}

/**
 * The stop signal as a file in the data home, as `argo stop` makes it: any process can set it, and
 * the server hears it through a directory watch the moment it appears, or at its next look at the
 * disk (every `pollMs`). While watching it also keeps the answer to `isSet`, so a turn starting
 * does not pay a file-system round trip to ask.
 */
export function fileStopSignal(home: string, now: () => Date, options: StopSignalOptions = {}): StopSignal {
  const pollMs = options.pollMs ?? STOP_POLL_MS;
  const watchFile = options.watchFile ?? watchStopFile;
  const uptime = options.uptime ?? osUptime;
  // The CLI's rule (agent/stop.ts): STOP is set when it is a regular file.
  const check = (): Promise<boolean> => Promise.resolve(stopState(home).kind === 'set');
  /** What the watch or the poll last saw; null while nothing watches (or before the first look). */
  let known: boolean | null = null;
  let watching = false;
  /** Bumped by every change of `known`, so a slower, older look never overwrites a newer one. */
  let version = 0;
  const settle = (set: boolean): void => {
    version++;
    if (watching) known = set;
  };
  const look = async (): Promise<boolean> => {
    const asked = ++version;
    const set = await check();
    if (watching && asked === version) known = set;
    return set;
  };
  return {
    isSet: () => (known !== null ? Promise.resolve(known) : check()),
    since: () => {
      const state = stopState(home);
      return Promise.resolve(state.kind === 'set' ? state.since : null);
    },
    set: async () => {
      const result = await setStop(home, now());
      if (result.kind === 'other') throw new RuntimeError(`${stopPath(home)} is ${result.what}, not a file, so STOP cannot be set; remove it on the server`);
      settle(true);
    },
    clear: async () => {
      await clearStop(home);
      settle(false);
    },
    clearStale: async () => {
      const state = stopState(home);
      if (state.kind !== 'set') return null;
      if (!isStaleStop(state.since, now(), uptime())) return { kind: 'kept', since: state.since };
      await clearStop(home);
      settle(false);
      return { kind: 'cleared', since: state.since };
    },
    watch: (listener) => {
      const heard = (): void => {
        void look().then((set) => {
          if (set) listener();
        }, () => undefined);
      };
      // No watch (no inotify), or one that fails later: the poll alone keeps `known` right.
      const close = watchFile(home, heard, () => undefined);
      watching = true;
      void look().catch(() => undefined);
      const poll = setInterval(() => {
        const was = known;
        void look().then((set) => {
          if (set && was !== true) listener();
        }, () => undefined);
      }, pollMs);
      poll.unref();
      return () => {
        clearInterval(poll);
        watching = false;
        known = null;
        close?.();
      };
    },
  };
}
