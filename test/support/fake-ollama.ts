// An HTTP stand-in for the Ollama daemon, built from /work/shared/spec/ollama-protocol.md and
// ollama/ollama server/routes.go. Used by end-to-end tests and benchmarks.
// Standalone: node --import tsx test/support/fake-ollama.ts --port 0 --tokens 1000 --delay-ms 0
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

// ---------------------------------------------------------------------------------------------
// Public types

export type Endpoint = 'generate' | 'chat';
export type RequestBody = Record<string, unknown>;

export interface FakeModel {
  name: string; // any spelling; listed with its tag, e.g. `argo` → `argo:latest`
  capabilities?: string[]; // default ['completion']; chat and generate need 'completion'
  family?: string; // default 'llama'
  contextLength?: number; // reported as model_info['<family>.context_length'], default 131072
  numCtx?: number; // the model's num_ctx parameter (/api/show parameters); the window when a request sets none
  parameterSize?: string;
  quantizationLevel?: string;
  size?: number;
  modifiedAt?: string;
}

export interface FakeToolCall {
  id?: string;
  function: { index?: number; name: string; arguments: Record<string, unknown> };
}

export interface FakeScenario {
  // The next N generate/chat requests get 503 (decremented as used), then normal service.
  busy?: number;
  // 500 before the first chunk; a string replaces the default runner message.
  runnerError?: boolean | string;
  // After K chunks: one `{"error":…}` line, then the stream ends without a done line (status 200).
  errorMidStream?: number | { afterChunks: number; message?: string };
  // After K chunks the socket is destroyed.
  dropAfter?: number;
  // After K chunks a line that is not JSON; then the stream goes on ('continue', default) or ends.
  malformedAfter?: number | { afterChunks: number; line?: string; then?: 'continue' | 'end' };
  // End cleanly without the done line: true = after every chunk, K = after K chunks.
  truncate?: boolean | number;
  // After K chunks (0 = headers only) send nothing more until the client leaves;
  // 'beforeHeaders' hangs before the status line.
  hang?: number | 'beforeHeaders';
  delayMs?: number; // between chunks
  firstChunkDelayMs?: number; // model load: before the headers and the first chunk
  // How many more generate/chat requests this scenario applies to (busy keeps its own count);
  // undefined = all of them.
  times?: number;
}

export interface FakeOllamaOptions {
  host?: string | undefined; // default 127.0.0.1
  port?: number | undefined; // default 0 (any free port)
  version?: string; // default 0.12.0
  models?: FakeModel[] | undefined; // default [{ name: 'argo:latest' }]
  // The answer text; default `You said: <last user content | prompt>`.
  reply?: string | ((body: RequestBody, endpoint: Endpoint) => string) | undefined;
  // Explicit tokens; wins over `reply`. Otherwise the text is split into words with their
  // leading whitespace.
  tokens?: string[] | ((body: RequestBody, endpoint: Endpoint) => string[]) | undefined;
  // Carry the last token in the done:true line instead of a chunk of its own.
  textInDone?: boolean;
  // Chat only, and only when the request offers tools: sent in one done:false chunk.
  toolCalls?: FakeToolCall[] | ((body: RequestBody) => FakeToolCall[] | undefined);
  scenario?: FakeScenario | undefined;
}

export interface RecordedRequest {
  method: string;
  path: string; // without the query string
  headers: IncomingHttpHeaders;
  body: string;
  json: unknown; // undefined when the body is empty or not JSON
  status: number | undefined; // once the headers went out
  linesWritten: number; // NDJSON lines actually written
  clientAborted: boolean; // the client went away before the response was complete
  settled: Promise<void>; // resolves when the server is done with this request, whatever the reason
}

