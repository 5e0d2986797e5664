import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES, isTooLong, readLines, readLinesBackward } from '../../src/log/lines.js';
import type { RawLine } from '../../src/log/lines.js';
import type { Needle } from '../../src/log/needle.js';
import { ScanStats, describeBadLine, isBlank, scanEntries } from '../../src/log/scan.js';
import { appendRaw, makeEntry, tempData } from './helpers.js';

async function all<T = RawLine>(lines: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

function file(content: string | Buffer): string {
  const { home } = tempData();
  const path = join(home, 'f.log');
  writeFileSync(path, content);
  return path;
}

/** What a reader must report: each line's text, byte offset and length, computed independently. */
function expected(content: string): { text: string; offset: number; length: number }[] {
  const out: { text: string; offset: number; length: number }[] = [];
  if (content === '') return out;
  let offset = 0;
  for (const text of content.split('\n')) {
    const length = Buffer.byteLength(text);
    out.push({ text, offset, length });
    offset += length + 1;
  }
  if (content.endsWith('\n')) out.pop();
  return out;
}

// Lines long enough to straddle the 1 MiB read chunks, with multibyte characters at every position.
const big = Array.from({ length: 7 }, (_, i) => `${i}:${'é日🎉x'.repeat(40_000 + i * 7_001)}`).join('\n');

describe('readLines / readLinesBackward', () => {
  it.each<[string, string]>([
    ['empty file', ''],
    ['one line with newline', 'a\n'],
    ['one line without newline', 'abc'],
    ['blank lines kept forward', 'a\n\nb\n'],
    ['missing trailing newline', 'first\nsecond\nthird'],
    ['multibyte', 'café\n日本\n🎉\n'],
    ['lines across chunk boundaries', `${big}\n`],
    ['lines across chunk boundaries, no final newline', big],
  ])('%s: same lines both ways, exact offsets', async (_name, content) => {
    const path = file(content);
    const forward = await all(readLines(path));
    const want = expected(content);
    expect(forward.map(({ text, offset, length }) => ({ text, offset, length }))).toEqual(want);
    expect(forward.map((line) => line.number)).toEqual(want.map((_, i) => i + 1));
    const backward = await all(readLinesBackward(path));
    expect(backward.map(({ text, offset, length }) => ({ text, offset, length }))).toEqual(want.filter((line) => line.length > 0).reverse());
    // Only a last line without its newline is incomplete.
    const unterminated = content !== '' && !content.endsWith('\n');
    expect(forward.map((line) => line.complete)).toEqual(want.map((_, i) => !(unterminated && i === want.length - 1)));
    expect(backward.map((line) => line.complete)).toEqual(backward.map((_, i) => !(unterminated && i === 0)));
  });

  it('reads a byte range, leaving a line cut by the end incomplete', async () => {
    const path = file('aa\nbb\ncc\n');
    expect((await all(readLines(path, { start: 3, end: 7 }))).map((l) => [l.text, l.offset, l.complete])).toEqual([
      ['bb', 3, true],
      ['c', 6, false],
    ]);
    expect((await all(readLinesBackward(path, { end: 6 }))).map((l) => [l.text, l.complete])).toEqual([
      ['bb', true],
      ['aa', true],
    ]);
  });

  it.each<[string, Needle, string[]]>([
    ['exact id', { kind: 'json-string', values: ['s-1'] }, ['{"session_id":"s-1","n":1}', '{"session_id":"s-1","n":3,"p":"hello"}']],
    ['case-insensitive text', { kind: 'text', text: 'hello', caseless: true }, ['{"session_id":"s-2","p":"HeLLo"}', '{"session_id":"s-1","n":3,"p":"hello"}']],
    ['no match', { kind: 'text', text: 'absent', caseless: false }, []],
  ])('with a needle only lines holding it come out (%s)', async (_name, needle, lines) => {
    const content = ['{"session_id":"s-1","n":1}', '{"session_id":"s-2","p":"HeLLo"}', 'garbage', '{"session_id":"s-1","n":3,"p":"hello"}'].join('\n');
    const path = file(content);
    const forward = await all(readLines(path, { needle }));
    expect(forward.map((line) => line.text)).toEqual(lines);
    for (const line of forward) expect(Buffer.from(content).subarray(line.offset, line.offset + line.length).toString()).toBe(line.text);
    expect((await all(readLinesBackward(path, { needle }))).map((line) => line.text)).toEqual([...lines].reverse());
  });

  it('a needle is found in big files at the right offsets, across chunks, after multibyte text', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `{"n":${i},"pad":"${'ü'.repeat(700)}"${i % 1000 === 999 ? ',"mark":"NEEDLE"' : ''}}`);
    const content = `${lines.join('\n')}\n`;
    const path = file(content);
    const found = await all(readLines(path, { needle: { kind: 'text', text: 'needle', caseless: true } }));
    expect(found.map((line) => (JSON.parse(line.text) as { n: number }).n)).toEqual([999, 1999, 2999]);
    const buffer = Buffer.from(content);
    for (const line of found) expect(buffer.subarray(line.offset, line.offset + line.length).toString()).toBe(line.text);
    expect((await all(readLinesBackward(path, { needle: { kind: 'text', text: 'needle', caseless: true } }))).map((line) => (JSON.parse(line.text) as { n: number }).n)).toEqual([2999, 1999, 999]);
  });
});

