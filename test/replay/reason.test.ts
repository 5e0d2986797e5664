import { describe, expect, it } from 'vitest';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import { inferReason, reasonConflict } from '../../src/replay/reason.js';
import type { ReplayReason, ReplaySpec } from '../../src/replay/types.js';

const none: ReplaySpec = { kind: 'none' };
const session: ReplaySpec = { kind: 'session' };
const last3: ReplaySpec = { kind: 'last', count: 3 };
const phrases = DEFAULT_REPLAY_POLICY.clarification;

describe('reasonConflict', () => {
  it.each<[ReplayReason, ReplaySpec, ReturnType<typeof reasonConflict>]>([
    ['continuation', none, 'no_replay'],
    ['session', none, 'no_replay'],
    ['clarification', session, 'session_only'],
    ['continuation', session, 'session_only'],
    ['session', session, null],
    ['continuation', last3, null],
    ['clarification', last3, null],
    ['session', last3, null],
  ])('reason %s with replay %o → %s', (reason, spec, expected) => {
    expect(reasonConflict(reason, spec)).toBe(expected);
  });
});

describe('inferReason', () => {
  it.each<[string, ReplaySpec, string, ReplayReason | undefined, ReplayReason | null]>([
    ['replay none → null', none, 'what do you mean?', undefined, null],
    ['replay none ignores --reason', none, 'Add tests', 'clarification', null],
    ['replay session → session', session, 'Add tests', undefined, 'session'],
    ['replay session even for a clarification', session, 'What do you mean?', undefined, 'session'],
    ['replay session ignores --reason', session, 'Add tests', 'continuation', 'session'],
    ['last:N, explicit reason wins over the phrase', last3, 'What do you mean?', 'continuation', 'continuation'],
    ['last:N, explicit reason wins over the default', last3, 'Add tests', 'clarification', 'clarification'],
    ['last:N, explicit session', last3, 'Add tests', 'session', 'session'],
    ['last:N, no phrase → continuation', last3, 'Add tests', undefined, 'continuation'],
  ])('%s', (_name, spec, input, explicit, expected) => {
    expect(inferReason(spec, input, explicit, phrases)).toBe(expected);
  });

  it.each([
    ['What do you mean by that?', 'clarification'],
    ['what do you mean', 'clarification'],
    ['What did you mean?', 'clarification'],
    ["What does 'superposition' mean?", 'clarification'],
    ['What does \u2018superposition\u2019 mean?', 'clarification'],
    ['what does it actually mean for us', 'clarification'],
    ['Can you clarify?', 'clarification'],
    ['Clarify the second step', 'clarification'],
    ["I don't understand", 'clarification'],
    ['I don\u2019t understand the second step', 'clarification'], // curly apostrophe
    ['I do not understand', 'clarification'],
    ['What is meant by idempotent?', 'clarification'],
    // "What does X mean" with X a symbol token: an operator, a variable, an arrow, an emoji.
    ['What does >>= mean?', 'clarification'],
    ['What does && mean in bash?', 'clarification'],
    ['What does $? mean', 'clarification'],
    ['What does 😀 mean?', 'clarification'],
    ['what does -> mean here', 'clarification'],
    ['What does `>>=` mean?', 'clarification'],
    ['What does it mean?', 'clarification'],
    ['What does mean?', 'continuation'], // nothing stands for X
    ['What does >>= do?', 'continuation'],
    ['Explain >>= and what it means', 'continuation'],
    ['How does the light-dependent reaction work?', 'continuation'],
    ['What does it do?', 'continuation'], // "what does X" without "mean"
    ['Add case-insensitive matching', 'continuation'],
    ['Clarification please', 'continuation'], // whole words: "clarification" is not "clarify"
    ['I understand now', 'continuation'],
    ['the meaning of life', 'continuation'],
    ['', 'continuation'],
  ] as const)('last:N with %j → %s', (input, expected) => {
    expect(inferReason(last3, input, undefined, phrases)).toBe(expected);
  });
});
