// A model's reasoning shown on a terminal: for generated text, however it streams in pieces, the
// block is the same, and no control reaches the terminal but tab and line ends.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { REASONING_FOOTER, REASONING_HEADER, ReasoningFrame } from '../../src/output/reasoning.js';
import { ControlNeutralizer, neutralizeControls } from '../../src/output/terminal-text.js';
import { hostileText, piecesOf, runs } from '../support/property.js';

// eslint-disable-next-line no-control-regex
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

function framed(pieces: readonly string[]): string {
  const frame = new ReasoningFrame(new ControlNeutralizer());
  return pieces.map((piece) => frame.piece(piece)).join('') + frame.close(true);
}

describe('ReasoningFrame on generated text', () => {
  it('shows the neutralized text between the header and the footer, its blank rows around it left out, whatever the pieces', () => {
    fc.assert(
      fc.property(hostileText(16), fc.array(fc.nat(), { maxLength: 6 }), (raw, cuts) => {
        const pieces = piecesOf(raw, cuts);
        const shown = framed(pieces);
        const words = neutralizeControls(raw).trimEnd().replace(/^\s*\n/, '');
        expect(shown, JSON.stringify(pieces)).toBe(words === '' ? '' : `${REASONING_HEADER}\n${words}\n${REASONING_FOOTER}\n\n`);
        expect(shown.replace(/\r\n/g, '\n')).not.toMatch(OBEYED);
        expect(shown).not.toMatch(/\r(?!\n)/);
      }),
      runs(500),
    );
  });
});
