// The request bodies the server accepts, as zod schemas: unknown fields are dropped (zod's default),
// a wrong type is a 400 naming the field, and null in an optional field counts as absent.
import * as z from 'zod';
import { codePoints } from '../replay/budget.js';
import { MIN_BUDGET } from '../replay/policy.js';
import { readReplaySpec, replaySpecRule } from '../replay/spec.js';
import { REPLAY_REASONS, VERBOSITIES } from '../replay/types.js';
import type { ReplayReason, ReplaySpec, Verbosity } from '../replay/types.js';
import { SESSION_NAME_RULE, isSessionName } from '../sessions/names.js';
import { similarNames } from '../text/similar.js';
import { quotedName } from '../output/terminal-text.js';
import { badRequest } from './errors.js';
import { MODEL_NAME_RULE, isOllamaModelName } from '../ollama/model-name.js';
import type { ApiError } from './errors.js';

type Issue = z.ZodError['issues'][number];

const ARGO_KEYS = ['session', 'replay', 'reason', 'budget', 'persona', 'verbosity', 'mode', 'tools'] as const;
export type ArgoKey = (typeof ARGO_KEYS)[number];

function isArgoKey(key: unknown): key is ArgoKey {
  return (ARGO_KEYS as readonly unknown[]).includes(key);
}

