// The log store under faults: a full disk mid-append, symlinks planted in the data home, rescue files,
// and the bounded wait for a lock held by maintenance.
import { appendFileSync, chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SymlinkRefusedError, discardTemporaryFiles, replaceFile, rescueText } from '../../src/log/fs.js';
import { LockTimeoutError, withLogLock } from '../../src/log/lock.js';
import { LogAppendError, appendEntries, appendEntry } from '../../src/log/writer.js';
import type { AppendWrite } from '../../src/log/writer.js';
import { appendIndex, indexLine } from '../../src/sessions/turn-index.js';
import { makeEntry, tempData } from '../query/helpers.js';

const ENOSPC = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** Writes the first half of the bytes, then fails as a full disk does. */
const halfThenFull: AppendWrite = async (handle, bytes) => {
  await handle.write(bytes.subarray(0, Math.floor(bytes.length / 2)));
  throw ENOSPC;
};

describe('appendEntry on a full disk (item 9)', () => {
  it('cuts a torn line back, says the disk is full, and the next append starts clean', async () => {
    const { paths } = tempData();
    await appendEntry(paths.logs, makeEntry({ id: 'first' }), '2025-01-02');
    const file = join(paths.logs, '2025-01-02.log');
    const before = readFileSync(file);

    const failing = appendEntry(paths.logs, makeEntry({ id: 'torn' }), '2025-01-02', { write: halfThenFull });
    await expect(failing).rejects.toBeInstanceOf(LogAppendError);
    await expect(failing).rejects.toThrow(`cannot append to ${file}: the disk is full`);
    expect(readFileSync(file)).toEqual(before);

    await appendEntry(paths.logs, makeEntry({ id: 'after' }), '2025-01-02');
    const ids = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { id: string }).id);
    expect(ids).toEqual(['first', 'after']);
  });

  it('a disk that fills mid-line takes part of the write, then says ENOSPC: the part is cut back and the message says the disk is full', async () => {
    // What Linux does on a file system with a few blocks left: write(2) returns a short count, the next one fails.
    const { paths } = tempData();
    const file = join(paths.logs, '2025-01-02.log');
    let calls = 0;
    const fillsUp: AppendWrite = async (handle, bytes) => {
      if (calls++ > 0) throw ENOSPC;
      return (await handle.write(bytes.subarray(0, 10))).bytesWritten;
    };
    await expect(appendEntry(paths.logs, makeEntry(), '2025-01-02', { write: fillsUp })).rejects.toThrow(`cannot append to ${file}: the disk is full`);
    expect(statSync(file).size).toBe(0);
  });

  it.each<[string, number[]]>([
    // name, bytes each write(2) takes, in order (the rest of the line each time)
    ['in two writes', [10, Number.POSITIVE_INFINITY]],
    ['a few bytes at a time', [1, 2, 3, 5, 8, Number.POSITIVE_INFINITY]],
  ])('a write cut short that the file system then completes (%s) appends the whole line', async (_name, takes) => {
    const { paths } = tempData();
    let call = 0;
    const piecewise: AppendWrite = async (handle, bytes) => (await handle.write(bytes.subarray(0, Math.min(bytes.length, takes[call++] ?? bytes.length)))).bytesWritten;
    const appended = await appendEntry(paths.logs, makeEntry({ id: 'whole' }), '2025-01-02', { write: piecewise });
    const text = readFileSync(join(paths.logs, '2025-01-02.log'), 'utf8');
    expect((JSON.parse(text) as { id: string }).id).toBe('whole');
    expect(text.length).toBe(appended.length + 1);
  });

  it('a write that takes nothing is cut back and named', async () => {
    const { paths } = tempData();
    const stuck: AppendWrite = () => Promise.resolve(0);
    await expect(appendEntry(paths.logs, makeEntry(), '2025-01-02', { write: stuck })).rejects.toThrow(/short write \(0 of \d+ bytes\)/);
    expect(statSync(join(paths.logs, '2025-01-02.log')).size).toBe(0);
  });
});

