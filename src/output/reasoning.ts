// A thinking model's reasoning as it streams, shown on a terminal's standard error (never on
// standard output, which holds the answer alone): a block that opens with a header and closes with
// a footer, so it reads apart from the answer without colour (NO_COLOR, TERM=dumb), and dim when
// colour is on. The model's text is neutralized as an answer's is.
import { styleText } from 'node:util';
import { ControlNeutralizer } from './terminal-text.js';
import { TokenBuffer } from './token-buffer.js';
import type { BufferTimers } from './token-buffer.js';

export const REASONING_HEADER = 'Thinking…';
export const REASONING_FOOTER = '…done thinking.';

/**
 * What to write for each piece of reasoning (pure: text in, text out). Blank lines before the
 * first words are dropped, and whitespace at the end is held until words follow it, so a block
 * is never padded with the newlines models put around their reasoning, and its last row stays
 * open until the block closes.
 */
export class ReasoningFrame {
  private opened = false;
  private held = '';

  /** `guard`: the terminal's neutralizer, or null to write the text as sent (--raw). */
  constructor(private readonly guard: ControlNeutralizer | null) {}

  /** Whether the header is written and the footer is not. */
  get open(): boolean {
    return this.opened;
  }

  piece(text: string): string {
    return this.shown(this.guard ? this.guard.push(text) : text);
  }

  /**
   * Ends the block: its last row, then the footer and a blank line when the reasoning finished
   * (`finished`), only the row when it was cut (Ctrl-C, a failure). '' when no block is open.
   */
  close(finished: boolean): string {
    const rest = this.guard?.end() ?? '';
    const last = rest === '' ? '' : this.shown(rest);
    const wasOpen = this.opened;
    this.opened = false;
    this.held = '';
    if (!wasOpen) return '';
    return `${last}\n${finished ? `${REASONING_FOOTER}\n\n` : ''}`;
  }

  private shown(text: string): string {
    const all = this.held + text;
    const words = all.trimEnd();
    this.held = all.slice(words.length);
    if (words === '') return '';
    if (this.opened) return words;
    this.opened = true;
    // The indentation of the first row is kept; the blank rows above it are not.
    return `${REASONING_HEADER}\n${words.replace(/^\s*\n/, '')}`;
  }
}

export interface ReasoningOptions {
  /** Show control characters rather than write them (a terminal, without --raw). */
  neutralize: boolean;
  /** Colour is on (--color, NO_COLOR, FORCE_COLOR, TERM=dumb decided it). */
  dim: boolean;
  /** The answer's batching (config "stream"). */
  limits: { flushChunks: number; flushMs: number };
  timers?: BufferTimers;
}

/**
 * Reasoning blocks written to `write` (a terminal's StderrLines): the header and first words at
 * once, then in batches as the answer is (TokenBuffer), never a write per token. Each write is
 * dimmed on its own, so no write leaves the terminal dim for what follows (a note, a Ctrl-C line).
 */
export class ReasoningStream {
  private readonly frame: ReasoningFrame;
  private buffer: TokenBuffer | null = null;

  constructor(
    private readonly write: (text: string) => void,
    private readonly options: ReasoningOptions,
  ) {
    this.frame = new ReasoningFrame(options.neutralize ? new ControlNeutralizer() : null);
  }

  get open(): boolean {
    return this.frame.open;
  }

  push(text: string): void {
    const shown = this.frame.piece(text);
    if (shown === '') return;
    // A new block's first write goes out at once, as an answer's first words do.
    this.buffer ??= new TokenBuffer((batch) => this.emit(batch), this.options.limits, this.options.timers);
    this.buffer.push(shown);
  }

  /** Writes what is batched and ends the block (ReasoningFrame.close). */
  close(finished: boolean): void {
    this.buffer?.flush();
    this.buffer = null;
    this.emit(this.frame.close(finished));
  }

  private emit(text: string): void {
    if (text === '') return;
    this.write(this.options.dim ? dimmed(text) : text);
  }
}

/** `text` dim, its closing newlines outside the style, so a row left open ends the style on that row. */
export function dimmed(text: string): string {
  const words = text.replace(/\n+$/, '');
  if (words === '') return text;
  // Node's own styleText: chalk would cost a plain question ~35 ms to load. Whether to colour is
  // decided by colorLevel, so the stream is not checked again.
  return styleText('dim', words, { validateStream: false }) + text.slice(words.length);
}
