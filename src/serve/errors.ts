// OpenAI-shaped errors: every failure a client sees is `{error:{message, type, param, code}}` with
// the status the contract gives it.
import { failureCode } from '../ollama/failure-codes.js';
import type { RefusedFeature } from '../ollama/versions.js';
import type { BrowserRefusal } from './auth.js';

export type ErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'requests' | 'server_error' | 'api_error';

export interface ErrorBody {
  error: { message: string; type: ErrorType; param: string | null; code: string | null };
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 408 | 409 | 413 | 429 | 431 | 500 | 502 | 503 | 504,
    message: string,
    readonly type: ErrorType,
    readonly code: string | null = null,
    readonly param: string | null = null,
    /** Response headers the status calls for (WWW-Authenticate with a 401, Retry-After with a 429 or 503). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  body(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function badRequest(message: string, param: string | null = null, code: string | null = 'invalid_value'): ApiError {
  return new ApiError(400, message, 'invalid_request_error', code, param);
}

export function notFound(message: string, code = 'not_found'): ApiError {
  return new ApiError(404, message, 'not_found_error', code);
}

/**
 * The challenge says which scheme to use (RFC 6750): a request that sent a bearer token is told it is
 * not valid; one that sent none (or another scheme) is told only the scheme.
 */
export function unauthorized(tokenSent: boolean): ApiError {
  const challenge = tokenSent ? 'Bearer error="invalid_token"' : 'Bearer';
  return new ApiError(401, 'missing or wrong API key: send "Authorization: Bearer <key>"', 'authentication_error', 'invalid_api_key', null, { 'WWW-Authenticate': challenge });
}

/**
 * Tools the request named that the server's own config.json defines in a way that cannot be used
 * (`problem`, a ConfigError's message): no request mends it, so a 500 the client is not told to retry.
 */
export function brokenToolConfig(problem: string): ApiError {
  const what = problem.replace(/^config\.json: /, '');
  return new ApiError(
    500,
    `the server's config.json defines these tools in a way that cannot be used: ${what}; the server's operator must fix config.json ("argo tools" there shows the problem) and restart argo serve`,
    'server_error',
    'tool_config_invalid',
    null,
    { 'X-Should-Retry': 'false' },
  );
}

/** How long a client is told to wait after Ollama stayed busy through the retries, when Ollama did not say. */
export const BUSY_RETRY_AFTER_S = 2;

/** A request that came while the server shuts down: no sooner than the grace's end (`seconds`) can another server answer. */
export function shuttingDown(seconds: number): ApiError {
  return new ApiError(503, 'the server is shutting down', 'server_error', 'shutting_down', null, { 'Retry-After': String(seconds) });
}

/**
 * An answer the shutdown cut after it began: an error, so no client takes its text for a whole answer
 * (a finish chunk and [DONE] would let an editor apply half a file). The text so far is in its turn.
 */
export function cutByShutdown(turnId: string): ApiError {
  return new ApiError(
    503,
    `the server shut down before the answer was finished: it is partial (its text so far is logged as turn ${turnId}, status interrupted); send the request again once the server is back`,
    'server_error',
    'shutting_down',
  );
}

/**
 * A request that came while STOP is set: refused, but its turn logged `stopped` (its id in
 * X-Argo-Turn-Id). No Retry-After, as waiting does not clear STOP; `X-Should-Retry: false` keeps the
 * openai clients from sending it again (each try would log another turn).
 */
export function stopIsSet(turnId: string): ApiError {
  return new ApiError(
    503,
    'STOP is set on this server, so nothing was answered (the request is logged as stopped); clear it with DELETE /api/stop (or "argo stop --clear" on the server), then send it again',
    'server_error',
    'argo_stopped',
    null,
    { 'X-Argo-Turn-Id': turnId, 'X-Should-Retry': 'false' },
  );
}

/**
 * A server without a key refusing what a web page may have sent: a Host that is not this machine's
 * (`host`, quoted), an Origin of another site, or a page's Origin `null`.
 */
export function fromBrowser(refused: BrowserRefusal, value: string): ApiError {
  if (refused === 'host') {
    return new ApiError(
      403,
      `the Host ${value} is not a name of this machine: without an API key argo serve answers only requests for localhost, 127.0.0.1 or [::1] (a web page could reach it under a name of its own); use one of those in the URL, or set an API key`,
      'permission_error',
      'foreign_host',
    );
  }
  if (refused === 'opaque-origin') {
    // A page of this machine, as often as not: it is told what works instead, not that it is a site.
    return new ApiError(
      403,
      'a request from a web page with no origin (Origin "null": an HTML file opened in the browser, or a sandboxed frame of any site) is refused: without an API key argo serve cannot tell such a page from a site you visit; serve the page from http://localhost (e.g. "python3 -m http.server" in its folder, then open http://localhost:8000/), show it in an app\'s own file:// page, or send the request from a program',
      'permission_error',
      'foreign_origin',
    );
  }
  return new ApiError(
    403,
    `a request from the web page at ${value} is refused: without an API key argo serve takes requests from programs and from pages on this machine only, so a site you visit cannot use it; send it from a program, or set an API key`,
    'permission_error',
    'foreign_origin',
  );
}

/** A body that ended before it was whole: the client left, or was cut for sending it too slowly. */
export function incompleteBody(): ApiError {
  return new ApiError(400, 'the request body ended before it was whole (the client left, or sent it too slowly)', 'invalid_request_error', 'incomplete_body');
}

export function tooLarge(limit: number): ApiError {
  return new ApiError(413, `request body larger than ${limit} bytes (serve.maxBodyBytes in config.json)`, 'invalid_request_error', 'body_too_large');
}

/** How a client is shown the server's data home: where it is, and so where its files are, is the operator's. */
export const DATA_HOME_SHOWN = '<data home>';

/** What may follow a path in a message: a folder's separator, a quote, a bracket or punctuation. */
const PATH_ENDS = new Set(['/', '\\', "'", '"', ')', ']', '}', '>', ',', ';', ':', '.']);

/**
 * `text` (a message for a client) with the data home's path shown as DATA_HOME_SHOWN wherever it
 * stands as a path of its own or a folder of one (`/srv/argo/logs`, not `/srv/argo-old`). A home
 * of one character (`/`) is left: it would hide every slash.
 */
export function hideHome(text: string, home: string | undefined): string {
  if (home === undefined || home.length < 2) return text;
  let shown = '';
  let from = 0;
  for (let at = text.indexOf(home); at !== -1; at = text.indexOf(home, from)) {
    const next = text.charAt(at + home.length);
    const whole = next === '' || PATH_ENDS.has(next) || /\s/.test(next);
    shown += text.slice(from, at) + (whole ? DATA_HOME_SHOWN : home);
    from = at + home.length;
  }
  return shown + text.slice(from);
}

/** The same error with `headers` added to its response's. */
export function withHeaders(error: ApiError, headers: Readonly<Record<string, string>>): ApiError {
  return new ApiError(error.status, error.message, error.type, error.code, error.param, { ...error.headers, ...headers });
}

/** The same error with its message shown as `hideHome` shows it. */
export function withoutHome(error: ApiError, home: string | undefined): ApiError {
  const message = hideHome(error.message, home);
  return message === error.message ? error : new ApiError(error.status, message, error.type, error.code, error.param, error.headers);
}

/** How the turn's transport failed, as the turn reports it. */
export interface TurnFailure {
  kind: string;
  message: string;
  httpStatus?: number;
  /** Seconds a busy Ollama (or a proxy before it) asked to be left alone for (its Retry-After). */
  retryAfterS?: number;
  /** What an Ollama too old for the request lacks. */
  feature?: RefusedFeature;
}

/**
 * The request field that alone asks for what a too-old Ollama lacks. Tools and thinking may come from
 * the server's own config (toolsets, "think") as well as the client's fields: no param for them.
 */
const FIELD_OF_FEATURE: Readonly<Record<RefusedFeature, string | null>> = {
  tools: null,
  schemaFormat: 'response_format',
  think: null,
  thinkLevels: null,
  thinkLevelsAnyModel: null,
  thinkMax: null,
  logprobs: 'logprobs',
};

/** The status and body for a turn that failed before any text was sent; the code is the CLI's `error_code` too. */
export function fromFailure(failure: TurnFailure): ApiError {
  const code = failureCode(failure);
  const retryAfter = { 'Retry-After': String(failure.retryAfterS ?? BUSY_RETRY_AFTER_S) };
  switch (code) {
    case 'model_not_found':
      return new ApiError(404, failure.message, 'invalid_request_error', code, 'model');
    case 'rate_limit_exceeded':
      // A rate limit is the client's to back off from, as OpenAI says it.
      return new ApiError(429, failure.message, 'requests', code, null, retryAfter);
    case 'ollama_busy':
      return new ApiError(503, failure.message, 'server_error', code, null, retryAfter);
    case 'ollama_timeout':
      return new ApiError(504, failure.message, 'server_error', code);
    // Ollama is too old for something the request asked (the field named), or refused it: the client can ask otherwise.
    case 'ollama_too_old':
      return new ApiError(400, failure.message, 'invalid_request_error', code, failure.feature !== undefined ? FIELD_OF_FEATURE[failure.feature] : null);
    case 'ollama_rejected':
      return new ApiError(400, failure.message, 'invalid_request_error', code);
    case 'argo_error':
      // The turn failed on the server's side (a tool result it could not save), not Ollama's.
      return new ApiError(500, failure.message, 'server_error', code);
    default:
      return new ApiError(502, failure.message, 'api_error', code);
  }
}
