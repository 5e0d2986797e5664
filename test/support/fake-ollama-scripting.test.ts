// The stand-in's scripting for agent, chat and server tests: tool calls per round, the context
// window and silent truncation, and streams held open until the test lets them go.
import { Ollama } from 'ollama';
import { describe, expect, it } from 'vitest';
import { at, defined } from './defined.js';
import { DEFAULT_NUM_CTX, NOT_AN_OBJECT, estimatePromptTokens, seededCallId } from './fake-ollama.js';
import { fakeOllamaPerTest } from './fake-ollama-hooks.js';
import type { FakeOllama, FakeToolCall } from './fake-ollama.js';

type Json = Record<string, unknown>;

const TOOL_MODEL = [{ name: 'argo', capabilities: ['completion', 'tools'] }];
const TOOLS = [
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object', required: ['path'] } } },
  { type: 'function', function: { name: 'list_dir', parameters: { type: 'object' } } },
];

const start = fakeOllamaPerTest();

const chat = (messages: Json[], extra: Json = {}): Json => ({ model: 'argo', messages, tools: TOOLS, ...extra });

async function post(fake: FakeOllama, path: string, body: Json, init: RequestInit = {}): Promise<Response> {
  return fetch(`${fake.url}${path}`, { method: 'POST', body: JSON.stringify(body), ...init });
}

async function lines(res: Response): Promise<Json[]> {
  const text = await res.text();
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Json);
}

const messageOf = (chunk: Json): Json => defined(chunk.message as Json | undefined, 'message');
const finalOf = (chunks: Json[]): Json => at(chunks, -1);

