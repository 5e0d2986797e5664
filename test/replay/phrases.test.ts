import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { planTurn } from '../../src/replay/plan.js';
import { containsPhrase, firstWord, normaliseWords, readWords } from '../../src/replay/phrases.js';
import { ADVERSARIAL_PROMPTS, ADVERSARIAL_PROMPT_BYTES } from '../bench/phrase-rules.js';
import { makePlanInput } from '../support/plan-input.js';

describe('normaliseWords', () => {
  it.each([
    ['Hello, World!', 'hello world'],
    ['  spaced\n\tout  ', 'spaced out'],
    ['', ''],
    ['?!…', ''],
    ["That's wrong", "that's wrong"],
    ['That\u2019s wrong', "that's wrong"], // right single quotation mark
    ['That\u2018s wrong', "that's wrong"], // left single quotation mark
    ['That\u02bcs wrong', "that's wrong"], // modifier letter apostrophe
    ["'quoted' words", 'quoted words'], // edge apostrophes are quotes, not part of the word
    ['\u2018superposition\u2019 mean', 'superposition mean'],
    ['👍 ok 👍', 'ok'],
    ['Straße ÜBER Ñandú', 'straße über ñandú'],
    ['日本語 テキスト', '日本語 テキスト'],
    ['x2 3d v1.5', 'x2 3d v1 5'],
    ['**Explain** `this`', 'explain this'],
    ["x''y", "x''y"], // a run of apostrophes between letters stays inside the word
    ["'a''b'", "a''b"],
    ["''' ''", ''],
    ["don't' stop'", "don't stop"],
    ["rock 'n' roll", 'rock n roll'],
    // Combining marks belong to their letter's word, and decomposed text reads as composed.
    ['Erkla\u0308re das', 'erkläre das'],
    ['Erkläre das', 'erkläre das'],
    ['क्या है', 'क्या है'],
    ['caf\u00e9 cafe\u0301', 'café café'],
  ])('%j → %j', (text, words) => {
    expect(normaliseWords(text)).toBe(words);
  });
});

describe('readWords: symbol tokens between the words', () => {
  // `symbols` lists [offset of the gap's space in ` ${text} `, how many symbol tokens stand there].
  it.each<[string, string, [number, number][]]>([
    ['What does >>= mean?', 'what does mean', [[10, 1]]], // `mean?` holds a word: no symbol token
    ['What does && mean in bash?', 'what does mean in bash', [[10, 1]]],
    ['What does $? mean', 'what does mean', [[10, 1]]],
    ['What does 😀 mean?', 'what does mean', [[10, 1]]],
    ['what does -> mean here', 'what does mean here', [[10, 1]]],
    ['-> start', 'start', [[0, 1]]], // before the first word
    ['end ?!', 'end', [[4, 1]]], // after the last word
    ['a -> >>= b', 'a b', [[2, 2]]],
    ['😀 😀', '', [[0, 2]]],
    ['What does it mean?', 'what does it mean', []],
    ['x>>=y, a+b', 'x y a b', []], // symbols inside a token with a word are only separators
    ['`x`', 'x', []],
    ['', '', []],
    ['   ', '', []],
  ])('%j → %j with %j', (text, words, symbols) => {
    const read = readWords(text);
    expect(read.text).toBe(words);
    expect(read.text).toBe(normaliseWords(text));
    expect([...read.symbolsAt]).toEqual(symbols);
  });
});

