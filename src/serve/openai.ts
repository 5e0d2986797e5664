// Pure mapping between OpenAI's chat completion shapes and Ollama's /api/chat: requests one way,
// answers (whole objects and stream chunks) the other. No I/O, no clock: time and ids come in.
import { ApiError, badRequest } from './errors.js';
import { SERVER_HINTS, missingModelLine } from '../ollama/fix-hints.js';
import { fullModelName } from '../ollama/model-name.js';
import { unreadableByOllama, unreadableReason } from '../ollama/tool-schema.js';
import { quotedName } from '../output/terminal-text.js';
import { imagesOf, textOf } from './schema.js';
import type { ChatBody, OpenAiMessage, OpenAiTool } from './schema.js';
import type { Logprob, TokenLogprob } from '../ollama/transport.js';
import type { ModelOptions, Think } from '../replay/prompt.js';

export interface OllamaToolCall {
  id?: string;
  function: { index?: number; name: string; arguments: Record<string, unknown> };
}

export interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  thinking?: string;
  images?: string[];
  tool_calls?: OllamaToolCall[];
  tool_name?: string;
  /** The call a tool result answers (Ollama's api.Message ToolCallID). */
  tool_call_id?: string;
}

export interface OllamaTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** What the client's body adds to an Ollama chat request besides the messages. */
export interface OllamaExtras {
  options: ModelOptions;
  format?: 'json' | Record<string, unknown>;
  tools?: OllamaTool[];
  think?: Think;
  /** Asked by the client (`logprobs: true`); `top_logprobs` only above 0, as Ollama leaves 0 out. */
  logprobs?: true;
  top_logprobs?: number;
}

/** OpenAI's reasoning effort as Ollama's `think`, as Ollama's own OpenAI layer maps it (its tiers clamped to Ollama's). */
const THINK_OF_EFFORT: Record<NonNullable<ChatBody['reasoning_effort']>, Think> = {
  none: false,
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  max: 'max',
  xhigh: 'max',
  ultra: 'max',
};

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

export interface OpenAiToolCallOut {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * Messages as Ollama takes them: text flattened, arguments as objects, call ids kept (Ollama's
 * `tool_calls[].id` and `tool_call_id`), tool results named after their call. An id names the
 * nearest call before it that has it, so a client that numbers each round's calls from 0 again
 * (call_0 in two rounds) keeps every round. Every call is sent as given, as Ollama's own OpenAI
 * layer sends them (parallel calls a client numbered alike too). Within one round (an assistant
 * message and what follows it) a result is left out only when it repeats an earlier one (same id
 * and content) and its id's calls already have as many results: a client's resend, not the second
 * of two calls that gave the same answer. An empty id is no id.
 */
export function toOllamaMessages(messages: readonly OpenAiMessage[]): OllamaMessage[] {
  const callNames = new Map<string, string>();
  /** This round's calls and results sent, by id; its results by id and content. */
  let calls = new Map<string, number>();
  let results = new Map<string, number>();
  let answered = new Set<string>();
  return messages.flatMap((message, at): OllamaMessage[] => {
    if (message.role === 'assistant') {
      calls = new Map();
      results = new Map();
      answered = new Set();
    }
    const resultId = message.role === 'tool' ? idOf(message.tool_call_id) : undefined;
    if (resultId !== undefined) {
      const key = JSON.stringify([resultId, message.content]);
      const sent = results.get(resultId) ?? 0;
      if (answered.has(key) && sent >= (calls.get(resultId) ?? 0)) return [];
      answered.add(key);
      results.set(resultId, sent + 1);
    }
    const role = message.role === 'developer' ? 'system' : message.role;
    const out: OllamaMessage = { role, content: textOf(message.content) };
    if (message.reasoning) out.thinking = message.reasoning;
    const images = imagesOf(message.content);
    if (images.length > 0) out.images = images;
    if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
      out.tool_calls = message.tool_calls.map((call, index): OllamaToolCall => {
        const args = parseArguments(call.function.arguments, `messages[${at}].tool_calls[${index}].function.arguments`);
        const id = idOf(call.id);
        if (id !== undefined) {
          // The message's first call with the id names its results.
          if (!calls.has(id)) callNames.set(id, call.function.name);
          calls.set(id, (calls.get(id) ?? 0) + 1);
        }
        return { ...(id !== undefined ? { id } : {}), function: { name: call.function.name, arguments: args } };
      });
    }
    if (message.role === 'tool') {
      const name = (resultId !== undefined ? callNames.get(resultId) : undefined) ?? message.name;
      if (name !== undefined) out.tool_name = name;
      if (resultId !== undefined) out.tool_call_id = resultId;
    }
    return [out];
  });
}