/** `a, b or c`: words in a sentence. */
function listed(words: readonly string[], last: 'and' | 'or'): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1) ?? ''}`;
}

/** The image types Ollama's own OpenAI layer takes in a data URL; `data:;base64,` is bare base64, as /api/chat takes it. */
const IMAGE_DATA_URL = /^data:(?:image\/(?:jpeg|jpg|png|webp))?;base64,/;
/**
 * Standard base64 with its padding, as Go's decoder (Ollama) wants it; no grouped pattern, which
 * overflows V8's stack on megabytes. Line breaks (`base64` wraps at 76) are no part of the data:
 * Go's decoder skips them, and `base64Data` takes them out.
 */
function isBase64(text: string): boolean {
  const data = base64Data(text);
  return data.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(data);
}

/** Base64 as it is sent on: without line breaks. */
function base64Data(text: string): string {
  return text.replace(/[\r\n]/g, '');
}
const IMAGE_FIX = 'send the image inline as a base64 data URL of a JPEG, PNG or WebP image ("data:image/png;base64,…")';

/** The base64 of an image data URL Ollama takes, or why it cannot be sent. */
export function imageData(url: string): { data: string } | { refused: string } {
  if (/^https?:\/\//i.test(url)) return { refused: `image URLs are not supported (Ollama takes images inline); ${IMAGE_FIX}` };
  const prefix = IMAGE_DATA_URL.exec(url);
  if (prefix === null) return { refused: `not an image Ollama takes; ${IMAGE_FIX}` };
  const data = url.slice(prefix[0].length);
  return isBase64(data) ? { data: base64Data(data) } : { refused: `the image data is not valid base64; ${IMAGE_FIX}` };
}

/**
 * An object schema in which null counts as absent for every optional field: clients send an unset
 * field as null, and Ollama's own OpenAI layer takes it so. One rule for every object of a request,
 * not `.nullish()` field by field; a required field sent as null is still a wrong type.
 */
function requestObject<Shape extends z.ZodRawShape>(shape: Shape, wrongType?: string) {
  const optional = new Set(Object.entries(shape).flatMap(([key, field]) => (z.safeParse(field, undefined).success ? [key] : [])));
  return z.preprocess((value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
    return Object.fromEntries(Object.entries(value).filter(([key, field]) => field !== null || !optional.has(key)));
  }, z.object(shape, wrongType === undefined ? undefined : { error: wrongType }));
}

/**
 * `image_url` as OpenAI documents it, `{"url": "…"}`, or as a bare string, which older clients send
 * and Ollama's own OpenAI layer takes alike: read as the object, so both get the same checks.
 */
const imageUrl = z.preprocess(
  (value) => (typeof value === 'string' ? { url: value } : value),
  requestObject({ url: z.string() }, 'expected {"url": "data:image/png;base64,…"} or the data URL as a string'),
);

/**
 * Text, images as base64 data URLs, and audio (`input_audio`, passed on as Ollama's own OpenAI layer
 * does, for models that hear): anything else is refused, naming the part, rather than left out.
 */
const contentPart = requestObject({
  type: z.string(),
  text: z.string().optional(),
  image_url: imageUrl.optional(),
  input_audio: requestObject({ data: z.string(), format: z.string().optional() }).optional(),
}).superRefine((part, context) => {
  const refuse = (message: string, path: string[] = []): void => context.addIssue({ code: 'custom', path, message });
  switch (part.type) {
    case 'text':
      if (part.text === undefined) refuse('a text part needs "text"', ['text']);
      return;
    case 'image_url': {
      if (part.image_url === undefined) {
        refuse('an image part needs "image_url"', ['image_url']);
        return;
      }
      const image = imageData(part.image_url.url);
      if ('refused' in image) refuse(image.refused);
      return;
    }
    case 'input_audio':
      if (part.input_audio === undefined) refuse('an audio part needs "input_audio": {"data": "<base64>", "format": "wav"}', ['input_audio']);
      else if (!isBase64(part.input_audio.data)) refuse('the audio data is not valid base64; send "input_audio": {"data": "<base64>", "format": "wav"}');
      return;
    default:
      refuse(`content parts of type ${JSON.stringify(part.type)} are not supported; send "text", "image_url" (a base64 data URL) or "input_audio" parts`);
  }
});
export type ContentPart = z.infer<typeof contentPart>;

const contentParts = z.array(contentPart);

/**
 * A string or an array of parts. Not a plain union: zod says only "Invalid input" when neither
 * matches, so an array's parts are checked here and a bad one named by its index, field and type.
 */
const content = z
  .union([z.string(), z.array(z.unknown())], { error: 'expected a string or an array of content parts' })
  .transform((value, context): string | ContentPart[] => {
    if (typeof value === 'string') return value;
    const parts = contentParts.safeParse(value);
    if (parts.success) return parts.data;
    for (const issue of parts.error.issues) context.addIssue(issue.code === 'custom' ? { ...issue } : { ...issue, message: `${issue.message}${partTypeOf(value, issue.path)}` });
    return z.NEVER;
  })
  .nullish();

/** ` (in a part of type "text")`: the type of the part a field's issue is in, when it has one. */
function partTypeOf(parts: readonly unknown[], path: readonly PropertyKey[]): string {
  const part: unknown = typeof path[0] === 'number' ? parts[path[0]] : undefined;
  const type = typeof part === 'object' && part !== null && 'type' in part ? part.type : undefined;
  return typeof type === 'string' && path.length > 1 ? ` (in a part of type ${quotedName(type)})` : '';
}

const role = z.enum(['system', 'developer', 'user', 'assistant', 'tool']);

/** What a message without `content` is told to send. */
const MISSING_CONTENT: Record<z.infer<typeof role>, string> = {
  system: 'a system message needs "content": send its text (a string or an array of text parts)',
  developer: 'a developer message needs "content": send its text (a string or an array of text parts)',
  user: 'a user message needs "content": send its text (a string) or an array of content parts',
  assistant: 'an assistant message needs "content" unless it has "tool_calls": send its text, or the calls it made',
  tool: 'a tool message needs "content": send the tool\'s result as text',
};

const toolCall = requestObject({
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: requestObject({ name: z.string(), arguments: z.string() }),
});
export type OpenAiToolCall = z.infer<typeof toolCall>;

const message = requestObject({
  role,
  content,
  /** A thinking model's reasoning, as this server (and Ollama's own OpenAI layer) sent it: goes back as `thinking`. */
  reasoning: z.string().nullish(),
  name: z.string().optional(),
  tool_calls: z.array(toolCall).nullish(),
  tool_call_id: z.string().optional(),
}).superRefine((sent, context) => {
  // As OpenAI and Ollama's own OpenAI layer have it: only an assistant's calls stand without content;
  // else a message without it would go to the model as an empty turn.
  if (sent.content != null || (sent.role === 'assistant' && sent.tool_calls != null)) return;
  context.addIssue({ code: 'custom', path: ['content'], message: MISSING_CONTENT[sent.role] });
});
export type OpenAiMessage = z.infer<typeof message>;

const tool = requestObject({
  type: z.literal('function'),
  function: requestObject({
    name: z.string(),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});
export type OpenAiTool = z.infer<typeof tool>;

/**
 * "none" sends no tools and a named function narrows them to that one; "required" (and the named
 * function's "must call") cannot be enforced through Ollama. Other object forms (allowed_tools,
 * custom) get a message of their own rather than zod's "Invalid input".
 */
const TOOL_CHOICES = 'use "none", "auto", "required" or {"type": "function", "function": {"name": "…"}}';
const toolChoice = z
  .union([z.enum(['none', 'auto', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }), z.object({ type: z.string() })], { error: TOOL_CHOICES })
  .superRefine((choice, context) => {
    if (typeof choice === 'string' || 'function' in choice) return;
    const message =
      choice.type === 'function'
        ? 'a function choice needs "function": {"name": "…"}'
        : choice.type === 'allowed_tools'
          ? 'tool_choice "allowed_tools" is not supported: send only the allowed tools in "tools" (with "tool_choice": "auto")'
          : `tool_choice of type ${JSON.stringify(choice.type)} is not supported; ${TOOL_CHOICES}`;
    context.addIssue({ code: 'custom', message });
  });
export type ToolChoice = z.infer<typeof toolChoice>;

const responseFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }),
  z.object({ type: z.literal('json_object') }),
  z.object({
    type: z.literal('json_schema'),
    json_schema: requestObject({ name: z.string(), schema: z.record(z.string(), z.unknown()).optional(), strict: z.boolean().nullish() }),
  }),
]);
export type ResponseFormat = z.infer<typeof responseFormat>;

// Read as the CLI's --replay and the X-Argo-Replay header are.
const replaySpec = z.string().transform((value, context): ReplaySpec => {
  const spec = readReplaySpec(value);
  if (spec !== null) return spec;
  context.addIssue({ code: 'custom', message: replaySpecRule(value) });
  return z.NEVER;
});

/**
 * A persona, mode or toolset name, in characters: each is a key of config.json, and one a client
 * sends goes no further than this 400, not into an error quoting it or a log line.
 */
export const MAX_NAME_LENGTH = 200;
const NAME_RULE = `use at most ${MAX_NAME_LENGTH} characters (the length of a name in config.json)`;

/** A string of at most `max` characters (code points: an emoji is one). */
function stringOfAtMost(max: number, message: string): z.ZodString {
  return z.string().refine((text) => codePoints(text) <= max, message);
}

/**
 * How many names `argo.tools` takes: several times the built-in tools and toolsets. Each name is
 * resolved against the catalog, and an unknown one quoted back, so a body of thousands is refused.
 */
export const MAX_TOOL_NAMES = 100;

/** A comma list ("fs,edit") or an array of names; an empty name is refused, as --tools refuses it. */
const toolsets = z
  .union([z.string(), z.array(z.string())])
  .transform((value, context) => {
    const names = (typeof value === 'string' ? value.split(',') : value).map((name) => name.trim());
    if (names.length > MAX_TOOL_NAMES || !names.includes('')) return names;
    const shown = typeof value === 'string' ? JSON.stringify(value) : 'the array';
    context.addIssue({ code: 'custom', message: `empty name in ${shown}; use a comma-separated list like fs,edit (or an array of names)` });
    return z.NEVER;
  })
  .refine((names) => names.length <= MAX_TOOL_NAMES, `use at most ${MAX_TOOL_NAMES} names (a toolset in config.json can group more)`)
  .refine((names) => names.every((name) => codePoints(name) <= MAX_NAME_LENGTH), `use names of at most ${MAX_NAME_LENGTH} characters each (the length of a name in config.json)`);

/** What each Argo field takes, as a 400 about it says; budget as the CLI's --budget says it. */
const ARGO_FIELD_RULES: Record<ArgoKey, string> = {
  session: SESSION_NAME_RULE,
  replay: replaySpecRule(''),
  reason: `use ${listed(REPLAY_REASONS, 'or')} (the reason to replay earlier turns)`,
  budget: `use a whole number of characters, at least ${MIN_BUDGET}`,
  persona: "use the name of one of the server's personas (a string; they are in its config.json)",
  verbosity: `use ${listed(VERBOSITIES, 'or')}`,
  mode: "use the name of one of the server's modes (a string; they are in its config.json)",
  tools: 'use tool and toolset names, as a comma list ("fs,edit") or an array of strings',
};

const argoFields = requestObject({
  session: z.string().refine(isSessionName, ARGO_FIELD_RULES.session).optional(),
  replay: replaySpec.optional(),
  reason: z.enum(REPLAY_REASONS).optional(),
  budget: z.number().int().min(MIN_BUDGET).optional(),
  persona: stringOfAtMost(MAX_NAME_LENGTH, NAME_RULE).min(1).optional(),
  verbosity: z.enum(VERBOSITIES).optional(),
  mode: stringOfAtMost(MAX_NAME_LENGTH, NAME_RULE).min(1).optional(),
  tools: toolsets.optional(),
});

/**
 * An Argo field's first issue, said as the field's rule: zod's own words ("expected string, received
 * number") would leave a client to guess the value. A check with words of its own (a name too long,
 * too many tools) keeps them.
 */
function argoIssue(error: z.ZodError): Issue | undefined {
  const issue = error.issues[0];
  const key = issue?.path[0];
  if (issue === undefined || issue.code === 'custom' || !isArgoKey(key)) return issue;
  return { ...issue, message: ARGO_FIELD_RULES[key] };
}

export interface ArgoFields {
  session?: string;
  replay?: ReplaySpec;
  reason?: ReplayReason;
  budget?: number;
  persona?: string;
  verbosity?: Verbosity;
  mode?: string;
  tools?: string[];
  /** The fields a header set and the body left alone: an error about one names the header. */
  fromHeaders?: ArgoKey[];
}

const reasoningEffort = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'ultra', 'max']);

function between(min: number, max: number): z.ZodNumber {
  return z.number().min(min, `must be between ${min} and ${max}`).max(max, `must be between ${min} and ${max}`);
}
const tokenCount = z.number().int().min(1, 'must be a whole number of 1 or more');
/** The most alternatives per token OpenAI gives, and Ollama takes (routes.go refuses more). */
const MAX_TOP_LOGPROBS = 20;
const TOP_LOGPROBS_RANGE = `must be a whole number between 0 and ${MAX_TOP_LOGPROBS}`;

/**
 * Longer than any name Ollama takes (a host of at most 350 characters; namespace, model and tag of 80
 * each): what is longer goes no further than this 400, not into the log line of a failed turn.
 */
export const MAX_MODEL_LENGTH = 1000;

const chatBody = requestObject({
  // Checked as Ollama checks it, so a name it would refuse gets the same 400 here as from GET /v1/models/{id}.
  model: z.string({ error: (issue) => (issue.input === undefined ? 'missing; send the name of a model Ollama has (GET /v1/models lists them)' : 'expected a string: the name of a model Ollama has (GET /v1/models lists them)') }).min(1, 'empty; send the name of a model Ollama has (GET /v1/models lists them)').max(MAX_MODEL_LENGTH, `use at most ${MAX_MODEL_LENGTH} characters (no model name Ollama takes is longer)`).refine(isOllamaModelName, MODEL_NAME_RULE),
  messages: z.array(message, { error: (issue) => (issue.input === undefined ? 'missing; send the conversation as an array of messages' : 'expected an array of messages ({"role": "user", "content": "…"})') }).min(1, 'send at least one message'),
  stream: z.boolean().nullish(),
  stream_options: requestObject({ include_usage: z.boolean().nullish() }).nullish(),
  // OpenAI's documented ranges.
  temperature: between(0, 2).nullish(),
  top_p: between(0, 1).nullish(),
  frequency_penalty: between(-2, 2).nullish(),
  presence_penalty: between(-2, 2).nullish(),
  max_tokens: tokenCount.nullish(),
  max_completion_tokens: tokenCount.nullish(),
  stop: z.union([z.string(), z.array(z.string())], { error: 'expected a string or an array of strings (the sequences that end the answer)' }).nullish(),
  seed: z.number().int().nullish(),
  /** Log probabilities of the answer's tokens, passed on to Ollama (0.12.11+), which gives them. */
  logprobs: z.boolean().nullish(),
  top_logprobs: z.number().int(TOP_LOGPROBS_RANGE).min(0, TOP_LOGPROBS_RANGE).max(MAX_TOP_LOGPROBS, TOP_LOGPROBS_RANGE).nullish(),
  /** Ollama answers one choice per request; 1 (or null) is OpenAI's default. */
  n: z
    .number()
    .int()
    .nullish()
    .refine((value) => value == null || value === 1, 'this server answers with one choice; send 1 or leave "n" out, and send the request again for another answer'),
  tools: z.array(tool).nullish(),
  tool_choice: toolChoice.nullish(),
  /** Accepted, not enforced: Ollama has no way to keep a model to one call per answer. */
  parallel_tool_calls: z.boolean().nullish(),
  response_format: responseFormat.nullish(),
  reasoning_effort: reasoningEffort.nullish(),
  /** The newer form of `reasoning_effort`; it wins when both are sent, as in Ollama's own OpenAI layer. */
  reasoning: requestObject({ effort: reasoningEffort.nullish() }).nullish(),
  user: z.string().nullish(),
  argo: z.unknown().optional(),
}).superRefine((body, context) => {
  // As OpenAI answers it: usage in a stream only, so asking for it without one is a mistake.
  if (body.stream_options != null && body.stream !== true) {
    context.addIssue({ code: 'custom', path: ['stream_options'], message: 'only allowed with "stream": true; leave it out or stream the answer' });
  }
  // OpenAI's rule: "logprobs must be set to true if this parameter is used" (0 included).
  // 0 asks for no alternatives: the same as leaving it out, as clients that always send it mean.
  if (body.top_logprobs != null && body.top_logprobs > 0 && body.logprobs !== true) {
    context.addIssue({ code: 'custom', path: ['top_logprobs'], message: 'needs "logprobs": true; send it too, or leave "top_logprobs" out' });
  }
});
export type ChatBody = z.infer<typeof chatBody>;

export interface ChatRequest {
  body: ChatBody;
  /** Null in plain mode: no `argo` object in the body, and no X-Argo-* header with a value. */
  argo: ArgoFields | null;
}

const HEADER_PREFIX = 'x-argo-';
/** The server's own answer headers (X-Argo-Turn-Id, X-Argo-Log): a client may send them back; they set nothing. */
const ANSWER_HEADERS: ReadonlySet<string> = new Set(['turn-id', 'log']);

/** `messages[0].content` from zod's path. */
function paramOf(path: readonly PropertyKey[], prefix = ''): string | null {
  let param = prefix;
  for (const key of path) param += typeof key === 'number' ? `[${key}]` : `${param === '' ? '' : '.'}${String(key)}`;
  return param === '' ? null : param;
}

function firstIssue(error: z.ZodError, prefix = ''): ApiError {
  return issueRefusal(error.issues[0], prefix);
}

function issueRefusal(issue: Issue | undefined, prefix = ''): ApiError {
  if (issue === undefined) return badRequest('invalid request body');
  const param = paramOf(issue.path, prefix);
  return badRequest(param === null ? `invalid request body: ${issue.message}` : `invalid "${param}": ${issue.message}`, param);
}

/**
 * Argo fields from `X-Argo-*` headers (strings), overridden field by field by the body's `argo`
 * object. Either makes the request Argo mode, even with no field in it (`"argo": {}` is the
 * configured session and replay); a blank header counts as not sent (a proxy may pass one on empty).
 */
function argoFrom(raw: unknown, headers: Headers): ArgoFields | null {
  // A misspelt header would leave its setting out, as a misspelt body field would: refused too.
  for (const [name, value] of headers) {
    if (!name.startsWith(HEADER_PREFIX) || value.trim() === '') continue;
    const key = name.slice(HEADER_PREFIX.length);
    if (!isArgoKey(key) && !ANSWER_HEADERS.has(key)) throw unknownArgoHeader(key);
  }
  const headerValues: Record<string, unknown> = {};
  for (const key of ARGO_KEYS) {
    const value = headers.get(`${HEADER_PREFIX}${key}`);
    if (value === null || value.trim() === '') continue;
    headerValues[key] = key === 'budget' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  }
  const headerResult = argoFields.safeParse(headerValues);
  if (!headerResult.success) {
    const issue = argoIssue(headerResult.error);
    const key = String(issue?.path[0] ?? '');
    // As the docs spell it (X-Argo-Budget): the message and `param` name the same header.
    const header = headerNamed(key);
    throw badRequest(`invalid header "${header}": ${issue?.message ?? 'invalid'}`, header);
  }
  // null is absent, as for every other optional field (clients send unset extra fields as null).
  if (raw !== undefined && raw !== null && (typeof raw !== 'object' || Array.isArray(raw))) {
    throw badRequest('invalid "argo": expected an object', 'argo');
  }
  const unknownKey = Object.keys(raw ?? {}).find((key) => !isArgoKey(key));
  if (unknownKey !== undefined) throw unknownArgoField(unknownKey);
  const bodyResult = argoFields.safeParse(raw ?? {});
  if (!bodyResult.success) throw issueRefusal(argoIssue(bodyResult.error), 'argo');
  if ((raw === undefined || raw === null) && Object.keys(headerValues).length === 0) return null;
  const fromHeader = stripUndefined(headerResult.data);
  const fromBody = stripUndefined(bodyResult.data);
  const fromHeaders = ARGO_KEYS.filter((key) => key in fromHeader && !(key in fromBody));
  return { ...fromHeader, ...fromBody, ...(fromHeaders.length > 0 ? { fromHeaders } : {}) } as ArgoFields;
}

/**
 * An Argo field as an error names it, in `param` and its message: as the client sent it, its header
 * (`X-Argo-Persona`) when a header set it, else its place in the body (`argo.persona`).
 */
export function argoParam(argo: Pick<ArgoFields, 'fromHeaders'> | null, key: ArgoKey): string {
  return sentInHeader(argo, key) ? headerNamed(key) : `argo.${key}`;
}

/** An Argo field in a sentence: `the X-Argo-Tools header` when a header set it, else `the "tools" Argo field`. */
export function argoFieldNamed(argo: Pick<ArgoFields, 'fromHeaders'> | null, key: ArgoKey): string {
  return sentInHeader(argo, key) ? `the ${headerNamed(key)} header` : `the "${key}" Argo field`;
}

/** Whether the request's `key` came from its header. */
export function sentInHeader(argo: Pick<ArgoFields, 'fromHeaders'> | null, key: ArgoKey): boolean {
  return argo?.fromHeaders?.includes(key) === true;
}

/**
 * A misspelt Argo field would leave its setting out (a `sesion` runs in the configured session), so
 * it is refused, not dropped as other unknown fields are. A key that is not a plain name is quoted
 * clipped, never whole in `param`.
 */
function unknownArgoField(key: string): ApiError {
  const known = `the Argo fields are ${listed(ARGO_KEYS, 'and')}`;
  if (!PLAIN_KEY.test(key)) return badRequest(`invalid "argo": unknown Argo field ${quotedName(key)}; ${known}`, 'argo');
  return badRequest(`invalid "argo.${key}": unknown Argo field${meant(key, (name) => name)}; ${known}`, `argo.${key}`);
}

/** `X-Argo-Sesion`: named as the docs spell the headers, with the one meant when it is close. */
function unknownArgoHeader(key: string): ApiError {
  const plain = PLAIN_KEY.test(key);
  const shown = plain ? `"${headerNamed(key)}"` : quotedName(`X-Argo-${key}`);
  return badRequest(`invalid header ${shown}: unknown Argo header${meant(key, headerNamed)}; the Argo headers are ${ARGO_KEYS.map(headerNamed).join(', ')}`, plain ? headerNamed(key) : null);
}

/** A key quoted as it is in a message and named in `param`: a plain name, not too long. */
const PLAIN_KEY = /^[\w-]{1,64}$/;

/** `X-Argo-Budget` for `budget`: a header as the docs spell it. */
export function headerNamed(key: string): string {
  return `X-Argo-${key.charAt(0).toUpperCase()}${key.slice(1)}`;
}

/**
 * ` (did you mean "session"?)` for an Argo key close to `key`, shown by `named`; a name equal to it
 * but for case ("Session") too, which similarNames leaves out.
 */
function meant(key: string, named: (name: string) => string): string {
  const near = ARGO_KEYS.find((name) => name === key.toLowerCase()) ?? similarNames(key, ARGO_KEYS)[0];
  return near === undefined ? '' : ` (did you mean "${named(near)}"?)`;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as Partial<T>;
}

/** The body of /v1/chat/completions and POST /api/jobs, with its Argo fields; throws a 400 ApiError. */
export function parseChatRequest(json: unknown, headers: Headers): ChatRequest {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw badRequest('the request body must be a JSON object');
  const result = chatBody.safeParse(json);
  if (!result.success) throw firstIssue(result.error);
  return { body: result.data, argo: argoFrom(result.data.argo, headers) };
}

/**
 * A title a client sets, in characters (Argo makes them of 60 from the first prompt): the record that
 * holds it is read on every turn of the session, and its title shown in every listing.
 */
export const MAX_TITLE_LENGTH = 200;

const sessionPatch = z.object({
  title: stringOfAtMost(MAX_TITLE_LENGTH, `use at most ${MAX_TITLE_LENGTH} characters`),
});

/** PATCH /api/sessions/:name. */
export function parseSessionPatch(json: unknown): { title: string } {
  const result = sessionPatch.safeParse(json);
  if (!result.success) throw firstIssue(result.error);
  return result.data;
}

/** The text of a message's content: text parts joined by a newline. */
export function textOf(value: OpenAiMessage['content']): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return value
    .flatMap((part) => (part.type === 'text' && part.text !== undefined ? [part.text] : []))
    .join('\n');
}

/** What Ollama takes as a message's `images`: base64 images from data URLs, and audio (checked by the schema). */
export function imagesOf(value: OpenAiMessage['content']): string[] {
  if (value === null || value === undefined || typeof value === 'string') return [];
  const images: string[] = [];
  for (const part of value) {
    if (part.type === 'input_audio' && part.input_audio !== undefined) images.push(base64Data(part.input_audio.data));
    if (part.type !== 'image_url' || part.image_url === undefined) continue;
    const image = imageData(part.image_url.url);
    if ('data' in image) images.push(image.data);
  }
  return images;
}

