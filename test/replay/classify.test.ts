import { describe, expect, it } from 'vitest';
import { classifyEntry, typedPart } from '../../src/replay/classify.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import type { EntryType } from '../../src/replay/types.js';

const rules = DEFAULT_REPLAY_POLICY.classify;
type Row = readonly [prompt: string, expected: EntryType];

function table(rows: readonly Row[]): void {
  it.each(rows)('%j → %s', (prompt, expected) => {
    expect(classifyEntry(prompt, rules)).toBe(expected);
  });
}

describe('meta: asks about the conversation itself', () => {
  table([
    ['What did you say?', 'meta'],
    ['what did you just say', 'meta'],
    ['Repeat that', 'meta'],
    ['repeat that, but shorter', 'meta'],
    ['Summarize our conversation', 'meta'],
    ['Summarise our conversation so far.', 'meta'],
    ['What was my last question', 'meta'],
    ['Can you say that again?', 'meta'],
    ['What were we talking about?', 'meta'],
  ]);
});

describe('correction: correction keywords', () => {
  table([
    ['Actually, use tabs', 'correction'],
    ["That's wrong", 'correction'],
    ['That\u2019s wrong.', 'correction'], // curly apostrophe
    ['That is not right', 'correction'],
    ['There is a mistake on line 3', 'correction'],
    ['I meant the second file', 'correction'],
    ['Sorry, I\u2019m \u2014 I meant Python 3', 'correction'],
    ['Correction: the port is 8080', 'correction'],
  ]);
});

describe('question: ends with "?" or opens with a wh-word', () => {
  table([
    ['Is it safe?', 'question'],
    ['Is this right?   ', 'question'], // trailing whitespace
    ['He asked "why?"', 'question'], // closing quote after the question mark
    ['Is it \u201csafe?\u201d', 'question'], // curly closing quote
    ["Is it 'safe?'", 'question'],
    ['(really?)', 'question'],
    ['Does it work with Go\uff1f', 'question'], // full-width question mark
    ['what is a monad', 'question'],
    ["What's a monad", 'question'], // wh-word before a contraction still opens the question
    ['Who\u2019d use that', 'question'],
    ['What, exactly, is a monad', 'question'],
  ]);

  it.each(['what', 'why', 'how', 'when', 'where', 'who', 'which'])('opener %j', (word) => {
    expect(classifyEntry(`${word} it goes like that`, rules)).toBe('question');
    expect(classifyEntry(`${word.toUpperCase()} IT GOES`, rules)).toBe('question');
  });
});

describe('instruction: opens with an imperative verb, optionally after "please"', () => {
  table([
    ['Explain monads', 'instruction'],
    ['Create a file', 'instruction'],
    ['write a haiku', 'instruction'],
    ['List the files', 'instruction'],
    ['Add tests.', 'instruction'],
    ['Build a Python function that validates emails', 'instruction'],
    ['please explain monads', 'instruction'],
    ['Please, write a haiku', 'instruction'],
    ['Kindly list the files', 'instruction'],
    ['ok now add a test', 'instruction'], // several polite prefixes in a row
    ['Explain what a monad is', 'instruction'], // a wh-word later does not make a question
    ['Do it again', 'instruction'],
  ]);
});

describe('other: none of the above', () => {
  table([
    ['ok thanks', 'other'],
    ['', 'other'],
    ['   \n ', 'other'],
    ['please', 'other'],
    ['👍', 'other'],
    ['Great, that works.', 'other'],
    ['Really?!', 'other'], // the text must end with "?" (after closing quotes/brackets), "?!" does not
    ['Also, how does it work', 'other'], // a wh-word opens a question only as the very first word
  ]);
});

describe('whole-word matching', () => {
  table([
    ['That was mistaken', 'other'],
    ['Factually correct', 'other'], // not "actually"
    ['Whatever works', 'other'], // not "what"
    ['However it goes', 'other'], // not "how"
    ['Somehow it works', 'other'],
    ['Explainer videos are fun', 'other'], // not "explain"
    ['Listing is done', 'other'], // not "list"
    ['I meanwhile left', 'other'], // not "i mean"
    ['repeat thatch', 'other'], // not "repeat that"
  ]);
});

