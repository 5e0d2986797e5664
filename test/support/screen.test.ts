import { describe, expect, it } from 'vitest';
import { screenRows } from './screen.js';

describe('screenRows: what a terminal shows', () => {
  it.each<[string, string, number, string[]]>([
    ['plain lines', 'one\r\ntwo\r\n', 10, ['one', 'two', '']],
    ['CR returns to the start of the row', 'abcdef\rXY', 10, ['XYcdef']],
    ['ESC [ K erases to the end of the row', 'abcdef\r\x1b[K', 10, ['']],
    ['a full row wraps on the next character only', 'abcd\rX', 4, ['Xbcd']],
    ['a longer text wraps, and CR returns only to its last row', 'abcdefgh\r\x1b[K', 5, ['abcde', '']],
    ['wide characters take two columns', '日本語\r\n', 4, ['日本', '語', '']],
    ['colours are not shown', '\x1b[2mdim\x1b[22m', 10, ['dim']],
    ['backspace moves left', 'ab\bc', 10, ['ac']],
    ['readline redraws its line: to column 1, erase below, the line, the cursor', 'w> half\x1b[1G\x1b[0Jw> \x1b[4G', 10, ['w>']],
    ['cursor moves: back, forward, up', 'abc\r\ndef\x1b[2D\x1b[1CX\x1b[1AY', 10, ['abcY', 'deX']],
  ])('%s', (_case, output, columns, rows) => {
    expect(screenRows(output, columns)).toEqual(rows);
  });
});
