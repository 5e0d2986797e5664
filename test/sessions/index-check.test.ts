// The index reader's own check (isIndexLine) must give IndexLineSchema's verdict on every line.
import { describe, expect, it } from 'vitest';
import { disagreements } from '../support/schema-agreement.js';
import { IndexLineSchema } from '../../src/sessions/index-schema.js';
import { isIndexLine, parseIndexLine } from '../../src/sessions/turn-index.js';

const line = { id: 'abc', file: '2025-01-02.log', offset: 0, length: 10, status: 'ok', type: 'question', rules: 'r1' };

const PROBES: unknown[] = [
  undefined,
  null,
  true,
  0,
  -0,
  -1,
  1,
  1.5,
  2 ** 53,
  Infinity,
  Number.NaN,
  '',
  'x',
  'ok',
  'error',
  'question',
  'meta',
  '2025-01-02.log',
  '../2025-01-02.log',
  'logs/2025-01-02.log',
  '2025-01-02.txt',
  [],
  ['ok'],
  {},
];

describe('the index line check agrees with the schema', () => {
  it(`gives zod's verdict for each of ${Object.keys(line).length * PROBES.length} single-field changes`, () => {
    expect(disagreements(line, PROBES, isIndexLine, IndexLineSchema)).toEqual([]);
  });

  it.each([['a line', line, true], ['without rules', { ...line, rules: undefined }, true], ['an array', [line], false], ['a string', 'x', false], ['null', null, false]])(
    '%s',
    (_name, value, ok) => {
      expect(IndexLineSchema.safeParse(value).success).toBe(ok);
      expect(isIndexLine(value)).toBe(ok);
    },
  );

  it('reads a line, sharing the repeated file name and rules between lines', () => {
    const first = parseIndexLine(JSON.stringify(line));
    const second = parseIndexLine(JSON.stringify({ ...line, id: 'def' }));
    expect(first).toEqual(line);
    expect(second?.file).toBe(first?.file);
    expect(parseIndexLine('{"id":')).toBeNull();
    expect(parseIndexLine(JSON.stringify({ ...line, length: 0 }))).toBeNull();
  });
});
