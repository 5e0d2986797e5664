import { describe, expect, it } from 'vitest';
import { isEmptyAnswer, leadingThinking, paragraphBreak } from '../../src/text/answer.js';

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

describe('reasoning written ahead of the answer', () => {
  it.each<[string, { thinking: string; answer: string } | null]>([
    ['<think>\nLet me see.\n</think>\n\nIt is 4.', { thinking: 'Let me see.', answer: 'It is 4.' }],
    ['\n<think>Let me see.</think>It is 4.\n', { thinking: 'Let me see.', answer: 'It is 4.\n' }],
    ['<think>a</think>\n<think>b</think>\nIt is 4.', { thinking: 'a\n\nb', answer: 'It is 4.' }],
    // Cut by num_predict while reasoning: all of it is reasoning.
    ['<think>\nStill reasoning and never', { thinking: 'Still reasoning and never', answer: '' }],
    ['<think></think>\n\nIt is 4.', { thinking: '', answer: 'It is 4.' }],
    ['<think>a</think>', { thinking: 'a', answer: '' }],
    // Only at the very start: a tag further on is the answer's own words.
    ['It is 4. <think>no</think>', null],
    ['I think <think> is a tag', null],
    ['I should look.</think> It is 4.', null],
    // The template wrote the opening tag: reasoning up to a </think> on its own line, then a blank line or the end.
    ['The user wants 2+2.\n</think>\n\nIt is 4.', { thinking: 'The user wants 2+2.', answer: 'It is 4.' }],
    ['Still reasoning.\n</think>\n', { thinking: 'Still reasoning.', answer: '' }],
    ['</think>\n\nIt is 4.', { thinking: '', answer: 'It is 4.' }],
    ['Use\n</think>\nto close a block.', null],
    ['Use </think> to close a block.', null],
    ['<think>a</think>\nb\n</think>\n\nc', { thinking: 'a', answer: 'b\n</think>\n\nc' }],
    ['<thinking>a</thinking> b', null],
    ['', null],
  ])('%j → %j', (text, split) => {
    expect(leadingThinking(text)).toEqual(split);
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
