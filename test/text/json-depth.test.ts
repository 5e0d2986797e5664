import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src/text/json-depth.js';

describe('nestedDeeperThan: how deep a JSON value nests', () => {
  const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth)) as unknown;
  it.each<[string, () => unknown, number, boolean]>([
    // the value, the most levels allowed → deeper
    ['a string', () => 'x', 0, false],
    ['null', () => null, 0, false],
    ['{} at most 0', () => ({}), 0, true],
    ['{} at most 1', () => ({}), 1, false],
    ['objects and arrays mixed, 3 levels, at most 3', () => ({ a: [{ b: 1 }] }), 3, false],
    ['objects and arrays mixed, 3 levels, at most 2', () => ({ a: [{ b: 1 }] }), 2, true],
    ['wide but shallow', () => Array.from({ length: 10_000 }, () => ({ a: 1 })), 2, false],
    ['100 levels, at most 100', () => nested(100), MAX_JSON_DEPTH, false],
    ['101 levels, at most 100', () => nested(101), MAX_JSON_DEPTH, true],
    ['100,000 levels (no stack overflow)', () => nested(100_000), MAX_JSON_DEPTH, true],
  ])('%s', (_name, make, max, deeper) => {
    expect(nestedDeeperThan(make(), max)).toBe(deeper);
  });
});
