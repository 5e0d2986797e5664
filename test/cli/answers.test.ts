import { describe, expect, it } from 'vitest';
import { isYes } from '../../src/cli/answers.js';

describe('isYes: what a typed answer to a [y/N] question means', () => {
  it.each<[string, boolean]>([
    ['y', true],
    ['Y', true],
    ['yes', true],
    [' Yes ', true],
    ['YES\n', true],
    ['', false],
    ['n', false],
    ['no', false],
    ['ye', false],
    ['yes please', false],
    ['yy', false],
  ])('%j → %s', (answer, yes) => {
    expect(isYes(answer)).toBe(yes);
  });
});
