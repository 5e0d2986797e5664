import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SymlinkRefusedError } from '../../src/log/fs.js';
import { NotRegularFileError, appendPrivate, fileKind, createFileExclusive, dropLastByte, ensureHomeFolder, errnoOf, ensurePrivateDir, holdsExactly, holdsFolder, isMissing, landsInside, openDataFile, openForAppend, openLogFile, openRegularSync, readDataFile, readDataText, readRegularText, readSmallText, readableByOthers, removeEmptyFolder, removeFile, removeOrphanedTemporaries, replaceFile, temporaryName, writeFileAtomic } from '../../src/log/fs.js';

describe('readSmallText', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-small-'));
  it.each([
    ['empty', ''],
    ['a record', '{\n  "name": "work"\n}\n'],
    ['non-ASCII text', 'héron — 鷺 🐦\n'],
    ['one byte under one read', 'x'.repeat(16 * 1024 - 1)],
    ['exactly one read', 'x'.repeat(16 * 1024)],
    ['longer than one read, a character across the boundary', `${'x'.repeat(16 * 1024 - 1)}é${'y'.repeat(40_000)}`],
  ])('%s: the whole text, as readFile gives it', (_case, text) => {
    const path = join(dir, `${text.length}.txt`);
    writeFileSync(path, text);
    expect(readSmallText(path)).toBe(text);
  });

  it('a missing file is the same error readFile gives', () => {
    let error: unknown;
    try {
      readSmallText(join(dir, 'none.json'));
    } catch (thrown) {
      error = thrown;
    }
    expect(isMissing(error)).toBe(true);
  });
});

describe('readRegularText and readDataText: a regular file\'s text, never a wait on a named pipe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-regular-text-'));
  writeFileSync(join(dir, 'real.json'), '{}');
  symlinkSync(join(dir, 'real.json'), join(dir, 'link.json'));
  mkdirSync(join(dir, 'folder.json'));
  execFileSync('mkfifo', [join(dir, 'pipe.json')]);
  symlinkSync(join(dir, 'pipe.json'), join(dir, 'link-to-pipe.json'));
  symlinkSync('/dev/null', join(dir, 'device.json'));
  const refused = (name: string): string => `${join(dir, name)} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`;
  const kind = (name: string, what: string): string => `${join(dir, name)} is not a file (${what}); move it out of the way`;
  const outcome = (read: () => string): string => {
    try {
      return read();
    } catch (error) {
      if (error instanceof NotRegularFileError) return `${error.message} [${error.kind}]`;
      return errnoOf(error) ?? (error as Error).message;
    }
  };

  // [case, name, readRegularText, with followLink, readDataText]: the text, an errno or the message.
  it.each<[string, string, string, string, string]>([
    ['a regular file', 'real.json', '{}', '{}', '{}'],
    ['a link to one', 'link.json', refused('link.json'), '{}', refused('link.json')],
    ['a named pipe', 'pipe.json', `${kind('pipe.json', 'a named pipe')} [a named pipe]`, `${kind('pipe.json', 'a named pipe')} [a named pipe]`, `${kind('pipe.json', 'a named pipe')} [a named pipe]`],
    ['a link to a named pipe', 'link-to-pipe.json', refused('link-to-pipe.json'), `${kind('link-to-pipe.json', 'a named pipe')} [a named pipe]`, refused('link-to-pipe.json')],
    ['a link to a device', 'device.json', refused('device.json'), `${kind('device.json', 'a device')} [a device]`, refused('device.json')],
    ['a folder', 'folder.json', `${kind('folder.json', 'a folder')} [a folder]`, `${kind('folder.json', 'a folder')} [a folder]`, `${kind('folder.json', 'a folder')} [a folder]`],
    ['nothing', 'none.json', 'ENOENT', 'ENOENT', 'ENOENT'],
  ])('%s', (_case, name, plain, followed, data) => {
    const path = join(dir, name);
    expect([outcome(() => readRegularText(path)), outcome(() => readRegularText(path, { followLink: true })), outcome(() => readDataText(path))]).toEqual([plain, followed, data]);
  });
});

