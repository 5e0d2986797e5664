import { describe, expect, it } from 'vitest';
import { messageLine, shownPath, shownWord } from '../src/errors.js';

describe('text in messages', () => {
  it.each([
    ['plain', 'plain'],
    ['Unexpected token \'x\', "x\r\ny" is not valid JSON', 'Unexpected token \'x\', "x\\r\\ny" is not valid JSON'],
    ['a\vb\fc\x85d\u2028e\u2029f', 'a\\u000bb\\u000cc\\u0085d\\u2028e\\u2029f'],
  ])('messageLine(%j) → %j', (message, line) => {
    expect(messageLine(new SyntaxError(message))).toBe(line);
    expect(messageLine(message)).toBe(line);
  });

  it.each([
    ['num_ctx=8192', 'num_ctx=8192'],
    ['temperature=-0.5e+3', 'temperature=-0.5e+3'],
    ['', '""'],
    ['a b', '"a b"'],
    ['a\nb', '"a\\nb"'],
    ['"quoted"', '"\\"quoted\\""'],
  ])('shownWord(%j) → %s', (word, shown) => {
    expect(shownWord(word)).toBe(shown);
  });

  it.each([
    ['/home/me/notes.txt', '/home/me/notes.txt'],
    ['/home/me/my notes.txt', '/home/me/my notes.txt'],
    ['/tmp/a\nb', '"/tmp/a\\nb"'],
    ['/tmp/\x1b[31mred', '"/tmp/\\u001b[31mred"'],
    [' lead', '" lead"'],
  ])('shownPath(%j) → %s', (path, shown) => {
    expect(shownPath(path)).toBe(shown);
  });
});
