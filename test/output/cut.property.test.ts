// Cutting text to a length or a width, for generated text: never longer or wider than asked, never
// half a surrogate pair, and a cut text is a head of the text with an ellipsis.
import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { clipText, headOf } from '../../src/output/cut.js';
import { cutToWidth, textWidth } from '../../src/output/cut-width.js';
import { neutralizeControls } from '../../src/output/terminal-text.js';
import { hostileText, runs, wellFormed } from '../support/property.js';

/** Short text mostly; sometimes long runs of one piece (wide characters, joiners, flags). */
const text = fc.oneof(
  { arbitrary: hostileText(16), weight: 4 },
  { arbitrary: fc.tuple(hostileText(3), fc.integer({ min: 1, max: 60 })).map(([piece, times]) => piece.repeat(times)), weight: 1 },
);
const width = fc.integer({ min: -1, max: 30 });

describe('headOf and clipText', () => {
  it('keep at most max units (clipText adds one ellipsis), a head of the text, never half a pair', () => {
    fc.assert(
      fc.property(text, width, (raw, max) => {
        const head = headOf(raw, max);
        expect(raw.startsWith(head)).toBe(true);
        expect(head.length).toBeLessThanOrEqual(Math.max(0, max));
        if (raw.length <= max) expect(head).toBe(raw);
        // One unit less than asked only to keep a pair whole.
        else if (max > 0) expect(head.length).toBeGreaterThanOrEqual(max - 1);
        if (wellFormed(raw)) expect(wellFormed(head)).toBe(true);
        const clipped = clipText(raw, max);
        expect(clipped).toBe(raw.length > max ? `${head}…` : raw);
      }),
      runs(400),
    );
  });
});

describe('cutToWidth', () => {
  it('is never wider than max, is the text or a head of it with an ellipsis, and never splits a pair', () => {
    fc.assert(
      fc.property(text, width, (raw, max) => {
        const cut = cutToWidth(raw, max);
        expect(stringWidth(cut), JSON.stringify([raw, max, cut])).toBeLessThanOrEqual(Math.max(0, max));
        if (cut !== raw && max > 0) {
          expect(cut.endsWith('…')).toBe(true);
          expect(raw.startsWith(cut.slice(0, -1))).toBe(true);
        }
        if (wellFormed(raw)) expect(wellFormed(cut), JSON.stringify([raw, max, cut])).toBe(true);
      }),
      runs(600),
    );
  });

  // Text whose code points join no grapheme skips Intl.Segmenter: the cut must be the one segmenting gives.
  it('cuts exactly where segmenting the text into graphemes and measuring each with string-width would', () => {
    const segmenter = new Intl.Segmenter();
    const reference = (raw: string, max: number): string => {
      if (max <= 0) return '';
      const head = headOf(raw, (max + 2) * 8);
      let kept = '';
      let width = 0;
      let full = false;
      let pending: string | undefined;
      for (const { segment } of segmenter.segment(head)) {
        if (pending !== undefined) {
          width += stringWidth(pending);
          if (width > max) return `${kept}…`;
          full ||= width > max - 1;
          if (!full) kept += pending;
        }
        pending = segment;
      }
      if (head.length !== raw.length) return `${kept}…`;
      return pending === undefined || width + stringWidth(pending) <= max ? raw : `${kept}…`;
    };
    fc.assert(
      fc.property(text, width, (raw, max) => {
        expect(cutToWidth(raw, max), JSON.stringify([raw, max])).toBe(reference(raw, max));
      }),
      runs(600),
    );
  });

  it('leaves shown text (controls made visible) alone when it fits', () => {
    fc.assert(
      fc.property(text.map(neutralizeControls), fc.integer({ min: 1, max: 30 }), (shown, max) => {
        // Only the head cutToWidth measures: a longer text is cut at it (see cut-width.ts).
        fc.pre(shown.length <= (max + 2) * 8);
        if (stringWidth(shown) <= max) expect(cutToWidth(shown, max), JSON.stringify([shown, max])).toBe(shown);
      }),
      runs(600),
    );
  });
});

describe('textWidth', () => {
  it('is what string-width says, for any text', () => {
    fc.assert(
      fc.property(text, (raw) => {
        expect(textWidth(raw), JSON.stringify(raw)).toBe(stringWidth(raw));
      }),
      runs(600),
    );
  });
});