describe('readDataFile: any size, never through a link', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-data-file-'));
  writeFileSync(join(dir, 'real.idx'), 'line\n'.repeat(20_000));
  symlinkSync(join(dir, 'real.idx'), join(dir, 'link.idx'));
  symlinkSync(join(dir, 'gone.idx'), join(dir, 'dangling.idx'));
  mkdirSync(join(dir, 'folder.json'));
  execFileSync('mkfifo', [join(dir, 'pipe.json')]);

  it.each([
    ['a regular file', 'real.idx', 'reads', 'line\n'.repeat(20_000)],
    ['a folder', 'folder.json', 'not a file', `${join(dir, 'folder.json')} is not a file (a folder); move it out of the way`],
    // Never waited on: a named pipe nobody writes to would hang the reader (a server) for good.
    ['a named pipe', 'pipe.json', 'not a file', `${join(dir, 'pipe.json')} is not a file (a named pipe); move it out of the way`],
    ['a link to one', 'link.idx', 'refused', `${join(dir, 'link.idx')} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`],
    ['a dangling link', 'dangling.idx', 'refused', `${join(dir, 'dangling.idx')} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`],
    ['nothing', 'none.idx', 'missing', ''],
  ])('%s: %s', async (_case, name, verdict, expected) => {
    const read = readDataFile(join(dir, name));
    if (verdict === 'reads') {
      expect((await read).toString('utf8')).toBe(expected);
      return;
    }
    const error: unknown = await read.catch((thrown: unknown) => thrown);
    if (verdict === 'missing') {
      expect(isMissing(error)).toBe(true);
      return;
    }
    if (verdict === 'refused') expect(error).toBeInstanceOf(SymlinkRefusedError);
    expect((error as Error).message).toBe(expected);
  });
});

describe('openRegularSync and openDataFile: a regular file, never a wait on a named pipe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-regular-'));
  writeFileSync(join(dir, 'real.idx'), 'line\n');
  symlinkSync(join(dir, 'real.idx'), join(dir, 'link.idx'));
  symlinkSync(join(dir, 'gone.idx'), join(dir, 'dangling.idx'));
  mkdirSync(join(dir, 'folder.idx'));
  execFileSync('mkfifo', [join(dir, 'pipe.idx')]);
  symlinkSync(join(dir, 'pipe.idx'), join(dir, 'link-to-pipe.idx'));
  const refused = (name: string): string => `${join(dir, name)} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`;

  // [case, name, openRegularSync, with followLink, openDataFile]: the text read, null, or the error's message.
  it.each<[string, string, string | null, string | null, string | null]>([
    ['a regular file', 'real.idx', 'line\n', 'line\n', 'line\n'],
    ['a link to one', 'link.idx', null, 'line\n', refused('link.idx')],
    ['a dangling link', 'dangling.idx', null, null, refused('dangling.idx')],
    ['nothing', 'none.idx', null, null, null],
    ['a folder', 'folder.idx', null, null, null],
    ['a named pipe', 'pipe.idx', null, null, null],
    ['a link to a named pipe', 'link-to-pipe.idx', null, null, refused('link-to-pipe.idx')],
  ])('%s', async (_case, name, regular, followed, data) => {
    const readSync = (followLink: boolean): string | null => {
      const file = openRegularSync(join(dir, name), { followLink });
      if (file === null) return null;
      try {
        return readFileSync(file.fd, 'utf8');
      } finally {
        closeSync(file.fd);
      }
    };
    expect(readSync(false)).toBe(regular);
    expect(readSync(true)).toBe(followed);
    const opened = await openDataFile(join(dir, name)).catch((error: unknown) => (error as Error).message);
    if (typeof opened === 'string' || opened === null) {
      expect(opened).toBe(data);
      return;
    }
    try {
      expect(await opened.readFile('utf8')).toBe(data);
    } finally {
      await opened.close();
    }
  });
});

