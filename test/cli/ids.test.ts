import { describe, expect, it } from 'vitest';
import { TURN_ID_LENGTH, newTurnId } from '../../src/cli/io.js';

describe('turn ids', () => {
  it('never start with "-", which a command line would read as an option: such a draw is drawn again', () => {
    const draws = ['-abcdefghijk', '-_bcdefghijk', '_bcdefghijkl'];
    const sizes: number[] = [];
    expect(newTurnId((size) => (sizes.push(size), draws.shift() ?? ''))).toBe('_bcdefghijkl');
    expect(sizes).toEqual([TURN_ID_LENGTH, TURN_ID_LENGTH, TURN_ID_LENGTH]);
  });

  it('real ids are URL-safe and start with a letter, a digit or "_" (1,000 drawn: about 16 would have started with "-")', () => {
    const ids = Array.from({ length: 1000 }, () => newTurnId());
    expect(ids.filter((id) => !/^[A-Za-z0-9_][A-Za-z0-9_-]{11}$/.test(id))).toEqual([]);
  });
});
