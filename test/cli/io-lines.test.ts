// A piped chat's lines (Utf8Lines): no line longer than the limit, in time linear in its length;
// and a one-liner's standard input without its byte order mark.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { STDIN_LIMIT_BYTES, Utf8Lines, readAll } from '../../src/cli/io.js';

/** What Utf8Lines passes on from `chunks`, and where it stopped. */
async function throughLines(chunks: Iterable<Buffer>, limit?: number): Promise<{ text: string; bad: Utf8Lines['bad']; tooLong: Utf8Lines['tooLong'] }> {
  const lines = new Utf8Lines(limit);
  Readable.from(chunks).pipe(lines);
  let text = '';
  for await (const chunk of lines) text += (chunk as Buffer).toString('utf8');
  return { text, bad: lines.bad, tooLong: lines.tooLong };
}

const split = (text: string, size: number): Buffer[] => {
  const all = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < all.length; at += size) chunks.push(all.subarray(at, at + size));
  return chunks;
};

describe("a piped chat's lines may be no longer than the limit (8 bytes here)", () => {
  it.each<[string, string, number, string, number | null]>([
    ['lines at the limit pass', '12345678\nabcdefgh\n', 3, '12345678\nabcdefgh\n', null],
    ['the last line at the limit, no newline', 'one\n12345678', 3, 'one\n12345678', null],
    ['the first line over it: nothing passes', '123456789\nnext\n', 4, '', 1],
    ['the third line over it: the two before pass', 'one\ntwo\n123456789\nfour\n', 5, 'one\ntwo\n', 3],
    ['over it in one read holding several lines', 'one\ntwo\n123456789\nfour\n', 100, 'one\ntwo\n', 3],
    ['a last line over it, never ended', 'one\n123456789', 2, 'one\n', 2],
    ['a line over it in reads of one byte', 'a\nbcdefghijkl\n', 1, 'a\n', 2],
    // A Windows line end's CR is no text of the line.
    ['a CRLF line at the limit, in one read', '12345678\r\nnext\r\n', 100, '12345678\r\nnext\r\n', null],
    ['a CRLF line at the limit, in reads of one byte', '12345678\r\nnext\r\n', 1, '12345678\r\nnext\r\n', null],
    ['a CRLF line one over it', '123456789\r\nnext\r\n', 3, '', 1],
    ['a CR inside a line counts', 'one\n1234\r5678\n', 100, 'one\n', 2],
  ])('%s', async (_case, input, chunkSize, text, line) => {
    expect(await throughLines(split(input, chunkSize), 8)).toEqual({ text, bad: null, tooLong: line === null ? null : { line, limit: 8 } });
  });

  it('a line that is not UTF-8 before the long one is what it stops at', async () => {
    const input = Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from('\n123456789\n')]);
    expect(await throughLines([input], 8)).toEqual({ text: '', bad: { line: 1, offset: 3, byte: 0xe9 }, tooLong: null });
  });
});

describe("a piped chat's lines: the real limit", () => {
  // Joined once, not at each read: a 1 MiB line in 16-byte reads took minutes when each read copied the line so far.
  it('a line of 1 MiB in 65536 reads passes at once', { timeout: 5000 }, async () => {
    const line = 'a'.repeat(STDIN_LIMIT_BYTES);
    const { text, tooLong } = await throughLines([...split(line, 16), Buffer.from('\n')]);
    expect(tooLong).toBeNull();
    expect(text).toHaveLength(STDIN_LIMIT_BYTES + 1);
  });

  it('a line that never ends (/dev/zero) is read no further than the limit', { timeout: 5000 }, async () => {
    let read = 0;
    // As a device is read: each read a turn of the event loop.
    const endless = (async function* () {
      for (;;) {
        await new Promise((resolve) => setImmediate(resolve));
        read += 64 * 1024;
        yield Buffer.alloc(64 * 1024);
      }
    })();
    const lines = new Utf8Lines();
    const source = Readable.from(endless);
    source.pipe(lines);
    let passed = 0;
    for await (const chunk of lines) passed += (chunk as Buffer).length;
    source.destroy();
    expect(passed).toBe(0);
    expect(lines.tooLong).toEqual({ line: 1, limit: STDIN_LIMIT_BYTES });
    expect(read).toBeGreaterThan(STDIN_LIMIT_BYTES);
  });
});

describe("a one-liner's standard input", () => {
  it.each<[string, Buffer[], string]>([
    ['a byte order mark first goes', [Buffer.from('\uFEFFhi')], 'hi'],
    ['split between reads', [Buffer.from([0xef, 0xbb]), Buffer.from([0xbf, 0x68, 0x69])], 'hi'],
    ['only one goes', [Buffer.from('\uFEFF\uFEFFhi')], '\uFEFFhi'],
    ['one later on is text', [Buffer.from('hi\uFEFF')], 'hi\uFEFF'],
    ['only a byte order mark: nothing', [Buffer.from('\uFEFF')], ''],
  ])('%s', async (_case, chunks, text) => {
    expect(await readAll(Readable.from(chunks))).toBe(text);
  });

  it('a byte that is not UTF-8 after the mark is named at its offset in the input, the mark counted', async () => {
    await expect(readAll(Readable.from([Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0xff])]))).rejects.toThrow(/byte 0xff at offset 4\)/);
  });
});