export interface FakeOllama {
  readonly url: string;
  readonly port: number;
  readonly requests: RecordedRequest[];
  readonly connections: number; // TCP connections accepted so far
  options: FakeOllamaOptions; // read on every request: mutate freely between calls
  setScenario(scenario: FakeScenario | undefined): void;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Protocol constants (messages copied from ollama/ollama)

export const BUSY_MESSAGE = 'server busy, please try again.  maximum pending requests exceeded';
export const RUNNER_ERROR_MESSAGE = 'an error was encountered while running the model';
const DEFAULT_MODELS: FakeModel[] = [{ name: 'argo:latest' }];
const DEFAULT_KEEP_ALIVE_MS = 5 * 60_000;
const FOREVER_MS = 292 * 365 * 24 * 3600_000; // Go's MaxInt64 duration, roughly
// Nominal speeds, so durations are realistic and never zero even when nothing is delayed.
const PROMPT_NS_PER_TOKEN = 200_000;
const EVAL_NS_PER_TOKEN = 1_000_000;
const JSON_TYPE = 'application/json; charset=utf-8';
const NDJSON_TYPE = 'application/x-ndjson';

// ---------------------------------------------------------------------------------------------
// Model names: [host/][namespace/]model[:tag], defaults registry.ollama.ai/library/…:latest,
// compared case-insensitively (types/model/name.go).

interface ModelName {
  host: string;
  namespace: string;
  model: string;
  tag: string;
}

const NAME_PART = /^[A-Za-z0-9_.-]+$/;
const HOST_PART = /^[A-Za-z0-9_.:-]+$/;

function parseModelName(raw: string): ModelName | undefined {
  let s = raw.replace(/^https?:\/\//, '').replace(/[@+].*$/, ''); // digest and build do not name
  let tag = 'latest';
  const colon = s.lastIndexOf(':');
  if (colon > s.lastIndexOf('/')) {
    tag = s.slice(colon + 1);
    s = s.slice(0, colon);
  }
  const parts = s.split('/');
  if (parts.length > 3) return undefined;
  const model = parts.pop() ?? '';
  const namespace = parts.pop() ?? 'library';
  const host = parts.pop() ?? 'registry.ollama.ai';
  const valid =
    NAME_PART.test(model) && NAME_PART.test(tag) && HOST_PART.test(host) &&
    NAME_PART.test(namespace) && !namespace.includes('.');
  return valid ? { host, namespace, model, tag } : undefined;
}

const fullName = (n: ModelName): string => `${n.host}/${n.namespace}/${n.model}:${n.tag}`;

// Like DisplayShortest, except the tag is never masked (`/api/tags` always shows it).
function displayName(n: ModelName): string {
  const defaultHost = n.host.toLowerCase() === 'registry.ollama.ai';
  const prefix = !defaultHost
    ? `${n.host}/${n.namespace}/`
    : n.namespace.toLowerCase() === 'library' ? '' : `${n.namespace}/`;
  return `${prefix}${n.model}:${n.tag}`;
}

interface ResolvedModel {
  key: string; // lower-cased full name
  full: string;
  display: string;
  digest: string;
  family: string;
  capabilities: string[];
  contextLength: number;
  numCtx: number | undefined;
  size: number;
  modifiedAt: string;
  details: Record<string, unknown>;
}

function resolveModel(config: FakeModel): ResolvedModel {
  const name = parseModelName(config.name);
  if (!name) throw new Error(`fake-ollama: invalid model name ${JSON.stringify(config.name)}`);
  const family = config.family ?? 'llama';
  const full = fullName(name);
  return {
    key: full.toLowerCase(),
    full,
    display: displayName(name),
    digest: createHash('sha256').update(full.toLowerCase()).digest('hex'),
    family,
    capabilities: config.capabilities ?? ['completion'],
    contextLength: config.contextLength ?? 131_072,
    numCtx: config.numCtx,
    size: config.size ?? 4_920_753_328,
    modifiedAt: config.modifiedAt ?? '2026-01-15T09:30:00Z',
    details: {
      parent_model: '',
      format: 'gguf',
      family,
      families: [family],
      parameter_size: config.parameterSize ?? '8.0B',
      quantization_level: config.quantizationLevel ?? 'Q4_K_M',
    },
  };
}

const modelsOf = (options: FakeOllamaOptions): ResolvedModel[] =>
  (options.models ?? DEFAULT_MODELS).map(resolveModel);

function findModel(options: FakeOllamaOptions, requested: string): ResolvedModel | undefined {
  const name = parseModelName(requested);
  const key = name && fullName(name).toLowerCase();
  return modelsOf(options).find((m) => m.key === key);
}

// ---------------------------------------------------------------------------------------------
// Time: created_at is RFC3339Nano UTC; Go trims trailing zeros of the fraction.

const originNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();
const nowNs = (): bigint => originNs + process.hrtime.bigint();
let cachedSecond = -1n;
let cachedPrefix = '';

function createdAt(): string {
  const ns = nowNs();
  const second = ns / 1_000_000_000n;
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(Number(second) * 1000).toISOString().slice(0, 19);
  }
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return fraction ? `${cachedPrefix}.${fraction}Z` : `${cachedPrefix}Z`;
}

const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');

// ---------------------------------------------------------------------------------------------
// JSON the way Go writes and reads it

const GO_HTML_ESCAPES: Record<string, string> = {
  '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029',
};
const GO_HTML_RE = /[<>&\u2028\u2029]/g;

// encoding/json escapes HTML characters by default.
function goJson(value: unknown): string {
  const text = JSON.stringify(value);
  return GO_HTML_RE.test(text) ? text.replace(GO_HTML_RE, (c) => GO_HTML_ESCAPES[c] ?? c) : text;
}

// Thrown by handlers; answered as {"error": message} with this status.
class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

class BadRequest extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}

// V8's JSON.parse complaints, reworded as encoding/json words them.
const GO_SYNTAX: [RegExp, string][] = [
  [/Expected property name/, 'looking for beginning of object key string'],
  [/after property value/, 'after object key:value pair'],
  [/after array element/, 'after array element'],
  [/after property name/, 'after object key'],
  [/Bad control character|Bad escaped character/, 'in string literal'],
  [/number|Exponent/i, 'in numeric literal'],
];

// strconv.QuoteRune without the quotes' own escaping of '"'.
function goQuoteChar(c: string): string {
  if (c === "'") return "'\\''";
  return c === '"' ? `'"'` : `'${JSON.stringify(c).slice(1, -1)}'`;
}

