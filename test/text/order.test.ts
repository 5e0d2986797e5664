import { describe, expect, it } from 'vitest';
import { byCodeUnits } from '../../src/text/order.js';

describe('byCodeUnits', () => {
  it.each([
    ['a', 'b', -1],
    ['b', 'a', 1],
    ['a', 'a', 0],
    // Upper case before lower case, whatever the locale: code units, not collation.
    ['Ib', 'ia', -1],
    ['Z', 'a', -1],
    ['10', '2', -1],
    ['', 'a', -1],
    ['a', 'ä', -1],
    ['é', 'e\u0301', 1],
  ])('%j vs %j → %i', (a, b, expected) => {
    expect(Math.sign(byCodeUnits(a, b))).toBe(expected);
  });

  it('sorts as the default sort does', () => {
    const names = ['ia', 'Ib', 'ä', 'a', '10', '2', 'İ', 'i'];
    expect([...names].sort(byCodeUnits)).toEqual([...names].sort());
  });
});