describe('tool calls scripted per round', () => {
  const roundOne: FakeToolCall[] = [
    { id: 'call_a', function: { name: 'read_file', arguments: { path: 'a.txt' } } },
    { function: { name: 'read_file', arguments: '{"path":"b.txt"}' } }, // a JSON string, no id
    { function: { name: 'delete_everything', arguments: {} } }, // not offered
    { function: { name: 'read_file', arguments: '{"path": "c.txt"' } }, // bad JSON
    { function: { name: 'read_file', arguments: {} } }, // required `path` missing
  ];

  it('sends round 1 calls as scripted (an id made for each call without one), then round 2 text, and records what was fed back', async () => {
    const fake = await start({ models: TOOL_MODEL, callIds: 'seeded', rounds: [{ toolCalls: roundOne }, { reply: 'All done.' }] });
    const user = { role: 'user', content: 'read them' };
    const first = await lines(await post(fake, '/api/chat', chat([user])));
    expect(first).toHaveLength(2);
    expect(messageOf(at(first, 0))).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'call_a', function: { index: 0, name: 'read_file', arguments: { path: 'a.txt' } } },
        { id: seededCallId(0), function: { index: 1, name: 'read_file', arguments: '{"path":"b.txt"}' } },
        { id: seededCallId(1), function: { index: 2, name: 'delete_everything', arguments: {} } },
        { id: seededCallId(2), function: { index: 3, name: 'read_file', arguments: '{"path": "c.txt"' } },
        { id: seededCallId(3), function: { index: 4, name: 'read_file', arguments: {} } },
      ],
    });
    expect(finalOf(first)).toMatchObject({ done: true, done_reason: 'stop' });
    expect(finalOf(first).eval_count).toBeGreaterThan(0); // the calls are generated text too

    // Sent back with arguments as objects, as Ollama reads them (a JSON string there is a 400).
    const sent = messageOf(at(first, 0));
    const assistant = { ...sent, tool_calls: (sent.tool_calls as Json[]).slice(0, 2).map((call, index) => (index === 1 ? { ...call, function: { index: 1, name: 'read_file', arguments: { path: 'b.txt' } } } : call)) };
    const fedBack = [
      user,
      assistant,
      { role: 'tool', tool_name: 'read_file', tool_call_id: 'call_a', content: 'contents of a' },
      { role: 'tool', tool_name: 'read_file', tool_call_id: seededCallId(0), content: 'error: path is required' },
    ];
    const second = await lines(await post(fake, '/api/chat', chat(fedBack)));
    expect(second.map((c) => messageOf(c).content).join('')).toBe('All done.');
    expect(second.some((c) => 'tool_calls' in messageOf(c))).toBe(false);

    expect(fake.rounds).toBe(2);
    const bodies = fake.chatBodies();
    expect(bodies).toHaveLength(2);
    expect(at(bodies, 1).messages).toEqual(fedBack);
  });

  it('falls back to the plain reply once the script runs out', async () => {
    const fake = await start({ models: TOOL_MODEL, rounds: [{ reply: 'one' }] });
    await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: 'a' }])));
    const after = await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: 'b' }])));
    expect(after.map((c) => messageOf(c).content).join('')).toBe('You said: b');
  });

  it('can send each call in a chunk of its own, after the round text', async () => {
    const fake = await start({
      models: TOOL_MODEL,
      callIds: 'scripted',
      rounds: [{ reply: 'Let me look.', toolCalls: roundOne.slice(0, 2), splitToolCalls: true }],
    });
    const chunks = await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: 'x' }])));
    const withCalls = chunks.filter((c) => 'tool_calls' in messageOf(c));
    expect(withCalls.map((c) => messageOf(c).tool_calls)).toEqual([
      [{ id: 'call_a', function: { index: 0, name: 'read_file', arguments: { path: 'a.txt' } } }],
      [{ function: { index: 1, name: 'read_file', arguments: '{"path":"b.txt"}' } }],
    ]);
    expect(chunks.map((c) => messageOf(c).content).join('')).toBe('Let me look.');
  });

  it('answers stream:false with the text and every call in one message', async () => {
    const fake = await start({ models: TOOL_MODEL, rounds: [{ toolCalls: roundOne.slice(0, 2), splitToolCalls: true }] });
    const res = await post(fake, '/api/chat', chat([{ role: 'user', content: 'x' }], { stream: false }));
    const whole = (await res.json()) as Json;
    expect(whole).toMatchObject({ done: true, message: { role: 'assistant', content: '' } });
    expect(messageOf(whole).tool_calls).toHaveLength(2);
  });

  it('sends no tool calls when the request offers no tools, as Ollama parses none then', async () => {
    const fake = await start({ models: TOOL_MODEL, rounds: [{ reply: 'plain', toolCalls: roundOne }] });
    const chunks = await lines(await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }] }));
    expect(chunks.some((c) => 'tool_calls' in messageOf(c))).toBe(false);
    expect(chunks.map((c) => messageOf(c).content).join('')).toBe('plain');
  });

  it('takes a function of the body and the round number', async () => {
    const fake = await start({
      models: TOOL_MODEL,
      rounds: (body, round) => ({ reply: `round ${round} saw ${(body.messages as unknown[]).length} messages` }),
    });
    await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: 'a' }])));
    const second = await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }])));
    expect(second.map((c) => messageOf(c).content).join('')).toBe('round 1 saw 2 messages');
  });

  it('applies a round’s own stream fault to that round only', async () => {
    const fake = await start({
      models: TOOL_MODEL,
      rounds: [{ toolCalls: roundOne.slice(0, 1) }, { reply: 'a b c', scenario: { errorMidStream: 1 } }, { reply: 'ok' }],
    });
    expect(await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: '1' }])))).toHaveLength(2);
    const broken = await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: '2' }])));
    expect(broken.map((c) => c.error ?? messageOf(c).content)).toEqual(['a', 'an error was encountered while running the model']);
    const third = await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: '3' }])));
    expect(finalOf(third).done).toBe(true);
  });

  it('does not spend a round on a busy answer', async () => {
    const fake = await start({ models: TOOL_MODEL, rounds: [{ reply: 'first' }], scenario: { busy: 1 } });
    expect((await post(fake, '/api/chat', chat([{ role: 'user', content: 'x' }]))).status).toBe(503);
    const retried = await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: 'x' }])));
    expect(retried.map((c) => messageOf(c).content).join('')).toBe('first');
  });

  it('is read by the ollama npm client, string arguments and all', async () => {
    const fake = await start({ models: TOOL_MODEL, callIds: 'seeded', rounds: [{ toolCalls: roundOne.slice(0, 2) }] });
    const client = new Ollama({ host: fake.url });
    const stream = await client.chat({ model: 'argo', messages: [{ role: 'user', content: 'x' }], tools: TOOLS, stream: true });
    const calls: unknown[] = [];
    for await (const part of stream) calls.push(...(part.message.tool_calls ?? []));
    expect(calls).toEqual([
      { id: 'call_a', function: { index: 0, name: 'read_file', arguments: { path: 'a.txt' } } },
      { id: seededCallId(0), function: { index: 1, name: 'read_file', arguments: '{"path":"b.txt"}' } },
    ]);
  });

  it.each<[string, 'random' | 'seeded' | 'scripted' | undefined, RegExp | null]>([
    ['random (the default), as Ollama 0.12.10+ makes them', undefined, /^call_[a-z0-9]{8}$/],
    ['seeded: the same shape, the same in every run', 'seeded', /^call_[a-z0-9]{8}$/],
    ['scripted: none but the script\'s', 'scripted', null],
  ])('ids for calls the script gives none: %s', async (_name, callIds, shape) => {
    const fake = await start({ models: TOOL_MODEL, ...(callIds !== undefined ? { callIds } : {}), toolCalls: roundOne.slice(1, 3) });
    const ids = async (): Promise<unknown[]> => {
      const chunks = await lines(await post(fake, '/api/chat', chat([{ role: 'user', content: 'x' }])));
      return chunks.flatMap((c) => (messageOf(c).tool_calls as { id?: unknown }[] | undefined) ?? []).map((call) => call.id);
    };
    const [first, second] = [await ids(), await ids()];
    if (shape === null) {
      expect([...first, ...second]).toEqual([undefined, undefined, undefined, undefined]);
      return;
    }
    expect([...first, ...second]).toEqual(Array.from({ length: 4 }, (): unknown => expect.stringMatching(shape)));
    expect(new Set([...first, ...second]).size).toBe(4);
    if (callIds === 'seeded') expect([...first, ...second]).toEqual([0, 1, 2, 3].map(seededCallId));
  });
});