/** A call's or a result's id; '' is none (Ollama leaves an empty id out). */
function idOf(id: string | undefined): string | undefined {
  return id === '' ? undefined : id;
}

function parseArguments(text: string, param: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(`invalid "${param}": not valid JSON`, param);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`invalid "${param}": must encode a JSON object`, param);
  return value as Record<string, unknown>;
}

/** Sampling options, format and tools; key order fixed so equal bodies give equal bytes. */
export function toOllamaExtras(body: ChatBody): OllamaExtras {
  const options: ModelOptions = {};
  if (body.temperature != null) options.temperature = body.temperature;
  if (body.top_p != null) options.top_p = body.top_p;
  if (body.seed != null) options.seed = body.seed;
  const stop = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  // An empty list would replace the model's own stop sequences with none: left out, as Ollama's own OpenAI layer leaves it.
  if (stop.length > 0) options.stop = stop;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens != null) options.num_predict = maxTokens;
  // Ollama's own names, as its OpenAI layer sends them.
  if (body.frequency_penalty != null) options.frequency_penalty = body.frequency_penalty;
  if (body.presence_penalty != null) options.presence_penalty = body.presence_penalty;
  const extras: OllamaExtras = { options };
  const format = body.response_format;
  if (format?.type === 'json_object') extras.format = 'json';
  if (format?.type === 'json_schema') extras.format = format.json_schema.schema ?? 'json';
  const effort = body.reasoning ? body.reasoning.effort : body.reasoning_effort;
  if (effort != null) extras.think = THINK_OF_EFFORT[effort];
  if (body.logprobs === true) {
    extras.logprobs = true;
    if (body.top_logprobs != null && body.top_logprobs > 0) extras.top_logprobs = body.top_logprobs;
  }
  const tools = toolsOffered(body);
  for (const tool of tools) refuseUnreadableSchema(tool, body.tools?.indexOf(tool) ?? 0);
  if (tools.length > 0) {
    extras.tools = tools.map(({ function: fn }) => ({
      type: 'function',
      function: {
        name: fn.name,
        ...(fn.description !== undefined ? { description: fn.description } : {}),
        ...(fn.parameters !== undefined ? { parameters: fn.parameters } : {}),
      },
    }));
  }
  return extras;
}

/**
 * A client tool whose parameters Ollama cannot bind would fail the whole request there with Go's
 * unmarshal error: refused first, naming the tool (`index` in "tools") and the part.
 */
function refuseUnreadableSchema(tool: OpenAiTool, index: number): void {
  const found = unreadableByOllama(tool.function.parameters ?? null);
  if (found === null) return;
  const param = `tools[${index}].function.parameters${found.at === '' ? '' : `.${found.at}`}`;
  throw badRequest(`invalid "${param}": tool ${quotedName(tool.function.name)}: ${unreadableReason(found)}; change that part of its schema, or leave the tool out`, param);
}

/** The tools `tool_choice` leaves to the model: none, all, or the one function it names (400 if `tools` lacks it). */
function toolsOffered(body: ChatBody): OpenAiTool[] {
  const tools = body.tools ?? [];
  const choice = body.tool_choice;
  if (choice === 'none') return [];
  if (typeof choice !== 'object' || choice === null || !('function' in choice)) return tools;
  const named = tools.filter((tool) => tool.function.name === choice.function.name);
  if (named.length === 0) {
    const offered = tools.length === 0 ? '"tools" is empty' : `"tools" has ${tools.map((tool) => JSON.stringify(tool.function.name)).join(', ')}`;
    throw badRequest(`invalid "tool_choice.function.name": no tool named ${JSON.stringify(choice.function.name)} (${offered}); name one of "tools" or send it there`, 'tool_choice.function.name');
  }
  return named;
}

/** The last user message's text: the turn's `user_prompt`, and Argo mode's input. */
export function lastUserText(messages: readonly OpenAiMessage[]): string | null {
  for (let at = messages.length - 1; at >= 0; at--) {
    const message = messages[at];
    if (message?.role === 'user') return textOf(message.content);
  }
  return null;
}

/**
 * The round a new tool call belongs to: one more than the assistant tool-call messages the client
 * sent back, so generated ids (`call_<round>_<index>`) never repeat within a conversation.
 */
export function toolRound(messages: readonly OpenAiMessage[]): number {
  return messages.filter((message) => message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0).length + 1;
}

