import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { planTurn } from '../../src/replay/plan.js';
import { containsPhrase, firstWord, normaliseWords } from '../../src/replay/phrases.js';
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
  ] as const)('%j with %j → %s', (words, phrases, expected) => {
    expect(containsPhrase(words, phrases)).toBe(expected);
  });

  it('reuses a compiled list without changing its answers', () => {
    const phrases = ['repeat that'];
    expect([containsPhrase('repeat that', phrases), containsPhrase('repeat this', phrases), containsPhrase('repeat that', phrases)]).toEqual([
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
    const disagreements = texts.filter((text) => containsPhrase(text, list) !== referenceMatch(text, list));
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