describe('openLogFile: a day of the log as a reader opens it, through a link, never waiting on a named pipe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-log-open-'));
  writeFileSync(join(dir, 'real.log'), 'line\n');
  symlinkSync(join(dir, 'real.log'), join(dir, 'link.log'));
  mkdirSync(join(dir, 'folder.log'));
  execFileSync('mkfifo', [join(dir, 'pipe.log')]);
  symlinkSync(join(dir, 'pipe.log'), join(dir, 'link-to-pipe.log'));

  // The text read, or the error's message (a pipe nobody writes to is refused, not waited on).
  it.each<[string, string, string]>([
    ['a regular file', 'real.log', 'line\n'],
    ['a link to one', 'link.log', 'line\n'],
    ['a folder', 'folder.log', `${join(dir, 'folder.log')} is not a file (a folder); move it out of the way`],
    ['a named pipe', 'pipe.log', `${join(dir, 'pipe.log')} is not a file (a named pipe); move it out of the way`],
    ['a link to a named pipe', 'link-to-pipe.log', `${join(dir, 'link-to-pipe.log')} is not a file (a named pipe); move it out of the way`],
  ])('%s', async (_case, name, expected) => {
    const opened = await openLogFile(join(dir, name)).catch((error: unknown) => error as Error);
    if (opened instanceof Error) {
      expect(opened).toBeInstanceOf(NotRegularFileError);
      expect(opened.message).toBe(expected);
      return;
    }
    try {
      expect(await opened.readFile('utf8')).toBe(expected);
    } finally {
      await opened.close();
    }
  });

  it('a missing file is the error open gives', async () => {
    expect(isMissing(await openLogFile(join(dir, 'none.log')).catch((error: unknown) => error))).toBe(true);
  });
});

describe('openForAppend and appendPrivate: a regular file, never a write into a named pipe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-append-'));
  const path = (name: string): string => join(dir, name);
  writeFileSync(path('real.log'), 'x\n');
  symlinkSync(path('real.log'), path('link.log'));
  mkdirSync(path('folder.log'));
  execFileSync('mkfifo', [path('pipe.log')]);
  symlinkSync(path('pipe.log'), path('link-to-pipe.log'));
  const socket = createServer();
  beforeAll(() => new Promise<void>((listening) => socket.listen(path('socket.log'), listening)));
  afterAll(() => new Promise<void>((closed) => socket.close(() => closed())));
  const refused = (name: string): string => `${path(name)} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`;
  const kind = (name: string, what: string): string => `${path(name)} is not a file (${what}); move it out of the way [${what}]`;
  const outcome = async (open: () => Promise<unknown>): Promise<unknown> => {
    try {
      return await open();
    } catch (error) {
      if (error instanceof NotRegularFileError) return `${error.message} [${error.kind}]`;
      return errnoOf(error) === 'ENOENT' ? 'ENOENT' : (error as Error).message;
    }
  };
  const sizeOf = async (name: string): Promise<unknown> =>
    outcome(async () => {
      const { handle, size } = await openForAppend(path(name));
      await handle.close();
      return size;
    });

  // [case, name, appendPrivate with create: false, then appendPrivate, then openForAppend's size]
  it.each<[string, string, unknown, unknown, unknown]>([
    ['a regular file', 'real.log', true, true, 'x\nline\nline\n'.length],
    ['nothing: made only when asked', 'new.log', false, true, 'line\n'.length],
    ['a link to a file', 'link.log', refused('link.log'), refused('link.log'), refused('link.log')],
    ['a folder', 'folder.log', kind('folder.log', 'a folder'), kind('folder.log', 'a folder'), kind('folder.log', 'a folder')],
    // Opened without waiting and refused by its stats: a line written there would be lost, and one
    // longer than the pipe's buffer would hold the writer (and the log lock) for good.
    ['a named pipe', 'pipe.log', kind('pipe.log', 'a named pipe'), kind('pipe.log', 'a named pipe'), kind('pipe.log', 'a named pipe')],
    ['a link to a named pipe', 'link-to-pipe.log', refused('link-to-pipe.log'), refused('link-to-pipe.log'), refused('link-to-pipe.log')],
    ['a socket', 'socket.log', kind('socket.log', 'a socket'), kind('socket.log', 'a socket'), kind('socket.log', 'a socket')],
  ])('%s', async (_case, name, appendedIfThere, appended, size) => {
    expect(await outcome(() => appendPrivate(path(name), 'line\n', { create: false }))).toBe(appendedIfThere);
    expect(await outcome(() => appendPrivate(path(name), 'line\n'))).toBe(appended);
    expect(await sizeOf(name)).toBe(size);
  });

  it('nothing is written anywhere but the regular file', () => {
    expect(readFileSync(path('real.log'), 'utf8')).toBe('x\nline\nline\n');
    expect(readdirSync(path('folder.log'))).toEqual([]);
    expect(lstatSync(path('pipe.log')).isFIFO()).toBe(true);
  });
});

