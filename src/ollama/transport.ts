// The browser build: the Node one reads a local file named by any image string that names one, so a
// client's base64 that looks like a path (`//etc/passwd`) would send that file to Ollama.
import { Ollama } from 'ollama/browser';
import type { ChatRequest, ChatResponse, GenerateRequest, GenerateResponse } from 'ollama/browser';
import { clipText } from '../output/cut.js';
import { joinLines } from '../output/terminal-text.js';
import type { ChatBody, OllamaRequest } from '../replay/prompt.js';
import { defaultWindowOf, numCtxFromParameters } from './context-window.js';
import { CLI_HINTS } from './fix-hints.js';
import type { FixHints } from './fix-hints.js';
import { MALFORMED_PREFIX, MAX_LINE_BYTES, OVERLONG_PREFIX, errorWords, guardNdjson, malformedLine, notAnObject } from './line-guard.js';
import { fullModelName } from './model-name.js';
import { plainReason } from './plain-reason.js';
import { fitRequest, fixFor, needsVersion, parseVersion, rejectedFeature, tooOldLine } from './versions.js';
import type { OllamaVersion, RefusedFeature } from './versions.js';

/** A tool as Ollama's `/api/chat` takes it in `tools`. */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** A tool call as sent back to Ollama in an assistant message: arguments always an object. */
export interface WireToolCall {
  id?: string;
  function: { index?: number; name: string; arguments: Record<string, unknown> };
}

/** A chat message of an agent run: tool results (`role: "tool"`) and assistant messages with tool calls. */
export interface AgentChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** A thinking model's reasoning before its tool calls, sent back with them. */
  thinking?: string;
  tool_calls?: WireToolCall[];
  tool_name?: string;
  /** The call a result answers: the id its assistant message gave the call (Ollama's api.Message ToolCallID). */
  tool_call_id?: string;
}

export interface AgentChatBody extends Omit<ChatBody, 'messages'> {
  messages: AgentChatMessage[];
  tools?: ToolDefinition[];
}

/** Any request the transport sends: a plain turn, or a chat request of an agent run. */
export type TransportRequest = OllamaRequest | { endpoint: '/api/chat'; body: AgentChatBody };

export interface TransportOptions {
  host: string;
  attempts: number;
  initialDelayMs: number;
  /**
   * A stream silent this long is aborted: a model loading, or Ollama stuck. Not applied to a whole
   * answer (stream: false), nor to a request that offers tools, where Ollama sends nothing while
   * the model writes a call: Node's own 300 s bounds those.
   */
  idleMs: number;
  fetch?: typeof fetch;
  /** Shared by the transports of one process (a server makes one per turn); by default this transport's own. */
  modelWindows?: ModelWindows;
  /** The server's version by host, shared the same way. */
  versions?: KeptAnswers<OllamaVersion | null>;
  /** Each model's capabilities, shared the same way. */
  modelCapabilities?: KeptAnswers<readonly string[]>;
  /** How failures name their fix; the CLI's flags by default. */
  hints?: FixHints;
  /**
   * The longest Retry-After a retry waits for (default 30 s); one asking longer ends the retries. A
   * server holding its client's request would rather pass the wait on to it at once (0).
   */
  maxRetryAfterMs?: number;
}

/**
 * Answers of Ollama kept by key (a model's window, the server's version), asked once and kept for
 * `maxAgeMs`: a long-running server notices a model re-created with another window, or Ollama
 * upgraded. Turns asking at once share one question; each waits only as long as its own signal
 * allows, and the question is cancelled when no turn waits for it any more. A question that failed
 * (Ollama down, no answer in time) rejects for the turns waiting on it and is not kept, so the next
 * turn asks again.
 */
export class KeptAnswers<T> {
  private readonly known = new Map<string, Asked<T>>();