describe("tools and tool calls bind as Ollama's Go types do (api/types.go)", () => {
  const tool = (parameters: unknown): Json => ({ type: 'function', function: { name: 'f', parameters } });
  const withProperty = (property: unknown): Json => tool({ type: 'object', properties: { limit: property } });
  const cannot = (kind: string, field: string, goType: string): string => `json: cannot unmarshal ${kind} into Go struct field ToolFunctionParameters.tools.function.parameters.${field} of type ${goType}`;
  const readable = tool({
    type: 'object',
    $defs: 5,
    additionalProperties: false,
    properties: {
      a: { type: ['string', 'null'], enum: [1, 'a', null], description: 'A', anyOf: [{ type: 'string' }, null], properties: { b: { type: 'number', minimum: 'x' } }, required: ['b', null], items: true },
      n: null,
    },
    required: ['a'],
  });

  it.each<[string, Json, string | null]>([
    ['a schema Go reads whole (unknown keywords ignored, null anywhere)', readable, null],
    ['a boolean subschema', withProperty(true), cannot('bool', 'properties', 'api.ToolProperty')],
    ['a list as a property', withProperty([]), cannot('array', 'properties', 'api.ToolProperty')],
    ['properties a list', tool({ type: 'object', properties: [] }), NOT_AN_OBJECT],
    ['required a string', tool({ type: 'object', required: 'a' }), cannot('string', 'required', '[]string')],
    ['required holding a number', tool({ type: 'object', required: ['a', 1] }), cannot('number', 'required', 'string')],
    ['Required: keys match case-insensitively', tool({ type: 'object', Required: 'a' }), cannot('string', 'required', '[]string')],
    ["a property's required a string (the property's name is not in Go's path)", withProperty({ required: 'x' }), cannot('string', 'properties.required', '[]string')],
    ["a property's type a number", withProperty({ type: 5 }), cannot('number', 'properties.type', '[]string')],
    ["a property's type a list holding a number", withProperty({ type: ['string', 5] }), cannot('number', 'properties.type', 'string')],
    ["a property's description a number", withProperty({ description: 5 }), cannot('number', 'properties.description', 'string')],
    ["a property's enum a string", withProperty({ enum: 'a' }), cannot('string', 'properties.enum', '[]interface {}')],
    ["a property's anyOf an object", withProperty({ anyOf: {} }), cannot('object', 'properties.anyOf', '[]api.ToolProperty')],
    ["a boolean in a property's anyOf", withProperty({ anyOf: [true] }), cannot('bool', 'properties.anyOf', 'api.ToolProperty')],
    ["a boolean subschema in a property's properties", withProperty({ properties: { y: false } }), cannot('bool', 'properties.properties', 'api.ToolProperty')],
    ["a property's properties a string", withProperty({ properties: 'y' }), NOT_AN_OBJECT],
    ['the parameters a string', tool('x'), 'json: cannot unmarshal string into Go struct field ToolFunction.tools.function.parameters of type api.ToolFunctionParameters'],
    ["the function's name a number", { type: 'function', function: { name: 5 } }, 'json: cannot unmarshal number into Go struct field ToolFunction.tools.function.name of type string'],
  ])('tools: %s', async (_name, offered, error) => {
    const fake = await start({ models: TOOL_MODEL, reply: 'ok' });
    const res = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }], tools: [offered] });
    expect(res.status).toBe(error === null ? 200 : 400);
    if (error !== null) expect(await res.json()).toEqual({ error });
    else expect((await lines(res)).map((c) => messageOf(c).content).join('')).toBe('ok');
    // Whatever the verdict, the request is recorded as sent.
    expect(fake.chatBodies()).toHaveLength(1);
  });

  const callWith = (args: unknown): Json => ({ role: 'assistant', content: '', tool_calls: [{ id: 'call_1', function: { index: 0, name: 'f', arguments: args } }] });
  it.each<[string, string, unknown, string | null]>([
    ['an object', '0.14.0', { path: 'a.txt' }, null],
    ['null', '0.14.0', null, null],
    ['a JSON string, as OpenAI sends it', '0.14.0', '{"path":"a.txt"}', NOT_AN_OBJECT],
    ['a list', '0.14.0', [], NOT_AN_OBJECT],
    ['a JSON string, to a release with Go maps', '0.13.5', '{"path":"a.txt"}', 'json: cannot unmarshal string into Go struct field ToolCallFunction.messages.tool_calls.function.arguments of type api.ToolCallFunctionArguments'],
    ['a string, to a release without tools (an unknown field)', '0.2.5', 'x', null],
  ])("a call's arguments sent back as %s (Ollama %s)", async (_name, version, args, error) => {
    const fake = await start({ version, models: TOOL_MODEL, reply: 'ok' });
    const res = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }, callWith(args)] });
    expect(res.status).toBe(error === null ? 200 : 400);
    if (error !== null) expect(await res.json()).toEqual({ error });
  });

  it('before 0.14.0 a tool\'s properties were a Go map: one that is no object is told as its type', async () => {
    const fake = await start({ version: '0.13.5', models: TOOL_MODEL });
    const res = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }], tools: [tool({ type: 'object', properties: [] })] });
    expect(await res.json()).toEqual({ error: cannot('array', 'properties', 'map[string]api.ToolProperty') });
  });
});

