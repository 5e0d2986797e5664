import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../../src/errors.js';
import { fileFailureLine, fileFix, namedFileError } from '../../src/cli/file-failure.js';

const failed = (code: string, path?: string): Error => Object.assign(new Error(`${code}: failed`), { code }, path === undefined ? {} : { path });

describe('fileFailureLine: a failed file system call in one line, with what to do', () => {
  it.each<[string, Error | string, string | null]>([
    ['a full disk, on a file', failed('ENOSPC', '/home/ann/.argo/memo.json'), 'cannot use /home/ann/.argo/memo.json: no space left on the device; free some space on its disk (df -h shows which) and try again'],
    ['a full disk, no file named (a write on an open file)', failed('ENOSPC'), 'no space left on the device; free some space on its disk (df -h shows which) and try again'],
    ['a quota used up', failed('EDQUOT', '/x/out.jsonl'), 'cannot use /x/out.jsonl: the disk quota is used up; free some space on its disk (df -h shows which) and try again'],
    ['a read-only file system', failed('EROFS', '/mnt/ro/.argo/STOP'), 'cannot use /mnt/ro/.argo/STOP: the file system is read-only; use a folder on a writable one (the data home is ARGO_HOME or --home)'],
    ['a read-only file system, no file named', failed('EROFS'), 'the file system is read-only; use a folder on a writable one (the data home is ARGO_HOME or --home)'],
    ['no permission', failed('EACCES', '/root/.argo/logs'), 'cannot use /root/.argo/logs: permission denied; check the path and its permissions (the data home is ARGO_HOME or --home)'],
    ['a path too long', failed('ENAMETOOLONG', '/very/long'), 'cannot use /very/long: the name is too long; use a shorter path (the data home is ARGO_HOME or --home)'],
    ['too many open files', failed('EMFILE', '/x/memo.json'), 'cannot use /x/memo.json: argo has too many files open; raise the limit on open files (ulimit -n) and try again'],
    ['too many open files, no file named', failed('EMFILE'), 'argo has too many files open; raise the limit on open files (ulimit -n) and try again'],
    ['too many open files on the machine', failed('ENFILE'), 'the system has too many files open; close some programs and try again'],
    ['a line break in the path stays one line', failed('ENOENT', '/a\nb'), 'cannot use "/a\\nb": no such file or folder; check the path and its permissions (the data home is ARGO_HOME or --home)'],
    ['no permission, no file named: not said as a file problem', failed('EACCES'), null],
    ['another code', failed('ECONNRESET', '/x'), null],
    ['not an fs error', 'boom', null],
  ])('%s', (_name, error, line) => {
    expect(fileFailureLine(error)).toBe(line);
  });
});

describe("fileFailureLine of a file the user named (export's -o FILE): the fix does not point at the data home", () => {
  it.each<[string, Error, string | null]>([
    ['a missing folder', failed('ENOENT', '/tmp/nodir/x.jsonl'), 'cannot use /tmp/nodir/x.jsonl: no such file or folder; check the path and its permissions'],
    ['no permission', failed('EACCES', '/etc/x.jsonl'), 'cannot use /etc/x.jsonl: permission denied; check the path and its permissions'],
    ['a read-only file system', failed('EROFS', '/mnt/ro/x.jsonl'), 'cannot use /mnt/ro/x.jsonl: the file system is read-only; use a folder on a writable one'],
    ['a path too long', failed('ENAMETOOLONG', '/very/long'), 'cannot use /very/long: the name is too long; use a shorter path'],
    ['a full disk: the same as for the data home', failed('ENOSPC', '/x/out.jsonl'), 'cannot use /x/out.jsonl: no space left on the device; free some space on its disk (df -h shows which) and try again'],
    ['another code', failed('ECONNRESET', '/x'), null],
  ])('%s', (_name, error, line) => {
    expect(fileFailureLine(error, 'named')).toBe(line);
  });
});

describe('namedFileError: a failure on the file the user named becomes its one line; any other stays as it was', () => {
  const log = failed('EACCES', '/home/ann/.argo/logs/2026-01-02.ndjson');
  it.each<[string, unknown, string, string | null]>([
    // the error, the file named → the message of the RuntimeError it becomes (null: returned as it was)
    ['on the named file', failed('ENOENT', 'out/x.jsonl'), 'out/x.jsonl', 'cannot use out/x.jsonl: no such file or folder; check the path and its permissions'],
    ["on a file of the data home (the log read for the export): its own, home's fix", log, 'out/x.jsonl', null],
    ['without a path', failed('ENOSPC'), 'out/x.jsonl', null],
    ['not a file failure', new RuntimeError('the log changed'), 'out/x.jsonl', null],
  ])('%s', (_name, error, named, message) => {
    const reported = namedFileError(error, named);
    if (message === null) expect(reported).toBe(error);
    else expect(reported).toEqual(new RuntimeError(message));
  });
});

describe('fileFix: what to do about a failed file system call', () => {
  it.each<[Error | string, string | null]>([
    [failed('EACCES', '/h/locks'), 'check the path and its permissions (the data home is ARGO_HOME or --home)'],
    [failed('EROFS'), 'use a folder on a writable one (the data home is ARGO_HOME or --home)'],
    [failed('ENOSPC'), 'free some space on its disk (df -h shows which) and try again'],
    [failed('ECONNRESET', '/x'), null],
    ['boom', null],
  ])('%s → %j', (error, fix) => {
    expect(fileFix(error)).toBe(fix);
  });
});
