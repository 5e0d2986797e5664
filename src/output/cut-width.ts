// Cutting text to a number of terminal columns. string-width measures (CJK and most emoji take two
// columns); a grapheme is never split. Kept in a module of its own so that only what draws to a
// width loads string-width: a plain question does not. The logs and sessions tables cut with it too.
import stringWidth from 'string-width';
import { headOf } from './cut.js';

const graphemes = new Intl.Segmenter();
/**
 * Segmenting costs about the square of the length of what is segmented (a 90k-character prompt
 * took seconds), so text is segmented a short window at a time, and only a prefix of it is looked
 * at: UNITS_PER_COLUMN code units per column, enough for any common text (an emoji sequence is up
 * to ~11 units for 2 columns).
 */
const WINDOW = 32;
const UNITS_PER_COLUMN = 8;
// Printable ASCII and `…` (how a session title ends when it was cut): one column per code unit, no
// segmenting. Most titles and prompts are this; a table of thousands of them is drawn at once.
const ONE_COLUMN_EACH = /^[\x20-\x7e\u2026]*$/;

/** The graphemes of `text`, a window at a time; a window's last one may be cut short, so it is left for the next. */
function* graphemesOf(text: string): Generator<string> {
  let from = 0;
  let size = WINDOW;
  while (from < text.length) {
    const window = headOf(text.slice(from), size); // never half a surrogate pair
    const end = from + window.length;
    const pieces = Array.from(graphemes.segment(window), (piece) => piece.segment);
    if (end === text.length) {
      yield* pieces;
      return;
    }
    if (pieces.length < 2) {
      size *= 2; // one grapheme longer than the window
      continue;
    }
    for (const piece of pieces.slice(0, -1)) {
      yield piece;
      from += piece.length;
    }
    size = WINDOW;
  }
}

/**
 * `text` cut to at most `max` terminal columns, ending with `…` when something was cut. Only a
 * prefix of `text` is measured, so the cost does not grow with its length; a text that is still no
 * wider than `max` after that prefix (thousands of zero-width characters) is cut at it.
 */
export function cutToWidth(text: string, max: number): string {
  if (max <= 0) return '';
  const head = headOf(text, (max + 2) * UNITS_PER_COLUMN);
  const whole = head.length === text.length;
  if (ONE_COLUMN_EACH.test(head)) return text.length <= max ? text : `${head.slice(0, max - 1)}…`;
  let kept = '';
  let width = 0;
  let full = false;
  let pending: string | undefined;
  for (const segment of graphemesOf(head)) {
    // The prefix's last grapheme may be cut short: it is only counted once the next one starts.
    if (pending !== undefined) {
      width += stringWidth(pending);
      if (width > max) return `${kept}…`;
      full ||= width > max - 1;
      if (!full) kept += pending;
    }
    pending = segment;
  }
  if (!whole) return `${kept}…`;
  return pending === undefined || width + stringWidth(pending) <= max ? text : `${kept}…`;
}
