// Tables and help at the width they are given: a real terminal's (resized or not), or COLUMNS.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import stringWidth from 'string-width';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeEntry, recordTurns, tempData } from '../query/helpers.js';
import type { Home } from '../query/helpers.js';
import { runInPtyToEnd, startInPty } from '../support/pty.js';
import { runArgo } from '../support/run-argo.js';

// No colour: the width of a line is the width of its text.
const ENV = { TZ: 'UTC', NO_COLOR: '1' };
const LONG_PROMPT = 'why does my closure capture the loop variable and not its value at each turn of the loop?';

const linesOf = (output: string): string[] => output.split(/\r?\n/).filter((line) => line !== '');
const widest = (lines: readonly string[]): number => Math.max(0, ...lines.map((line) => stringWidth(line)));
const wordsOf = (text: string): string[] => text.split(/\s+/).filter((word) => word !== '').sort();

let data: Home;
beforeAll(async () => {
  data = tempData();
  await recordTurns(data.paths, 'a-session-name-of-29-letters_', 3, { shape: () => ({ user_prompt: LONG_PROMPT }) });
  await recordTurns(data.paths, '日本語の会話', 2, { shape: (i) => ({ user_prompt: `中文问题 ${i} `.repeat(20) }) });
});

// Each run read to its end (runInPtyToEnd): node-pty may drop a program's last output when the
// program exits before its terminal was read (a loaded machine).
describe('tables on a terminal', () => {
  it.each<[string[], number]>([
    [['logs'], 40],
    [['logs'], 20],
    [['sessions'], 40],
    [['sessions'], 60],
  ])('argo %j at %d columns: no line is wider than the terminal', async (args, cols) => {
    const terminal = await runInPtyToEnd(args, { home: data.home, env: ENV, cols });
    expect(terminal.code).toBe(0);
    const lines = linesOf(terminal.output);
    expect(lines.length, terminal.output).toBeGreaterThan(1);
    expect(widest(lines), terminal.output).toBeLessThanOrEqual(cols);
  });

  it('argo logs at 40 columns: the id and the prompt, under a header that names them', async () => {
    const terminal = await runInPtyToEnd(['logs'], { home: data.home, env: ENV, cols: 40 });
    expect(terminal.code).toBe(0);
    const [header, first] = linesOf(terminal.output);
    expect(header).toBe('ID            PROMPT');
    expect(first).toMatch(/^\S{12} {2}why does my closure capt…$/);
  });

  it('a set COLUMNS wins over the terminal width', async () => {
    const terminal = await runInPtyToEnd(['logs'], { home: data.home, env: { ...ENV, COLUMNS: '60' }, cols: 120 });
    expect(terminal.code).toBe(0);
    const lines = linesOf(terminal.output);
    expect(widest(lines), terminal.output).toBe(59);
    expect(lines[0]).toBe('TIME         ID            SESSION     PROMPT');
  });

  it('argo logs --follow sizes the rows after a resize to the new width', async () => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'work', 2, { date: '2025-01-01', shape: () => ({ user_prompt: LONG_PROMPT }) });
    const terminal = startInPty(['logs', '--follow'], { home, env: ENV, cols: 120 });
    const append = async (id: string): Promise<string> => {
      const from = terminal.output.length;
      appendFileSync(join(paths.logs, '2025-01-01.log'), `${JSON.stringify(makeEntry({ id, user_prompt: LONG_PROMPT }))}\n`);
      await terminal.waitFor(new RegExp(`${id}.*\\r\\n`), from);
      return linesOf(terminal.output.slice(from)).find((line) => line.includes(id)) ?? '';
    };
    try {
      await terminal.waitFor(/why does my closure[\s\S]*why does my closure.*\r\n/);
      expect(stringWidth(await append('before-wide1'))).toBe(119);
      terminal.resize(40, 30);
      // The first row after the resize is printed once argo has seen the signal's news (or at
      // once before it, in principle): the one after it is surely sized by the new width.
      await append('after-resiz1');
      expect(await append('after-resiz2')).toBe('after-resiz2  why does my closure capt…');
    } finally {
      terminal.kill('SIGINT');
    }
    expect((await terminal.exited).code).toBe(0);
  });
});

describe.concurrent('COLUMNS off a terminal', () => {
  it('sizes a piped argo logs: no header, rows cut to COLUMNS', async () => {
    const result = await runArgo(['logs'], { home: data.home, env: { ...ENV, COLUMNS: '50' } });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = linesOf(result.stdout);
    expect(lines).toHaveLength(5);
    expect(widest(lines)).toBe(49);
    expect(lines[0]).toMatch(/^\d\d-\d\d \d\d:\d\d {2}\S{12} {2}why does my closure c…$/);
  });

  it('sizes a piped argo sessions: no header, as for argo logs', async () => {
    const result = await runArgo(['sessions'], { home: data.home, env: { ...ENV, COLUMNS: '40' } });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(widest(linesOf(result.stdout)), result.stdout).toBeLessThanOrEqual(40);
    // The one session with a name argo takes; the header is not drawn off a terminal.
    expect(linesOf(result.stdout)).toEqual(['a-session-name-o…  why does my closure…']);
  });

  it('without it, piped rows keep session names whole, however long, and draw no header', async () => {
    const logs = await runArgo(['logs', '-n', '1', '-s', 'a-session-name-of-29-letters_'], { home: data.home, env: ENV });
    expect(logs).toMatchObject({ code: 0, stderr: '' });
    expect(logs.stdout).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d {2}\S{12} {2}a-session-name-of-29-letters_ {2}question {5}- {9}why does my closure/);
    const sessions = await runArgo(['sessions'], { home: data.home, env: ENV });
    expect(linesOf(sessions.stdout).map((line) => line.split(' ')[0])).toEqual(['a-session-name-of-29-letters_']);
  });

  it('without it, or with a value that is not a width, piped rows keep every column and 80 columns of prompt', async () => {
    for (const COLUMNS of [undefined, 'wide', '0']) {
      const result = await runArgo(['logs', '-n', '1'], { home: data.home, env: { ...ENV, ...(COLUMNS === undefined ? {} : { COLUMNS }) } });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      // The fixture's lines name a session with no record: shown as removed, as every reader shows such turns.
      expect(result.stdout).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d {2}\S{12} {2}日本語の会話 \(removed\) {2}question {5}- {9}(中文问题 1 ){7}中…\n$/);
    }
  });
});

describe('--help on a narrow terminal', () => {
  it.each<[string[]]>([[['--help']], [['logs', '--help']], [['sessions', '--help']], [['serve', '--help']]])(
    'argo %j at 50 columns: no line is wider and every word is whole',
    async (args) => {
      const wide = await runArgo(args, { home: data.home, env: { ...ENV, COLUMNS: '400' } });
      expect(wide.code).toBe(0);
      const terminal = await runInPtyToEnd(args, { home: data.home, env: ENV, cols: 50 });
      expect(terminal.code).toBe(0);
      const lines = linesOf(terminal.output);
      expect(widest(lines), terminal.output).toBeLessThanOrEqual(50);
      // Lines broken only between words: the same words as help with room for every line.
      expect(wordsOf(terminal.output)).toEqual(wordsOf(wide.stdout));
    },
  );
});
