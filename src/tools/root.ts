// File tools see one directory tree: paths are resolved inside the root, and `..` or a symlink
// that leads outside it is refused.
import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { errnoOf, isMissing } from '../log/fs.js';
import { ToolError } from './types.js';

export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The real path `path` (relative to the root, or absolute) names, checked to lie inside `root`
 * (itself a real path). A path that does not exist yet is checked through its nearest existing
 * ancestor, so a new file cannot be created through a link that leads out.
 */
export async function resolveInRoot(root: string, path: string): Promise<string> {
  const target = resolve(root, path);
  if (!isInside(root, target)) throw outside(path);
  let existing = target;
  let missingTail = '';
  for (;;) {
    try {
      const real = await realpath(existing);
      if (!isInside(root, real)) throw outside(path);
      return missingTail === '' ? real : resolve(real, missingTail);
    } catch (error) {
      if (error instanceof ToolError) throw error;
      if (!isMissing(error)) throw new ToolError(`cannot open "${path}" (${errnoOf(error) ?? 'unreadable'})`);
      // A dangling symlink is missing for realpath but present for lstat: never write through it.
      if (await isLink(existing)) throw outside(path);
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

function outside(path: string): ToolError {
  return new ToolError(`path "${path}" is outside the root directory; use a path inside it`);
}

/** The path as the model should see it: relative to the root, with forward slashes. */
export function shownPath(root: string, path: string): string {
  const rel = relative(root, path);
  return rel === '' ? '.' : rel.split(sep).join('/');
}
