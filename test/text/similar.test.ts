import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, similarNames } from '../../src/text/similar.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['doctor', 'doctor', 0],
    ['doctr', 'doctor', 1],
    ['sesions', 'sessions', 1],
    ['lgos', 'logs', 1],
    ['chta', 'chat', 1],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
  ])('%s ↔ %s = %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('similarNames', () => {
  const names = ['chat', 'logs', 'last', 'sessions', 'doctor', 'rerun', 'completion'];
  it.each([
    ['sesions', ['sessions']],
    ['doctr', ['doctor']],
    ['lats', ['last']],
    ['Logs', []],
    ['log', ['logs']],
    ['why', []],
    ['hello', []],
    ['cat', ['chat']],
    ['completoin', ['completion']],
  ])('%s → %j', (word, expected) => {
    expect(similarNames(word, names)).toEqual(expected);
  });

  it('phrases the hint', () => {
    expect(didYouMean('doctr', ['doctor'])).toBe(' (did you mean "doctor"?)');
    expect(didYouMean('why', ['doctor'])).toBe('');
  });
});