describe('a reading stopped by its signal', () => {
  const content = `${Array.from({ length: 50 }, (_, index) => `line ${index}`).join('\n')}\n`;
  it.each<[string, (path: string, signal: AbortSignal) => AsyncIterable<RawLine>]>([
    // reader → stops between reads, after the chunk it had, throwing the signal's reason
    ['readLines', (path, signal) => readLines(path, { chunkSize: 64, signal })],
    ['readLinesBackward', (path, signal) => readLinesBackward(path, { chunkSize: 64, signal })],
  ])('%s', async (_reader, read) => {
    const path = file(content);
    const controller = new AbortController();
    const seen: string[] = [];
    const reading = (async () => {
      for await (const line of read(path, controller.signal)) {
        seen.push(line.text);
        controller.abort(new Error('stopped'));
      }
    })();
    await expect(reading).rejects.toThrow('stopped');
    expect(seen.length).toBeLessThan(10);
    const aborted = new AbortController();
    aborted.abort(new Error('stopped'));
    await expect(all(read(path, aborted.signal))).rejects.toThrow('stopped');
  });

  it('scanEntries passes it to each file it reads: lines it would never yield are not read on', async () => {
    const aborted = new AbortController();
    aborted.abort(new Error('stopped'));
    await expect(all(scanEntries([file(content)], new ScanStats(), { signal: aborted.signal, prefilter: () => false }))).rejects.toThrow('stopped');
  });
});

describe('a line too long to be a string', () => {
  const content = 'short\n0123456789abcdef\nend\n0123456789 unfinished';
  const options = { maxLineBytes: 10, chunkSize: 4 };

  it('is read as no text at its place, both ways, and told from an empty line; other lines are untouched', async () => {
    const path = file(content.replace('end\n', 'end\n\n'));
    const forward = (await all(readLines(path, options))).map((line) => [line.text, line.offset, line.length, isTooLong(line)]);
    expect(forward).toEqual([
      ['short', 0, 5, false],
      ['', 6, 16, true],
      ['end', 23, 3, false],
      ['', 27, 0, false],
      ['', 28, 21, true],
    ]);
    const backward = (await all(readLinesBackward(path, options))).map((line) => [line.text, line.offset, line.length, isTooLong(line)]);
    // The backward reader passes over empty lines.
    expect(backward).toEqual(forward.filter(([, , length]) => length !== 0).reverse());
    const found = await all(readLines(path, { ...options, needle: { kind: 'text', text: 'abc', caseless: false } }));
    expect(found.map((line) => [line.offset, isTooLong(line)])).toEqual([[6, true]]);
  });

  it('is described as such, not as blank or as JSON that failed', async () => {
    const line = { text: '', length: MAX_LINE_BYTES + 1 };
    expect(isBlank(line)).toBe(false);
    expect(await describeBadLine(line)).toBe(`longer than ${MAX_LINE_BYTES} bytes, more than Node can read as text`);
    expect(isBlank({ text: '', length: 0 })).toBe(true);
  });
});

