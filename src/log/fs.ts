import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

/** The errno code of a failed fs call (`ENOENT`, `EEXIST`, …), or undefined for any other error. */
export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error;
  return typeof code === 'string' ? code : undefined;
}

export function isMissing(error: unknown): boolean {
  return errnoOf(error) === 'ENOENT';
}

export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_DIR });
}

/** A sibling name unique to this write (several may run at once, even in one process). */
export function temporaryPath(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

/** Thrown when a path in the data home is a symlink: Argo never writes through one. */
export class SymlinkRefusedError extends Error {
  override name = 'SymlinkRefusedError';
  constructor(readonly path: string) {
    super(`${path} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`);
  }
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
export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void> {
  await replaceFile(target, (handle) => handle.writeFile(data));
}

/** Like writeFileAtomic, for content too large to hold at once: `write` fills the temporary file. */
export async function replaceFile(target: string, write: (handle: FileHandle) => Promise<void>): Promise<void> {
  await ensurePrivateDir(dirname(target));
  await refuseSymlink(target);
  const temporary = temporaryPath(target);
  try {
    await writeTemporary(temporary, write);
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * Creates `target` with `data` only if nothing (not even a symlink) is there yet; false when
 * something is. Written whole to a temporary sibling first and linked into place, so the file
 * appears complete or not at all, and two creators agree on one winner.
 */
export async function createFileExclusive(target: string, data: string | Uint8Array): Promise<boolean> {
  await ensurePrivateDir(dirname(target));
  const temporary = temporaryPath(target);
  await writeTemporary(temporary, (handle) => handle.writeFile(data));
  try {
    await link(temporary, target);
    return true;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

async function writeTemporary(temporary: string, write: (handle: FileHandle) => Promise<void>): Promise<void> {
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE);
  try {
    await write(handle);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