/** Tool calls as the transport hands them over (unknown[]): malformed ones are left out. */
export function ollamaToolCallsOf(calls: readonly unknown[]): OllamaToolCall[] {
  const out: OllamaToolCall[] = [];
  for (const call of calls) {
    if (typeof call !== 'object' || call === null) continue;
    const { id, function: fn } = call as { id?: unknown; function?: { name?: unknown; arguments?: unknown; index?: unknown } };
    if (typeof fn?.name !== 'string') continue;
    let args: unknown = fn.arguments ?? {};
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args) as unknown;
      } catch {
        args = { _raw: args };
      }
    }
    const argsObject = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : { _value: args };
    out.push({ ...(typeof id === 'string' && id !== '' ? { id } : {}), function: { name: fn.name, arguments: argsObject } });
  }
  return out;
}

/**
 * `first` is how many calls the answer has already sent (a stream may send one chunk per call), so
 * each call's index, and a generated id `call_<round>_<index>`, is its own within the answer.
 */
export function toOpenAiToolCalls(calls: readonly OllamaToolCall[], round: number, first = 0): OpenAiToolCallOut[] {
  return calls.map((call, at) => ({
    id: call.id !== undefined && call.id !== '' ? call.id : `call_${round}_${first + at}`,
    type: 'function',
    function: { name: call.function.name, arguments: typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments) },
  }));
}

/** A model as Ollama lists it (`/api/tags`). */
export interface InstalledModel {
  name: string;
  modified_at: string;
}

/** An entry of `/v1/models`, and the answer of `/v1/models/{id}`. */
export function modelObject(model: InstalledModel): { id: string; object: 'model'; created: number; owned_by: string } {
  return { id: model.name, object: 'model', created: Math.floor((Date.parse(model.modified_at) || 0) / 1000), owned_by: 'ollama' };
}

/** The installed model a name means, as Ollama resolves it (argo is argo:latest, library/argo too). */
export function findModel(installed: readonly InstalledModel[], wanted: string): InstalledModel | undefined {
  const full = fullModelName(wanted);
  return installed.find((model) => fullModelName(model.name) === full);
}

/** The same status, code and param as a chat request for a model Ollama does not have. */
export function modelNotFound(wanted: string, host: string, installed: readonly string[], suggested: string | undefined): ApiError {
  return new ApiError(404, missingModelLine(wanted, host, installed, SERVER_HINTS, suggested), 'invalid_request_error', 'model_not_found', 'model');
}

export function finishReason(doneReason: string | null, toolCalls: number): FinishReason {
  if (toolCalls > 0) return 'tool_calls';
  return doneReason === 'length' ? 'length' : 'stop';
}

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

/** OpenAI's ChatCompletionTokenLogprob.TopLogprob. */
export interface OpenAiTopLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
}

/** OpenAI's ChatCompletionTokenLogprob: every field present, as the SDK types them. */
export interface OpenAiTokenLogprob extends OpenAiTopLogprob {
  top_logprobs: OpenAiTopLogprob[];
}

/** A choice's `logprobs`: the tokens' in `content`; Ollama has no refusals. */
export interface ChoiceLogprobs {
  content: OpenAiTokenLogprob[];
  refusal: null;
}

function topLogprobOf(entry: TokenLogprob): OpenAiTopLogprob {
  return { token: entry.token, logprob: entry.logprob, bytes: entry.bytes ?? null };
}

/**
 * Ollama's log probabilities in OpenAI's shape, in order: `bytes` null where Ollama sent none (an
 * empty token), `top_logprobs` [] where it sent no alternatives (none asked for). Ollama's own
 * OpenAI layer leaves both out; the SDK types them as always there.
 */
export function openAiLogprobs(logprobs: readonly Logprob[]): OpenAiTokenLogprob[] {
  return logprobs.map((entry) => ({ ...topLogprobOf(entry), top_logprobs: (entry.top_logprobs ?? []).map(topLogprobOf) }));
}

export function choiceLogprobs(logprobs: readonly Logprob[]): ChoiceLogprobs {
  return { content: openAiLogprobs(logprobs), refusal: null };
}

export interface AnswerHead {
  id: string;
  created: number;
  model: string;
}

export interface CompletionInput extends AnswerHead {
  text: string;
  /** A thinking model's reasoning ('' for none). */
  reasoning?: string;
  toolCalls: readonly OpenAiToolCallOut[];
  finishReason: FinishReason;
  usage: Usage;
  /** Every piece's log probabilities in order, when the client asked; null otherwise. */
  logprobs?: readonly Logprob[] | null;
  argo?: Record<string, unknown>;
}

