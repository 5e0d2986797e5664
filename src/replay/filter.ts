import type { EntryType, HistoryTurn } from './types.js';

export type ClassifiedTurn = HistoryTurn & { entry_type: EntryType };

export type CandidateTurn = ClassifiedTurn & { protected: boolean };

export interface FilterResult {
  kept: CandidateTurn[];
  filtered: ClassifiedTurn[];
}

/** What the filter makes of a turn: sent whatever the budget (protected), sent if it fits (kept), or left out (filtered). */
export type Standing = 'protected' | 'kept' | 'filtered';

/** The standing of the turn at an index of the turns the filter was given. */
export type StandingAt = (index: number) => Standing;

/**
 * The filter as a rule, asked turn by turn: a long session is filtered once per planning round, and
 * thousands of `{ ...turn, protected }` copies each time are what its memory went on.
 */
export function standingByReason(turns: readonly ClassifiedTurn[], allowed: readonly EntryType[], protectedCount: number): StandingAt {
  const firstProtected = turns.length - protectedCount;
  return (index) => {
    if (index >= firstProtected) return 'protected';
    const turn = turns[index];
    return turn !== undefined && allowed.includes(turn.entry_type) ? 'kept' : 'filtered';
  };
}

/** Keeps the allowed types; the `protectedCount` most recent turns stay whatever their type. */
export function filterByReason(
  turns: readonly ClassifiedTurn[],
  allowed: readonly EntryType[],
  protectedCount: number,
): FilterResult {
  const standing = standingByReason(turns, allowed, protectedCount);
  const kept: CandidateTurn[] = [];
  const filtered: ClassifiedTurn[] = [];
  turns.forEach((turn, index) => {
    const is = standing(index);
    if (is === 'filtered') filtered.push(turn);
    else kept.push({ ...turn, protected: is === 'protected' });
  });
  return { kept, filtered };
}
