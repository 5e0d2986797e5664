// The log line's fixed words, shared by its schema (entry-schema.ts) and its check (entry.ts).

/**
 * How a turn ended. After `error` come an agent run's own endings (docs/agent.md), then argo serve's
 * `tool_calls` (an answer that was calls of the client's own tools); only `ok` is replayed.
 */
export const TURN_STATUSES = ['ok', 'interrupted', 'error', 'stopped', 'needs_input', 'tool_failures', 'max_iterations', 'invalid_response', 'tool_calls'] as const;
/** The endings every turn can have; summaries always show these and add the agent's own when they occur. */
export const BASIC_TURN_STATUSES = TURN_STATUSES.slice(0, 3);
export type TurnStatus = (typeof TURN_STATUSES)[number];

// The file format's own words. The replay core has the same ones (src/replay/types.ts); the turn
// use case assigns one to the other, so the compiler keeps them in step.
export const ENTRY_TYPES = ['question', 'instruction', 'correction', 'meta', 'other'] as const;
export const REASONS = ['continuation', 'clarification', 'session'] as const;
export const STRENGTHS = ['strong', 'moderate', 'weak'] as const;
export const OUTCOMES = ['used', 'elided', 'filtered', 'trimmed'] as const;
/**
 * How an agent run's tool call ended (docs/logs.md): ran (`success`, `failure`, `needs_input` from
 * its result), failed validation (`needs_input` for a missing parameter, `invalid`), or never ran
 * (`not_run`: its response was asked again or ended the run, the run stopped first, or it repeated an id).
 */
export const TOOL_CALL_OUTCOMES = ['success', 'failure', 'needs_input', 'invalid', 'not_run'] as const;
export type ToolCallOutcome = (typeof TOOL_CALL_OUTCOMES)[number];
/** Ollama's `think` levels as a turn logs them (besides true/false); src/replay/prompt.ts has the request's. */
export const THINK_LEVELS = ['low', 'medium', 'high', 'max'] as const;