describe('private folders and files', () => {
  const mode = (path: string): number => statSync(path).mode & 0o777;

  it.each([
    [0o600, null],
    [0o400, null],
    [0o700, null],
    [0o640, 0o640],
    [0o604, 0o604],
    [0o644, 0o644],
    [0o622, null],
  ])('a file of mode %o is readable by others: %o', (fileMode, expected) => {
    const path = join(mkdtempSync(join(tmpdir(), 'argo-readable-')), 'config.json');
    writeFileSync(path, '{}');
    chmodSync(path, fileMode);
    return expect(readableByOthers(path)).resolves.toBe(expected);
  });

  it('a missing file is readable by nobody', async () => {
    expect(await readableByOthers(join(tmpdir(), 'argo-no-such-file', 'config.json'))).toBeNull();
  });

  it('a data folder left open to others is closed; one made anew is private; a link to a folder of ours is followed', async () => {
    const base = mkdtempSync(join(tmpdir(), 'argo-private-'));
    const open = join(base, 'open');
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    await ensurePrivateDir(open);
    expect(mode(open)).toBe(0o700);
    await ensurePrivateDir(join(base, 'new', 'deep'));
    expect([mode(join(base, 'new')), mode(join(base, 'new', 'deep'))]).toEqual([0o700, 0o700]);
    const elsewhere = join(base, 'bigger-disk');
    mkdirSync(elsewhere, { mode: 0o755 });
    symlinkSync(elsewhere, join(base, 'logs'));
    await appendPrivate(join(base, 'logs', 'day.log'), 'a line\n');
    expect([mode(elsewhere), mode(join(elsewhere, 'day.log'))]).toEqual([0o700, 0o600]);
  });

  // Only the group's and others' bits go: a folder the user made read-only stays read-only.
  it.each([
    [0o777, 0o700],
    [0o755, 0o700],
    [0o750, 0o700],
    [0o705, 0o700],
    [0o555, 0o500],
    [0o575, 0o500],
    [0o511, 0o500],
    [0o700, 0o700],
    [0o500, 0o500],
    [0o300, 0o300],
  ].map(([before = 0, after = 0]) => [before.toString(8), after.toString(8), before, after] as const))('ensurePrivateDir and ensureHomeFolder: a folder of mode %s is left %s', async (_before, _after, before, after) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-private-'));
    for (const name of ['logs', 'tool-results']) {
      mkdirSync(join(home, name));
      chmodSync(join(home, name), before);
    }
    await ensurePrivateDir(join(home, 'logs'));
    await ensureHomeFolder(home, 'tool-results');
    expect([mode(join(home, 'logs')), mode(join(home, 'tool-results'))]).toEqual([after, after]);
  });

  it.each([
    [0o666, 0o600],
    [0o644, 0o600],
    [0o604, 0o600],
    [0o444, 0o400],
    [0o600, 0o600],
    [0o400, 0o400],
    // Only root may open a file without the owner's write bit for appending.
  ]
    .filter(([before = 0]) => (before & 0o200) !== 0 || process.getuid?.() === 0)
    .map(([before = 0, after = 0]) => [before.toString(8), after.toString(8), before, after] as const))('a data file of mode %s is made %s when it is next appended to', async (_before, _after, before, after) => {
    const base = mkdtempSync(join(tmpdir(), 'argo-private-'));
    const [opened, appended] = [join(base, 'opened.log'), join(base, 'appended.log')];
    for (const file of [opened, appended]) {
      writeFileSync(file, 'x\n');
      chmodSync(file, before);
    }
    const { handle } = await openForAppend(opened);
    await handle.close();
    await appendPrivate(appended, 'y\n');
    expect([mode(opened), mode(appended)]).toEqual([after, after]);
  });

  it('a folder that cannot be made although its parent exists is an error, not a hang (Node\'s recursive mkdir spins under /proc)', async () => {
    await expect(ensurePrivateDir('/proc/1/argo-home/logs')).rejects.toThrow();
  });

  it('a file where the folder should be is named as such', async () => {
    const base = mkdtempSync(join(tmpdir(), 'argo-private-'));
    writeFileSync(join(base, 'home'), '');
    await expect(ensurePrivateDir(join(base, 'home'))).rejects.toThrow(/home is not a folder; Argo keeps its data in folders \(set ARGO_HOME or --home to one\)$/);
  });

  // The data home may be a shared or project folder: a file written straight in it leaves it as it is.
  it.each([
    ['writeFileAtomic in the home', (file: string) => writeFileAtomic(file, 'x', { inHome: true }), 0o755, 0o755],
    ['createFileExclusive in the home', (file: string) => createFileExclusive(file, 'x', { inHome: true }), 0o755, 0o755],
    ['writeFileAtomic in the home, one open to all', (file: string) => writeFileAtomic(file, 'x', { inHome: true }), 0o777, 0o777],
    ['writeFileAtomic in a data folder', (file: string) => writeFileAtomic(file, 'x'), 0o755, 0o700],
    ['createFileExclusive in a data folder', (file: string) => createFileExclusive(file, 'x'), 0o755, 0o700],
  ])('%s: a folder of mode %o is left %o; the file is 0600', async (_case, write, before, after) => {
    const folder = join(mkdtempSync(join(tmpdir(), 'argo-home-')), 'home');
    mkdirSync(folder);
    chmodSync(folder, before);
    await write(join(folder, 'memo.json'));
    expect([mode(folder), mode(join(folder, 'memo.json'))]).toEqual([after, 0o600]);
  });

  it('a missing home is made private by a write straight in it', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'argo-home-')), 'new', 'home');
    await writeFileAtomic(join(folder, 'chat_history'), 'x', { inHome: true });
    expect([mode(join(folder, '..')), mode(folder), mode(join(folder, 'chat_history'))]).toEqual([0o700, 0o700, 0o600]);
  });

  it('a data file left readable by others is made private when it is next appended to', async () => {
    const base = mkdtempSync(join(tmpdir(), 'argo-private-'));
    const file = join(base, 'old.log');
    writeFileSync(file, 'x\n', { mode: 0o666 });
    chmodSync(file, 0o666);
    const { handle, size } = await openForAppend(file);
    await handle.close();
    expect([mode(file), size]).toEqual([0o600, 2]);
  });
});

