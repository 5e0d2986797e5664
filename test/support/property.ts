// Property tests' shared settings and inputs. A fixed seed makes every run the same (a failure in CI
// is a failure here); ARGO_PROPERTY_SCALE multiplies every run count for a deeper pass and
// ARGO_PROPERTY_SEED picks other inputs (test/support/README.md).
import fc from 'fast-check';

const DEFAULT_SEED = 20_240_611;

/** fast-check's settings for a property with `base` runs by default. */
export function runs(base: number): { seed: number; numRuns: number } {
  const scale = Number(process.env.ARGO_PROPERTY_SCALE ?? '1');
  const seed = Number(process.env.ARGO_PROPERTY_SEED ?? DEFAULT_SEED);
  return { seed: Number.isSafeInteger(seed) ? seed : DEFAULT_SEED, numRuns: Math.max(1, Math.round(base * (Number.isFinite(scale) && scale > 0 ? scale : 1))) };
}

/**
 * Pieces of text Argo is handed by others, the awkward ones often: terminal controls and escape
 * sequences, C1 and bidi controls, lone and paired surrogates, combining marks, joiners, wide
 * characters, regional indicators, line ends of every kind.
 */
const HOSTILE_PIECES = [
  '\x1b',
  '\x1b[31m',
  '\x1b]0;title\x07',
  '\x1b]52;c;aGk=\x1b\\',
  '\x9b',
  '\x9d',
  '\x85',
  '\x7f',
  '\x00',
  '\x07',
  '\b',
  '\r',
  '\n',
  '\r\n',
  '\t',
  '\u2028',
  '\u202e',
  '\u2066',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\ud800',
  '\udc00',
  '\ud83d',
  '\ude00',
  '😀',
  '👩‍👩‍👧',
  '🇫🇷',
  '🇫',
  'e\u0301',
  '\u0301',
  '漢',
  'ｗ',
  'é',
  '…',
  '"',
  '\\',
  ' ',
];

/** One piece of text: plain ASCII mostly, an awkward piece often. */
const textUnit = fc.oneof({ arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 4 }), weight: 3 }, { arbitrary: fc.constantFrom(...HOSTILE_PIECES), weight: 2 }, { arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }), weight: 1 });

/** Text as models, tools and users send it, awkward pieces included. */
export function hostileText(maxPieces = 12): fc.Arbitrary<string> {
  return fc.array(textUnit, { maxLength: maxPieces }).map((pieces) => pieces.join(''));
}

/** `text` cut at the given points (each taken modulo its length), pieces in order. */
export function piecesOf(whole: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (whole.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of points) {
    pieces.push(whole.slice(from, point));
    from = point;
  }
  pieces.push(whole.slice(from));
  return pieces;
}

/** Whether `text` is valid UTF-16 (no lone surrogate). */
export function wellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}
