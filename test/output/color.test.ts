import { describe, expect, it } from 'vitest';
import { colorLevel, parseColorMode } from '../../src/output/color.js';
import type { ColorInputs, ColorMode } from '../../src/output/color.js';
import { UsageError } from '../../src/errors.js';
import { thrown } from '../support/thrown.js';

type Env = ColorInputs['env'];
const tty = true;
const pipe = false;

describe('colorLevel: flag > NO_COLOR > FORCE_COLOR > terminal', () => {
  it.each<[string, ColorMode, Env, boolean, number]>([
    ['auto on a terminal', 'auto', {}, tty, 2],
    ['auto through a pipe', 'auto', {}, pipe, 0],
    ['auto on a dumb terminal', 'auto', { TERM: 'dumb' }, tty, 0],
    ['NO_COLOR=1 on a terminal', 'auto', { NO_COLOR: '1' }, tty, 0],
    ['NO_COLOR=0 is still set (any non-empty value)', 'auto', { NO_COLOR: '0' }, tty, 0],
    ['NO_COLOR empty is ignored', 'auto', { NO_COLOR: '' }, tty, 2],
    ['FORCE_COLOR=1 through a pipe', 'auto', { FORCE_COLOR: '1' }, pipe, 1],
    ['FORCE_COLOR=3 through a pipe', 'auto', { FORCE_COLOR: '3' }, pipe, 3],
    ['FORCE_COLOR=true through a pipe', 'auto', { FORCE_COLOR: 'true' }, pipe, 2],
    ['FORCE_COLOR=0 on a terminal', 'auto', { FORCE_COLOR: '0' }, tty, 0],
    ['FORCE_COLOR=false on a terminal', 'auto', { FORCE_COLOR: 'false' }, tty, 0],
    ['FORCE_COLOR empty is ignored', 'auto', { FORCE_COLOR: '' }, pipe, 0],
    ['FORCE_COLOR on a dumb terminal', 'auto', { FORCE_COLOR: '1', TERM: 'dumb' }, pipe, 1],
    ['NO_COLOR beats FORCE_COLOR', 'auto', { NO_COLOR: '1', FORCE_COLOR: '3' }, tty, 0],
    ['--color always through a pipe', 'always', {}, pipe, 2],
    ['--color always beats NO_COLOR', 'always', { NO_COLOR: '1' }, pipe, 2],
    ['--color always beats FORCE_COLOR=0', 'always', { FORCE_COLOR: '0' }, pipe, 2],
    ['--color always keeps a forced depth', 'always', { FORCE_COLOR: '3' }, pipe, 3],
    ['--color never on a terminal', 'never', {}, tty, 0],
    ['--color never beats FORCE_COLOR', 'never', { FORCE_COLOR: '3' }, tty, 0],
  ])('%s → level %i', (_label, mode, env, isTTY, level) => {
    expect(colorLevel({ mode, env, isTTY, terminalLevel: 2 })).toBe(level);
  });

  it('uses basic colours when the terminal depth is unknown', () => {
    expect(colorLevel({ mode: 'auto', env: {}, isTTY: true })).toBe(1);
  });
});

describe('parseColorMode', () => {
  it.each<[string | boolean | undefined, ColorMode]>([
    [undefined, 'auto'],
    [true, 'auto'],
    [false, 'never'], // --no-color
    ['auto', 'auto'],
    ['always', 'always'],
    ['never', 'never'],
  ])('%j → %s', (value, mode) => {
    expect(parseColorMode(value)).toBe(mode);
  });

  it.each(['yes', 'ALWAYS', ''])('%j is a usage error naming the value', (value) => {
    const error = thrown(() => parseColorMode(value));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(`--color must be auto, always or never, got ${JSON.stringify(value)}: for example --color never (or --no-color)`);
  });
});
