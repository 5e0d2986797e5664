import { describe, expect, it } from 'vitest';
import { PatternTooSlowError, matchLines } from '../../src/tools/line-search.js';

const bytesOf = (text: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(text, 'utf8'));
const never = new AbortController().signal;
/** A line a backtracking engine takes minutes over with the patterns below. */
const HOSTILE_LINE = `${'a'.repeat(34)}!`;

describe('matchLines', () => {
  it.each<[string, string[], number, [number, number, string][]]>([
    // pattern, files, most, matches as [file, line, text]
    ['b', ['a\nb\nc', 'bb'], 10, [[0, 2, 'b'], [1, 1, 'bb']]],
    ['^x', ['x1\ny\nx2\n'], 10, [[0, 1, 'x1'], [0, 3, 'x2']]],
    // The cap counts across files.
    ['\\d', ['1\n2', '3'], 2, [[0, 1, '1'], [0, 2, '2']]],
    // A CRLF line is matched and sent back without its CR, as read_file shows it; a CR inside a line stays.
    ['end$', ['the end\r\nend'], 10, [[0, 1, 'the end'], [0, 2, 'end']]],
    ['^three$', ['one\r\nthree\r\n'], 10, [[0, 2, 'three']]],
    ['^a\rb$', ['a\rb\r\n'], 10, [[0, 1, 'a\rb']]],
    ['^$', ['x\r\n\r'], 10, [[0, 2, '']]],
    // JavaScript syntax whole: lookarounds and backreferences.
    ['(?<=v)\\d', ['v1\nw2'], 10, [[0, 1, 'v1']]],
    ['(\\w)\\1', ['aa\nab'], 10, [[0, 1, 'aa']]],
    // UTF-8 decoded; a leading BOM dropped, as read_file drops it, so ^ matches at line 1's first character.
    ['é', ['\u{feff}café'], 10, [[0, 1, 'café']]],
    ['^#!', ['\u{feff}#!/bin/sh\r\necho'], 10, [[0, 1, '#!/bin/sh']]],
    ['^\u{feff}', ['\u{feff}a', 'b'], 10, []],
    // Each file's own: a BOM opens a file, not the batch.
    ['^x', ['\u{feff}x', '\u{feff}x'], 10, [[0, 1, 'x'], [1, 1, 'x']]],
    // A BOM anywhere else is a character of its line.
    ['^\u{feff}b', ['a\n\u{feff}b'], 10, [[0, 2, '\u{feff}b']]],
    ['x', ['', 'y'], 10, []],
  ])('%s in %j (at most %i)', async (pattern, files, most, expected) => {
    const found = await matchLines(pattern, files.map(bytesOf), most, 10_000, never);
    expect(found.map(({ file, line, text }) => [file, line, text])).toEqual(expected);
  });

  it('sends back the head of a long matching line', async () => {
    const [match] = await matchLines('x', [bytesOf('x'.repeat(5000))], 1, 10_000, never);
    expect(match?.text).toHaveLength(1000);
  });

  // The pattern would run for minutes; the process must go on meanwhile and the search end at its limit.
  it.each(['^(a+)+$', '^(?=a)(a+)+\\1$', '^(a|a)*(?!b)$'])('%s on a long line is stopped at its limit while timers keep firing', async (pattern) => {
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 10);
    const started = Date.now();
    try {
      await expect(matchLines(pattern, [bytesOf(HOSTILE_LINE)], 10, 400, never)).rejects.toBeInstanceOf(PatternTooSlowError);
    } finally {
      clearInterval(ticking);
    }
    expect(Date.now() - started).toBeLessThan(5000);
    expect(ticks).toBeGreaterThanOrEqual(10);
    // The next search gets a working worker.
    expect(await matchLines('a', [bytesOf('a')], 1, 10_000, never)).toEqual([{ file: 0, line: 1, text: 'a' }]);
  });

  it('an abort stops the search at once with its reason', async () => {
    const controller = new AbortController();
    const searching = matchLines('^(a+)+$', [bytesOf(HOSTILE_LINE)], 10, 60_000, controller.signal);
    // The batch is with the worker once matchLines returns: the abort comes mid-match.
    controller.abort(new Error('stopped by the test'));
    await expect(searching).rejects.toThrow('stopped by the test');
  });

  it('several searches at once each get an answer', async () => {
    const found = await Promise.all(['1', '2', '3', '4'].map((digit) => matchLines(digit, [bytesOf('1\n2\n3\n4')], 5, 10_000, never)));
    expect(found.map((matches) => matches.map(({ line }) => line))).toEqual([[1], [2], [3], [4]]);
  });
});
