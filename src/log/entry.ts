// The log line's codec: its schema, parse + validate, and serialize. The one definition of a turn on disk.
import * as z from 'zod';

/** How a turn ended. After `error` come an agent run's own endings (docs/agent.md); only `ok` is replayed. */
export const TURN_STATUSES = ['ok', 'interrupted', 'error', 'stopped', 'needs_input', 'tool_failures', 'max_iterations', 'invalid_response'] as const;
/** The endings every turn can have; summaries always show these and add the agent's own when they occur. */
export const BASIC_TURN_STATUSES = TURN_STATUSES.slice(0, 3);
export type TurnStatus = (typeof TURN_STATUSES)[number];

// The file format's own words. The replay core has the same ones (src/replay/types.ts); the turn
// use case assigns one to the other, so the compiler keeps them in step.
const ENTRY_TYPES = ['question', 'instruction', 'correction', 'meta', 'other'] as const;
const REASONS = ['continuation', 'clarification', 'session'] as const;
const STRENGTHS = ['strong', 'moderate', 'weak'] as const;
const OUTCOMES = ['used', 'elided', 'filtered', 'trimmed'] as const;

const count = z.number().int().nonnegative();
const nullableNumber = z.number().nullable();

const TimingsSchema = z.object({
  first_token_ms: nullableNumber,
  total_ms: z.number(),
  /** Ollama's own counts and durations (nanoseconds), null when the stream never finished. */
  total_duration_ns: nullableNumber,
  load_duration_ns: nullableNumber,
  prompt_eval_count: nullableNumber,
  prompt_eval_duration_ns: nullableNumber,
  eval_count: nullableNumber,
  eval_duration_ns: nullableNumber,
});

const ReplayPolicySchema = z.object({
  entries_available: count,
  entries_filtered: count,
  filtered_types: z.array(z.enum(ENTRY_TYPES)),
  entries_used: count,
  chars_used: count,
  trimmed: z.boolean(),
  reason: z.enum(REASONS),
  context_strength: z.enum(STRENGTHS),
  budget: count,
  decisions: z.array(
    z.object({ id: z.string(), entry_type: z.enum(ENTRY_TYPES), outcome: z.enum(OUTCOMES), protected: z.boolean(), chars: count }),
  ),
  decisions_omitted: count,
});

/** One tool call of an agent run. `result` is what the model was sent (for trajectories); failures carry `error`. */
const ToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).nullable(),
  outcome: z.enum(['success', 'failure', 'needs_input', 'invalid']),
  round: count,
  ms: z.number(),
  result_chars: count,
  result: z.string().optional(),
  saved_as: z.string().optional(),
  error: z.string().optional(),
  /** Raw exception text, for diagnosis; never shown. */
  error_detail: z.string().optional(),
});

const CompactionSchema = z.object({
  id: z.string(),
  kind: z.enum(['saved', 'summarized']),
  chars_before: count,
  chars_after: count,
  saved_as: z.string().optional(),
});

/** The fields an agent run (`--tools`) adds; a plain turn has none of them. */
const AgentFields = {
  tools: z.array(z.string()).optional(),
  tool_calls: z.array(ToolCallSchema).optional(),
  iterations: count.optional(),
  all_failure_rounds: count.optional(),
  stop_reason: z.string().nullable().optional(),
  tools_unavailable: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
  compacted: z.array(CompactionSchema).optional(),
  ephemeral_system: z.string().nullable().optional(),
};

/**
 * One turn: one NDJSON line in logs/YYYY-MM-DD.log. Fields a newer Argo adds are kept as they are
 * (`loose`), so reading and rewriting a line never drops what this version does not know.
 */
const EntryFields = z.object({
    id: z.string().min(1),
    timestamp: z.string(),
    session: z.string(),
    session_id: z.string(),
    status: z.string(),
    entry_type: z.enum(ENTRY_TYPES),
    model: z.string(),
    endpoint: z.enum(['chat', 'generate']),
    active_mode: z.string().nullable(),
    persona: z.string(),
    verbosity: z.enum(['short', 'long']),
    replay: z.object({ enabled: z.boolean(), count: count.nullable(), session: z.boolean() }),
    user_prompt: z.string(),
    model_response: z.string(),
    replay_policy: ReplayPolicySchema.nullable(),
    replayed_ids: z.array(z.string()),
    timings: TimingsSchema,
    done_reason: z.string().nullable(),
    error: z.string().nullable(),
    ...AgentFields,
    // What makes the request reproducible (argo rerun) and the context window check; absent on older lines.
    request_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    options: z.record(z.string(), z.union([z.number(), z.boolean(), z.array(z.string())])).optional(),
    system: z.string().optional(),
    keep_alive: z.union([z.string(), z.number()]).optional(),
    ollama_stream: z.boolean().optional(),
    num_ctx: z.number().int().positive().nullable().optional(),
    prompt_tokens_estimate: count.optional(),
    truncation_suspected: z.boolean().optional(),
    rerun_of: z.string().optional(),
  });
export const LogEntrySchema = EntryFields.loose();

export type Timings = z.infer<typeof TimingsSchema>;
export type ToolCallLog = z.infer<typeof ToolCallSchema>;
/** A turn as Argo writes it: the schema's fields, with a status this version writes, and any fields an answer step adds. */
export type LogEntry = Omit<z.infer<typeof EntryFields>, 'status'> & { status: TurnStatus } & Record<string, unknown>;

// The patterns live apart (no zod there), so a question that logs nothing never loads the schema.
export { DAY_PATTERN, TIMESTAMP_PATTERN } from './timestamp.js';

/** A parsed line, or null when the line is not a turn (readers skip and count those; see entryProblem). */
export function parseEntry(line: string): LogEntry | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  const parsed = LogEntrySchema.safeParse(value);
  return parsed.success ? (parsed.data as LogEntry) : null;
}

/** Why a parsed JSON value is not a turn, naming the first wrong field; null when it is one. */
export function entryProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'valid JSON but not an object';
  const parsed = LogEntrySchema.safeParse(value);
  if (parsed.success) return null;
  const [issue] = parsed.error.issues;
  if (issue === undefined) return 'not a turn';
  const field = issue.path.map(String).join('.');
  const got = fieldValue(value, issue.path);
  const what = got === undefined ? 'missing' : `${describeType(got)} where ${issue.message.replace(/^Invalid input: /, '')}`;
  return `valid JSON but not a turn (field "${field}": ${what})`;
}

function fieldValue(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * The line for a turn, without its newline. Lone surrogates (half of a UTF-16 pair, e.g. from a
 * cut emoji) become U+FFFD so the file stays well-formed UTF-8 JSON that every tool accepts.
 */
export function serializeEntry(entry: LogEntry): string {
  return JSON.stringify(entry, (_key, value: unknown) => (typeof value === 'string' ? value.replace(LONE_SURROGATE, '\uFFFD') : value));
}
