import { Writable } from 'node:stream';
import { Chalk } from 'chalk';
import stringWidth from 'string-width';
import { describe, expect, it, vi } from 'vitest';
import { fullBlock, oneLine, tableRow, truncate } from '../../src/query/format.js';
import type { RenderOptions } from '../../src/query/format.js';
import type { LogEntry } from '../../src/log/entry.js';
import { Sink } from '../../src/output/sink.js';
import { CONTROLS, neutralizeControls } from '../../src/output/terminal-text.js';
import { makeEntry, policy } from './helpers.js';
import { waitFor } from '../support/wait.js';

const plain = (width: number | null): RenderOptions => ({ color: new Chalk({ level: 0 }), width, sessionName: (entry) => `${entry.session}!` });

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
  ])('truncate(%j, %d) → %j', (text, max, expected) => {
    expect(truncate(text, max)).toBe(expected);
    expect(stringWidth(truncate(text, max))).toBeLessThanOrEqual(max);
  });

  // A long prompt costs what its preview does: only a bounded prefix is segmented and measured.
  it.each<[number, number]>([
    [1_000, 60],
    [100_000, 60],
    [1_000_000, 60],
    [1_000_000, 200],
  ])('truncate of %d non-ASCII characters to %d columns looks at a bounded prefix', (length, max) => {
    const text = '漢字 emoji 👍 text line\n'.repeat(Math.ceil(length / 20)).slice(0, length);
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      const cut = truncate(text, max);
      expect(cut).toBe(truncate(text.slice(0, max * 4), max));
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
    expect(truncate(text, max)).toBe(expected);
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
    expect(truncate(text, max)).toBe(reference(text, max));
  });

  it('oneLine collapses every run of whitespace', () => {
    expect(oneLine('  a\n\n b\t\tc  ')).toBe('a b c');
  });
});

describe('tableRow', () => {
  const entry = makeEntry({ timestamp: '2025-01-02T10:00:00.000Z', session: 'a-very-long-session-name', user_prompt: 'line one\nline two '.repeat(20) });

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

  it('keeps columns aligned when session names and prompts hold wide characters', () => {
    const rows = ['日本語の会話', 'plain', '🎉party🎉'].map((session) =>
      tableRow(makeEntry({ timestamp: '2025-01-02T10:00:00.000Z', session, user_prompt: '中文问题 '.repeat(30) }), plain(90)),
    );
    const typeColumn = rows.map((row) => stringWidth(row.slice(0, row.indexOf('question'))));
    expect(new Set(typeColumn).size).toBe(1);
    for (const row of rows) expect(stringWidth(row.trimEnd())).toBeLessThanOrEqual(90);
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
    ['session', { session: `s${hostile}` }],
    ['entry_type', { entry_type: `question${hostile}` as LogEntry['entry_type'] }],
    ['model', { model: `m${hostile}` }],
    ['response', { model_response: `ok${hostile}` }],
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