function syntaxError(raw: string, message: string): BadRequest {
  if (/end of JSON input|Unterminated/i.test(message)) return new BadRequest('unexpected EOF');
  const position = /at position (\d+)/.exec(message)?.[1];
  const char = position === undefined
    ? (/Unexpected token '?(.)/.exec(message)?.[1] ?? raw.trim()[0] ?? '')
    : (raw[Number(position)] ?? '');
  const where = GO_SYNTAX.find(([re]) => re.test(message))?.[1] ?? 'looking for beginning of value';
  return new BadRequest(`invalid character ${goQuoteChar(char)} ${where}`);
}

// json.Decoder reads one value and ignores whatever follows it.
function decodeGoJson(raw: string): unknown {
  if (raw.trim() === '') throw new BadRequest('missing request body');
  try {
    return JSON.parse(raw);
  } catch (error) {
    const message = (error as Error).message;
    const trailing = /after JSON at position (\d+)/.exec(message)?.[1];
    if (trailing !== undefined) return JSON.parse(raw.slice(0, Number(trailing)));
    throw syntaxError(raw, message);
  }
}

// Go matches JSON keys to struct fields case-insensitively, preferring an exact match.
function pick(body: RequestBody, field: string): unknown {
  if (field in body) return body[field];
  const key = Object.keys(body).find((k) => k.toLowerCase() === field);
  return key === undefined ? undefined : body[key];
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value; // string, number, object
}

type FieldSpec = [jsonKind: string, goType: string];
const STRING: FieldSpec = ['string', 'string'];
const BOOL: FieldSpec = ['bool', 'bool'];
const OPTIONS: FieldSpec = ['object', 'map[string]interface {}'];
const FIELDS: Record<string, Record<string, FieldSpec>> = {
  GenerateRequest: {
    model: STRING, prompt: STRING, suffix: STRING, system: STRING, template: STRING,
    stream: BOOL, raw: BOOL, options: OPTIONS, context: ['array', '[]int'],
  },
  ChatRequest: {
    model: STRING, messages: ['array', '[]api.Message'], tools: ['array', 'api.Tools'],
    stream: BOOL, options: OPTIONS,
  },
  ShowRequest: { model: STRING, name: STRING, system: STRING, verbose: BOOL, options: OPTIONS },
};

const typeError = (kind: string, where: string, goType: string): BadRequest =>
  new BadRequest(`json: cannot unmarshal ${kind} into Go ${where} of type ${goType}`);

function checkFields(body: RequestBody, struct: string): void {
  for (const [field, [kind, goType]] of Object.entries(FIELDS[struct] ?? {})) {
    const value = pick(body, field);
    if (value === undefined || value === null || jsonKind(value) === kind) continue;
    throw typeError(jsonKind(value), `struct field ${struct}.${field}`, goType);
  }
}

function checkMessages(body: RequestBody): void {
  const messages = pick(body, 'messages');
  if (!Array.isArray(messages)) return;
  for (const message of messages) {
    if (message === null) continue;
    if (jsonKind(message) !== 'object') {
      throw typeError(jsonKind(message), 'struct field ChatRequest.messages', 'api.Message');
    }
    for (const field of ['role', 'content']) {
      const value = pick(message as RequestBody, field);
      if (value === undefined || value === null || typeof value === 'string') continue;
      throw typeError(jsonKind(value), `struct field Message.messages.${field}`, 'string');
    }
  }
}

// Parses a request body like Gin's ShouldBindJSON into api.<struct>.
function bindBody(raw: string, struct: string): RequestBody {
  const value = decodeGoJson(raw);
  if (value === null) return {};
  if (jsonKind(value) !== 'object') throw typeError(jsonKind(value), `value`, `api.${struct}`);
  const body = value as RequestBody;
  checkFields(body, struct);
  if (struct === 'ChatRequest') checkMessages(body);
  if (struct !== 'ShowRequest') keepAliveMs(body); // api.Duration fails while binding
  return body;
}

// ---------------------------------------------------------------------------------------------
// keep_alive: seconds as a number, or a Go duration string; negative = forever.

const DURATION_UNITS: Record<string, number> = {
  ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000,
};

function parseGoDurationMs(text: string): number {
  const sign = text.startsWith('-') ? -1 : 1;
  const rest = text.replace(/^[-+]/, '');
  if (rest === '0') return 0;
  if (/^(\d+\.?\d*|\.\d+)$/.test(rest)) throw new BadRequest(`time: missing unit in duration "${text}"`);
  const parts = [...rest.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)];
  if (rest === '' || parts.map((p) => p[0]).join('') !== rest) {
    throw new BadRequest(`time: invalid duration "${text}"`);
  }
  return sign * parts.reduce((ms, p) => ms + Number(p[1]) * (DURATION_UNITS[p[2] ?? ''] ?? 0), 0);
}

function keepAliveMs(body: RequestBody): number {
  const value = pick(body, 'keep_alive');
  if (value === undefined || value === null) return DEFAULT_KEEP_ALIVE_MS;
  let ms: number;
  if (typeof value === 'number') ms = value * 1000;
  else if (typeof value === 'string') ms = parseGoDurationMs(value);
  else throw new BadRequest('invalid duration');
  return ms < 0 ? FOREVER_MS : ms;
}

// ---------------------------------------------------------------------------------------------
// Host check (allowedHostsMiddleware): only for a loopback-bound server; 403 with no body.

function isLoopbackAddress(ip: string): boolean {
  const v4 = ip.replace(/^::ffff:/i, '');
  return ip === '::1' || (isIP(v4) === 4 && v4.startsWith('127.'));
}

function isPrivateOrUnspecified(ip: string): boolean {
  const v4 = ip.replace(/^::ffff:/i, '');
  if (isIP(v4) === 4) {
    const [a = 0, b = 0] = v4.split('.').map(Number);
    return a === 10 || (a === 172 && b >= 16 && b < 32) || (a === 192 && b === 168) || v4 === '0.0.0.0';
  }
  return ip === '::' || /^f[cd]/i.test(ip);
}

function isInterfaceAddress(ip: string): boolean {
  return Object.values(networkInterfaces()).some((list) => list?.some((i) => i.address === ip));
}

