// Log probabilities, as Ollama 0.12.11+ sends them when a request asks (`logprobs: true`):
// server/logprob.go's toAPILogprobs over the runner's values, one entry per generated token, in the
// chunk that token went out with; `top_logprobs` (0–20, routes.go) alternatives per token.
import { tokenId } from './reply.js';
import type { RequestBody } from './types.js';
import { BadRequest, pick } from './wire.js';

/** api.TokenLogprob. */
export interface FakeTokenLogprob {
  token: string;
  logprob: number;
  bytes?: number[];
}

/** api.Logprob: the chosen token, and the alternatives when `top_logprobs` asked for them. */
export interface FakeLogprob extends FakeTokenLogprob {
  top_logprobs?: FakeTokenLogprob[];
}

/** The most `top_logprobs` may ask for (routes.go). */
export const MAX_TOP_LOGPROBS = 20;

/** ChatHandler and GenerateHandler check the range right after binding the body, before the model. */
export function checkTopLogprobs(body: RequestBody): void {
  const top = pick(body, 'top_logprobs');
  if (typeof top === 'number' && (top < 0 || top > MAX_TOP_LOGPROBS)) {
    throw new BadRequest(`top_logprobs must be between 0 and ${MAX_TOP_LOGPROBS}`);
  }
}

/**
 * How many alternatives a request asks for per token, or null when it asks for no log
 * probabilities: `top_logprobs` without `logprobs: true` gives nothing (the runner asks llama-server
 * for probabilities only when Logprobs is set).
 */
export function logprobsAsked(body: RequestBody): number | null {
  if (pick(body, 'logprobs') !== true) return null;
  const top = pick(body, 'top_logprobs');
  return typeof top === 'number' ? top : 0;
}

/** A stand-in's log probability for a token: stable for a given text, in (-3, 0]. */
export function fakeLogprobValue(token: string): number {
  return -(tokenId(token) % 3000) / 1000;
}

// Alternatives the stand-in offers after the chosen token, each less likely than the one before.
const ALTERNATIVES = [' the', ' a', ' and', ' of', ' to', ' in', ' is', ' it', ' that', ' on', ' for', ' with', ' as', ' was', ' at', ' by', ' be', ' this', ' from', ' or', ' an'];

// stringToByteInts: nil (so left out) for an empty token.
function tokenLogprob(token: string, logprob: number): FakeTokenLogprob {
  const bytes = [...Buffer.from(token, 'utf8')];
  return bytes.length > 0 ? { token, logprob, bytes } : { token, logprob };
}

/** One generated token's entry: the token, then (top > 0) the `top` most likely tokens, the chosen first. */
export function fakeLogprob(token: string, top: number): FakeLogprob {
  const logprob = fakeLogprobValue(token);
  const entry: FakeLogprob = tokenLogprob(token, logprob);
  if (top <= 0) return entry;
  const others = ALTERNATIVES.filter((other) => other !== token).slice(0, top - 1);
  entry.top_logprobs = [tokenLogprob(token, logprob), ...others.map((other, at) => tokenLogprob(other, logprob - (at + 1) / 2))];
  return entry;
}
