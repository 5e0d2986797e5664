// The NDJSON line readers (readLines, readLinesBackward) against `split('\n')`, for generated file
// contents read in chunks as small as one byte, with and without a needle: the same lines, offsets,
// numbers and completeness, and a needle finds exactly the lines that hold it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readLines, readLinesBackward } from '../../src/log/lines.js';
import type { RawLine, ReadOptions } from '../../src/log/lines.js';
import type { Needle } from '../../src/log/needle.js';
import { hostileText, runs, wellFormed } from '../support/property.js';

const dir = mkdtempSync(join(tmpdir(), 'argo-lines-property-'));
let files = 0;

function fileOf(bytes: Buffer): string {
  const path = join(dir, `${files++}.log`);
  writeFileSync(path, bytes);
  return path;
}

async function all(lines: AsyncIterable<RawLine>): Promise<RawLine[]> {
  const out: RawLine[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

/** A line as a reader reports it. */
interface Want {
  text: string;
  offset: number;
  length: number;
  number: number;
  complete: boolean;
}

/** The lines of bytes[from, to), worked out with split: text, offset, length, 1-based number, complete. */
function splitLines(bytes: Buffer, from: number, to: number, maxLineBytes: number): Want[] {
  const want: Want[] = [];
  if (to <= from) return want;
  let offset = from;
  const pieces = bytes.subarray(from, to).toString('latin1').split('\n');
  pieces.forEach((piece, i) => {
    const length = piece.length; // latin1: one character per byte
    const last = i === pieces.length - 1;
    if (!(last && length === 0)) {
      const text = length > maxLineBytes ? '' : bytes.subarray(offset, offset + length).toString('utf8');
      want.push({ text, offset, length, number: i + 1, complete: !last });
    }
    offset += length + 1;
  });
  return want;
}

/** ASCII letters in lower case, nothing else changed: how a caseless needle compares. */
const foldAscii = (text: string): string => text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());

/** Whether the decoded line holds the needle, by plain string search. */
function holds(text: string, needle: Needle): boolean {
  if (needle.kind === 'json-string') return needle.values.some((value) => text.includes(JSON.stringify(value)));
  return needle.caseless ? foldAscii(text).includes(foldAscii(needle.text)) : text.includes(needle.text);
}

/** Whether the raw line holds the needle's bytes (for bytes that are not UTF-8). */
function holdsBytes(line: Buffer, needle: Needle): boolean {
  const strings = needle.kind === 'json-string' ? needle.values.map((value) => JSON.stringify(value)) : [needle.text];
  const caseless = needle.kind === 'text' && needle.caseless;
  const haystack = caseless ? Buffer.from(line.toString('latin1').replace(/[A-Z]/g, (c) => c.toLowerCase()), 'latin1') : line;
  return strings.some((text) => haystack.includes(Buffer.from(caseless ? foldAscii(text) : text, 'utf8')));
}

/** File contents: text lines (awkward characters, CR, empty lines), ending with a newline or not. */
const textContent = fc.array(fc.oneof(hostileText(5), fc.constantFrom('', '\r', '{"session_id":"s-1"}', 'needle NEEDLE')), { maxLength: 12 }).chain((lines) =>
  fc.boolean().map((finalNewline) => Buffer.from(lines.join('\n') + (finalNewline && lines.length > 0 ? '\n' : ''), 'utf8')),
);

/** File contents as bytes, newlines and UTF-8 lead and continuation bytes frequent. */
const byteContent = fc
  .array(fc.oneof(fc.constantFrom(0x0a, 0x0d, 0x22, 0x41, 0x61, 0xc3, 0xa9, 0xe6, 0xbc, 0xa2, 0xf0, 0x9f, 0x98, 0x80, 0xff), fc.integer({ min: 0, max: 255 })), { maxLength: 80 })
  .map((bytes) => Buffer.from(bytes));

/** A needle, often a piece of the content itself (so that some lines hold it), sometimes in another case. */
function needleFor(content: Buffer): fc.Arbitrary<Needle> {
  const text = content.toString('utf8');
  const pieces = text.split('\n').flatMap((line) => Array.from({ length: Math.min(line.length, 4) }, (_, i) => line.slice(i, i + 1 + ((i * 7) % 9))));
  // A needle is text as typed (argv, a query string): never half a surrogate pair.
  const usable = (piece: string): boolean => piece !== '' && !piece.includes('\n') && wellFormed(piece);
  const candidates = [...pieces, 'needle', 's-1', 'é', '\r'].filter(usable);
  const word = fc.oneof(fc.constantFrom(...candidates), hostileText(2).filter(usable));
  return fc.oneof(
    fc.record({ kind: fc.constant('text' as const), text: word, caseless: fc.boolean() }),
    fc.record({ kind: fc.constant('text' as const), text: word.map((piece) => piece.toUpperCase()).filter((piece) => !piece.includes('\n')), caseless: fc.constant(true) }),
    fc.record({ kind: fc.constant('json-string' as const), values: fc.array(fc.oneof(fc.constantFrom('s-1', 'x'), hostileText(2)), { minLength: 1, maxLength: 3 }) }),
  );
}

const chunkSize = fc.option(fc.integer({ min: 1, max: 24 }), { nil: undefined });
const maxLineBytes = fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined });

