import { RuntimeError, messageLine, shownPath } from '../errors.js';
import { FILE_PROBLEMS } from '../log/file-problems.js';
import { errnoOf } from '../log/fs.js';

/** Said after a fix that points at a path, for a file of the data home: the user may choose another home. */
const HOME_NOTE = ' (the data home is ARGO_HOME or --home)';

/** Codes that say what is wrong even without the file they happened to (a write on a full disk names none). */
const PATHLESS = new Set(['EROFS', 'ENOSPC', 'EDQUOT', 'EMFILE', 'ENFILE']);

/**
 * Whose file failed: one of the data home's, whose fix may be another home; or one the user named
 * (`export -o FILE`), whose fix is about that path alone.
 */
export type FileOwner = 'home' | 'named';

function fixOf(code: string | undefined, owner: FileOwner): string | null {
  const known = code === undefined ? undefined : FILE_PROBLEMS[code];
  if (known === undefined) return null;
  return owner === 'home' && known.onPath === true ? `${known.fix}${HOME_NOTE}` : known.fix;
}

function pathOf(error: unknown): string | null {
  return typeof error === 'object' && error !== null && 'path' in error && typeof error.path === 'string' ? error.path : null;
}

/**
 * A file system call that failed (a read-only home, a full disk, a folder where a file goes): one
 * line saying on which file, why, and what to do; null for any other error.
 */
export function fileFailureLine(error: unknown, owner: FileOwner = 'home'): string | null {
  const code = errnoOf(error);
  const known = code === undefined ? undefined : FILE_PROBLEMS[code];
  const fix = fixOf(code, owner);
  if (known === undefined || fix === null) return null;
  const path = pathOf(error);
  if (path !== null) return `cannot use ${shownPath(path)}: ${known.problem}; ${fix}`;
  return code !== undefined && PATHLESS.has(code) ? `${known.problem}; ${fix}` : null;
}

/**
 * A failure on `named`, a file the user gave (export's -o FILE), as the error to report: its fix
 * speaks of that path, not of the data home. Any other error (a file of the data home's) is returned as it is.
 */
export function namedFileError(error: unknown, named: string): unknown {
  if (pathOf(error) !== named) return error;
  const line = fileFailureLine(error, 'named');
  return line === null ? error : new RuntimeError(line, { cause: error });
}

/** What to do about a failed file system call ("free some space on its disk …"), or null for an error of another kind. */
export function fileFix(error: unknown): string | null {
  return fixOf(errnoOf(error), 'home');
}

/** What went wrong with a file or stream, in words: "no space left on the device", else the error's message. */
export function fileProblem(error: unknown): string {
  const code = errnoOf(error);
  return (code === undefined ? undefined : FILE_PROBLEMS[code]?.problem) ?? messageLine(error);
}
