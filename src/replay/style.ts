import { shownWord } from '../errors.js';
import { codePoints } from './budget.js';
import { containsPhrase, readWords } from './phrases.js';
import { PolicyError } from './policy.js';
import type { StylePolicy } from './policy.js';
import type { Verbosity } from './types.js';

export type ResolvedVerbosity = Exclude<Verbosity, 'auto'>;

/** `auto` asks for a long answer when the input asks for detail or is itself long. */
export function resolveVerbosity(setting: Verbosity, input: string, rules: StylePolicy['verbosity']): ResolvedVerbosity {
  if (setting !== 'auto') return setting;
  if (codePoints(input) >= rules.longInputChars || input.trim().includes('\n')) return 'long';
  return containsPhrase(readWords(input), rules.longPhrases) ? 'long' : 'short';
}

/** The style instructions in prompt order: mode, persona, verbosity. */
export function styleInstructions(
  style: StylePolicy,
  choice: { mode: string | null; persona: string; verbosity: ResolvedVerbosity },
): string[] {
  const instructions: string[] = [];
  if (choice.mode !== null) instructions.push(lookup(style.modes, choice.mode, 'mode'));
  instructions.push(lookup(style.personas, choice.persona, 'persona'));
  instructions.push(style.verbosity[choice.verbosity]);
  return instructions.filter((text) => text.trim() !== '');
}

function lookup(table: Record<string, string>, name: string, what: 'mode' | 'persona'): string {
  const text = Object.hasOwn(table, name) ? table[name] : undefined;
  if (text === undefined) throw new PolicyError(what, unknownStyleMessage(table, name, what));
  return text;
}

/**
 * Why a mode or persona name cannot be used, or null when it can. `quote` says the name in the
 * message (config.json's values are given by their type when they look like a token).
 */
export function checkStyleChoice(style: StylePolicy, choice: { mode: string | null; persona: string }, quote = quotedStyleName): PolicyError | null {
  if (choice.mode !== null && !Object.hasOwn(style.modes, choice.mode)) {
    return new PolicyError('mode', unknownStyleMessage(style.modes, choice.mode, 'mode', quote));
  }
  if (!Object.hasOwn(style.personas, choice.persona)) {
    return new PolicyError('persona', unknownStyleMessage(style.personas, choice.persona, 'persona', quote));
  }
  return null;
}

const SHOWN_NAME_MAX = 64;

/** A mode or persona name as a message quotes it: a client may send one of megabytes, so its head. */
export function quotedStyleName(name: string): string {
  const shown = name.length > SHOWN_NAME_MAX ? `${name.slice(0, /[\ud800-\udbff]/.test(name.charAt(SHOWN_NAME_MAX - 1)) ? SHOWN_NAME_MAX - 1 : SHOWN_NAME_MAX)}…` : name;
  return JSON.stringify(shown);
}

/** The names of a table of modes or personas, sorted, as a message lists them. */
export function knownStyleNames(table: Record<string, string>): string[] {
  return Object.keys(table).sort().map(shownWord);
}

function unknownStyleMessage(table: Record<string, string>, name: string, what: string, quote = quotedStyleName): string {
  return `unknown ${what} ${quote(name)} (known: ${knownStyleNames(table).join(', ')}); add it under "${what}s" in config.json`;
}
