import { describe, expect, it } from 'vitest';
import { plural } from '../../src/output/count.js';

describe('plural', () => {
  it.each<[number, string, string | undefined, string]>([
    [0, 'turn', undefined, '0 turns'],
    [1, 'turn', undefined, '1 turn'],
    [2, 'turn', undefined, '2 turns'],
    [1, 'entry', 'entries', '1 entry'],
    [3, 'entry', 'entries', '3 entries'],
  ])('%i %s', (count, word, many, said) => {
    expect(plural(count, word, many)).toBe(said);
  });
});
