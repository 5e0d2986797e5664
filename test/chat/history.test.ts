import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HISTORY_SIZE, HistorySaver, mergeHistory, recallableHistory } from '../../src/chat/history.js';
import { thrown } from '../support/thrown.js';

const historyFile = (): string => join(mkdtempSync(join(tmpdir(), 'argo-history-')), 'chat_history');

describe('mergeHistory: the lines on disk, then the lines this chat added', () => {
  it.each<[string, string[], string[], number, string[]]>([
    ['nothing on disk', [], ['a', 'b'], 10, ['a', 'b']],
    ["another chat's lines are kept, ours after them", ['x', 'y'], ['a'], 10, ['x', 'y', 'a']],
    ['a line typed again moves to the end', ['a', 'x'], ['a'], 10, ['x', 'a']],
    ['a line typed twice in one write is kept where typed last', ['x'], ['a', 'b', 'a'], 10, ['x', 'b', 'a']],
    ['the newest lines within the size', ['x', 'y', 'z'], ['a', 'b'], 3, ['z', 'a', 'b']],
    ['lines on disk twice (written by hand) stay as they are', ['x', 'x', 'y'], ['a'], 10, ['x', 'x', 'y', 'a']],
    ['nothing added', ['x'], [], 10, ['x']],
  ])('%s', (_case, kept, added, size, merged) => {
    expect(mergeHistory(kept, added, size)).toEqual(merged);
  });
});

describe('recallableHistory: what the up arrow brings back', () => {
  it.each<[string, string, string[]]>([
    ['newest first', 'one\ntwo\n', ['two', 'one']],
    ['blank lines skipped, CRLF line ends taken', 'one\r\n\r\ntwo\r\n', ['two', 'one']],
    // Drawn on the terminal when recalled: an OSC sequence there would retitle the window.
    ['control characters shown, not obeyed', 'title \u001b]0;pwned\u0007 end\ncsi \u009b2J\nbidi \u202eevil\ttab\n', ['bidi \\u202eevil\ttab', 'csi \\x9b2J', 'title ^[]0;pwned^G end']],
  ])('%s', (_case, text, lines) => {
    const file = historyFile();
    writeFileSync(file, text);
    expect(recallableHistory(file)).toEqual(lines);
  });

  it('none yet: nothing to recall', () => {
    expect(recallableHistory(historyFile())).toEqual([]);
  });

  it(`only the newest ${HISTORY_SIZE} lines`, () => {
    const file = historyFile();
    writeFileSync(file, Array.from({ length: HISTORY_SIZE + 5 }, (_, i) => `line ${i}\n`).join(''));
    const lines = recallableHistory(file);
    expect(lines).toHaveLength(HISTORY_SIZE);
    expect([lines[0], lines.at(-1)]).toEqual([`line ${HISTORY_SIZE + 4}`, 'line 5']);
  });

  it.each<[string, (file: string) => void, (file: string) => string]>([
    ['a folder', (file) => mkdirSync(file), (file) => `${file} is not a file (a folder); move it out of the way`],
    ['a named pipe (never waited on)', (file) => execFileSync('mkfifo', [file]), (file) => `${file} is not a file (a named pipe); move it out of the way`],
    ['a link', (file) => symlinkSync(join(tmpdir(), 'elsewhere'), file), (file) => `${file} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`],
  ])('%s there is refused with one line saying what it is', (_case, make, message) => {
    const file = historyFile();
    make(file);
    expect(thrown(() => recallableHistory(file))).toMatchObject({ message: message(file) });
  });
});

describe('HistorySaver', () => {
  const saverOn = (file: string): { saver: HistorySaver; said: () => string } => {
    const stderr = new PassThrough();
    let said = '';
    stderr.setEncoding('utf8').on('data', (chunk: string) => (said += chunk));
    return { saver: new HistorySaver(file, stderr), said: () => said };
  };

  it("two chats at once keep each other's lines, each line once, in the order typed", async () => {
    const file = historyFile();
    writeFileSync(file, 'older\n');
    const first = saverOn(file);
    const second = saverOn(file);
    first.saver.add('a1');
    await first.saver.flush();
    second.saver.add('b1');
    await second.saver.flush();
    first.saver.add('a2');
    second.saver.add('older');
    first.saver.add('/bye');
    second.saver.add('/bye');
    await Promise.all([first.saver.flush(), second.saver.flush()]);
    expect(readFileSync(file, 'utf8').split('\n').slice(0, 3)).toEqual(['a1', 'b1', 'a2']);
    expect(readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').sort()).toEqual(['/bye', 'a1', 'a2', 'b1', 'older']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(first.said() + second.said()).toBe('');
  });

  it(`keeps the newest ${HISTORY_SIZE} lines`, async () => {
    const file = historyFile();
    writeFileSync(file, Array.from({ length: HISTORY_SIZE }, (_, i) => `line ${i}\n`).join(''));
    const { saver } = saverOn(file);
    saver.add('new');
    await saver.flush();
    const lines = readFileSync(file, 'utf8').split('\n');
    expect(lines).toHaveLength(HISTORY_SIZE + 1);
    expect([lines[0], lines.at(-2)]).toEqual(['line 1', 'new']);
  });

  it('a history it cannot write is said once; its lines are written with the next line once it can', async () => {
    const file = historyFile();
    mkdirSync(file);
    const { saver, said } = saverOn(file);
    saver.add('one');
    saver.add('two');
    await saver.flush();
    expect(said()).toBe(`argo: cannot save the chat history to ${file} (${file} is not a file (a folder); move it out of the way); the chat goes on without it\n`);
    execFileSync('rmdir', [file]);
    saver.add('three');
    await saver.flush();
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\nthree\n');
  });

  it('never writes through a link', async () => {
    const file = historyFile();
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'argo-elsewhere-')), 'planted');
    writeFileSync(elsewhere, 'planted\n');
    symlinkSync(elsewhere, file);
    const { saver, said } = saverOn(file);
    saver.add('secret');
    await saver.flush();
    expect(said()).toContain('is a symbolic link; Argo does not follow links in its data home');
    expect(readFileSync(elsewhere, 'utf8')).toBe('planted\n');
  });
});