function splitHost(header: string): string {
  const bracketed = /^\[([^\]]+)\](:\d*)?$/.exec(header);
  if (bracketed?.[1]) return bracketed[1];
  const colon = header.lastIndexOf(':');
  return colon >= 0 && header.indexOf(':') === colon ? header.slice(0, colon) : header;
}

function hostAllowed(header: string | undefined): boolean {
  const host = splitHost(header ?? '').toLowerCase();
  if (isIP(host)) return isLoopbackAddress(host) || isPrivateOrUnspecified(host) || isInterfaceAddress(host);
  return (
    host === '' || host === 'localhost' || host === hostname().toLowerCase() ||
    /\.(localhost|local|internal)$/.test(host)
  );
}

// ---------------------------------------------------------------------------------------------
// One request/response pair

interface ServerState {
  options: FakeOllamaOptions;
  requests: RecordedRequest[];
  loaded: Map<string, { model: ResolvedModel; expiresAt: number; contextLength: number }>;
  checkHost: boolean;
  closing: boolean;
}

class Exchange {
  gone = false; // the response is over, for whatever reason
  dropped = false; // we cut the connection on purpose
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly goneWaiters: (() => void)[] = [];

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly record: RecordedRequest,
    state: ServerState,
    settle: () => void,
  ) {
    res.on('close', () => {
      this.gone = true;
      if (!res.writableFinished && !this.dropped && !state.closing) record.clientAborted = true;
      clearTimeout(this.timer);
      this.wake?.();
      for (const resolve of this.goneWaiters) resolve();
      settle();
    });
  }

  // Sleeps, but wakes up at once if the client leaves.
  wait(ms: number | undefined): Promise<void> {
    if (!ms || ms <= 0 || this.gone) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  untilGone(): Promise<void> {
    return this.gone ? Promise.resolve() : new Promise((resolve) => this.goneWaiters.push(resolve));
  }

  // Writes one line; waits for the socket to drain so slow readers get back-pressure.
  async writeLine(line: string): Promise<void> {
    if (this.gone) return;
    this.record.linesWritten++;
    if (this.res.write(line)) return;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      this.res.once('drain', resolve);
    });
  }

  drop(): void {
    this.dropped = true;
    this.res.socket?.destroy();
  }
}

function sendBody(ctx: Exchange, status: number, body: string, type: string | undefined): void {
  if (ctx.gone) return;
  const headers: Record<string, string | number> = { 'Content-Length': Buffer.byteLength(body) };
  if (type) headers['Content-Type'] = type;
  ctx.record.status = status;
  ctx.res.writeHead(status, headers).end(body);
}

const sendJson = (ctx: Exchange, status: number, value: unknown, type = JSON_TYPE): void =>
  sendBody(ctx, status, goJson(value), type);

const sendError = (ctx: Exchange, status: number, message: string, type = JSON_TYPE): void =>
  sendJson(ctx, status, { error: message }, type);

// ---------------------------------------------------------------------------------------------
// Simple endpoints

type Handler = (state: ServerState, ctx: Exchange) => void | Promise<void>;

const handleRoot: Handler = (_state, ctx) =>
  sendBody(ctx, 200, 'Ollama is running', 'text/plain; charset=utf-8');

const handleVersion: Handler = (state, ctx) =>
  sendJson(ctx, 200, { version: state.options.version ?? '0.12.0' });

const handleTags: Handler = (state, ctx) => {
  const models = modelsOf(state.options).map((m) => ({
    name: m.display, model: m.display, modified_at: m.modifiedAt, size: m.size, digest: m.digest,
    details: m.details,
  }));
  sendJson(ctx, 200, { models });
};

const handleShow: Handler = (state, ctx) => {
  const body = bindBody(ctx.record.body, 'ShowRequest');
  const requested = str(pick(body, 'model')) || str(pick(body, 'name'));
  if (!requested) throw new HttpError(400, 'model is required');
  if (!parseModelName(requested)) throw new HttpError(400, 'invalid model name');
  const model = findModel(state.options, requested);
  if (!model) throw new HttpError(404, `model '${requested}' not found`);
  sendJson(ctx, 200, {
    modelfile: `# Modelfile generated by "ollama show"\nFROM ${model.display}\n`,
    parameters: `${model.numCtx === undefined ? '' : `num_ctx                        ${model.numCtx}\n`}stop                           "<|eot_id|>"`,
    template: '{{ .Prompt }}',
    details: model.details,
    model_info: {
      'general.architecture': model.family,
      'general.parameter_count': 8_030_261_248,
      [`${model.family}.context_length`]: model.contextLength,
      [`${model.family}.embedding_length`]: 4096,
    },
    capabilities: model.capabilities,
    modified_at: model.modifiedAt,
  });
};

const handlePs: Handler = (state, ctx) => {
  const now = Date.now();
  const models = [...state.loaded.values()]
    .filter((entry) => entry.expiresAt > now)
    .map(({ model, expiresAt, contextLength }) => ({
      name: model.display, model: model.display, size: model.size, digest: model.digest,
      details: model.details, expires_at: rfc3339(expiresAt), size_vram: model.size,
      context_length: contextLength,
    }));
  sendJson(ctx, 200, { models });
};

// ---------------------------------------------------------------------------------------------
// generate / chat: validation in the order routes.go applies it

const STRUCT: Record<Endpoint, string> = { generate: 'GenerateRequest', chat: 'ChatRequest' };

