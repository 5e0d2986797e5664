import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Utf8Lines, readAll } from '../../src/cli/io.js';
import { UsageError } from '../../src/errors.js';
import { decodeUtf8 } from '../../src/text/utf8.js';

const bytes = (...parts: (string | number[])[]): Buffer => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))));

describe('decodeUtf8: text as written, or where its first byte that is not UTF-8 is', () => {
  it.each<[string, Buffer, string]>([
    ['ASCII', bytes('hello'), 'hello'],
    ['nothing', bytes(''), ''],
    ['é, 漢, an emoji', bytes('café 漢 😀'), 'café 漢 😀'],
    ['a U+FFFD the user wrote', bytes('a\uFFFDb'), 'a\uFFFDb'],
    ['a byte order mark, kept as written', bytes([0xef, 0xbb, 0xbf], 'hi'), '\uFEFFhi'],
  ])('%s: decoded', (_case, input, text) => {
    expect(decodeUtf8(input)).toEqual({ ok: true, text });
  });

  it.each<[string, Buffer, number, number]>([
    ['latin1 é at the end', bytes('caf', [0xe9]), 3, 0xe9],
    ['latin1 é before ASCII (not a lead byte of a 3-byte character after all)', bytes('caf', [0xe9], ' au lait'), 3, 0xe9],
    ['after multi-byte characters (offsets count bytes)', bytes('é漢😀', [0xff]), 9, 0xff],
    ['after a U+FFFD the user wrote', bytes('\uFFFD', [0x80]), 3, 0x80],
    ['a lone continuation byte first', bytes([0x80], 'abc'), 0, 0x80],
    ['an overlong NUL (C0 80)', bytes('a', [0xc0, 0x80]), 1, 0xc0],
    ['an encoded surrogate (CESU-8)', bytes('ab', [0xed, 0xa0, 0x80]), 2, 0xed],
    ['an emoji cut short at the end', bytes('ok ', [0xf0, 0x9f, 0x98]), 3, 0xf0],
    ['cp1252 curly quotes', bytes('say ', [0x93], 'hi', [0x94]), 4, 0x93],
  ])('%s: offset %i', (_case, input, offset, byte) => {
    expect(decodeUtf8(input)).toEqual({ ok: false, offset, byte });
  });
});

describe('standard input that is not UTF-8 is refused, never changed', () => {
  it('one line naming the byte, its offset and the fix: a usage error', async () => {
    const error = await readAll(Readable.from([bytes('caf'), bytes([0xe9])])).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(
      'standard input is not UTF-8 (byte 0xe9 at offset 3): convert it first, e.g. iconv -f latin1 -t utf-8 file.txt | argo "…" (-f names the encoding it is in: latin1, cp1252, shift_jis …)',
    );
  });

  it.each<[string, Buffer, string]>([
    ['a program (ELF)', bytes([0x7f], 'ELF', [0x02, 0x01, 0x01, 0x00, 0xff]), 'standard input looks like binary data, not text (a NUL byte at offset 7): argo sends a model text only; give it text about the data instead (what file, strings or xxd print, say)'],
    ['a NUL after a byte that is not UTF-8', bytes('caf', [0xe9, 0x00]), 'standard input looks like binary data, not text (a NUL byte at offset 4): argo sends a model text only; give it text about the data instead (what file, strings or xxd print, say)'],
    ['UTF-16 little-endian, with its mark', bytes([0xff, 0xfe], 'h', [0], 'i', [0]), 'standard input is UTF-16 text, not UTF-8 (it starts with a UTF-16 byte order mark): convert it first, e.g. iconv -f utf-16 -t utf-8 file.txt | argo "…"'],
    ['UTF-16 big-endian, with its mark', bytes([0xfe, 0xff, 0], 'h', [0], 'i'), 'standard input is UTF-16 text, not UTF-8 (it starts with a UTF-16 byte order mark): convert it first, e.g. iconv -f utf-16 -t utf-8 file.txt | argo "…"'],
    ['latin1 text', bytes('caf', [0xe9]), 'standard input is not UTF-8 (byte 0xe9 at offset 3): convert it first, e.g. iconv -f latin1 -t utf-8 file.txt | argo "…" (-f names the encoding it is in: latin1, cp1252, shift_jis …)'],
  ])('%s: refused for what it looks like, never offered a conversion that makes garbage', async (_case, input, message) => {
    await expect(readAll(Readable.from([input]))).rejects.toThrow(new UsageError(message));
  });

  it('a character split between reads is whole', async () => {
    const euro = Buffer.from('€');
    expect(await readAll(Readable.from([euro.subarray(0, 1), euro.subarray(1)]))).toBe('€');
  });
});

