// Pure: what the words of a bare `argo …` mean before they are sent to a model as a prompt.
import type { Option } from 'commander';
import { inWordList, normaliseWords } from '../replay/phrases.js';
import { DEFAULT_REPLAY_POLICY } from '../replay/policy.js';
import { similarNames } from '../text/similar.js';

export type WordsVerdict =
  | { kind: 'prompt' }
  /** `command`: the command's words (`sessions show`), null for argo's own help. */
  | { kind: 'help'; command: string | null }
  | { kind: 'typo'; word: string; suggestions: string[] };

/**
 * `argo help`, `argo help logs` and `argo help sessions show` show help; a lone word a small edit
 * away from a command name (`argo sesions`) is taken for a typo rather than a question, unless it
 * is a word that opens a question (`echo "$error" | argo what`). Words after `--` are always a
 * prompt, and so is `help` followed by anything else (`argo help me write a poem`).
 */
export function judgeWords(words: readonly string[], afterDoubleDash: boolean, commands: readonly string[], subcommandsOf: (command: string) => readonly string[] = () => []): WordsVerdict {
  if (afterDoubleDash) return { kind: 'prompt' };
  const [first, second, ...rest] = words;
  if (first === 'help' && rest.length === 0 && (second === undefined || commands.includes(second))) {
    return { kind: 'help', command: second ?? null };
  }
  if (first === 'help' && second !== undefined && commands.includes(second) && rest.length === 1 && subcommandsOf(second).includes(rest[0] ?? '')) {
    return { kind: 'help', command: `${second} ${rest[0] ?? ''}` };
  }
  if (first === undefined || second !== undefined || first.startsWith('-')) return { kind: 'prompt' };
  // The classifier's question words, as it has them by default: settings are not read yet.
  if (inWordList(normaliseWords(first), DEFAULT_REPLAY_POLICY.classify.questionOpeners)) return { kind: 'prompt' };
  const suggestions = similarNames(first, [...commands, 'help']);
  return suggestions.length === 0 ? { kind: 'prompt' } : { kind: 'typo', word: first, suggestions };
}

/** The one-line refusal for a typo, with the way to send the word anyway. */
export function typoMessage(verdict: { word: string; suggestions: readonly string[] }): string {
  const names = verdict.suggestions.map((name) => `"${name}"`).join(' or ');
  return `unknown command "${verdict.word}" (did you mean ${names}?); to ask the model, run: argo -- ${verdict.word}`;
}

/** What the scan below needs to know of one of argo's own options. */
export type OptionShape = Pick<Option, 'short' | 'long' | 'required' | 'optional'>;

/**
 * Whether a `--` ends argo's own options, so that every word after it is the prompt (`argo -m x --
 * stop` asks about "stop"): true when only argo's options, with their values, come before it. A word
 * that is no option (a command's name, the prompt's first word) or an unknown option ends the scan,
 * and commander reads the rest as before (`argo rerun -- -xY3…` gives the id to rerun). This reads
 * options the way commander's parseOptions does, but without setting them: commander itself would
 * hand a command's name after `--` to that command.
 */
export function endsOptions(words: readonly string[], options: readonly OptionShape[]): boolean {
  const find = (flag: string): OptionShape | undefined => options.find((option) => option.short === flag || option.long === flag);
  for (let at = 0; at < words.length; at++) {
    const word = words[at] ?? '';
    if (word === '--') return true;
    if (word.length < 2 || !word.startsWith('-')) return false;
    const option = word.startsWith('--') ? longOption(word, find) : lastOfGroup(word.slice(1), find);
    if (option === undefined) return false;
    // An option that takes a value takes the next word (one that takes it optionally: unless an option).
    if (option !== 'whole' && (option.required || (option.optional && !(words[at + 1] ?? '-').startsWith('-')))) at++;
  }
  return false;
}

/** A word commander reads as a negative number, a prompt word however it starts (`what is -5 plus 2`). */
const NEGATIVE_NUMBER = /^-\d*\.?\d+(?:e[+-]?\d+)?$/;

/**
 * The first of argo's options written between two words of the prompt (`argo what does -s mean in
 * ls`), and the line that asks it: argo's other options (before the prompt, or after all of it)
 * then `--` and the prompt's words as typed, that option among them. Null when there is none.
 * Commander reads options anywhere on the line, so such a word would leave the prompt in silence
 * ("what does in ls") and set the option (a session "mean"). An unknown option ends the scan
 * (commander refuses it).
 */
export function optionAmidPrompt(words: readonly string[], options: readonly OptionShape[]): { option: string; options: string[]; prompt: string[] } | null {
  const find = (flag: string): OptionShape | undefined => options.find((option) => option.short === flag || option.long === flag);
  // The line in pieces: an option with its value, or a prompt word.
  const pieces: { words: string[]; prompt: boolean }[] = [];
  for (let at = 0; at < words.length; at++) {
    const word = words[at] ?? '';
    if (word === '--') {
      pieces.push(...words.slice(at + 1).map((rest) => ({ words: [rest], prompt: true })));
      break;
    }
    if (word.length < 2 || !word.startsWith('-') || NEGATIVE_NUMBER.test(word)) {
      pieces.push({ words: [word], prompt: true });
      continue;
    }
    const option = word.startsWith('--') ? longOption(word, find) : lastOfGroup(word.slice(1), find);
    if (option === undefined) return null;
    const takesNext = option !== 'whole' && (option.required || (option.optional && !(words[at + 1] ?? '-').startsWith('-')));
    pieces.push({ words: takesNext ? [word, words[++at] ?? ''] : [word], prompt: false });
  }
  const first = pieces.findIndex((piece) => piece.prompt);
  const last = pieces.findLastIndex((piece) => piece.prompt);
  const amid = pieces.slice(first + 1, last).find((piece) => !piece.prompt);
  if (first === -1 || amid === undefined) return null;
  return {
    option: amid.words[0] ?? '',
    options: [...pieces.slice(0, first), ...pieces.slice(last + 1)].flatMap((piece) => piece.words),
    prompt: pieces.slice(first, last + 1).flatMap((piece) => piece.words),
  };
}

/** `--name` (the option), `--name=value` ('whole': its value is in the word), or undefined when unknown. */
function longOption(word: string, find: (flag: string) => OptionShape | undefined): OptionShape | 'whole' | undefined {
  const equals = word.indexOf('=');
  if (equals === -1) return find(word);
  const option = find(word.slice(0, equals));
  return option !== undefined && (option.required || option.optional) ? 'whole' : undefined;
}

/**
 * `-q`, `-qT fs`, `-mllama3`: short flags run together, as commander reads them: the first that
 * takes a value takes the rest of the word, or the next word when it is the last letter.
 */
function lastOfGroup(letters: string, find: (flag: string) => OptionShape | undefined): OptionShape | 'whole' | undefined {
  for (let at = 0; at < letters.length; at++) {
    const option = find(`-${letters[at] ?? ''}`);
    if (option === undefined) return undefined;
    if (at === letters.length - 1) return option;
    if (option.required || option.optional) return 'whole';
  }
  return 'whole';
}
