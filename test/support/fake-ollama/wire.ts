// The wire as Go writes and reads it: created_at timestamps, encoding/json output and errors,
// Gin's request binding, and keep_alive durations.
import type { RequestBody } from './types.js';
import type { VersionProfile } from './versions.js';

// Time: created_at is RFC3339Nano UTC; Go trims trailing zeros of the fraction.

const originNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();
export const nowNs = (): bigint => originNs + process.hrtime.bigint();
let cachedSecond = -1n;
let cachedPrefix = '';

export function createdAt(): string {
  const ns = nowNs();
  const second = ns / 1_000_000_000n;
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(Number(second) * 1000).toISOString().slice(0, 19);
  }
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return fraction ? `${cachedPrefix}.${fraction}Z` : `${cachedPrefix}Z`;
}

export const rfc3339 = (ms: number): string => new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');

// ---------------------------------------------------------------------------------------------
// JSON the way Go writes and reads it

const GO_HTML_ESCAPES: Record<string, string> = {
  '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029',
};
const GO_HTML_RE = /[<>&\u2028\u2029]/g;

// encoding/json escapes HTML characters by default.
export const JSON_TYPE = 'application/json; charset=utf-8';

export function goJson(value: unknown): string {
  const text = JSON.stringify(value);
  return GO_HTML_RE.test(text) ? text.replace(GO_HTML_RE, (c) => GO_HTML_ESCAPES[c] ?? c) : text;
}

// Thrown by handlers; answered as {"error": message} with this status.
export class HttpError extends Error {
  // `extra`: fields sent beside `error` (a 401's signin_url).
  constructor(readonly status: number, message: string, readonly extra: Record<string, unknown> = {}) {
    super(message);
  }
}

export class BadRequest extends HttpError {
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
export function pick(body: RequestBody, field: string): unknown {
  if (field in body) return body[field];
  const key = Object.keys(body).find((k) => k.toLowerCase() === field);
  return key === undefined ? undefined : body[key];
}

export const str = (value: unknown): string => (typeof value === 'string' ? value : '');

export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value; // string, number, object
}

type FieldSpec = [jsonKind: string, goType: string];
const STRING: FieldSpec = ['string', 'string'];
const BOOL: FieldSpec = ['bool', 'bool'];
const INT: FieldSpec = ['number', 'int'];
const OPTIONS: FieldSpec = ['object', 'map[string]interface {}'];
const FIELDS: Record<string, Record<string, FieldSpec>> = {
  GenerateRequest: {
    model: STRING, prompt: STRING, suffix: STRING, system: STRING, template: STRING,
    stream: BOOL, raw: BOOL, options: OPTIONS, context: ['array', '[]int'],
    logprobs: BOOL, top_logprobs: INT,
  },
  ChatRequest: {
    model: STRING, messages: ['array', '[]api.Message'], tools: ['array', 'api.Tools'],
    stream: BOOL, options: OPTIONS, logprobs: BOOL, top_logprobs: INT,
  },
  ShowRequest: { model: STRING, name: STRING, system: STRING, verbose: BOOL, options: OPTIONS },
};

export const typeError = (kind: string, where: string, goType: string): BadRequest =>
  new BadRequest(`json: cannot unmarshal ${kind} into Go ${where} of type ${goType}`);

// Fields a release before 0.12.11 did not have: unknown there, so any value binds.
const LOGPROB_FIELDS = new Set(['logprobs', 'top_logprobs']);

function checkFields(body: RequestBody, struct: string, profile: VersionProfile | undefined): void {
  for (const [field, [kind, goType]] of Object.entries(FIELDS[struct] ?? {})) {
    if (profile?.logprobs === false && LOGPROB_FIELDS.has(field)) continue;
    const value = pick(body, field);
    if (value === undefined || value === null) continue;
    // A Go int takes whole numbers only: 2.5 fails as "number 2.5".
    if (jsonKind(value) === kind && (goType !== 'int' || Number.isSafeInteger(value))) continue;
    const what = goType === 'int' && typeof value === 'number' ? `number ${String(value)}` : jsonKind(value);
    throw typeError(what, `struct field ${struct}.${field}`, goType);
  }
}