// generate reports a missing model as not found, chat as required (parseAndValidateModelRef).
function lookupModel(state: ServerState, endpoint: Endpoint, requested: string): ResolvedModel {
  if (!requested && endpoint === 'chat') throw new HttpError(400, 'model is required');
  if (requested && !parseModelName(requested)) throw new HttpError(400, 'invalid model name');
  const model = findModel(state.options, requested);
  if (!model) throw new HttpError(404, `model '${requested}' not found`);
  return model;
}

function capabilityError(body: RequestBody, endpoint: Endpoint, requested: string, model: ResolvedModel) {
  const caps = model.capabilities;
  const think = pick(body, 'think');
  if (!caps.includes('thinking') && (think === true || (typeof think === 'string' && think !== ''))) {
    return `${JSON.stringify(requested)} does not support thinking`;
  }
  if (!caps.includes('completion')) return `${JSON.stringify(requested)} does not support ${endpoint}`;
  const tools = pick(body, 'tools');
  if (endpoint === 'chat' && Array.isArray(tools) && tools.length > 0 && !caps.includes('tools')) {
    return `${model.full} does not support tools`;
  }
  const suffix = pick(body, 'suffix');
  if (endpoint === 'generate' && str(suffix) && !caps.includes('insert')) {
    return `${model.full} does not support insert`;
  }
  return undefined;
}

const isEmptyRequest = (body: RequestBody, endpoint: Endpoint): boolean => {
  if (endpoint === 'generate') return str(pick(body, 'prompt')) === '';
  const messages = pick(body, 'messages');
  return !Array.isArray(messages) || messages.length === 0;
};

// The answer to a load or unload request: a single done line, never streamed.
function sendLifecycle(ctx: Exchange, endpoint: Endpoint, requested: string, reason: 'load' | 'unload'): void {
  const text = endpoint === 'generate' ? { response: '' } : { message: { role: 'assistant', content: '' } };
  sendJson(ctx, 200, { model: requested, created_at: createdAt(), ...text, done: true, done_reason: reason });
}

function takeBusy(scenario: FakeScenario | undefined): boolean {
  if (!scenario?.busy || scenario.busy <= 0) return false;
  scenario.busy--;
  return true;
}

function takeScenario(scenario: FakeScenario | undefined): FakeScenario {
  if (scenario?.times === undefined) return scenario ?? {};
  if (scenario.times <= 0) return {};
  scenario.times--;
  return scenario;
}

function markLoaded(state: ServerState, model: ResolvedModel, body: RequestBody): void {
  const options = pick(body, 'options') as RequestBody | undefined;
  const numCtx = options?.num_ctx;
  const contextLength = Math.min(typeof numCtx === 'number' && numCtx > 0 ? numCtx : 4096, model.contextLength);
  state.loaded.set(model.key, { model, expiresAt: Date.now() + keepAliveMs(body), contextLength });
}

async function handleInference(state: ServerState, ctx: Exchange, endpoint: Endpoint): Promise<void> {
  const startNs = nowNs();
  const body = bindBody(ctx.record.body, STRUCT[endpoint]);
  const requested = str(pick(body, 'model'));
  const model = lookupModel(state, endpoint, requested);
  const keepAlive = keepAliveMs(body);
  if (isEmptyRequest(body, endpoint) && pick(body, 'keep_alive') !== undefined && keepAlive === 0) {
    state.loaded.delete(model.key);
    sendLifecycle(ctx, endpoint, requested, 'unload'); return;
  }
  const rawConflict = endpoint === 'generate' && pick(body, 'raw') === true &&
    (str(pick(body, 'template')) || str(pick(body, 'system')) || Array.isArray(pick(body, 'context')));
  if (rawConflict) { sendError(ctx, 400, 'raw mode does not support template, system, or context'); return; }
  const rejection = capabilityError(body, endpoint, requested, model);
  if (rejection) { sendError(ctx, 400, rejection); return; }
  if (takeBusy(state.options.scenario)) { sendError(ctx, 503, BUSY_MESSAGE); return; }

  const scenario = takeScenario(state.options.scenario);
  await ctx.wait(scenario.firstChunkDelayMs);
  if (ctx.gone) return;
  if (scenario.runnerError) {
    const message = typeof scenario.runnerError === 'string' ? scenario.runnerError : RUNNER_ERROR_MESSAGE;
    sendError(ctx, 500, message); return;
  }
  markLoaded(state, model, body);
  if (isEmptyRequest(body, endpoint)) { sendLifecycle(ctx, endpoint, requested, 'load'); return; }

  const plan = buildPlan(state.options, body, endpoint, scenario, startNs);
  if (pick(body, 'stream') === false) await answerWhole(ctx, plan);
  else await streamPlan(ctx, plan);
  if (keepAlive === 0) state.loaded.delete(model.key);
}

// ---------------------------------------------------------------------------------------------
// What to send: tokens, cut by stop sequences and num_predict, plus where the scenario interrupts

type Terminal =
  | { at: number; kind: 'error'; message: string }
  | { at: number; kind: 'drop' | 'hang' | 'truncate' };

interface Plan {
  endpoint: Endpoint;
  model: string; // as the request spelled it
  modelJson: string;
  chunks: (string | FakeToolCall[])[]; // one line each
  finalText: string;
  doneReason: 'stop' | 'length';
  evalCount: number;
  promptEvalCount: number;
  context: number[] | undefined;
  malformed: { at: number; line: string; then: 'continue' | 'end' } | undefined;
  terminal: Terminal | undefined;
  hangBeforeHeaders: boolean;
  delayMs: number;
  startNs: bigint;
  loadedNs: bigint;
}

