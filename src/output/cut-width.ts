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

/** The graphemes of `text` by Intl.Segmenter, a window at a time; a window's last one may be cut short, so it is left for the next. */
function* segmented(text: string): Generator<string> {
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
 * A code point that may join its neighbours in one grapheme (UAX #29), or that Argo does not vouch
 * for: anything outside the scripts most text is in (Latin, Greek, Cyrillic, CJK, kana, Hangul
 * syllables, symbols, emoji), and in them every mark, skin tone and flag letter. Between two code
 * points neither of which is one of these every rule of UAX #29 breaks (checked for each such code
 * point on Node 20, 22 and 24), so such a code point is a grapheme of its own and needs no
 * Intl.Segmenter, which costs microseconds a call: a table of 60,000 CJK or emoji prompts took
 * seconds. Scripts outside the list, where Unicode still adds joining signs, are segmented.
 */
const JOINS_GRAPHEMES =
  /[^\x20-\x7e\xa0-\u024f\u0370-\u052f\u1e00-\u1fff\u2010-\u2027\u2030-\u205e\u2070-\u2bff\u2e80-\u9fff\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\u{1f000}-\u{1faff}\u{20000}-\u{3ffff}]|[\p{Grapheme_Extend}\p{Mc}\p{Emoji_Modifier}\p{Regional_Indicator}]/u;

/**
 * The graphemes of `text`: code points that join nothing as they are, and each run around the
 * ones that may join (an emoji sequence, a letter and its accents) segmented on its own.
 */
function* graphemesOf(text: string): Generator<string> {
  if (!JOINS_GRAPHEMES.test(text)) {
    yield* text;
    return;
  }
  // Cut at safe breaks: a run is one code point that joins nothing, or code points one of which may join.
  let run = '';
  let runJoins = false;
  let lastJoins = false;
  for (const point of text) {
    const joins = JOINS_GRAPHEMES.test(point);
    if (run !== '' && !joins && !lastJoins) {
      yield* runJoins ? joinedGraphemes(run) : [run];
      run = '';
      runJoins = false;
    }
    run += point;
    runJoins ||= joins;
    lastJoins = joins;
  }
  if (run !== '') yield* runJoins ? joinedGraphemes(run) : [run];
}

/**
 * The graphemes of a run where code points may join, as Intl.Segmenter says. A short run's are kept:
 * each segmenting costs microseconds, and a table meets the same emoji sequences and accented letters
 * row after row.
 */
function joinedGraphemes(run: string): Iterable<string> {
  return run.length > RUN_KEPT_MAX ? segmented(run) : keptIn(runs, run, () => [...segmented(run)]);
}

// string-width segments and tests every string it is given (microseconds, even for one letter); a
// table asks the same few thousand graphemes again and again.
const widths = new Map<string, number>();
const runs = new Map<string, readonly string[]>();
const KEPT_MAX = 10_000;
const RUN_KEPT_MAX = 64;

/** `kept[key]`, made by `make` the first time; a map grown to KEPT_MAX starts again empty. */
function keptIn<T>(kept: Map<string, T>, key: string, make: () => T): T {
  let value = kept.get(key);
  if (value === undefined) {
    value = make();
    if (kept.size >= KEPT_MAX) kept.clear();
    kept.set(key, value);
  }
  return value;
}

function widthOfGrapheme(grapheme: string): number {
  return keptIn(widths, grapheme, () => stringWidth(grapheme));
}

/** How many terminal columns `text` takes, as string-width says: the sum of its graphemes'. */
export function textWidth(text: string): number {
  if (ONE_COLUMN_EACH.test(text)) return text.length;
  // Escape sequences are string-width's to strip (no grapheme of them has a width of its own).
  if (text.includes('\x1b') || text.includes('\x9b')) return stringWidth(text);
  let width = 0;
  for (const piece of graphemesOf(text)) width += widthOfGrapheme(piece);
  return width;
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
      width += widthOfGrapheme(pending);
      if (width > max) return `${kept}…`;
      full ||= width > max - 1;
      if (!full) kept += pending;
    }
    pending = segment;
  }
  if (!whole) return `${kept}…`;
  return pending === undefined || width + widthOfGrapheme(pending) <= max ? text : `${kept}…`;
}
