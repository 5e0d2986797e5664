import type { EntryType, HistoryTurn } from './types.js';

export type ClassifiedTurn = HistoryTurn & { entry_type: EntryType };

export type CandidateTurn = ClassifiedTurn & { protected: boolean };

export interface FilterResult {
  kept: CandidateTurn[];
  filtered: ClassifiedTurn[];
}

/** Keeps the allowed types; the `protectedCount` most recent turns stay whatever their type. */
export function filterByReason(
  turns: readonly ClassifiedTurn[],
  allowed: readonly EntryType[],
  protectedCount: number,
): FilterResult {
  const firstProtected = turns.length - protectedCount;
  const kept: CandidateTurn[] = [];
  const filtered: ClassifiedTurn[] = [];
  turns.forEach((turn, index) => {
    const isProtected = index >= firstProtected;
    if (isProtected || allowed.includes(turn.entry_type)) kept.push({ ...turn, protected: isProtected });
    else filtered.push(turn);
  });
  return { kept, filtered };
}
