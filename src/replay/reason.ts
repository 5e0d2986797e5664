import { containsPhrase, readWords } from './phrases.js';
import type { ReplayReason, ReplaySpec } from './types.js';

/** Why earlier turns are replayed; null when replay is off. */
export function inferReason(
  spec: ReplaySpec,
  input: string,
  explicit: ReplayReason | undefined,
  clarificationPhrases: readonly string[],
): ReplayReason | null {
  switch (spec.kind) {
    case 'none':
      return null;
    case 'session':
      return 'session';
    case 'last':
      if (explicit) return explicit;
      return containsPhrase(readWords(input), clarificationPhrases) ? 'clarification' : 'continuation';
  }
}

/**
 * Why an explicit reason cannot go with a replay, or null when it can: a reason needs turns to
 * replay, and `session` replay always replays for reason "session". Each adapter words it.
 */
export function reasonConflict(explicit: ReplayReason, spec: ReplaySpec): 'no_replay' | 'session_only' | null {
  if (spec.kind === 'none') return 'no_replay';
  if (spec.kind === 'session' && explicit !== 'session') return 'session_only';
  return null;
}