describe('fileKind: what an entry is, said after "is"', () => {
  const kinds = ['isFile', 'isDirectory', 'isFIFO', 'isSocket', 'isCharacterDevice', 'isBlockDevice', 'isSymbolicLink'] as const;
  const statsOf = (kind: (typeof kinds)[number] | null) => Object.fromEntries(kinds.map((name) => [name, () => name === kind])) as Record<(typeof kinds)[number], () => boolean>;
  it.each<[(typeof kinds)[number] | null, string]>([
    ['isFile', 'a regular file'],
    ['isDirectory', 'a folder'],
    ['isFIFO', 'a named pipe'],
    ['isSocket', 'a socket'],
    ['isCharacterDevice', 'a device'],
    ['isBlockDevice', 'a device'],
    ['isSymbolicLink', 'a symbolic link'],
    // None of them (a kind this system adds): still a kind, never "not a regular file", which reads
    // as nonsense after "is" ("STOP is not a regular file, not a file").
    [null, 'an unknown kind of entry'],
  ])('%s: %s', (kind, said) => {
    expect(fileKind(statsOf(kind))).toBe(said);
  });
});

describe('holdsExactly: a rewrite would change nothing', () => {
  // Each row makes `x` in an empty folder; the data asked about is always "same text\n".
  it.each<[string, (path: string) => void, boolean]>([
    ['a private file with those bytes', (path) => writeFileSync(path, 'same text\n', { mode: 0o600 }), true],
    ['stricter than private', (path) => writeFileSync(path, 'same text\n', { mode: 0o400 }), true],
    ['other bytes of the same length', (path) => writeFileSync(path, 'SAME TEXT\n', { mode: 0o600 }), false],
    ['a longer file', (path) => writeFileSync(path, 'same text\nand more\n', { mode: 0o600 }), false],
    ['the bytes, readable by others', (path) => {
      writeFileSync(path, 'same text\n');
      chmodSync(path, 0o644);
    }, false],
    ['no file', () => undefined, false],
    ['a link to a file with the bytes', (path) => {
      writeFileSync(`${path}-target`, 'same text\n', { mode: 0o600 });
      symlinkSync(`${path}-target`, path);
    }, false],
    ['a folder', (path) => mkdirSync(path), false],
    ['a named pipe, not waited on for a writer', (path) => execFileSync('mkfifo', [path]), false],
  ])('%s → %s', (_name, make, expected) => {
    const path = join(mkdtempSync(join(tmpdir(), 'argo-holds-')), 'x');
    make(path);
    expect(holdsExactly(path, Buffer.from('same text\n'))).toBe(expected);
  });
});

