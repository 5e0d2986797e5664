// Generated log lines (turns) the schema accepts, optional parts present or not: the seeds that
// property tests change (schema-agreement.ts mutationsOf) or write and read back.
import fc from 'fast-check';
import { ENTRY_TYPES, OUTCOMES, REASONS, STRENGTHS, TURN_STATUSES } from '../../src/log/entry.js';
import type { LogEntry } from '../../src/log/entry.js';
import { THINK_LEVELS, TOOL_CALL_OUTCOMES } from '../../src/log/entry-words.js';
import { hostileText } from './property.js';

const text = hostileText(6);
const count = fc.oneof(fc.nat({ max: 10 }), fc.constantFrom(0, 2 ** 53 - 1));
const number = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.nat({ max: 1000 }));
const nullableNumber = fc.option(number, { nil: null });
const sha = fc.stringMatching(/^[0-9a-f]{64}$/);

const timings = fc.record({
  first_token_ms: nullableNumber,
  total_ms: number,
  total_duration_ns: nullableNumber,
  load_duration_ns: nullableNumber,
  prompt_eval_count: nullableNumber,
  prompt_eval_duration_ns: nullableNumber,
  eval_count: nullableNumber,
  eval_duration_ns: nullableNumber,
});

const decision = fc.record({ id: text, entry_type: fc.constantFrom(...ENTRY_TYPES), outcome: fc.constantFrom(...OUTCOMES), protected: fc.boolean(), chars: count });

const replayPolicy = fc.record({
  entries_available: count,
  entries_filtered: count,
  filtered_types: fc.array(fc.constantFrom(...ENTRY_TYPES), { maxLength: 3 }),
  entries_used: count,
  chars_used: count,
  trimmed: fc.boolean(),
  reason: fc.constantFrom(...REASONS),
  context_strength: fc.constantFrom(...STRENGTHS),
  budget: count,
  decisions: fc.array(decision, { maxLength: 3 }),
  decisions_omitted: count,
});

const toolCall = fc.record(
  {
    id: text,
    name: text,
    arguments: fc.oneof(fc.constant(null), text, fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })),
    outcome: fc.constantFrom(...TOOL_CALL_OUTCOMES),
    round: count,
    attempt: count,
    ms: number,
    result_chars: count,
    result: text,
    saved_as: text,
    error: text,
    error_detail: text,
  },
  { requiredKeys: ['id', 'name', 'arguments', 'outcome', 'round', 'ms', 'result_chars'] },
);

const clientToolCall = fc.record({ id: text, name: text, arguments: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) });

const compaction = fc.record(
  { id: text, round: count, kind: fc.constantFrom('saved', 'truncated', 'summarized'), chars_before: count, chars_after: count, saved_as: text },
  { requiredKeys: ['id', 'kind', 'chars_before', 'chars_after'] },
);

const optionalFields = fc.record(
  {
    tools: fc.array(text, { maxLength: 3 }),
    tool_definitions_sha256: sha,
    tool_calls: fc.array(toolCall, { maxLength: 2 }),
    iterations: count,
    all_failure_rounds: count,
    stop_reason: fc.option(text, { nil: null }),
    tools_unavailable: fc.array(fc.record({ name: text, reason: text }), { maxLength: 2 }),
    compacted: fc.array(compaction, { maxLength: 2 }),
    ephemeral_system: fc.option(text, { nil: null }),
    request_sha256: sha,
    options: fc.dictionary(text, fc.oneof(number, fc.boolean(), fc.array(text, { maxLength: 2 })), { maxKeys: 3 }),
    system: text,
    keep_alive: fc.oneof(text, number),
    think: fc.oneof(fc.boolean(), fc.constantFrom(...THINK_LEVELS)),
    ollama_stream: fc.boolean(),
    num_ctx: fc.option(fc.integer({ min: 1, max: 2 ** 20 }), { nil: null }),
    prompt_tokens_estimate: count,
    truncation_suspected: fc.boolean(),
    rerun_of: text,
    client_tool_calls: fc.array(clientToolCall, { maxLength: 2 }),
  },
  { requiredKeys: [] },
);

/** A turn as Argo writes it, or as a newer Argo may (a field this version does not know). */
export const logEntry: fc.Arbitrary<LogEntry> = fc
  .tuple(
    fc.record({
      id: hostileText(6).filter((id) => id !== ''),
      timestamp: text,
      session: text,
      session_id: text,
      status: fc.constantFrom(...TURN_STATUSES),
      entry_type: fc.constantFrom(...ENTRY_TYPES),
      model: text,
      endpoint: fc.constantFrom('chat' as const, 'generate' as const),
      active_mode: fc.option(text, { nil: null }),
      persona: text,
      verbosity: fc.constantFrom('short' as const, 'long' as const),
      replay: fc.record({ enabled: fc.boolean(), count: fc.option(count, { nil: null }), session: fc.boolean() }),
      user_prompt: text,
      model_response: text,
      replay_policy: fc.option(replayPolicy, { nil: null }),
      replayed_ids: fc.array(text, { maxLength: 3 }),
      timings,
      done_reason: fc.option(text, { nil: null }),
      error: fc.option(text, { nil: null }),
    }),
    optionalFields,
    fc.option(fc.record({ from_a_newer_argo: fc.jsonValue({ maxDepth: 2 }) }), { nil: {} }),
  )
  .map(([required, optional, newer]) => ({ ...required, ...optional, ...newer }));

/** The schema's fixed strings: enum members and a digest, so that a change may make a field right too. */
export const ENTRY_WORDS: readonly string[] = [
  ...ENTRY_TYPES,
  ...OUTCOMES,
  ...REASONS,
  ...STRENGTHS,
  ...TURN_STATUSES,
  ...THINK_LEVELS,
  'chat',
  'generate',
  'short',
  'long',
  'success',
  'failure',
  'needs_input',
  'invalid',
  'not_run',
  'saved',
  'truncated',
  'summarized',
  'a'.repeat(64),
  'A'.repeat(64),
  `${'a'.repeat(64)}\n`,
];

/** Every field name of a turn and its parts, for keys a change adds. */
export const ENTRY_FIELDS: readonly string[] = [
  'id', 'timestamp', 'session', 'session_id', 'status', 'entry_type', 'model', 'endpoint', 'active_mode', 'persona', 'verbosity', 'replay',
  'user_prompt', 'model_response', 'replay_policy', 'replayed_ids', 'timings', 'done_reason', 'error', 'tools', 'tool_definitions_sha256',
  'tool_calls', 'iterations', 'all_failure_rounds', 'stop_reason', 'tools_unavailable', 'compacted', 'ephemeral_system', 'request_sha256',
  'options', 'system', 'keep_alive', 'think', 'ollama_stream', 'num_ctx', 'prompt_tokens_estimate', 'truncation_suspected', 'rerun_of', 'client_tool_calls',
  'enabled', 'count', 'first_token_ms', 'total_ms', 'eval_count', 'decisions', 'decisions_omitted', 'filtered_types', 'reason', 'round',
  'result', 'saved_as', 'error_detail', 'arguments', 'outcome', 'ms', 'result_chars', 'kind', 'chars_before', 'chars_after', 'name',
];
