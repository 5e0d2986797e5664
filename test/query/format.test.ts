import { Writable } from 'node:stream';
import { Chalk } from 'chalk';
import stringWidth from 'string-width';
import { describe, expect, it, vi } from 'vitest';
import { cutToWidth } from '../../src/output/cut-width.js';
import { fullBlock, logColumns, sessionHeader, oneLine, sessionColumns, sessionsTable, tableHeader, tableRow } from '../../src/query/format.js';
import type { RenderOptions } from '../../src/query/format.js';
import type { LogEntry } from '../../src/log/entry.js';
import type { ShownRecord } from '../../src/sessions/store.js';
import { Sink } from '../../src/output/sink.js';
import { CONTROLS, neutralizeControls } from '../../src/output/terminal-text.js';
import { makeEntry, policy } from './helpers.js';
import { waitFor } from '../support/wait.js';
import { defined } from '../support/defined.js';
import { localTime } from '../../src/query/format.js';

const localClock = localTime('2025-01-02T10:00:00.000Z').slice(11);

// The session of makeEntry's turns is called "work!" now, that of inSession(NAME)'s "NAME!"; any other id is a removed session's.
const WORK_ID = makeEntry().session_id;
const inSession = (name: string): Partial<LogEntry> => ({ session: name, session_id: `now:${name}` });
const currentName = (id: string): string | undefined => (id === WORK_ID ? 'work!' : id.startsWith('now:') ? `${id.slice(4)}!` : undefined);
const plain = (width: number | null): RenderOptions => ({ color: new Chalk({ level: 0 }), width, currentName });

describe('text helpers', () => {
  it.each<[string, number, string]>([
    ['short', 10, 'short'],
    ['exactly ten', 11, 'exactly ten'],
    ['a longer text', 8, 'a longe…'],
    ['🎉🎉🎉🎉', 3, '🎉…'],
    ['🎉🎉🎉🎉', 8, '🎉🎉🎉🎉'],
    ['café au lait', 5, 'café…'],
    ['日本語のテキスト', 7, '日本語…'],
    ['日本語', 6, '日本語'],
    ['👩‍👩‍👧 family', 3, '👩‍👩‍👧…'],
    ['a title cut by titleFrom…', 40, 'a title cut by titleFrom…'],
    ['a title cut by titleFrom…', 25, 'a title cut by titleFrom…'],
    ['a title cut by titleFrom…', 24, 'a title cut by titleFro…'],
    ['……', 1, '…'],
    ['a…b', 3, 'a…b'],
  ])('cutToWidth(%j, %d) → %j', (text, max, expected) => {
    expect(cutToWidth(text, max)).toBe(expected);
    expect(stringWidth(cutToWidth(text, max))).toBeLessThanOrEqual(max);
  });

  // A long prompt costs what its preview does: only a bounded prefix is segmented and measured.
  it.each<[number, number]>([
    [1_000, 60],
    [100_000, 60],
    [1_000_000, 60],
    [1_000_000, 200],
  ])('cutToWidth of %d non-ASCII characters to %d columns looks at a bounded prefix', (length, max) => {
    const text = '漢字 emoji 👍 text line\n'.repeat(Math.ceil(length / 20)).slice(0, length);
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      const cut = cutToWidth(text, max);
      expect(cut).toBe(cutToWidth(text.slice(0, max * 4), max));
      expect(stringWidth(cut)).toBe(max);
      const measured = segment.mock.calls.map(([input]) => input.length);
      expect(measured.length).toBeGreaterThan(0);
      expect(Math.max(...measured)).toBeLessThanOrEqual((max + 2) * 8);
    } finally {
      segment.mockRestore();
    }
  });

  it.each<[string, number, string]>([
    ['\u200b'.repeat(5000) + 'tail', 10, '\u200b'.repeat(95) + '…'],
    ['a' + '\u0301'.repeat(5000), 10, '…'],
  ])('a text no wider than the columns after the measured prefix is cut there (%#)', (text, max, expected) => {
    expect(cutToWidth(text, max)).toBe(expected);
  });

  // Segmented a window at a time: graphemes across a window's edge, or longer than a window, come
  // out as when the whole text is segmented at once (the reference below, fine for short texts).
  const reference = (text: string, max: number): string => {
    if (stringWidth(text) <= max) return text;
    let kept = '';
    for (const { segment } of new Intl.Segmenter().segment(text)) {
      if (stringWidth(kept + segment) > max - 1) break;
      kept += segment;
    }
    return `${kept}…`;
  };
  it.each<[string, string, number]>([
    ['flags, one unit off the window edge', `a${'🇯🇵🇫🇷'.repeat(15)}`, 40],
    ['family emoji', '👩‍👩‍👧 '.repeat(20), 30],
    ['a grapheme longer than a window', `e${'\u0301'.repeat(70)}${'xyz '.repeat(30)}`, 50],
    ['CJK then ASCII', `${'漢字'.repeat(10)}${'plain text '.repeat(10)}`, 60],
    ['fits exactly', '日本語'.repeat(10), 60],
  ])('%s: cut as the whole text would be', (_case, text, max) => {
    expect(cutToWidth(text, max)).toBe(reference(text, max));
  });

  it('oneLine collapses every run of whitespace', () => {
    expect(oneLine('  a\n\n b\t\tc  ')).toBe('a b c');
  });
});

