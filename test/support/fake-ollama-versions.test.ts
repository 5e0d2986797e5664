// The stand-in's release profiles: `{ version }` turns off what that release lacked and answers as
// it did (fake-ollama/versions.ts names the release of each feature).
import { describe, expect, it } from 'vitest';
import { CURRENT_VERSION, profileOf } from './fake-ollama.js';
import type { FakeOllama, FakeOllamaOptions } from './fake-ollama.js';
import { fakeOllamaPerTest } from './fake-ollama-hooks.js';

type Json = Record<string, unknown>;

const start = fakeOllamaPerTest();
const TOOLS = [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } } }];
const CALLS = [
  { function: { name: 'read_file', arguments: { path: 'a.txt' } } },
  { function: { name: 'read_file', arguments: { path: 'b.txt' } } },
];

function startAt(version: string, options: FakeOllamaOptions = {}): Promise<FakeOllama> {
  return start({
    version,
    models: [{ name: 'argo', capabilities: ['completion', 'tools'] }, { name: 'qwen3', capabilities: ['completion', 'tools', 'thinking'] }],
    reply: 'Hi there',
    thinking: 'Let me see.',
    ...options,
  });
}

async function post(fake: FakeOllama, path: string, body: Json): Promise<{ status: number; lines: Json[] }> {
  const res = await fetch(`${fake.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, lines: text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Json) };
}

const chat = (fake: FakeOllama, extra: Json = {}, model = 'argo') => post(fake, '/api/chat', { model, messages: [{ role: 'user', content: 'hi' }], ...extra });
const messages = (lines: Json[]): Json[] => lines.map((line) => line.message as Json);
const textOf = (lines: Json[]): string => messages(lines).map((message) => message.content as string).join('');
const callsOf = (lines: Json[]): unknown[] => messages(lines).flatMap((message) => (message.tool_calls as unknown[] | undefined) ?? []);

describe('fake Ollama: release profiles', () => {
  it('answers as the newest release by default, and reports the version it plays', async () => {
    const fake = await start();
    expect(await (await fetch(`${fake.url}/api/version`)).json()).toEqual({ version: CURRENT_VERSION });
    expect(profileOf(CURRENT_VERSION)).toEqual(profileOf('1.0.0'));
    const old = await startAt('0.3.0');
    expect(await (await fetch(`${old.url}/api/version`)).json()).toEqual({ version: '0.3.0' });
  });

  it.each<[string, string, unknown[]]>([
    // Before 0.2.6 `tools` is an unknown field: no calls, the model answers in words.
    ['0.2.5', 'Hi there', []],
    // 0.2.6–0.4.5 parse calls only from a whole answer: streamed, the call is the model's text.
    ['0.3.0', 'Hi there{"name":"read_file","arguments":{"path":"a.txt"}}\n{"name":"read_file","arguments":{"path":"b.txt"}}', []],
    // 0.4.6: streamed calls, without index; 0.4.7 adds it, left out when 0 until 0.12.6.
    ['0.4.6', 'Hi there', [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }, { function: { name: 'read_file', arguments: { path: 'b.txt' } } }]],
    ['0.4.7', 'Hi there', [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }, { function: { index: 1, name: 'read_file', arguments: { path: 'b.txt' } } }]],
    ['0.12.6', 'Hi there', [{ function: { index: 0, name: 'read_file', arguments: { path: 'a.txt' } } }, { function: { index: 1, name: 'read_file', arguments: { path: 'b.txt' } } }]],
  ])('Ollama %s, streamed chat with tools: text %j, calls %j', async (version, text, calls) => {
    const fake = await startAt(version, { toolCalls: CALLS });
    const { status, lines } = await chat(fake, { tools: TOOLS });
    expect(status).toBe(200);
    expect(textOf(lines)).toBe(text);
    expect(callsOf(lines)).toEqual(calls);
  });

  it('0.2.6–0.4.5 send parsed calls in a whole answer (stream: false)', async () => {
    const fake = await startAt('0.3.0', { toolCalls: CALLS });
    const { lines } = await chat(fake, { tools: TOOLS, stream: false });
    expect(callsOf(lines)).toEqual(CALLS);
  });

  it.each<[string, boolean]>([
    ['0.12.9', false],
    ['0.12.10', true],
  ])('Ollama %s gives calls ids: %s', async (version, ids) => {
    const fake = await startAt(version, { toolCalls: [{ id: 'mine', function: { name: 'read_file', arguments: {} } }, { function: { name: 'read_file', arguments: {} } }] });
    const calls = callsOf((await chat(fake, { tools: TOOLS })).lines) as { id?: string }[];
    expect(calls.map((call) => call.id !== undefined)).toEqual([ids, ids]);
    if (ids) expect(calls[0]?.id).toBe('mine');
  });

  it.each<[string, string | undefined, boolean]>([
    ['0.1.44', undefined, false],
    ['0.6.3', undefined, true],
    ['0.6.4', 'completion,tools', true],
    ['0.8.0', 'completion,tools', true],
    ['0.9.0', 'completion,tools,thinking', true],
  ])('Ollama %s: /api/show capabilities %s, model_info %s', async (version, capabilities, modelInfo) => {
    const fake = await startAt(version);
    const shown = (await post(fake, '/api/show', { model: 'qwen3' })).lines[0] ?? {};
    expect((shown.capabilities as string[] | undefined)?.join(',')).toBe(capabilities);
    expect('model_info' in shown).toBe(modelInfo);
  });

  it.each<[string, Json, number, string]>([
    // Before 0.9.0 `think` is no field: ignored, and a thinking model reasons in its text.
    ['0.8.0', { think: 'high' }, 200, '<think>Let me see.</think>\n\nHi there'],
    ['0.8.0', { think: false }, 200, '<think>Let me see.</think>\n\nHi there'],
    // 0.9.0–0.10.x: a boolean; reasoning in its own field when asked, in the text when not asked (before 0.12.4).
    ['0.9.0', { think: true }, 200, 'Hi there'],
    ['0.9.0', {}, 200, '<think>Let me see.</think>\n\nHi there'],
    ['0.9.0', { think: false }, 200, 'Hi there'],
    ['0.10.1', { think: 'high' }, 400, 'json: cannot unmarshal string into Go struct field ChatRequest.think of type bool'],
    // 0.11.0–0.17.6: levels from gpt-oss only.
    ['0.12.0', { think: 'high' }, 400, 'think value "high" is not supported for this model'],
    ['0.12.0', { think: 'max' }, 400, 'invalid think value: "max" (must be "high", "medium", "low", true, or false)'],
    ['0.12.4', {}, 200, 'Hi there'],
    ['0.17.7', { think: 'high' }, 200, 'Hi there'],
    ['0.21.0', { think: 'max' }, 400, 'invalid think value: "max" (must be "high", "medium", "low", true, or false)'],
    ['0.22.0', { think: 'max' }, 200, 'Hi there'],
    ['0.22.0', { think: 'extreme' }, 400, 'invalid think value: "extreme" (must be "high", "medium", "low", "max", true, or false)'],
  ])('Ollama %s, a thinking model asked %j: %i %j', async (version, extra, status, said) => {
    const fake = await startAt(version);
    const answer = await chat(fake, extra, 'qwen3');
    expect(answer.status).toBe(status);
    expect(status === 200 ? textOf(answer.lines) : answer.lines[0]?.error).toBe(said);
  });

  it('0.11.0–0.17.6 take a level from a gpt-oss model', async () => {
    const fake = await startAt('0.12.0', { models: [{ name: 'gpt-oss:20b', family: 'gptoss', capabilities: ['completion', 'tools', 'thinking'] }] });
    const answer = await chat(fake, { think: 'low' }, 'gpt-oss:20b');
    expect(answer.status).toBe(200);
    expect(messages(answer.lines).map((message) => (typeof message.thinking === 'string' ? message.thinking : '')).join('')).toBe('Let me see.');
  });

  it.each<[string, boolean]>([
    ['0.10.1', false],
    ['0.12.10', true],
  ])('Ollama %s, a gpt-oss model: its call in the done:true line (harmony), its reasoning though think is false: %s', async (version, harmony) => {
    const fake = await startAt(version, { models: [{ name: 'gpt-oss:20b', family: 'gptoss', capabilities: ['completion', 'tools', 'thinking'] }], textInDone: true, reply: 'Checking the file.', toolCalls: CALLS.slice(0, 1) });
    const { lines } = await chat(fake, { tools: TOOLS, think: false }, 'gpt-oss:20b');
    const withCalls = lines.filter((line) => 'tool_calls' in (line.message as Json));
    expect(withCalls.map((line) => line.done)).toEqual([harmony]);
    const call = { name: 'read_file', arguments: { path: 'a.txt' } };
    expect(callsOf(lines)).toEqual([harmony ? { id: expect.stringMatching(/^call_[a-z0-9]{8}$/) as unknown, function: { index: 0, ...call } } : { function: call }]);
    // The done line carries the last of the text too: harmony hands over the whole end of the answer at once.
    expect(harmony ? (lines.at(-1)?.message as Json).content : textOf(lines)).toBe(harmony ? ' file.' : 'Checking the file.');
    expect(textOf(lines)).toBe('Checking the file.');
    const thought = messages(lines).map((message) => (typeof message.thinking === 'string' ? message.thinking : '')).join('');
    expect(thought).toBe(harmony ? 'Let me see.' : '');
    // Whole (stream: false): the same call, once.
    const whole = await chat(fake, { tools: TOOLS, stream: false }, 'gpt-oss:20b');
    expect(callsOf(whole.lines)).toHaveLength(1);
  });

  it.each<[string, number, string | undefined]>([
    ['0.4.7', 400, 'json: cannot unmarshal object into Go struct field ChatRequest.format of type string'],
    ['0.5.0', 200, undefined],
  ])('Ollama %s, a JSON schema as format: %i', async (version, status, error) => {
    const fake = await startAt(version);
    const answer = await chat(fake, { format: { type: 'object' }, stream: false });
    expect(answer.status).toBe(status);
    expect(answer.lines[0]?.error).toBe(error);
  });

  it.each<[string, string | undefined]>([
    ['0.1.34', undefined],
    ['0.1.35', 'stop'],
  ])('Ollama %s: done_reason %s', async (version, reason) => {
    const fake = await startAt(version);
    expect((await chat(fake)).lines.at(-1)?.done_reason).toBe(reason);
  });

  it.each<[string, string]>([
    ['0.11.0', 'model "nope" not found, try pulling it first'],
    ['0.12.0', "model 'nope' not found"],
  ])('Ollama %s: chat with a missing model is a 404 %j', async (version, error) => {
    const fake = await startAt(version);
    const answer = await chat(fake, {}, 'nope');
    expect([answer.status, answer.lines[0]?.error]).toEqual([404, error]);
  });

  it.each<[string, number]>([
    ['0.6.6', 2048],
    ['0.6.7', 4096],
  ])('Ollama %s: a request and model without num_ctx get a %i-token window', async (version, window) => {
    const fake = await startAt(version);
    await chat(fake);
    expect(fake.requests.at(-1)?.prompt?.numCtx).toBe(window);
  });

  it.each<[string, number, string]>([
    ['0.1.13', 404, '404 page not found'],
    ['0.1.14', 200, 'Hi there'],
  ])('Ollama %s: /api/chat answers %i (before 0.1.14 there is no such route)', async (version, status, text) => {
    const fake = await startAt(version);
    const res = await fetch(`${fake.url}/api/chat`, { method: 'POST', body: JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream: false }) });
    expect(res.status).toBe(status);
    const body = await res.text();
    expect(status === 200 ? textOf([JSON.parse(body) as Json]) : body).toBe(text);
  });

  it('before 0.1.23 keep_alive is no field: neither checked nor used', async () => {
    const fake = await startAt('0.1.22');
    expect((await chat(fake, { keep_alive: 'soon' })).status).toBe(200);
    const current = await startAt(CURRENT_VERSION);
    expect((await chat(current, { keep_alive: 'soon' })).status).toBe(400);
  });

  it.each<[string, Json, number, string | undefined]>([
    // A tool result's tool_name (0.9.6) and tool_call_id (0.12.10) are Go strings; before, unknown fields that bind anything.
    ['0.9.5', { tool_name: 7 }, 200, undefined],
    ['0.9.6', { tool_name: 7 }, 400, 'json: cannot unmarshal number into Go struct field Message.messages.tool_name of type string'],
    ['0.12.9', { tool_call_id: 7 }, 200, undefined],
    ['0.12.10', { tool_call_id: 7 }, 400, 'json: cannot unmarshal number into Go struct field Message.messages.tool_call_id of type string'],
    ['0.12.10', { tool_name: 'read_file', tool_call_id: 'call_0' }, 200, undefined],
  ])('Ollama %s, a tool result with %j: %i', async (version, fields, status, error) => {
    const fake = await startAt(version);
    const result = { role: 'tool', content: '{}', ...fields };
    const answer = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'hi' }, result] });
    expect([answer.status, answer.lines[0]?.error]).toEqual([status, error]);
    // Recorded as sent, whatever the release made of it.
    expect(fake.chatBodies()[0]?.messages).toEqual([{ role: 'user', content: 'hi' }, result]);
  });

  it.each<[string, Json, number, boolean]>([
    // Before 0.12.11 `logprobs` and `top_logprobs` are unknown fields: ignored whatever their value.
    ['0.12.10', { logprobs: true, top_logprobs: 2 }, 200, false],
    ['0.12.10', { logprobs: 'yes', top_logprobs: 99 }, 200, false],
    ['0.12.11', { logprobs: true, top_logprobs: 2 }, 200, true],
    ['0.12.11', { logprobs: true, top_logprobs: 99 }, 400, false],
  ])('Ollama %s, asked %j: %i, log probabilities %s', async (version, extra, status, carried) => {
    const fake = await startAt(version);
    const answer = await chat(fake, extra);
    expect(answer.status).toBe(status);
    expect(answer.lines.some((line) => Array.isArray(line.logprobs))).toBe(carried);
  });
});
