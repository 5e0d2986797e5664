import { describe, expect, it } from 'vitest';
import { promptFrom } from '../../src/cli/ask-flags.js';
import type { StdinText } from '../../src/cli/ask-flags.js';
import { UsageError } from '../../src/errors.js';
import { thrown } from '../support/thrown.js';

describe('promptFrom', () => {
  it.each<[string[], StdinText, string]>([
    [['why', 'is', 'the', 'sky', 'blue?'], 'terminal', 'why is the sky blue?'],
    [['review', 'this'], { piped: 'diff --git a/x b/x' }, 'review this\n\ndiff --git a/x b/x'],
    [[], { piped: '    indented  ' }, '    indented  '],
    [['  hi  '], { piped: '  \n ' }, 'hi'],
    [['hi'], 'unread', 'hi'],
    // A word piped is text, whatever it says.
    [[], { piped: 'unread' }, 'unread'],
    [[], { piped: 'terminal' }, 'terminal'],
  ])('%j with stdin %j → %j', (words, stdin, prompt) => {
    expect(promptFrom(words, stdin)).toBe(prompt);
  });

  it.each<[string[], StdinText, string]>([
    [[], { piped: '' }, 'no prompt: standard input was empty; pass the question as arguments (argo "why is the sky blue?"), pipe it on stdin, or run argo chat'],
    [['', ' '], { piped: ' \n\t' }, 'no prompt: standard input was empty; pass the question as arguments (argo "why is the sky blue?"), pipe it on stdin, or run argo chat'],
    [[], 'unread', 'no prompt: --no-stdin leaves standard input unread; pass the question as arguments (argo --no-stdin "why is the sky blue?"), or run argo chat'],
    [[' '], 'terminal', 'no prompt: pass the question as arguments (argo "why is the sky blue?"), pipe it on stdin, or run argo chat'],
  ])('%j with stdin %j is a usage error: %s', (words, stdin, message) => {
    const error = thrown(() => promptFrom(words, stdin));
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ message });
  });
});
