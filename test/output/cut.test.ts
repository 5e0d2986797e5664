import { describe, expect, it } from 'vitest';
import { clipText, headOf, tailOf } from '../../src/output/cut.js';

describe('cutting text on code point boundaries', () => {
  it.each<[string, number, string]>([
    ['abc', 5, 'abc'],
    ['abc', 3, 'abc'],
    ['abcdef', 3, 'abc'],
    ['ab😀c', 3, 'ab'],
    ['ab😀c', 4, 'ab😀'],
    ['😀😀', 1, ''],
    ['😀😀', 2, '😀'],
    ['😀😀', 3, '😀'],
    ['abc', 0, ''],
    ['abc', -2, ''],
    ['é\u0301x', 2, 'é\u0301'],
  ])('headOf(%j, %i) is %j', (text, max, head) => {
    expect(headOf(text, max)).toBe(head);
  });

  it.each<[string, number, string]>([
    ['abc', 5, 'abc'],
    ['abc', 3, 'abc'],
    ['abcdef', 3, 'def'],
    ['a😀bc', 3, 'bc'],
    ['a😀bc', 4, '😀bc'],
    ['😀😀', 1, ''],
    ['😀😀', 2, '😀'],
    ['😀😀', 3, '😀'],
    ['abc', 0, ''],
    ['abc', -2, ''],
  ])('tailOf(%j, %i) is %j', (text, max, tail) => {
    expect(tailOf(text, max)).toBe(tail);
  });

  it.each<[string, number, string]>([
    ['short', 10, 'short'],
    ['a longer line', 6, 'a long…'],
    ['ab😀c', 3, 'ab…'],
    ['ab😀c', 4, 'ab😀…'],
  ])('clipText(%j, %i) is %j', (text, max, clipped) => {
    expect(clipText(text, max)).toBe(clipped);
  });
});
