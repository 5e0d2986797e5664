import braces from 'braces';
import { describe, expect, it } from 'vitest';
import { braceExpansionCount } from '../../src/tools/brace-count.js';

describe('braceExpansionCount', () => {
  // Small enough to expand: the count is the number of patterns braces itself makes.
  it.each([
    ['**/*', 1],
    ['*.{ts,js}', 2],
    ['src/{a,b,c}/**/*.{ts,tsx,js,jsx}', 12],
    ['{a,{b,c}}x{1..3}', 9],
    ['{a,b}{c,d}', 4],
    ['{a{b,c}}', 2],
    ['{,a}', 2],
    ['{a..e}', 5],
    ['{0..100..10}', 11],
    ['{a..c}{x,}', 6],
    // Left as written by braces: one pattern each.
    ['{a}', 1],
    ['{}', 1],
    ['a{b', 1],
    ['a}b{', 1],
    ['${a,b}', 1],
    ['\\{a,b\\}', 1],
  ])('%s is %i pattern(s), as braces expands it', async (pattern, count) => {
    expect(await braceExpansionCount(pattern, 100)).toBe(count);
    expect(braces(pattern, { expand: true })).toHaveLength(count);
  });

  // Too many to expand: counting stops one past the most.
  it.each([
    ['{a,b}'.repeat(21), 101],
    ['{a,b}'.repeat(7), 101],
    [`{${'x,'.repeat(100)}x}`, 101],
    ['{1..100000}', 101],
    ['{a,b}{1..1000000}', 101],
    ['{' + '{a,b}'.repeat(10) + ',c}', 101],
  ])('%s is past 100', async (pattern, count) => {
    expect(await braceExpansionCount(pattern, 100)).toBe(count);
  });

  it('100 patterns exactly is not past 100', async () => {
    expect(await braceExpansionCount('{0..9}{0..9}', 100)).toBe(100);
    expect(await braceExpansionCount('{0..9}{0..9}{a,b}', 100)).toBe(101);
  });
});
