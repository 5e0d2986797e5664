// What a turn logs about its request beyond the replay: the body's hash (argo rerun proves a
// rebuilt request with it) and the context window check (Ollama cuts long prompts silently).
import { createHash } from 'node:crypto';
import type { Settings } from '../config/settings.js';
import type { LogEntry } from '../log/entry.js';
import { countMayBeWindow, estimatePromptTokens, overWindow, resolveWindow, truncationLine, truncationSuspected } from '../ollama/context-window.js';
import type { ContextWindow, EstimableBody, PromptGrowth, WindowFixes } from '../ollama/context-window.js';
import type { TransportRequest } from '../ollama/transport.js';
import type { OllamaRequest } from '../replay/prompt.js';

/** SHA-256 (hex) of the request body as sent: JSON with its fixed key order. */
export function requestSha256(request: Pick<TransportRequest, 'body'>): string {
  return createHash('sha256').update(JSON.stringify(request.body)).digest('hex');
}

/**
 * Prompts this small fit any window Ollama runs with, so a one-liner does not pay for asking the
 * model for its own window (`/api/show`) before it is sent; its count after the answer may still
 * ask (countMayBeWindow).
 */
export const SMALL_PROMPT_TOKENS = 512;

/** The model's own num_ctx, null when it sets none; rejects when Ollama did not answer (the window is then not known). */
export type NumCtxLookup = (model: string, signal?: AbortSignal) => Promise<number | null>;

/** The window check's verdict after the answer. */
export interface WindowVerdict {
  /** The window the prompt was checked against; null when not worked out. */
  window: ContextWindow | null;
  /** The largest estimate of one request: the planned prompt's, or a later request's of an agent run. */
  estimate: number;
  suspected: boolean;
  /** The stderr line, null when a line before sending already said it, or all is well. */
  line: string | null;
}

export interface ContextCheck {
  /** Null when not worked out (a small prompt without --num-ctx, or Ollama did not say). */
  window: ContextWindow | null;
  estimate: number;
  /** Whether the estimate is over the window (a default one may be larger on the server: see `before`). */
  over: boolean;
  /** The stderr line to print before sending, or null (also for Ollama's default window, judged after the answer). */
  before: string | null;
  /**
   * Checks a later request of the turn before it is sent (an agent run's, grown by tool results) as
   * the planned one was: its stderr line when it is over a known window and no line was said yet,
   * else null. `signal` ends a wait on the model's window (then the request goes unchecked).
   */
  later: (body: EstimableBody, signal?: AbortSignal) => Promise<string | null>;
  /**
   * After the answer, given the largest prompt count one request reported (a cut shows in a single
   * request's final chunk, never in a sum over several); judged by the largest request checked.
   */
  after: (promptEvalCount: number | null) => Promise<WindowVerdict>;
}

export interface CheckOptions {
  /** Work out the window even for a small prompt (--explain shows it). */
  always?: boolean;
  /** Ends a lookup still waiting (Ctrl-C, a client gone): the window is then not known. */
  signal?: AbortSignal;
  /** Ollama's own default window (it depends on its version); 4096 without. */
  defaultNumCtx?: ((signal?: AbortSignal) => Promise<number>) | undefined;
  /** The window Ollama has the model loaded with (`/api/ps`), null when it does not say; asked after the answer only. */
  loadedNumCtx?: NumCtxLookup | undefined;
  /**
   * The turn sends longer requests than the planned one (an agent run adds its tool definitions): the
   * model's window is asked for now, while the turn gets ready, not when the first of them waits for it.
   */
  longerRequests?: boolean;
  /** How the line names its fixes (a chat's, or a prompt that replayed nothing); a question's by default. */
  fixes?: WindowFixes;
}

/** The window (flag or config, else the model's own, else Ollama's default) and the estimate of `request`. */
export async function checkContext(settings: Settings, request: TransportRequest, lookup: NumCtxLookup | undefined, options: CheckOptions = {}): Promise<ContextCheck> {
  const estimate = estimatePromptTokens(request.body);
  const numCtx = request.body.options?.num_ctx;
  const model = request.body.model;
  let window: ContextWindow | null = null;
  // Asked before sending: a lookup that got no answer then is not tried again after the answer.
  let asked = false;
  if (typeof numCtx === 'number') window = { tokens: numCtx, source: settings.numCtxSource ?? 'flag' };
  else if (options.always === true || estimate > SMALL_PROMPT_TOKENS) {
    asked = true;
    window = await modelWindow(lookup, model, options);
  }
  // Asked now, awaited by the first later request that needs it.
  let early: Promise<ContextWindow | null> | null = null;
  if (window === null && !asked && options.longerRequests === true) {
    asked = true;
    early = modelWindow(lookup, model, options);
  }
  const over = window !== null && overWindow({ window, estimate });
  const fixes = options.fixes ?? {};
  const before = warningBefore(window, estimate, 'planned', fixes);
  // The longest request so far, and whether a line was said: one line per turn, however many rounds.
  let largest: RequestSize = { estimate, results: false, toolTokens: 0 };
  let said = before !== null;
  return {
    window,
    estimate,
    over,
    before,
    later: async (body, signal) => {
      const grown = estimatePromptTokens(body);
      // No longer than one checked already: its verdict would be the same.
      if (grown <= largest.estimate) return null;
      const results = body.messages?.some((message) => message.role === 'tool') === true;
      largest = { estimate: grown, results, toolTokens: grown - estimatePromptTokens({ ...body, tools: [] }) };
      // The same rule as for the planned prompt: a small one does not cost a question.
      if (window === null && grown > SMALL_PROMPT_TOKENS) {
        if (early !== null) {
          window = await untilAborted(early, signal);
        } else if (!asked) {
          asked = true;
          window = await modelWindow(lookup, model, signal ? { ...options, signal } : options);
        }
      }
      const line = said ? null : warningBefore(window, grown, growthOf(largest, window), fixes);
      said ||= line !== null;
      return line;
    },
    after: async (count) => {
      // Not asked before sending (a small prompt): asked now only when the count could be a window.
      window ??= early === null ? null : await early;
      const judged = await serverWindow(window ?? (!asked && countMayBeWindow(count) ? await modelWindow(lookup, model, options) : null), count, model, options);
      const longest = largest.estimate;
      const suspected = judged !== null && truncationSuspected({ window: judged, estimate: longest }, count);
      const line = judged !== null && suspected && !said ? truncationLine({ window: judged, estimate: longest }, count, growthOf(largest, judged), fixes) : null;
      return { window: judged, estimate: longest, suspected, line };
    },
  };
}

