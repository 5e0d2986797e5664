import { watch } from 'node:fs';
import { lstat, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileExclusive, isMissing } from '../log/fs.js';
import type { StopSignal } from './types.js';

export const STOP_FILE = 'STOP';

/**
 * The stop signal as a file in the data home, as `argo stop` makes it: any process can set it, and
 * the server hears it through a directory watch the moment it appears.
 */
export function fileStopSignal(home: string, now: () => Date): StopSignal {
  const path = join(home, STOP_FILE);
  const isSet = async (): Promise<boolean> => {
    try {
      await lstat(path);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  };
  return {
    isSet,
    set: async () => {
      await createFileExclusive(path, `${now().toISOString()}\n`);
    },
    clear: async () => {
      await rm(path, { force: true });
    },
    watch: (listener) => {
      let watcher: ReturnType<typeof watch>;
      try {
        watcher = watch(home, { persistent: false }, (_event, name) => {
          if (name !== STOP_FILE) return;
          void isSet().then((set) => {
            if (set) listener();
          }, () => undefined);
        });
      } catch {
        // No watch (the home vanished, or no inotify): STOP is still checked as each answer starts.
        return () => undefined;
      }
      watcher.on('error', () => undefined);
      return () => watcher.close();
    },
  };
}
