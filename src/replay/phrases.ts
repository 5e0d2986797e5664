// Phrase rules match whole words of normalised text, so "mistake" never fires inside "mistaken"
// and curly apostrophes count as straight ones.

// A word is letters, their combining marks and digits, with apostrophes kept only between them
// ("that's"): edge apostrophes are quotes. A mark is part of its letter ("क्या", a decomposed "ä"),
// never a break. The apostrophe runs are separators the letters cannot match, so the pattern never
// backtracks over more than one run.
const WORD = /[\p{L}\p{M}\p{N}]+(?:'+[\p{L}\p{M}\p{N}]+)*/gu;

// The same prompt is normalised by several rules in a row (style, classify, reason): keeping the
// last answer makes that one pass over the text, not three.
let last = { text: '', words: '' };

/**
 * Lower-cased words of `text` in composed form (NFC: a decomposed "a" and umlaut is "ä"),
 * apostrophes kept inside words ("that's"), joined by single spaces.
 */
export function normaliseWords(text: string): string {
  if (text !== last.text) {
    last = { text, words: (text.toLowerCase().normalize('NFC').replace(/[\u2018\u2019\u02bc]/g, "'").match(WORD) ?? []).join(' ') };
  }
  return last.words;
}

const wordSets = new WeakMap<readonly string[], ReadonlySet<string>>();

/**
 * Whether `word` (one of normaliseWords' words) is in `list`, whose entries are read the same way,
 * once per list: "Explain" in config.json is "explain". An entry with no word in it matches nothing.
 */
export function inWordList(word: string, list: readonly string[]): boolean {
  let set = wordSets.get(list);
  if (set === undefined) {
    set = new Set(list.map((entry) => normaliseWords(entry)).filter((entry) => entry !== ''));
    wordSets.set(list, set);
  }
  return set.has(word);
}

// A phrase is a list of literal runs separated by wildcards; `*` stands for one or more words.
// Matching takes the earliest occurrence of each run in turn: since a wildcard has no upper bound,
// the earliest fit always leaves the most room for what follows, so no step is ever undone and the
// cost is one forward pass over the text per phrase, whatever the text holds.
type Token = { kind: 'words'; text: string } | { kind: 'wildcard' };

const compiled = new WeakMap<readonly string[], Token[][]>();

function compile(phrases: readonly string[]): Token[][] {
  return phrases.map((phrase) => normalisePhrase(phrase)).filter((words) => words.length > 0).map(tokensOf);
}

function normalisePhrase(phrase: string): string[] {
  return phrase
    .split(/\s+/)
    .flatMap((part) => (part === '*' ? ['*'] : normaliseWords(part).split(' ')))
    .filter((w) => w !== '');
}

function tokensOf(words: string[]): Token[] {
  const tokens: Token[] = [];
  let run: string[] = [];
  const flush = (): void => {
    if (run.length > 0) tokens.push({ kind: 'words', text: ` ${run.join(' ')} ` });
    run = [];
  };
  for (const word of words) {
    if (word === '*') {
      flush();
      tokens.push({ kind: 'wildcard' });
    } else {
      run.push(word);
    }
  }
  flush();
  return tokens;
}

/**
 * `padded` is the words with a space on each side, so every word sits between two spaces; `at` is
 * always the index of the space before the next unmatched word.
 */
function matches(padded: string, tokens: readonly Token[]): boolean {
  let at = 0;
  for (const token of tokens) {
    if (token.kind === 'wildcard') {
      if (at >= padded.length - 1) return false;
      at = padded.indexOf(' ', at + 1);
    } else {
      const found = padded.indexOf(token.text, at);
      if (found === -1) return false;
      at = found + token.text.length - 1;
    }
  }
  return true;
}

/** True when any phrase occurs in `words` (output of normaliseWords). */
export function containsPhrase(words: string, phrases: readonly string[]): boolean {
  if (words === '') return false;
  let list = compiled.get(phrases);
  if (list === undefined) {
    list = compile(phrases);
    compiled.set(phrases, list);
  }
  const padded = ` ${words} `;
  return list.some((tokens) => matches(padded, tokens));
}

export function firstWord(words: string): string {
  const space = words.indexOf(' ');
  return space === -1 ? words : words.slice(0, space);
}