describe('landsInside', () => {
  const base = mkdtempSync(join(tmpdir(), 'argo-lands-'));
  const home = join(base, 'home');
  mkdirSync(join(home, 'logs'), { recursive: true });
  writeFileSync(join(home, 'logs', '2026-11-26.log'), '');
  symlinkSync(join(home, 'logs'), join(base, 'to-logs'));
  symlinkSync(join(home, 'logs', '2026-11-26.log'), join(base, 'to-day.jsonl'));
  mkdirSync(join(base, 'out'));
  // Links to what does not exist yet: a write through one creates its target.
  symlinkSync(join(home, 'memo.json'), join(base, 'to-new-memo.jsonl'));
  symlinkSync('to-new-memo.jsonl', join(base, 'to-link-to-new.jsonl'));
  symlinkSync(join(base, 'out', 'new.jsonl'), join(base, 'to-new-outside.jsonl'));
  symlinkSync(join(base, 'loop-b'), join(base, 'loop-a'));
  symlinkSync(join(base, 'loop-a'), join(base, 'loop-b'));

  it.each([
    ['a link to a file not made yet in the home', join(base, 'to-new-memo.jsonl'), true],
    ['a link to such a link', join(base, 'to-link-to-new.jsonl'), true],
    ['a link to a file not made yet elsewhere', join(base, 'to-new-outside.jsonl'), false],
    ['a loop of links', join(base, 'loop-a'), false],
    ['a day of the log', join(home, 'logs', '2026-11-26.log'), true],
    ['a new file in the home', join(home, 'export.jsonl'), true],
    ['a file in a missing folder of the home', join(home, 'new', 'deeper', 'x.jsonl'), true],
    ['the home itself', home, true],
    ['through a link to a folder of the home', join(base, 'to-logs', 'x.jsonl'), true],
    ['a link to a data file', join(base, 'to-day.jsonl'), true],
    ['a path that climbs back in', join(base, 'out', '..', 'home', 'logs', 'x'), true],
    ['a sibling folder', join(base, 'out', 'x.jsonl'), false],
    ['a name that only starts like the home', `${home}-copy.jsonl`, false],
    ['a missing folder elsewhere', join(base, 'missing', 'x.jsonl'), false],
  ])('%s → %s', async (_, path, inside) => {
    expect(await landsInside(path, home)).toBe(inside);
  });
});

describe('dropLastByte: a file cut short by one byte, never through a link nor waiting on a pipe', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-drop-'));
  it.each<[string, string | null, boolean, string | null]>([
    ['an index', '{"id":"a"}\n', true, '{"id":"a"}'],
    ['one byte', '\n', true, ''],
    ['empty: nothing to cut', '', false, ''],
    ['missing', null, false, null],
  ])('%s', async (name, before, dropped, after) => {
    const path = join(dir, `${name}.idx`);
    if (before !== null) writeFileSync(path, before);
    expect(await dropLastByte(path)).toBe(dropped);
    expect(before === null ? null : readFileSync(path, 'utf8')).toBe(after);
  });

  it('a link, a folder and a named pipe are left as they are', async () => {
    const target = join(dir, 'target');
    writeFileSync(target, 'kept\n');
    symlinkSync(target, join(dir, 'link.idx'));
    mkdirSync(join(dir, 'folder.idx'));
    execFileSync('mkfifo', [join(dir, 'pipe.idx')]);
    for (const name of ['link.idx', 'folder.idx', 'pipe.idx']) expect(await dropLastByte(join(dir, name))).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('kept\n');
  });
});

