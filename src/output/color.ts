// Whether Argo colours its output, decided in one place from the flag, the environment and the
// stream. Precedence, most specific first:
//   1. `--color always|never` (`--no-color` is `never`): the user asked for this run.
//   2. NO_COLOR, any non-empty value (no-color.org): colour off.
//   3. FORCE_COLOR: `0` or `false` turns colour off; `1`, `2`, `3` pick that depth; any other
//      non-empty value turns it on. An empty value is ignored, as NO_COLOR's is.
//   4. Otherwise colour only on a terminal, and not when TERM is `dumb`.
// The level is chalk's: 0 none, 1 basic 16 colours, 2 256 colours, 3 truecolor.
import { UsageError } from '../errors.js';

export const COLOR_MODES = ['auto', 'always', 'never'] as const;
export type ColorMode = (typeof COLOR_MODES)[number];
export type ColorLevel = 0 | 1 | 2 | 3;

export interface ColorInputs {
  mode: ColorMode;
  env: { NO_COLOR?: string | undefined; FORCE_COLOR?: string | undefined; TERM?: string | undefined };
  isTTY: boolean;
  /** The depth the terminal supports when colour is on and nothing forces one (default 1). */
  terminalLevel?: 1 | 2 | 3;
}

function forcedLevel(value: string | undefined): ColorLevel | 'on' | undefined {
  if (value === undefined || value === '') return undefined;
  if (value === '0' || value.toLowerCase() === 'false') return 0;
  if (value === '1' || value === '2' || value === '3') return Number(value) as ColorLevel;
  return 'on';
}

export function colorLevel(inputs: ColorInputs): ColorLevel {
  const onTerminal = inputs.terminalLevel ?? 1;
  const forced = forcedLevel(inputs.env.FORCE_COLOR);
  const depth = forced === undefined || forced === 'on' || forced === 0 ? onTerminal : forced;
  if (inputs.mode === 'never') return 0;
  if (inputs.mode === 'always') return depth;
  if (inputs.env.NO_COLOR !== undefined && inputs.env.NO_COLOR !== '') return 0;
  if (forced !== undefined) return forced === 0 ? 0 : depth;
  return inputs.isTTY && inputs.env.TERM !== 'dumb' ? onTerminal : 0;
}

/** The `--color` flag's value; `--no-color` reaches here as `false`. */
export function parseColorMode(value: string | boolean | undefined): ColorMode {
  if (value === undefined || value === true) return 'auto';
  if (value === false) return 'never';
  if ((COLOR_MODES as readonly string[]).includes(value)) return value as ColorMode;
  throw new UsageError(`--color must be auto, always or never, got ${JSON.stringify(value)}: for example --color never (or --no-color)`);
}
