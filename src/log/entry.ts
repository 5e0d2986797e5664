// The log line's codec: parse + validate (isLogEntry) and serialize; its zod schema, the one definition of a turn on disk, is in entry-schema.ts.
import type { LogEntry } from './entry-schema.js';

export type { ClientToolCallLog, LogEntry, Timings, ToolCallLog } from './entry-schema.js';

export { BASIC_TURN_STATUSES, ENTRY_TYPES, OUTCOMES, REASONS, STRENGTHS, TOOL_CALL_OUTCOMES, TURN_STATUSES } from './entry-words.js';
export type { ToolCallOutcome, TurnStatus } from './entry-words.js';
import { ENTRY_TYPES, OUTCOMES, REASONS, STRENGTHS, THINK_LEVELS } from './entry-words.js';

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
  return isLogEntry(value) ? value : null;
}

// ---------------------------------------------------------------------------------------------
// The fast check. Readers run it on every line they read, where zod's safeParse costs more than
// JSON.parse itself (it builds a copy and, for a bad line, issue objects). It accepts exactly what
// LogEntrySchema accepts (test/log/entry-check.test.ts proves it field by field, value by value);
// zod stays the definition and still names the wrong field (entryProblem) once a line is rejected.

type Check = (value: unknown) => boolean;

const isString: Check = (value) => typeof value === 'string';
const isNumber: Check = (value) => typeof value === 'number' && Number.isFinite(value);
const isBoolean: Check = (value) => typeof value === 'boolean';
const isCount: Check = (value) => Number.isSafeInteger(value) && (value as number) >= 0;
/** A JSON object: not null, not an array. */
export const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const nullable =
  (check: Check): Check =>
  (value) =>
    value === null || check(value);
const optional =
  (check: Check): Check =>
  (value) =>
    value === undefined || check(value);
const oneOf = (values: readonly string[]): Check => {
  const set = new Set<unknown>(values);
  return (value) => set.has(value);
};
const anyOf =
  (...checks: Check[]): Check =>
  (value) =>
    checks.some((check) => check(value));
const arrayOf =
  (check: Check): Check =>
  (value) => {
    if (!Array.isArray(value)) return false;
    for (const item of value) if (!check(item)) return false;
    return true;
  };
const recordOf =
  (check: Check): Check =>
  (value) => {
    if (!isPlainObject(value)) return false;
    for (const key in value) if (Object.hasOwn(value, key) && !check(value[key])) return false;
    return true;
  };
/** An object with these fields (others allowed: zod's objects strip them, the entry keeps them). */
const shape = (fields: Record<string, Check>): Check => {
  const keys = Object.keys(fields);
  const checks = Object.values(fields);
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const check = checks[i];
      if (key === undefined || !check?.(value[key])) return false;
    }
    return true;
  };
};

const SHA256 = /^[0-9a-f]{64}$/;
const isEntryType = oneOf(ENTRY_TYPES);
const isThinkLevel = oneOf(THINK_LEVELS);
const isNullableNumber = nullable(isNumber);
const isNullableString = nullable(isString);

// The parts every turn has are checked with plain property reads (fast on objects of one shape);
// the agent's and the request's optional parts, absent from most lines, with the combinators.
const isDecision = shape({ id: isString, entry_type: isEntryType, outcome: oneOf(OUTCOMES), protected: isBoolean, chars: isCount });
const isReason = oneOf(REASONS);
const isStrength = oneOf(STRENGTHS);
const isEndpoint = oneOf(['chat', 'generate']);
const isVerbosity = oneOf(['short', 'long']);

function isReplay(value: unknown): boolean {
  return isPlainObject(value) && typeof value.enabled === 'boolean' && (value.count === null || isCount(value.count)) && typeof value.session === 'boolean';
}

function isPolicy(value: unknown): boolean {
  if (value === null) return true;
  if (!isPlainObject(value)) return false;
  const p = value;
  return (
    isCount(p.entries_available) &&
    isCount(p.entries_filtered) &&
    arrayOf(isEntryType)(p.filtered_types) &&
    isCount(p.entries_used) &&
    isCount(p.chars_used) &&
    typeof p.trimmed === 'boolean' &&
    isReason(p.reason) &&
    isStrength(p.context_strength) &&
    isCount(p.budget) &&
    Array.isArray(p.decisions) &&
    p.decisions.every(isDecision) &&
    (p.decisions_omitted === undefined || isCount(p.decisions_omitted))
  );
}

function isTimings(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const t = value;
  return (
    isNullableNumber(t.first_token_ms) &&
    isNumber(t.total_ms) &&
    isNullableNumber(t.total_duration_ns) &&
    isNullableNumber(t.load_duration_ns) &&
    isNullableNumber(t.prompt_eval_count) &&
    isNullableNumber(t.prompt_eval_duration_ns) &&
    isNullableNumber(t.eval_count) &&
    isNullableNumber(t.eval_duration_ns)
  );
}

const isToolCall = shape({
  id: isString,
  name: isString,
  arguments: nullable(anyOf(recordOf(() => true), isString)),
  outcome: isString, // any text, as in entry-schema.ts: a newer Argo's outcome keeps its line readable
  round: isCount,
  attempt: optional(isCount),
  ms: isNumber,
  result_chars: isCount,
  result: optional(isString),
  saved_as: optional(isString),
  error: optional(isString),
  error_detail: optional(isString),
});
const isClientToolCall = shape({ id: isString, name: isString, arguments: recordOf(() => true) });
const isUnavailableTool = shape({ name: isString, reason: isString });
const isRoundMessage = shape({ round: isCount, content: isString, thinking: optional(isString) });
const isCompaction = shape({ id: isString, round: optional(isCount), kind: oneOf(['saved', 'truncated', 'summarized']), chars_before: isCount, chars_after: isCount, saved_as: optional(isString) });
const isOptionValue = anyOf(isNumber, isBoolean, arrayOf(isString));

