import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { accessSync, closeSync, fstatSync, linkSync, lstatSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { access, chmod, link, lstat, mkdir, mkdtemp, open, readdir, readlink, realpath, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { RuntimeError, shownPath } from '../errors.js';
import { shellWord } from '../text/shell-word.js';
import { FILE_PROBLEMS } from './file-problems.js';

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;
/** Where a turn the log could not take is saved, in the data home. */
export const RESCUED_FOLDER = 'rescued';

/** The errno code of a failed fs call (`ENOENT`, `EEXIST`, …), or undefined for any other error. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error;
  return typeof code === 'string' ? code : undefined;
}

export function isMissing(error: unknown): boolean {
  return errnoOf(error) === 'ENOENT';
}

/**
 * `mkdir -p`, one level at a time. Node's recursive mkdir never returns where a folder cannot be
 * made although its parent exists (under /proc it spins for ever): this fails there instead.
 */
async function makeDirs(path: string): Promise<void> {
  // The usual case, a folder already there, answered without a failed mkdir: its error object (and
  // stack) cost a busy server more than the call itself, on every turn's journal file.
  if (await isFolder(path)) return;
  const parent = dirname(path);
  try {
    await mkdir(path, { mode: PRIVATE_DIR });
    return;
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || parent === path) throw error;
  }
  await makeDirs(parent);
  try {
    await mkdir(path, { mode: PRIVATE_DIR });
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') throw error;
  }
}

/** Whether a folder, or a link to one, is at `path` (false when nothing, or nothing that can be looked at, is). */
export async function isFolder(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Makes the data home if missing (private, as every folder Argo makes) and leaves an existing one as
 * the user made it: it may be a shared or project folder (ARGO_HOME=$PWD), so it is never chmod-ed.
 */
export async function ensureHomeDir(path: string): Promise<void> {
  await makeDirs(path);
  await refuseForeignHome(path);
}

/**
 * Refuses a data home of another user's, or a link to one another user made: a folder or file of
 * this user's made there would lock its owner out of their own data (root's `locks/` in a user's
 * home), and a link another user planted would send what Argo writes where they chose (root's is
 * trusted: trustedOwner). Anything but a folder is left to the write that follows, which says what it is.
 */
async function refuseForeignHome(home: string): Promise<void> {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const entry = await lstat(home);
  if (entry.isSymbolicLink() && !trustedOwner(entry.uid, uid)) throw new ForeignLinkError(home, entry.uid);
  const stats = entry.isSymbolicLink() ? await stat(home) : entry;
  if (stats.isDirectory() && stats.uid !== uid) throw new ForeignFolderError(home, stats.uid, FOREIGN_HOME_FIX);
}

const FOREIGN_HOME_FIX = 'Argo writes only in a data home of your own (set ARGO_HOME or --home to a folder of yours)';

/** Where a data file sits: in one of Argo's own folders (made private), or straight in the data home. */
export interface DataFileOptions {
  /** The target's folder is the data home itself: made if missing, never chmod-ed (ensureHomeDir). */
  inHome?: boolean;
  /**
   * false: not flushed to disk before it appears. Its name is durable only at the file system's next
   * commit (seconds) either way, so a flush buys a short-lived file (a turn's journal entry) nothing
   * but its cost; the log line it stands for is not flushed either.
   */
  flush?: boolean;
}

async function ensureParent(target: string, options: DataFileOptions): Promise<void> {
  await (options.inHome === true ? ensureHomeDir : ensurePrivateDir)(dirname(target));
}

/** Folders and files this process has made sure are private: each checked once (a server's cache stays bounded). */
const madePrivate = new Set<string>();
const MADE_PRIVATE_MAX = 1000;

function rememberPrivate(path: string): void {
  if (madePrivate.size >= MADE_PRIVATE_MAX) madePrivate.clear();
  madePrivate.add(path);
}

// How a file system that keeps no modes (FAT, exFAT, some network mounts) refuses a chmod, even the owner's.
const NO_MODES = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Closes a file or folder of this user's to others: `chmod` to its mode less the group's and others'
 * bits. The owner's bits stay as the user set them (a read-only folder stays read-only). Where the
 * file system keeps no modes its mount options decide who reads, and Argo works on rather than
 * refusing the whole data home; anyone else's file still refuses.
 */
async function makePrivate(stats: Stats, chmodTo: (mode: number) => Promise<void>): Promise<void> {
  if ((stats.mode & 0o077) === 0) return;
  try {
    await chmodTo(stats.mode & 0o700);
  } catch (error) {
    if (stats.uid !== process.getuid?.() || !NO_MODES.has(errnoOf(error) ?? '')) throw error;
  }
}

/** A folder of the data home that belongs to another user: refused, never written into or chmod-ed. */
export class ForeignFolderError extends RuntimeError {
  override name = 'ForeignFolderError';
  constructor(
    readonly path: string,
    readonly owner: number,
    remedy: string,
  ) {
    super(`${path} belongs to another user (uid ${owner}); ${remedy}`);
  }
}

/**
 * Makes `path` if missing, and makes sure it is a private folder of this user's: one left open to
 * others (made by hand, or by an older version) is closed to them (0755 → 0700, 0555 → 0500: never
 * made writable); one of another user's — a folder, a link to one, or a link another user made — is
 * refused. A link the user (or root) made to a folder of the user's (a log folder on a bigger disk) is fine.
 * It is made only in a data home of this user's (ensureHomeDir).
 */
export async function ensurePrivateDir(path: string): Promise<void> {
  const uid = process.getuid?.();
  let stats: Stats;
  let entry: Stats | null;
  try {
    // Looked at every time (someone may remove it, or put another in its place, while a server runs); checked once.
    entry = await lstatIfThere(path);
    if (entry?.isDirectory() === true && (uid === undefined || entry.uid === uid) && madePrivate.has(path)) return;
    if (entry === null) {
      await ensureHomeDir(dirname(path));
      entry = await madeFolder(path);
    }
    if (entry.isSymbolicLink() && uid !== undefined && !trustedOwner(entry.uid, uid)) throw new ForeignLinkError(path, entry.uid);
    stats = entry.isSymbolicLink() ? await stat(path) : entry;
  } catch (error) {
    // A link to a folder on a disk not mounted, a file where a folder goes: said as such, not as ENOENT.
    const code = errnoOf(error);
    const trouble = code === 'ENOENT' || code === 'ENOTDIR' || code === 'EEXIST' ? await folderTrouble(path).catch(() => null) : null;
    if (trouble !== null) throw new NotAFolderError(path, trouble, { cause: error });
    throw error;
  }
  if (!stats.isDirectory()) throw new RuntimeError(`${path} is not a folder; Argo keeps its data in folders (set ARGO_HOME or --home to one)`);
  if (uid !== undefined && stats.uid !== uid) {
    throw new ForeignFolderError(path, stats.uid, 'Argo keeps its data only in folders of its own (set ARGO_HOME to one)');
  }
  const followLink = entry.isSymbolicLink();
  await makePrivate(stats, (mode) => chmodFolder(path, stats, mode, followLink));
  rememberPrivate(path);
}

/**
 * chmod of the folder `seen` at `path`, through what was opened (fchmod), never by its path again: a
 * link put in its place meanwhile would have the mode of whatever it leads to changed. A link is
 * followed only when `followLink` (one the user made, checked already).
 */
async function chmodFolder(path: string, seen: Stats, mode: number, followLink: boolean): Promise<void> {
  const replaced = (now: Stats): boolean => now.dev !== seen.dev || now.ino !== seen.ino;
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_DIRECTORY | (followLink ? 0 : constants.O_NOFOLLOW));
  } catch (error) {
    if (errnoOf(error) === 'ELOOP') throw new SymlinkRefusedError(path);
    // A folder its owner may not read (0300), or a system that opens no folders: by its path, once it is seen to be the same.
    if (replaced(await (followLink ? stat : lstat)(path))) throw new RuntimeError(`${path} was replaced while Argo checked it; try again`, { cause: error });
    await chmod(path, mode);
    return;
  }
  try {
    if (replaced(await handle.stat())) throw new RuntimeError(`${path} was replaced while Argo checked it; try again`);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/**
 * Removes a file; one already gone is fine. `unlink` rather than `rm`: rm's checks (an lstat, a
 * walk for folders) cost a busy server a second system call on every turn's journal file.
 */
/** Whether this process may write into `path` (false on a read-only file system, or without the right). */
export async function canWrite(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}

/**
 * Shortens a regular file by its last byte, never through a link nor waiting on a pipe: a file
 * that must end with a newline (an index) then reads as a write cut short, and its readers rebuild
 * it. Shrinking takes no space, so it works on a full disk. False when there is nothing to shorten
 * (missing, empty, not a regular file).
 */
export async function dropLastByte(path: string): Promise<boolean> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size === 0) return false;
    await handle.truncate(stats.size - 1);
    return true;
  } finally {
    await handle.close();
  }
}

