import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { parseBudget, parseInteger, parseNumber, parsePositiveInteger, parseReplaySpec } from '../../src/cli/parse.js';
import { parseCount } from '../../src/cli/common.js';

describe('flag value parsers', () => {
  it.each([
    ['none', { kind: 'none' }],
    ['session', { kind: 'session' }],
    ['last:1', { kind: 'last', count: 1 }],
    ['last:25', { kind: 'last', count: 25 }],
  ])('--replay %s', (value, expected) => {
    expect(parseReplaySpec(value)).toEqual(expected);
  });

  it.each(['last:0', 'last:-1', 'last:', 'last:2.5', 'all', 'LAST:3', 'last:3x'])('--replay %s is rejected', (value) => {
    expect(() => parseReplaySpec(value)).toThrow(new InvalidArgumentError('use none, session, or last:N with N a whole number of 1 or more (e.g. last:3).'));
  });

  // A whole number of 1 or more, refused for its size alone: said so.
  it.each(['last:9007199254740992', `last:${'9'.repeat(30)}`])('--replay %s is too large', (value) => {
    expect(() => parseReplaySpec(value)).toThrow(new InvalidArgumentError('N is too large: use last:N with N of at most 9007199254740991 (e.g. last:3).'));
  });

  it.each([
    [parseBudget, '200', 200],
    [parseBudget, '5500', 5500],
    [parseNumber, '0.7', 0.7],
    [parseNumber, '-1', -1],
    [parseNumber, '.5', 0.5],
    [parseNumber, '1e-3', 0.001],
    [parseNumber, '+2', 2],
    [parseInteger, '42', 42],
    [parseInteger, '-1', -1],
    [parsePositiveInteger, '4096', 4096],
  ] as const)('%o(%s) → %s', (parse, value, expected) => {
    expect(parse(value)).toBe(expected);
  });

  it.each([
    [parseBudget, '199'],
    [parseBudget, '5e3'],
    [parseBudget, 'lots'],
    [parseNumber, ''],
    [parseNumber, 'warm'],
    [parseNumber, '0x10'],
    [parseNumber, 'Infinity'],
    [parseNumber, '0b1'],
    [parseInteger, '1.5'],
    [parsePositiveInteger, '0'],
  ] as const)('%o rejects %j', (parse, value) => {
    expect(() => parse(value)).toThrow(InvalidArgumentError);
  });
});

describe('a number past what is held exactly', () => {
  const largest = String(Number.MAX_SAFE_INTEGER);
  it.each([
    [parseCount, '999999999999999999999', 'it is too large: the largest is 9007199254740991.'],
    [parseCount, '9007199254740992', 'it is too large: the largest is 9007199254740991.'],
    [parseBudget, '999999999999999999999', 'it is too large: the largest is 9007199254740991.'],
    [parseInteger, '999999999999999999999', 'it is too large: the largest is 9007199254740991.'],
    [parseInteger, '-999999999999999999999', 'it is too small: the smallest is -9007199254740991.'],
    [parsePositiveInteger, '999999999999999999999', 'it is too large: the largest is 9007199254740991.'],
    // A flag that takes no negative number gives its own rule for a huge one, not a smallest it never takes.
    [parseCount, '-999999999999999999999', 'use a whole number, 0 or more.'],
    [parsePositiveInteger, '-999999999999999999999', 'use a whole number of 1 or more.'],
    [parseBudget, '-999999999999999999999', 'use a whole number of characters, at least 200.'],
    [parsePositiveInteger, 'abc', 'use a whole number of 1 or more.'],
    [parseCount, '-1', 'use a whole number, 0 or more.'],
    [parseCount, '1e3', 'use a whole number, 0 or more.'],
  ] as const)('%o(%s) says %j', (parse, value, message) => {
    expect(() => parse(value)).toThrow(new InvalidArgumentError(message));
  });

  it.each([parseCount, parseInteger, parsePositiveInteger, parseBudget])('%o takes the largest itself', (parse) => {
    expect(parse(largest)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
