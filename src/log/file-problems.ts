// What a failed file system call's code means, in words, and what to do about it: one table for the
// CLI's lines (cli/file-failure.ts) and the file tools' errors (tools/root.ts).

const PERMISSIONS = 'check the path and its permissions';
const SPACE = 'free some space on its disk (df -h shows which) and try again';

/** What a file system error code means, what to do about it, and whether the fix is about the path (`onPath`). */
export const FILE_PROBLEMS: Readonly<Record<string, { problem: string; fix: string; onPath?: true }>> = {
  EACCES: { problem: 'permission denied', fix: PERMISSIONS, onPath: true },
  EPERM: { problem: 'not permitted', fix: PERMISSIONS, onPath: true },
  EROFS: { problem: 'the file system is read-only', fix: 'use a folder on a writable one', onPath: true },
  ENOSPC: { problem: 'no space left on the device', fix: SPACE },
  EDQUOT: { problem: 'the disk quota is used up', fix: SPACE },
  EISDIR: { problem: 'it is a folder', fix: PERMISSIONS, onPath: true },
  ENOTDIR: { problem: 'a part of the path is not a folder', fix: PERMISSIONS, onPath: true },
  ENOENT: { problem: 'no such file or folder', fix: PERMISSIONS, onPath: true },
  ELOOP: { problem: 'too many symbolic links', fix: PERMISSIONS, onPath: true },
  // open(2) of a socket, of a device file with nothing behind it, or (without waiting) of a pipe to write that nobody reads.
  ENXIO: { problem: 'it is a socket, a device with nothing behind it or a pipe nobody reads, not a file', fix: 'name a regular file instead', onPath: true },
  ENAMETOOLONG: { problem: 'the name is too long', fix: 'use a shorter path', onPath: true },
  EMFILE: { problem: 'argo has too many files open', fix: 'raise the limit on open files (ulimit -n) and try again' },
  ENFILE: { problem: 'the system has too many files open', fix: 'close some programs and try again' },
};
