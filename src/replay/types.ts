export const ENTRY_TYPES = ['question', 'instruction', 'correction', 'meta', 'other'] as const;
export type EntryType = (typeof ENTRY_TYPES)[number];

export const REPLAY_REASONS = ['continuation', 'clarification', 'session'] as const;
export type ReplayReason = (typeof REPLAY_REASONS)[number];

export const CONTEXT_STRENGTHS = ['strong', 'moderate', 'weak'] as const;
export type ContextStrength = (typeof CONTEXT_STRENGTHS)[number];

export const VERBOSITIES = ['auto', 'short', 'long'] as const;
export type Verbosity = (typeof VERBOSITIES)[number];

export const ENDPOINTS = ['chat', 'generate'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

export type ReplaySpec = { kind: 'none' } | { kind: 'last'; count: number } | { kind: 'session' };

export interface TurnText {
  prompt: string;
  response: string;
}

/**
 * An earlier ok turn (oldest first), with its text at hand or loadable on demand: replay reads the
 * words of only the turns it classifies or the budget reaches, so a long session costs what is sent.
 * `entry_type`, when given, is the turn's type under the current rules (e.g. cached in the session
 * index) and saves classifying it again.
 */
export type HistoryTurn = ({ id: string } & TurnText & { entry_type?: EntryType }) | DeferredTurn;

export interface DeferredTurn {
  id: string;
  entry_type?: EntryType;
  load: () => TurnText;
}

export function textOf(turn: HistoryTurn): TurnText {
  return 'load' in turn ? turn.load() : turn;
}

/** What happened to one loaded turn, and why. */
export type TurnOutcome = 'used' | 'elided' | 'filtered' | 'trimmed';

export interface TurnDecision {
  id: string;
  entry_type: EntryType;
  outcome: TurnOutcome;
  protected: boolean;
  /** Code points of the turn's replay text as sent (0 when not sent). */
  chars: number;
}

/** The replay diagnostics logged with every turn (seed fields first). */
export interface ReplayPolicyLog {
  entries_available: number;
  entries_filtered: number;
  filtered_types: EntryType[];
  entries_used: number;
  chars_used: number;
  trimmed: boolean;
  reason: ReplayReason;
  context_strength: ContextStrength;
  budget: number;
  /** One per loaded turn, oldest first; in the log only the newest ones (see policyForLog). */
  decisions: TurnDecision[];
  /** Older loaded turns left out of `decisions` (0 unless the log line was shortened). */
  decisions_omitted: number;
}
