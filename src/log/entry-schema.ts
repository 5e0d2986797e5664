// The log line's zod schema: the one definition of a turn on disk. Loaded only where a line's wrong
// field must be named (entryProblem) or the schema itself is needed; readers check lines with
// isLogEntry (entry.ts), which test/log/entry-check.test.ts proves gives this schema's verdict.
import * as z from 'zod';
import { ENTRY_TYPES, OUTCOMES, REASONS, STRENGTHS, THINK_LEVELS } from './entry-words.js';
import { ownRecord } from './own-record.js';
import type { TurnStatus } from './entry-words.js';

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
  /** Absent on lines written before the log kept only the newest 50 decisions (none were left out then). */
  decisions_omitted: count.optional(),
});

/** One tool call of an agent run. `result` is what the model was sent (for trajectories); failures carry `error`. */
const ToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).nullable(),
  /** One of TOOL_CALL_OUTCOMES as written; read as any text, as status is, so an outcome a newer Argo added does not make its line unreadable. */
  outcome: z.string(),
  round: count,
  /** Which response of its round the call came from, when a re-ask made it not the first (2 to 4). */
  attempt: count.optional(),
  ms: z.number(),
  result_chars: count,
  result: z.string().optional(),
  saved_as: z.string().optional(),
  error: z.string().optional(),
  /** Raw exception text, for diagnosis; never shown. */
  error_detail: z.string().optional(),
});

/**
 * One call of a client's own tools (argo serve's `tools`), which the client runs: the id it was
 * given (the model's, or `call_<round>_<index>`), and the arguments as the model wrote them.
 */
const ClientToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()) });

/** One microcompaction step; `round` (absent on older lines) tells apart calls that share an id. */
const CompactionSchema = z.object({
  id: z.string(),
  round: count.optional(),
  kind: z.enum(['saved', 'truncated', 'summarized']),
  chars_before: count,
  chars_after: count,
  saved_as: z.string().optional(),
});

/** The model's words and reasoning in a round whose calls ran (what a trajectory's gpt turn holds beside the calls). */
const RoundMessageSchema = z.object({ round: count, content: z.string(), thinking: z.string().optional() });

/** The fields an agent run (`--tools`) adds; a plain turn has none of them. */
const AgentFields = {
  round_messages: z.array(RoundMessageSchema).optional(),
  tools: z.array(z.string()).optional(),
  /** The run's tools array, kept in tool-definitions/<digest>.json; absent on older lines and unlogged runs. */
  tool_definitions_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
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
    /** Code points at the start of user_prompt that were typed, when piped text follows them; absent when all of it is the question. */
    typed_chars: count.optional(),
    model_response: z.string(),
    replay_policy: ReplayPolicySchema.nullable(),
    replayed_ids: z.array(z.string()),
    timings: TimingsSchema,
    done_reason: z.string().nullable(),
    error: z.string().nullable(),
    /** A thinking model's reasoning before `model_response` (an agent run's final response's); absent when none. */
    thinking: z.string().optional(),
    ...AgentFields,
    // What makes the request reproducible (argo rerun) and the context window check; absent on older lines.
    request_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    options: ownRecord(z.union([z.number(), z.boolean(), z.array(z.string())])).optional(),
    system: z.string().optional(),
    keep_alive: z.union([z.string(), z.number()]).optional(),
    think: z.union([z.boolean(), z.enum(THINK_LEVELS)]).optional(),
    ollama_stream: z.boolean().optional(),
    num_ctx: z.number().int().positive().nullable().optional(),
    prompt_tokens_estimate: count.optional(),
    truncation_suspected: z.boolean().optional(),
    rerun_of: z.string().optional(),
    /** How many messages a client of argo serve sent in plain mode (its own history, not logged); absent for every other turn. */
    client_messages: count.optional(),
    /** The names of the request fields a client of argo serve added (format, tools, logprobs…), not logged; absent for every other turn. */
    client_fields: z.array(z.string()).optional(),
    /** The calls of its own tools a client of argo serve was answered with; absent for every other turn. */
    client_tool_calls: z.array(ClientToolCallSchema).optional(),
  });
export const LogEntrySchema = EntryFields.loose();

export type Timings = z.infer<typeof TimingsSchema>;
export type ToolCallLog = z.infer<typeof ToolCallSchema>;
export type ClientToolCallLog = z.infer<typeof ClientToolCallSchema>;
export type RoundMessage = z.infer<typeof RoundMessageSchema>;
/** A turn as Argo writes it: the schema's fields, with a status this version writes, and any fields an answer step adds. */
export type LogEntry = Omit<z.infer<typeof EntryFields>, 'status'> & { status: TurnStatus } & Record<string, unknown>;

