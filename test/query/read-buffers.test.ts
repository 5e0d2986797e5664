// The line readers reuse their buffers, keep the unfinished line by moving it, and search raw bytes:
// every boundary case is checked against a plain in-memory reference, with tiny reads.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines, readLinesBackward } from '../../src/log/lines.js';
import type { RawLine, ReadOptions } from '../../src/log/lines.js';
import { foldAscii, lineHolds, needleFinder } from '../../src/log/needle.js';
import type { Needle } from '../../src/log/needle.js';
import { Sink } from '../../src/output/sink.js';
import { tempData } from './helpers.js';

async function all(lines: AsyncIterable<RawLine>): Promise<RawLine[]> {
  const out: RawLine[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

function file(content: Buffer): string {
  const path = join(tempData().home, 'f.log');
  writeFileSync(path, content);
  return path;
}

const asciiLower = (bytes: Buffer): Buffer => Buffer.from(bytes.map((byte) => (byte >= 65 && byte <= 90 ? byte + 32 : byte)));

/** What a needle means, written out plainly: the byte strings to look for, and whether ASCII case counts. */
function meaning(needle: Needle): { strings: Buffer[]; caseless: boolean } {
  if (needle.kind === 'json-string') return { strings: needle.values.map((value) => Buffer.from(JSON.stringify(value))), caseless: false };
  return { strings: [Buffer.from(needle.text)], caseless: needle.caseless };
}

/** The first start in [from, to) of a whole occurrence in bytes[from, to), by trying every position. */
function firstAt(bytes: Buffer, needle: Needle, from: number, to: number): number {
  const { strings, caseless } = meaning(needle);
  const view = caseless ? asciiLower(bytes) : bytes;
  for (let at = from; at < to; at++) {
    for (const string of strings) {
      const wanted = caseless ? asciiLower(string) : string;
      if (at + wanted.length <= to && view.subarray(at, at + wanted.length).equals(wanted)) return at;
    }
  }
  return -1;
}

function lineMatches(line: Buffer, needle: Needle | undefined): boolean {
  if (needle === undefined) return true;
  const { strings, caseless } = meaning(needle);
  return strings.some((string) => (caseless ? asciiLower(line).includes(asciiLower(string)) : line.includes(string)));
}

function line(bytes: Buffer, from: number, to: number, number: number, complete: boolean): RawLine {
  return { text: bytes.toString('utf8', from, to), offset: from, length: to - from, number, complete };
}

function forwardReference(bytes: Buffer, options: ReadOptions = {}): RawLine[] {
  const start = options.start ?? 0;
  const end = Math.min(options.end ?? bytes.length, bytes.length);
  const out: RawLine[] = [];
  let number = 0;
  const add = (from: number, to: number, complete: boolean): void => {
    number++;
    if (lineMatches(bytes.subarray(from, to), options.needle)) out.push(line(bytes, from, to, options.needle ? 0 : number, complete));
  };
  let lineStart = start;
  for (let i = start; i < end; i++) {
    if (bytes[i] !== 10) continue;
    add(lineStart, i, true);
    lineStart = i + 1;
  }
  if (lineStart < end) add(lineStart, end, false);
  return out;
}

function backwardReference(bytes: Buffer, options: ReadOptions = {}): RawLine[] {
  const end = Math.min(options.end ?? bytes.length, bytes.length);
  const tailComplete = end < bytes.length || (end > 0 && bytes[end - 1] === 10);
  const out: RawLine[] = [];
  let lineStart = 0;
  for (let i = 0; i <= end; i++) {
    if (i < end && bytes[i] !== 10) continue;
    const complete = i < end || tailComplete;
    if (i > lineStart && lineMatches(bytes.subarray(lineStart, i), options.needle)) out.push(line(bytes, lineStart, i, 0, complete));
    lineStart = i + 1;
  }
  return out.reverse();
}

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');

const contents: [string, Buffer][] = [
  ['empty file', Buffer.alloc(0)],
  ['only newlines', utf8('\n\n\n')],
  ['one line, no newline', utf8('abc')],
  ['no trailing newline', utf8('abc\ndef')],
  ['CRLF kept in the text', utf8('one\r\ntwo\r\n\r\nthree\r')],
  ['multibyte characters at every position', utf8('café\n日本語\n🎉🎉🎉\nxé\n€\n')],
  ['lines longer than a read', utf8(`${'x'.repeat(100)}\n${'é'.repeat(50)}\nshort\n\n${'🎉'.repeat(40)}`)],
  ['needles longer than 256 bytes', utf8(`${'q'.repeat(299)}\n${'q'.repeat(300)}Q\n${'Q'.repeat(299)}x${'q'.repeat(300)}\n"${'q'.repeat(300)}"`)],
  ['invalid UTF-8', Buffer.from([0xff, 0xfe, 0x0a, 0xc3, 0x0a, 0x41, 0xe9, 0x9c, 0x0a, 0x80])],
  [
    'text to search, any case, next to non-ASCII text',
    utf8(
      [
        '{"session_id":"s-1","p":"ARGONAUT"}',
        '{"session_id":"s-2","p":"ÄRGONAUT Ärgonaut"}',
        '{"session_id":"S-1","p":"İargonaut, ſ and K"}',
        'ｏｎｅ ａｒｇｏｎａｕｔ 需 é É',
        'argo',
        'naut ArGoNaUt',
        's-1 "s-1" "s-12" a\\nb "a\\"b"',
        `${'ü'.repeat(9)}argonaut${'日'.repeat(5)}`,
        // A window ending like the needle but not holding it, right before one that does.
        'Zbcdeabcdeab',
        'argonau',
        '"s-2""s-1"',
      ].join('\n'),
    ),
  ],
];

const text = (value: string, caseless = false): Needle => ({ kind: 'text', text: value, caseless });
const jsonString = (...values: string[]): Needle => ({ kind: 'json-string', values });

const needles: (Needle | undefined)[] = [
  undefined,
  text('argonaut', true),
  text('ARGONAUT', true),
  text('ArGo'),
  text('argo', true),
  text('ABCDEAB', true),
  text('s-1'),
  text('é'),
  // Without case, bytes that are not ASCII letters still match only themselves.
  text('é', true),
  text('需'),
  text('\\n'),
  text('a'),
  text('x', true),
  text('q'.repeat(300), true),
  text(`x${'q'.repeat(299)}`),
  jsonString('s-1'),
  jsonString('s-1', 's-2'),
  jsonString('s-1', 'argonaut', 's-1'),
  jsonString('a"b', 'zz'),
  jsonString(...Array.from({ length: 30 }, (_, i) => `s-${i}`)),
  jsonString('q'.repeat(300), 'q'.repeat(301)),
  jsonString('', 'nothing'),
];

const chunkSizes = [1, 2, 3, 4, 5, 7, 8, 16, 31, 64, undefined];

describe('line readers against a reference, with reads of every small size', () => {
  it.each(contents)('%s', async (_name, bytes) => {
    const path = file(bytes);
    for (const chunkSize of chunkSizes) {
      // All needles at once: tiny reads are many, and the file system answers them in parallel.
      await Promise.all(
        needles.map(async (needle) => {
          const options = { ...(needle ? { needle } : {}), ...(chunkSize ? { chunkSize } : {}) };
          const context = `needle ${JSON.stringify(needle)}, chunk ${chunkSize}`;
          expect(await all(readLines(path, options)), context).toEqual(forwardReference(bytes, options));
          expect(await all(readLinesBackward(path, options)), context).toEqual(backwardReference(bytes, options));
        }),
      );
    }
  }, 60_000); // 25 patterns × 11 read sizes × 2 directions, byte by byte: CPU-bound, slow on a loaded machine

  it('reads byte ranges the same way', async () => {
    const bytes = utf8('{"session_id":"s-1","p":"ARGONAUT"}\n{"session_id":"s-2","p":"ÄRGONAUT Ärgonaut"}\nargo\nnaut ArGoNaUt\n"s-2""s-1"');
    const path = file(bytes);
    const starts = [0, ...[...bytes.keys()].filter((i) => bytes[i] === 10).map((i) => i + 1)];
    for (const needle of [undefined, text('argonaut', true), jsonString('s-2', 's-1')]) {
      for (const chunkSize of [1, 3, 8, undefined]) {
        for (const end of [0, 1, 17, 36, 37, 38, 100, bytes.length - 1, bytes.length, bytes.length + 5]) {
          const options = { end, ...(needle ? { needle } : {}), ...(chunkSize ? { chunkSize } : {}) };
          for (const start of starts.filter((at) => at <= end)) {
            expect(await all(readLines(path, { ...options, start }))).toEqual(forwardReference(bytes, { ...options, start }));
          }
          expect(await all(readLinesBackward(path, options))).toEqual(backwardReference(bytes, options));
        }
      }
    }
  });

  it('a match split by a read boundary at every position is found, in any case', async () => {
    for (let at = 0; at < 12; at++) {
      const content = `${'é'.repeat(at)}xx ArGoNaUt yy\nnothing here\n${'日'.repeat(at)}ARGONAUT`;
      const path = file(utf8(content));
      for (const chunkSize of [2, 3, 5, 8]) {
        const needle = text('argonaut', true);
        const forward = await all(readLines(path, { needle, chunkSize }));
        expect(forward.map((l) => [l.text, l.complete])).toEqual([
          [`${'é'.repeat(at)}xx ArGoNaUt yy`, true],
          [`${'日'.repeat(at)}ARGONAUT`, false],
        ]);
        const backward = await all(readLinesBackward(path, { needle, chunkSize }));
        expect(backward.map((l) => l.text)).toEqual(forward.map((l) => l.text).reverse());
      }
    }
  });

  it('readers running at once, or stopped early, do not share buffers', async () => {
    const big = (tag: string): Buffer => utf8(Array.from({ length: 40_000 }, (_, i) => `${tag}${i} ${'é'.repeat(i % 50)}`).join('\n'));
    const a = big('a');
    const b = big('b');
    const [pathA, pathB] = [file(a), file(b)];
    // Stop one early, so its buffers go back while a read-ahead may still be under way.
    for await (const first of readLinesBackward(pathA)) {
      expect(first.text).toBe(`a39999 ${'é'.repeat(39_999 % 50)}`);
      break;
    }
    const left = readLines(pathA);
    const right = readLinesBackward(pathB);
    const gotA: RawLine[] = [];
    const gotB: RawLine[] = [];
    for (;;) {
      const [x, y] = await Promise.all([left.next(), right.next()]);
      if (!x.done) gotA.push(x.value);
      if (!y.done) gotB.push(y.value);
      if (x.done && y.done) break;
    }
    expect(gotA).toEqual(forwardReference(a));
    expect(gotB).toEqual(backwardReference(b));
    const needle = text('b3999');
    expect(await all(readLines(pathB, { needle }))).toEqual(forwardReference(b, { needle }));
  });
});

describe('needleFinder', () => {
  const named = needles.filter((needle) => needle !== undefined).map((needle): [string, Needle] => [JSON.stringify(needle).slice(0, 60), needle]);
  const bytes = contents.at(-1)?.[1] ?? Buffer.alloc(0);

  it.each(named)('%s: the first whole occurrence in [from, to), as if nothing were around', (_name, needle) => {
    // A small Buffer lies inside Node's shared pool: its bytes do not start its ArrayBuffer.
    const finder = needleFinder(needle);
    for (let from = 0; from <= bytes.length; from += 3) {
      for (let to = from; to <= bytes.length; to += 5) {
        expect(finder.find(bytes, from, to), `[${from}, ${to})`).toBe(firstAt(bytes, needle, from, to));
      }
    }
  });

  it.each(named)('%s: the lines holding it, for every range of whole lines (wherever the two walks meet)', (_name, needle) => {
    const many = Buffer.concat([bytes, utf8('\n'), bytes, utf8('\nargonaut s-1 "s-2"\n'), bytes]);
    const starts = [0, ...[...many].flatMap((byte, at) => (byte === 10 ? [at + 1] : []))];
    const finder = needleFinder(needle);
    for (const from of starts) {
      for (const to of starts.map((start) => start - 1).filter((end) => end >= from)) {
        const expected: [number, number][] = [];
        for (let lineStart = from; lineStart <= to; ) {
          let end = many.indexOf(10, lineStart);
          if (end === -1 || end > to) end = to;
          if (lineMatches(many.subarray(lineStart, end), needle)) expected.push([lineStart, end]);
          lineStart = end + 1;
        }
        expect(finder.lines(many, from, to), `[${from}, ${to})`).toEqual(expected);
      }
    }
  });

  it('one finder per needle, for every file', () => {
    const needle = jsonString('s-1', 's-2');
    expect(needleFinder(needle)).toBe(needleFinder(needle));
  });

  it.each<[Needle, string, boolean]>([
    [text('argonaut', true), '{"p":"ArGoNaUt"}', true],
    [text('argonaut'), '{"p":"ArGoNaUt"}', false],
    [text('café', true), 'CAFé', true],
    [text('café', true), 'CAFÉ', false],
    [jsonString('s-1'), '{"session_id":"s-1"}', true],
    [jsonString('s-1'), '{"session_id":"s-12"}', false],
    [jsonString('s-1'), '{"p":"s-1 is here"}', false],
    [jsonString('a"b'), '{"session_id":"a\\"b"}', true],
    [jsonString('日'), '{"session_id":"日"}', true],
  ])('lineHolds(%j, %j) is %s', (needle, line, holds) => {
    expect(lineHolds(needle, utf8(line))).toBe(holds);
  });

  it.each<[Needle]>([[text('')], [text('a\nb', true)], [jsonString()]])('%j is refused: it could match no line or span two', (needle) => {
    expect(() => needleFinder(needle)).toThrow(/a needle needs text without newlines/);
  });
});

describe('foldAscii', () => {
  it('lower-cases ASCII letters only, at any alignment, a word at a time', () => {
    const size = 1024 + 16;
    const src = new Uint8Array(size);
    for (let i = 0; i < size; i++) src[i] = (i * 7 + (i >> 8)) & 0xff;
    const dst = new Uint8Array(size);
    const want = (byte: number): number => (byte >= 65 && byte <= 90 ? byte + 32 : byte);
    for (const [from, to] of [
      [0, size],
      [1, size - 1],
      [2, 3],
      [3, 9],
      [5, 5],
      [6, 1023],
    ] as const) {
      dst.fill(0xaa);
      foldAscii(src, new Uint32Array(src.buffer), dst, new Uint32Array(dst.buffer), from, to);
      for (let i = 0; i < size; i++) expect(dst[i], `byte ${i} of [${from}, ${to})`).toBe(i >= from && i < to ? want(src[i] ?? 0) : 0xaa);
    }
    // Views that start inside their memory, at every alignment.
    for (let base = 0; base < 8; base++) {
      dst.fill(0xaa);
      foldAscii(src.subarray(base), new Uint32Array(src.buffer), dst.subarray(base), new Uint32Array(dst.buffer), 1, 101, base);
      for (let i = 0; i < size; i++) expect(dst[i], `byte ${i}, base ${base}`).toBe(i >= base + 1 && i < base + 101 ? want(src[i] ?? 0) : 0xaa);
    }
    // All 256 values, in every byte lane of a word.
    for (let lane = 0; lane < 4; lane++) {
      for (let i = 0; i < 256; i++) src[i * 4 + lane] = i;
    }
    foldAscii(src, new Uint32Array(src.buffer), dst, new Uint32Array(dst.buffer), 0, 1024);
    for (let i = 0; i < 1024; i++) expect(dst[i]).toBe(want(src[i] ?? 0));
  });
});

describe('Sink', () => {
  const texts = Array.from({ length: 3000 }, (_, i) => `${i} ${'é日🎉x'.repeat(i % 37)} \ud800\n`);
  texts.splice(1500, 0, `${'long '.repeat(60_000)}\n`);
  const expected = Buffer.from(texts.join(''));

  async function through(out: Writable): Promise<void> {
    const sink = new Sink(out);
    for (const text of texts) await sink.write(text);
    await sink.flush();
  }

  it('writes the same bytes to a stream that writes at once', async () => {
    const got: Buffer[] = [];
    let writes = 0;
    await through(
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          writes++;
          got.push(Buffer.from(chunk));
          callback();
        },
      }),
    );
    expect(Buffer.concat(got).equals(expected)).toBe(true);
    expect(writes).toBeLessThan(texts.length / 10);
  });

  it.each([16 * 1024, 4 * 1024 * 1024])('never overwrites bytes a slow stream still holds (highWaterMark %i)', async (highWaterMark) => {
    const got: Buffer[] = [];
    const out = new Writable({
      highWaterMark,
      write(chunk: Buffer, _encoding, callback) {
        // Copied only later: a buffer reused too early would show here.
        setTimeout(() => {
          got.push(Buffer.from(chunk));
          callback();
        }, 1);
      },
    });
    await through(out);
    await new Promise<void>((resolve) => out.end(resolve));
    expect(Buffer.concat(got).equals(expected)).toBe(true);
  });

  it('passes strings to a plain writer', async () => {
    const got: string[] = [];
    const sink = new Sink({ write: (text: string) => got.push(text) });
    for (const text of texts) await sink.write(text);
    await sink.flush();
    expect(got.every((text) => typeof text === 'string')).toBe(true);
    expect(got.join('')).toBe(texts.join(''));
  });
});
