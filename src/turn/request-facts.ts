// What a turn logs about its request beyond the replay: the body's hash (argo rerun proves a
// rebuilt request with it) and the context window check (Ollama cuts long prompts silently).
import { createHash } from 'node:crypto';
import type { Settings } from '../config/settings.js';
import type { LogEntry } from '../log/entry.js';
import { estimatePromptTokens, overWindow, resolveWindow, truncationLine, truncationSuspected } from '../ollama/context-window.js';
import type { ContextWindow } from '../ollama/context-window.js';
import type { OllamaRequest } from '../replay/prompt.js';

/** SHA-256 (hex) of the request body as sent: JSON with its fixed key order. */
export function requestSha256(request: OllamaRequest): string {
  return createHash('sha256').update(JSON.stringify(request.body)).digest('hex');
}

/**
 * Prompts this small fit any window Ollama runs with, so a one-liner does not pay for asking the
 * model for its own window (`/api/show`) before it is sent.
 */
export const SMALL_PROMPT_TOKENS = 512;

export type NumCtxLookup = (model: string) => Promise<number | null>;

export interface ContextCheck {
  /** Null when not worked out (a small prompt without --num-ctx). */
  window: ContextWindow | null;
  estimate: number;
  /** The stderr line to print before sending, or null. */
  before: string | null;
  /** After the answer: the log fields and the stderr line (null when `before` already said it, or all is well). */
  after: (promptEvalCount: number | null) => { suspected: boolean; line: string | null };
}

/** The window (flag or config, else the model's own, else Ollama's default) and the estimate of `request`. */
export async function checkContext(settings: Settings, request: OllamaRequest, lookup: NumCtxLookup | undefined, always = false): Promise<ContextCheck> {
  const estimate = estimatePromptTokens(request.body);
  const numCtx = request.body.options?.num_ctx;
  let window: ContextWindow | null = null;
  if (typeof numCtx === 'number') window = { tokens: numCtx, source: settings.numCtxSource ?? 'flag' };
  else if (always || estimate > SMALL_PROMPT_TOKENS) window = resolveWindow(null, lookup ? await lookup(request.body.model) : null);
  const over = window !== null && overWindow({ window, estimate });
  return {
    window,
    estimate,
    before: window !== null && over ? truncationLine({ window, estimate }, null) : null,
    after: (count) => {
      const suspected = window !== null && truncationSuspected({ window, estimate }, count);
      return { suspected, line: suspected && !over && window !== null ? truncationLine({ window, estimate }, count) : null };
    },
  };
}

/** The log fields a turn adds about its request. */
export function requestFacts(settings: Settings, request: OllamaRequest, check: ContextCheck, suspected: boolean, rerunOf: string | undefined): Partial<LogEntry> {
  const body = request.body;
  return {
    request_sha256: requestSha256(request),
    ...(body.options !== undefined ? { options: body.options as NonNullable<LogEntry['options']> } : {}),
    ...(settings.system !== null ? { system: settings.system } : {}),
    ...(body.keep_alive !== undefined ? { keep_alive: body.keep_alive } : {}),
    ...(body.think !== undefined ? { think: body.think } : {}),
    ollama_stream: body.stream,
    num_ctx: check.window?.tokens ?? null,
    prompt_tokens_estimate: check.estimate,
    truncation_suspected: suspected,
    ...(rerunOf !== undefined ? { rerun_of: rerunOf } : {}),
  };
}