describe('removeFile', () => {
  it('removes a file, is fine with one already gone, removes a link and not what it points to, refuses a folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-remove-'));
    writeFileSync(join(dir, 'file'), 'x');
    writeFileSync(join(dir, 'target'), 'kept');
    symlinkSync(join(dir, 'target'), join(dir, 'link'));
    mkdirSync(join(dir, 'folder'));
    await removeFile(join(dir, 'file'));
    await removeFile(join(dir, 'file'));
    await removeFile(join(dir, 'link'));
    await expect(removeFile(join(dir, 'folder'))).rejects.toThrow(/EISDIR|EPERM/);
    expect(readdirSync(dir).sort()).toEqual(['folder', 'target']);
  });
});

describe('holdsFolder and removeEmptyFolder: a folder, never through a link', () => {
  const make: Record<string, (path: string, dir: string) => void> = {
    'an empty folder': (path) => mkdirSync(path),
    'a folder with a file in it': (path) => {
      mkdirSync(path);
      writeFileSync(join(path, 'notes.txt'), 'mine');
    },
    'a file': (path) => writeFileSync(path, 'x'),
    'a link to an empty folder': (path, dir) => {
      mkdirSync(join(dir, 'target'));
      symlinkSync(join(dir, 'target'), path);
    },
    'nothing': () => undefined,
  };
  it.each<[string, boolean, 'removed' | 'holds-files' | 'left', boolean]>([
    ['an empty folder', true, 'removed', false],
    ['a folder with a file in it', true, 'holds-files', true],
    ['a file', false, 'left', true],
    ['a link to an empty folder', false, 'left', true],
    ['nothing', false, 'left', false],
  ])('%s: a folder %s; removeEmptyFolder says %s; still there %s', async (what, folder, said, there) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-folder-'));
    const path = join(dir, 'work.idx');
    make[what]?.(path, dir);
    expect(await holdsFolder(path)).toBe(folder);
    expect(await removeEmptyFolder(path)).toBe(said);
    expect(readdirSync(dir).includes('work.idx')).toBe(there);
  });
});

describe('temporaryName: a name beside any file, within the 255 bytes a name may have', () => {
  const bytes = (text: string): number => Buffer.byteLength(text);
  it.each<[string, string, string]>([
    ['a short name whole', 'runs.jsonl', '.runs.jsonl.4242-0a1b2c3d.tmp'],
    // The suffix (pid 4242) takes 18 bytes and the dot 1: 236 are left for the name.
    ['236 bytes: whole, 255 in all', 'a'.repeat(236), `.${'a'.repeat(236)}.4242-0a1b2c3d.tmp`],
    ['237 bytes: its start', 'a'.repeat(237), `.${'a'.repeat(236)}.4242-0a1b2c3d.tmp`],
    ['255 bytes: its start', 'b'.repeat(255), `.${'b'.repeat(236)}.4242-0a1b2c3d.tmp`],
    // 1 + 117 × 2 = 235 bytes fit; the 118th "é" would split.
    ['never within a character', `x${'é'.repeat(127)}`, `.x${'é'.repeat(117)}.4242-0a1b2c3d.tmp`],
    ['never within a surrogate pair', `${'a'.repeat(234)}😀z`, `.${'a'.repeat(234)}.4242-0a1b2c3d.tmp`],
  ])('%s', (_case, name, expected) => {
    const made = temporaryName(name, 4242, '0a1b2c3d');
    expect(made).toBe(expected);
    expect(bytes(made)).toBeLessThanOrEqual(255);
  });

  it('a 245-byte file can be replaced: the temporary file beside it is made, and its writer found by its name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-long-'));
    const target = join(dir, `${'a'.repeat(239)}.jsonl`);
    await writeFileAtomic(target, 'first\n');
    await writeFileAtomic(target, 'second\n');
    expect(readFileSync(target, 'utf8')).toBe('second\n');
    expect(readdirSync(dir)).toHaveLength(1);
    const orphan = temporaryName(`${'a'.repeat(239)}.jsonl`, 5000000);
    writeFileSync(join(dir, orphan), 'x');
    expect(await removeOrphanedTemporaries(dir)).toBe(1);
  });
});