  constructor(
    private readonly maxAgeMs = Number.POSITIVE_INFINITY,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  get(key: string, ask: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const now = this.clock();
    let asked = this.known.get(key);
    if (asked === undefined || now - asked.at >= this.maxAgeMs) {
      const controller = new AbortController();
      const entry: Asked<T> = { at: now, answer: ask(controller.signal), controller, waiting: 0, settled: false };
      entry.answer.then(
        () => (entry.settled = true),
        () => {
          entry.settled = true;
          this.forget(key, entry);
        },
      );
      this.known.set(key, entry);
      asked = entry;
    }
    return this.waitFor(key, asked, signal);
  }

  private forget(key: string, asked: Asked<T>): void {
    if (this.known.get(key) === asked) this.known.delete(key);
  }

  private waitFor(key: string, asked: Asked<T>, signal: AbortSignal | undefined): Promise<T> {
    if (asked.settled) return asked.answer;
    asked.waiting++;
    return new Promise((resolve, reject) => {
      let counted = true;
      // Once per waiter: an answer that comes after this waiter gave up must not count it out again.
      const done = (): void => {
        if (!counted) return;
        counted = false;
        asked.waiting--;
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        done();
        if (asked.waiting === 0 && !asked.settled) {
          this.forget(key, asked);
          asked.controller.abort(signal?.reason);
        }
        reject(new Error('the lookup was cancelled', { cause: signal?.reason }));
      };
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      asked.answer.then(
        (answer) => {
          done();
          resolve(answer);
        },
        (error: unknown) => {
          done();
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  }
}

/** Models' own `num_ctx` as Ollama's `/api/show` reports them, by model name. */
export class ModelWindows extends KeptAnswers<number | null> {}

/** One question, and the turns waiting for its answer. */
interface Asked<T> {
  at: number;
  answer: Promise<T>;
  controller: AbortController;
  /** Turns waiting; the question is cancelled when the last one gives up. */
  waiting: number;
  settled: boolean;
}

export interface Metrics {
  total_duration: number | null;
  load_duration: number | null;
  prompt_eval_count: number | null;
  prompt_eval_duration: number | null;
  eval_count: number | null;
  eval_duration: number | null;
  done_reason: string | null;
}

export type FailureKind =
  | 'unreachable'
  | 'model-missing'
  | 'busy'
  | 'http'
  | 'mid-stream'
  | 'dropped'
  | 'truncated'
  | 'malformed'
  | 'idle'
  | 'too-old';

/** Why a request is sent again: Ollama's queue was full, a cloud model's rate limit, or no connection. */
export type RetryReason = 'busy' | 'rate-limited' | 'unreachable';

export interface StreamOutcome {
  status: 'ok' | 'interrupted' | 'error';
  /** `feature`: what a too-old Ollama lacks. */
  /** `retryAfterS`: how long a busy Ollama (or a proxy before it) asked to be left alone for. */
  failure: { kind: FailureKind; message: string; httpStatus?: number; feature?: RefusedFeature; retryAfterS?: number } | null;
  metrics: Metrics;
  attempts: number;
  /**
   * `message.tool_calls` of every chunk, in order, exactly as Ollama sent them (arguments may be an
   * object or a string, ids may be missing): the agent loop validates them. Absent means none.
   */
  toolCalls?: unknown[];
  /**
   * The response's text all came in its done:true chunk, none streamed before it: what Ollama's tool
   * parser held back as a possible call and handed over at the end (tools.Parser.Content). Absent: no.
   */
  textHeldToEnd?: boolean;
}

/** One token as Ollama's api.TokenLogprob gives it: `bytes` (its UTF-8) is left out for an empty token. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes?: number[];
}

/** A generated token's log probability (Ollama 0.12.11+, asked with `logprobs: true`), and its `top_logprobs` alternatives when asked. */
export interface Logprob extends TokenLogprob {
  top_logprobs?: TokenLogprob[];
}

/**
 * A chunk's log probabilities (only when the request asked for them) come with the first piece the
 * chunk hands over: its reasoning, else its text, else its tool calls. A chunk with none of these
 * (tokens Ollama's parser holds back, a tool call being written) hands them to `onLogprobs`.
 */
export interface StreamHooks {
  onText: (text: string, logprobs?: readonly Logprob[]) => void;
  /** A thinking model's reasoning as it streams (Ollama 0.12.4+ thinks by default), before its answer. */
  onThinking?: (text: string, logprobs?: readonly Logprob[]) => void;
  onRetry?: (attempt: number, delayMs: number, reason: RetryReason) => void;
  /** Called with each chunk's tool calls as they arrive. */
  onToolCalls?: (calls: unknown[], logprobs?: readonly Logprob[]) => void;
  /** Log probabilities of a chunk that had nothing else to hand over. */
  onLogprobs?: (logprobs: readonly Logprob[]) => void;
  /** Called once per chunk, text or not (the agent loop checks its stop signal here). */
  onChunk?: () => void;
  /** Aborting it ends the turn as interrupted. */
  signal?: AbortSignal;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** No figures: a stream that never reached its final chunk. */
export const EMPTY_METRICS: Metrics = {
  total_duration: null,
  load_duration: null,
  prompt_eval_count: null,
  prompt_eval_duration: null,
  eval_count: null,
  eval_duration: null,
  done_reason: null,
};

/**
 * An `ollama` client for questions about Ollama or a model (tags, show, version): each request ends
 * with `signal` (Ctrl-C, a client gone) and after `ms` without an answer — the client sets no
 * timeout of its own, and Node's is 300 s.
 */
export function boundedClient(host: string, ms: number, signal?: AbortSignal, send: typeof fetch = fetch): Ollama {
  return new Ollama({
    host,
    fetch: (input, init) => {
      const signals = [timeoutSignal(ms), ...(signal ? [signal] : []), ...(init?.signal ? [init.signal] : [])];
      return send(input, { ...init, redirect: 'manual', signal: AbortSignal.any(signals) }).then(async (response) => {
        const answered = refuseRedirect(host, input, response);
        // Thrown here, as the transport's own requests throw it: the ollama client would write "Getting
        // text from response" on stdout (console.log) for an error status without JSON.
        if (!answered.ok) throw await statusAnswer(answered);
        return answered;
      });
    },
  });
}

/**
 * Aborts after `ms` with a TimeoutError, as AbortSignal.timeout does, but held by its own timer until
 * then: AbortSignal.any holds its sources weakly, and a timeout signal nobody else holds can be
 * collected before it fires, leaving the request waiting for ever (it did, now and then, on Node 20).
 */
function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms).unref();
  return controller.signal;
}

const IDLE = Symbol('idle');
/** The reason the request is aborted once its answer is complete. */
const FINISHED = Symbol('finished');
/** How long a body may take to end after its final chunk before it is abandoned (then its connection goes). */
const BODY_END_GRACE_MS = 1000;
/** The most a question about the version may take: Ollama answers it at once, even while loading a model. */
const VERSION_ASK_MS = 5000;
const ENDED_EARLY = 'the stream from Ollama ended without its final chunk; the answer is incomplete';
/** Installed models asked about before suggesting one. */
const SUGGEST_ASKS = 8;

type Chunk = ChatResponse | GenerateResponse;

/**
 * A request to Ollama that failed before any answer, in words naming the setting that fixes it:
 * every route that talks to Ollama says the same for the same failure.
 */
export function failedToConnect(host: string, error: unknown, hints: FixHints): { kind: 'unreachable' | 'http' | 'dropped'; message: string } {
  const err = error as { code?: string; cause?: { code?: string } };
  const code = err.cause?.code ?? err.code;
  if (code === 'ECONNREFUSED') {
    return { kind: 'unreachable', message: `cannot reach Ollama at ${host} (connection refused); start it with "ollama serve", or set ${hints.host} to where it runs` };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return { kind: 'http', message: `cannot resolve the Ollama host in ${host}; check ${hints.host}` };
  }
  return { kind: 'dropped', message: `the connection to Ollama at ${host} failed before an answer (${plainReason(error)})` };
}

/** Ollama's answer with an error status, in words naming the fix; null when `error` is not one. */
export function httpFailure(host: string, error: unknown, hints: FixHints, think?: unknown): NonNullable<StreamOutcome['failure']> | null {
  const err = error as { name?: string; message?: string; status_code?: number; error?: string };
  if (err.name !== 'ResponseError' || typeof err.status_code !== 'number') return null;
  const status = err.status_code;
  // What a server says is said on one line (printed after `argo: `, logged as `error`): a proxy's
  // page or a message of several lines would otherwise start lines of its own.
  const detail = joinLines(err.error ?? err.message ?? '');
  // The client's own ResponseError carries no body: its error is taken as Ollama's JSON, or none.
  const body = error instanceof StatusAnswer ? error.body : detail === '' ? 'empty' : 'ollama';
  if (status === 404 && /^model ["'].+["'] not found/i.test(detail)) return { kind: 'model-missing', message: detail, httpStatus: status };
  // An older Ollama's refusal of a field it does not know in that form; the transport adds its version.
  const missing = status === 400 ? rejectedFeature(detail, think) : null;
  if (missing !== null) return { kind: 'too-old', httpStatus: status, feature: missing, message: tooOldLine(missing, null, host, hints.tooOld[missing]) };
  // Ollama's full queue is JSON; a proxy's 503 page is the proxy's trouble, not a queue to wait for.
  if (status === 503 && body === 'ollama') return { kind: 'busy', message: `Ollama at ${host} is busy (${detail})`, httpStatus: status };
  // A cloud model's rate limit, passed on by Ollama: come back later, as for a busy one.
  if (status === 429) return { kind: 'busy', message: `Ollama at ${host} is rate-limited (${detail})`, httpStatus: status };
  // Ollama's Host and Origin checks answer 403 with no body; its other 403s say why in JSON.
  if (status === 403 && body !== 'ollama') {
    const page = body === 'page' ? `: ${clipText(detail, 200)}` : '';
    // A page is no Ollama's (its Host check sends nothing): the proxy in front of it comes first.
    const check = page === '' ? 'check OLLAMA_HOST and OLLAMA_ORIGINS on the server' : 'check the proxy in front of Ollama, then OLLAMA_HOST and OLLAMA_ORIGINS on the server';
    return { kind: 'http', httpStatus: status, message: `Ollama at ${host} refused the request (403 Forbidden${page}); ${check}` };
  }
  if (status === 403 && detail.startsWith(CLOUD_DISABLED)) {
    return { kind: 'http', httpStatus: status, message: `Ollama at ${host} answered HTTP 403: ${detail}; that Ollama has cloud models turned off (OLLAMA_NO_CLOUD, or "disable_ollama_cloud" in its server.json): choose a local model with ${hints.model()}, or turn cloud models on there` };
  }
  // A cloud model, and an Ollama not signed in to ollama.com. Its signin_url is never shown: it names the server's key.
  const signIn = error instanceof StatusAnswer && error.signIn;
  if (status === 401 && (signIn || (body === 'ollama' && detail === 'unauthorized'))) {
    return { kind: 'http', httpStatus: status, message: `Ollama at ${host} answered HTTP 401: ${detail}; a cloud model needs that Ollama signed in to ollama.com: run "ollama signin" on its machine, or choose a local model with ${hints.model()}` };
  }
  const tryApi = hints.api;
  if (tryApi !== null && /does not support (chat|generate)/.test(detail)) {
    return { kind: 'http', httpStatus: status, message: `${detail}; ${tryApi(detail.includes('chat') ? 'generate' : 'chat')}` };
  }
  if (detail.includes('does not support thinking')) {
    return { kind: 'http', httpStatus: status, message: `Ollama at ${host} answered HTTP ${status}: ${detail}; ${hints.noThinking}, or choose a thinking model with ${hints.model()} ("ollama show MODEL" lists "thinking" under its capabilities)` };
  }
  if (detail.includes('does not support tools')) {
    return { kind: 'http', httpStatus: status, message: `Ollama at ${host} answered HTTP ${status}: ${detail}; choose a model that can call tools with ${hints.model()} ("ollama show MODEL" lists "tools" under its capabilities)` };
  }
  return { kind: 'http', httpStatus: status, message: `Ollama at ${host} answered HTTP ${status}: ${detail}` };
}

/**
 * Ollama never redirects: a redirect is a proxy's or another server's, and fetch following it would
 * turn a chat's POST into a GET (Ollama's 405) or take the request elsewhere unseen. So none is
 * followed. `target` is where it points, as shown (no user info, query or fragment: each may hold a
 * secret, and the line is logged); `address` the Ollama address that names it (the target less the
 * route asked, as a proxy's https:// upgrade gives), or null when the target does not end with it.
 */
export class Redirected extends Error {
  override name = 'Redirected';
  constructor(
    readonly host: string,
    readonly status: number,
    readonly target: string,
    readonly address: string | null,
  ) {
    super(redirectLine(host, target, address, CLI_HINTS));
  }
}

/** What a redirect says, in the words of where the user sets the address (`hints.host`). */
export function redirectLine(host: string, target: string, address: string | null, hints: FixHints): string {
  const fix = address === null ? `Argo does not follow redirects: set ${hints.host} to where Ollama itself answers` : `set ${hints.host} to ${address}`;
  return `Ollama at ${host} answered with a redirect to ${target}; ${fix}`;
}

/** `response`, unless it is a redirect (fetch asked with redirect: 'manual'), which is thrown as Redirected. */
function refuseRedirect(host: string, input: Parameters<typeof fetch>[0], response: Response): Response {
  const location = response.headers.get('location');
  if (response.status < 300 || response.status > 399 || location === null) return response;
  const asked = new URL(input instanceof Request ? input.url : String(input));
  let target: URL;
  try {
    target = new URL(location, asked);
  } catch {
    // The server's words, shown on a terminal and logged: one line, cut short, nothing after a "?".
    throw new Redirected(host, response.status, clipText(joinLines(location.replace(/[?#].*$/s, '…')), 200), null);
  }
  // The route asked (/api/chat), after the address's own path (a proxy's prefix).
  const route = asked.pathname.slice(new URL(host).pathname.replace(/\/$/, '').length);
  const base = target.pathname.endsWith(route) ? target.pathname.slice(0, target.pathname.length - route.length) : null;
  const secret = target.username !== '' || target.password !== '';
  const shown = (path: string, rest: boolean): string => `${target.protocol}//${secret ? '***@' : ''}${target.host}${path}${rest && (target.search !== '' || target.hash !== '') ? '…' : ''}`;
  throw new Redirected(host, response.status, clipText(joinLines(shown(target.pathname, true)), 200), base === null || secret ? null : clipText(joinLines(shown(base, false)), 200));
}

/** A server answered at `host`, but not as Ollama does (`what`): the address is likely wrong. */
function notOllamaLine(host: string, what: string, hints: FixHints): string {
  return `something at ${host} answered, but not as Ollama does (${what}); check that ${hints.host} points at Ollama`;
}

/** An answer that came, but not in Ollama's shape (a JSON object without the field asked for). */
export class NotOllamaAnswer extends Error {
  override name = 'NotOllamaAnswer';
}

/** What Ollama's cloud refusal starts with when OLLAMA_NO_CLOUD is set (internal/cloud: DisabledMessagePrefix). */
const CLOUD_DISABLED = 'ollama cloud is disabled';

/**
 * An error status, as the ollama client's ResponseError gives it (`error`, `status_code`), with what
 * its body was: Ollama's JSON (`{"error": …}`, its every error but one), none (Ollama's Host and
 * Origin checks), or a page of something else's (a proxy's). Thrown before the client reads the
 * body, which it would print to standard output when it is no JSON.
 */
export class StatusAnswer extends Error {
  override name = 'ResponseError';
  constructor(
    /** The body's error in words, one line; its status text when it is empty. */
    readonly error: string,
    readonly status_code: number,
    readonly body: 'ollama' | 'empty' | 'page',
    /** It named a sign-in address (a cloud model, an Ollama not signed in); the address is not kept. */
    readonly signIn: boolean,
    readonly retryAfter: string | null,
  ) {
    super(error);
  }
}

/**
 * A question about Ollama or a model (its version, the installed models) that got no usable answer,
 * in words naming the fix, telling apart nothing listening (start Ollama), something answering that
 * is not Ollama (a web server, a proxy's page: check the address) and no answer within `ms` (Ollama
 * stuck or its machine overloaded).
 */
export function questionFailure(host: string, error: unknown, hints: FixHints, ms: number): string {
  if ((error as { name?: unknown } | null)?.name === 'TimeoutError') {
    return `no answer from Ollama at ${host} within ${ms / 1000}s (Ollama stuck, or its machine overloaded); restart Ollama, or check that machine's load`;
  }
  if (error instanceof Redirected) return redirectLine(error.host, error.target, error.address, hints);
  const notOllama = (what: string): string => notOllamaLine(host, what, hints);
  // The ollama client reads the body with response.json(): a web page, or nothing, fails there.
  if (error instanceof SyntaxError) return notOllama('its answer is not JSON');
  if (error instanceof NotOllamaAnswer) return notOllama(error.message);
  const answered = httpFailure(host, error, hints);
  // Ollama has every route it is asked about here; a "not found" that names no model is another server's.
  if (answered?.kind === 'http' && (answered.httpStatus === 404 || answered.httpStatus === 405)) return notOllama(`HTTP ${answered.httpStatus}`);
  return (answered ?? failedToConnect(host, error, hints)).message;
}

const MAX_RETRY_AFTER_MS = 30_000;

/** One client (so one kept-alive connection) for the whole process. */
export class OllamaTransport {
  private readonly client: Ollama;
  private current: AbortController | null = null;
  /** Whether the request in flight is answered as a stream (its lines are then checked). */
  private streaming = false;
  private malformed = false;
  /** Whether the request in flight got its answer's headers: a failure after them is the answer's, not the connection's. */
  private answered = false;
  /** Whether the answer in flight sent an `{"error": …}` line: only then is an error it ends with Ollama's own. */
  private sawErrorLine = false;

  private readonly windows: ModelWindows;
  private readonly keptCapabilities: KeptAnswers<readonly string[]>;
  private readonly versions: KeptAnswers<OllamaVersion | null>;
  readonly hints: FixHints;

  constructor(private readonly options: TransportOptions) {
    this.windows = options.modelWindows ?? new ModelWindows();
    this.keptCapabilities = options.modelCapabilities ?? new KeptAnswers();
    this.versions = options.versions ?? new KeptAnswers();
    this.hints = options.hints ?? CLI_HINTS;
    this.client = new Ollama({
      host: options.host,
      fetch: async (input, init) => {
        const response = await this.send(input, init, this.current?.signal, this.streaming);
        this.answered = true;
        if (!this.streaming) return checkedWhole(response);
        // A success without a body (a proxy's 204) is an empty answer, as a whole answer's is.
        if (response.body === null) throw new Error(malformedLine('an empty answer'));
        return response;
      },
    });
  }

  /** Sends one request with `signal` added to the client's own; an error status is thrown as a StatusAnswer. */
  private async send(input: Parameters<typeof fetch>[0], init: RequestInit | undefined, ours: AbortSignal | undefined, streaming: boolean): Promise<Response> {
    const signal = ours && init?.signal ? AbortSignal.any([init.signal, ours]) : (ours ?? init?.signal ?? null);
    const response = refuseRedirect(this.options.host, input, await (this.options.fetch ?? fetch)(input, { ...init, redirect: 'manual', signal }));
    if (!response.ok) throw await statusAnswer(response);
    // A streaming request's body is read line by line whatever its declared type (a proxy may
    // label it application/json): check its lines the same way. A whole answer (stream: false) is one JSON value.
    if (response.body === null || !streaming) return response;
    const body = guardNdjson(response.body, () => (this.malformed = true), MAX_LINE_BYTES, () => (this.sawErrorLine = true));
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  }

  /** A client for one question about Ollama or a model, given up after `ms` (default `idleMs`) or with `signal`. */
  private askClient(signal: AbortSignal | undefined, ms = this.options.idleMs): Ollama {
    // Read no further than a whole answer is: a model list of 400 MB would fill the memory.
    return boundedClient(this.options.host, ms, signal, async (input, init) => {
      const response = await this.send(input, init, undefined, false);
      const { bytes, more } = await readUpTo(response, MAX_LINE_BYTES);
      if (more) throw new NotOllamaAnswer(`its answer is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB`);
      // A 204 may carry no body (Response refuses one): then nothing is there to read as JSON.
      return new Response(bytes.length === 0 ? null : bytes, { status: response.status, statusText: response.statusText, headers: response.headers });
    });
  }

  async stream(request: TransportRequest, hooks: StreamHooks): Promise<StreamOutcome> {
    const fitted = await this.fitToServer(request, hooks.signal);
    if ('failure' in fitted) return { status: 'error', failure: fitted.failure, metrics: EMPTY_METRICS, attempts: 0, toolCalls: [] };
    const sleep = hooks.sleep ?? abortableSleep;
    let delay = this.options.initialDelayMs;
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(fitted.request, hooks);
      const retryable = outcome.failure?.kind === 'busy' || outcome.failure?.kind === 'unreachable';
      // Never sooner than a busy server asked (Retry-After); one that asks longer than we would wait is not asked again now.
      const asked = (outcome.failure?.retryAfterS ?? 0) * 1000;
      const tooLong = asked > (this.options.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS);
      if (!retryable || tooLong || attempt >= this.options.attempts || outcome.attempts > 0) {
        return { ...(await this.namingVersion(outcome, hooks.signal)), attempts: attempt };
      }
      const wait = Math.max(delay, asked);
      hooks.onRetry?.(attempt + 1, wait, outcome.failure?.kind !== 'busy' ? 'unreachable' : outcome.failure.httpStatus === 429 ? 'rate-limited' : 'busy');
      const controller = new AbortController();
      const onAbort = (): void => controller.abort();
      hooks.signal?.addEventListener('abort', onAbort, { once: true });
      try {
        await sleep(wait, controller.signal);
      } catch {
        return { status: 'interrupted', failure: null, metrics: EMPTY_METRICS, attempts: attempt, toolCalls: [] };
      } finally {
        hooks.signal?.removeEventListener('abort', onAbort);
      }
      delay *= 2;
    }
  }

  /**
   * The request as this Ollama can take it (see fitRequest), or the failure naming what it lacks.
   * Asks the version only for a request that needs it (tools, think, logprobs): an older Ollama ignores those.
   */
  private async fitToServer(request: TransportRequest, signal: AbortSignal | undefined): Promise<{ request: TransportRequest } | { failure: NonNullable<StreamOutcome['failure']> }> {
    if (!needsVersion(request.body)) return { request };
    const version = await this.serverVersion(signal);
    const fitted = fitRequest(version, request.body);
    if ('missing' in fitted) {
      const fix = this.hints.tooOld[fixFor(fitted.missing, version)];
      return { failure: { kind: 'too-old', feature: fitted.missing, message: tooOldLine(fitted.missing, version, this.options.host, fix) } };
    }
    return { request: { ...request, body: fitted.body } as TransportRequest };
  }

  /** A refusal that showed a feature missing, with the version that lacks it. */
  private async namingVersion(outcome: StreamOutcome, signal: AbortSignal | undefined): Promise<StreamOutcome> {
    const feature = outcome.failure?.feature;
    if (outcome.failure === null || feature === undefined) return outcome;
    const version = await this.serverVersion(signal);
    const message = tooOldLine(feature, version, this.options.host, this.hints.tooOld[fixFor(feature, version)]);
    return { ...outcome, failure: { ...outcome.failure, message } };
  }

  /** One request; `attempts` in the result is 1 once any text arrived (never retry after that). */
  private async attempt(request: TransportRequest, hooks: StreamHooks): Promise<StreamOutcome> {
    const controller = new AbortController();
    this.current = controller;
    // Known from the request itself: the body need not be parsed again to find its `stream`.
    this.streaming = request.body.stream;
    // Ollama sends none unless asked: a turn that did not ask looks at no chunk's.
    const withLogprobs = request.body.logprobs === true;
    const chat = request.endpoint === '/api/chat';
    const tools: unknown = 'tools' in request.body ? request.body.tools : undefined;
    const offersTools = Array.isArray(tools) && tools.length > 0;
    this.malformed = false;
    this.answered = false;
    this.sawErrorLine = false;
    const onAbort = (): void => controller.abort(hooks.signal?.reason);
    if (hooks.signal?.aborted) onAbort();
    hooks.signal?.addEventListener('abort', onAbort, { once: true });
    // One timer that re-checks when it fires, rather than one re-armed per chunk: chunks are the hot path.
    const idleMs = this.options.idleMs;
    let lastActivity = performance.now();
    const checkIdle = (): void => {
      const quiet = performance.now() - lastActivity;
      if (quiet >= idleMs) controller.abort(IDLE);
      else idleTimer = setTimeout(checkIdle, idleMs - quiet);
    };
    // A single (non-streamed) response sends nothing until it is complete: only streams can be idle.
    // Ollama's tool parser sends nothing either while the model writes a call (routes.go, ChatHandler),
    // which may take minutes: silence there is no sign of a stuck Ollama, so Node's 300 s alone applies.
    let idleTimer = request.body.stream && !offersTools ? setTimeout(checkIdle, idleMs) : undefined;
    // Any chunk came: a silence after it is not a model loading.
    let began = false;
    // Set while a chunk is handled: what fails then is Argo's or the caller's, not Ollama's.
    let handling = false;
    let gotText = false;
    // Where the text came: before the done:true chunk, in it.
    let textStreamed = false;
    let textInDone = false;
    let metrics = EMPTY_METRICS;
    let finished = false;
    const toolCalls: unknown[] = [];
    try {
      const chunks = await this.open(request);
      for await (const chunk of chunks) {
        handling = true;
        lastActivity = performance.now();
        began = true;
        const { text, thinking, calls } = partsOf(chunk, chat);
        let logprobs = withLogprobs ? logprobsOf(chunk) : undefined;
        if (thinking && hooks.onThinking) {
          hooks.onThinking(thinking, logprobs);
          logprobs = undefined;
        }
        if (text) {
          gotText = true;
          if (chunk.done) textInDone = true;
          else textStreamed = true;
          hooks.onText(text, logprobs);
          logprobs = undefined;
        }
        if (calls.length > 0) {
          // A tool call is an answer too: never repeat the request after one arrived.
          gotText = true;
          toolCalls.push(...calls);
          if (hooks.onToolCalls) {
            hooks.onToolCalls(calls, logprobs);
            logprobs = undefined;
          }
        }
        if (logprobs) hooks.onLogprobs?.(logprobs);
        if (chunk.done) {
          finished = true;
          metrics = metricsOf(chunk);
        }
        hooks.onChunk?.();
        handling = false;
      }
      // A whole answer (stream: false) is not checked by the client as a stream is: a proxy or a
      // cut runner may send one with done: false.
      if (!finished) return { status: 'error', failure: { kind: 'truncated', message: ENDED_EARLY }, metrics, attempts: 1, toolCalls };
      return { status: 'ok', failure: null, metrics, attempts: 1, toolCalls, ...(textInDone && !textStreamed ? { textHeldToEnd: true } : {}) };
    } catch (error) {
      const attempts = gotText ? 1 : 0;
      if (controller.signal.aborted && controller.signal.reason !== IDLE) {
        return { status: 'interrupted', failure: null, metrics, attempts, toolCalls };
      }
      const failure = error instanceof UnknownChunk
        ? { kind: 'malformed' as const, message: `Ollama sent a line that is not a chunk of an answer (${joinLines(error.message)}); the answer is incomplete` }
        : handling ? null : this.describe(error, { answered: this.answered, idle: controller.signal.reason === IDLE, began, offersTools, think: request.body.think, streamed: request.body.stream });
      // Not Ollama's failure: a hook of the caller's, or Argo's own bug, told as such where it is caught.
      if (failure === null) throw error;
      return { status: 'error', failure, metrics, attempts, toolCalls };
    } finally {
      clearTimeout(idleTimer);
      // The final chunk ends the answer, whatever the body does after it (a buffering proxy may hold
      // it open): abandoning the rest lets the process end. Not at once: Ollama writes the body's end
      // just after its final chunk, and a body that ends keeps its connection for the next request.
      if (finished) setTimeout(() => controller.abort(FINISHED), BODY_END_GRACE_MS).unref();
      else controller.abort(FINISHED);
      hooks.signal?.removeEventListener('abort', onAbort);
      this.current = null;
      this.streaming = false;
    }
  }

  private async open(request: TransportRequest): Promise<AsyncIterable<Chunk> | Iterable<Chunk>> {
    if (request.endpoint === '/api/chat') {
      // The client passes messages and tools through as JSON; its own types are looser than ours.
      const body = request.body as ChatRequest & { stream: boolean };
      return body.stream ? await this.client.chat({ ...body, stream: true }) : [await this.client.chat({ ...body, stream: false })];
    }
    // The client's `think` type lacks Ollama's newer "max" level; it sends the value through as JSON.
    const body = request.body as GenerateRequest & { stream: boolean };
    return body.stream ? await this.client.generate({ ...body, stream: true }) : [await this.client.generate({ ...body, stream: false })];
  }

  /** The failure in words naming its fix; null for an error that is not Ollama's, the network's or the client's. */
  private describe(error: unknown, at: { answered: boolean; idle: boolean; began: boolean; offersTools: boolean; think: unknown; streamed: boolean }): NonNullable<StreamOutcome['failure']> | null {
    const host = this.options.host;
    if (at.idle) {
      const quiet = `no data from Ollama at ${host} for ${this.options.idleMs / 1000}s`;
      return at.began
        ? { kind: 'idle', message: `${quiet} after its answer began; the stream was aborted (Ollama went silent mid-answer; raise timeouts.idleMs in ${this.hints.configFile} to wait longer)` }
        : { kind: 'idle', message: `${quiet}; the stream was aborted (raise timeouts.idleMs in ${this.hints.configFile} if the model is slow to load)` };
    }
    if (error instanceof Redirected) return { kind: 'http', httpStatus: error.status, message: redirectLine(error.host, error.target, error.address, this.hints) };
    const err = error as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    const answered = httpFailure(host, error, this.hints, at.think);
    if (answered?.kind === 'busy') {
      const seconds = retryAfterSeconds(error instanceof StatusAnswer ? error.retryAfter : null, Date.now());
      return seconds === null ? answered : { ...answered, retryAfterS: seconds };
    }
    // Ollama has both routes; a "not found" that names no model (that is model-missing) is another server's.
    if (answered?.kind === 'http' && (answered.httpStatus === 404 || answered.httpStatus === 405)) {
      const detail = joinLines((error as { error?: string }).error ?? '');
      return { ...answered, message: notOllamaLine(host, `HTTP ${String(answered.httpStatus)}${detail === '' ? '' : `: ${clipText(detail, 200)}`}`, this.hints) };
    }
    if (answered !== null) return answered;
    const code = err.cause?.code ?? (error as NodeJS.ErrnoException).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      const why = at.offersTools ? ' (Ollama sends nothing while a model loads or writes a tool call: preload the model, or ask for smaller steps)' : '';
      return { kind: 'idle', message: `no data from Ollama at ${host} for 300s, the most Node's HTTP client waits; the request was abandoned${why}` };
    }
    if (!at.answered) return failedToConnect(host, error, this.hints);
    const message = err.message ?? String(error);
    if (message.startsWith(OVERLONG_PREFIX)) {
      const what = at.streamed ? 'a line' : 'an answer';
      return {
        kind: 'malformed',
        message: `Ollama sent ${what} of more than ${MAX_LINE_BYTES / 1024 / 1024} MiB${at.streamed ? ' without ending it' : ''} (${joinLines(message.slice(OVERLONG_PREFIX.length))}); the answer is incomplete (is it Ollama at ${host}, with nothing in between?)`,
      };
    }
    if (this.malformed || message.startsWith(MALFORMED_PREFIX)) {
      return { kind: 'malformed', message: `Ollama sent a line that is not JSON (${joinLines(message.slice(MALFORMED_PREFIX.length))}); the answer is incomplete` };
    }
    if (message.startsWith('Did not receive done')) {
      return { kind: 'truncated', message: ENDED_EARLY };
    }
    // Node's fetch reports a connection lost mid-body as a TypeError with the socket's error as its cause.
    if ((err.name === 'TypeError' && err.cause !== undefined) || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') {
      return { kind: 'dropped', message: `the connection to Ollama at ${host} dropped mid-answer; the answer is incomplete` };
    }
    if (error instanceof ErrorAnswer) return { kind: 'mid-stream', message: `Ollama answered with an error: ${joinLines(clipText(error.message, 500))}` };
    // The client throws an `{"error"}` line as a plain Error: Ollama's words only when such a line came.
    if (this.sawErrorLine && err.name === 'Error') return { kind: 'mid-stream', message: `Ollama reported an error mid-answer: ${joinLines(message)}` };
    // Any other (the client's own complaint about the answer) is told as what it is; an error not of the answer's is not Ollama's.
    if (err.name !== 'Error') return null;
    return { kind: 'malformed', message: `the answer from Ollama at ${host} could not be read (${joinLines(clipText(message, 200))}); the answer is incomplete` };
  }

  async installedModels(signal?: AbortSignal): Promise<string[]> {
    return (await this.listedModels(signal)).map((model) => model.name).sort();
  }

  /**
   * The installed models as /api/tags lists them, with when each was last changed ('' when it does
   * not say). Ollama's list is never null and names every model; an answer with no list is not
   * Ollama's (NotOllamaAnswer), and an entry without a name is left out.
   */
  async listedModels(signal?: AbortSignal, ms?: number): Promise<{ name: string; modified_at: string }[]> {
    const { models } = (await this.askClient(signal, ms).list()) as { models?: unknown };
    if (!Array.isArray(models)) throw new NotOllamaAnswer('its model list is not a list of names');
    return (models as unknown[]).flatMap((model) => {
      const { name, modified_at: modified } = (typeof model === 'object' && model !== null ? model : {}) as { name?: unknown; modified_at?: unknown };
      // Typed as a Date by the client, but it passes the JSON string through.
      return typeof name === 'string' && name !== '' ? [{ name, modified_at: typeof modified === 'string' ? modified : '' }] : [];
    });
  }

  /**
   * Ollama's release as it reports it, asked as a turn asks it (within VERSION_ASK_MS at most). Rejects
   * with an error whose message says why not, in questionFailure's words.
   */
  async version(signal?: AbortSignal): Promise<string> {
    const ms = Math.min(this.options.idleMs, VERSION_ASK_MS);
    try {
      const { version } = (await this.askClient(signal, ms).version()) as { version?: unknown };
      if (typeof version !== 'string') throw new NotOllamaAnswer('its answer names no version');
      return version;
    } catch (error) {
      throw new Error(questionFailure(this.options.host, error, this.hints, ms), { cause: error });
    }
  }

  /**
   * The server's release, asked once per host (see KeptAnswers); null when Ollama did not say in
   * time or reports no release number (a build from source): such a server is taken to have everything.
   */
  async serverVersion(signal?: AbortSignal): Promise<OllamaVersion | null> {
    const ask = (asked: AbortSignal): Promise<OllamaVersion | null> =>
      this.askClient(asked, Math.min(this.options.idleMs, VERSION_ASK_MS)).version().then(({ version }) => parseVersion(version));
    return this.versions.get(this.options.host, ask, signal).catch(() => null);
  }

  /** The window Ollama gives a request and model that set none, by its version (see defaultWindowOf). */
  async defaultNumCtx(signal?: AbortSignal): Promise<number> {
    return defaultWindowOf(await this.serverVersion(signal));
  }

  async capabilities(model: string, signal?: AbortSignal): Promise<string[]> {
    const shown = (await this.askClient(signal).show({ model })) as { capabilities?: string[] };
    return shown.capabilities ?? [];
  }

  /**
   * The first of `installed` that can answer (capability "completion"), to suggest instead of a
   * missing model: an embedding model would only fail next. Asks a few at most; an Ollama too old to
   * report capabilities gets the first name.
   */
  async answeringModel(installed: readonly string[], signal?: AbortSignal): Promise<string | undefined> {
    for (const name of installed.slice(0, SUGGEST_ASKS)) {
      if (signal?.aborted) return undefined;
      const capabilities = await this.capabilities(name, signal).catch(() => null);
      if (capabilities === null || capabilities.length === 0 || capabilities.includes('completion')) return name;
    }
    return undefined;
  }

  /**
   * The model's own `num_ctx` (`/api/show` parameters), or null when it sets none; rejects when
   * Ollama did not answer (within `idleMs`, or before `signal` aborted). Asked once per model (see
   * ModelWindows): a chat or a server does not pay for it every turn.
   */
  /**
   * The model's capabilities as `capabilities` gives them, asked once per model (a server shares the
   * answers: see `modelCapabilities`); a wait ends when `signal` aborts.
   */
  modelCapabilities(model: string, signal?: AbortSignal): Promise<readonly string[]> {
    return this.keptCapabilities.get(model, (asked) => this.capabilities(model, asked), signal);
  }

  modelNumCtx(model: string, signal?: AbortSignal): Promise<number | null> {
    return this.windows.get(model, (asked) => this.askClient(asked).show({ model }).then((shown) => numCtxFromParameters(shown.parameters)), signal);
  }

  /**
   * The window Ollama has the model loaded with (`/api/ps` `context_length`, Ollama 0.10.0+), or null
   * when it is not loaded or the release does not say. Never kept: a reload may change it.
   */
  async loadedNumCtx(model: string, signal?: AbortSignal): Promise<number | null> {
    // Asked after the answer, before the turn is logged: bounded as the version question is.
    const { models } = await this.askClient(signal, Math.min(this.options.idleMs, VERSION_ASK_MS)).ps();
    const wanted = fullModelName(model);
    const found: unknown = models.find((loaded) => fullModelName(loaded.name) === wanted || fullModelName(loaded.model) === wanted)?.['context_length' as keyof (typeof models)[number]];
    return typeof found === 'number' && Number.isSafeInteger(found) && found > 0 ? found : null;
  }
}

/** A chunk's log probabilities; undefined when it has none (the client types them; a proxy may send anything). */
/** A chunk's log probabilities as Argo hands them on: entries of Ollama's shape only, none when there are none. */
export function logprobsOf(chunk: Pick<Chunk, 'logprobs'>): readonly Logprob[] | undefined {
  const found: unknown = chunk.logprobs;
  if (!Array.isArray(found) || found.length === 0) return undefined;
  // What a proxy or a damaged line sends is no token: only entries of Ollama's shape are handed on.
  const kept = (found as unknown[]).filter(isLogprob);
  return kept.length > 0 ? kept : undefined;
}

function isTokenLogprob(value: unknown): value is TokenLogprob {
  return typeof value === 'object' && value !== null && typeof (value as TokenLogprob).token === 'string' && typeof (value as TokenLogprob).logprob === 'number';
}

function isLogprob(value: unknown): value is Logprob {
  if (!isTokenLogprob(value)) return false;
  const top: unknown = (value as Logprob).top_logprobs;
  const bytes: unknown = (value as Logprob).bytes;
  return (top === undefined || (Array.isArray(top) && top.every(isTokenLogprob))) && (bytes === undefined || (Array.isArray(bytes) && bytes.every((byte) => typeof byte === 'number')));
}

/**
 * The figures of a final (done: true) chunk. Ollama leaves out a zero (api.Metrics is all omitempty):
 * a figure missing there is 0. One that is there but no number (not Ollama's) is unknown.
 */
export function metricsOf(chunk: Partial<Record<keyof Metrics, unknown>>): Metrics {
  const figure = (value: unknown): number | null => (value === undefined ? 0 : typeof value === 'number' ? value : null);
  return {
    total_duration: figure(chunk.total_duration),
    load_duration: figure(chunk.load_duration),
    prompt_eval_count: figure(chunk.prompt_eval_count),
    prompt_eval_duration: figure(chunk.prompt_eval_duration),
    eval_count: figure(chunk.eval_count),
    eval_duration: figure(chunk.eval_duration),
    done_reason: typeof chunk.done_reason === 'string' ? chunk.done_reason : null,
  };
}

/** A chunk in JSON but not in the shape of Ollama's answers (a message that is null, text that is a number). */
class UnknownChunk extends Error {
  override name = 'UnknownChunk';
}

/**
 * A chunk's text, reasoning and tool calls, by the endpoint asked. Ollama always sends them as
 * strings and an array (a field left out is empty); anything else is not its answer.
 */
function partsOf(chunk: Chunk, chat: boolean): { text: string; thinking: string; calls: unknown[] } {
  const holder: unknown = chat ? (chunk as Partial<ChatResponse>).message : chunk;
  if (typeof holder !== 'object' || holder === null) {
    if (chat && holder === undefined) return { text: '', thinking: '', calls: [] };
    throw new UnknownChunk(clipText(JSON.stringify(chunk), 80));
  }
  const { content, response, thinking, tool_calls: calls } = holder as { content?: unknown; response?: unknown; thinking?: unknown; tool_calls?: unknown };
  const text = chat ? content : response;
  if ((text !== undefined && typeof text !== 'string') || (thinking !== undefined && typeof thinking !== 'string') || (calls != null && !Array.isArray(calls))) {
    throw new UnknownChunk(clipText(JSON.stringify(chunk), 80));
  }
  return { text: text ?? '', thinking: thinking ?? '', calls: chat && Array.isArray(calls) ? (calls as unknown[]) : [] };
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    }, { once: true });
  });
}

/**
 * A whole answer (stream: false) checked as the client will read it (response.json()): a body that
 * is no JSON object (a proxy's login page, `null`, the NDJSON lines of a stream) fails as such a line
 * of a stream does, not as a connection that failed before any answer.
 */
/** A whole answer (stream: false) that is `{"error": …}` with a success status. */
class ErrorAnswer extends Error {
  override name = 'ErrorAnswer';
}

async function checkedWhole(response: Response): Promise<Response> {
  const text = await wholeText(response);
  const bad = notAnObject(text);
  if (bad !== null) throw new Error(malformedLine(bad === '' ? 'an empty answer' : bad));
  // A 200 whose whole answer is an error (a proxy, a cloud model's gateway): said in its words, not as an answer without its end.
  const sent = errorOf(text);
  if (sent !== NO_ERROR) throw new ErrorAnswer(errorWords(sent));
  // The client reads nothing of it but the body (its length may differ by that BOM: no headers).
  return new Response(text, { status: response.status, statusText: response.statusText });
}

/** The body's first bytes, up to `max` and whole chunks past it; `more` when it went on past `max`, the rest then cancelled. */
async function readUpTo(response: Response, max: number): Promise<{ bytes: Buffer; more: boolean }> {
  if (response.body === null) return { bytes: Buffer.alloc(0), more: false };
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const parts: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(parts, length), more: false };
    parts.push(value);
    length += value.length;
    if (length > max) {
      reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(parts, length), more: true };
    }
  }
}

/**
 * The body decoded as text() decodes it (UTF-8, a leading BOM dropped), but read no further than the
 * longest line a stream may send (MAX_LINE_BYTES): an answer that never ends is not held until
 * memory runs out. A longer one fails as such a line does, quoting its start.
 */
async function wholeText(response: Response): Promise<string> {
  const { bytes, more } = await readUpTo(response, MAX_LINE_BYTES);
  if (more) throw new Error(OVERLONG_PREFIX + clipText(new TextDecoder().decode(bytes.subarray(0, 200)), 80));
  return new TextDecoder().decode(bytes);
}

/** The most of an error status's body read: Ollama's are a line; a proxy's page is shown cut short anyway. */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * An error status as a StatusAnswer: Ollama's `{"error": "…"}` keeps its words; an error that is no
 * plain string (`{"message": …}`, null, '') is put in words; anything else (a proxy's page,
 * mislabelled JSON) is the body itself, cut short; nothing is the status's own text.
 */
async function statusAnswer(response: Response): Promise<StatusAnswer> {
  const read = await readUpTo(response, ERROR_BODY_BYTES).catch(() => ({ bytes: Buffer.alloc(0) }));
  const text = new TextDecoder().decode(read.bytes.subarray(0, ERROR_BODY_BYTES)).trim();
  const retryAfter = response.headers.get('retry-after');
  const json = jsonObject(text);
  const signIn = json !== null && Object.hasOwn(json, 'signin_url');
  const plain = (): string => response.statusText || `HTTP ${response.status}`;
  const error = errorIn(json);
  if (error !== NO_ERROR) return new StatusAnswer(joinLines(errorWords(error)), response.status, 'ollama', signIn, retryAfter);
  // A body naming a sign-in address is not shown: the address holds the server's key.
  if (signIn) return new StatusAnswer(plain(), response.status, 'ollama', true, retryAfter);
  if (text === '') return new StatusAnswer(plain(), response.status, 'empty', false, retryAfter);
  return new StatusAnswer(clipText(joinLines(text), 200), response.status, 'page', false, retryAfter);
}

/**
 * A Retry-After value (seconds, or an HTTP date) as whole seconds from `now`; null when there is none
 * or it is neither. A date already past is 0.
 */
export function retryAfterSeconds(value: string | null, now: number): number | null {
  const text = value?.trim() ?? '';
  if (/^\d{1,9}$/.test(text)) return Number(text);
  // Only the IMF-fixdate form (Sun, 06 Nov 1994 08:49:37 GMT): Date.parse would take any text it can guess at.
  if (!/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return null;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

const NO_ERROR = Symbol('no error');

/** The body as a JSON object; null when it is no JSON, or JSON of another kind. */
function jsonObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The `error` of a JSON object body, whatever its type; NO_ERROR when the body is no such object. */
function errorOf(text: string): unknown {
  return errorIn(jsonObject(text));
}

/** The `error` of a JSON object, whatever its type; NO_ERROR when there is no such object or field. */
function errorIn(json: Record<string, unknown> | null): unknown {
  return json !== null && Object.hasOwn(json, 'error') ? json.error : NO_ERROR;
}
