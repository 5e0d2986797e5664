import { describe, expect, it } from 'vitest';
import { promptFrom, wordlessRoute } from '../../src/cli/ask-flags.js';
import type { PromptText, StdinText } from '../../src/cli/ask-flags.js';
import { UsageError } from '../../src/errors.js';
import { thrown } from '../support/thrown.js';

describe('promptFrom', () => {
  it.each<[string[], StdinText, PromptText]>([
    [['why', 'is', 'the', 'sky', 'blue?'], 'terminal', { prompt: 'why is the sky blue?' }],
    // The typed words are the question, the piped text its material: their length says where they end.
    [['review', 'this'], { piped: 'diff --git a/x b/x' }, { prompt: 'review this\n\ndiff --git a/x b/x', typedChars: 11 }],
    [[' Explain', '😀 '], { piped: 'x' }, { prompt: 'Explain 😀\n\nx', typedChars: 9 }],
    [[], { piped: '    indented  ' }, { prompt: '    indented  ' }],
    [['  hi  '], { piped: '  \n ' }, { prompt: 'hi' }],
    [['hi'], 'unread', { prompt: 'hi' }],
    // A word piped is text, whatever it says.
    [[], { piped: 'unread' }, { prompt: 'unread' }],
    [[], { piped: 'terminal' }, { prompt: 'terminal' }],
  ])('%j with stdin %j → %j', (words, stdin, prompt) => {
    expect(promptFrom(words, stdin)).toEqual(prompt);
  });

  it.each<[string[], StdinText, string]>([
    [[], { piped: '' }, 'no prompt: standard input was empty; pass the question as arguments (argo "why is the sky blue?"), pipe it on stdin, or run argo chat'],
    [['', ' '], { piped: ' \n\t' }, 'no prompt: standard input had only whitespace; pass the question as arguments (argo "why is the sky blue?"), pipe it on stdin, or run argo chat'],
    [[], 'unread', 'no prompt: --no-stdin leaves standard input unread; pass the question as arguments (argo --no-stdin "why is the sky blue?"), or run argo chat'],
    [[' '], 'terminal', 'no prompt: pass the question as arguments (argo "why is the sky blue?"), pipe it on stdin, or run argo chat'],
  ])('%j with stdin %j is a usage error: %s', (words, stdin, message) => {
    const error = thrown(() => promptFrom(words, stdin));
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ message });
  });
});

describe('wordlessRoute: argo with no words', () => {
  it.each<[boolean, string[], 'prompt' | 'chat']>([
    [true, [], 'chat'],
    [true, ['--session', '--model', '--tools', '--stats'], 'chat'],
    // Piped text is the question, whatever the flags.
    [false, [], 'prompt'],
    [false, ['--explain'], 'prompt'],
    [false, ['--json'], 'prompt'],
    // No text at all: promptFrom says how to give one.
    [true, ['--no-stdin'], 'prompt'],
    // Even beside --explain: "pipe it on stdin" would be no advice with --no-stdin.
    [true, ['--explain', '--no-stdin'], 'prompt'],
    [true, ['--json', '--no-stdin'], 'prompt'],
  ])('terminal %j, flags %j → %s', (terminal, given, route) => {
    expect(wordlessRoute(terminal, given)).toBe(route);
  });

  it.each<[string[], string]>([
    [['--explain'], 'no prompt: --explain is for one question, not a chat; pass the question as arguments (argo --explain "why is the sky blue?") or pipe it on stdin'],
    [['--session', '--json'], 'no prompt: --json is for one question, not a chat; pass the question as arguments (argo --json "why is the sky blue?") or pipe it on stdin'],
  ])('on a terminal, %j is a usage error, never a chat that drops the flag: %s', (given, message) => {
    const error = thrown(() => wordlessRoute(true, given));
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ message });
  });
});
