// How commander's usage errors read: one line, prefixed, naming the help of the command that refused.
import type { Command } from 'commander';
import { untrustedTextFor } from '../output/terminal-text.js';
import { TURN_ID_LENGTH } from './io.js';

/** Older logs hold turn ids that start with "-"; typed bare, commander reads one as an option. */
function idHint(error: string): string {
  const word = new RegExp(`unknown option '(-[A-Za-z0-9_][A-Za-z0-9_-]{${TURN_ID_LENGTH - 2}})'`).exec(error)?.[1];
  return word === undefined ? '' : `; if it is a turn id, put "--" before it (argo rerun -- ${word})`;
}

/**
 * Commander's `(Did you mean --json?)` or `(Did you mean one of --a, --b?)` as Argo's own
 * suggestions read: `(did you mean "--json"?)`, `(did you mean "--a" or "--b"?)`.
 */
function ourSuggestion(text: string): string {
  return text.replace(/\(Did you mean (?:one of )?([^?]*)\?\)/, (_whole, names: string) => `(did you mean ${names.split(', ').map((name) => `"${name}"`).join(' or ')}?)`);
}

/**
 * A question's unknown option with nothing like it among argo's (`argo what is tar -xf`) may be the
 * prompt's: how to send it as such.
 */
function promptHint(error: string): string {
  const word = /unknown option '(-[^']*)'$/.exec(error.trimEnd())?.[1];
  return word === undefined ? '' : `; if it is part of the prompt, quote the prompt or put it after -- (argo -- "… ${word} …")`;
}

/**
 * A usage error as one line, as every error, pointing at the help that lists what `command` takes.
 * Commander quotes the value it refused as typed: on a terminal (`stream`, where it is written) its
 * controls are shown, not obeyed, as in every other error. `question`: the command is argo's own,
 * whose words are a prompt.
 */
export function usageErrorOutput(command: string, stream: { isTTY?: boolean } = process.stderr, question = false): (text: string, write: (text: string) => void) => void {
  return (text, write) => {
    const hint = idHint(text) || (question ? promptHint(text) : '');
    const line = `${ourSuggestion(text.replace(/^error: /, '').trimEnd().replace(/\s*[\n\v\f\r\x85\u2028\u2029]\s*/g, ' '))}${hint}`;
    write(`argo: ${untrustedTextFor(stream)(line)} (see ${command} --help)\n`);
  };
}

/** `argo logs --bogus` points at `argo logs --help`, which lists what logs takes (and so for its subcommands, unless `nested` is false). */
export function pointHelpAt(command: Command, nested = true): void {
  const path: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) path.unshift(at.name());
  command.configureOutput({ outputError: usageErrorOutput(path.join(' ')) });
  if (nested) for (const sub of command.commands) pointHelpAt(sub);
}
