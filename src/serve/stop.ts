import { RuntimeError } from '../errors.js';
import { clearStop, setStop, stopPath, stopState, watchStopFile } from '../agent/stop.js';
import type { StopSignal } from './types.js';

/**
 * The stop signal as a file in the data home, as `argo stop` makes it: any process can set it, and
 * the server hears it through a directory watch the moment it appears. While the watch runs it also
 * keeps the answer to `isSet`, so a turn starting does not pay a file-system round trip to ask.
 */
export function fileStopSignal(home: string, now: () => Date): StopSignal {
  // The CLI's rule (agent/stop.ts): STOP is set when it is a regular file.
  const check = (): Promise<boolean> => Promise.resolve(stopState(home).kind === 'set');
  /** What the watch last saw; null while nothing watches (or before its first look). */
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
    set: async () => {
      const result = await setStop(home, now());
      if (result.kind === 'other') throw new RuntimeError(`${stopPath(home)} is ${result.what}, not a file, so STOP cannot be set; remove it on the server`);
      settle(true);
    },
    clear: async () => {
      await clearStop(home);
      settle(false);
    },
    watch: (listener) => {
      const forget = (): void => {
        watching = false;
        known = null;
      };
      const close = watchStopFile(
        home,
        () => {
          void look().then((set) => {
            if (set) listener();
          }, () => undefined);
        },
        forget,
      );
      // No watch: STOP is checked on disk as each answer starts.
      if (close === null) return () => undefined;
      watching = true;
      void look().catch(() => undefined);
      return () => {
        forget();
        close();
      };
    },
  };
}
