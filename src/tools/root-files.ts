// Files of the root opened and written so that a folder swapped for a link meanwhile cannot lead
// out of it. resolveInRoot checks where a path leads, but any process in the root can rename a link
// into the path before it is opened (a loop of renames wins that race often). Node has no openat2
// (RESOLVE_BENEATH), so:
// - a file opened for reading is checked once open: where its descriptor really is (/proc/self/fd
//   on Linux; elsewhere the path, resolved again, must name the same device and inode);
// - a write walks from the root to its folder one name at a time, each opened in the folder held
//   before it and never through a link, and then makes every name in that folder through
//   /proc/self/fd/N/NAME, which the kernel resolves in that very folder. Without /proc (macOS) the
//   folder is opened by its path and checked before and after the rename: a swap in between may
//   still send the file out, and is then said.
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { access, lstat, mkdir, open, readlink, realpath, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { errnoOf, isMissing, temporaryName, trackTemporary, untrackTemporary } from '../log/fs.js';
import { allows } from './root.js';
import type { Confinement } from './root.js';
import { quoting } from './foreign-line.js';
import { ToolError } from './types.js';

/** How a file or folder is found once open: through /proc (Linux), or by its path checked again. */
export interface OpenOptions {
  /** Whether /proc/self/fd may be used; tests turn it off to run the portable checks. */
  proc?: boolean;
}

const useProc = (options: OpenOptions): boolean => options.proc ?? process.platform === 'linux';

/** Where an open descriptor's file is now, from /proc; null where /proc cannot say. */
async function descriptorPath(fd: number): Promise<string | null> {
  try {
    return await readlink(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

/**
 * Whether `file`, resolved again now, is where the tools may go and the very file `opened` describes. Without
 * /proc this is the best Node allows, and not airtight: a folder on the path may be swapped for a
 * link and back between these calls (docs/security.md says so).
 */
async function sameFileInside(confinement: Confinement, file: string, opened: Stats): Promise<boolean> {
  const real = await realpath(file).catch(() => null);
  if (real === null || !allows(confinement, real)) return false;
  const named = await lstat(real).catch(() => null);
  // Resolved the same way after the lstat too: a swap during it would show.
  const again = await realpath(file).catch(() => null);
  return named !== null && again === real && named.dev === opened.dev && named.ino === opened.ino;
}

/** Whether the file open as `handle` (opened as `file`) is where the tools may go. */
async function openedInside(confinement: Confinement, handle: FileHandle, file: string, options: OpenOptions): Promise<boolean> {
  const where = useProc(options) ? await descriptorPath(handle.fd) : null;
  if (where !== null) return allows(confinement, where);
  return sameFileInside(confinement, file, await handle.stat());
}

/** The error for a path that led elsewhere between its check and its open. */
export function changedWhileOpened(path: string): ToolError {
  return new ToolError(quoting`"${path}" changed while it was opened (a folder on its way was replaced, perhaps by a link out of the root); try again`);
}

/** open(2)'s flags to read a file that may be a named pipe: never waited on (its stats then refuse it). */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * `file` (a real path inside the root, as resolveInRoot gives it) opened with `flags`, never through
 * a link as its last part (a real path has none: one there now was put there meanwhile), and
 * checked once open to be where the tools may go (inside the root, not in the data home); `path`
 * (the model's) names it in errors. The caller closes it.
 */
export async function openInRoot(confinement: Confinement, file: string, flags: number, path: string, options: OpenOptions = {}): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(file, flags | constants.O_NOFOLLOW);
  } catch (error) {
    if (errnoOf(error) === 'ELOOP') throw changedWhileOpened(path);
    throw error;
  }
  let inside = false;
  try {
    inside = await openedInside(confinement, handle, file, options);
  } finally {
    if (!inside) await handle.close();
  }
  if (!inside) throw changedWhileOpened(path);
  return handle;
}

const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * A folder of the root held open for writing in it. On Linux its names are reached through
 * /proc/self/fd, so they are names in this folder whatever happens to its path meanwhile.
 */
export class HeldFolder {
  private constructor(
    /** Its real path when it was opened. */
    readonly real: string,
    private readonly handle: FileHandle,
    /** Names are made by path (no /proc): checked again around each change. */
    readonly byPath: boolean,
  ) {}

  /**
   * The folder `dir` (a real path inside the root), made if missing, reached from the root one name
   * at a time: each opened in the folder before it, never through a link. `path` names it in errors.
   */
  static async open(confinement: Confinement, dir: string, path: string, options: OpenOptions = {}): Promise<HeldFolder> {
    const { root } = confinement;
    const top = await open(root, FOLDER_FLAGS);
    const byPath = !useProc(options) || (await descriptorPath(top.fd)) === null;
    let folder = new HeldFolder(root, top, byPath);
    try {
      for (const name of relative(root, dir).split(sep).filter((part) => part !== '')) {
        const child = new HeldFolder(join(folder.real, name), await folder.openFolder(name, path), byPath);
        await folder.close();
        folder = child;
        if (!(await folder.unmoved(confinement))) throw changedWhileOpened(path);
      }
    } catch (error) {
      await folder.close();
      throw error;
    }
    return folder;
  }

  /** The path that names `name` in this folder. */
  pathOf(name: string): string {
    return this.byPath ? join(this.real, name) : `/proc/self/fd/${this.handle.fd}/${name}`;
  }

  /**
   * Whether names made by path still land in this folder: always through /proc; elsewhere its real
   * path, resolved again, must still be inside the root and be this folder.
   */
  async unmoved(confinement: Confinement): Promise<boolean> {
    return !this.byPath || sameFileInside(confinement, this.real, await this.handle.stat());
  }

  /** Whether the file open as `handle`, made or opened here as `name`, is where the tools may go. */
  async holds(confinement: Confinement, handle: FileHandle, name: string): Promise<boolean> {
    return !this.byPath || sameFileInside(confinement, join(this.real, name), await handle.stat());
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  /** The folder `name` in this one, made if missing; a link there is refused. */
  private async openFolder(name: string, path: string): Promise<FileHandle> {
    try {
      try {
        return await open(this.pathOf(name), FOLDER_FLAGS);
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
      await mkdir(this.pathOf(name)).catch((error: unknown) => {
        if (errnoOf(error) !== 'EEXIST') throw error;
      });
      return await open(this.pathOf(name), FOLDER_FLAGS);
    } catch (error) {
      const code = errnoOf(error);
      if (code !== 'ELOOP' && code !== 'ENOTDIR') throw error;
      // A link where the real path had a folder was put there meanwhile (Linux says ENOTDIR for it).
      if (code === 'ELOOP' || (await lstat(this.pathOf(name)).catch(() => null))?.isSymbolicLink() === true) throw changedWhileOpened(path);
      throw new ToolError(quoting`"${path}" cannot be written: "${name}" on its way is a file, not a folder`);
    }
  }
}

/** How a write meets the file it writes: appended to, created only if absent, or replaced whole. */
export type WriteMode = 'overwrite' | 'append' | 'create';

const NEW_FILE_MODE = 0o666;

/**
 * Writes `text` to `name` in `folder` as `mode` says; `path` (the model's) names it in errors. A
 * replacement is written whole to a new temporary file beside it (with the old file's mode and
 * owner), flushed and renamed over it, so the file is never half-written.
 */
export async function writeInFolder(confinement: Confinement, folder: HeldFolder, name: string, text: string, mode: WriteMode, path: string): Promise<void> {
  if (mode === 'overwrite') {
    await replaceInFolder(confinement, folder, name, text, path);
    return;
  }
  const flags = mode === 'append' ? constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL;
  let handle: FileHandle;
  try {
    handle = await open(folder.pathOf(name), flags | constants.O_NOFOLLOW, NEW_FILE_MODE);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'EEXIST') throw new ToolError(quoting`"${path}" already exists; use mode "overwrite" to replace it`);
    if (code === 'ELOOP') throw changedWhileOpened(path);
    // A named pipe nobody reads: opened without waiting, it says ENXIO.
    if (code === 'ENXIO') throw notRegular(path);
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegular(path);
    if (mode === 'append' && stats.nlink > 1) throw hardLink(path, stats.nlink);
    if (!(await folder.holds(confinement, handle, name))) throw changedWhileOpened(path);
    await handle.write(text);
  } finally {
    await handle.close();
  }
}

/**
 * The refusal to change a file with other names in place: one may be outside the root, and a
 * change in place would change the file there too. A replacement (an overwrite, an edit) is a new
 * file under this name alone, so it may go ahead.
 */
export function hardLink(path: string, names: number): ToolError {
  return new ToolError(
    quoting`"${path}" is a hard link (the file has ${names} names), and its other names may be outside the root, so the file tools do not append to it; an overwrite or edit_file replaces it under this name alone`,
  );
}

/** The refusal of a named pipe, a device or a socket: every file tool's words for one. */
export function notRegular(path: string): ToolError {
  return new ToolError(quoting`"${path}" is not a regular file (a named pipe, a device or a socket); the file tools read and write only regular files`);
}

/** The refusal of a replacement in a folder this user may not write, though the file itself is writable. */
function folderNotWritable(path: string): ToolError {
  return new ToolError(
    quoting`cannot write "${path}": its folder is not writable, and an edit or an overwrite replaces the file through a temporary file beside it (write_file with mode "append" still works); the folder's permissions must change first`,
    false,
  );
}

async function replaceInFolder(confinement: Confinement, folder: HeldFolder, name: string, text: string, path: string): Promise<void> {
  const target = folder.pathOf(name);
  const before = await lstat(target).catch((error: unknown) => {
    if (isMissing(error)) return null;
    throw error;
  });
  if (before?.isDirectory() === true) throw new ToolError(quoting`"${path}" is a directory, not a file`);
  if (before !== null && !before.isFile() && !before.isSymbolicLink()) throw notRegular(path);
  const kept = before?.isFile() === true ? before : null;
  // Replaced by a rename, a file this user may not write would be changed all the same: refused, as writing to it is (EACCES).
  if (kept !== null) await access(target, constants.W_OK);
  const temporary = folder.pathOf(temporaryName(name));
  trackTemporary(temporary);
  try {
    const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, kept === null ? NEW_FILE_MODE : kept.mode & 0o7777).catch((error: unknown) => {
      // The file may be writable and its folder not: "permission denied" alone would name the wrong one.
      if (kept !== null && errnoOf(error) === 'EACCES') throw folderNotWritable(path);
      throw error;
    });
    let written: Stats;
    try {
      await handle.write(text);
      if (kept !== null) {
        // open's mode was trimmed by the umask; the owner is kept where this user may give it.
        await handle.chmod(kept.mode & 0o7777);
        await handle.chown(kept.uid, kept.gid).catch(() => undefined);
      }
      await handle.sync();
      written = await handle.stat();
    } finally {
      await handle.close();
    }
    if (!(await folder.unmoved(confinement))) throw changedWhileOpened(path);
    await rename(temporary, target);
    if (folder.byPath) {
      const landed = await lstat(target).catch(() => null);
      if (!(await folder.unmoved(confinement)) || landed?.ino !== written.ino) {
        throw new ToolError(quoting`the folder of "${path}" was replaced while it was written: the new content may have landed outside the root instead of ${folder.real}; check both`, false);
      }
    }
  } finally {
    await rm(temporary, { force: true }).catch(() => undefined);
    untrackTemporary(temporary);
  }
}