/** Whether a folder, not a link to one, is at `path`. */
export async function holdsFolder(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Removes `path` if it is an empty folder. 'holds-files' when it is a folder with something in it
 * (left as it is: not Argo's to delete); 'left' when it is missing or not a folder (a link to one included).
 */
export async function removeEmptyFolder(path: string): Promise<'removed' | 'holds-files' | 'left'> {
  try {
    await rmdir(path);
    return 'removed';
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return 'holds-files';
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'left';
    throw error;
  }
}

/** The file's mode when users other than its owner may read it, else null (also for a missing file). */
export async function readableByOthers(path: string): Promise<number | null> {
  try {
    const mode = (await stat(path)).mode & 0o777;
    return (mode & 0o044) !== 0 ? mode : null;
  } catch {
    return null;
  }
}

// Temporary files being written now. A signal that ends the process (Ctrl-C, SIGTERM) must not
// leave them behind: a `logs rm` of a large history writes a copy as big as the log.
const inFlight = new Set<string>();

/** Notes a temporary file this process is writing, so discardTemporaryFiles can remove it. */
export function trackTemporary(path: string): void {
  inFlight.add(path);
}

export function untrackTemporary(path: string): void {
  inFlight.delete(path);
}

/** Removes every temporary file still being written; for an exit on a signal (synchronous). */
export function discardTemporaryFiles(): void {
  for (const path of inFlight) rmSync(path, { force: true });
  inFlight.clear();
}

// What must be written before a signal quits the process at once (a second Ctrl-C): a turn being
// answered saves its draft with the text so far, which the next argo logs. Synchronous, as the exit is.
const lastSaves = new Set<(signal: string) => void>();

/** Adds a synchronous save to run before a quit at once; returns its removal. */
export function saveBeforeQuitting(save: (signal: string) => void): () => void {
  lastSaves.add(save);
  return () => {
    lastSaves.delete(save);
  };
}

/**
 * Runs every save added by saveBeforeQuitting, for an exit on `signal` (synchronous). Best effort:
 * one that fails is passed over, as the exit must happen.
 */
export function runLastSaves(signal: string): void {
  for (const save of [...lastSaves]) {
    try {
      save(signal);
    } catch {
      // Nothing more can be done: the process is ending.
    }
  }
  lastSaves.clear();
}

/**
 * writeFileAtomic for a process about to exit (no flush): written whole to an exclusive temporary
 * sibling (0600, never through a link), then renamed over `target`, or with `exclusive` linked into
 * place only if nothing is there yet (false then, nothing written). A symlink at the target is refused.
 */
export function writeFileAtomicNow(target: string, data: string, options: { exclusive?: boolean } = {}): boolean {
  if (lstatSync(target, { throwIfNoEntry: false })?.isSymbolicLink() === true) throw new SymlinkRefusedError(target);
  const temporary = temporaryPath(target);
  const fd = openSync(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE);
  try {
    try {
      const bytes = Buffer.from(data);
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    } finally {
      closeSync(fd);
    }
    if (options.exclusive !== true) {
      renameSync(temporary, target);
      return true;
    }
    try {
      linkSync(temporary, target);
    } catch (error) {
      if (errnoOf(error) === 'EEXIST') return false;
      if (!NO_HARD_LINKS.has(errnoOf(error) ?? '')) throw error;
      // No hard links on this file system: placed only if nothing is there now.
      if (lstatSync(target, { throwIfNoEntry: false }) !== undefined) return false;
      renameSync(temporary, target);
    }
    return true;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** A sibling name unique to this write (several may run at once, even in one process). */
export function temporaryPath(target: string): string {
  return join(dirname(target), temporaryName(basename(target)));
}

/** The most bytes a file's name may have on the usual file systems (NAME_MAX). */
const NAME_MAX = 255;

/**
 * temporaryPath's name beside a file named `name`: the name, cut (never within a character) where
 * it is too long for the writer's pid and tag to follow it within NAME_MAX, so any name a file may
 * have gets one. The random tag and exclusive creation keep it unique.
 */
export function temporaryName(name: string, pid: number = process.pid, tag: string = randomBytes(4).toString('hex')): string {
  const suffix = `.${pid}-${tag}.tmp`;
  return `.${headBytes(name, NAME_MAX - 1 - Buffer.byteLength(suffix))}${suffix}`;
}

/** The longest start of `text` of at most `max` bytes in UTF-8, whole characters only. */
function headBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    bytes += Buffer.byteLength(char);
    if (bytes > max) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/** temporaryPath's names: the writer's pid is in them. */
const TEMPORARY_NAME = /^\..+\.(\d+)-[0-9a-f]{8}\.tmp$/;

/** Sends a signal as process.kill does (a seam for tests: they say what the system answered). */
export type SignalSender = (pid: number, signal: number) => unknown;

/**
 * Whether process `pid` runs on this machine: signal 0 reaches it, and it is no zombie (killed,
 * not yet reaped by its parent: it answers the signal but does nothing more). Only Linux's /proc
 * tells a zombie (`state`); elsewhere the signal alone decides.
 */
export function processAlive(
  pid: number,
  kill: SignalSender = (target, signal) => process.kill(target, signal),
  state: (pid: number) => string | null = processState,
): boolean {
  try {
    kill(pid, 0);
  } catch (error) {
    // EPERM: it exists, as another user's. ESRCH: no such process.
    if (errnoOf(error) !== 'EPERM') return false;
  }
  return state(pid) !== 'Z';
}

/**
 * The fields of /proc/<pid>/stat from the third (the state) on, or null where there is no /proc or
 * no such process. They are counted after the last ")", since the command's name (field 2) may
 * hold spaces and parentheses.
 */
export function procStatFields(pid: number, read: (path: string) => string = readSmallText): string[] | null {
  let stat: string;
  try {
    stat = read(`/proc/${pid}/stat`);
  } catch {
    return null;
  }
  const nameEnd = stat.lastIndexOf(')');
  return nameEnd === -1 ? null : stat.slice(nameEnd + 1).trim().split(/\s+/);
}

/** The process's state letter from /proc (`Z`: a zombie), or null where /proc does not tell. */
export function processState(pid: number, read?: (path: string) => string): string | null {
  return procStatFields(pid, read)?.[0] ?? null;
}

/**
 * Removes the temporary files in `dir` whose writer is gone: a `kill -9` during a `logs rm` leaves a
 * copy as big as the log. A live writer's are kept, whoever it is. Returns how many went.
 */
export async function removeOrphanedTemporaries(dir: string): Promise<number> {
  const names = await readdir(dir).catch((error: unknown) => {
    if (isMissing(error) || errnoOf(error) === 'ENOTDIR') return [];
    throw error;
  });
  let removed = 0;
  for (const name of names) {
    const pid = Number(TEMPORARY_NAME.exec(name)?.[1] ?? Number.NaN);
    if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || processAlive(pid)) continue;
    await rm(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

/** Thrown when a path in the data home is a symlink: Argo never writes through one (exit 1). */
export class SymlinkRefusedError extends RuntimeError {
  override name = 'SymlinkRefusedError';
  constructor(readonly path: string) {
    super(`${path} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`);
  }
}

/**
 * A link in the data home that another user made: never followed, since where it leads is theirs to
 * choose (a folder of the user's to have its mode changed and be written into).
 */
export class ForeignLinkError extends SymlinkRefusedError {
  override name = 'ForeignLinkError';
  constructor(
    path: string,
    readonly owner: number,
  ) {
    super(path);
    this.message = `${path} is a link another user (uid ${owner}) made; Argo follows only links of your own (or root's) in its data home (remove it, or make it again as yourself)`;
  }
}

/** Opening with O_NOFOLLOW fails with ELOOP when the last part of the path is a symlink. */
function refusedLink(error: unknown, path: string): unknown {
  return errnoOf(error) === 'ELOOP' ? new SymlinkRefusedError(path) : error;
}

/**
 * A failed write said of `path`, the file asked for: Node names no path for a write on an open
 * file (a full disk), and Argo's temporary file beside the target is not one the user knows.
 */
export function saidOf(error: unknown, path: string, temporary?: string): unknown {
  if (errnoOf(error) === undefined || typeof error !== 'object' || error === null) return error;
  if (!('path' in error) || (temporary !== undefined && error.path === temporary)) Object.assign(error, { path });
  return error;
}

/**
 * A small private file's text (a session record, the memo, the verified record), read at once:
 * open, read, close as three system calls of a few microseconds each. Through the thread pool the
 * same read costs the event loop more than it saves: under load each hand-over waits on the pool's
 * lock (measured in `argo serve`: ~150 µs per close). `flags` are open(2)'s (O_NOFOLLOW to refuse a
 * symlink). readRegularText is the same read for a path that must be a regular file, readDataText
 * for a file of the data home.
 */
export function readSmallText(path: string, flags: number = constants.O_RDONLY): string {
  const fd = openSync(path, flags);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** What a file that is not a regular one is, in words for an error ("a named pipe"): from its stats or its directory entry. */
export function fileKind(stats: Pick<Stats, 'isFile' | 'isDirectory' | 'isFIFO' | 'isSocket' | 'isCharacterDevice' | 'isBlockDevice' | 'isSymbolicLink'>): string {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFIFO()) return 'a named pipe';
  if (stats.isSocket()) return 'a socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  // Said after "is" (`STOP is …`): a kind, never a negation that would read "is not … , not a file".
  return stats.isSymbolicLink() ? 'a symbolic link' : 'an unknown kind of entry';
}

/** A folder of the data home that is there but cannot be read as one: what it is, in the message (exit 1). */
export class NotAFolderError extends RuntimeError {
  override name = 'NotAFolderError';
  constructor(
    readonly path: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Why `path` cannot be read as a folder: a file, a link to nothing or to a file, or under a part
 * that is not a folder. Null when it is a folder, or simply not there (nothing made yet).
 */
export async function folderTrouble(path: string): Promise<string | null> {
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch (error) {
    if (isMissing(error)) return null;
    if (errnoOf(error) === 'ENOTDIR') return `${shownPath(path)} cannot be a folder: ${shownPath(dirname(path))} or a folder above it is not one; set ARGO_HOME or --home to a folder`;
    throw error;
  }
  if (stats.isDirectory()) return null;
  if (!stats.isSymbolicLink()) return `${shownPath(path)} is ${kindOf(stats)}, not a folder; Argo keeps its data in folders (move it out of the way)`;
  const target = resolve(dirname(path), await readlink(path));
  let behind: Stats;
  try {
    behind = await stat(path);
  } catch (error) {
    if (!isMissing(error) && errnoOf(error) !== 'ENOTDIR') throw error;
    // A folder on another disk that is not mounted, or moved: its files are not gone, only out of reach.
    return `${shownPath(path)} is a link to ${shownPath(target)}, which does not exist: put the folder back there (mount its disk), or remove the link`;
  }
  return behind.isDirectory() ? null : `${shownPath(path)} is a link to ${shownPath(target)}, which is ${kindOf(behind)}, not a folder: point the link at a folder, or remove it`;
}

/**
 * Why this process cannot enter the folder `path`: it is closed to it (its owner and mode say by
 * whom), or a folder above it is ('above'). Null when it can be entered, or is not there.
 */
export function closedFolder(path: string): { owner: number; mode: number } | 'above' | null {
  let stats: Stats | undefined;
  try {
    stats = statSync(path, { throwIfNoEntry: false });
  } catch (error) {
    return errnoOf(error) === 'EACCES' ? 'above' : null;
  }
  if (stats?.isDirectory() !== true) return null;
  try {
    accessSync(path, constants.X_OK);
    return null;
  } catch {
    return { owner: stats.uid, mode: stats.mode & 0o7777 };
  }
}

function kindOf(stats: Stats): string {
  return stats.isFile() ? 'a file' : fileKind(stats);
}

/** Thrown for a file that must be a regular one and is `kind` ("a named pipe", "a device") instead. */
export class NotRegularFileError extends RuntimeError {
  override name = 'NotRegularFileError';
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is not a file (${kind}); move it out of the way`);
  }
}

/**
 * readSmallText for a file that must be a regular one, never waiting on a named pipe (a read that
 * would block the whole process, as it is synchronous): opened without waiting, then its descriptor's
 * stats say what it is; anything else is a NotRegularFileError saying what. A link is refused
 * (SymlinkRefusedError) unless `followLink`; then only a link to a regular file is read.
 */
export function readRegularText(path: string, options: { followLink?: boolean } = {}): string {
  return readRegular(path, options.followLink === true, false).toString('utf8');
}

/**
 * readSmallText for a file of the data home (a session record, the memo, the chat history): never
 * through a link, never waiting on a named pipe (a folder, a pipe or a device there is an error
 * saying what it is), and only a file of this user's that others cannot write (UntrustedFileError).
 */
export function readDataText(path: string): string {
  return readRegular(path, false, true).toString('utf8');
}

/**
 * readDataText's bytes, for a file that decodes them itself (config.json, which must be UTF-8);
 * `followLink` (config.json, often a link into a dotfiles repository): a link of this user's to
 * a file of theirs is read.
 */
export function readDataBytes(path: string, options: { followLink?: boolean } = {}): Buffer {
  return readRegular(path, options.followLink === true, true);
}

function readRegular(path: string, followLink: boolean, trusted: boolean): Buffer {
  let fd: number;
  try {
    fd = openSync(path, regularReadFlags(followLink));
  } catch (error) {
    // A socket cannot be opened at all (ENXIO): said as what it is.
    const stats = errnoOf(error) === 'ENXIO' ? (followLink ? statSync : lstatSync)(path, { throwIfNoEntry: false }) : undefined;
    if (stats !== undefined && !stats.isFile()) throw new NotRegularFileError(path, fileKind(stats));
    throw followLink ? error : refusedLink(error, path);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new NotRegularFileError(path, fileKind(stats));
    if (trusted) refuseUntrusted(path, stats, followLink);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Why a file of the data home is not to be trusted: another user's, or one others may write (its mode). */
export type Distrust = { owner: number } | { mode: number };

/** Who reads a file of the data home, as distrustOf needs to know them. */
export interface Reader {
  uid: number;
  /** The gid of the reader's user private group (privateGroupOf), or null when they have none or it is not known. */
  privateGroup: number | null;
}

/**
 * Whether a file or link owned by `owner` may be trusted by user `uid`, as ssh trusts it: the
 * user's own, or root's (a file from the Nix store, one an admin put there; root can change
 * anything of the user's anyway). Never for a folder Argo writes into: the user cannot.
 */
export function trustedOwner(owner: number, uid: number): boolean {
  return owner === uid || owner === 0;
}

/**
 * The rule for a file Argo reads from its data home (config.json, the memo, the chat history…),
 * as ssh's for authorized_keys: it must be the reader's or root's (trustedOwner) — another user's
 * is refused, root reading it included — and others must not be able to write it. Write by the
 * file's group does not count when that group is the reader's user private group (Debian's ssh:
 * umask 002 with a group of one), nor does the group's or others' when they cannot reach the file:
 * its folder is the reader's and closed to them (a 0664 config.json in a 0700 data home). `folder`
 * is asked for only when the file is such a one. Null: trusted; always where there are no uids
 * (Windows).
 */
export function distrustOf(file: Pick<Stats, 'uid' | 'gid' | 'mode'>, folder: Pick<Stats, 'uid' | 'mode'> | null, reader: Reader | undefined): Distrust | null {
  if (reader === undefined) return null;
  const { uid } = reader;
  if (!trustedOwner(file.uid, uid)) return { owner: file.uid };
  const reachable = (enter: number): boolean => folder?.uid !== uid || (folder.mode & enter) !== 0;
  const groupWrites = (file.mode & 0o020) !== 0 && file.gid !== reader.privateGroup && reachable(0o010);
  const othersWrite = (file.mode & 0o002) !== 0 && reachable(0o001);
  return groupWrites || othersWrite ? { mode: file.mode & 0o7777 } : null;
}

/**
 * Whether `gid` is the user private group of the user `name`, by the text of /etc/group: the first
 * entry of that gid (the one getgrgid finds) has the user's name and no member but the user. A gid
 * not listed there (a group from LDAP or sssd) is not: nothing says who else is in it.
 */
export function privateGroupOf(groupText: string, gid: number, name: string): boolean {
  for (const line of groupText.split('\n')) {
    const [group, , id, members = ''] = line.trim().split(':');
    if (id === undefined || !/^\d+$/.test(id) || Number(id) !== gid) continue;
    return group === name && members.split(',').every((member) => member === '' || member === name);
  }
  return false;
}

/** This process's primary gid when it is the user's private group (/etc/group read once), else null. */
let ownPrivateGroup: number | null | undefined;

export function readerPrivateGroup(): number | null {
  if (ownPrivateGroup !== undefined) return ownPrivateGroup;
  ownPrivateGroup = null;
  const gid = process.getgid?.();
  try {
    if (gid !== undefined && privateGroupOf(readFileSync('/etc/group', 'utf8'), gid, userInfo().username)) ownPrivateGroup = gid;
  } catch {
    // No /etc/group, or no name for this uid: the group's write counts.
  }
  return ownPrivateGroup;
}

/** A file of the data home that is another user's, or that others may write: never read (exit 1; config.json's is a usage error, exit 2). */
export class UntrustedFileError extends RuntimeError {
  override name = 'UntrustedFileError';
  constructor(
    readonly path: string,
    readonly distrust: Distrust,
    /** The file's folder is its owner's too: the data home is another user's, and their file is not for this one to remove. */
    theirFolder = false,
    /** The file is root's (trusted for its owner, not its mode), and this reader is not root: only root may change its mode. */
    rootsFile = false,
  ) {
    const ownerFix = theirFolder ? 'so is its folder: set ARGO_HOME or --home to a data home of your own' : 'remove it, or make it yours with chown if you trust what it says';
    const modeFix = rootsFile ? `it is root's: run "sudo chmod go-w ${shellWord(path)}", or remove it` : `run "chmod go-w ${shellWord(path)}"`;
    const [why, only, fix] =
      'owner' in distrust
        ? [`belongs to another user (uid ${distrust.owner})`, 'your own files', ownerFix]
        : [`can be written by other users (mode ${distrust.mode.toString(8)})`, 'files others cannot change', modeFix];
    super(`${path} ${why}, and Argo reads only ${only} in its data home (they decide what it sends and runs): ${fix}`);
  }
}

/** Refuses the open file `stats` at `path` unless distrustOf trusts it; a link followed to it must be this user's or root's too. */
function refuseUntrusted(path: string, stats: Stats, followLink: boolean): void {
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const entry = followLink ? lstatSync(path, { throwIfNoEntry: false }) : undefined;
  if (entry?.isSymbolicLink() === true && !trustedOwner(entry.uid, uid)) throw new ForeignLinkError(path, entry.uid);
  const folder = (stats.mode & 0o022) === 0 ? null : (statSync(dirname(entry?.isSymbolicLink() === true ? realpathSync(path) : path), { throwIfNoEntry: false }) ?? null);
  // /etc/group is read only for a file its group may write.
  const distrust = distrustOf(stats, folder, { uid, privateGroup: (stats.mode & 0o020) === 0 ? null : readerPrivateGroup() });
  if (distrust === null) return;
  const theirFolder = 'owner' in distrust && statSync(dirname(path), { throwIfNoEntry: false })?.uid === distrust.owner;
  throw new UntrustedFileError(path, distrust, theirFolder, stats.uid === 0 && uid !== 0);
}

/**
 * A data file of any size (a job), read through the thread pool, never through a link, never
 * waiting on a named pipe: anything but a regular file is an error saying what it is.
 */
export async function readDataFile(path: string): Promise<Buffer> {
  const { handle } = await openRegularFile(path, constants.O_RDONLY);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/**
 * A data file of Argo's opened with open(2)'s `flags` (created with `mode` if they say so), never
 * through a link (SymlinkRefusedError), never waiting on a named pipe (O_NONBLOCK), and refused
 * unless its descriptor is a regular file's: a folder, a pipe, a socket or a device is a
 * NotRegularFileError saying what it is. A write to a pipe would vanish into it, or block a thread
 * for good once its buffer is full. Returns the handle, for the caller to close, and its stats.
 */
async function openRegularFile(path: string, flags: number, mode?: number): Promise<{ handle: FileHandle; stats: Stats }> {
  let handle: FileHandle;
  try {
    handle = await open(path, flags | constants.O_NONBLOCK | constants.O_NOFOLLOW, mode);
  } catch (error) {
    // A folder opened for writing says EISDIR, a socket ENXIO: each is named as what it is.
    const code = errnoOf(error);
    const stats = code === 'EISDIR' || code === 'ENXIO' ? await lstat(path).catch(() => null) : null;
    if (stats !== null && !stats.isFile() && !stats.isSymbolicLink()) throw new NotRegularFileError(path, fileKind(stats));
    throw refusedLink(error, path);
  }
  return { handle, stats: await regularStats(handle, path) };
}

/** The stats of an open file that must be a regular one; anything else is closed and refused (NotRegularFileError). */
async function regularStats(handle: FileHandle, path: string): Promise<Stats> {
  let stats: Stats;
  try {
    stats = await handle.stat();
  } catch (error) {
    await handle.close();
    throw error;
  }
  if (stats.isFile()) return stats;
  await handle.close();
  throw new NotRegularFileError(path, fileKind(stats));
}

/**
 * A regular file opened for reading, never waiting on a pipe (O_NONBLOCK), with its stats; null for
 * anything else (a folder, a named pipe, a device) or when it cannot be opened. Never through a link,
 * unless `followLink` (a day of the log, which every reader of the log follows: listLogFiles): then
 * only a link to a regular file is. The caller closes `fd`.
 */
export function openRegularSync(path: string, options: { followLink?: boolean } = {}): { fd: number; stats: Stats } | null {
  let fd: number;
  try {
    fd = openSync(path, regularReadFlags(options.followLink === true));
  } catch {
    return null;
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isFile()) return { fd, stats };
  } catch {
    // not readable as a file: closed below
  }
  closeSync(fd);
  return null;
}

/**
 * A data file of Argo's (a session's index) opened for reading: null when it is missing or not a
 * regular file (a folder, a named pipe, never waited on: the caller treats it as damaged); a link is
 * refused (SymlinkRefusedError). Other failures (permissions) are thrown. The caller closes it.
 */
export async function openDataFile(path: string): Promise<FileHandle | null> {
  try {
    return await openIfRegular(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** `path` opened for reading if it is a regular file, else null; never through a link (refused), never waiting on a pipe. */
async function openIfRegular(path: string): Promise<FileHandle | null> {
  try {
    return (await openRegularFile(path, constants.O_RDONLY)).handle;
  } catch (error) {
    if (error instanceof NotRegularFileError) return null;
    throw error;
  }
}

/**
 * A day of the log (or another file a reader streams) opened for reading: through a link, as every
 * reader of the log follows one (listLogFiles), but never waiting on a named pipe swapped in after
 * the listing; anything but a regular file is a NotRegularFileError. The caller closes it.
 */
export async function openLogFile(path: string): Promise<FileHandle> {
  const handle = await open(path, regularReadFlags(true));
  await regularStats(handle, path);
  return handle;
}

/** open(2)'s flags for a file that must be a regular one: a pipe is never waited on (and then refused by its stats). */
function regularReadFlags(followLink: boolean): number {
  return constants.O_RDONLY | constants.O_NONBLOCK | (followLink ? 0 : constants.O_NOFOLLOW);
}

/**
 * Whether `path` is a private regular file (0600 or stricter) holding exactly `data`: rewriting it
 * would change nothing. Never through a symlink, never waiting on a pipe; a missing or unreadable
 * file is not (so it is written). Sizes are compared before any byte is read. Synchronous: `sessions
 * reindex` asks it of two files a session, thousands in a row, where each hand-over to the thread
 * pool cost more than the read, and a file is read only when it has the size asked about (the index
 * of 20,000 turns is 2.6 MB, a millisecond).
 */
export function holdsExactly(path: string, data: Buffer): boolean {
  const file = openRegularSync(path);
  if (file === null) return false;
  try {
    if (file.stats.size !== data.length || (file.stats.mode & 0o077) !== 0) return false;
    return readFileSync(file.fd).equals(data);
  } catch {
    return false;
  } finally {
    closeSync(file.fd);
  }
}

/**
 * Opens a data file for appending (created 0600 if missing), readable too, never through a symlink:
 * a link planted at the path would send the user's words, with the target's mode, somewhere else.
 * Anything but a regular file (a named pipe, a folder) is refused, never written to
 * (NotRegularFileError). A file left readable by others is made private. Returns the handle and the
 * file's size.
 */
export async function openForAppend(path: string): Promise<{ handle: FileHandle; size: number }> {
  const { handle, stats } = await openAppending(path);
  try {
    await makePrivate(stats, (mode) => handle.chmod(mode));
    return { handle, size: stats.size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function openAppending(path: string, create = true): Promise<{ handle: FileHandle; stats: Stats }> {
  try {
    return await openRegularFile(path, constants.O_RDWR | constants.O_APPEND | (create ? constants.O_CREAT : 0), PRIVATE_FILE);
  } catch (error) {
    throw await fileOrFolderRefusal(error, path);
  }
}

/**
 * A data file that is there but refuses this user (a chmod 400, another user's file): the file's own
 * mode or owner is what to fix, not its folder's. Its message says which and how.
 */
export class UnwritableFileError extends RuntimeError {
  override name = 'UnwritableFileError';
  constructor(
    readonly path: string,
    /** "permission denied": why, in words. */
    readonly problem: string,
    /** "make it writable (chmod 600 FILE)": what to do, for a clause of a longer line. */
    readonly fix: string,
    options?: ErrorOptions,
  ) {
    super(`${path} cannot be written (${problem}); ${fix}`, options);
  }
}

/**
 * An open for appending refused for permission: an UnwritableFileError when the file is there (a
 * folder in the way could not have let it be reached), else the error as it is (the folder's).
 */
async function fileOrFolderRefusal(error: unknown, path: string): Promise<unknown> {
  const code = errnoOf(error);
  if (code !== 'EACCES' && code !== 'EPERM') return error;
  const stats = await lstat(path).catch(() => null);
  if (!stats?.isFile()) return error;
  const problem = FILE_PROBLEMS[code]?.problem ?? code;
  const fix = stats.uid === process.getuid?.() ? `make it writable (chmod 600 ${shellWord(path)})` : `give the file back to your user (chown; it belongs to uid ${stats.uid})`;
  return new UnwritableFileError(path, problem, fix, { cause: error });
}

/**
 * Whether a turn could append to `path` now: opened as the log store opens it (never through a
 * link, never a pipe) and closed, nothing written, its mode left as it is. A missing file is fine
 * (the first turn makes it); anything else throws what the store would.
 */
export async function checkAppendable(path: string): Promise<void> {
  let handle: FileHandle;
  try {
    ({ handle } = await openAppending(path, false));
  } catch (error) {
    if (isMissing(error)) return;
    throw error;
  }
  await handle.close();
}

/**
 * Appends `text` to a data file in one write, never through a symlink nor to anything but a regular
 * file (openForAppend); its mode is checked once per process. With `create: false` a missing file
 * stays missing: false, nothing written.
 */
export async function appendPrivate(path: string, text: string, options: { create?: boolean } = {}): Promise<boolean> {
  await ensurePrivateDir(dirname(path));
  let handle: FileHandle;
  let stats: Stats;
  try {
    ({ handle, stats } = await openAppending(path, options.create !== false));
  } catch (error) {
    if (options.create === false && isMissing(error)) return false;
    throw error;
  }
  try {
    if (!madePrivate.has(path)) {
      await makePrivate(stats, (mode) => handle.chmod(mode));
      rememberPrivate(path);
    }
    await handle.write(text);
  } catch (error) {
    throw saidOf(error, path);
  } finally {
    await handle.close();
  }
  return true;
}

/**
 * Saves text Argo could not log (a turn) where only the user can read it and nobody can redirect it:
 * a new file, created exclusively without following links, 0600, in `home`/rescued (0700). If the
 * data home cannot take it (read-only, full), a fresh private folder from mkdtemp in the system's
 * temporary folder does. Returns the file's path.
 */
export async function rescueText(home: string, text: string): Promise<string> {
  const name = `unlogged-${new Date().toISOString().replace(/[:.]/g, '-')}-${process.pid}-${randomBytes(3).toString('hex')}.ndjson`;
  const write = async (dir: string): Promise<string> => {
    const path = join(dir, name);
    const handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } catch (error) {
      // A file made but not filled (a full disk) holds no turn: it must not sit in rescued/ as if it did.
      await handle.close().catch(() => undefined);
      await rm(path, { force: true });
      throw error;
    }
    await handle.close();
    return path;
  };
  try {
    // Never through a link: one planted there would have its folder chmod-ed and written to.
    return await write(await ensureHomeFolder(home, RESCUED_FOLDER));
  } catch {
    return write(await mkdtemp(join(tmpdir(), 'argo-rescued-')));
  }
}

/** Where a write to `path` would land, links resolved; the missing part of the path is kept as written. */
export async function realLocation(path: string, hops = 0): Promise<string> {
  const absolute = resolve(path);
  try {
    return await realpath(absolute);
  } catch (error) {
    const parent = dirname(absolute);
    if (!isMissing(error) || parent === absolute) return absolute;
    // A link to nothing yet: a write through it lands where it points (the kernel's 40 hops at most).
    const target = hops < LINK_HOPS ? await readlink(absolute).catch(() => null) : null;
    if (target !== null) return realLocation(resolve(parent, target), hops + 1);
    return join(await realLocation(parent), basename(absolute));
  }
}

/** Links followed in a row before the kernel says ELOOP. */
const LINK_HOPS = 40;

/** Whether writing to `path` would write into `folder` (or over it), through links too. */
export async function landsInside(path: string, folder: string): Promise<boolean> {
  const [target, root] = await Promise.all([realLocation(path), realLocation(folder)]);
  return target === root || target.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/** Refuses to replace or write a symlink at `path`; a missing path is fine. */
export async function refuseSymlink(path: string): Promise<void> {
  try {
    if ((await lstat(path)).isSymbolicLink()) throw new SymlinkRefusedError(path);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
}

/**
 * The one way data files are replaced: written whole to an exclusive temporary sibling (0600),
 * flushed to disk, then renamed over the target, so readers see the old file or the new one and
 * never half of either. A symlink at the target is refused rather than replaced.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, options: DataFileOptions = {}): Promise<void> {
  await replaceFile(target, (handle) => handle.writeFile(data), options);
}

/** Like writeFileAtomic, for content too large to hold at once: `write` fills the temporary file. */
export async function replaceFile(target: string, write: (handle: FileHandle) => Promise<void>, options: DataFileOptions = {}): Promise<void> {
  await ensureParent(target, options);
  await refuseSymlink(target);
  const temporary = temporaryPath(target);
  trackTemporary(temporary);
  try {
    await writeTemporary(temporary, write, options.flush !== false);
    await rename(temporary, target);
  } catch (error) {
    // Its removal failing too (a name too long to make) must not hide why the write failed.
    await removeFile(temporary).catch(() => undefined);
    throw saidOf(error, target, temporary);
  } finally {
    untrackTemporary(temporary);
  }
}

// How a file system without hard links (exFAT, FAT, SMB, some FUSE mounts) refuses `link`: macOS
// says ENOTSUP, Linux's vfat EPERM, Windows' FAT32 EINVAL.
const NO_HARD_LINKS = new Set(['ENOTSUP', 'EOPNOTSUPP', 'EPERM', 'ENOSYS', 'EINVAL']);

/**
 * Creates `target` with `data` only if nothing (not even a symlink) is there yet; false when
 * something is. Written whole to a temporary sibling first and linked into place, so the file
 * appears complete or not at all, and two creators agree on one winner. On a file system without
 * hard links it is created in place (O_EXCL still picks one winner; a reader at that instant may
 * see it part-written) rather than not at all.
 */
export async function createFileExclusive(target: string, data: string | Uint8Array, options: DataFileOptions = {}): Promise<boolean> {
  await ensureParent(target, options);
  const temporary = temporaryPath(target);
  trackTemporary(temporary);
  try {
    await writeTemporary(temporary, (handle) => handle.writeFile(data), options.flush !== false);
    try {
      await link(temporary, target);
    } catch (error) {
      if (!NO_HARD_LINKS.has(errnoOf(error) ?? '')) throw error;
      await createInPlace(target, data, options.flush !== false);
    }
    return true;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    throw saidOf(error, target, temporary);
  } finally {
    await removeFile(temporary).catch(() => undefined);
    untrackTemporary(temporary);
  }
}

/** createFileExclusive where links cannot be made: a part-written file is removed, never left as the target. */
async function createInPlace(target: string, data: string | Uint8Array, flush: boolean): Promise<void> {
  // EEXIST here is another creator's win: nothing of ours to remove.
  const handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE);
  // Until it is whole, a signal that ends the process removes it, as it does a temporary file.
  trackTemporary(target);
  try {
    await handle.writeFile(data);
    // Whole now, and perhaps read already: a signal during the flush must not remove it.
    untrackTemporary(target);
    if (flush) await handle.sync();
  } catch (error) {
    untrackTemporary(target);
    await handle.close().catch(() => undefined);
    await removeFile(target).catch(() => undefined);
    throw error;
  }
  await handle.close();
}

async function writeTemporary(temporary: string, write: (handle: FileHandle) => Promise<void>, flush = true): Promise<void> {
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE);
  try {
    await write(handle);
    if (flush) await handle.sync();
  } finally {
    await handle.close();
  }
}

async function lstatIfThere(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** Makes a private folder (another process may make it first) and reads what is there now. */
async function madeFolder(path: string): Promise<Stats> {
  try {
    await mkdir(path, { mode: PRIVATE_DIR });
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') throw error;
  }
  return lstat(path);
}

/**
 * Makes the folder `relative` (slash-separated) inside the data home `home`, one level at a time,
 * each a private folder of this user's and never a link: a link planted inside the home would send
 * what Argo writes there (tool results, definitions) out of it. The home itself is made if missing
 * and otherwise left as the user made it (ensureHomeDir); it may be a link the user made. Returns
 * the folder's path.
 */
export async function ensureHomeFolder(home: string, relative: string): Promise<string> {
  await ensureHomeDir(home);
  let path = home;
  for (const part of relative.split('/')) {
    path = join(path, part);
    // Checked every time, not once: a link may be put there while a server runs.
    const stats = (await lstatIfThere(path)) ?? (await madeFolder(path));
    if (stats.isSymbolicLink()) throw new SymlinkRefusedError(path);
    if (!stats.isDirectory()) throw new RuntimeError(`${path} is not a folder; remove it, and Argo makes the folder again`);
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) throw new ForeignFolderError(path, stats.uid, 'remove it, and Argo makes the folder again');
    await makePrivate(stats, (mode) => chmodFolder(path, stats, mode, false));
    // What ensurePrivateDir would check: a file written here next (createFileExclusive) is not
    // checked again by a stat that follows a link put there in between.
    rememberPrivate(path);
  }
  return path;
}
