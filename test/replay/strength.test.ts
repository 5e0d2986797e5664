import { describe, expect, it } from 'vitest';
import { contextStrength } from '../../src/replay/strength.js';
import type { ContextStrength, EntryType, ReplayReason } from '../../src/replay/types.js';

type Row = [name: string, usedTypes: EntryType[], trimmed: boolean, reason: ReplayReason, expected: ContextStrength];

describe('contextStrength (strongMinTurns 2)', () => {
  it.each<Row>([
    // weak: no turn used; or every used turn is meta/other; or clarification and the budget trimmed
    ['weak: nothing used (continuation)', [], false, 'continuation', 'weak'],
    ['weak: nothing used (session)', [], false, 'session', 'weak'],
    ['weak: nothing used, even when trimmed', [], true, 'session', 'weak'],
    ['weak: only meta', ['meta'], false, 'continuation', 'weak'],
    ['weak: only meta and other', ['meta', 'other'], false, 'session', 'weak'],
    ['weak: only other, many turns', ['other', 'other', 'other'], false, 'continuation', 'weak'],
    ['weak: clarification and trimmed', ['question', 'instruction'], true, 'clarification', 'weak'],
    ['weak: clarification and trimmed beats task context', ['instruction', 'correction', 'instruction'], true, 'clarification', 'weak'],
    // strong: ≥2 used, nothing trimmed, session or continuation, an instruction or correction used
    ['strong: instruction + question, continuation', ['instruction', 'question'], false, 'continuation', 'strong'],
    ['strong: correction + meta, session', ['correction', 'meta'], false, 'session', 'strong'],
    ['strong: three instructions, session', ['instruction', 'instruction', 'instruction'], false, 'session', 'strong'],
    ['strong: noise does not spoil task context', ['other', 'meta', 'correction'], false, 'continuation', 'strong'],
    // moderate: everything else
    ['moderate: only one turn used', ['instruction'], false, 'continuation', 'moderate'],
    ['moderate: one correction, session', ['correction'], false, 'session', 'moderate'],
    ['moderate: no instruction or correction', ['question', 'question'], false, 'continuation', 'moderate'],
    ['moderate: questions and noise', ['question', 'meta', 'other'], false, 'session', 'moderate'],
    ['moderate: trimmed continuation', ['instruction', 'correction'], true, 'continuation', 'moderate'],
    ['moderate: trimmed session', ['instruction', 'question'], true, 'session', 'moderate'],
    ['moderate: clarification is never strong', ['instruction', 'correction'], false, 'clarification', 'moderate'],
    ['moderate: clarification, only questions, not trimmed', ['question', 'question', 'question'], false, 'clarification', 'moderate'],
    ['moderate: single trimmed question', ['question'], true, 'continuation', 'moderate'],
  ])('%s', (_name, usedTypes, trimmed, reason, expected) => {
    expect(contextStrength({ usedTypes, trimmed, reason, strongMinTurns: 2 })).toBe(expected);
  });
});

describe('contextStrength with a configured strongMinTurns', () => {
  it.each<[number, EntryType[], ContextStrength]>([
    [1, ['instruction'], 'strong'],
    [1, ['question'], 'moderate'],
    [3, ['instruction', 'question'], 'moderate'],
    [3, ['instruction', 'question', 'question'], 'strong'],
  ])('strongMinTurns %i with %j → %s', (strongMinTurns, usedTypes, expected) => {
    expect(contextStrength({ usedTypes, trimmed: false, reason: 'continuation', strongMinTurns })).toBe(expected);
  });
});
