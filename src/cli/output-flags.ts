// The output options every command takes. Kept apart from common.ts (which loads chalk and
// readline) so a plain question does not load them.
import type { Command } from 'commander';
import { parseColorMode } from '../output/color.js';

export interface OutputFlags {
  color?: string | boolean;
  raw?: boolean;
}

/** `--color auto|always|never`, `--no-color` and `--raw`, added to `command` and every command under it. */
export function addOutputOptions(command: Command): void {
  const names = new Set(command.options.map((option) => option.long));
  if (!names.has('--color')) {
    command
      .option('--color <when>', 'colour: auto (on a terminal, the default), always or never; NO_COLOR and FORCE_COLOR are honoured')
      .option('--no-color', 'same as --color never')
      .option('--raw', 'print logged and model text as is, control characters included, even on a terminal');
  }
  for (const sub of command.commands) addOutputOptions(sub);
}

/** A bad `--color` value is a usage error, whatever the command (checked before its action runs). */
export function checkOutputFlags(flags: OutputFlags): void {
  parseColorMode(flags.color);
}
