// Text Argo did not write, shown on a terminal: for generated text, however it is cut into pieces,
// no control reaches the terminal but tab and line ends, and JSON stays the same JSON.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONTROLS, ControlNeutralizer, cleanLine, escapeJsonControls, neutralizeControls, quotedName } from '../../src/output/terminal-text.js';
import { hostileText, piecesOf, runs } from '../support/property.js';

const text = hostileText(16);

/** Every code unit a terminal would obey: C0 but tab and newline, DEL, C1, the bidi controls. */
// eslint-disable-next-line no-control-regex
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('neutralizeControls', () => {
  it('lets no control through but tab, newline and a CR before a newline; leaves clean text alone', () => {
    fc.assert(
      fc.property(text, (raw) => {
        const shown = neutralizeControls(raw);
        expect(shown.replace(/\r\n/g, '\n'), JSON.stringify(raw)).not.toMatch(OBEYED);
        expect(shown).not.toMatch(/\r(?!\n)/);
        if (!OBEYED.test(raw.replace(/\r\n/g, '\n'))) expect(shown).toBe(raw);
      }),
      runs(500),
    );
  });

  it('gives the same text streamed in any pieces (ControlNeutralizer) as at once', () => {
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 6 }), (raw, cuts) => {
        const stream = new ControlNeutralizer();
        const shown = piecesOf(raw, cuts).map((piece) => stream.push(piece)).join('') + stream.end();
        expect(shown, JSON.stringify(piecesOf(raw, cuts))).toBe(neutralizeControls(raw));
      }),
      runs(500),
    );
  });
});

describe('escapeJsonControls', () => {
  it('keeps JSON (one document or NDJSON lines) the same value, with no control left raw', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 3, stringUnit: fc.oneof(fc.constantFrom('\x9b', '\x7f', '\u202e', '\u2066', '\x1b', '\n'), fc.string({ unit: 'binary', maxLength: 1 })) }), { minLength: 1, maxLength: 3 }), (values) => {
        const ndjson = values.map((value) => `${JSON.stringify(value)}\n`).join('');
        const escaped = escapeJsonControls(ndjson);
        expect(escaped.slice(0, -1).split('\n').map((line) => JSON.parse(line) as unknown)).toEqual(values.map((value) => JSON.parse(JSON.stringify(value)) as unknown));
        expect(escaped.replace(/\n/g, '')).not.toMatch(OBEYED);
      }),
      runs(300),
    );
  });
});

describe('one-line forms of foreign text', () => {
  it('cleanLine is one line without controls, at most max units and an ellipsis', () => {
    fc.assert(
      fc.property(text, fc.nat({ max: 40 }), (raw, max) => {
        const line = cleanLine(raw, max);
        expect(line).not.toMatch(CONTROLS);
        expect(line).not.toMatch(/[\n\r]/);
        expect(line.length).toBeLessThanOrEqual(max + 1);
      }),
      runs(300),
    );
  });

  it('quotedName is a JSON string without controls', () => {
    fc.assert(
      fc.property(text, (raw) => {
        const quoted = quotedName(raw);
        expect(quoted).not.toMatch(CONTROLS);
        expect(quoted).not.toMatch(OBEYED);
        expect(quoted.startsWith('"') && quoted.endsWith('"')).toBe(true);
      }),
      runs(300),
    );
  });
});
