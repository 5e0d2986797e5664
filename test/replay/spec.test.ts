import { describe, expect, it } from 'vitest';
import { MAX_REPLAY_COUNT, isReplayCountTooLarge, readReplaySpec, replaySpecText } from '../../src/replay/spec.js';
import type { ReplaySpec } from '../../src/replay/types.js';

describe('readReplaySpec', () => {
  it.each([
    ['none', { kind: 'none' }],
    ['session', { kind: 'session' }],
    ['last:1', { kind: 'last', count: 1 }],
    ['last:007', { kind: 'last', count: 7 }],
    ['  last:3\t', { kind: 'last', count: 3 }], // blanks around the text are ignored
    [' session\n', { kind: 'session' }],
    [`last:${Number.MAX_SAFE_INTEGER}`, { kind: 'last', count: Number.MAX_SAFE_INTEGER }],
  ])('%j → %j', (text, spec) => {
    expect(readReplaySpec(text)).toEqual(spec);
  });

  it.each([
    '',
    'last',
    'last:',
    'last:0',
    'last:-1',
    'last:1.5',
    'last: 2',
    'LAST:2',
    'Session',
    'last:99999999999999999999', // not a safe integer: refused rather than rounded
    `last:${Number.MAX_SAFE_INTEGER + 1}`,
  ])('%j is none of them', (text) => {
    expect(readReplaySpec(text)).toBeNull();
  });
});

describe('isReplayCountTooLarge', () => {
  it.each<[string, boolean]>([
    [`last:${MAX_REPLAY_COUNT + 1}`, true],
    ['last:99999999999999999999', true],
    [` last:${'9'.repeat(400)} `, true], // Infinity as a number: still too large, never "not a number"
    [`last:${MAX_REPLAY_COUNT}`, false],
    [`last:000${MAX_REPLAY_COUNT}`, false],
    ['last:3', false],
    ['last:0', false],
    ['last:-99999999999999999999', false],
    ['last:1e30', false],
    ['session', false],
    ['bogus', false],
  ])('%j → %s', (text, expected) => {
    expect(isReplayCountTooLarge(text)).toBe(expected);
    // Too large is one reason readReplaySpec refuses a text, never a text it reads.
    if (expected) expect(readReplaySpec(text)).toBeNull();
  });
});

describe('replaySpecText', () => {
  it.each<[ReplaySpec, string]>([
    [{ kind: 'none' }, 'none'],
    [{ kind: 'session' }, 'session'],
    [{ kind: 'last', count: 12 }, 'last:12'],
  ])('%j → %s, which reads back as the same spec', (spec, text) => {
    expect(replaySpecText(spec)).toBe(text);
    expect(readReplaySpec(replaySpecText(spec))).toEqual(spec);
  });
});