describe('symbol tokens (no letter or digit) are no words: only a phrase\'s `*` stands for one', () => {
  table([
    ['-> explain this', 'instruction'], // the first word is still "explain"
    ['- add tests', 'instruction'],
    ['> what is a monad', 'question'],
    ['😀 please write it', 'instruction'],
    ["that's -- wrong", 'correction'], // a literal phrase reads the words alone
    ['repeat — that', 'meta'],
    ['What does >>= mean?', 'question'],
    ['>>= !', 'other'],
  ]);
  it.each<[string, EntryType]>([
    ['what did you say about >>=', 'meta'],
    ['what did you say about it', 'meta'],
    ['what did you say about', 'question'], // no meta: the opener decides
  ])('%j with meta ["what did you say about *"] → %s', (prompt, expected) => {
    expect(classifyEntry(prompt, { ...rules, meta: ['what did you say about *'] })).toBe(expected);
  });
});

describe('precedence: meta > correction > question > instruction > other', () => {
  table([
    ['Actually, what did you say?', 'meta'], // meta + correction + question
    ['Summarize our conversation', 'meta'], // meta + instruction ("summarize")
    ['Actually, why is that?', 'correction'], // correction + question
    ['Actually, write it in Go', 'correction'], // correction + instruction
    ['Please fix the mistake', 'correction'], // instruction + correction
    ['Explain why?', 'question'], // question + instruction
    ['Write it in Go?', 'question'],
  ]);
});

describe('word lists are compared as the prompt is read: case, apostrophes and composition aside', () => {
  it.each<[string, Partial<typeof rules>, EntryType]>([
    ['Explain monads', { instructionVerbs: ['Explain'] }, 'instruction'],
    ['Pls explain monads', { politePrefixes: ['PLS'] }, 'instruction'],
    ['Wat is this', { questionOpeners: ['WAT'] }, 'question'],
    ['Erkla\u0308re Monaden', { instructionVerbs: ['erkläre'] }, 'instruction'],
    ['Erkläre Monaden', { instructionVerbs: ['Erkla\u0308re'] }, 'instruction'],
    ['क्या यह सही है', { questionOpeners: ['क्या'] }, 'question'],
    // "क्या" is one word, not "क" and "या".
    ['क्या यह सही है', { questionOpeners: ['क'] }, 'other'],
    // An entry with no word in it matches nothing, not an empty prompt.
    ['👍', { instructionVerbs: ['!!'] }, 'other'],
  ])('%j with %j → %s', (prompt, custom, expected) => {
    expect(classifyEntry(prompt, { ...rules, ...custom })).toBe(expected);
  });
});

describe('custom rules replace the defaults', () => {
  const custom = { ...rules, instructionVerbs: ['frobnicate'], politePrefixes: ['pls'], questionOpeners: ['wat'] };
  it.each([
    ['pls frobnicate the widget', 'instruction'],
    ['Explain monads', 'other'],
    ['wat is this', 'question'],
    ['what is this', 'other'],
  ] as const)('%j → %s', (prompt, expected) => {
    expect(classifyEntry(prompt, custom)).toBe(expected);
  });
});

describe('only the typed part of a prompt with piped text after it is classified', () => {
  it.each<[string, number | undefined, string]>([
    ['Summarize this\n\nThe meeting went well. Actually, the budget was approved.', 14, 'Summarize this'],
    ['Explain this code\n\nfunction f() { return x?', 17, 'Explain this code'],
    // No typed length (typed words alone, piped text alone, a line logged before the field): all of it.
    ['Summarize this', undefined, 'Summarize this'],
    // Code points: an emoji counts one, never cut in half.
    ['Explain 😀\n\nx', 9, 'Explain 😀'],
    ['ab', 5, 'ab'],
    ['ab', 0, ''],
  ])('%j, %s typed → %j', (prompt, typed, part) => {
    expect(typedPart(prompt, typed)).toBe(part);
  });

  it.each<[string, number | undefined, EntryType]>([
    ['Summarize this\n\nThe meeting went well. Actually, the budget was approved.', 14, 'instruction'],
    ['Summarize this\n\nThe meeting went well. Actually, the budget was approved.', undefined, 'correction'],
    ['Explain this code\n\nconst ok = a ?? b ? 1 : 2; // done?', 17, 'instruction'],
    ['Explain this code\n\nconst ok = a ?? b ? 1 : 2; // done?', undefined, 'question'],
  ])('%j with %s typed is %s', (prompt, typed, type) => {
    expect(classifyEntry(typedPart(prompt, typed), rules)).toBe(type);
  });
});
