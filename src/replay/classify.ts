import { containsPhrase, firstWord, normaliseWords } from './phrases.js';
import type { ReplayPolicy } from './policy.js';
import type { EntryType } from './types.js';

type ClassifyRules = ReplayPolicy['classify'];

const ENDS_WITH_QUESTION_MARK = /[?\uff1f]["'\u201d\u2019)\]]*\s*$/u;

/** Precedence when several rules match: meta > correction > question > instruction > other. */
export function classifyEntry(prompt: string, rules: ClassifyRules): EntryType {
  const words = normaliseWords(prompt);
  if (containsPhrase(words, rules.meta)) return 'meta';
  if (containsPhrase(words, rules.correction)) return 'correction';
  // "What's", "how'd": the wh-word before a contraction still opens the question.
  const opener = firstWord(words).split("'")[0] ?? '';
  if (ENDS_WITH_QUESTION_MARK.test(prompt) || rules.questionOpeners.includes(opener)) {
    return 'question';
  }
  if (rules.instructionVerbs.includes(firstWord(skipPolitePrefixes(words, rules.politePrefixes)))) {
    return 'instruction';
  }
  return 'other';
}

function skipPolitePrefixes(words: string, prefixes: readonly string[]): string {
  let rest = words;
  for (;;) {
    const head = firstWord(rest);
    if (head === '' || !prefixes.includes(head)) return rest;
    rest = rest.slice(head.length + 1);
  }
}
