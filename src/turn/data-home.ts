// What a turn needs of the data home, checked the way a turn makes it (argo doctor's data check):
// the folders it writes are made if missing, as a turn would make them, then asked for write access;
// the day's log file a turn would append to is opened as the log store opens it.
import { access, constants, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Settings } from '../config/settings.js';
import { shownPath } from '../errors.js';
import { appendDay, logFileName } from '../log/files.js';
import { checkAppendable, ensureHomeDir, ensureHomeFolder, ensurePrivateDir, readerPrivateGroup } from '../log/fs.js';
import { DAY_PATTERN } from '../log/timestamp.js';
import { shellWord } from '../text/shell-word.js';
import { locksDir } from '../log/lock.js';
import { UNFINISHED_FOLDER, unfinishedDir } from '../log/unfinished.js';

/**
 * A place a turn (or a chat) cannot use: one that could not be made (or is no folder of this
 * user's), one it cannot write in, or a file it cannot read.
 */
export interface DataHomeProblem {
  path: string;
  cannot: 'make' | 'write' | 'read';
  error: unknown;
}

export interface DataHomeCheck {
  /** The data home itself, which the memo, chat history and STOP go straight into; null when it is usable. */
  home: DataHomeProblem | null;
  /** Each folder a turn writes (logs/, sessions/, locks/, unfinished/) that it cannot use, in that order. */
  folders: DataHomeProblem[];
  /** Files a turn cannot use: the day's log, when it is there and cannot be appended to. */
  files: DataHomeProblem[];
  /** Said when other users may write in the data home (openHomeWarning); absent when they may not. */
  warning?: string;
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
    return { home: { path: home, cannot: 'make', error }, folders: [], files: [] };
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
  const dayLog = problems.some((problem) => problem.path === paths.logs) ? null : await dayLogProblem(paths.logs);
  const stats = await stat(home).catch(() => null);
  const warning = stats === null ? null : openHomeWarning(home, stats.mode, stats.gid === readerPrivateGroup());
  return { home: await writable(home), folders: problems, files: dayLog === null ? [] : [dayLog], ...(warning === null ? {} : { warning }) };
}

/**
 * The warning for a data home other users may write in (its mode has the group's or others' write
 * bit, the group's unless it is the user's private group): Argo refuses what they put there, but what they put there can stop a turn, and without the
 * sticky bit they can remove or rename what is the user's. Null when they may not.
 */
export function openHomeWarning(home: string, mode: number, privateGroup = false): string | null {
  // The user's private group (umask 002) is the user alone: its write is no one else's.
  if ((mode & (privateGroup ? 0o002 : 0o022)) === 0) return null;
  const who = (mode & 0o002) !== 0 ? 'other users' : 'its group';
  const can = (mode & 0o1000) !== 0 ? 'put files and links in it' : 'put files and links in it, and remove or rename yours';
  return `${shownPath(home)} can be written by ${who} (mode ${(mode & 0o7777).toString(8)}): they can ${can}; Argo refuses what they put there, which may stop a turn; run "chmod go-w ${shellWord(home)}", or set ARGO_HOME to a folder of your own`;
}

/** The log file a turn would append to now (appendDay), when it is there and the log store could not open it to append. */
async function dayLogProblem(logs: string): Promise<DataHomeProblem | null> {
  const { format } = await import('date-fns/format');
  const today = format(new Date(), DAY_PATTERN);
  let file = join(logs, logFileName(today));
  try {
    file = join(logs, logFileName(await appendDay(logs, today)));
    await checkAppendable(file);
    return null;
  } catch (error) {
    return { path: file, cannot: 'write', error };
  }
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
