import { describe, expect, it } from 'vitest';
import { checkReason, promptFrom, wordlessRoute } from '../../src/cli/ask-flags.js';
import type { PromptText, ReplaySource, StdinText } from '../../src/cli/ask-flags.js';
import type { ReplayReason, ReplaySpec } from '../../src/replay/types.js';
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

describe('checkReason: a session replay names where it came from', () => {
  const session: ReplaySpec = { kind: 'session' };
  const none: ReplaySpec = { kind: 'none' };
  const last3: ReplaySpec = { kind: 'last', count: 3 };
  const config = '/home/me/.argo/config.json';
  const whole = 'replays the whole session, which always uses reason "session"';
  it.each<[ReplayReason, ReplaySpec, ReplaySource, string]>([
    ['clarification', session, 'flag', '--replay session always uses reason "session"; use --replay last:N with --reason clarification'],
    ['clarification', session, 'continue', `-c ${whole}; add --replay last:N with --reason clarification (argo -c -r last:3 --reason clarification "…")`],
    ['continuation', session, 'command', `argo chat (by default) ${whole}; give --replay last:N with --reason continuation (argo chat -r last:3 --reason continuation)`],
    ['clarification', session, 'env', `ARGO_REPLAY=session ${whole}; give --replay last:N with --reason clarification (a flag wins over ARGO_REPLAY), or set ARGO_REPLAY=last:N`],
    ['continuation', session, 'config', `"defaultReplay": "session" in ${config} ${whole}; give --replay last:N with --reason continuation (a flag wins over "defaultReplay")`],
    ['clarification', none, 'env', '--reason needs --replay last:N or --replay session'],
    ['clarification', none, 'default', '--reason needs --replay last:N or --replay session'],
  ])('--reason %s with %j from %s: %s', (reason, replay, source, message) => {
    const error = thrown(() => checkReason(reason, replay, source, config));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(message);
  });

  it.each<[ReplayReason | undefined, ReplaySpec, ReplaySource]>([
    ['session', session, 'env'],
    ['session', session, 'config'],
    ['session', session, 'continue'],
    ['clarification', last3, 'config'],
    [undefined, session, 'command'],
    [undefined, none, 'default'],
  ])('--reason %s with %j from %s is taken', (reason, replay, source) => {
    expect(() => checkReason(reason, replay, source, config)).not.toThrow();
  });
});
