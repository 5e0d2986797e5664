import type { EntryType, ReplayPolicyLog } from '../replay/types.js';
import type { Endpoint } from '../replay/types.js';

export const TURN_STATUSES = ['ok', 'interrupted', 'error'] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];

export interface Timings {
  first_token_ms: number | null;
  total_ms: number;
  /** Ollama's own counts and durations (nanoseconds), null when the stream never finished. */
  total_duration_ns: number | null;
  load_duration_ns: number | null;
  prompt_eval_count: number | null;
  prompt_eval_duration_ns: number | null;
  eval_count: number | null;
  eval_duration_ns: number | null;
}

/** date-fns patterns of the log's times: ISO 8601 local time with offset, and the daily file's date. */
export const TIMESTAMP_PATTERN = "yyyy-MM-dd'T'HH:mm:ss.SSSxxx";
export const DAY_PATTERN = 'yyyy-MM-dd';

/** One turn: one NDJSON line in logs/YYYY-MM-DD.log. */
export interface LogEntry {
  id: string;
  timestamp: string;
  session: string;
  session_id: string;
  status: TurnStatus;
  entry_type: EntryType;
  model: string;
  endpoint: Endpoint;
  active_mode: string | null;
  persona: string;
  verbosity: 'short' | 'long';
  replay: { enabled: boolean; count: number | null; session: boolean };
  user_prompt: string;
  model_response: string;
  replay_policy: ReplayPolicyLog | null;
  replayed_ids: string[];
  timings: Timings;
  done_reason: string | null;
  error: string | null;
}

/** A parsed line, or null when the line is not a turn (readers skip and count those). */
export function parseEntry(line: string): LogEntry | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const entry = value as Partial<LogEntry>;
  const valid =
    typeof entry.id === 'string' &&
    typeof entry.session_id === 'string' &&
    typeof entry.timestamp === 'string' &&
    typeof entry.user_prompt === 'string' &&
    typeof entry.model_response === 'string' &&
    typeof entry.status === 'string';
  return valid ? (value as LogEntry) : null;
}
