// File tools see one directory tree: paths are resolved inside the root, and `..` or a symlink
// that leads outside it is refused; so is one into Argo's data home when it lies in the root.
import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { FILE_PROBLEMS } from '../log/file-problems.js';
import { errnoOf, isMissing, realLocation } from '../log/fs.js';
import { QuotingMessage, quoting } from './foreign-line.js';
import { ToolError } from './types.js';

/**
 * Where the file tools may go: inside `root` (a real path), never inside `home`, the data home's
 * real path when it and the root overlap (`ARGO_HOME=$PWD`, a root of `~` with `~/.argo`), null
 * otherwise. Its config.json may hold a server's key and the tools it allows, its logs are
 * replayed: a model that could read or write them could lift its own limits.
 */
export interface Confinement {
  root: string;
  home: string | null;
}

/** The root alone, for a check the data home adds nothing to (a command's directory, the key of a write the write itself checks). */
export function rootOnly(root: string): Confinement {
  return { root, home: null };
}

/** The confinement of a tool call: its root, and its data home if that overlaps the root. */
export async function confinementOf(context: { root: string; home: string }): Promise<Confinement> {
  const home = await realLocation(context.home);
  return { root: context.root, home: isInside(context.root, home) || isInside(home, context.root) ? home : null };
}

/** Whether a real path is one the file tools may use. */
export function allows(confinement: Confinement, path: string): boolean {
  return isInside(confinement.root, path) && (confinement.home === null || !isInside(confinement.home, path));
}

export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
/**
 * What a path is for: a file or a directory that must exist (read, listed, edited, a command's
 * folder), or a file to write, which may not exist yet. It decides the words for a link to nothing.
 */
export type PathUse = 'existing file' | 'existing directory' | 'write';

/**
 * The real path `path` (relative to the root, or absolute) names, checked to be where `confinement`
 * lets the tools go: inside its root (itself a real path), and not inside its data home. A path that
 * does not exist yet is checked through its nearest existing ancestor, so a new file cannot be
 * created through a link that leads out. A relative path that climbs out of the root is refused as
 * written; an absolute one is judged by where it really leads, so the root named through a link
 * (a `--root` that is a symlink, macOS's /tmp) is the root too. A path through a link to nothing is
 * refused in the words of its `use`.
 */
export async function resolveInRoot(confinement: Confinement, path: string, use: PathUse): Promise<string> {
  refuseNul(path, 'path');
  return resolveFollowing(confinement, path, use, null);
}

/** A file tool's argument that names files: a path, or a glob (list_files' `pattern`, search_files' `glob`). */
export type FileArgument = 'path' | 'pattern' | 'glob';

/**
 * The refusal of a path or glob holding a NUL byte, which no file name can: said before the disk
 * is touched, naming the argument (`argument`), the NUL shown as `\0` (Node's own words would name
 * the value with it dropped).
 */
export function refuseNul(text: string, argument: FileArgument): void {
  if (text.includes('\0')) throw new ToolError(nulWords(text, argument));
}

function nulWords(text: string, argument: FileArgument): QuotingMessage {
  return new QuotingMessage([`${argument} "`, '" contains a NUL byte, which no file name can; give it without one'], [text.replaceAll('\0', '\\0')]);
}

/**
 * The file tools' `refuse`: an argument that names files (`names`, those arguments) holding a NUL
 * byte makes the call invalid, so the model is asked again, as for run_command's command.
 */
function nulInFileArguments(names: readonly FileArgument[]): (args: Record<string, unknown>) => string | null {
  return (args) => {
    for (const name of names) {
      const value = args[name];
      if (typeof value === 'string' && value.includes('\0')) return nulWords(value, name).text;
    }
    return null;
  };
}

/** Dangling links followed to say where one leads: as many as the kernel follows in one path. */
const MOST_DANGLING_LINKS = 40;

/**
 * resolveInRoot, which refuses a path through a link to nothing in the words of its `use`; with
 * `links` (the links followed so far), what such a path names instead, through each link in turn.
 */
