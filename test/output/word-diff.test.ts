import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import { diffSummary, wordDiff } from '../../src/output/word-diff.js';

const plain = new Chalk({ level: 0 });
const colour = new Chalk({ level: 1 });

describe('wordDiff (plain)', () => {
  it.each([
    ['the sky is blue', 'the sky is blue', 'the sky is blue', 0, 0],
    ['the sky is blue', 'the sky is grey', 'the sky is [-blue-]{+grey+}', 1, 1],
    ['Paris.', 'Paris is the capital.', 'Paris {+is the capital+}.', 3, 0],
    ['one two three', 'one three', 'one [-two -]three', 0, 1],
    ['', 'new', '{+new+}', 1, 0],
    ['a\nb', 'a\nc', 'a\n[-b-]{+c+}', 1, 1],
  ])('%j → %j', (before, after, text, added, removed) => {
    expect(wordDiff(before, after, plain)).toEqual({ text, added, removed });
  });

  it('shows escape sequences in both answers as text, never sends them to the terminal', () => {
    const { text } = wordDiff('ok \x1b[31mred\x1b[0m', 'ok \x1b]0;title\x07blue', plain);
    // eslint-disable-next-line no-control-regex -- looking for control characters is the point
    expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\x9b]/);
    expect(text).toMatch(/^ok .*\^\[.*red.*blue/);
  });
});

describe('wordDiff (terminal)', () => {
  it('colours removed red struck through and added green underlined', () => {
    expect(wordDiff('is blue', 'is grey', colour).text).toBe('is \x1b[31m\x1b[9mblue\x1b[29m\x1b[39m\x1b[32m\x1b[4mgrey\x1b[24m\x1b[39m');
  });
});

describe('diffSummary', () => {
  it.each([
    [{ text: '', added: 0, removed: 0 }, 'the answers are the same'],
    [{ text: '', added: 3, removed: 2 }, '+3 −2 words'],
  ])('%j → %s', (diff, summary) => {
    expect(diffSummary(diff)).toBe(summary);
  });
});