export function splitTokens(text: string): string[] {
  const tokens: string[] = text.match(/\s*\S+/g) ?? [];
  const tail = text.slice(tokens.reduce((n, t) => n + t.length, 0));
  if (tail && tokens.length > 0) tokens[tokens.length - 1] += tail;
  else if (tail) tokens.push(tail);
  return tokens;
}

function messagesOf(body: RequestBody): RequestBody[] {
  const messages = pick(body, 'messages');
  return Array.isArray(messages) ? messages.filter((m): m is RequestBody => jsonKind(m) === 'object') : [];
}

function defaultReply(body: RequestBody, endpoint: Endpoint): string {
  if (endpoint === 'generate') return `You said: ${str(pick(body, 'prompt'))}`;
  const lastUser = messagesOf(body).filter((m) => pick(m, 'role') === 'user').at(-1);
  return `You said: ${str(lastUser && pick(lastUser, 'content'))}`;
}

function replyTokens(options: FakeOllamaOptions, body: RequestBody, endpoint: Endpoint): string[] {
  const { tokens, reply } = options;
  if (tokens) return typeof tokens === 'function' ? tokens(body, endpoint) : tokens;
  if (reply === undefined) return splitTokens(defaultReply(body, endpoint));
  return splitTokens(typeof reply === 'function' ? reply(body, endpoint) : reply);
}

// Stop sequences end the answer just before the first match; the match itself is not sent.
function cutAtStop(tokens: string[], stops: unknown): string[] {
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

// The window a request runs with: options.num_ctx, else the model's num_ctx, else Ollama's 4096.
function windowOf(options: FakeOllamaOptions, body: RequestBody): number {
  const requested = (pick(body, 'options') as RequestBody | undefined)?.num_ctx;
  if (typeof requested === 'number' && requested > 0) return requested;
  const name = parseModelName(str(pick(body, 'model')));
  const key = name ? fullName(name).toLowerCase() : '';
  const model = (options.models ?? []).map(resolveModel).find((candidate) => candidate.key === key);
  return model?.numCtx ?? 4096;
}

function promptTokens(body: RequestBody, endpoint: Endpoint): number {
  if (endpoint === 'generate') return 1 + wordCount(pick(body, 'system')) + wordCount(pick(body, 'prompt'));
  return messagesOf(body).reduce((n, m) => n + 4 + wordCount(pick(m, 'content')), 1);
}

// Stand-in token ids, stable for a given text.
function tokenId(text: string): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return (hash >>> 0) % 128_000;
}

function toolCallsFor(options: FakeOllamaOptions, body: RequestBody, endpoint: Endpoint) {
  const offered = pick(body, 'tools');
  if (endpoint !== 'chat' || !Array.isArray(offered) || offered.length === 0) return undefined;
  const calls = typeof options.toolCalls === 'function' ? options.toolCalls(body) : options.toolCalls;
  if (!calls?.length) return undefined;
  return calls.map((call, index) => ({
    id: call.id ?? `call_${tokenId(`${call.function.name}${index}`).toString(36)}`,
    function: { index: call.function.index ?? index, ...call.function },
  }));
}

function terminalOf(scenario: FakeScenario, total: number): Terminal | undefined {
  const clamp = (at: number): number => Math.min(Math.max(0, at), total);
  const found: Terminal[] = [];
  const error = scenario.errorMidStream;
  if (error !== undefined) {
    const { afterChunks, message } = typeof error === 'number' ? { afterChunks: error, message: undefined } : error;
    found.push({ at: clamp(afterChunks), kind: 'error', message: message ?? RUNNER_ERROR_MESSAGE });
  }
  if (scenario.dropAfter !== undefined) found.push({ at: clamp(scenario.dropAfter), kind: 'drop' });
  if (typeof scenario.hang === 'number') found.push({ at: clamp(scenario.hang), kind: 'hang' });
  const truncate = scenario.truncate;
  if (truncate !== undefined && truncate !== false) {
    found.push({ at: clamp(truncate === true ? total : truncate), kind: 'truncate' });
  }
  return found.sort((a, b) => a.at - b.at)[0];
}

function malformedOf(scenario: FakeScenario, total: number, model: string): Plan['malformed'] {
  const m = scenario.malformedAfter;
  if (m === undefined) return undefined;
  const spec = typeof m === 'number' ? { afterChunks: m } : m;
  // Default: a JSON object torn in the middle, as a broken write would leave it.
  const line = spec.line ?? `{"model":${goJson(model)},"created_at":"${createdAt()}","respo`;
  return { at: Math.min(Math.max(0, spec.afterChunks), total), line, then: spec.then ?? 'continue' };
}