async function resolveFollowing(confinement: Confinement, path: string, use: PathUse, links: number | null): Promise<string> {
  const { root, home } = confinement;
  const target = resolve(root, path);
  const written = isInside(root, target);
  if (!written && !isAbsolute(path)) throw outside(path);
  let existing = target;
  let missingTail = '';
  for (;;) {
    try {
      const real = await realpath(existing);
      if (!isInside(root, real)) throw outside(path);
      const resolved = missingTail === '' ? real : resolve(real, missingTail);
      if (home !== null && isInside(home, resolved)) throw inDataHome(path, home);
      return resolved;
    } catch (error) {
      if (error instanceof ToolError) throw error;
      // An absolute path elsewhere is outside, whatever looking at it met.
      if (!isMissing(error)) throw written ? fileFailure(error, path, 'open') : outside(path);
      // A dangling symlink is missing for realpath but present for lstat: never write through it.
      if (await isLink(existing)) {
        if (links === null) throw await throughDanglingLink(confinement, existing, missingTail, path, use);
        return resolveFollowing(confinement, await linkTarget(existing, missingTail, links), use, links + 1);
      }
      const parent = dirname(existing);
      if (parent === existing) throw outside(path);
      missingTail = missingTail === '' ? relative(parent, existing) : `${relative(parent, existing)}${sep}${missingTail}`;
      existing = parent;
    }
  }
}

async function isLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The path the link `link` (then `tail`) names; refused past MOST_DANGLING_LINKS links. */
async function linkTarget(link: string, tail: string, links: number): Promise<string> {
  if (links >= MOST_DANGLING_LINKS) throw new ToolError('too many links');
  return resolve(dirname(link), await readlink(link), tail);
}

/**
 * The refusal of `path`, which goes through `link`, a symbolic link to nothing, then `tail`. Where it
 * leads decides the words: a place inside the root is named, anywhere else is outside. A path to
 * read does not exist; one to write is not written through the link (no file is made through one),
 * and the place is named for the model to use instead.
 */
async function throughDanglingLink(confinement: Confinement, link: string, tail: string, path: string, use: PathUse): Promise<ToolError> {
  const named = await linkTarget(link, tail, 0)
    .then((target) => resolveFollowing(confinement, target, use, 1))
    .catch(() => null);
  if (named === null) return new ToolError(quoting`path "${path}" is a symbolic link to a place outside the root directory; use a path inside it`);
  const shown = shownPath(confinement.root, named);
  if (use === 'write') return new ToolError(quoting`"${path}" is a symbolic link to "${shown}", which does not exist; the file tools never make a file through a link: use the path "${shown}" itself`);
  const through = tail === '' ? 'it is a symbolic link' : 'it leads through a symbolic link';
  if (use === 'existing file') return new ToolError(quoting`file "${path}" does not exist (${through} to "${shown}", which does not exist)`);
  return new ToolError(quoting`directory "${path}" does not exist (${through} to "${shown}", which does not exist)`);
}

/**
 * Codes a file tool meets that no call can mend: the user must act first. A name too long or a loop
 * of links (ENAMETOOLONG, ELOOP) is not one: the model can choose another path.
 */
const LASTING_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT']);

/**
 * A file system call on the model's `path` that failed, as a tool error saying why in words
 * (`cannot write "d/x.txt": permission denied`) and naming the path the model gave, never the one
 * Argo used (`/proc/self/fd/…`, a temporary file beside it); not retryable when trying again cannot
 * mend it. An error without a code (a bug) is returned as it is.
 */
export function fileFailure(error: unknown, path: string, doing: 'open' | 'read' | 'write'): unknown {
  const code = errnoOf(error);
  if (error instanceof ToolError || code === undefined) return error;
  const problem = FILE_PROBLEMS[code]?.problem;
  return new ToolError(problem !== undefined ? quoting`cannot ${doing} "${path}": ${problem}` : quoting`cannot ${doing} "${path}" (${code})`, !LASTING_CODES.has(code));
}

/**
 * The refusal of a file's path that ends in a slash: path.resolve drops it, so `notes/` would be
 * taken as the file `notes` where a folder was meant.
 */
export function refuseFolderPath(path: string): void {
  if (/\/\.?$/.test(path)) throw new ToolError(quoting`"${path}" ends in "/", so it names a folder; give the path of a file`);
}

/** The refusal of a path into the data home; the same wherever the path is checked. */
export function inDataHome(path: string, home: string): ToolError {
  return new ToolError(quoting`path "${path}" is inside Argo's data home (${home}), which the file tools may not use; use a path outside it (or run with a --root that does not hold the data home)`);
}

function outside(path: string): ToolError {
  return new ToolError(quoting`path "${path}" is outside the root directory; use a path inside it`);
}

/** The path as the model should see it: relative to the root, with forward slashes. */
export function shownPath(root: string, path: string): string {
  const rel = relative(root, path);
  return rel === '' ? '.' : rel.split(sep).join('/');
}

/** The `refuse` of read_file, write_file and edit_file. */
export const nulInPath = nulInFileArguments(['path']);
/** The `refuse` of list_files. */
export const nulInListing = nulInFileArguments(['pattern', 'path']);
/** The `refuse` of search_files: its `pattern` is a regular expression, not a file name. */
export const nulInSearch = nulInFileArguments(['path', 'glob']);
