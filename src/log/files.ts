import type { Dirent, Stats } from 'node:fs';
import { readdir, readlink, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { RuntimeError, shownPath } from '../errors.js';
import { FILE_PROBLEMS } from './file-problems.js';
import { NotAFolderError, errnoOf, fileKind, folderTrouble, isMissing } from './fs.js';

const LOG_NAME = /^(\d{4}-\d{2}-\d{2})\.log$/;

/** Names of the files in `dir` matching `pattern`, sorted; none when the directory is missing. `dot` includes hidden files. */
export async function listFiles(dir: string, pattern: string, options: { dot?: boolean } = {}): Promise<string[]> {
  // Loaded on first use: a plain question never lists a directory, so it need not pay for the import.
  const { default: fg } = await import('fast-glob');
  return (await fg(pattern, { cwd: dir, onlyFiles: true, dot: options.dot === true })).sort();
}

/** Where a reader of the log records the days it could not read (ScanStats). */
export interface DaysMissed {
  missDay(path: string): void;
}

/**
 * The daily log files, oldest first (their names sort by date); none when the directory is missing.
 * The names are exact (LOG_NAME), so one readdir does: no pattern to match, and every `argo logs`
 * starts without loading a glob library. A day that is a link to nothing, or to a place that cannot
 * be reached (its file on a disk not mounted, a folder closed to this user), is left out and told to
 * `missed`: its turns are out of reach, not gone. A link to a
 * folder, a pipe, a device is no day's log: left out, as a folder with a day's name is.
 */
export async function listLogFiles(logsDir: string, missed?: DaysMissed): Promise<string[]> {
  const entries = await dayEntries(logsDir);
  const names = entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
  // By name, so of two links to one file the earlier day is the one read.
  const links = entries.filter((entry) => entry.isSymbolicLink()).sort((a, b) => (a.name < b.name ? -1 : 1));
  if (links.length > 0) {
    // Links to files are read too, but not one to a file already listed (another day here, or the
    // same file twice): its turns would be read twice. `argo logs check` lists every link.
    const files = await Promise.all(names.map((name) => fileAt(join(logsDir, name))));
    const seen = new Set(files.flatMap((file) => (file === null ? [] : [fileId(file)])));
    for (const link of links) {
      const behind = await fileAt(join(logsDir, link.name));
      if (behind === null && missed && (await unreachable(join(logsDir, link.name))) !== null) missed.missDay(join(logsDir, link.name));
      if (behind === null || seen.has(fileId(behind))) continue;
      seen.add(fileId(behind));
      names.push(link.name);
    }
  }
  return names.sort().map((name) => join(logsDir, name));
}

/**
 * Refuses a change that needs every turn in reach (a rebuilt index, a removal) while a day of the log
 * is a link to nothing: done without that day's turns, it would hide them, or leave them behind,
 * once the file is back. Says which link and what to do; `what` is what was not done.
 */
export async function requireDaysInReach(logsDir: string, what: string): Promise<void> {
  const missed: string[] = [];
  await listLogFiles(logsDir, { missDay: (path) => missed.push(path) });
  const [first] = missed;
  if (first === undefined) return;
  const more = missed.length > 1 ? ` (and ${missed.length - 1} more day${missed.length > 2 ? 's' : ''}: argo logs check lists them)` : '';
  const target = resolve(dirname(first), await readlink(first).catch(() => '?'));
  const code = await unreachable(first);
  const why = code === 'ENOENT' || code === 'ENOTDIR' ? 'which does not exist' : `which cannot be reached (${FILE_PROBLEMS[code ?? '']?.problem ?? code ?? 'gone'})`;
  throw new RuntimeError(`${shownPath(first)} is a link to ${shownPath(target)}, ${why}: put the file back there (mount its disk), or remove the link${more}; ${what}`);
}

/**
 * Why the link at `path` leads to no file it can be read through: nothing there (a file moved, a disk
 * not mounted), or a place that cannot be reached (a folder closed to this user, a network disk gone:
 * ENOTCONN, ESTALE, EIO), as its error code; null when there is something there (a file, a folder…).
 */
async function unreachable(path: string): Promise<string | null> {
  return stat(path).then(
    () => null,
    (error: unknown) => errnoOf(error) ?? 'EIO',
  );
}

/** One file whatever names it has: its device and inode. */
function fileId(stats: Stats): string {
  return `${stats.dev}:${stats.ino}`;
}

/**
 * Names of days in `logsDir` that no turn can be written to: a folder, a named pipe (anything but a
 * file), or a link, which readers follow but Argo never writes through. Each with what it is; sorted.
 */
export async function unwritableLogNames(logsDir: string): Promise<{ path: string; what: string }[]> {
  return (await dayEntries(logsDir))
    .filter((entry) => !entry.isFile())
    .map((entry) => ({ path: join(logsDir, entry.name), what: fileKind(entry) }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * The day a turn that started on `turnDay` is appended to: that day, or the newest day already in the
 * log when it sorts later. Readers take the files in name order, then lines in file order, as the
 * order turns were written (a session's index is that order too), so no turn may go to a day before
 * one already written to: a turn started in a zone further west, or before midnight and finished
 * after, lands in the later file. Its timestamp still says when it started. Only regular files
 * count: a folder or a link named as a day is never written to, and a day more than
 * LATER_DAY_REACH days ahead is a wrong clock's, not another zone's. Call it under the log lock.
 */
export async function appendDay(logsDir: string, turnDay: string): Promise<string> {
  const reach = lastFilingDay(turnDay);
  let newest = turnDay;
  for (const entry of await dayEntries(logsDir)) {
    const day = logFileDate(entry.name);
    if (day > newest && day <= reach && entry.isFile()) newest = day;
  }
  return newest;
}

/**
 * How many days after its own a turn may be filed: two local days of one instant are at most two
 * apart (zones run from −12 h to +14 h). A file dated further ahead (a clock once set wrong) is left
 * alone rather than taking every later turn, where date filters and pruning would never look.
 */
const LATER_DAY_REACH = 2;

/** The last day whose file a turn that started on `turnDay` may be appended to (appendDay). */
export function lastFilingDay(turnDay: string): string {
  return dayAfter(turnDay, LATER_DAY_REACH);
}

/** `day` (YYYY-MM-DD) moved `days` calendar days on. */
function dayAfter(day: string, days: number): string {
  const time = Date.parse(`${day}T00:00:00Z`);
  return Number.isNaN(time) ? day : new Date(time + days * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The entries of `logsDir` named like a day's log, whatever they are; none when the folder is
 * simply missing (a fresh home). One that is there but no folder (a file, a link to a disk not
 * mounted) is a NotAFolderError: read as no files, it would pass for an empty history.
 */
async function dayEntries(logsDir: string): Promise<Dirent[]> {
  try {
    return (await readdir(logsDir, { withFileTypes: true })).filter((entry) => LOG_NAME.test(entry.name));
  } catch (error) {
    if (!isMissing(error) && errnoOf(error) !== 'ENOTDIR') throw error;
    const trouble = await folderTrouble(logsDir);
    if (trouble !== null) throw new NotAFolderError(logsDir, trouble, { cause: error });
    return [];
  }
}

/** The file at `path`, a link followed; null when there is none (gone, dangling, a folder). */
async function fileAt(path: string): Promise<Stats | null> {
  try {
    const behind = await stat(path);
    return behind.isFile() ? behind : null;
  } catch {
    return null;
  }
}

export function logFileName(date: string): string {
  return `${date}.log`;
}

export function isLogFileName(name: string): boolean {
  return LOG_NAME.test(basename(name));
}

/** The local date (yyyy-MM-dd) a daily file holds, from its name. */
export function logFileDate(file: string): string {
  return LOG_NAME.exec(basename(file))?.[1] ?? '';
}
