import { describe, expect, it } from 'vitest';
import { groupThousands } from '../../src/text/decimal.js';

describe('groupThousands: as toLocaleString("en-US") writes whole numbers, without Intl', () => {
  it.each([0, 7, 999, 1000, 3812, 65_536, 100_000, 1_000_000, 5_242_880, 123_456_789, -1000, -42])('%i', (value) => {
    expect(groupThousands(value)).toBe(value.toLocaleString('en-US'));
  });
});
