import { describe, expect, it } from 'vitest';
import { outputWidth } from '../../src/output/width.js';

const tty = true;
const pipe = false;

describe('outputWidth: a set COLUMNS > the terminal > none', () => {
  it.each<[string, string | undefined, boolean, number | undefined, number | null]>([
    ['a terminal', undefined, tty, 120, 120],
    ['a pipe', undefined, pipe, undefined, null],
    ['a pipe that reports columns (not a terminal)', undefined, pipe, 120, null],
    ['a terminal that reports no width', undefined, tty, undefined, null],
    ['a terminal that reports 0 columns', undefined, tty, 0, null],
    ['COLUMNS on a terminal wins over its width', '60', tty, 120, 60],
    ['COLUMNS sizes a pipe', '60', pipe, undefined, 60],
    ['COLUMNS with blanks around it', ' 60\n', pipe, undefined, 60],
    ['COLUMNS empty counts as unset', '', tty, 120, 120],
    ['COLUMNS 0 is ignored', '0', tty, 120, 120],
    ['COLUMNS negative is ignored', '-5', tty, 120, 120],
    ['COLUMNS not a number is ignored', 'wide', pipe, undefined, null],
    ['COLUMNS with a fraction is ignored', '80.5', tty, 100, 100],
    ['COLUMNS with a unit is ignored', '80px', tty, 100, 100],
    ['COLUMNS beyond a safe integer is ignored', '9'.repeat(20), tty, 100, 100],
  ])('%s', (_case, columnsEnv, isTTY, columns, expected) => {
    expect(outputWidth({ columnsEnv, isTTY, columns })).toBe(expected);
  });
});