describe('appendEntries', () => {
  it('appends the lines in order in one write and says where each landed, after a last line cut short', async () => {
    const { paths } = tempData();
    const file = join(paths.logs, '2025-01-02.log');
    writeFileSync(file, '{"cut short');
    const appended = await appendEntries(paths.logs, [makeEntry({ id: 'a' }), makeEntry({ id: 'b', user_prompt: 'ünïcode' }), makeEntry({ id: 'c' })], '2025-01-02');
    const bytes = readFileSync(file);
    expect(appended.map((one) => one.file)).toEqual([file, file, file]);
    expect(appended.map((one) => (JSON.parse(bytes.subarray(one.offset, one.offset + one.length).toString('utf8')) as { id: string }).id)).toEqual(['a', 'b', 'c']);
    expect(bytes.toString('utf8').split('\n').slice(1, -1).map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(['a', 'b', 'c']);
  });

  it('on a full disk none of them is left in the file', async () => {
    const { paths } = tempData();
    await appendEntry(paths.logs, makeEntry({ id: 'first' }), '2025-01-02');
    const file = join(paths.logs, '2025-01-02.log');
    const before = readFileSync(file);
    await expect(appendEntries(paths.logs, [makeEntry({ id: 'x' }), makeEntry({ id: 'y' })], '2025-01-02', { write: halfThenFull })).rejects.toBeInstanceOf(LogAppendError);
    expect(readFileSync(file)).toEqual(before);
  });
});

describe('where a line landed when another process appends to the same day', () => {
  // The stand-in for the write appends another process's lines through a second descriptor around ours:
  // our line is then neither first nor necessarily last among the bytes appended since our stat.
  it.each<[string, string, string]>([
    // name, appended by the other process before our write, after it
    ['before ours', '{"id":"other-1"}\n', ''],
    ['after ours', '', '{"id":"other-2"}\n'],
    ['before and after ours', '{"id":"other-1"}\n', '{"id":"other-2"}\n{"id":"other-3"}\n'],
  ])('another process appends %s: the offset is that of our line', async (_name, foreignBefore, foreignAfter) => {
    const { paths } = tempData();
    await appendEntry(paths.logs, makeEntry({ id: 'first' }), '2025-01-02');
    const file = join(paths.logs, '2025-01-02.log');
    const interleaved: AppendWrite = async (handle, bytes) => {
      if (foreignBefore !== '') appendFileSync(file, foreignBefore);
      const { bytesWritten } = await handle.write(bytes);
      if (foreignAfter !== '') appendFileSync(file, foreignAfter);
      return bytesWritten;
    };
    const appended = await appendEntry(paths.logs, makeEntry({ id: 'ours' }), '2025-01-02', { write: interleaved });
    const bytes = readFileSync(file);
    const ours = readFileSync(file, 'utf8').split('\n').find((line) => line.includes('"id":"ours"'));
    expect(bytes.subarray(appended.offset, appended.offset + appended.length).toString('utf8')).toBe(ours);
    expect(bytes[appended.offset + appended.length]).toBe(0x0a);
  });
});

describe('symlinks in the data home are refused (item 2)', () => {
  it('a log file that is a link to a file elsewhere is not written through', async () => {
    const { paths } = tempData();
    const outside = join(tmpdir(), `argo-outside-${process.pid}-${Date.now()}`);
    writeFileSync(outside, 'precious\n', { mode: 0o644 });
    mkdirSync(paths.logs, { recursive: true });
    symlinkSync(outside, join(paths.logs, '2025-01-02.log'));
    const failing = appendEntry(paths.logs, makeEntry(), '2025-01-02');
    await expect(failing).rejects.toThrow(`${join(paths.logs, '2025-01-02.log')} is a symbolic link; Argo does not follow links in its data home`);
    expect(readFileSync(outside, 'utf8')).toBe('precious\n');
  });

  it('an index that is a link is not appended through', async () => {
    const { paths } = tempData();
    const outside = join(tmpdir(), `argo-outside-idx-${process.pid}-${Date.now()}`);
    writeFileSync(outside, '');
    mkdirSync(paths.sessions, { recursive: true });
    symlinkSync(outside, join(paths.sessions, 'work.idx'));
    await expect(appendIndex(paths.sessions, 'work', indexLine('t1', '2025-01-02.log', 0, 10, 'ok', 'question'))).rejects.toBeInstanceOf(SymlinkRefusedError);
    expect(readFileSync(outside, 'utf8')).toBe('');
  });
});

describe('rescueText (item 1)', () => {
  it('writes a new 0600 file in the data home’s private rescued/ folder', async () => {
    const { home } = tempData();
    const path = await rescueText(home, 'line\n');
    expect(path.startsWith(join(home, 'rescued', 'unlogged-'))).toBe(true);
    expect(readFileSync(path, 'utf8')).toBe('line\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'rescued')).mode & 0o777).toBe(0o700);
    const second = await rescueText(home, 'other\n');
    expect(second).not.toBe(path);
  });

  it.each([
    ['a folder open to all (0755)', 0o755],
    ['a folder open to its group (0750)', 0o750],
    ['a folder others may pass through (0711)', 0o711],
    ['a private folder (0700)', 0o700],
  ])('never writes through, nor chmods, a planted rescued/ link to %s: a fresh private temp folder takes it', async (_case, mode) => {
    const { home } = tempData();
    const trap = mkdtempSync(join(tmpdir(), 'argo-trap-'));
    chmodSync(trap, mode);
    mkdirSync(home, { recursive: true });
    symlinkSync(trap, join(home, 'rescued'));
    const path = await rescueText(home, 'secret\n');
    expect(readdirSync(trap)).toEqual([]);
    expect(statSync(trap).mode & 0o777).toBe(mode);
    expect(path.startsWith(join(tmpdir(), 'argo-rescued-'))).toBe(true);
    expect(lstatSync(join(path, '..')).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('never writes through a planted rescued/ link to a file, leaving the file as it was', async () => {
    const { home } = tempData();
    const trap = join(mkdtempSync(join(tmpdir(), 'argo-trap-')), 'file');
    writeFileSync(trap, 'mine\n', { mode: 0o644 });
    mkdirSync(home, { recursive: true });
    symlinkSync(trap, join(home, 'rescued'));
    const path = await rescueText(home, 'secret\n');
    expect(readFileSync(trap, 'utf8')).toBe('mine\n');
    expect(statSync(trap).mode & 0o777).toBe(0o644);
    expect(path.startsWith(join(tmpdir(), 'argo-rescued-'))).toBe(true);
  });

  it('falls back to a private temp folder when the data home cannot take it', async () => {
    const { home } = tempData();
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'rescued'), 'a file where the folder belongs');
    const path = await rescueText(home, 'x\n');
    expect(path.startsWith(join(tmpdir(), 'argo-rescued-'))).toBe(true);
    expect(existsSync(path)).toBe(true);
  });
});

describe('the log lock (item 7)', () => {
  it('an append waits for maintenance to finish, then lands', async () => {
    const { paths } = tempData();
    const events: string[] = [];
    let appending: Promise<unknown> = Promise.resolve();
    await withLogLock(paths.logs, async () => {
      appending = appendEntry(paths.logs, makeEntry({ id: 'waited' }), '2025-01-02').then(() => events.push('appended'));
      // The append is under way and must not finish while the lock is held.
      await new Promise((resolve) => setImmediate(resolve));
      events.push('maintenance done');
    });
    await appending;
    expect(events).toEqual(['maintenance done', 'appended']);
  });

  it('a lock held too long gives a clear error instead of waiting forever', async () => {
    const { paths } = tempData();
    await withLogLock(paths.logs, async () => {
      const failing = appendEntry(paths.logs, makeEntry(), '2025-01-02', { lockWaitMs: 50 });
      await expect(failing).rejects.toBeInstanceOf(LockTimeoutError);
      await expect(failing).rejects.toThrow(/^the log in .* has been locked by another argo process for more than 50ms \(a long "argo logs rm" or "prune"\?\); try again when it is done, or remove .*log\.lock if no argo process is running$/);
    });
  });
});

describe('temporary files on a signal (item 10)', () => {
  it('discardTemporaryFiles removes a replacement still being written; the original stays intact', async () => {
    const { paths } = tempData();
    const target = join(paths.logs, '2025-01-02.log');
    writeFileSync(target, 'original\n');
    let reachedWrite: () => void = () => undefined;
    const writing = new Promise<void>((resolve) => (reachedWrite = resolve));
    let finish: () => void = () => undefined;
    const replacing = replaceFile(target, async (handle) => {
      await handle.write('half of the new');
      reachedWrite();
      await new Promise<void>((resolve) => (finish = resolve));
    });
    await writing;
    const temporary = readdirSync(paths.logs).filter((name) => name.endsWith('.tmp'));
    expect(temporary).toHaveLength(1);
    discardTemporaryFiles(); // what the CLI does on Ctrl-C / SIGTERM before exiting
    expect(readdirSync(paths.logs).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(readFileSync(target, 'utf8')).toBe('original\n');
    finish();
    await replacing.catch(() => undefined);
  });
});
