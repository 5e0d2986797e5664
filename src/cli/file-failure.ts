import { messageLine, shownPath } from '../errors.js';
import { errnoOf } from '../log/fs.js';

const PERMISSIONS = 'check the path and its permissions (the data home is ARGO_HOME or --home)';
const SPACE = 'free some space on its disk (df -h shows which) and try again';

/** What a file system error code means, and what to do about it. */
const FILE_PROBLEMS: Readonly<Record<string, { problem: string; fix: string }>> = {
  EACCES: { problem: 'permission denied', fix: PERMISSIONS },
  EPERM: { problem: 'not permitted', fix: PERMISSIONS },
  EROFS: { problem: 'the file system is read-only', fix: 'use a folder on a writable one (the data home is ARGO_HOME or --home)' },
  ENOSPC: { problem: 'no space left on the device', fix: SPACE },
  EDQUOT: { problem: 'the disk quota is used up', fix: SPACE },
  EISDIR: { problem: 'it is a folder', fix: PERMISSIONS },
  ENOTDIR: { problem: 'a part of the path is not a folder', fix: PERMISSIONS },
  ENOENT: { problem: 'no such file or folder', fix: PERMISSIONS },
  ELOOP: { problem: 'too many symbolic links', fix: PERMISSIONS },
  ENAMETOOLONG: { problem: 'the name is too long', fix: 'use a shorter path (the data home is ARGO_HOME or --home)' },
  EMFILE: { problem: 'argo has too many files open', fix: 'raise the limit on open files (ulimit -n) and try again' },
  ENFILE: { problem: 'the system has too many files open', fix: 'close some programs and try again' },
};

/** Codes that say what is wrong even without the file they happened to (a write on a full disk names none). */
const PATHLESS = new Set(['EROFS', 'ENOSPC', 'EDQUOT', 'EMFILE', 'ENFILE']);

/**
 * A file system call that failed (a read-only home, a full disk, a folder where a file goes): one
 * line saying on which file, why, and what to do; null for any other error.
 */
export function fileFailureLine(error: unknown): string | null {
  const code = errnoOf(error);
  const known = code === undefined ? undefined : FILE_PROBLEMS[code];
  if (known === undefined) return null;
  const path = typeof error === 'object' && error !== null && 'path' in error && typeof error.path === 'string' ? error.path : null;
  if (path !== null) return `cannot use ${shownPath(path)}: ${known.problem}; ${known.fix}`;
  return code !== undefined && PATHLESS.has(code) ? `${known.problem}; ${known.fix}` : null;
}

/** What to do about a failed file system call ("free some space on its disk …"), or null for an error of another kind. */
export function fileFix(error: unknown): string | null {
  const code = errnoOf(error);
  return (code === undefined ? undefined : FILE_PROBLEMS[code]?.fix) ?? null;
}

/** What went wrong with a file or stream, in words: "no space left on the device", else the error's message. */
export function fileProblem(error: unknown): string {
  const code = errnoOf(error);
  return (code === undefined ? undefined : FILE_PROBLEMS[code]?.problem) ?? messageLine(error);
}