describe('context window and silent truncation', () => {
  const words = (n: number): string => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
  // 1 + 4 per message + 1 per word: a single user message of n words estimates to n + 5.
  const userOf = (n: number): Json => ({ model: 'argo', messages: [{ role: 'user', content: words(n) }] });

  it('estimates the prompt as documented', () => {
    expect(estimatePromptTokens(userOf(10), 'chat')).toBe(15);
    expect(estimatePromptTokens({ model: 'argo', system: 'be brief', prompt: 'a b c' }, 'generate')).toBe(6);
  });

  it('reports num_ctx in /api/show parameters and the trained length in model_info', async () => {
    const fake = await start({ models: [{ name: 'argo', family: 'qwen2', numCtx: 8192, contextLength: 32768 }] });
    const shown = (await (await post(fake, '/api/show', { model: 'argo' })).json()) as Json;
    expect(shown.parameters).toBe(`${'num_ctx'.padEnd(30)} 8192\n${'stop'.padEnd(30)} "<|eot_id|>"`);
    expect(shown.model_info).toMatchObject({ 'qwen2.context_length': 32768 });
  });

  it('lists every value of a repeated parameter on a line of its own', async () => {
    const fake = await start({ models: [{ name: 'argo', parameters: { stop: ['<a>', '<b>'], temperature: 0.2 } }] });
    const shown = (await (await post(fake, '/api/show', { model: 'argo' })).json()) as Json;
    expect(shown.parameters).toBe(
      [`${'stop'.padEnd(30)} "<a>"`, `${'stop'.padEnd(30)} "<b>"`, `${'temperature'.padEnd(30)} 0.2`].join('\n'),
    );
  });

  // [case, model settings, server default, request num_ctx, prompt words, window, prompt_eval_count]
  const cases: [string, Json, number | undefined, number | undefined, number, number, number][] = [
    ['fits the server default', {}, undefined, undefined, 100, DEFAULT_NUM_CTX, 105],
    ['cut at the server default (4096)', {}, undefined, undefined, 5000, 4096, 4096],
    ['cut at a configured server default', {}, 2048, undefined, 3000, 2048, 2048],
    ['cut at the model num_ctx', { numCtx: 1024 }, undefined, undefined, 3000, 1024, 1024],
    ['request num_ctx beats the model', { numCtx: 1024 }, undefined, 8192, 3000, 8192, 3005],
    ['request num_ctx cut', { numCtx: 8192 }, undefined, 512, 3000, 512, 512],
    ['capped at the trained length', { contextLength: 2048 }, undefined, 100_000, 3000, 2048, 2048],
  ];

  it.each(cases)('%s', async (_name, model, defaultNumCtx, numCtx, promptWords, window, count) => {
    const fake = await start({
      models: [{ name: 'argo', ...model }],
      reply: 'ok',
      ...(defaultNumCtx === undefined ? {} : { defaultNumCtx }),
    });
    const body = { ...userOf(promptWords), ...(numCtx === undefined ? {} : { options: { num_ctx: numCtx } }) };
    const chunks = await lines(await post(fake, '/api/chat', body));
    expect(finalOf(chunks)).toMatchObject({ done: true, done_reason: 'stop', prompt_eval_count: count });
    expect(at(fake.requests, 0).prompt).toEqual({ tokens: promptWords + 5, numCtx: window, truncated: promptWords + 5 > window });
    const ps = (await (await fetch(`${fake.url}/api/ps`)).json()) as { models: Json[] };
    expect(at(ps.models, 0).context_length).toBe(window);
  });

  it('caps generate the same way', async () => {
    const fake = await start({ models: [{ name: 'argo', numCtx: 100 }] });
    const res = await post(fake, '/api/generate', { model: 'argo', prompt: words(500), stream: false });
    expect(await res.json()).toMatchObject({ done: true, prompt_eval_count: 100 });
  });
});

