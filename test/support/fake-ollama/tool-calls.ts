// Chat tool-call scripting: which round a chat request is, and the tool calls it answers with.
import { createHash } from 'node:crypto';
import type { ServerState } from './exchange.js';
import type { Endpoint, FakeRound, FakeToolCall, RequestBody } from './types.js';
import type { VersionProfile } from './versions.js';
import { pick } from './wire.js';

// Takes the next round of the script for a chat request that reaches the model.
export function takeRound(state: ServerState, body: RequestBody): FakeRound | undefined {
  const index = state.rounds++;
  const { rounds } = state.options;
  if (rounds === undefined) return undefined;
  return typeof rounds === 'function' ? rounds(body, index) : rounds[index];
}

const offersTools = (body: RequestBody): boolean => {
  const offered = pick(body, 'tools');
  return Array.isArray(offered) && offered.length > 0;
};

// The calls as Ollama writes them: `index` is the call's place in the answer (0.4.7+, left out when
// 0 before 0.12.6); `id` (0.12.10+) the script's, else one made as `callIds` says (Ollama makes one
// for every call); none at all before 0.2.6, which ignored `tools`; arguments as scripted (an
// object, or a string sent as a JSON string). Ollama itself parses a model's calls and always sends
// an object (a call it cannot parse reaches the client as plain content): string arguments are for
// robustness tests of OpenAI-style servers and proxies, not a shape Ollama produces.
export function toolCallsFor(
  state: ServerState, body: RequestBody, endpoint: Endpoint, round: FakeRound | undefined, profile: VersionProfile,
): FakeToolCall[] | undefined {
  if (endpoint !== 'chat' || !profile.tools || !offersTools(body)) return undefined;
  const scripted = state.options.toolCalls;
  const calls = round ? round.toolCalls : typeof scripted === 'function' ? scripted(body) : scripted;
  if (!calls?.length) return undefined;
  const made = state.options.callIds ?? 'random';
  const idOf = (call: FakeToolCall): { id?: string } => {
    if (!profile.callIds) return {};
    if (call.id !== undefined) return { id: call.id };
    if (made === 'scripted') return {};
    return { id: made === 'seeded' ? seededCallId(state.callIdsMade++) : ollamaCallId() };
  };
  const indexOf = (index: number): { index?: number } =>
    profile.callIndex === 'none' || (profile.callIndex === 'omitted-when-zero' && index === 0) ? {} : { index };
  return calls.map((call, index) => ({
    ...idOf(call),
    function: { ...indexOf(call.function.index ?? index), name: call.function.name, arguments: call.function.arguments },
  }));
}

// The chunks the calls travel in: all in one, or one each.
export function toolCallChunks(calls: FakeToolCall[], round: FakeRound | undefined): FakeToolCall[][] {
  if (calls.length === 0) return [];
  return round?.splitToolCalls ? calls.map((call) => [call]) : [calls];
}

const ID_LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Ollama's toolCallId (server/routes.go): `call_` and 8 random lowercase letters or digits. */
function ollamaCallId(): string {
  let id = 'call_';
  for (let i = 0; i < 8; i++) id += ID_LETTERS[Math.floor(Math.random() * ID_LETTERS.length)] ?? 'a';
  return id;
}

/** The same shape, the n-th of a fixed sequence: a stand-in's ids are the same in every test run. */
export function seededCallId(n: number): string {
  const bytes = createHash('sha256').update(`call ${n}`).digest();
  let id = 'call_';
  for (let i = 0; i < 8; i++) id += ID_LETTERS[(bytes[i] ?? 0) % ID_LETTERS.length] ?? 'a';
  return id;
}