describe('tableRow', () => {
  const entry = makeEntry({ timestamp: '2025-01-02T10:00:00.000Z', ...inSession('a-very-long-session-name'), user_prompt: 'line one\nline two '.repeat(20) });

  it('fits the terminal width, session names cut, prompt on one line', () => {
    const row = tableRow(entry, plain(100));
    expect(row.endsWith('\n')).toBe(true);
    expect(Array.from(row.trimEnd()).length).toBeLessThanOrEqual(100);
    expect(row).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d {2}turn-0000001 {2}a-very-long-s… {2}question {5}- {9}line one line two line one/);
    expect(row).toContain('…\n');
  });

  it('keeps 80 characters of prompt off a terminal, and marks turns that did not finish', () => {
    const row = tableRow({ ...entry, status: 'interrupted', replay_policy: policy({ context_strength: 'weak' }) }, plain(null));
    const preview = row.slice(row.indexOf('[interrupted]')).trimEnd();
    expect(Array.from(preview)).toHaveLength(80);
    expect(row).toContain('  weak      [interrupted] line one');
  });

  it.each<[string, number | null, string]>([
    // `plain` names a session by its name and a "!".
    ['a-very-long-session-name', null, 'a-very-long-session-name!'],
    ['a-very-long-session-name', 100, 'a-very-long-s…'],
    ['a-very-long-session-name', 60, 'a-very-lo…'],
    ['w', null, 'w!            '],
    [FAMILY.repeat(10), null, `${FAMILY.repeat(10)}!`],
    ['日本語の会話の名前です', null, '日本語の会話の名前です!'],
    ['日本語の会話の名前です', 100, '日本語の会話… '],
  ])('session %j at width %s is shown as %j (whole off a terminal, for scripts, as ids are)', (session, width, shown) => {
    const row = tableRow(makeEntry({ timestamp: '2025-01-02T10:00:00.000Z', ...inSession(session), user_prompt: 'QQ' }), plain(width));
    expect(row).toContain(`turn-0000001  ${shown}  `);
  });

  it('keeps columns aligned when session names and prompts hold wide characters', () => {
    const rows = ['日本語の会話', 'plain', '🎉party🎉'].map((session) =>
      tableRow(makeEntry({ timestamp: '2025-01-02T10:00:00.000Z', session, user_prompt: '中文问题 '.repeat(30) }), plain(90)),
    );
    const typeColumn = rows.map((row) => stringWidth(row.slice(0, row.indexOf('question'))));
    expect(new Set(typeColumn).size).toBe(1);
    for (const row of rows) expect(stringWidth(row.trimEnd())).toBeLessThanOrEqual(90);
  });
});

// Every row of a table, header included, is within the width; the free column starts where the
// fitted columns say, in the header and in every row.
const WIDTHS = [120, 100, 80, 60, 40, 20] as const;
const FAMILY = '👩‍👩‍👧';
const linesOf = (text: string): string[] => text.split('\n').filter((line) => line !== '');
const columnsWidth = (columns: readonly { width: number }[]): number => columns.reduce((sum, column) => sum + column.width + 2, 0);