describe('holding a stream open', () => {
  it('pauses after K chunks until released, then finishes normally', async () => {
    const fake = await start({ reply: 'a b c', scenario: { holdAfter: 1 } });
    const res = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }] });
    const held = await fake.waitForHold();
    expect(held).toMatchObject({ held: true, linesWritten: 1, status: 200 });
    expect(res.status).toBe(200);
    fake.release();
    const chunks = await lines(res);
    expect(chunks.map((c) => messageOf(c).content).join('')).toBe('a b c');
    expect(finalOf(chunks).done).toBe(true);
    expect(held.held).toBe(false);
  });

  it('holds before the headers with holdAfter 0: Ollama sends them with the first line', async () => {
    const fake = await start({ reply: 'a', scenario: { holdAfter: 0 } });
    const pending = post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }] });
    const held = await fake.waitForHold();
    expect(held).toMatchObject({ linesWritten: 0 });
    expect(held.status).toBeUndefined();
    fake.release();
    const res = await pending;
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(finalOf(await lines(res)).done).toBe(true);
  });

  it('records a client that gives up while held as an abort', async () => {
    const fake = await start({ reply: 'a b c', scenario: { holdAfter: 2 } });
    const controller = new AbortController();
    const res = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }] }, { signal: controller.signal });
    const held = await fake.waitForHold();
    controller.abort();
    await expect(res.text()).rejects.toThrow();
    await held.settled;
    expect(held).toMatchObject({ clientAborted: true, held: false, linesWritten: 2 });
  });

  it('holds a stream:false answer too', async () => {
    const fake = await start({ reply: 'whole', scenario: { holdAfter: 0 } });
    const pending = post(fake, '/api/generate', { model: 'argo', prompt: 'x', stream: false });
    const held = await fake.waitForHold();
    expect(held.status).toBeUndefined();
    fake.release();
    expect(await (await pending).json()).toMatchObject({ response: 'whole', done: true });
  });
});

describe('waiting for requests', () => {
  it('resolves for a request already recorded and for one still to come', async () => {
    const fake = await start();
    await (await fetch(`${fake.url}/api/version`)).text();
    expect((await fake.waitForRequest()).path).toBe('/api/version');
    const coming = fake.waitForRequest((r) => r.path === '/api/tags');
    await (await fetch(`${fake.url}/api/tags`)).text();
    expect((await coming).method).toBe('GET');
  });

  it('can wait for the body to be read', async () => {
    const fake = await start();
    const coming = fake.waitForRequest((r) => (r.json as Json | undefined)?.model === 'argo');
    await (await post(fake, '/api/show', { model: 'argo' })).text();
    expect((await coming).path).toBe('/api/show');
  });
});
