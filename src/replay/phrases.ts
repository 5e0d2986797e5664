// Phrase rules match whole words of normalised text, so "mistake" never fires inside "mistaken"
// and curly apostrophes count as straight ones.

// A word is letters, their combining marks and digits, with apostrophes kept only between them
// ("that's"): edge apostrophes are quotes. A mark is part of its letter ("क्या", a decomposed "ä"),
// never a break. The apostrophe runs are separators the letters cannot match, so the pattern never
// backtracks over more than one run.
const WORD = /[\p{L}\p{M}\p{N}]+(?:'+[\p{L}\p{M}\p{N}]+)*/gu;

// A symbol token: a run of non-space characters holding no word (`>>=`, `$?`, an emoji). It is no
// word to a literal phrase, yet it is the X of "what does X mean", so a wildcard can stand for it.
const SPACE = /\s+/u;

/**
 * A text as phrase rules read it: `text` is its words (normaliseWords), `symbolsAt` how many symbol
 * tokens stand at each gap between them, keyed by the offset of that gap's space in ` ${text} `
 * (0 before the first word, text.length + 1 after the last).
 */
export interface Words {
  text: string;
  symbolsAt: ReadonlyMap<number, number>;
}

// The same prompt is read by several rules in a row (style, classify, reason): keeping the last
// answer makes that one pass over the text, not three.
let last: { text: string; words: Words } = { text: '', words: { text: '', symbolsAt: new Map() } };

/** The words of `text` and the symbol tokens between them; see Words. */
export function readWords(text: string): Words {
  if (text !== last.text) last = { text, words: read(text) };
  return last.words;
}

function read(text: string): Words {
  const words: string[] = [];
  let length = 0;
  const symbolsAt = new Map<number, number>();
  for (const token of text.toLowerCase().normalize('NFC').replace(/[\u2018\u2019\u02bc]/g, "'").split(SPACE)) {
    if (token === '') continue;
    const found = token.match(WORD);
    if (found === null) {
      const gap = length === 0 ? 0 : length + 1;
      symbolsAt.set(gap, (symbolsAt.get(gap) ?? 0) + 1);
      continue;
    }
    for (const word of found) {
      length += (length === 0 ? 0 : 1) + word.length;
      words.push(word);
    }
  }
  return { text: words.join(' '), symbolsAt };
}

/**
 * Lower-cased words of `text` in composed form (NFC: a decomposed "a" and umlaut is "ä"),
 * apostrophes kept inside words ("that's"), joined by single spaces.
 */
export function normaliseWords(text: string): string {
  return readWords(text).text;
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

// A phrase is a list of literal runs separated by wildcards; `*` stands for one or more words or
// symbol tokens, while a literal run reads the words alone (a symbol token between two of its words
// does not break it). Matching takes the earliest occurrence of each run in turn, and a wildcard the
// least it can (a symbol token where it stands, else one word): since a wildcard has no upper bound,
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
 * always the index of the space before the next unmatched word, and `spent` how many of the symbol
 * tokens at that gap a wildcard has taken.
 */
function matches(padded: string, symbolsAt: ReadonlyMap<number, number>, tokens: readonly Token[]): boolean {
  let at = 0;
  let spent = 0;
  for (const token of tokens) {
    if (token.kind === 'wildcard') {
      if ((symbolsAt.get(at) ?? 0) > spent) {
        spent++;
        continue;
      }
      if (at >= padded.length - 1) return false;
      at = padded.indexOf(' ', at + 1);
    } else {
      const found = padded.indexOf(token.text, at);
      if (found === -1) return false;
      at = found + token.text.length - 1;
    }
    spent = 0;
  }
  return true;
}

/** True when any phrase occurs in `words` (readWords' reading of a text). */
export function containsPhrase(words: Words, phrases: readonly string[]): boolean {
  if (words.text === '') return false;
  let list = compiled.get(phrases);
  if (list === undefined) {
    list = compile(phrases);
    compiled.set(phrases, list);
  }
  const padded = ` ${words.text} `;
  return list.some((tokens) => matches(padded, words.symbolsAt, tokens));
}

export function firstWord(words: string): string {
  const space = words.indexOf(' ');
  return space === -1 ? words : words.slice(0, space);
}
