// The NDJSON line guard, for generated streams cut into any chunks (through multi-byte characters):
// the same bytes and the same malformed line as one chunk gives, and that is what the lines say:
// every object line as sent, blank lines dropped, the first bad line made an error line that ends it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MALFORMED_PREFIX, guardNdjson } from '../../src/ollama/line-guard.js';
import { hostileText, runs, wellFormed } from '../support/property.js';

const encoder = new TextEncoder();

function streamOf(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function pass(chunks: readonly Uint8Array[]): Promise<{ text: string; malformed: string[] }> {
  const malformed: string[] = [];
  const reader = guardNdjson(streamOf(chunks), (line) => malformed.push(line)).getReader();
  const parts: Uint8Array[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
  return { text: Buffer.concat(parts).toString('utf8'), malformed };
}

/** `bytes` cut at the given points (each taken modulo its length). */
function chunksOf(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1))), bytes.length].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const point of points) {
    chunks.push(bytes.slice(from, point));
    from = point;
  }
  return chunks;
}

interface Line {
  kind: 'object' | 'blank' | 'bad';
  text: string;
}

/** JSON's whitespace, all JSON.parse takes around a value (no-break spaces, form feeds and the like are not). */
const JSON_BLANK = /^[ \t\r\n]*$/;
const JSON_EDGES = /^[ \t\r\n]+|[ \t\r\n]+$/g;

const objectLine = fc.dictionary(fc.constantFrom('response', 'done', 'message', 'error', 'x'), fc.oneof(hostileText(4), fc.boolean(), fc.integer(), fc.constant(null)), { maxKeys: 3 }).map((value): Line => ({ kind: 'object', text: JSON.stringify(value) }));
const blankLine = fc.constantFrom('', ' ', '\r', ' \t ').map((text): Line => ({ kind: 'blank', text }));
const badLine = fc
  .oneof(fc.constantFrom('null', '42', '[{"response":"x"}]', '"text"', '{"response":"The","do', '<html>502</html>', 'upstream connect error'), hostileText(4))
  .filter((text) => !text.includes('\n') && !JSON_BLANK.test(text) && !isObjectJson(text))
  .map((text): Line => ({ kind: 'bad', text }));

function isObjectJson(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Lines of a stream, a bad one now and then, ending with a newline or not. */
const stream = fc.tuple(
  fc.array(fc.oneof({ arbitrary: objectLine, weight: 6 }, { arbitrary: blankLine, weight: 2 }, { arbitrary: badLine, weight: 1 }), { maxLength: 8 }).map((lines) => lines.map(asSent)),
  fc.boolean(),
);

/** A line as the wire carries it: UTF-8, so a lone surrogate arrives as U+FFFD. */
function asSent(line: Line): Line {
  return { ...line, text: Buffer.from(line.text, 'utf8').toString('utf8') };
}

/**
 * An object line's `error` that the client would not show in words (null, '', false, 42), as the
 * guard rewrites it and ends the stream: null when there is none or it is a non-empty string.
 */
function oddError(text: string): string | null {
  const value = JSON.parse(text) as Record<string, unknown>;
  if (!Object.hasOwn(value, 'error')) return null;
  const error = value.error;
  if (typeof error === 'string' && error !== '') return null;
  return error === null || error === '' ? 'an empty error' : JSON.stringify(error);
}

/**
 * What the guard should pass on: each object line and its newline, up to the first bad line, which
 * becomes an error line, or the first whose error is not a plain string, which is sent in words. Before any line is passed on, a BOM opening one is no part of it: the
 * client's decoder drops it there.
 */
function expected(lines: readonly Line[], finalNewline: boolean): { text: string; malformed: string[] } {
  let text = '';
  for (const [i, sent] of lines.entries()) {
    const last = i === lines.length - 1;
    const end = last && !finalNewline ? '' : '\n';
    const judged = text === '' && sent.text.startsWith('\uFEFF') ? sent.text.slice(1) : sent.text;
    const kind = judged === sent.text ? sent.kind : JSON_BLANK.test(judged) ? 'blank' : isObjectJson(judged) ? 'object' : 'bad';
    if (kind === 'object') {
      const odd = oddError(judged);
      if (odd !== null) return { text: `${text}${JSON.stringify({ error: odd })}\n`, malformed: [] };
      text += sent.text + end;
    }
    else if (kind === 'bad') {
      const bad = judged.replace(JSON_EDGES, '');
      const preview = bad.length > 80 ? `${bad.slice(0, 80)}…` : bad;
      return { text: `${text}${JSON.stringify({ error: MALFORMED_PREFIX + preview })}\n`, malformed: [bad] };
    }
  }
  return { text, malformed: [] };
}

describe('guardNdjson', () => {
  it('passes object lines as sent, drops blank ones, ends at the first bad one, however the bytes are chunked', async () => {
    await fc.assert(
      fc.asyncProperty(stream, fc.array(fc.nat(), { maxLength: 10 }), async ([lines, finalNewline], cuts) => {
        const bytes = encoder.encode(lines.map((line) => line.text).join('\n') + (finalNewline && lines.length > 0 ? '\n' : ''));
        const whole = await pass([bytes]);
        expect(whole).toEqual(expected(lines, finalNewline || lines.length === 0));
        expect(await pass(chunksOf(bytes, cuts))).toEqual(whole);
      }),
      runs(300),
    );
  });

  it('shortens a long bad line without splitting a surrogate pair', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: fc.constantFrom('x', '😀', 'é', '漢'), minLength: 60, maxLength: 100 }), async (bad) => {
        const { text } = await pass([encoder.encode(`${bad}\n`)]);
        const { error } = JSON.parse(text) as { error: string };
        expect(wellFormed(error), JSON.stringify(error)).toBe(true);
        expect(bad.startsWith(error.slice(MALFORMED_PREFIX.length).replace(/…$/, ''))).toBe(true);
      }),
      runs(100),
    );
  });
});
