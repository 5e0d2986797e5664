import { describe, expect, it } from 'vitest';
import { containsPhrase, firstWord, normaliseWords } from '../../src/replay/phrases.js';

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

describe('firstWord', () => {
  it.each([
    ['', ''],
    ['one', 'one'],
    ['one two three', 'one'],
  ])('%j → %j', (words, first) => {
    expect(firstWord(words)).toBe(first);
  });
});