// api.Message's string fields, each from the release that brought it (before, an unknown field binds whatever it holds).
function messageStrings(profile: VersionProfile | undefined): string[] {
  return [
    'role', 'content',
    ...(profile?.think !== false ? ['thinking'] : []),
    ...(profile?.toolName !== false ? ['tool_name'] : []),
    ...(profile?.callIds !== false ? ['tool_call_id'] : []),
  ];
}

function checkMessages(body: RequestBody, profile: VersionProfile | undefined): void {
  const messages = pick(body, 'messages');
  if (!Array.isArray(messages)) return;
  for (const message of messages) {
    if (message === null) continue;
    if (jsonKind(message) !== 'object') {
      throw typeError(jsonKind(message), 'struct field ChatRequest.messages', 'api.Message');
    }
    for (const field of messageStrings(profile)) {
      const value = pick(message as RequestBody, field);
      if (value === undefined || value === null || typeof value === 'string') continue;
      throw typeError(jsonKind(value), `struct field Message.messages.${field}`, 'string');
    }
    // api.ToolCall's ID (0.12.10+) is a Go string too.
    const calls = pick(message as RequestBody, 'tool_calls');
    for (const call of Array.isArray(calls) && profile?.callIds !== false ? (calls as unknown[]) : []) {
      const id = call !== null && typeof call === 'object' ? pick(call as RequestBody, 'id') : undefined;
      if (id === undefined || id === null || typeof id === 'string') continue;
      throw typeError(jsonKind(id), 'struct field ToolCall.messages.tool_calls.id', 'string');
    }
  }
}

const THINK_LEVELS = ['high', 'medium', 'low'];

// api.ThinkValue (0.11.0+) or a *bool (0.9.0–0.10.x); before 0.9.0 `think` was no field at all.
function checkThink(body: RequestBody, struct: string, profile: VersionProfile): void {
  const think = pick(body, 'think');
  if (!profile.think || think === undefined || think === null || typeof think === 'boolean') return;
  if (profile.thinkLevels === 'none') throw typeError(jsonKind(think), `struct field ${struct}.think`, 'bool');
  const levels = profile.thinkMax ? [...THINK_LEVELS, 'max'] : THINK_LEVELS;
  const listed = `${levels.map((level) => JSON.stringify(level)).join(', ')}, true, or false`;
  if (typeof think !== 'string') throw new BadRequest(`think must be a boolean or string (${listed})`);
  if (!levels.includes(think)) throw new BadRequest(`invalid think value: ${goJson(think)} (must be ${listed})`);
}

// Parses a request body like Gin's ShouldBindJSON into api.<struct>, as the release `profile` describes it.
export function bindBody(raw: string, struct: string, profile?: VersionProfile): RequestBody {
  const value = decodeGoJson(raw);
  if (value === null) return {};
  if (jsonKind(value) !== 'object') throw typeError(jsonKind(value), `value`, `api.${struct}`);
  const body = value as RequestBody;
  checkFields(body, struct, profile);
  if (profile !== undefined) {
    // Before 0.5.0 `format` was a Go string: a JSON schema does not bind.
    const format = pick(body, 'format');
    if (!profile.schemaFormat && format !== undefined && format !== null && typeof format !== 'string') {
      throw typeError(jsonKind(format), `struct field ${struct}.format`, 'string');
    }
    checkThink(body, struct, profile);
  }
  if (struct === 'ChatRequest') checkMessages(body, profile);
  if (struct !== 'ShowRequest' && profile?.keepAlive !== false) keepAliveMs(body); // api.Duration fails while binding
  return body;
}

// ---------------------------------------------------------------------------------------------
// keep_alive: seconds as a number, or a Go duration string; negative = forever.

const DEFAULT_KEEP_ALIVE_MS = 5 * 60_000;
const FOREVER_MS = 292 * 365 * 24 * 3600_000; // Go's MaxInt64 duration, roughly

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

export function keepAliveMs(body: RequestBody): number {
  const value = pick(body, 'keep_alive');
  if (value === undefined || value === null) return DEFAULT_KEEP_ALIVE_MS;
  let ms: number;
  if (typeof value === 'number') ms = value * 1000;
  else if (typeof value === 'string') ms = parseGoDurationMs(value);
  else throw new BadRequest('invalid duration');
  return ms < 0 ? FOREVER_MS : ms;
}