describe('argo logs as a table at a width', () => {
  const entries = [
    makeEntry({ ...inSession('a-very-long-session-name-of-29'), user_prompt: 'QQ why does my closure capture the loop variable? '.repeat(3) }),
    makeEntry({ ...inSession('日本語の会話の名前です'), user_prompt: 'QQ 中文问题 '.repeat(30), status: 'interrupted' }),
    makeEntry({ ...inSession(FAMILY.repeat(10)), user_prompt: `QQ ${'🎉 '.repeat(40)}`, replay_policy: policy({ context_strength: 'weak' }) }),
    makeEntry({ ...inSession('w'), user_prompt: 'QQ', status: 'error' }),
  ];
  it.each(WIDTHS)('at %d columns no line is wider, and the prompt starts under PROMPT', (width) => {
    const options = plain(width);
    const { free, columns } = logColumns(width);
    const lines = linesOf(tableHeader(options) + entries.map((entry) => tableRow(entry, options)).join(''));
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(width);
    const start = columnsWidth(columns);
    const [header, ...rows] = lines;
    expect(defined(header).endsWith(cutToWidth('PROMPT', free))).toBe(true);
    expect(stringWidth(defined(header)) - stringWidth(cutToWidth('PROMPT', free))).toBe(start);
    for (const row of rows) expect(stringWidth(row.slice(0, row.search(/QQ|\[/)))).toBe(start);
  });

  it.each<[number, string]>([
    [80, 'TIME              ID            SESSION         PROMPT'],
    [60, 'TIME         ID            SESSION     PROMPT'],
    [40, 'ID            PROMPT'],
    [20, 'ID            PROM…'],
  ])('the header at %d columns names the columns shown: %j', (width, expected) => {
    expect(tableHeader(plain(width))).toBe(`${expected}\n`);
  });

  it('a long session name is cut by display width with an ellipsis, never inside a grapheme', () => {
    const row = tableRow(makeEntry({ timestamp: '2025-01-02T10:00:00.000Z', ...inSession(FAMILY.repeat(10)), user_prompt: 'QQ' }), plain(60));
    // 60 columns: the session column is 10 wide, so 4 families (8 columns) and the ellipsis.
    expect(row).toMatch(/^\d\d-\d\d \d\d:\d\d {2}turn-0000001 {2}/);
    expect(row).toContain(`  ${FAMILY.repeat(4)}…   QQ`);
  });
});

describe('argo sessions as a table at a width', () => {
  const record = (name: string, title: string, parent?: ShownRecord['parent']): ShownRecord => ({
    name,
    id: '00000000-0000-4000-8000-000000000001',
    title,
    turns: 12,
    created_at: '2025-01-02T10:00:00.000Z',
    last_used_at: '2025-01-02T10:00:00.000Z',
    last_model: 'llama3.1:8b-instruct-q4',
    ...(parent ? { parent } : {}),
  });
  const records = [
    record('a-session-name-of-29-letters_', 'QQ a short title'),
    record('日本語の名前', 'QQ 中文标题 '.repeat(8)),
    record('fork', 'QQ what the fork asked first', { session_id: 'x', name: 'a-session-name-of-29-letters_', turn_id: 'V1StGXR8_Z5j' }),
    record('gone', 'QQ a fork of a removed session', { session_id: 'y', name: 'old', turn_id: 'V1StGXR8_Z5j', removed: true }),
  ];
  it.each(WIDTHS)('at %d columns no line is wider (fork notes counted), and the title starts under TITLE', (width) => {
    const text = sessionsTable(records, plain(width), ['damaged-record-name']);
    const { columns, free } = sessionColumns(width, 29);
    const start = columnsWidth(columns);
    const lines = linesOf(text);
    for (const line of lines) expect(stringWidth(line), line).toBeLessThanOrEqual(width);
    const [header, ...rows] = lines;
    expect(defined(header).endsWith(cutToWidth('TITLE', free))).toBe(true);
    expect(stringWidth(defined(header)) - stringWidth(cutToWidth('TITLE', free))).toBe(start);
    for (const row of rows.slice(0, records.length)) expect(stringWidth(row.slice(0, row.search(/QQ|\(fork/)))).toBe(start);
  });

  it('a fork note and its title are cut together', () => {
    const [, , , fork] = linesOf(sessionsTable(records, plain(80), []));
    // 80 columns: names 29 wide, the model dropped, 23 columns for note and title.
    expect(fork).toBe(`fork                              12  2025-01-02 ${localClock}  (fork of a-session-nam…`);
  });

  it('off a terminal every column is kept, names whole, and the title keeps 80 columns after the fork note', () => {
    const lines = linesOf(sessionsTable([record('f', `QQ ${'x'.repeat(100)}`, { session_id: 'x', name: 'p', turn_id: 'V1StGXR8_Z5j' })], plain(null)));
    expect(lines[0]).toBe('NAME  TURNS  LAST USED         MODEL           TITLE');
    expect(lines[1]).toContain(`llama3.1:8b-instruct-q4  (fork of p@V1StGXR8_Z5j) QQ ${'x'.repeat(76)}…`);
  });

  it.each<[boolean, string]>([
    [true, 'NAME                           TURNS  LAST USED         MODEL           TITLE'],
    [false, 'a-session-name-of-29-letters_     12'],
  ])('with header %s, the first line is %j', (header, first) => {
    expect(linesOf(sessionsTable(records, plain(null), [], { header }))[0]?.slice(0, first.length)).toBe(first);
  });

  // The turns column is as wide as the longest count: a count is shown whole, or not at all.
  it.each<[number | null, number, string]>([
    [200, 150_002, 'many  150002'],
    [null, 150_002, 'many  150002'],
    [80, 123_456_789, 'many  123456789'],
    [200, 7, 'many      7'],
  ])('at %s columns, %i turns: %j', (width, turns, start) => {
    const [header, row] = linesOf(sessionsTable([{ ...record('many', 'QQ'), turns }], plain(width)));
    expect(row?.slice(0, start.length)).toBe(start);
    expect(header?.slice(0, start.length)).toBe(`NAME  ${'TURNS'.padStart(start.length - 6)}`);
  });

  it('a count that does not fit is dropped with its column, never cut', () => {
    const [header, row] = linesOf(sessionsTable([{ ...record('many', 'QQ'), turns: 123_456_789 }], plain(40)));
    expect(header).not.toContain('TURNS');
    expect(row).not.toMatch(/\d…/);
  });
});

describe('sessionHeader', () => {
  const shown: ShownRecord = {
    name: 'a-session-name-of-29-letters_',
    id: '00000000-0000-4000-8000-000000000001',
    title: 'QQ',
    turns: 12,
    created_at: '2025-01-02T10:00:00.000Z',
    last_used_at: '2025-01-02T10:00:00.000Z',
    last_model: 'llama3.1:8b-instruct-q4',
    parent: { session_id: 'x', name: '日本語の名前', turn_id: 'V1StGXR8_Z5j' },
  };
  const headerLines = (options: RenderOptions): string[] => sessionHeader(shown, { count: 2, inherited: 1 }, options).split('\n').slice(0, 2);

  it('off a terminal, whole', () => {
    expect(headerLines(plain(null))[0]).toBe(`a-session-name-of-29-letters_ ${shown.id} · 2 turns (1 inherited) · forked from 日本語の名前@V1StGXR8_Z5j`);
  });

  it.each([20, 40, 80])('at %d columns each line fits, cut with …', (width) => {
    for (const line of headerLines(plain(width))) {
      expect(stringWidth(line)).toBeLessThan(width);
      expect(line.endsWith('…')).toBe(true);
    }
  });

  it('at a width it fits, as it is', () => {
    expect(headerLines(plain(200))).toEqual(headerLines(plain(null)));
  });

  it('a line that fits keeps its colours; a cut one is plain, so no colour is left open', () => {
    const colored = (width: number): RenderOptions => ({ ...plain(width), color: new Chalk({ level: 1 }) });
    expect(headerLines(colored(200))[0]).toContain('\x1b[1m');
    expect(headerLines(colored(40)).join('')).not.toContain('\x1b[');
  });
});

describe('fullBlock', () => {
  it('prints the facts, then the whole prompt and response, then the error', () => {
    const block = fullBlock(makeEntry({ timestamp: 'not a time', status: 'error', error: 'model not found', replay_policy: policy() }), plain(null));
    expect(block).toBe(
      '── not a time · work! · question · strong (continuation, 2 turns, 100 chars) · error · argo · id turn-0000001\n' +
        'User: why is the sky blue?\nAssistant: Rayleigh scattering.\n(model not found)\n\n',
    );
  });

  it("shows a thinking model's reasoning between the prompt and the answer", () => {
    const block = fullBlock(makeEntry({ thinking: 'Light scatters.' }), plain(null));
    expect(block.split('\n').slice(1, 4)).toEqual(['User: why is the sky blue?', 'Thinking: Light scatters.', 'Assistant: Rayleigh scattering.']);
  });
});

describe('the session a turn is shown under, in the table and in --full', () => {
  it.each<[string, Partial<LogEntry>, string]>([
    ['its session, by its name now (renamed since)', { session: 'old-name' }, 'work!'],
    ['a removed session: the name it was logged under, marked, as another session may have it now', { session: 'alpha', session_id: 'gone' }, 'alpha (removed)'],
    ['a removed session whose last name is known: that name, marked', { session: 'alpha', session_id: 'renamed-then-gone' }, 'beta (removed)'],
    ['a last name known for a live session changes nothing', { session: 'old-name', session_id: '00000000-0000-4000-8000-000000000001' }, 'work!'],
    ['a session whose record is damaged: its name, marked so rather than removed', { session: 'gen', session_id: 'damaged' }, 'gen (damaged record)'],
    ['a damaged record says nothing of a live session', { session: 'old-name', session_id: '00000000-0000-4000-8000-000000000001' }, 'work!'],
  ])('%s', (_case, fields, shown) => {
    const entry = makeEntry(fields);
    const options: RenderOptions = {
      ...plain(null),
      removedName: (id) => (id === 'gone' || id === 'damaged' ? undefined : 'beta'),
      damagedRecord: (id) => id === 'damaged' || id === '00000000-0000-4000-8000-000000000001',
    };
    expect(tableRow(entry, options)).toContain(`  ${shown}  `);
    expect(fullBlock(entry, options).split('\n')[0]).toContain(` · ${shown} · `);
  });
});

describe('fields of a log line on a terminal', () => {
  // Any string passes the schema for these: none reaches the terminal with its controls.
  const onTerminal: RenderOptions = { ...plain(120), untrusted: neutralizeControls };
  const hostile = '\x1b]52;c;cHduZWQ=\x07\x1b[2J\r\u202e\x9b31m';
  it.each<[string, Partial<LogEntry>]>([
    ['id', { id: `turn${hostile}` }],
    ['status', { status: `error${hostile}` as LogEntry['status'] }],
    ['timestamp', { timestamp: `not a time${hostile}` }],
    ['prompt', { user_prompt: `hi${hostile}` }],
    ['session', { session: `s${hostile}`, session_id: 'removed' }],
    ['entry_type', { entry_type: `question${hostile}` as LogEntry['entry_type'] }],
    ['model', { model: `m${hostile}` }],
    ['response', { model_response: `ok${hostile}` }],
    ['reasoning', { thinking: `hmm${hostile}` }],
    ['error', { status: 'error', error: `bad${hostile}` }],
  ])('a control character in %s is shown, not obeyed, in the table and in --full', (_field, fields) => {
    const entry = makeEntry(fields);
    for (const text of [tableRow(entry, onTerminal), fullBlock(entry, onTerminal)]) expect(text.replaceAll('\n', '')).not.toMatch(new RegExp(CONTROLS.source, 'u'));
    expect(fullBlock(entry, onTerminal)).toContain('^[]52;c;');
  });
});

describe('Sink', () => {
  it('batches small writes into one, waits for drain when the stream asks, and notices a reader gone', async () => {
    const chunks: string[] = [];
    let release: (() => void) | undefined;
    const stream = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(chunk.toString());
        release = callback;
      },
    });
    const sink = new Sink(stream);
    for (let i = 0; i < 3; i++) await sink.write(`line ${i}\n`);
    expect(chunks).toEqual([]);
    let flushed = false;
    const flushing = sink.flush().then(() => (flushed = true));
    await waitFor(() => {
      expect(chunks).toEqual(['line 0\nline 1\nline 2\n']);
    });
    expect(flushed).toBe(false);
    release?.();
    await flushing;
    expect(sink.closed).toBe(false);
    stream.destroy();
    expect(sink.closed).toBe(true);
  });
});