/** What Utf8Lines passes on from `chunks`, and where it stopped. */
async function throughLines(chunks: Buffer[]): Promise<{ text: string; bad: Utf8Lines['bad'] }> {
  const lines = new Utf8Lines();
  Readable.from(chunks).pipe(lines);
  let text = '';
  for await (const chunk of lines) text += (chunk as Buffer).toString('utf8');
  return { text, bad: lines.bad };
}

describe("a piped chat's lines: passed on while they are UTF-8, ended at the first that is not", () => {
  it.each<[string, Buffer[], string, Utf8Lines['bad']]>([
    ['all good', [bytes('one\ntwo\n')], 'one\ntwo\n', null],
    ['all good, no newline at the end', [bytes('one\ntwo')], 'one\ntwo', null],
    ['a character split between chunks', [bytes('caf', [0xc3]), bytes([0xa9], '\nnext\n')], 'café\nnext\n', null],
    ['the third line bad: the two before pass', [bytes('one\ntwo\nthr', [0xe9], 'e\nfour\n')], 'one\ntwo\n', { line: 3, offset: 11, byte: 0xe9 }],
    ['the first line bad: nothing passes', [bytes([0xe9], 't\u00e9\n')], '', { line: 1, offset: 0, byte: 0xe9 }],
    ['a bad line in a later chunk: offsets count from the start', [bytes('one\n'), bytes('two\n'), bytes('ok ', [0xff], '\n')], 'one\ntwo\n', { line: 3, offset: 11, byte: 0xff }],
    ['a bad last line with no newline', [bytes('one\nt', [0xe9])], 'one\n', { line: 2, offset: 5, byte: 0xe9 }],
    ['a line split between chunks, bad in its second half', [bytes('one\nlo'), bytes('ng ', [0xe9], '\n')], 'one\n', { line: 2, offset: 9, byte: 0xe9 }],
    // A byte order mark opens no line: it goes, and offsets still count its bytes.
    ['a byte order mark first', [bytes([0xef, 0xbb, 0xbf], '/bye\n')], '/bye\n', null],
    ['a byte order mark split between chunks', [bytes([0xef, 0xbb]), bytes([0xbf], '/help\nq\n')], '/help\nq\n', null],
    ['a byte order mark and no newline', [bytes([0xef, 0xbb, 0xbf], 'hi')], 'hi', null],
    ['only a byte order mark', [bytes([0xef, 0xbb, 0xbf])], '', null],
    ['a byte order mark, then a bad byte on the first line', [bytes([0xef, 0xbb, 0xbf], 'caf', [0xe9], '\n')], '', { line: 1, offset: 6, byte: 0xe9 }],
    ['a byte order mark, then a bad byte on a later line', [bytes([0xef, 0xbb, 0xbf], 'one\nt', [0xe9], '\n')], 'one\n', { line: 2, offset: 8, byte: 0xe9 }],
    ['a byte order mark later on is text', [bytes('one\n', [0xef, 0xbb, 0xbf], 'two\n')], 'one\n\ufefftwo\n', null],
  ])('%s', async (_case, chunks, text, bad) => {
    expect(await throughLines(chunks)).toEqual({ text, bad });
  });
});
