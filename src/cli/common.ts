// What `argo logs` and `argo sessions` share: settings, colours, confirmation, commander plumbing.
import chalk, { Chalk } from 'chalk';
import type { ChalkInstance } from 'chalk';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { Settings, TurnSetting } from '../config/settings.js';
import { settingsFor } from './settings.js';
import { askOnTerminal, isYes } from './answers.js';
import { UsageError } from '../errors.js';
import { colorLevel, parseColorMode } from '../output/color.js';
import type { OutputFlags } from './output-flags.js';
import { jsonTextFor, untrustedTextFor } from '../output/terminal-text.js';
import { widthOfStream } from '../output/width.js';
import type { Io } from './io.js';
import { pointHelpAt } from './usage-output.js';
import { refuseTooLarge } from './parse.js';

/** The help of --since and --until, wherever a command filters turns by time (one parser reads them all). */
export const SINCE_HELP = 'from this time on: 30m, 3h, 2d, 1w, 2025-01-31, 2025-01-31T14:00, today';
export const UNTIL_HELP = 'up to this time (a bare date includes that whole day)';

/**
 * Settings for a command that asks nothing itself (history, memo, tools); `--home` may be given to it
 * or to any command above it. `uses`: the turn settings it reads, none by default, so a bad
 * ARGO_SESSION, ARGO_REPLAY or ARGO_MODEL does not stop it.
 */
export function settingsOf(command: Command, uses: readonly TurnSetting[] = []): Settings {
  const { home } = command.optsWithGlobals<{ home?: string }>();
  return settingsFor(home !== undefined ? { home } : {}, uses);
}

/**
 * main.ts configures error output and exit handling on the program after the commands are
 * registered; nested commands copy those settings when they are dispatched, so their usage errors
 * read "argo: …" and exit 2 like every other.
 */
export function inheritProgramSettings(program: Command, command: Command): void {
  const copy = (target: Command): void => {
    target.copyInheritedSettings(program);
    pointHelpAt(target, false);
    // Options before a nested command belong to its parent, after it to itself.
    target.enablePositionalOptions();
    for (const sub of target.commands) copy(sub);
  };
  program.hook('preSubcommand', (_program, sub) => {
    if (sub !== command) return;
    copy(command);
    // Its own action rejects stray words itself, naming the subcommands (see rejectStrayWords).
    command.allowExcessArguments(true);
  });
}

/** `argo sessions shw x`: say which subcommands exist rather than "too many arguments". */
export function rejectStrayWords(command: Command): void {
  const [word] = command.args;
  if (word === undefined) return;
  const names = command.commands.map((sub) => sub.name());
  if (names.length === 0) throw new UsageError(`"${command.name()}" takes no word like "${word}" (argo ${command.name()} --help)`);
  throw new UsageError(`unknown command "${command.name()} ${word}"; use one of: ${names.join(', ')} (argo ${command.name()} --help)`);
}

/** The colours for stdout: decided by output/color.ts from the flags, NO_COLOR, FORCE_COLOR and the stream. */
export function colorsFor(io: Io, flags: OutputFlags = {}): ChalkInstance {
  const level = colorLevel({
    mode: parseColorMode(flags.color),
    env: process.env,
    isTTY: io.stdout.isTTY === true,
    // chalk knows the terminal's depth (256 colours, truecolor); whether to colour is decided above.
    terminalLevel: chalk.level === 0 ? 1 : chalk.level,
  });
  return new Chalk({ level });
}

/** How JSON is printed on stdout: controls escaped as \uXXXX on a terminal unless --raw, byte-exact when piped. */
export function jsonFor(io: Io, flags: OutputFlags): (json: string) => string {
  return jsonTextFor(io.stdout, { raw: flags.raw === true });
}

/** How text Argo did not write is printed on stdout: neutralized on a terminal unless --raw. */
export function untrustedFor(io: Io, flags: OutputFlags): (text: string) => string {
  return untrustedTextFor(io.stdout, { raw: flags.raw === true });
}

/** The width tables are cut to (output/width.ts: COLUMNS, else the terminal's); read it again for each row. */
export function widthOf(io: Io): number | null {
  return widthOfStream(io.stdout, process.env);
}

/**
 * Asks before deleting history: y/N on a terminal, `--yes` to skip; without a terminal and without
 * `--yes`, a usage error rather than a silent no.
 */
export async function confirm(io: Io, question: string, yes: boolean | undefined, command: string): Promise<boolean> {
  if (yes) return true;
  if (!io.isInteractive) throw new UsageError(`${command} deletes history: pass --yes to confirm (there is no terminal to ask on)`);
  return isYes(await askOnTerminal(io, `${question} [y/N] `));
}

export function parseCount(value: string): number {
  refuseTooLarge(value);
  const count = Number(value);
  if (/^\d+$/.test(value) && Number.isSafeInteger(count)) return count;
  throw new InvalidArgumentError('use a whole number, 0 or more.');
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 ** 3) return `${(bytes / 1024 ** 2).toFixed(1)} MB`;
  return `${(bytes / 1024 ** 3).toFixed(2)} GB`;
}