function options(chunk: number | undefined, most: number | undefined, needle?: Needle): ReadOptions {
  return { ...(chunk === undefined ? {} : { chunkSize: chunk }), ...(most === undefined ? {} : { maxLineBytes: most }), ...(needle ? { needle } : {}) };
}

const shape = ({ text, offset, length, number, complete }: RawLine): Want => ({ text, offset, length, number, complete });

/** What the backward reader gives for the same lines: newest first, no empty lines, no line numbers. */
const backwardOf = (want: Want[]): Want[] => want.filter((line) => line.length > 0).map((line) => ({ ...line, number: 0 })).reverse();

describe('readLines and readLinesBackward give the lines split gives', () => {
  it.each([
    ['text', textContent],
    ['any bytes', byteContent],
  ])('for %s, every chunk size, forward and backward', async (_name, content) => {
    await fc.assert(
      fc.asyncProperty(content, chunkSize, maxLineBytes, async (bytes, chunk, most) => {
        const path = fileOf(bytes);
        const want = splitLines(bytes, 0, bytes.length, most ?? Infinity);
        expect((await all(readLines(path, options(chunk, most)))).map(shape)).toEqual(want);
        expect((await all(readLinesBackward(path, options(chunk, most)))).map(shape)).toEqual(backwardOf(want));
      }),
      runs(150),
    );
  });

  it('for a byte range: forward from a line start to any byte, backward from a line end', async () => {
    await fc.assert(
      fc.asyncProperty(textContent, chunkSize, fc.nat(), fc.nat(), fc.nat(), async (bytes, chunk, a, b, c) => {
        const path = fileOf(bytes);
        const starts = [0, ...[...bytes.keys()].filter((i) => bytes[i] === 0x0a).map((i) => i + 1)];
        const start = starts[a % starts.length] ?? 0;
        const end = start + (b % (bytes.length - start + 1));
        // Line numbers count from the range's start.
        const forward = splitLines(bytes, start, end, Infinity);
        expect((await all(readLines(path, { ...options(chunk, undefined), start, end }))).map(shape)).toEqual(forward);
        const backEnd = starts[c % starts.length] ?? 0;
        // A range ending before the file does ends at a line's end: its last line is whole.
        const backward = splitLines(bytes, 0, backEnd, Infinity).map((line) => ({ ...line, complete: true }));
        expect((await all(readLinesBackward(path, { ...options(chunk, undefined), end: backEnd }))).map(shape)).toEqual(backwardOf(backward));
      }),
      runs(100),
    );
  });
});

describe('a needle finds exactly the lines that hold it', () => {
  it('in text, as String.includes on the decoded line would (ASCII case folded for a caseless one)', async () => {
    await fc.assert(
      fc.asyncProperty(
        textContent.chain((bytes) => fc.tuple(fc.constant(bytes), needleFor(bytes))),
        chunkSize,
        async ([bytes, needle], chunk) => {
          const path = fileOf(bytes);
          const want = splitLines(bytes, 0, bytes.length, Infinity)
            .filter((line) => holds(line.text, needle))
            .map((line) => ({ ...line, number: 0 }));
          expect((await all(readLines(path, options(chunk, undefined, needle)))).map(shape)).toEqual(want);
          expect((await all(readLinesBackward(path, options(chunk, undefined, needle)))).map(shape)).toEqual(backwardOf(want));
        },
      ),
      runs(200),
    );
  });

  it('in any bytes, as a byte search of the line would', async () => {
    await fc.assert(
      fc.asyncProperty(
        byteContent.chain((bytes) => fc.tuple(fc.constant(bytes), needleFor(bytes))),
        chunkSize,
        maxLineBytes,
        async ([bytes, needle], chunk, most) => {
          const path = fileOf(bytes);
          const want = splitLines(bytes, 0, bytes.length, most ?? Infinity)
            .filter((line) => holdsBytes(bytes.subarray(line.offset, line.offset + line.length), needle))
            .map((line) => ({ ...line, number: 0 }));
          expect((await all(readLines(path, options(chunk, most, needle)))).map(shape)).toEqual(want);
          expect((await all(readLinesBackward(path, options(chunk, most, needle)))).map(shape)).toEqual(backwardOf(want));
        },
      ),
      runs(150),
    );
  });
});
