// What the model says: reply tokens, stop sequences, and the stand-in's token counts and ids.
import type { Endpoint, FakeOllamaOptions, FakeRound, RequestBody } from './types.js';
import { jsonKind, pick, str } from './wire.js';

export function splitTokens(text: string): string[] {
  const tokens: string[] = text.match(/\s*\S+/g) ?? [];
  const tail = text.slice(tokens.reduce((n, t) => n + t.length, 0));
  if (!tail) return tokens;
  const last = tokens.pop();
  return [...tokens, last === undefined ? tail : last + tail]; // trailing whitespace joins the last word
}

export function messagesOf(body: RequestBody): RequestBody[] {
  const messages = pick(body, 'messages');
  return Array.isArray(messages) ? messages.filter((m): m is RequestBody => jsonKind(m) === 'object') : [];
}

function defaultReply(body: RequestBody, endpoint: Endpoint): string {
  if (endpoint === 'generate') return `You said: ${str(pick(body, 'prompt'))}`;
  const lastUser = messagesOf(body).filter((m) => pick(m, 'role') === 'user').at(-1);
  return `You said: ${str(lastUser && pick(lastUser, 'content'))}`;
}

// A scripted round's text wins; a round with tool calls and no text says nothing else.
export function replyTokens(
  options: FakeOllamaOptions, body: RequestBody, endpoint: Endpoint, round: FakeRound | undefined,
): string[] {
  if (round?.tokens) return round.tokens;
  if (round?.reply !== undefined) return splitTokens(round.reply);
  if (round?.toolCalls?.length) return [];
  const { tokens, reply } = options;
  if (tokens) return typeof tokens === 'function' ? tokens(body, endpoint) : tokens;
  if (reply === undefined) return splitTokens(defaultReply(body, endpoint));
  return splitTokens(typeof reply === 'function' ? reply(body, endpoint) : reply);
}

// Stop sequences end the answer just before the first match; the match itself is not sent.
export function cutAtStop(tokens: string[], stops: unknown): string[] {
  if (!Array.isArray(stops)) return tokens;
  const text = tokens.join('');
  const hits = stops.filter((s): s is string => typeof s === 'string' && s !== '').map((s) => text.indexOf(s));
  const cut = Math.min(...hits.filter((i) => i >= 0));
  if (!Number.isFinite(cut)) return tokens;
  const kept: string[] = [];
  let used = 0;
  for (const token of tokens) {
    if (used + token.length > cut) {
      if (cut > used) kept.push(token.slice(0, cut - used));
      break;
    }
    kept.push(token);
    used += token.length;
  }
  return kept;
}

const wordCount = (text: unknown): number => str(text).match(/\S+/g)?.length ?? 0;

// The stand-in's tokenizer: one token per word, 4 per chat message for the template, 1 to begin.
// Tests size prompts with it (a prompt over the window is cut, as Ollama cuts it).
export function estimatePromptTokens(body: RequestBody, endpoint: Endpoint): number {
  if (endpoint === 'generate') return 1 + wordCount(pick(body, 'system')) + wordCount(pick(body, 'prompt'));
  return messagesOf(body).reduce((n, m) => n + 4 + wordCount(pick(m, 'content')), 1);
}

// Stand-in token ids, stable for a given text.
export function tokenId(text: string): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return (hash >>> 0) % 128_000;
}
