// What a turn needs of the data home, checked the way a turn makes it (argo doctor's data check):
// the folders it writes are made if missing, as a turn would make them, then asked for write access.
import { access, constants } from 'node:fs/promises';
import type { Settings } from '../config/settings.js';
import { ensureHomeDir, ensureHomeFolder, ensurePrivateDir } from '../log/fs.js';
import { locksDir } from '../log/lock.js';
import { UNFINISHED_FOLDER, unfinishedDir } from '../log/unfinished.js';

/** A place a turn cannot use: one that could not be made (or is no folder of this user's), or one it cannot write in. */
export interface DataHomeProblem {
  path: string;
  cannot: 'make' | 'write';
  error: unknown;
}

export interface DataHomeCheck {
  /** The data home itself, which the memo, chat history and STOP go straight into; null when it is usable. */
  home: DataHomeProblem | null;
  /** Each folder a turn writes (logs/, sessions/, locks/, unfinished/) that it cannot use, in that order. */
  folders: DataHomeProblem[];
}

/**
 * Makes the data home and each folder a turn writes, as a turn would (private, never through a
 * link), and checks each can be written. A home that cannot be made is the only problem reported.
 */
export async function checkDataHome(settings: Pick<Settings, 'home' | 'paths'>): Promise<DataHomeCheck> {
  const { home, paths } = settings;
  try {
    await ensureHomeDir(home);
  } catch (error) {
    return { home: { path: home, cannot: 'make', error }, folders: [] };
  }
  const folders: [string, () => Promise<unknown>][] = [
    [paths.logs, () => ensurePrivateDir(paths.logs)],
    [paths.sessions, () => ensurePrivateDir(paths.sessions)],
    [locksDir(paths.logs), () => ensurePrivateDir(locksDir(paths.logs))],
    [unfinishedDir(home), () => ensureHomeFolder(home, UNFINISHED_FOLDER)],
  ];
  const problems: DataHomeProblem[] = [];
  for (const [path, make] of folders) {
    const problem = await usable(path, make);
    if (problem !== null) problems.push(problem);
  }
  return { home: await writable(home), folders: problems };
}

async function usable(path: string, make: () => Promise<unknown>): Promise<DataHomeProblem | null> {
  try {
    await make();
  } catch (error) {
    return { path, cannot: 'make', error };
  }
  return writable(path);
}

/** Null when this process may write in `path`; root may whatever the mode says, unless the file system is read-only. */
async function writable(path: string): Promise<DataHomeProblem | null> {
  try {
    await access(path, constants.W_OK);
    return null;
  } catch (error) {
    return { path, cannot: 'write', error };
  }
}
