import { describe, expect, it } from 'vitest';
import { isEmptyAnswer, paragraphBreak } from '../../src/text/answer.js';

describe('an empty answer', () => {
  it.each([
    ['', true],
    ['  \n\t', true],
    ['<think>I should look.</think>', true],
    ['<think>a</think>\n<think>b</think>\n', true],
    ['<think>cut off while reasoning', true],
    // The template wrote the opening tag: the model's text starts inside its reasoning.
    ['I should look.</think>', true],
    ['I should look.</think>\n\n', true],
    ['I should look.</think> It is 4.', false],
    ['<think>a</think> It is 4.', false],
    ['It is 4.', false],
    ['0', false],
    ['I think <think> is a tag', false],
    ['Use </think> to close a block.', false],
  ])('%j is empty: %s', (text, empty) => {
    expect(isEmptyAnswer(text)).toBe(empty);
  });
});

describe('the break between two responses shown', () => {
  it.each([
    ['done.', 'Next', '\n\n'],
    ['done.\n', 'Next', '\n'],
    ['done.\n\n', 'Next', ''],
    ['done.', '\nNext', '\n'],
    ['done.', '\n\nNext', ''],
    ['done.\n', '\nNext', ''],
    ['done.\n\n', '\n\nNext', ''],
  ])('%j then %j: %j', (before, next, between) => {
    expect(paragraphBreak(before.slice(-2), next)).toBe(between);
  });
});
