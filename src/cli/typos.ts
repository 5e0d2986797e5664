// Pure: what the words of a bare `argo …` mean before they are sent to a model as a prompt.
import { similarNames } from '../text/similar.js';

export type WordsVerdict =
  | { kind: 'prompt' }
  /** `command`: the command's words (`sessions show`), null for argo's own help. */
  | { kind: 'help'; command: string | null }
  | { kind: 'typo'; word: string; suggestions: string[] };

/**
 * `argo help`, `argo help logs` and `argo help sessions show` show help; a lone word a small edit
 * away from a command name (`argo sesions`) is taken for a typo rather than a question. Words after
 * `--` are always a prompt, and so is `help` followed by anything else (`argo help me write a poem`).
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
  const suggestions = similarNames(first, [...commands, 'help']);
  return suggestions.length === 0 ? { kind: 'prompt' } : { kind: 'typo', word: first, suggestions };
}

/** The one-line refusal for a typo, with the way to send the word anyway. */
export function typoMessage(verdict: { word: string; suggestions: readonly string[] }): string {
  const names = verdict.suggestions.map((name) => `"${name}"`).join(' or ');
  return `unknown command "${verdict.word}" (did you mean ${names}?); to ask the model, run: argo -- ${verdict.word}`;
}
