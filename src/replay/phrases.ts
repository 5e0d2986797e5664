// Phrase rules match whole words of normalised text, so "mistake" never fires inside "mistaken"
// and curly apostrophes count as straight ones.

/** Lower-cased words of `text`, apostrophes kept inside words ("that's"), joined by single spaces. */
export function normaliseWords(text: string): string {
  const words = text.toLowerCase().replace(/[\u2018\u2019\u02bc]/g, "'").match(/[\p{L}\p{N}']+/gu) ?? [];
  return words
    .map((w) => w.replace(/^'+|'+$/g, ''))
    .filter((w) => w !== '')
    .join(' ');
}

const compiled = new WeakMap<readonly string[], RegExp | null>();

function compile(phrases: readonly string[]): RegExp | null {
  const alternatives = phrases
    .map((phrase) => normalisePhrase(phrase))
    .filter((words) => words.length > 0)
    .map((words) => words.map((w) => (w === '*' ? "[\\p{L}\\p{N}']+(?: [\\p{L}\\p{N}']+)*" : escape(w))).join(' '));
  if (alternatives.length === 0) return null;
  return new RegExp(`(?:^| )(?:${alternatives.join('|')})(?= |$)`, 'u');
}

function normalisePhrase(phrase: string): string[] {
  return phrase
    .split(/\s+/)
    .flatMap((part) => (part === '*' ? ['*'] : normaliseWords(part).split(' ')))
    .filter((w) => w !== '');
}

function escape(word: string): string {
  return word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** True when any phrase occurs in `words` (output of normaliseWords). */
export function containsPhrase(words: string, phrases: readonly string[]): boolean {
  let re = compiled.get(phrases);
  if (re === undefined) {
    re = compile(phrases);
    compiled.set(phrases, re);
  }
  return re?.test(words) ?? false;
}

export function firstWord(words: string): string {
  const space = words.indexOf(' ');
  return space === -1 ? words : words.slice(0, space);
}