function buildPlan(
  options: FakeOllamaOptions, body: RequestBody, endpoint: Endpoint, scenario: FakeScenario, startNs: bigint,
): Plan {
  const requestOptions = (pick(body, 'options') ?? {}) as RequestBody;
  let tokens = cutAtStop(replyTokens(options, body, endpoint), requestOptions.stop);
  const limit = requestOptions.num_predict;
  const cut = typeof limit === 'number' && limit > 0 && tokens.length > limit;
  if (cut) tokens = tokens.slice(0, limit);
  const finalText = options.textInDone && tokens.length > 0 ? (tokens.at(-1) ?? '') : '';
  const chunks: Plan['chunks'] = finalText ? tokens.slice(0, -1) : tokens.slice();
  const calls = toolCallsFor(options, body, endpoint);
  if (calls) chunks.push(calls);
  // A prompt over the window is cut silently: prompt_eval_count is at most the window, the one sign of it.
  const promptEvalCount = Math.min(promptTokens(body, endpoint), windowOf(options, body));
  const withContext = endpoint === 'generate' && pick(body, 'raw') !== true;
  const promptWords = withContext ? (str(pick(body, 'prompt')).match(/\S+/g) ?? []) : [];
  return {
    endpoint,
    model: str(pick(body, 'model')),
    modelJson: goJson(str(pick(body, 'model'))),
    chunks,
    finalText,
    doneReason: cut ? 'length' : 'stop',
    evalCount: tokens.length,
    promptEvalCount,
    context: withContext ? [...promptWords, ...tokens].map(tokenId) : undefined,
    malformed: malformedOf(scenario, chunks.length, str(pick(body, 'model'))),
    terminal: terminalOf(scenario, chunks.length),
    hangBeforeHeaders: scenario.hang === 'beforeHeaders',
    delayMs: scenario.delayMs ?? 0,
    startNs,
    loadedNs: nowNs(),
  };
}

// ---------------------------------------------------------------------------------------------
// Writing the answer

function chunkLine(plan: Plan, chunk: string | FakeToolCall[]): string {
  const head = `{"model":${plan.modelJson},"created_at":"${createdAt()}",`;
  if (typeof chunk !== 'string') {
    const message = { role: 'assistant', content: '', tool_calls: chunk };
    return `${head}"message":${goJson(message)},"done":false}\n`;
  }
  const text = goJson(chunk);
  return plan.endpoint === 'generate'
    ? `${head}"response":${text},"done":false}\n`
    : `${head}"message":{"role":"assistant","content":${text}},"done":false}\n`;
}

// Zero metrics are left out, as Go's omitempty does.
function metrics(plan: Plan): Record<string, number> {
  const now = nowNs();
  const load = Math.max(1, Number(plan.loadedNs - plan.startNs));
  const promptEval = plan.promptEvalCount * PROMPT_NS_PER_TOKEN;
  const evalNs = Math.max(Number(now - plan.loadedNs), plan.evalCount * EVAL_NS_PER_TOKEN, 1);
  const all: Record<string, number> = {
    total_duration: Math.max(Number(now - plan.startNs), load + promptEval + evalNs),
    load_duration: load,
    prompt_eval_count: plan.promptEvalCount,
    prompt_eval_duration: promptEval,
    eval_count: plan.evalCount,
    eval_duration: evalNs,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== 0));
}

function responseObject(plan: Plan, text: string, calls: FakeToolCall[] | undefined, done: boolean) {
  const head = { model: plan.model, created_at: createdAt() };
  const tail = done ? metrics(plan) : {};
  const reason = done ? { done_reason: plan.doneReason } : {};
  if (plan.endpoint === 'generate') {
    const context = done && plan.context ? { context: plan.context } : {};
    return { ...head, response: text, done, ...reason, ...context, ...tail };
  }
  const message = calls ? { role: 'assistant', content: text, tool_calls: calls } : { role: 'assistant', content: text };
  return { ...head, message, ...reason, done, ...tail };
}

// Gin's c.Stream sends the headers with the first line.
function startStream(ctx: Exchange): void {
  if (ctx.res.headersSent) return;
  ctx.record.status = 200;
  ctx.res.writeHead(200, { 'Content-Type': NDJSON_TYPE });
}

async function runTerminal(ctx: Exchange, terminal: Terminal): Promise<void> {
  switch (terminal.kind) {
    case 'error':
      // Before anything was written the real status goes out instead (streamResponse).
      if (!ctx.res.headersSent) { sendError(ctx, 500, terminal.message, 'application/json'); return; }
      await ctx.writeLine(`${goJson({ error: terminal.message })}\n`);
      return void ctx.res.end();
    case 'drop':
      { ctx.drop(); return; }
    case 'hang':
      startStream(ctx);
      ctx.res.flushHeaders();
      return ctx.untilGone();
    case 'truncate':
      startStream(ctx);
      ctx.res.end();
  }
}

async function streamPlan(ctx: Exchange, plan: Plan): Promise<void> {
  if (plan.hangBeforeHeaders) return ctx.untilGone();
  const { chunks, malformed, terminal } = plan;
  for (let i = 0; i <= chunks.length; i++) {
    if (i > 0) await ctx.wait(plan.delayMs);
    if (ctx.gone) return;
    if (malformed?.at === i) {
      startStream(ctx);
      await ctx.writeLine(`${malformed.line}\n`);
      if (malformed.then === 'end') return void ctx.res.end();
    }
    if (terminal?.at === i) return runTerminal(ctx, terminal);
    const chunk = chunks[i];
    startStream(ctx);
    await ctx.writeLine(
      chunk === undefined ? `${goJson(responseObject(plan, plan.finalText, undefined, true))}\n` : chunkLine(plan, chunk),
    );
  }
  if (!ctx.gone) ctx.res.end();
}

