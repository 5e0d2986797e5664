// The fast check (isLogEntry) must give zod's verdict on every line: each field of a turn with every
// optional field present is replaced, one at a time, by each probe value (or removed), and both are asked.
import { describe, expect, it } from 'vitest';
import { LogEntrySchema } from '../../src/log/entry-schema.js';
import { isLogEntry, parseEntry } from '../../src/log/entry.js';
import type { LogEntry } from '../../src/log/entry.js';
import { makeEntry, policy } from '../query/helpers.js';

const full: LogEntry = makeEntry({
  replay: { enabled: true, count: 3, session: false },
  replay_policy: policy({
    filtered_types: ['meta'],
    decisions: [{ id: 'a', entry_type: 'question', outcome: 'used', protected: false, chars: 10 }],
  }),
  replayed_ids: ['a'],
  thinking: 'First, the file.',
  typed_chars: 5,
  tools: ['read_file'],
  round_messages: [
    { round: 1, content: 'Let me look.', thinking: 'I need the file.' },
    { round: 2, content: '' },
  ],
  tool_calls: [
    { id: 'c1', name: 'read_file', arguments: { path: 'x' }, outcome: 'success', round: 0, ms: 1.5, result_chars: 3, result: 'abc', saved_as: 'f', error: 'e', error_detail: 'd' },
    { id: 'c2', name: 'shell', arguments: 'raw text', outcome: 'invalid', round: 1, attempt: 2, ms: 0, result_chars: 0 },
    { id: 'c2', name: 'shell', arguments: {}, outcome: 'not_run', round: 1, attempt: 2, ms: 0, result_chars: 0, error: 'not run: an earlier call of the response has the same id' },
  ],
  iterations: 2,
  all_failure_rounds: 0,
  stop_reason: null,
  tools_unavailable: [{ name: 'web', reason: 'offline' }],
  compacted: [
    { id: 'c1', round: 1, kind: 'saved', chars_before: 10, chars_after: 5, saved_as: 'f' },
    { id: 'c2', kind: 'truncated', chars_before: 10, chars_after: 5 },
  ],
  tool_definitions_sha256: 'b'.repeat(64),
  ephemeral_system: 'note',
  request_sha256: 'a'.repeat(64),
  options: { temperature: 0.2, stop: ['x'], raw: true },
  system: 'be brief',
  keep_alive: '5m',
  ollama_stream: true,
  num_ctx: 4096,
  prompt_tokens_estimate: 12,
  truncation_suspected: false,
  rerun_of: 'b',
  client_messages: 3,
  client_fields: ['format', 'logprobs'],
  client_tool_calls: [
    { id: 'call_1_0', name: 'get_time', arguments: { tz: 'UTC' } },
    { id: 'x', name: 'f', arguments: {} },
  ],
});

const REMOVE = Symbol('remove');
const PROBES: unknown[] = [
  REMOVE,
  null,
  true,
  false,
  0,
  -0,
  -1,
  1,
  1.5,
  2 ** 53,
  -(2 ** 53),
  Infinity,
  Number.NaN,
  '',
  'x',
  'ok',
  'chat',
  'generate',
  'short',
  'strong',
  'continuation',
  'question',
  'used',
  'success',
  'not_run',
  'saved',
  'a'.repeat(64),
  'A'.repeat(64),
  [],
  ['x'],
  [1],
  ['question'],
  [null],
  {},
  { a: 1 },
  { a: 'x' },
  { a: ['x'] },
  { a: [1] },
  { a: null },
];

/** Every path into the value: object keys and array indexes, down to the leaves. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  const found: (string | number)[][] = [];
  if (Array.isArray(value)) value.forEach((item, index) => found.push([...prefix, index], ...paths(item, [...prefix, index])));
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) found.push([...prefix, key], ...paths(item, [...prefix, key]));
  }
  return found;
}

function withValue(base: unknown, path: (string | number)[], value: unknown): unknown {
  const copy = structuredClone(base) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] ?? '';
  if (value === REMOVE) {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else Reflect.deleteProperty(parent, last);
  } else parent[last] = value;
  return copy;
}

const zodSays = (value: unknown): boolean => LogEntrySchema.safeParse(value).success;

describe('the fast check agrees with the schema', () => {
  it('accepts the turns the schema accepts', () => {
    for (const value of [full, makeEntry(), makeEntry({ replay_policy: policy() }), { ...makeEntry(), unknown_field: { any: 'thing' } }]) {
      expect(zodSays(value)).toBe(true);
      expect(isLogEntry(value)).toBe(true);
    }
  });

  const cases = paths(full).flatMap((path) => PROBES.map((probe) => [path.join('.'), path, probe] as const));

  it(`gives zod's verdict for each of ${cases.length} single-field changes`, () => {
    const disagreements: string[] = [];
    let rejected = 0;
    for (const [name, path, probe] of cases) {
      const value = withValue(full, path, probe);
      const expected = zodSays(value);
      if (!expected) rejected++;
      if (isLogEntry(value) !== expected) disagreements.push(`${name} = ${probe === REMOVE ? '(removed)' : JSON.stringify(probe)}: zod ${expected}`);
    }
    expect(disagreements).toEqual([]);
    // The probes do reach the rules: most of them make a turn invalid.
    expect(rejected).toBeGreaterThan(cases.length / 2);
  });

  it.each([
    ['an array', [full]],
    ['a string', 'turn'],
    ['null', null],
    ['a number', 1],
  ])('rejects %s as a whole line', (_name, value) => {
    expect(zodSays(value)).toBe(false);
    expect(isLogEntry(value)).toBe(false);
  });

  // zod's records pass over a key named __proto__; the schema checks it as the fast check does (found by test/log/entry.property.test.ts).
  it.each([
    ['an option named __proto__ of a wrong type', '"options":{"__proto__":[0]}', false],
    ['an option named __proto__ of a right type', '"options":{"__proto__":1}', true],
    ['tool arguments with a key named __proto__', '"tool_calls":[{"id":"c","name":"f","arguments":{"__proto__":[0]},"outcome":"success","round":0,"ms":1,"result_chars":0}]', true],
    ["a client's tool arguments with a key named __proto__", '"client_tool_calls":[{"id":"c","name":"f","arguments":{"__proto__":[0]}}]', true],
  ])('checks a key named __proto__ like any other: %s', (_name, field, ok) => {
    const line = JSON.stringify(makeEntry()).replace(/}$/, `,${field}}`);
    expect(zodSays(JSON.parse(line))).toBe(ok);
    expect(parseEntry(line) !== null).toBe(ok);
  });

  it.each([
    ['a number too big for a double', '1e999', false],
    ['an integer count written with a fraction', '3.0', true],
  ])('reads JSON numbers as zod sees them: %s', (_name, written, ok) => {
    const line = JSON.stringify(full).replace('"iterations":2', `"iterations":${written}`);
    expect(zodSays(JSON.parse(line))).toBe(ok);
    expect(parseEntry(line) !== null).toBe(ok);
  });
});

describe('a newer Argo sharing the data home', () => {
  it("a tool call's outcome this version does not know keeps its line readable, as an unknown status does", () => {
    const newer = { ...full, status: 'some_new_status', tool_calls: [{ ...full.tool_calls?.[0], outcome: 'some_new_outcome' }] };
    expect(isLogEntry(newer)).toBe(true);
    expect(LogEntrySchema.safeParse(newer).success).toBe(true);
  });
});
