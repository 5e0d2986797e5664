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

/** A turn's words as logged, with where the typed part of its prompt ends (`typed_chars`: piped text follows it). */
export interface TurnWords extends TurnText {
  typedChars?: number | undefined;
}

/**
 * An earlier ok turn (oldest first) as the session's index describes it: its id, and its type when
 * known under the current rules (cached in the index). Its words (`prompt`, `response`) are present
 * once read: the core says which turns it needs read (textsNeeded) and the caller reads them, so a
 * long session costs the turns the replay reaches, not its length.
 */
export interface HistoryTurn extends Partial<TurnWords> {
  id: string;
  entry_type?: EntryType;
}

/** A history turn whose words have been read. */
export type LoadedTurn = HistoryTurn & TurnText;

export function isLoaded(turn: HistoryTurn): turn is LoadedTurn {
  return turn.prompt !== undefined && turn.response !== undefined;
}

/** The words of a turn the plan said it needs; missing ones are a bug in the caller's loading loop. */
export function textOf(turn: HistoryTurn): TurnText {
  if (!isLoaded(turn)) throw new Error(`replay: the words of turn ${turn.id} were needed but not read (call textsNeeded first)`);
  return { prompt: turn.prompt, response: turn.response };
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