describe('scanEntries skips and counts unreadable lines', () => {
  const good = (n: number): string => JSON.stringify(makeEntry({ id: `id-${n}` }));
  const garbage = Buffer.from([0x00, 0xff, 0xfe, 0x01, 0x80, 0x81]).toString('latin1');

  it.each<[string, string, string[], number]>([
    ['truncated JSON in the middle', `${good(1)}\n${good(2).slice(0, 40)}\n${good(3)}\n`, ['id-1', 'id-3'], 1],
    ['truncated JSON at the end, no newline', `${good(1)}\n${good(2).slice(0, 40)}`, ['id-1'], 1],
    ['binary garbage in the middle', `${good(1)}\n${garbage}\n${good(3)}\n`, ['id-1', 'id-3'], 1],
    ['binary garbage at the end', `${good(1)}\n${garbage}`, ['id-1'], 1],
    ['valid JSON that is not a turn', `{"id":1}\n[1,2]\n"text"\nnull\n${good(5)}\n`, ['id-5'], 4],
    ['good last line without newline', `${good(1)}\n${good(2)}`, ['id-1', 'id-2'], 0],
    ['blank lines are not counted', `\n${good(1)}\n\n   \n${good(2)}\n`, ['id-1', 'id-2'], 0],
    ['empty file', '', [], 0],
  ])('%s', async (_name, content, ids, unreadable) => {
    const { paths } = tempData();
    const path = appendRaw(paths, '2025-01-02', '');
    // The good lines are ASCII, so latin1 writes them as is and the garbage as raw, invalid UTF-8 bytes.
    writeFileSync(path, Buffer.from(content, 'latin1'));
    for (const backward of [false, true]) {
      const stats = new ScanStats(true);
      const seen: string[] = [];
      for await (const { entry } of scanEntries([path], stats, { backward })) seen.push(entry.id);
      expect(seen).toEqual(backward ? [...ids].reverse() : ids);
      expect(stats.unreadable).toBe(unreadable);
    }
  });

  it('records file and line number of each problem', async () => {
    const { paths } = tempData();
    const path = appendRaw(paths, '2025-01-02', `${good(1)}\nnot json\n${good(3)}\n{"id":"x"}\n`);
    const stats = new ScanStats(true);
    const seen: string[] = [];
    for await (const { entry } of scanEntries([path], stats)) seen.push(entry.id);
    expect(seen).toEqual(['id-1', 'id-3']);
    expect(stats.problems.map(({ file, line }) => [file, line])).toEqual([
      [path, 2],
      [path, 4],
    ]);
    expect(stats.problems[0]?.reason).toMatch(/^not JSON/);
    expect(stats.problems[1]?.reason).toBe('valid JSON but not a turn (field "timestamp": missing)');
    expect(stats.notice()).toBe('argo: skipped 2 unreadable log lines; run "argo logs check" to list them\n');
    expect(new ScanStats().notice()).toBeNull();
  });

  it.each<[string, RegExp]>([
    ['{"id":"a","session', /^truncated JSON \(at column 19: expected the closing " of a string, found the end of the file\)$/],
    ['\u0000\u0001garbage', /^binary data \(NUL bytes\)$/],
    // Valid UTF-8: a U+FFFD written as such, and an escape sequence, are what they are.
    ['bad \ufffd bytes', /^not JSON \(at column 1: expected a value/],
    ['{"id":"a\ufffd"}', /^valid JSON but not a turn/],
    ['\u001b]0;X\u0007garbage', /^not JSON: it holds control characters \(at column 1: /],
    ['{"id":"a\u0007"}', /^not JSON: it holds control characters \(at column 9: /],
    ['hello', /^not JSON/],
    ['[1]', /^valid JSON but not an object/],
    ['{"id":"a"}', /^valid JSON but not a turn \(field "timestamp": missing\)$/],
    // Where, never what: V8's message would quote the line (a prompt's secret with it).
    ['x\r', /^not JSON \(at column 1: expected a value \(text goes in "double quotes"\)\)$/],
    ['{"prompt":"GITHUB_TOKEN=ghp_secret" x}', /^not JSON \(at column 37: expected "," or "}"\)$/],
    // An editor's byte order mark, which JSON.parse would name as an invisible token.
    ['\ufeff{"id":"a"}', /^starts with a byte order mark \(U\+FEFF\); remove it \(an editor saved the file with one\)$/],
  ])('describeBadLine(%j)', async (text, reason) => {
    expect(await describeBadLine({ text, length: Buffer.byteLength(text) })).toMatch(reason);
  });

  // The text as read: each byte that is not UTF-8 is U+FFFD there.
  it.each<[string, number[], string]>([
    ['a byte that is not UTF-8', [0x7b, 0xff, 0x7d], 'binary data (not UTF-8 text)'],
    ['two of them', [0xff, 0xfe], 'binary data (not UTF-8 text)'],
    ['a lone continuation byte in JSON', [0x7b, 0x22, 0x61, 0x80, 0x22, 0x7d], 'binary data (not UTF-8 text)'],
    ['a U+FFFD written as such', [0x78, 0xef, 0xbf, 0xbd], 'not JSON ('],
    // Three bytes read as one U+FFFD, as long as it was: said by what else is wrong.
    ['an emoji cut after three of its bytes', [0x78, 0xf0, 0x9f, 0x98, 0x78], 'not JSON ('],
  ])('%s: %s', async (_case, raw, reason) => {
    const bytes = Buffer.from(raw);
    expect((await describeBadLine({ text: bytes.toString('utf8'), length: bytes.length })).startsWith(reason)).toBe(true);
  });
});