describe('containsPhrase (whole words, case-insensitive)', () => {
  const wildcard = ['what does * mean'];
  it.each([
    ['the mistake was mine', ['mistake'], true],
    ['that was mistaken', ['mistake'], false],
    ['two mistakes', ['mistake'], false],
    ['a mistake', ['MISTAKE'], true],
    ['premistake', ['mistake'], false],
    ["that's wrong", ['That\u2019s wrong'], true], // curly apostrophe in the phrase too
    ['summarize our conversation please', ['summarize our conversation'], true],
    ['resummarize our conversation', ['summarize our conversation'], false],
    ['summarize our conversations', ['summarize our conversation'], false],
    ['what does superposition mean', wildcard, true],
    ['so what does it all mean to you', wildcard, true],
    ['what does mean', wildcard, false], // `*` stands for one or more words
    ['what does it meaning', wildcard, false],
    ['anything at all', [], false],
    ['', ['x'], false],
    ['a b', ['   '], false], // blank phrases are ignored
    ['c plus', ['C++!'], true], // a phrase is normalised like the text: punctuation is dropped
    ['a b', ['a.*b'], true], // so regex characters never act as a pattern
    ['axxb', ['a.*b'], false],
    ['so what does it mean', ['* does * mean'], true], // a leading `*` needs a word before
    ['does it mean', ['* does * mean'], false],
    ['what does it mean', ['what does *'], true], // a trailing `*` needs a word after
    ['what does', ['what does *'], false],
    ['what does a b mean', ['what does * * mean'], true], // `* *` is two or more words
    ['what does a mean', ['what does * * mean'], false],
    ['what does what does x mean', wildcard, true],
    ['mean what does x', wildcard, false], // the parts must come in order
    ['what does x means mean', wildcard, true],
    ['a', ['*'], true],
    ['', ['*'], false],
    // A symbol token (no letter or digit in it) is what a `*` can stand for; a literal run skips it.
    ['What does >>= mean?', wildcard, true],
    ['What does && mean in bash?', wildcard, true],
    ['What does $? mean', wildcard, true],
    ['What does 😀 mean?', wildcard, true],
    ['what does -> mean here', wildcard, true],
    ['What does `>>=` mean?', wildcard, true],
    ['What does ... mean', wildcard, true],
    ['What does mean?', wildcard, false],
    ['What does mean -> ?', wildcard, false], // the symbol comes after "mean": nothing stands between
    ['-> what does', ['* what does'], true],
    ['what does ->', ['what does *'], true],
    ['what does -> && mean', ['what does * * mean'], true], // two symbol tokens for two wildcards
    ['what does -> mean', ['what does * * mean'], false], // one symbol token is not two
    ['what does -> x mean', ['what does * * mean'], true],
    ['what -> does x mean', wildcard, true],
    ['that’s -> wrong', ["that's wrong"], true], // a literal run reads the words alone
    ['repeat — that', ['repeat that'], true],
    ['😀', ['*'], false], // a text with no word matches no phrase
  ] as const)('%j with %j → %s', (words, phrases, expected) => {
    expect(containsPhrase(readWords(words), phrases)).toBe(expected);
  });

  it('reuses a compiled list without changing its answers', () => {
    const phrases = ['repeat that'];
    expect([containsPhrase(readWords('repeat that'), phrases), containsPhrase(readWords('repeat this'), phrases), containsPhrase(readWords('repeat that'), phrases)]).toEqual([
      true,
      false,
      true,
    ]);
  });
});