/** `answer`, or null as soon as `signal` aborts (a STOP during an agent request's wait): the question itself goes on for the turn. */
function untilAborted<T>(answer: Promise<T | null>, signal: AbortSignal | undefined): Promise<T | null> {
  if (signal === undefined) return answer;
  if (signal.aborted) return Promise.resolve(null);
  return Promise.race([answer, new Promise<null>((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true }))]);
}

/** A request's estimate, whether it carries tool results, and how much of it the tool definitions are. */
interface RequestSize {
  estimate: number;
  results: boolean;
  toolTokens: number;
}

/**
 * What a line blames: the tool results sent back, else the tool definitions where the request would
 * fit without them, else the prompt (a long memo or system prompt, the replay).
 */
function growthOf(size: RequestSize, window: ContextWindow | null): PromptGrowth {
  if (size.results) return 'tool-results';
  if (size.toolTokens > 0 && window !== null && size.estimate - size.toolTokens <= window.tokens) return 'tool-definitions';
  return 'planned';
}

/**
 * The line before sending for a prompt over a known window. Ollama's default is only its usual one:
 * the server's may be larger (OLLAMA_CONTEXT_LENGTH, or sized to the GPU since 0.15.5), so such a
 * prompt is judged by Ollama's count after the answer instead.
 */
function warningBefore(window: ContextWindow | null, estimate: number, growth: PromptGrowth, fixes: WindowFixes): string | null {
  if (window === null || window.source === 'default' || !overWindow({ window, estimate })) return null;
  return truncationLine({ window, estimate }, null, growth, fixes);
}

/**
 * Ollama's usual default is only a guess at the server's window (OLLAMA_CONTEXT_LENGTH, or 32768+ on a
 * big GPU since 0.15.5). A count that reaches it and could be a window is judged against the window
 * the model is loaded with instead, when Ollama says (0.10.0+); else the guess stands.
 */
async function serverWindow(judged: ContextWindow | null, count: number | null, model: string, { loadedNumCtx, signal }: CheckOptions): Promise<ContextWindow | null> {
  if (judged?.source !== 'default' || loadedNumCtx === undefined || count === null || count < judged.tokens || !countMayBeWindow(count)) return judged;
  const loaded = await loadedNumCtx(model, signal).catch(() => null);
  return loaded === null ? judged : { tokens: loaded, source: 'loaded' };
}

/** The model's window, else Ollama's default; null when Ollama did not say in time (the prompt is then not checked). */
async function modelWindow(lookup: NumCtxLookup | undefined, model: string, { signal, defaultNumCtx }: CheckOptions): Promise<ContextWindow | null> {
  if (lookup === undefined) return resolveWindow(null, null);
  try {
    // Asked side by side (the version is kept per process): the default is needed only when the model sets no window.
    const fallback = defaultNumCtx?.(signal).catch(() => undefined);
    const own = await lookup(model, signal);
    return resolveWindow(null, own, own === null ? await fallback : undefined);
  } catch {
    return null;
  }
}

/** The log fields a turn adds about its request. */
export function requestFacts(settings: Settings, request: OllamaRequest, verdict: Pick<WindowVerdict, 'window' | 'estimate' | 'suspected'>, rerunOf: string | undefined): Partial<LogEntry> {
  const body = request.body;
  return {
    request_sha256: requestSha256(request),
    ...(body.options !== undefined ? { options: body.options as NonNullable<LogEntry['options']> } : {}),
    ...(settings.system !== null ? { system: settings.system } : {}),
    ...(body.keep_alive !== undefined ? { keep_alive: body.keep_alive } : {}),
    ...(body.think !== undefined ? { think: body.think } : {}),
    ollama_stream: body.stream,
    ...windowFacts(verdict),
    ...(rerunOf !== undefined ? { rerun_of: rerunOf } : {}),
  };
}

/** The fields of requestFacts that the answer settles: the window judged, the largest request's estimate, and whether the prompt was cut. */
export function windowFacts(verdict: Pick<WindowVerdict, 'window' | 'estimate' | 'suspected'>): Pick<LogEntry, 'num_ctx' | 'truncation_suspected' | 'prompt_tokens_estimate'> {
  return { num_ctx: verdict.window?.tokens ?? null, truncation_suspected: verdict.suspected, prompt_tokens_estimate: verdict.estimate };
}