describe('removeOrphanedTemporaries', () => {
  it('removes the copies of writers that are gone, keeps those of live ones and anything else', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-orphans-'));
    // A pid that cannot be running: above the kernel's pid_max (4194304 at most).
    const gone = '.2026-11-26.log.5000000-0a1b2c3d.tmp';
    const mine = `.2026-11-26.log.${process.pid}-0a1b2c3d.tmp`;
    const live = `.work.idx.${process.ppid}-deadbeef.tmp`;
    const other = ['2026-11-26.log', '.2026-11-26.log.5000000-xyz.tmp', 'notes.tmp'];
    for (const name of [gone, mine, live, ...other]) writeFileSync(join(dir, name), 'x');
    expect(await removeOrphanedTemporaries(dir)).toBe(1);
    expect(readdirSync(dir).sort()).toEqual([mine, live, ...other].sort());
    expect(await removeOrphanedTemporaries(join(dir, 'missing'))).toBe(0);
  });
});

describe('ensureHomeFolder', () => {
  it.each<[string, (home: string) => void, RegExp | null]>([
    ['made anew, private at every level', () => undefined, null],
    ['a link at the first level is refused', (home) => symlinkSync(mkdtempSync(join(tmpdir(), 'argo-out-')), join(home, 'tool-results')), /tool-results is a symbolic link; Argo does not follow links in its data home/],
    [
      'a link deeper down is refused',
      (home) => {
        mkdirSync(join(home, 'tool-results'));
        symlinkSync(mkdtempSync(join(tmpdir(), 'argo-out-')), join(home, 'tool-results', 'S'));
      },
      /tool-results\/S is a symbolic link/,
    ],
    ['a file where a folder should be', (home) => writeFileSync(join(home, 'tool-results'), ''), /tool-results is not a folder; remove it/],
    ['a dangling link is refused, never made through', (home) => symlinkSync(join(home, 'nowhere'), join(home, 'tool-results')), /tool-results is a symbolic link/],
    ['a folder left open to others is closed', (home) => mkdirSync(join(home, 'tool-results'), { mode: 0o777 }), null],
    ['a home the user opened to others stays as it is', (home) => chmodSync(home, 0o755), null],
  ])('%s', async (_name, arrange, refused) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-home-folder-'));
    arrange(home);
    const made = ensureHomeFolder(home, 'tool-results/S/T');
    if (refused) {
      await expect(made).rejects.toThrow(refused);
      return;
    }
    expect(await made).toBe(join(home, 'tool-results', 'S', 'T'));
    for (const path of ['tool-results', 'tool-results/S', 'tool-results/S/T']) expect(lstatSync(join(home, path)).mode & 0o777).toBe(0o700);
    expect(lstatSync(home).mode & 0o777).toBe(_name.startsWith('a home the user opened') ? 0o755 : 0o700);
  });
});

describe('a failed write names the file asked for', () => {
  // Node names no path for a write on an open file; a message without it cannot say which disk is full.
  const withoutPath = (code: string): Error => Object.assign(new Error(`${code}: no space left on device, write`), { code });

  it.each(['ENOSPC', 'EDQUOT', 'EIO'])('replaceFile: %s while writing is said of the target, and no temporary file is left', async (code) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-said-'));
    const target = join(dir, 'memo.json');
    await expect(replaceFile(target, () => Promise.reject(withoutPath(code)))).rejects.toMatchObject({ code, path: target });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('replaceFile: a failure at the rename is said of the target too, and leaves nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-said-'));
    // Past the 255 bytes a name may have: the temporary file (a cut name) is made, the rename fails.
    const target = join(dir, 'x'.repeat(300));
    await expect(writeFileAtomic(target, '{}')).rejects.toMatchObject({ code: 'ENAMETOOLONG', path: target });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('an error that names its own file keeps it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-said-'));
    const elsewhere = Object.assign(withoutPath('EACCES'), { path: '/somewhere/else' });
    await expect(replaceFile(join(dir, 'a.json'), () => Promise.reject(elsewhere))).rejects.toMatchObject({ path: '/somewhere/else' });
  });
});