/** The fields only some turns have (an agent run's, a reproducible request's): each absent or right. */
function isOptionalPart(e: Record<string, unknown>): boolean {
  return (
    (e.thinking === undefined || isString(e.thinking)) &&
    (e.typed_chars === undefined || isCount(e.typed_chars)) &&
    (e.round_messages === undefined || arrayOf(isRoundMessage)(e.round_messages)) &&
    (e.tools === undefined || arrayOf(isString)(e.tools)) &&
    (e.tool_definitions_sha256 === undefined || (typeof e.tool_definitions_sha256 === 'string' && SHA256.test(e.tool_definitions_sha256))) &&
    (e.tool_calls === undefined || arrayOf(isToolCall)(e.tool_calls)) &&
    (e.iterations === undefined || isCount(e.iterations)) &&
    (e.all_failure_rounds === undefined || isCount(e.all_failure_rounds)) &&
    (e.stop_reason === undefined || isNullableString(e.stop_reason)) &&
    (e.tools_unavailable === undefined || arrayOf(isUnavailableTool)(e.tools_unavailable)) &&
    (e.compacted === undefined || arrayOf(isCompaction)(e.compacted)) &&
    (e.ephemeral_system === undefined || isNullableString(e.ephemeral_system)) &&
    (e.request_sha256 === undefined || (typeof e.request_sha256 === 'string' && SHA256.test(e.request_sha256))) &&
    (e.options === undefined || recordOf(isOptionValue)(e.options)) &&
    (e.system === undefined || typeof e.system === 'string') &&
    (e.keep_alive === undefined || typeof e.keep_alive === 'string' || isNumber(e.keep_alive)) &&
    (e.think === undefined || typeof e.think === 'boolean' || isThinkLevel(e.think)) &&
    (e.ollama_stream === undefined || typeof e.ollama_stream === 'boolean') &&
    (e.num_ctx === undefined || e.num_ctx === null || (Number.isSafeInteger(e.num_ctx) && (e.num_ctx as number) > 0)) &&
    (e.prompt_tokens_estimate === undefined || isCount(e.prompt_tokens_estimate)) &&
    (e.truncation_suspected === undefined || typeof e.truncation_suspected === 'boolean') &&
    (e.rerun_of === undefined || typeof e.rerun_of === 'string') &&
    (e.client_messages === undefined || isCount(e.client_messages)) &&
    (e.client_fields === undefined || arrayOf(isString)(e.client_fields)) &&
    (e.client_tool_calls === undefined || arrayOf(isClientToolCall)(e.client_tool_calls))
  );
}

function entryCheck(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const e = value;
  return (
    typeof e.id === 'string' &&
    e.id.length >= 1 &&
    typeof e.timestamp === 'string' &&
    typeof e.session === 'string' &&
    typeof e.session_id === 'string' &&
    typeof e.status === 'string' &&
    isEntryType(e.entry_type) &&
    typeof e.model === 'string' &&
    isEndpoint(e.endpoint) &&
    (e.active_mode === null || typeof e.active_mode === 'string') &&
    typeof e.persona === 'string' &&
    isVerbosity(e.verbosity) &&
    isReplay(e.replay) &&
    typeof e.user_prompt === 'string' &&
    typeof e.model_response === 'string' &&
    isPolicy(e.replay_policy) &&
    Array.isArray(e.replayed_ids) &&
    e.replayed_ids.every(isString) &&
    isTimings(e.timings) &&
    (e.done_reason === null || typeof e.done_reason === 'string') &&
    (e.error === null || typeof e.error === 'string') &&
    isOptionalPart(e)
  );
}

/** Whether a parsed JSON value is a turn: exactly LogEntrySchema's verdict, without building a copy. */
export function isLogEntry(value: unknown): value is LogEntry {
  return entryCheck(value);
}

/**
 * Why a parsed JSON value is not a turn, naming the first wrong field; null when it is one. zod loads
 * here only: reading lines that are turns never needs it.
 */
export async function entryProblem(value: unknown): Promise<string | null> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'valid JSON but not an object';
  if (isLogEntry(value)) return null;
  const { LogEntrySchema } = await import('./entry-schema.js');
  const parsed = LogEntrySchema.safeParse(value);
  if (parsed.success) return null;
  const [issue] = parsed.error.issues;
  if (issue === undefined) return 'not a turn';
  // Quoted as JSON: a key of the line may hold a newline, and the problem is one line of `argo logs check`.
  const field = JSON.stringify(issue.path.map(String).join('.'));
  const got = fieldValue(value, issue.path);
  // zod says only "Invalid input" of a value none of a field's choices takes (keep_alive: null).
  const expected = issue.message.replace(/^Invalid input(: |$)/, '');
  const what = got === undefined ? 'missing' : expected === '' ? `${describeType(got)}, which the field does not take` : `${describeType(got)} where ${expected}`;
  return `valid JSON but not a turn (field ${field}: ${what})`;
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
  return wellFormedJson(entry);
}

/** JSON text of `value` with every lone surrogate made U+FFFD (see serializeEntry): for files that hold a turn. */
export function wellFormedJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'string' ? wellFormedText(item) : item));
}

/** `text` with every lone surrogate made U+FFFD, as its log line will hold it. */
export function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}