// The matcher before issue 9: one regular expression, correct but backtracking. It is the reference
// the linear matcher must agree with on every input small enough for it.
function referenceMatch(words: string, phrases: readonly string[]): boolean {
  const alternatives = phrases
    .map((phrase) => phrase.split(/\s+/).flatMap((part) => (part === '*' ? ['*'] : normaliseWords(part).split(' '))).filter((w) => w !== ''))
    .filter((parts) => parts.length > 0)
    .map((parts) => parts.map((w) => (w === '*' ? "[\\p{L}\\p{N}']+(?: [\\p{L}\\p{N}']+)*" : w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join(' '));
  return alternatives.length > 0 && new RegExp(`(?:^| )(?:${alternatives.join('|')})(?= |$)`, 'u').test(words);
}

describe('containsPhrase agrees with the backtracking reference', () => {
  const vocabulary = ['a', 'b', 'c', 'what', 'does', 'mean'];
  const patterns = [['*'], ['a'], ['a b'], ['a * b'], ['* a'], ['a *'], ['a * * b'], ['* a * b *'], ['what does * mean', 'c * c'], ['b a * a b']];
  // A fixed-seed generator: the same inputs on every run.
  let state = 7;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const texts = Array.from({ length: 400 }, () => Array.from({ length: next(9) }, () => vocabulary[next(vocabulary.length)]).join(' '));
  it.each(patterns.map((phrases) => [phrases]))('%j on 400 random texts', (phrases) => {
    const list = [...phrases];
    const disagreements = texts.filter((text) => containsPhrase(readWords(text), list) !== referenceMatch(text, list));
    expect(disagreements).toEqual([]);
  });
});

// The rule with symbol tokens, by trying every way: a literal run is consecutive words (symbol
// tokens between them skipped) found anywhere ahead, a wildcard one or more items of any kind.
function bruteForceMatch(text: string, phrases: readonly string[]): boolean {
  const items = text.split(' ').filter((item) => item !== '').map((item) => ({ item, word: normaliseWords(item) !== '' }));
  if (!items.some((item) => item.word)) return false;
  const wordAt = (from: number): number => items.findIndex((item, i) => i >= from && item.word);
  const runEnd = (start: number, run: readonly string[]): number => {
    let i = start;
    for (const word of run) {
      i = wordAt(i);
      if (i === -1 || items[i]?.item !== word) return -1;
      i++;
    }
    return i;
  };
  const from = (parts: readonly (string[] | '*')[], i: number): boolean => {
    const [part, ...rest] = parts;
    if (part === undefined) return true;
    if (part === '*') return Array.from({ length: items.length - i }, (_, n) => i + n + 1).some((next) => from(rest, next));
    return items.some((item, start) => start >= i && item.word && runEnd(start, part) !== -1 && from(rest, runEnd(start, part)));
  };
  return phrases.some((phrase) => {
    const parts: (string[] | '*')[] = [];
    for (const word of phrase.split(' ')) {
      const lastPart = parts.at(-1);
      if (word === '*') parts.push('*');
      else if (Array.isArray(lastPart)) lastPart.push(word);
      else parts.push([word]);
    }
    return from(parts, 0);
  });
}

describe('containsPhrase agrees with trying every way, symbol tokens included', () => {
  const vocabulary = ['a', 'b', 'what', 'does', 'mean', '->', '😀'];
  const patterns = [['*'], ['a'], ['a b'], ['a * b'], ['* a'], ['a *'], ['a * * b'], ['* a * b *'], ['what does * mean'], ['b a * a b'], ['* *']];
  let state = 11;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state % n;
  };
  const texts = Array.from({ length: 400 }, () => Array.from({ length: next(8) }, () => vocabulary[next(vocabulary.length)]).join(' '));
  it.each(patterns.map((phrases) => [phrases]))('%j on 400 random texts', (phrases) => {
    const disagreements = texts.filter((text) => containsPhrase(readWords(text), phrases) !== bruteForceMatch(text, phrases));
    expect(disagreements).toEqual([]);
  });
});

describe(`the replay rules on ${ADVERSARIAL_PROMPT_BYTES / 1024} KB adversarial prompts`, () => {
  // The bench holds them to 50 ms; here the bound is loose enough for a loaded test machine and
  // still far below the seconds to minutes a backtracking matcher takes on the same prompts.
  it.each(Object.entries(ADVERSARIAL_PROMPTS))('%s: under a second', (_name, input) => {
    const started = performance.now();
    const plan = planTurn(makePlanInput({ input, spec: { kind: 'last', count: 5 } }));
    expect(performance.now() - started).toBeLessThan(1000);
    expect(plan.verbosity).toBe('long');
  });
});

describe('firstWord', () => {
  it.each([
    ['', ''],
    ['one', 'one'],
    ['one two three', 'one'],
  ])('%j → %j', (words, first) => {
    expect(firstWord(words)).toBe(first);
  });
});
