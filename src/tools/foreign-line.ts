// Text a tool's outside world wrote (an MCP server's stderr, a start-up failure, a path or an error
// a failure quotes) that Argo logs and shows: one line, secret-looking values masked, bounded. A
// server's words lose their escape sequences and controls; a value a failure quotes shows them.
import { clipText } from '../output/cut.js';
import { flatLine, neutralizeControls } from '../output/terminal-text.js';
import { maskSecrets } from '../text/secrets.js';

/** The longest reason a tool is unavailable for (`tools_unavailable[].reason`, the CLI's note, `argo tools`). */
export const UNAVAILABLE_REASON_CHARS = 500;

/**
 * `text` as one line of at most `max` characters (then `…`). Masked before the cut, so a secret
 * across the cut is masked whole rather than left in part; the masking reads a few times `max`
 * characters at most, however long the text.
 */
export function foreignLine(text: string, max: number): string {
  return maskedLine(flatLine(text).trim(), max);
}

/**
 * Outside text shown on one line: each run of whitespace one space, every other control (an escape
 * sequence's ESC, a C1 CSI, a bidirectional mark) written visibly (`^[`, `\x9b`, `\u202e`), as a
 * terminal shows untrusted text. Nothing is deleted, so a path that held controls never reads as
 * another path; nothing is left raw, so the line is harmless wherever it is read.
 */
export function visibleLine(text: string): string {
  return neutralizeControls(text.replace(/\s+/g, ' '));
}

/** A line (flatLine, visibleLine) masked, then cut to `max`; only its first 4 × `max` characters are read. */
function maskedLine(line: string, max: number): string {
  return clipText(maskSecrets(clipText(line, 4 * max)), max);
}

/** The longest a failure quotes of one outside value: more than the loop shows of a failure's whole line. */
const QUOTED_CHARS = 1000;

/** An outside value a message quotes at most `max` characters of (`clipped`), so its words after it stay in view. */
interface Clipped {
  text: string;
  max: number;
}

/** `text`, quoted by `quoting` at most `max` characters long (masked before the cut, as foreignLine does). */
export function clipped(text: string, max: number): Clipped {
  return { text, max };
}

/**
 * A failure's message quoting outside words (`quoting`): each outside value was made one line and
 * masked before Argo's words wrapped it. A ToolError built from one is not masked again.
 */
export class QuotingMessage {
  readonly text: string;
  /** Argo's words alone, each quoted value as `…`: what the message says, whatever a value holds. */
  readonly ownWords: string;

  constructor(words: readonly string[], values: readonly (string | number | Clipped)[]) {
    const quoted = values.map((value) => {
      const { text, max } = typeof value === 'object' ? value : { text: String(value), max: QUOTED_CHARS };
      // Not trimmed: a quoted path's spaces are part of it. Shown, not cleaned: a failure names the path the model gave.
      return maskedLine(visibleLine(text), max);
    });
    this.text = words.map((word, index) => `${word}${quoted[index] ?? ''}`).join('');
    this.ownWords = words.join('…');
  }
}

/**
 * Argo's words quoting outside ones (a path, a pattern, a host, an error's message, a name from
 * config): `new ToolError(quoting`file "${path}" does not exist`)`. Each `${}` value is masked on its
 * own, before it is wrapped: masked as a whole, a NAME=value secret ending a value would take Argo's
 * closing `)` with it (a value runs to a space, and a secret may hold a `)`).
 */
export function quoting(words: TemplateStringsArray, ...values: readonly (string | number | Clipped)[]): QuotingMessage {
  return new QuotingMessage(words, values);
}