/** The non-streamed `chat.completion` object. */
export function completionObject(input: CompletionInput): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: input.text };
  if (input.reasoning) message.reasoning = input.reasoning;
  if (input.toolCalls.length > 0) message.tool_calls = input.toolCalls;
  return {
    id: input.id,
    object: 'chat.completion',
    created: input.created,
    model: input.model,
    choices: [{ index: 0, message, logprobs: input.logprobs ? choiceLogprobs(input.logprobs) : null, finish_reason: input.finishReason }],
    usage: input.usage,
    ...(input.argo ? { argo: input.argo } : {}),
  };
}

/**
 * `chat.completion.chunk` payloads (the text after `data: `). The fixed head is serialised once per
 * stream: content chunks are the hot path.
 */
export class ChunkFormat {
  private readonly head: string;

  constructor(head: AnswerHead) {
    this.head = `{"id":${JSON.stringify(head.id)},"object":"chat.completion.chunk","created":${head.created},"model":${JSON.stringify(head.model)},"choices":`;
  }

  private choice(delta: string, finish: FinishReason | null, extra = ''): string {
    return `${this.head}[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : JSON.stringify(finish)}}]${extra}}`;
  }

  /** A piece with its tokens' log probabilities; one without goes through `choice`, as it did before they were asked for. */
  private piece(delta: string, logprobs: readonly Logprob[] | undefined): string {
    if (logprobs === undefined) return this.choice(delta, null);
    return `${this.head}[{"index":0,"delta":${delta},"logprobs":${JSON.stringify(choiceLogprobs(logprobs))},"finish_reason":null}]}`;
  }

  role(content = ''): string {
    return this.choice(`{"role":"assistant","content":${JSON.stringify(content)}}`, null);
  }

  /** A piece of the answer; `''` with log probabilities is tokens that showed nothing (a tool call being written). */
  content(text: string, logprobs?: readonly Logprob[]): string {
    return this.piece(`{"content":${JSON.stringify(text)}}`, logprobs);
  }

  /** A piece of a thinking model's reasoning (Ollama's OpenAI layer calls it `reasoning`). */
  reasoning(text: string, logprobs?: readonly Logprob[]): string {
    return this.piece(`{"reasoning":${JSON.stringify(text)}}`, logprobs);
  }

  /** `first`: the index of the first of these calls in the answer (calls sent in earlier chunks come before). */
  toolCalls(calls: readonly OpenAiToolCallOut[], first = 0, logprobs?: readonly Logprob[]): string {
    const deltas = calls.map((call, at) => ({ index: first + at, ...call }));
    return this.piece(`{"tool_calls":${JSON.stringify(deltas)}}`, logprobs);
  }

  /**
   * Extra top-level fields (Argo's own) ride on the chunk that ends the choice; `null` for a job's
   * answer that never ended (it failed), which the openai clients' finalizers refuse as unfinished.
   */
  finish(reason: FinishReason | null, fields?: Record<string, unknown>): string {
    return this.choice('{}', reason, topLevel(fields));
  }

  /** A chunk with no choices and extra top-level fields: clients that do not know them skip it. */
  extra(fields: Record<string, unknown>): string {
    return `${this.head}[]${topLevel(fields)}}`;
  }

  /** The usage chunk; `fields` (Argo's own) ride on it too, as it is the stream's last data chunk. */
  usage(usage: Usage, fields?: Record<string, unknown>): string {
    return `${this.head}[],"usage":${JSON.stringify(usage)}${topLevel(fields)}}`;
  }
}

/** Fields written after a chunk's own, each as `,"key":value`. */
function topLevel(fields: Record<string, unknown> | undefined): string {
  let extra = '';
  if (fields) for (const [key, value] of Object.entries(fields)) extra += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return extra;
}

/** Calls numbered within their answer, in OpenAI's shape: `first` is the index of the first of them. */
export interface NumberedToolCalls {
  calls: OpenAiToolCallOut[];
  first: number;
}

/**
 * A streamed answer's tool calls, numbered across its chunks: Ollama may send each call in a chunk
 * of its own, and a client merges deltas that share an index. ChunkFormat.toolCalls writes them.
 */
export class StreamedToolCalls {
  private sent = 0;

  constructor(private readonly round: number) {}

  number(calls: readonly OllamaToolCall[]): NumberedToolCalls {
    const first = this.sent;
    this.sent += calls.length;
    return { calls: toOpenAiToolCalls(calls, this.round, first), first };
  }
}
