import { PassThrough } from 'node:stream';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { StderrLines, spinnerFrame } from '../../src/output/spinner.js';
import { cutToWidth } from '../../src/output/cut-width.js';
import { waitFor } from '../support/wait.js';

describe('cutting text to a number of terminal columns', () => {
  it.each<[string, number, string]>([
    ['short', 10, 'short'],
    ['exactly ten', 11, 'exactly ten'],
    ['a longer text', 8, 'a longe…'],
    ['asking hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M…', 27, 'asking hf.co/bartowski/Lla…'],
    ['asking argo…', 12, 'asking argo…'],
    ['asking argo…', 11, 'asking arg…'],
    ['日本語のテキスト', 7, '日本語…'],
    ['日本語のテキスト', 8, '日本語…'],
    ['日本語', 6, '日本語'],
    ['日本語', 5, '日本…'],
    ['🎉🎉🎉🎉', 3, '🎉…'],
    ['🎉🎉🎉🎉', 8, '🎉🎉🎉🎉'],
    ['👩‍👩‍👧 family', 3, '👩‍👩‍👧…'],
    ['👩‍👩‍👧 family', 2, '…'],
    ['café au lait', 5, 'café…'],
    ['e\u0301tude', 3, 'e\u0301t…'],
    ['漢', 1, '…'],
    ['anything', 1, '…'],
    ['anything', 0, ''],
    ['anything', -3, ''],
  ])('cutToWidth(%j, %d) → %j', (text, max, expected) => {
    expect(cutToWidth(text, max)).toBe(expected);
    expect(stringWidth(cutToWidth(text, max))).toBeLessThanOrEqual(Math.max(0, max));
  });
});

describe('a spinner frame fits one row of the terminal, a column to spare', () => {
  const MODEL = 'hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M';
  it.each<[string, number, number, string]>([
    ['asking argo…', 100, 0, '⠋ asking argo…'],
    ['asking argo…', 100, 11, '⠙ asking argo…'],
    ['asking argo…', 15, 0, '⠋ asking argo…'],
    ['asking argo…', 14, 0, '⠋ asking arg…'],
    [`asking ${MODEL}…`, 30, 0, '⠋ asking hf.co/bartowski/Lla…'],
    ['asking 日本語モデル…', 15, 0, '⠋ asking 日本…'],
    ['asking 日本語モデル…', 14, 0, '⠋ asking 日…'],
    ['asking 日本語モデル…', 13, 0, '⠋ asking 日…'],
    ['🦙🦙🦙 is thinking…', 10, 0, '⠋ 🦙🦙🦙…'],
    ['🦙🦙🦙 is thinking…', 9, 0, '⠋ 🦙🦙…'],
    ['asking argo…', 4, 0, '⠋ …'],
    ['asking argo…', 3, 0, '⠋'],
    ['asking argo…', 1, 0, '⠋'],
  ])('%j on %d columns (frame %d) → %j', (label, columns, index, expected) => {
    const frame = spinnerFrame(index, label, columns, cutToWidth);
    expect(frame).toBe(expected);
    expect(stringWidth(frame ?? '')).toBeLessThan(Math.max(2, columns));
  });

  it.each<[string, number, string | null]>([
    ['asking argo…', 100, '⠋ asking argo…'],
    // 12 units: at most 24 columns, which 27 columns of room hold without measuring.
    ['asking argo…', 30, '⠋ asking argo…'],
    ['asking argo…', 26, null],
    ['asking 日本語…', 20, null],
  ])('without the measuring function, %j on %d columns is drawn only when it surely fits', (label, columns, expected) => {
    expect(spinnerFrame(0, label, columns, null)).toBe(expected);
  });
});

/** A stream that records what is written and says it is a terminal `columns` wide. */
function terminalStream(columns: number): { stream: NodeJS.WriteStream; written: () => string } {
  let text = '';
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns });
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream: stream as unknown as NodeJS.WriteStream, written: () => text };
}

describe('StderrLines: notes and the spinner share standard error', () => {
  it('a line written while the spinner runs clears its row first, then the spinner is drawn again below it', () => {
    const { stream, written } = terminalStream(80);
    const lines = new StderrLines(stream, true);
    lines.spin('asking argo…');
    lines.line('argo: cannot reach Ollama; retrying in 0.25s (attempt 2 of 3)');
    lines.stopSpinner();
    lines.line('after');
    expect(written()).toBe(
      '\r⠋ asking argo…\x1b[K' + '\r\x1b[K' + 'argo: cannot reach Ollama; retrying in 0.25s (attempt 2 of 3)\n' + '\r⠙ asking argo…\x1b[K' + '\r\x1b[K' + 'after\n',
    );
  });

  it('without cursor controls (not a terminal, TERM=dumb, --json) there is no spinner, and lines are written as they are', () => {
    const { stream, written } = terminalStream(80);
    const lines = new StderrLines(stream, false);
    lines.spin('asking argo…');
    lines.line('argo: a note');
    lines.stopSpinner();
    expect(written()).toBe('argo: a note\n');
  });

  it('a label that may not fit is measured once string-width is loaded, and cut to the row', async () => {
    const { stream, written } = terminalStream(20);
    const lines = new StderrLines(stream, true);
    lines.spin('asking hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M…');
    await waitFor(() => expect(written()).toBe('\r⠋ asking hf.co/bar…\x1b[K'));
    lines.stopSpinner();
    expect(written().endsWith('\r\x1b[K')).toBe(true);
  });

  it('streamed text (reasoning) stops the spinner first; a note or the spinner after it starts on the next row', () => {
    const { stream, written } = terminalStream(80);
    const lines = new StderrLines(stream, true);
    lines.spin('asking argo…');
    lines.text('Thinking…\nLet me');
    lines.line('argo: a note');
    lines.text('Still');
    lines.spin('asking argo…');
    lines.stopSpinner();
    expect(written()).toBe('\r⠋ asking argo…\x1b[K' + '\r\x1b[K' + 'Thinking…\nLet me' + '\nargo: a note\n' + 'Still' + '\n\r⠙ asking argo…\x1b[K' + '\r\x1b[K');
  });

  it('text that ends its row leaves nothing to end; no text writes nothing', () => {
    const { stream, written } = terminalStream(80);
    const lines = new StderrLines(stream, false);
    lines.text('done.\n\n');
    lines.text('');
    lines.line('argo: a note');
    expect(written()).toBe('done.\n\nargo: a note\n');
  });

  it('relabel changes the label of a spinner on screen, and starts none', () => {
    const { stream, written } = terminalStream(80);
    const lines = new StderrLines(stream, true);
    lines.relabel('argo is thinking…');
    expect(written()).toBe('');
    lines.spin('asking argo…');
    lines.relabel('argo is thinking…');
    lines.relabel('argo is thinking…');
    lines.stopSpinner();
    lines.relabel('argo is thinking…');
    expect(written()).toBe('\r⠋ asking argo…\x1b[K' + '\r⠙ argo is thinking…\x1b[K' + '\r\x1b[K');
  });

  it('a tab or newline in a label does not break its row', () => {
    const { stream, written } = terminalStream(80);
    const lines = new StderrLines(stream, true);
    lines.spin('asking a\tb\nc…');
    lines.stopSpinner();
    expect(written()).toBe('\r⠋ asking a b c…\x1b[K\r\x1b[K');
  });
});
