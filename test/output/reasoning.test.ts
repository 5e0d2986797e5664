import { describe, expect, it } from 'vitest';
import { ReasoningFrame, ReasoningStream, dimmed } from '../../src/output/reasoning.js';
import { ControlNeutralizer } from '../../src/output/terminal-text.js';
import { manualTimers } from '../support/manual-timers.js';

/** What a block shows for `pieces`, closed as `finished` says. */
function framed(pieces: readonly string[], finished = true, neutralize = true): string {
  const frame = new ReasoningFrame(neutralize ? new ControlNeutralizer() : null);
  return pieces.map((piece) => frame.piece(piece)).join('') + frame.close(finished);
}

describe('ReasoningFrame: a block of reasoning, set apart from the answer', () => {
  it.each<[string, string[], string]>([
    ['words between a header and a footer, a blank line after', ['Let', ' me', ' see.'], 'Thinking…\nLet me see.\n…done thinking.\n\n'],
    ['blank rows before the first words are dropped', ['\n', ' \n', 'Hm.'], 'Thinking…\nHm.\n…done thinking.\n\n'],
    ["the first row's indentation is kept", ['\n  - a', '\n  - b'], 'Thinking…\n  - a\n  - b\n…done thinking.\n\n'],
    ['newlines at the end are dropped: the footer takes the next row', ['Done.\n\n'], 'Thinking…\nDone.\n…done thinking.\n\n'],
    ['newlines between words are kept', ['One.', '\n\n', 'Two.'], 'Thinking…\nOne.\n\nTwo.\n…done thinking.\n\n'],
    ['whitespace only: no block at all', ['\n', ' ', '\t\n'], ''],
    ['nothing: no block', [], ''],
    ['an escape sequence is shown, not obeyed', ['\x1b]52;c;ZXZpbA==\x07 copied'], 'Thinking…\n^[]52;c;ZXZpbA==^G copied\n…done thinking.\n\n'],
    ['a bidirectional override is shown', ['txt\u202eexe'], 'Thinking…\ntxt\\u202eexe\n…done thinking.\n\n'],
    ['a CSI that would erase the row is shown', ['a\x1b[2Kb'], 'Thinking…\na^[[2Kb\n…done thinking.\n\n'],
    ['CR LF split across pieces is a line ending', ['a\r', '\nb'], 'Thinking…\na\r\nb\n…done thinking.\n\n'],
    ['a lone CR at the very end is shown', ['a\r'], 'Thinking…\na^M\n…done thinking.\n\n'],
    ['a lone CR between words is shown', ['a\r', 'b'], 'Thinking…\na^Mb\n…done thinking.\n\n'],
  ])('%s', (_case, pieces, expected) => {
    expect(framed(pieces)).toBe(expected);
  });

  it.each<[string, string[], string]>([
    ['cut (Ctrl-C, a failure): the row ends, no footer', ['Let', ' me'], 'Thinking…\nLet me\n'],
    ['cut with newlines held: one row end', ['Let\n\n'], 'Thinking…\nLet\n'],
    ['cut before any words: nothing', ['\n'], ''],
  ])('%s', (_case, pieces, expected) => {
    expect(framed(pieces, false)).toBe(expected);
  });

  it('with --raw the text is written as sent', () => {
    expect(framed(['\x1b[31mred\x1b[0m'], true, false)).toBe('Thinking…\n\x1b[31mred\x1b[0m\n…done thinking.\n\n');
  });

  it('no piece leaves the row ended, so a block is open until it closes', () => {
    const frame = new ReasoningFrame(new ControlNeutralizer());
    expect(frame.open).toBe(false);
    expect(frame.piece('Line one.\n')).toBe('Thinking…\nLine one.');
    expect(frame.open).toBe(true);
    expect(frame.piece('Line two.\n')).toBe('\nLine two.');
    expect(frame.close(true)).toBe('\n…done thinking.\n\n');
    expect(frame.open).toBe(false);
  });

  it('after closing, the next reasoning (a later round) opens a block of its own; a paragraph break before it is dropped', () => {
    const frame = new ReasoningFrame(new ControlNeutralizer());
    const first = frame.piece('Read it.') + frame.close(true);
    const second = frame.piece('\n\n') + frame.piece('It says hi.') + frame.close(true);
    expect(first + second).toBe('Thinking…\nRead it.\n…done thinking.\n\nThinking…\nIt says hi.\n…done thinking.\n\n');
  });
});

describe('dimmed: the dim style around the words, newlines after it', () => {
  it.each<[string, string]>([
    ['words', '\x1b[2mwords\x1b[22m'],
    ['Thinking…\nwords', '\x1b[2mThinking…\nwords\x1b[22m'],
    ['\n…done thinking.\n\n', '\x1b[2m\n…done thinking.\x1b[22m\n\n'],
    ['\n', '\n'],
    ['', ''],
  ])('%j → %j', (text, expected) => {
    expect(dimmed(text)).toBe(expected);
  });
});

describe('ReasoningStream: batched like the answer', () => {
  function setup(dim = false) {
    const writes: string[] = [];
    const timers = manualTimers();
    const stream = new ReasoningStream((text) => writes.push(text), { neutralize: true, dim, limits: { flushChunks: 3, flushMs: 50 }, timers });
    return { writes, timers, stream };
  }

  it('the header and first words at once, then a write every few chunks or after a pause, the rest at the close', () => {
    const { writes, timers, stream } = setup();
    for (const piece of ['One', ' two', ' three', ' four', ' five']) stream.push(piece);
    expect(writes).toEqual(['Thinking…\nOne', ' two three four']);
    timers.advance(50);
    expect(writes).toEqual(['Thinking…\nOne', ' two three four', ' five']);
    stream.push(' six');
    stream.close(true);
    expect(writes.join('')).toBe('Thinking…\nOne two three four five six\n…done thinking.\n\n');
    expect(timers.pending()).toBe(0);
  });

  it("a later block's first words go out at once too", () => {
    const { writes, stream } = setup();
    stream.push('First.');
    stream.close(true);
    stream.push('Second.');
    expect(writes).toEqual(['Thinking…\nFirst.', '\n…done thinking.\n\n', 'Thinking…\nSecond.']);
  });

  it('with colour each write is dim on its own, so none leaves the terminal dim', () => {
    const { writes, stream } = setup(true);
    stream.push('Hm.');
    stream.close(false);
    expect(writes).toEqual(['\x1b[2mThinking…\nHm.\x1b[22m', '\n']);
  });

  it('closing with no block open writes nothing', () => {
    const { writes, stream } = setup();
    stream.close(true);
    stream.push('\n\n');
    stream.close(false);
    expect(writes).toEqual([]);
  });
});
