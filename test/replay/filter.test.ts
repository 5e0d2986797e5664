import { describe, expect, it } from 'vitest';
import { filterByReason } from '../../src/replay/filter.js';
import type { ClassifiedTurn } from '../../src/replay/filter.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import type { EntryType, ReplayReason } from '../../src/replay/types.js';

function turns(types: readonly EntryType[]): ClassifiedTurn[] {
  return types.map((entry_type, i) => ({ id: `t${i + 1}`, prompt: `p${i + 1}`, response: `r${i + 1}`, entry_type }));
}

const ids = (list: readonly { id: string }[]): string[] => list.map((turn) => turn.id);

describe('filterByReason with the default table', () => {
  // t1..t5 are one of each type; t6 and t7 (meta, other) are the two most recent, kept whatever their type.
  const history = turns(['question', 'instruction', 'correction', 'meta', 'other', 'meta', 'other']);

  it.each<[ReplayReason, string[], string[]]>([
    ['continuation', ['t1', 't2', 't3', 't6', 't7'], ['t4', 't5']],
    ['clarification', ['t1', 't2', 't6', 't7'], ['t3', 't4', 't5']],
    ['session', ['t2', 't3', 't6', 't7'], ['t1', 't4', 't5']],
  ])('%s keeps %j, filters %j', (reason, kept, filtered) => {
    const result = filterByReason(history, DEFAULT_REPLAY_POLICY.filters[reason], 2);
    expect(ids(result.kept)).toEqual(kept);
    expect(ids(result.filtered)).toEqual(filtered);
    expect(result.kept.filter((turn) => turn.protected).map((turn) => turn.id)).toEqual(['t6', 't7']);
  });

  it.each<[ReplayReason, EntryType, EntryType]>([
    ['continuation', 'meta', 'other'],
    ['clarification', 'correction', 'meta'],
    ['session', 'question', 'other'],
  ])('%s keeps the two most recent even as %s and %s', (reason, older, newer) => {
    const result = filterByReason(turns(['instruction', older, older, older, newer]), DEFAULT_REPLAY_POLICY.filters[reason], 2);
    expect(ids(result.kept)).toEqual(['t1', 't4', 't5']);
    expect(ids(result.filtered)).toEqual(['t2', 't3']);
  });
});

describe('filterByReason edges', () => {
  it.each<[string, EntryType[], number, string[], string[], string[]]>([
    // name, types, protectedCount, kept, filtered, protected
    ['no turns', [], 2, [], [], []],
    ['one turn, fewer than the protected count', ['meta'], 2, ['t1'], [], ['t1']],
    ['two noise turns, both protected', ['meta', 'other'], 2, ['t1', 't2'], [], ['t1', 't2']],
    ['protectedCount 0 filters purely by type', ['meta', 'question', 'other'], 0, ['t2'], ['t1', 't3'], []],
    ['protectedCount 3', ['meta', 'meta', 'meta', 'meta'], 3, ['t2', 't3', 't4'], ['t1'], ['t2', 't3', 't4']],
  ])('%s', (_name, types, protectedCount, kept, filtered, protectedIds) => {
    const result = filterByReason(turns(types), ['question', 'instruction'], protectedCount);
    expect(ids(result.kept)).toEqual(kept);
    expect(ids(result.filtered)).toEqual(filtered);
    expect(result.kept.filter((turn) => turn.protected).map((turn) => turn.id)).toEqual(protectedIds);
  });

  it('keeps the turns whole and in order, and leaves the input untouched', () => {
    const history = turns(['instruction', 'meta', 'question', 'other', 'correction']);
    const before = structuredClone(history);
    const result = filterByReason(history, ['instruction', 'question'], 2);
    expect(result.kept).toEqual([
      { id: 't1', prompt: 'p1', response: 'r1', entry_type: 'instruction', protected: false },
      { id: 't3', prompt: 'p3', response: 'r3', entry_type: 'question', protected: false },
      { id: 't4', prompt: 'p4', response: 'r4', entry_type: 'other', protected: true },
      { id: 't5', prompt: 'p5', response: 'r5', entry_type: 'correction', protected: true },
    ]);
    expect(result.filtered).toEqual([{ id: 't2', prompt: 'p2', response: 'r2', entry_type: 'meta' }]);
    expect(history).toEqual(before);
  });
});
