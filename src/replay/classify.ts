import { headUnits } from './budget.js';
import { containsPhrase, firstWord, inWordList, readWords } from './phrases.js';
import type { ReplayPolicy } from './policy.js';
import type { EntryType } from './types.js';

type ClassifyRules = ReplayPolicy['classify'];

/** Changes whenever the same rules start giving another type to some prompt (see rulesFingerprint). */
const WORD_READING = 3;

const ENDS_WITH_QUESTION_MARK = /[?\uff1f]["'\u201d\u2019)\]]*\s*$/u;

/** Precedence when several rules match: meta > correction > question > instruction > other. */
export function classifyEntry(prompt: string, rules: ClassifyRules): EntryType {
  const read = readWords(prompt);
  if (containsPhrase(read, rules.meta)) return 'meta';
  if (containsPhrase(read, rules.correction)) return 'correction';
  const words = read.text;
  // "What's", "how'd": the wh-word before a contraction still opens the question.
  const first = firstWord(words);
  const apostrophe = first.indexOf("'");
  const opener = apostrophe === -1 ? first : first.slice(0, apostrophe);
  if (ENDS_WITH_QUESTION_MARK.test(prompt) || inWordList(opener, rules.questionOpeners)) {
    return 'question';
  }
  if (inWordList(firstWord(skipPolitePrefixes(words, rules.politePrefixes)), rules.instructionVerbs)) {
    return 'instruction';
  }
  return 'other';
}

function skipPolitePrefixes(words: string, prefixes: readonly string[]): string {
  let rest = words;
  for (;;) {
    const head = firstWord(rest);
    if (head === '' || !inWordList(head, prefixes)) return rest;
    rest = rest.slice(head.length + 1);
  }
}

/**
 * The part of a prompt its type and reason are read from: the first `typedChars` code points (the
 * words typed, when piped text follows them), or all of it. Piped text is material (a document, a
 * diff), not the question: its last "?" or an "actually" in it says nothing of what was asked.
 */
export function typedPart(prompt: string, typedChars: number | undefined): string {
  return typedChars === undefined ? prompt : prompt.slice(0, headUnits(prompt, typedChars));
}

/**
 * Identifies a set of classification rules, so a type computed earlier (and cached in the session
 * index) is reused only while the rules that produced it are still in force.
 */
export function rulesFingerprint(rules: ClassifyRules): string {
  // cyrb53: a fast 53-bit string hash; collisions between two real rule sets are not a practical concern.
  // The leading version names how words are read: a type cached under an earlier reading (words
  // split at combining marks, word lists compared as written, `*` blind to symbol tokens) is
  // classified again.
  const text = `${WORD_READING}\n${JSON.stringify(rules)}`;
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}