// stream:false: the same timeline, answered as one object (or one error) at the end.
async function answerWhole(ctx: Exchange, plan: Plan): Promise<void> {
  if (plan.hangBeforeHeaders) return ctx.untilGone();
  const { chunks, malformed, terminal } = plan;
  let text = '';
  let calls: FakeToolCall[] | undefined;
  for (let i = 0; i <= chunks.length; i++) {
    if (i > 0) await ctx.wait(plan.delayMs);
    if (ctx.gone) return;
    if (malformed?.at === i) { sendBody(ctx, 200, malformed.line, JSON_TYPE); return; }
    if (terminal?.at === i) return finishWholeEarly(ctx, plan, terminal, text, calls);
    const chunk = chunks[i];
    if (typeof chunk === 'string') text += chunk;
    else if (chunk) calls = chunk;
  }
  sendJson(ctx, 200, responseObject(plan, text + plan.finalText, calls, true));
}

async function finishWholeEarly(
  ctx: Exchange, plan: Plan, terminal: Terminal, text: string, calls: FakeToolCall[] | undefined,
): Promise<void> {
  if (terminal.kind === 'error') { sendError(ctx, 500, terminal.message); return; }
  if (terminal.kind === 'drop') { ctx.drop(); return; }
  if (terminal.kind === 'hang') return ctx.untilGone();
  sendJson(ctx, 200, responseObject(plan, text, calls, false)); // the runner stopped without done
}

// ---------------------------------------------------------------------------------------------
// Routing (Gin: 404/405 bodies are plain text)

const ROUTES: Record<string, Record<string, Handler>> = {
  '/': { GET: handleRoot, HEAD: handleRoot },
  '/api/version': { GET: handleVersion, HEAD: handleVersion },
  '/api/tags': { GET: handleTags, HEAD: handleTags },
  '/api/show': { POST: handleShow },
  '/api/ps': { GET: handlePs },
  '/api/generate': { POST: (state, ctx) => handleInference(state, ctx, 'generate') },
  '/api/chat': { POST: (state, ctx) => handleInference(state, ctx, 'chat') },
};

async function route(state: ServerState, ctx: Exchange): Promise<void> {
  const { method = 'GET' } = ctx.req;
  if (state.checkHost && !hostAllowed(ctx.req.headers.host)) { sendBody(ctx, 403, '', undefined); return; }
  if (method === 'OPTIONS') { sendBody(ctx, 204, '', undefined); return; }
  const handlers = ROUTES[ctx.record.path];
  if (!handlers) { sendBody(ctx, 404, '404 page not found', 'text/plain'); return; }
  const handler = handlers[method];
  if (!handler) {
    ctx.res.setHeader('Allow', Object.keys(handlers).join(', '));
    sendBody(ctx, 405, '405 method not allowed', 'text/plain'); return;
  }
  try {
    await handler(state, ctx);
  } catch (error) {
    if (error instanceof HttpError) { sendError(ctx, error.status, error.message); return; }
    // A bug here or in a reply callback: report it like Ollama reports internal errors.
    if (!ctx.res.headersSent) { sendError(ctx, 500, (error as Error).message); return; }
    ctx.drop();
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function tryJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function onRequest(state: ServerState, req: IncomingMessage, res: ServerResponse): void {
  let settle = (): void => {};
  const record: RecordedRequest = {
    method: req.method ?? 'GET',
    path: (req.url ?? '/').split('?')[0] ?? '/',
    headers: req.headers,
    body: '',
    json: undefined,
    status: undefined,
    linesWritten: 0,
    clientAborted: false,
    settled: new Promise<void>((resolve) => (settle = resolve)),
  };
  state.requests.push(record);
  const ctx = new Exchange(req, res, record, state, settle);
  readBody(req)
    .then((body) => {
      record.body = body;
      record.json = tryJson(body);
      return route(state, ctx);
    })
    .catch(() => ctx.drop());
}

// ---------------------------------------------------------------------------------------------
// Server lifecycle

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startFakeOllama(options: FakeOllamaOptions = {}): Promise<FakeOllama> {
  modelsOf(options); // fail fast on a bad model name
  const host = options.host ?? '127.0.0.1';
  const state: ServerState = { options, requests: [], loaded: new Map(), checkHost: false, closing: false };
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => onRequest(state, req, res));
  server.keepAliveTimeout = 0; // Go's server keeps idle connections open indefinitely
  server.on('connection', (socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const address = await listen(server, options.port ?? 0, host);
  state.checkHost = isLoopbackAddress(address.address);
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${address.port}`,
    port: address.port,
    requests: state.requests,
    get connections() {
      return connections;
    },
    get options() {
      return state.options;
    },
    set options(next: FakeOllamaOptions) {
      state.options = next;
    },
    setScenario(scenario) {
      state.options.scenario = scenario;
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        state.closing = true;
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Standalone mode, for benchmarks

function benchmarkTokens(count: number): string[] {
  const words = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit'];
  return Array.from({ length: count }, (_, i) => `${i === 0 ? '' : ' '}${words[i % words.length]}`);
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      tokens: { type: 'string' },
      'delay-ms': { type: 'string' },
      'first-chunk-delay-ms': { type: 'string' },
    },
  });
  const tokenCount = Number(values.tokens ?? 0);
  const fake = await startFakeOllama({
    host: values.host,
    port: Number(values.port ?? 0),
    tokens: tokenCount > 0 ? benchmarkTokens(tokenCount) : undefined,
    scenario: {
      delayMs: Number(values['delay-ms'] ?? 0),
      firstChunkDelayMs: Number(values['first-chunk-delay-ms'] ?? 0),
    },
  });
  console.log(`listening ${fake.url}`);
  const stop = (): void => void fake.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function isMain(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isMain()) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
