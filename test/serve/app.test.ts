import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import OpenAI from 'openai';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ssePayloads } from '../support/run-serve.js';
import { FAKE_LOGPROB, startTestServer } from './fake-runner.js';
import type { TestServer } from './fake-runner.js';
import type { ToolEvent } from '../../src/serve/types.js';
import { JobStore, orphanError } from '../../src/serve/jobs.js';
import { ApiError, badRequest } from '../../src/serve/errors.js';
import { RuntimeError } from '../../src/errors.js';
import type { JobRecord } from '../../src/serve/jobs.js';
import { waitFor } from '../support/wait.js';

let t: TestServer;
let client: OpenAI;

beforeAll(async () => {
  t = await startTestServer();
  client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await t.listening.close(1000);
});
afterEach(async () => {
  t.runner.script = (input) => ({ tokens: ['You', ' said: ', input.userPrompt] });
  t.runner.release();
  await fetch(`${t.url}/api/stop`, { method: 'DELETE' });
});

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'argo', messages: [{ role: 'user' as const, content }], ...extra });

describe('server-side tool runs (the runner runs the agent loop)', () => {
  let agent: TestServer;
  let agentClient: OpenAI;
  beforeAll(async () => {
    agent = await startTestServer({ agentMode: true });
    agentClient = new OpenAI({ baseURL: `${agent.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(async () => {
    await agent.listening.close(1000);
  });
  const summary = { stopReason: 'answered', iterations: 1, toolCalls: 1, message: null, unavailable: [{ name: 'mcp:db', reason: 'MCP server "db" did not start (spawn db-mcp ENOENT)' }] };
  const events = [
    { type: 'tool_status' as const, id: 'c1', name: 'read_file', status: 'running' },
    { type: 'tool_status' as const, id: 'c1', name: 'read_file', status: 'success', ms: 3 },
    { type: 'tool_execution_error' as const, id: 'c2', name: 'write_file', message: 'refused' },
  ];

  it('streams tool events as extra chunks the openai client passes over, then the text and the argo summary', async () => {
    agent.runner.script = () => ({ toolEvents: events, tokens: ['It ', 'says hi'], agentEnd: { status: 'ok', summary } });
    const stream = await agentClient.chat.completions.create({ ...ask('read it'), stream: true, argo: { tools: 'fs' } } as OpenAI.ChatCompletionCreateParamsStreaming);
    const chunks: Record<string, unknown>[] = [];
    let text = '';
    for await (const chunk of stream) {
      chunks.push(chunk as unknown as Record<string, unknown>);
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(text).toBe('It says hi');
    expect(chunks.flatMap((chunk) => [chunk.tool_status, chunk.tool_execution_error].filter((field) => field !== undefined))).toEqual(events);
    expect(chunks.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { status: 'ok', stop_reason: 'answered', iterations: 1, tool_calls: 1, message: null, tools_unavailable: summary.unavailable } });
  });

  it.each([
    ['max_iterations', 'length'],
    ['tool_failures', 'stop'],
    ['needs_input', 'stop'],
    ['stopped', 'stop'],
  ])('an agent run ending %s finishes with %s, the argo field saying why', async (status, finish) => {
    const ended = { stopReason: status, iterations: 2, toolCalls: 2, message: `ended ${status}`, unavailable: [] };
    agent.runner.script = () => ({ tokens: [], agentEnd: { status, summary: ended } });
    const response = await fetch(`${agent.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask('go', { argo: { tools: ['fs'] } })) });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ choices: [{ finish_reason: finish }], argo: { status, stop_reason: status, message: `ended ${status}` } });
  });

  const failures: { failure: string; failBefore?: { kind: string; message: string }; throws?: Error; status: number }[] = [
    { failure: 'Ollama failed', failBefore: { kind: 'mid-stream', message: 'model runner crashed' }, status: 502 },
    { failure: 'Ollama busy', failBefore: { kind: 'busy', message: 'Ollama is busy' }, status: 503 },
    { failure: "the server's own", failBefore: { kind: 'argo', message: 'cannot save the tool result' }, status: 500 },
    { failure: 'thrown, never logged', throws: new Error('a bug'), status: 500 },
  ];
  it.each(failures.flatMap((failure) => [true, false].flatMap((tools) => [true, false].map((stream) => ({ ...failure, tools, stream })))))(
    'a turn failing $status ($failure), tools $tools, stream $stream: a logged one names its turn, a tool run says not to retry',
    async ({ failBefore, throws, status, tools, stream }) => {
      agent.runner.script = () => (throws ? { throws } : { failBefore: failBefore ?? { kind: 'x', message: 'x' } });
      const body = ask('go', { stream, argo: tools ? { tools: 'shell', session: 'retry' } : { session: 'retry' } });
      const response = await fetch(`${agent.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(response.status).toBe(status);
      expect(response.headers.get('x-should-retry')).toBe(tools ? 'false' : null);
      const logged = throws ? null : agent.runner.logged.at(-1);
      expect(response.headers.get('x-argo-turn-id')).toBe(logged?.turnId ?? null);
      expect(response.headers.get('x-argo-log')).toBe(logged ? 'written' : null);
    },
  );

  it('an openai client that retries sends a failed tool run once; a failed plain answer it sends again', async () => {
    agent.runner.script = () => ({ failBefore: { kind: 'mid-stream', message: 'model runner crashed' } });
    const retrying = new OpenAI({ baseURL: `${agent.url}/v1`, apiKey: 'unused', maxRetries: 1 });
    const before = agent.runner.inputs.length;
    const tried = (body: Record<string, unknown>) => retrying.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming).then(() => null, (error: unknown) => error);
    expect(await tried(ask('run it', { argo: { tools: 'shell' } }))).toMatchObject({ status: 502 });
    expect(agent.runner.inputs.length - before).toBe(1);
    expect(await tried(ask('just answer'))).toMatchObject({ status: 502 });
    expect(agent.runner.inputs.length - before).toBe(3);
  });
});

describe('chat completions with the openai client', () => {
  it('answers without streaming: the chat.completion object, usage, turn id', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data).toMatchObject({
      object: 'chat.completion',
      model: 'argo',
      choices: [{ index: 0, message: { role: 'assistant', content: 'You said: hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    expect(data.id).toMatch(/^chatcmpl-/);
    const turnId = response.headers.get('x-argo-turn-id');
    expect(data.id).toBe(`chatcmpl-${turnId}`);
    const input = t.runner.inputs.at(-1);
    expect(input).toMatchObject({ mode: 'plain', session: 'api', userPrompt: 'hi', messages: [{ role: 'user', content: 'hi' }], argo: null });
  });

  it('streams with include_usage: role first, content pieces, finish, a usage chunk, [DONE]', async () => {
    const stream = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'stream me' }], stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('You said: stream me');
    const finish = chunks.at(-2);
    expect(finish?.choices[0]?.finish_reason).toBe('stop');
    expect((finish as unknown as { argo: { turn_id: string } }).argo.turn_id).toBe(t.runner.logged.at(-1)?.turnId);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 } });
    // The last data chunk carries the same argo field as the finish chunk.
    expect((chunks.at(-1) as unknown as { argo: unknown }).argo).toEqual((finish as unknown as { argo: unknown }).argo);
  });

  it('runs a full client-tools round: the call goes out, the result comes in, the final answer', async () => {
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    t.runner.script = (input) =>
      input.messages.some((m) => m.role === 'tool')
        ? { tokens: ['Sunny in ', 'Paris'] }
        : { tokens: [], toolCalls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] };
    const first = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'weather in Paris?' }], tools });
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call).toEqual({ id: 'call_1_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    // The turn's status as logged: answered with calls, not yet an answer.
    expect((first as unknown as { argo: unknown }).argo).toMatchObject({ status: 'tool_calls' });
    expect(t.runner.inputs.at(-1)?.extras.tools).toEqual([{ type: 'function', function: tools[0]?.function }]);

    const second = await client.chat.completions.create({
      model: 'argo',
      tools,
      messages: [
        { role: 'user', content: 'weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1_0', content: '{"sky":"clear"}' },
      ],
    });
    expect(second.choices[0]?.message.content).toBe('Sunny in Paris');
    expect((second as unknown as { argo: unknown }).argo).toMatchObject({ status: 'ok' });
    expect(t.runner.inputs.at(-1)?.messages).toEqual([
      { role: 'user', content: 'weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1_0', function: { name: 'get_weather', arguments: { city: 'Paris' } } }] },
      { role: 'tool', content: '{"sky":"clear"}', tool_name: 'get_weather', tool_call_id: 'call_1_0' },
    ]);
  });

  it('streams tool calls as deltas with an index', async () => {
    t.runner.script = () => ({ tokens: [], toolCalls: [{ function: { name: 'a', arguments: {} } }, { id: 'mine', function: { name: 'b', arguments: { x: 1 } } }] });
    const stream = await client.chat.completions.create({ ...ask('call'), stream: true, tools: [{ type: 'function', function: { name: 'a' } }] } as OpenAI.ChatCompletionCreateParamsStreaming);
    const deltas = [];
    let finish: string | null | undefined = null;
    for await (const chunk of stream) {
      deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(deltas).toEqual([
      { index: 0, id: 'call_1_0', type: 'function', function: { name: 'a', arguments: '{}' } },
      { index: 1, id: 'mine', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
    ]);
    expect(finish).toBe('tool_calls');
  });

  it('takes Argo fields from extra_body and from X-Argo-* headers', async () => {
    await client.chat.completions.create({ ...ask('continue'), argo: { session: 'work', replay: 'last:3', budget: 9000 } } as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(t.runner.inputs.at(-1)).toMatchObject({ mode: 'argo', session: 'work', argo: { session: 'work', replay: { kind: 'last', count: 3 }, budget: 9000 }, messages: [] });
    await client.chat.completions.create(ask('more'), { headers: { 'X-Argo-Session': 'play', 'X-Argo-Replay': 'session', 'X-Argo-Persona': 'pirate' } });
    expect(t.runner.inputs.at(-1)).toMatchObject({ mode: 'argo', session: 'play', argo: { replay: { kind: 'session' }, persona: 'pirate' } });
  });

  it('maps errors to OpenAI errors the client raises', async () => {
    const cases = [
      { failBefore: { kind: 'model-missing', message: 'model "nope" not found' }, status: 404, code: 'model_not_found' },
      { failBefore: { kind: 'unreachable', message: 'cannot reach Ollama' }, status: 502, code: 'ollama_unreachable' },
      { failBefore: { kind: 'busy', message: 'Ollama is busy' }, status: 503, code: 'ollama_busy' },
    ];
    for (const { failBefore, status, code } of cases) {
      t.runner.script = () => ({ failBefore });
      for (const stream of [false, true]) {
        const error = await client.chat.completions.create({ ...ask('x'), stream }).then(() => null, (e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect(error).toMatchObject({ status, code });
        expect((error as Error).message).toContain(failBefore.message);
      }
    }
    const bad = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'x' }], temperature: 'hot' as unknown as number }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, param: 'temperature', type: 'invalid_request_error' });
  });

  it('ends a stream that fails mid-way with an error chunk and no [DONE]', async () => {
    t.runner.script = () => ({ tokens: ['half', ' an'], failAfter: { kind: 'mid-stream', message: 'Ollama reported an error mid-answer: boom' } });
    const response = await post('/v1/chat/completions', ask('x', { stream: true }));
    expect(response.status).toBe(200);
    const data = ssePayloads(await response.text());
    expect(data.at(-1)).toBe(JSON.stringify({ error: { message: 'Ollama reported an error mid-answer: boom', type: 'api_error', param: null, code: 'ollama_mid_stream' } }));
    expect(data).not.toContain('[DONE]');
    const seen: string[] = [];
    const stream = await client.chat.completions.create({ ...ask('x'), stream: true });
    await expect(
      (async () => {
        for await (const chunk of stream) seen.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    ).rejects.toThrow(/boom/);
    expect(seen.join('')).toBe('half an');
  });

  it('cancels the turn when the client aborts mid-stream', async () => {
    t.runner.script = () => ({ tokens: ['a', 'b', 'c'], holdAfter: 1 });
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ ...ask('x'), stream: true }, { signal: controller.signal });
    const iterator = stream[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.next();
    controller.abort();
    await waitFor(() => expect(t.runner.logged.at(-1)).toMatchObject({ status: 'interrupted', text: 'a' }));
    expect(t.server.running).toBe(0);
  });
});

describe('log probabilities', () => {
  const entry = (token: string) => ({ token, logprob: FAKE_LOGPROB, bytes: null, top_logprobs: [] });
  const carried = (...tokens: string[]) => ({ content: tokens.map(entry), refusal: null });
  const tools = [{ type: 'function' as const, function: { name: 'f' } }];

  it('streamed: each chunk carries its piece\'s, held-back tokens in a chunk of their own with empty content; role and finish chunks none', async () => {
    t.runner.script = () => ({ tokens: ['Hi', ' you'], heldTokens: ['{"na', 'me"'], toolCalls: [{ function: { name: 'f', arguments: {} } }] });
    const stream = await client.chat.completions.create({ ...ask('hi'), stream: true, logprobs: true, tools });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk.choices[0]);
    expect(chunks.map((choice) => [choice?.delta.content ?? choice?.delta.tool_calls?.length ?? null, choice?.logprobs ?? null])).toEqual([
      ['', null],
      ['Hi', carried('Hi')],
      [' you', carried(' you')],
      ['', carried('{"na')],
      ['', carried('me"')],
      [1, carried('<call>')],
      [null, null],
    ]);
    expect(t.runner.inputs.at(-1)?.extras).toMatchObject({ logprobs: true });
  });

  it('not streamed: every piece\'s joined in order; not asked: null, and nothing asked of the turn', async () => {
    t.runner.script = () => ({ tokens: ['Hi', ' you'], heldTokens: ['x'], toolCalls: [{ function: { name: 'f', arguments: {} } }] });
    const whole = await client.chat.completions.create({ ...ask('hi'), logprobs: true, top_logprobs: 3, tools });
    expect(whole.choices[0]?.logprobs).toEqual(carried('Hi', ' you', 'x', '<call>'));
    expect(t.runner.inputs.at(-1)?.extras).toMatchObject({ logprobs: true, top_logprobs: 3 });
    const plain = await client.chat.completions.create(ask('hi'));
    expect(plain.choices[0]?.logprobs).toBeNull();
    expect(t.runner.inputs.at(-1)?.extras).not.toHaveProperty('logprobs');
  });

  it('a job keeps text only: asking one for log probabilities is a 400 naming the field, and no job starts', async () => {
    const before = t.runner.inputs.length;
    const response = await post('/api/jobs', ask('hi', { logprobs: true, argo: { session: 'work' } }));
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { message: 'a job keeps its output text, not log probabilities; leave out "logprobs", or ask POST /v1/chat/completions for them', type: 'invalid_request_error', param: 'logprobs', code: 'invalid_value' },
    });
    expect(t.runner.inputs).toHaveLength(before);
  });
});

describe('raw HTTP', () => {
  it('frames SSE exactly as OpenAI does (curl -N)', async () => {
    const curl = spawn('curl', ['-sN', '-H', 'content-type: application/json', '-d', JSON.stringify(ask('hey', { stream: true })), `${t.url}/v1/chat/completions`]);
    let out = '';
    curl.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
    await new Promise((resolve) => curl.on('close', resolve));
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
    const payloads = ssePayloads(out);
    expect(payloads.length).toBe(1 + 3 + 1 + 1);
    const first = JSON.parse(payloads[0] ?? '') as Record<string, unknown>;
    expect(first).toMatchObject({ object: 'chat.completion.chunk', model: 'argo', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  });

  it('sends SSE headers and the turn id', async () => {
    const response = await post('/v1/chat/completions', ask('x', { stream: true }));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-argo-turn-id')).toMatch(/^id\d+$/);
    await response.text();
  });

  it.each([
    ['{not json', 400, null, 'invalid_json'],
    ['', 400, null, 'invalid_json'],
    ['[1]', 400, null, 'invalid_value'],
    [JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }), 400, 'model', 'invalid_value'],
    [JSON.stringify({ model: 'argo', messages: [{ role: 'wizard', content: 'x' }] }), 400, 'messages[0].role', 'invalid_value'],
    [JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: 5 }] }), 400, 'messages[0].content', 'invalid_value'],
    [JSON.stringify({ ...ask('x'), stream_options: { include_usage: 'yes' } }), 400, 'stream_options.include_usage', 'invalid_value'],
    [JSON.stringify({ ...ask('x'), argo: { replay: 'all' } }), 400, 'argo.replay', 'invalid_value'],
    [JSON.stringify({ ...ask('x'), argo: { session: '../etc' } }), 400, 'argo.session', 'invalid_value'],
    [JSON.stringify({ ...ask('x'), argo: { tools: 'fs' } }), 400, 'argo.tools', 'tools_unavailable'],
  ])('refuses %s with %i naming %s', async (body, status, param, code) => {
    const response = await post('/v1/chat/completions', body);
    expect(response.status).toBe(status);
    const json = (await response.json()) as { error: Record<string, unknown> };
    expect(json.error).toMatchObject({ type: 'invalid_request_error', param, code });
  });

  it.each<[string, string]>([
    ['{not json', 'the request body is not valid JSON at line 1, column 2: expected a key or "}" (text goes in "double quotes"); send one JSON object'],
    ['{"model":"argo","api_key":sk-live-123}', 'the request body is not valid JSON at line 1, column 27: expected a value (text goes in "double quotes"); send one JSON object'],
  ])('a body that is not JSON (%s) is said by line and column, none of it quoted', async (body, message) => {
    const response = await post('/v1/chat/completions', body);
    expect(await response.json()).toEqual({ error: { message, type: 'invalid_request_error', param: null, code: 'invalid_json' } });
  });

  it.each<[string, Record<string, unknown>, Record<string, string>, string, string]>([
    ['/v1/chat/completions', { argo: { tools: 'fs' } }, {}, 'argo.tools', 'the "tools" Argo field'],
    ['/v1/chat/completions', {}, { 'X-Argo-Tools': 'fs' }, 'X-Argo-Tools', 'the X-Argo-Tools header'],
    ['/api/jobs', { argo: { tools: 'fs' } }, {}, 'argo.tools', 'the "tools" Argo field'],
    ['/api/jobs', {}, { 'X-Argo-Tools': 'fs' }, 'X-Argo-Tools', 'the X-Argo-Tools header'],
  ])('a server that runs no tools refuses them on %s (%j %j) naming %s, before a turn or a job exists', async (path, extra, headers, param, named) => {
    const turns = t.runner.inputs.length;
    const jobs = ((await (await fetch(`${t.url}/api/jobs`)).json()) as unknown[]).length;
    const response = await post(path, ask('x', extra), headers);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { message: `this server does not run tools; leave out ${named}`, type: 'invalid_request_error', param, code: 'tools_unavailable' } });
    expect(t.runner.inputs.length).toBe(turns);
    expect(((await (await fetch(`${t.url}/api/jobs`)).json()) as unknown[]).length).toBe(jobs);
  });

  it.each([
    ['written', undefined],
    ['rescued', { log: 'rescued' as const, problem: 'cannot write the log in /h/logs (the disk is full); the turn was saved to /h/rescued/u.ndjson — free some space' }],
    ['unsaved', { log: 'unsaved' as const, problem: 'cannot write the log in /h/logs (the disk is full); the turn could not be saved either (no space)' }],
  ])('says where the turn\'s line went (%s): X-Argo-Log and argo.log, not streamed; argo.log on the finish chunk, streamed', async (log, unlogged) => {
    t.runner.script = () => ({ tokens: ['Hi'], ...(unlogged ? { unlogged } : {}) });
    const before = t.lines.length;
    const whole = await post('/v1/chat/completions', ask('x'));
    expect(whole.status).toBe(200);
    expect(whole.headers.get('x-argo-log')).toBe(log);
    expect(await whole.json()).toMatchObject({ choices: [{ message: { content: 'Hi' }, finish_reason: 'stop' }], argo: { status: 'ok', log } });
    const streamed = ssePayloads(await (await post('/v1/chat/completions', ask('x', { stream: true }))).text());
    expect(streamed.at(-1)).toBe('[DONE]');
    expect(JSON.parse(streamed.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { status: 'ok', log } });
    // Why, with the server's paths, for the operator only.
    const problems = t.lines.slice(before).filter((line) => line.startsWith('argo serve: turn '));
    expect(problems).toEqual(unlogged ? [expect.stringMatching(/^argo serve: turn id\d+: cannot write the log in \/h\/logs/), expect.stringMatching(/^argo serve: turn id\d+: cannot write the log/)] : []);
  });

  it('a job whose turn could not be logged completes (sent again, its tools would run again), its output whole, saying so without the paths', async () => {
    const problem = 'cannot write the log in /h/logs (the disk is full); the turn was saved to /h/rescued/u.ndjson — free some space';
    t.runner.script = () => ({ tokens: ['all', ' of it'], unlogged: { log: 'rescued', problem } });
    const { job_id: id } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
    const error = "the answer is whole, but its turn is not in the log (rescued); the server's log says why";
    await waitFor(async () => expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'completed', output: 'all of it', error, finish_reason: 'stop' }));
  });

  const PREFIX = '{"model":"argo","messages":[{"role":"user","content":"caf';
  it.each<[string, number[], string | null]>([
    ['a Latin-1 byte', [0xe9], 'byte 0xE9 at offset 57'],
    ['a lone continuation byte', [0x80], 'byte 0x80 at offset 57'],
    ['an overlong encoding', [0xc0, 0xa9], 'byte 0xC0 at offset 57'],
    ['an encoded surrogate', [0xed, 0xa0, 0x80], 'byte 0xED at offset 57'],
    ['a sequence cut short', [0xc3], 'byte 0xC3 at offset 57'],
    ['U+FFFD written as itself', [0xef, 0xbf, 0xbd], null],
    ['é in UTF-8', [0xc3, 0xa9], null],
  ])('a body with %s, bytes %j: refused naming %s (null: taken)', async (_case, bytes, refused) => {
    const body = new Uint8Array([...new TextEncoder().encode(PREFIX), ...bytes, ...new TextEncoder().encode('"}]}')]);
    const before = t.runner.inputs.length;
    for (const path of ['/v1/chat/completions', '/api/jobs']) {
      const response = await fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      if (refused === null) {
        expect(response.status).toBeLessThan(300);
        continue;
      }
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        error: { message: `the request body is not UTF-8 (${refused}); send the JSON encoded as UTF-8`, type: 'invalid_request_error', param: null, code: 'invalid_json' },
      });
    }
    if (refused === null) await waitFor(() => expect(t.runner.inputs.slice(before).map((input) => input.userPrompt)).toEqual([new TextDecoder().decode(new Uint8Array([...new TextEncoder().encode('caf'), ...bytes]))].flatMap((prompt) => [prompt, prompt])));
    else expect(t.runner.inputs.length).toBe(before);
  });

  it('a body that starts with a byte order mark is read as before, without it', async () => {
    const response = await fetch(`${t.url}/v1/chat/completions`, { method: 'POST', body: new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(JSON.stringify(ask('marked')))]) });
    expect(await response.json()).toMatchObject({ choices: [{ message: { content: 'You said: marked' } }] });
  });

  it('refuses a bad X-Argo header naming it', async () => {
    const response = await post('/v1/chat/completions', ask('x'), { 'X-Argo-Replay': 'forever' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { param: 'X-Argo-Replay' } });
  });

  it('refuses an oversized body with 413, with or without a length', async () => {
    const big = JSON.stringify(ask('x'.repeat(70 * 1024)));
    const response = await post('/v1/chat/completions', big);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'body_too_large' } });
    const chunked = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST',
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big));
          controller.close();
        },
      }),
      duplex: 'half',
    });
    expect(chunked.status).toBe(413);
  });

  it('answers /health, /v1/models and unknown routes', async () => {
    expect(await (await fetch(`${t.url}/health`)).json()).toEqual({ status: 'ok', ollama: { reachable: true, version: '0.12.0' } });
    expect(await (await fetch(`${t.url}/v1/models`)).json()).toEqual({ object: 'list', data: [{ id: 'argo:latest', object: 'model', created: 1768469400, owned_by: 'ollama' }] });
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['argo:latest']);
    const missing = await fetch(`${t.url}/v2/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: 'unknown_route' } });
  });

  it('logs one line per request, without the key or the query', async () => {
    await fetch(`${t.url}/api/sessions?q=secret`);
    await post('/v1/chat/completions', ask('x', { argo: { session: 'work' } }));
    await waitFor(() => expect(t.lines.at(-1)).toMatch(/^POST \/v1\/chat\/completions 200 \d+ms session=work$/));
    expect(t.lines.some((line) => /^GET \/api\/sessions 200 \d+ms session=-$/.test(line))).toBe(true);
  });

  it.each([
    ['streamed, before the first chunk', 499, { stream: true }, 0, false],
    ['not streamed, mid-answer', 499, {}, 1, false],
    ['queued behind its session', 499, {}, 1, true],
    ['streamed, after the first chunk', 200, { stream: true }, 1, false],
  ])('a client that leaves %s: its request line says %i', async (name, status, extra, holdAfter, queued) => {
    const session = `gone-${name.replace(/\W+/g, '-')}`;
    let held = 0;
    t.runner.onHold = () => held++;
    t.runner.script = () => ({ tokens: ['a', 'b'], holdAfter });
    // In process, so the server sees the client leave the moment it does.
    const send = (signal?: AbortSignal) =>
      t.server.app.request(
        new Request(`${t.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask('x', { ...extra, argo: { session } })), ...(signal ? { signal } : {}) }),
      );
    const ahead = queued ? send() : null;
    if (queued) await waitFor(() => expect(held).toBe(1));
    const controller = new AbortController();
    const leaving = send(controller.signal);
    if (queued) await waitFor(() => expect(t.server.running).toBe(2));
    else await waitFor(() => expect(held).toBe(1));
    const reader = status === 200 ? (await leaving).body?.getReader() : undefined;
    await reader?.read();
    controller.abort();
    // A queued request waits for its turn even when its client has gone; the turn then ends at once.
    t.runner.release();
    await (await ahead)?.text();
    await (reader ?? (await leaving).body)?.cancel();
    const line = new RegExp(`^POST /v1/chat/completions ${status} \\d+ms session=${session}$`);
    await waitFor(() => expect(t.lines).toContainEqual(expect.stringMatching(line)));
    t.runner.onHold = () => undefined;
  });

  it('a path\'s controls and bidirectional marks are not written to the log as they are', async () => {
    await fetch(`${t.url}/v1/x%E2%80%AEcod.exe%1B%5B2J`);
    await waitFor(() => expect(t.lines.at(-1)).toMatch(/^GET \/v1\/x\?cod\.exe\?\[2J 404 \d+ms session=-$/));
  });
});

describe('sessions routes', () => {
  it('lists, searches, shows and retitles', async () => {
    expect(await (await fetch(`${t.url}/api/sessions`)).json()).toEqual([{ name: 'work', title: 'Work things' }, { name: 'play', title: 'Games' }]);
    expect(await (await fetch(`${t.url}/api/sessions?q=chess`)).json()).toEqual([{ name: 'play', title: 'Games' }]);
    expect(await (await fetch(`${t.url}/api/sessions/work`)).json()).toEqual({ session: { name: 'work', title: 'Work things' }, turns: [] });
    expect((await fetch(`${t.url}/api/sessions/nobody`)).status).toBe(404);
    const patched = await fetch(`${t.url}/api/sessions/work`, { method: 'PATCH', body: JSON.stringify({ title: 'New' }) });
    expect(await patched.json()).toEqual({ name: 'work', title: 'New' });
    const bad = await fetch(`${t.url}/api/sessions/work`, { method: 'PATCH', body: JSON.stringify({ title: 3 }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: 'title' } });
    expect((await fetch(`${t.url}/api/sessions/nobody`, { method: 'PATCH', body: JSON.stringify({ title: 'x' }) })).status).toBe(404);
  });

  it('a title or a model name over its limit is a 400 naming the field and the limit; nothing is changed or run', async () => {
    const long = await fetch(`${t.url}/api/sessions/play`, { method: 'PATCH', body: JSON.stringify({ title: 'x'.repeat(201) }) });
    expect(long.status).toBe(400);
    expect(await long.json()).toEqual({ error: { message: 'invalid "title": use at most 200 characters', type: 'invalid_request_error', param: 'title', code: 'invalid_value' } });
    expect(t.sessions.get('play')?.title).toBe('Games');
    const inputs = t.runner.inputs.length;
    for (const path of ['/v1/chat/completions', '/api/jobs']) {
      const refused = await post(path, { ...ask('hi'), model: 'm'.repeat(1001) });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual({
        error: { message: 'invalid "model": use at most 1000 characters (no model name Ollama takes is longer)', type: 'invalid_request_error', param: 'model', code: 'invalid_value' },
      });
    }
    expect(t.runner.inputs).toHaveLength(inputs);
  });

  it('an Argo persona, mode or tool name over 200 characters, or over 100 tool names, is a 400 naming the field and the limit; nothing is run', async () => {
    const inputs = t.runner.inputs.length;
    const rule = 'use at most 200 characters (the length of a name in config.json)';
    const cases: [Record<string, unknown>, string, string][] = [
      [{ persona: 'p'.repeat(201) }, 'argo.persona', `invalid "argo.persona": ${rule}`],
      [{ mode: 'm'.repeat(20_000) }, 'argo.mode', `invalid "argo.mode": ${rule}`],
      [{ tools: ['fs', 't'.repeat(201)] }, 'argo.tools', 'invalid "argo.tools": use names of at most 200 characters each (the length of a name in config.json)'],
      [{ tools: Array.from({ length: 101 }, (_, at) => `t${at}`) }, 'argo.tools', 'invalid "argo.tools": use at most 100 names (a toolset in config.json can group more)'],
    ];
    for (const path of ['/v1/chat/completions', '/api/jobs']) {
      for (const [argo, param, message] of cases) {
        const refused = await post(path, { ...ask('hi'), argo });
        expect(refused.status).toBe(400);
        expect(await refused.json()).toEqual({ error: { message, type: 'invalid_request_error', param, code: 'invalid_value' } });
      }
    }
    expect(t.runner.inputs).toHaveLength(inputs);
  });
});

describe('per-session order', () => {
  it('serves one session in arrival order and other sessions alongside', async () => {
    let held = 0;
    t.runner.onHold = () => held++;
    t.runner.script = (input) => (input.userPrompt === 'first' ? { tokens: ['1', '2'], holdAfter: 1 } : { tokens: [input.userPrompt] });
    const first = post('/v1/chat/completions', ask('first', { argo: { session: 'work' } }));
    await waitFor(() => expect(held).toBe(1));
    const second = post('/v1/chat/completions', ask('second', { argo: { session: 'work' } }));
    const other = await post('/v1/chat/completions', ask('other', { argo: { session: 'play' } }));
    expect(await other.json()).toMatchObject({ choices: [{ message: { content: 'other' } }] });
    expect(t.runner.inputs.map((i) => i.userPrompt)).not.toContain('second');
    t.runner.release();
    expect(await (await first).json()).toMatchObject({ choices: [{ message: { content: '12' } }] });
    expect(await (await second).json()).toMatchObject({ choices: [{ message: { content: 'second' } }] });
    const order = t.runner.inputs.map((i) => i.userPrompt);
    expect(order.indexOf('second')).toBeGreaterThan(order.indexOf('first'));
    t.runner.onHold = () => undefined;
  });
});

describe('jobs on one session: run and timestamped in the order they were accepted', () => {
  it('a first job slowest to be saved still runs first; each turn is asked at a later instant than the one before, its held draft\'s the same, even on a clock that stands still', async () => {
    const still = new Date('2026-01-01T00:00:00.000Z');
    const s = await startTestServer({ clock: { now: () => still, monotonic: () => performance.now() } });
    try {
      let letFirstBeSaved = (): void => undefined;
      const firstSaved = new Promise<void>((resolve) => (letFirstBeSaved = resolve));
      const held = new Map<string, Date | undefined>();
      s.runner.onHoldJob = async (input) => {
        held.set(input.turnId, input.askedAt);
        if (input.userPrompt === 'job 1') await firstSaved;
        return null;
      };
      const postJob = (prompt: string): Promise<Response> => fetch(`${s.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask(prompt, { argo: { session: 'work' } })) });
      const first = postJob('job 1');
      await waitFor(() => expect(held.size).toBe(1));
      const later = await Promise.all([postJob('job 2'), postJob('job 3')]);
      expect(later.map((response) => response.status)).toEqual([202, 202]);
      // Queued behind the first, which is not made yet.
      expect(s.runner.inputs).toEqual([]);
      letFirstBeSaved();
      const ids = [((await (await first).json()) as { job_id: string }).job_id, ...(await Promise.all(later.map(async (response) => ((await response.json()) as { job_id: string }).job_id)))];
      for (const id of ids) await waitFor(async () => expect(await (await fetch(`${s.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'completed' }));
      expect(s.runner.inputs.map((input) => input.userPrompt)).toEqual(['job 1', 'job 2', 'job 3']);
      const asked = s.runner.inputs.map((input) => input.askedAt?.getTime());
      expect(asked).toEqual([0, 1, 2].map((ms) => still.getTime() + ms));
      expect(s.runner.inputs.map((input) => held.get(input.turnId))).toEqual(s.runner.inputs.map((input) => input.askedAt));
    } finally {
      await s.listening.close(100);
    }
  });
});

describe('the data home\'s path is the operator\'s', () => {
  it('an error that names a file in it reaches the client as <data home>, streamed or not, and a job\'s error too; the server\'s log has the path', async () => {
    const home = '/srv/argo-home';
    const s = await startTestServer({ home });
    try {
      s.runner.script = () => ({ throws: new RuntimeError(`session file ${home}/sessions/work.json is not valid JSON; fix it or remove it with "argo sessions rm work"`) });
      const shown = 'session file <data home>/sessions/work.json is not valid JSON; fix it or remove it with "argo sessions rm work"';
      for (const stream of [false, true]) {
        const response = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('x', { stream, argo: { session: 'work' } })) });
        expect(response.status).toBe(500);
        expect(await response.json()).toMatchObject({ error: { message: shown, code: 'argo_error' } });
      }
      const { job_id: id } = (await (await fetch(`${s.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('x', { argo: { session: 'work' } })) })).json()) as { job_id: string };
      await waitFor(async () => expect(await (await fetch(`${s.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'failed', error: shown }));
      expect(s.lines).toContain(`argo serve: session file ${home}/sessions/work.json is not valid JSON; fix it or remove it with "argo sessions rm work"`);
    } finally {
      await s.listening.close(100);
    }
  });

  it('a 4xx quoting what the client sent is sent as it is, so the path shown never confirms a guess of it; a 5xx still hides it', async () => {
    const home = '/srv/argo-home';
    const s = await startTestServer({ home });
    try {
      const cases: [string, Error, number, string][] = [
        ['the request\'s own text (a 400)', badRequest(`argo.persona: unknown persona "${home}"`, 'argo.persona'), 400, `argo.persona: unknown persona "${home}"`],
        ['Ollama\'s 404 quoting the model asked for', new ApiError(404, `model "${home}" not found`, 'invalid_request_error', 'model_not_found', 'model'), 404, `model "${home}" not found`],
        ['the server\'s own failure (a 500)', new RuntimeError(`cannot write ${home}/logs/x.log`), 500, 'cannot write <data home>/logs/x.log'],
        ['an ApiError of 5xx', new ApiError(502, `cannot read ${home}/STOP`, 'api_error', 'x'), 502, 'cannot read <data home>/STOP'],
      ];
      for (const [, thrown, status, message] of cases) {
        s.runner.script = () => ({ throws: thrown });
        for (const stream of [false, true]) {
          const response = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('x', { stream })) });
          expect(response.status).toBe(status);
          expect(((await response.json()) as { error: { message: string } }).error.message).toBe(message);
        }
      }
    } finally {
      await s.listening.close(100);
    }
  });
});

describe('STOP', () => {
  it('ends a streaming answer with finish_reason stop and [DONE], logged stopped; new answers stop at once until cleared', async () => {
    let held = 0;
    t.runner.onHold = () => held++;
    t.runner.script = () => ({ tokens: ['partial', ' never'], holdAfter: 1 });
    const response = await post('/v1/chat/completions', ask('x', { stream: true }));
    await waitFor(() => expect(held).toBe(1));
    expect(await (await post('/api/stop', '')).json()).toEqual({ stop: true, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) as string });
    const data = ssePayloads(await response.text());
    expect(data.at(-1)).toBe('[DONE]');
    expect(JSON.parse(data.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { status: 'stopped' } });
    expect(t.runner.logged.at(-1)).toMatchObject({ status: 'stopped', text: 'partial' });
    expect(await (await fetch(`${t.url}/api/stop`)).json()).toEqual({ stop: true, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) as string });
    await expect(client.chat.completions.create(ask('y'))).rejects.toMatchObject({ status: 503, code: 'argo_stopped' });
    expect(await (await fetch(`${t.url}/api/stop`, { method: 'DELETE' })).json()).toEqual({ stop: false, since: null });
    t.runner.script = (input) => ({ tokens: ['You', ' said: ', input.userPrompt] });
    expect((await client.chat.completions.create(ask('z'))).choices[0]?.message.content).toBe('You said: z');
    t.runner.onHold = () => undefined;
  });

  it.each([false, true])('a request STOP keeps from starting while it waits behind another on its session gets 503 argo_stopped, never an empty 200 (stream: %s); its turn is logged stopped', async (stream) => {
    let held = 0;
    t.runner.onHold = () => held++;
    t.runner.script = (input) => (input.userPrompt === 'first' ? { tokens: ['partial', ' never'], holdAfter: 1 } : { tokens: ['answered'] });
    try {
      const first = post('/v1/chat/completions', ask('first', { argo: { session: 'queued' } }));
      await waitFor(() => expect(held).toBe(1));
      const second = stream
        ? client.chat.completions.create({ ...ask('second', { argo: { session: 'queued' } }), stream: true })
        : client.chat.completions.create(ask('second', { argo: { session: 'queued' } }));
      const refused = second.then(() => null, (error: unknown) => error);
      await waitFor(() => expect(t.server.running).toBe(2));
      await post('/api/stop', '');
      expect(await (await first).json()).toMatchObject({ argo: { status: 'stopped' } });
      const error = await refused;
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ status: 503, code: 'argo_stopped' });
      expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get('x-should-retry')).toBe('false');
      expect(t.runner.logged.slice(-2).map((turn) => [turn.text, turn.status])).toEqual([['partial', 'stopped'], ['', 'stopped']]);
    } finally {
      await fetch(`${t.url}/api/stop`, { method: 'DELETE' });
      t.runner.onHold = () => undefined;
    }
  });

  describe('a request that comes while STOP is set: 503 argo_stopped, its turn logged stopped, no job', () => {
    const stopped = {
      error: {
        message: 'STOP is set on this server, so nothing was answered (the request is logged as stopped); clear it with DELETE /api/stop (or "argo stop --clear" on the server), then send it again',
        type: 'server_error',
        param: null,
        code: 'argo_stopped',
      },
    };
    let agent: TestServer;
    beforeAll(async () => {
      agent = await startTestServer({ agentMode: true });
    });
    afterAll(async () => {
      await agent.listening.close(1000);
    });
    afterEach(async () => {
      await fetch(`${agent.url}/api/stop`, { method: 'DELETE' });
    });
    it.each([
      ['plain, not streamed', '/v1/chat/completions', ask('held back')],
      ['plain, streamed', '/v1/chat/completions', ask('held back', { stream: true })],
      ['Argo mode, streamed', '/v1/chat/completions', ask('held back', { stream: true, argo: { session: 'work' } })],
      ['server-side tools, not streamed', '/v1/chat/completions', ask('held back', { argo: { session: 'work', tools: 'fs' } })],
      ['server-side tools, streamed', '/v1/chat/completions', ask('held back', { stream: true, argo: { session: 'work', tools: 'fs' } })],
      ['a job', '/api/jobs', ask('held back', { argo: { session: 'work' } })],
    ])('%s', async (_name, path, body) => {
      await fetch(`${agent.url}/api/stop`, { method: 'POST' });
      const before = agent.runner.logged.length;
      const jobs = (await (await fetch(`${agent.url}/api/jobs`)).json()) as unknown[];
      const response = await fetch(`${agent.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual(stopped);
      // Waiting does not clear STOP: no Retry-After, and the openai clients are told not to retry.
      expect(response.headers.get('retry-after')).toBeNull();
      expect(response.headers.get('x-should-retry')).toBe('false');
      expect(agent.runner.logged.slice(before)).toEqual([expect.objectContaining({ status: 'stopped', text: '', turnId: response.headers.get('x-argo-turn-id') })]);
      expect(agent.runner.inputs.at(-1)).toMatchObject({ userPrompt: 'held back' });
      expect(await (await fetch(`${agent.url}/api/jobs`)).json()).toHaveLength(jobs.length);
    });

    it('the openai client throws an APIError with the status and code, streamed or not, and does not retry', async () => {
      const retrying = new OpenAI({ baseURL: `${agent.url}/v1`, apiKey: 'unused', maxRetries: 2 });
      await fetch(`${agent.url}/api/stop`, { method: 'POST' });
      const before = agent.runner.logged.length;
      for (const stream of [false, true]) {
        const error: unknown = await retrying.chat.completions.create({ ...ask('held back'), stream }).then(() => null, (thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect(error).toMatchObject({ status: 503, code: 'argo_stopped', type: 'server_error' });
      }
      expect(agent.runner.logged.length - before).toBe(2);
    });
  });

  describe('an answer STOP ends after it streamed calls of the client\'s tools: no round of tools, finish_reason stop', () => {
    const calls = [{ function: { name: 'a', arguments: {} } }, { function: { name: 'b', arguments: { x: 1 } } }];
    const stopWhenHeld = (): void => {
      t.runner.onHold = () => void fetch(`${t.url}/api/stop`, { method: 'POST' });
    };
    afterEach(() => {
      t.runner.onHold = () => undefined;
    });

    it('streamed: the calls sent stay sent, the last chunk says stop (argo.status stopped), then [DONE]', async () => {
      stopWhenHeld();
      t.runner.script = () => ({ tokens: ['Let me'], toolCalls: calls, holdAfterToolCalls: true });
      const data = ssePayloads(await (await post('/v1/chat/completions', ask('x', { stream: true, tools: [] }))).text());
      expect(data.at(-1)).toBe('[DONE]');
      const finishes = data.slice(0, -1).map((payload) => JSON.parse(payload) as { choices: { finish_reason: string | null }[] }).map((chunk) => chunk.choices[0]?.finish_reason);
      expect(finishes.filter((finish) => finish !== null)).toEqual(['stop']);
      expect(JSON.parse(data.at(-2) ?? '')).toMatchObject({ choices: [{ delta: {}, finish_reason: 'stop' }], argo: { status: 'stopped' } });
      expect(t.runner.logged.at(-1)).toMatchObject({ status: 'stopped', toolCalls: calls });
    });

    it('not streamed: a 200 with the text and no tool_calls, finish_reason stop (the log keeps the calls)', async () => {
      stopWhenHeld();
      t.runner.script = () => ({ tokens: ['Let me'], toolCalls: calls, holdAfterToolCalls: true });
      const response = await post('/v1/chat/completions', ask('x', { tools: [] }));
      expect(response.status).toBe(200);
      const body = (await response.json()) as { choices: { message: Record<string, unknown>; finish_reason: string }[]; argo: { status: string } };
      expect(body.choices[0]).toMatchObject({ message: { role: 'assistant', content: 'Let me' }, finish_reason: 'stop' });
      expect(body.choices[0]?.message).not.toHaveProperty('tool_calls');
      expect(body.argo.status).toBe('stopped');
      expect(t.runner.logged.at(-1)).toMatchObject({ status: 'stopped', toolCalls: calls });
    });
  });

  it('hears a STOP file made by another process', async () => {
    let held = 0;
    t.runner.onHold = () => held++;
    t.runner.script = () => ({ tokens: ['a', 'b'], holdAfter: 1 });
    const response = client.chat.completions.create(ask('x'));
    await waitFor(() => expect(held).toBe(1));
    writeFileSync(join(t.home, 'STOP'), '');
    expect((await response).choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'a' } });
    t.runner.onHold = () => undefined;
  });
});

describe('jobs', () => {
  it('a damaged job file is left out of the list and told to the operator once, however often it is met', async () => {
    const s = await startTestServer();
    try {
      mkdirSync(join(s.home, 'jobs'), { recursive: true });
      const torn = join(s.home, 'jobs', 'tornJobFile1.json');
      writeFileSync(torn, '{"id":');
      for (let i = 0; i < 3; i++) expect(await (await fetch(`${s.url}/api/jobs`)).json()).toEqual([]);
      expect(s.lines.filter((line) => line.includes('damaged job file'))).toEqual([`argo serve: left out damaged job file ${torn}`]);
    } finally {
      await s.listening.close(1000);
    }
  });

  it('runs a job in the background and keeps its record (0600)', async () => {
    const response = await post('/api/jobs', ask('background', { argo: { session: 'work' } }));
    expect(response.status).toBe(202);
    const { job_id: id } = (await response.json()) as { job_id: string };
    await waitFor(async () => expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'completed' }));
    const record = (await (await fetch(`${t.url}/api/jobs/${id}`)).json()) as Record<string, unknown>;
    expect(record).toMatchObject({ id, state: 'completed', session: 'work', output: 'You said: background', error: null });
    expect(record.turn_id).toBe(t.runner.logged.at(-1)?.turnId);
    const path = join(t.home, 'jobs', `${id}.json`);
    await waitFor(() => expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ state: 'completed', output: record.output }));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const list = (await (await fetch(`${t.url}/api/jobs`)).json()) as { id: string }[];
    expect(list.map((job) => job.id)).toContain(id);
    expect((await fetch(`${t.url}/api/jobs/nope`)).status).toBe(404);
    expect((await fetch(`${t.url}/api/jobs/..%2Fx`)).status).toBe(404);
  });

  it('streams a half-done job: all output so far in one chunk, then live chunks, then the end', async () => {
    let held = 0;
    t.runner.onHold = () => held++;
    t.runner.script = () => ({ tokens: ['one ', 'two ', 'three'], holdAfter: 2 });
    const { job_id: id } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
    await waitFor(() => expect(held).toBe(1));
    const { first, rest: readRest } = await followJob(id);
    expect(JSON.parse(ssePayloads(first)[0] ?? '')).toMatchObject({ choices: [{ delta: { role: 'assistant', content: 'one two ' } }] });
    t.runner.release();
    const rest = await readRest();
    const data = ssePayloads(rest);
    expect(JSON.parse(data[0] ?? '')).toMatchObject({ choices: [{ delta: { content: 'three' } }] });
    expect(JSON.parse(data.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { job_id: id, state: 'completed' } });
    expect(data.at(-1)).toBe('[DONE]');
    // A finished job streams its whole output at once.
    const again = ssePayloads(await (await fetch(`${t.url}/api/jobs/${id}/stream`)).text());
    expect(again).toHaveLength(3);
    expect(JSON.parse(again[0] ?? '')).toMatchObject({ choices: [{ delta: { content: 'one two three' } }] });
    t.runner.onHold = () => undefined;
  });

  it('a job whose run heard STOP before the server did (an agent loop looks at STOP on every chunk) is cancelled by the stop signal, not failed', async () => {
    const summary = { stopReason: 'stop_signal', iterations: 1, toolCalls: 0, message: 'stopped by the STOP signal; DELETE /api/stop allows runs again', unavailable: [] };
    t.runner.script = () => ({ tokens: ['half ', 'way'], agentEnd: { status: 'stopped', summary } });
    const { job_id: id } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
    await waitFor(async () => expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'cancelled', error: 'stop signal', output: 'half way' }));
  });

  it('a failed job keeps its partial output, its finish_reason null; its stream ends as every job\'s does, its last chunk saying null and failed', async () => {
    t.runner.script = () => ({ tokens: ['half ', 'done'], failAfter: { kind: 'stream', message: 'Ollama: out of memory' } });
    const { job_id: id } = (await (await post('/api/jobs', { ...ask('x'), model: 'qwen3:8b' })).json()) as { job_id: string };
    await waitFor(async () => expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'failed' }));
    expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toMatchObject({ model: 'qwen3:8b', output: 'half done', error: 'Ollama: out of memory', finish_reason: null });
    const data = ssePayloads(await (await fetch(`${t.url}/api/jobs/${id}/stream`)).text());
    expect(data).toHaveLength(3);
    expect(JSON.parse(data[0] ?? '')).toMatchObject({ model: 'qwen3:8b', choices: [{ delta: { content: 'half done' }, finish_reason: null }] });
    // Never a whole answer: no finish_reason a client would take for one.
    expect(JSON.parse(data[1] ?? '')).toMatchObject({
      choices: [{ delta: {}, finish_reason: null }],
      argo: { job_id: id, state: 'failed', error: 'Ollama: out of memory', turn_id: expect.any(String) as string },
    });
    expect(data[2]).toBe('[DONE]');
    // openai-node's helper that gathers a stream into one completion refuses it as unfinished.
    const gathered = ChatCompletionStream.fromReadableStream(new Response(data.slice(0, 2).map((chunk) => `${chunk}\n`).join('')).body ?? new ReadableStream());
    await expect(gathered.finalChatCompletion()).rejects.toThrow('missing finish_reason for choice 0');
  });

  it('a job following clients see its tool progress live, as chat streams show it; the record keeps the text', async () => {
    let held = 0;
    t.runner.onHold = () => held++;
    const toolEvents: ToolEvent[] = [
      { type: 'tool_status', id: 'r1', name: 'read_file', status: 'running' },
      { type: 'tool_execution_error', id: 'r1', name: 'read_file', message: 'file "x" does not exist' },
      { type: 'tool_status', id: 'r1', name: 'read_file', status: 'failure', ms: 3 },
    ];
    t.runner.script = () => ({ tokens: ['looking ', 'done'], holdAfter: 1, toolEventsAt: 1, toolEvents });
    const { job_id: id } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
    await waitFor(() => expect(held).toBe(1));
    const { first, rest: readRest } = await followJob(id);
    expect(JSON.parse(ssePayloads(first)[0] ?? '')).toMatchObject({ choices: [{ delta: { role: 'assistant', content: 'looking ' } }] });
    t.runner.release();
    const rest = await readRest();
    const data = ssePayloads(rest).slice(0, -1).map((payload) => JSON.parse(payload) as Record<string, unknown>);
    expect(data.slice(0, 3)).toMatchObject(toolEvents.map((event) => ({ choices: [], [event.type]: event })));
    expect(data[3]).toMatchObject({ choices: [{ delta: { content: 'done' } }] });
    expect(data.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { job_id: id, state: 'completed' } });
    const record = (await (await fetch(`${t.url}/api/jobs/${id}`)).json()) as { output: string };
    expect(record.output).toBe('looking done');
    t.runner.onHold = () => undefined;
  });

  it('a job with client tools: its stream sends the calls as a chat stream does and ends tool_calls; its record keeps them', async () => {
    t.runner.script = () => ({ tokens: ['Let me see'], toolCalls: [{ function: { name: 'a', arguments: {} } }, { id: 'mine', function: { name: 'b', arguments: { x: 1 } } }] });
    interface Chunk {
      choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
    }
    const chunksOf = async (response: Response): Promise<Chunk[]> => ssePayloads(await response.text()).slice(0, -1).map((payload) => JSON.parse(payload) as Chunk);
    const chat = await chunksOf(await post('/v1/chat/completions', { ...ask('x'), stream: true }));
    const chatCalls = chat.flatMap((chunk) => (chunk.choices[0]?.delta.tool_calls as unknown[] | undefined) ?? []);
    const { job_id: id } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
    await waitFor(async () => expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'completed' }));
    const calls = [
      { id: 'call_1_0', type: 'function', function: { name: 'a', arguments: '{}' } },
      { id: 'mine', type: 'function', function: { name: 'b', arguments: '{"x":1}' } },
    ];
    expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toMatchObject({ output: 'Let me see', tool_calls: calls, finish_reason: 'tool_calls' });
    const job = await chunksOf(await fetch(`${t.url}/api/jobs/${id}/stream`));
    expect(job.map((chunk) => chunk.choices[0]?.delta)).toEqual([{ role: 'assistant', content: 'Let me see' }, { tool_calls: chatCalls }, {}]);
    expect(chatCalls).toEqual(calls.map((call, index) => ({ index, ...call })));
    expect(job.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  describe('a job this server does not run', () => {
    const stored = (fields: Partial<JobRecord>): JobRecord => ({ id: 'x', state: 'running', created_at: '2026-11-20T10:00:00.000Z', updated_at: '2026-11-20T10:00:00.000Z', session: 'api', model: 'argo', output: 'so far', error: null, turn_id: 't0', ...fields });
    const store = (): JobStore => new JobStore(join(t.home, 'jobs'));

    it.each(['running', 'pending'] as const)('left %s by a server that is gone: failed with the reason, its output kept, on every route', async (state) => {
      const id = `orphan-${state}`;
      await store().write(stored({ id, state }));
      const data = ssePayloads(await (await fetch(`${t.url}/api/jobs/${id}/stream`)).text());
      const error = orphanError(stored({ state }));
      expect(JSON.parse(data[0] ?? '')).toMatchObject({ choices: [{ delta: { content: 'so far' } }] });
      // Its answer never ended: its last chunk says so (finish_reason null) and why, then [DONE].
      expect(JSON.parse(data.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: null }], argo: { job_id: id, state: 'failed', error } });
      expect(data.at(-1)).toBe('[DONE]');
      expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'failed', error, output: 'so far' });
      await store().write(stored({ id: `${id}-listed`, state }));
      const listed = (await (await fetch(`${t.url}/api/jobs`)).json()) as JobRecord[];
      expect(listed.find((job) => job.id === `${id}-listed`)).toMatchObject({ state: 'failed', error });
      await store().write(stored({ id: `${id}-deleted`, state }));
      expect(await (await fetch(`${t.url}/api/jobs/${id}-deleted`, { method: 'DELETE' })).json()).toMatchObject({ state: 'failed', error });
    });

    it('run by another live server: DELETE is 409 naming that to cancel it there; GET shows its record as that server saves it', async () => {
      await store().write(stored({ id: 'theirs' }));
      const release = await store().lock('theirs', () => undefined);
      try {
        const response = await fetch(`${t.url}/api/jobs/theirs`, { method: 'DELETE' });
        expect(response.status).toBe(409);
        expect(await response.json()).toEqual({
          error: {
            message: 'job "theirs" is run by another argo serve sharing this data home; cancel it on that server (here GET /api/jobs/theirs and its stream follow it as that server saves it, every 200 ms). If that server has stopped, the job is marked failed within 5 s',
            type: 'invalid_request_error',
            param: null,
            code: 'job_running_elsewhere',
          },
        });
        expect(await (await fetch(`${t.url}/api/jobs/theirs`)).json()).toEqual(stored({ id: 'theirs' }));
      } finally {
        await release();
      }
    });

    it('run by another live server: its stream follows the saved record, text and client tool calls, to the end that server saves', async () => {
      const call = { id: 'call_1_0', type: 'function' as const, function: { name: 'lookup', arguments: '{"q":"x"}' } };
      await store().write(stored({ id: 'followed' }));
      const release = await store().lock('followed', () => undefined);
      try {
        const stream = await readSse(`${t.url}/api/jobs/followed/stream`);
        await stream.until('so far');
        await store().write(stored({ id: 'followed', output: 'so far, and more', tool_calls: [call] }));
        await stream.until('and more');
        await store().write(stored({ id: 'followed', state: 'completed', output: 'so far, and more.', tool_calls: [call], finish_reason: 'tool_calls' }));
        const chunks = (await stream.rest()).slice(0, -1).map((payload) => JSON.parse(payload) as { choices: { delta: unknown; finish_reason: string | null }[]; argo?: unknown });
        expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
          { role: 'assistant', content: 'so far' },
          { content: ', and more' },
          { tool_calls: [{ index: 0, ...call }] },
          { content: '.' },
          {},
        ]);
        expect(chunks.at(-1)).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }], argo: { job_id: 'followed', state: 'completed', error: null, turn_id: 't0' } });
      } finally {
        await release();
      }
    });

    it('followed, its file unreadable for 5 s: the stream ends as a failed answer does (an error chunk, no finish, no [DONE]), the job not called ended', async () => {
      await store().write(stored({ id: 'unreadable' }));
      const release = await store().lock('unreadable', () => undefined);
      try {
        const stream = await readSse(`${t.url}/api/jobs/unreadable/stream`);
        await stream.until('so far');
        writeFileSync(store().pathOf('unreadable'), 'not json');
        const data = await stream.rest();
        expect(data.at(-1)).not.toBe('[DONE]');
        expect(JSON.parse(data.at(-1) ?? '')).toEqual({
          error: {
            message: expect.stringMatching(/^this server could not read the job's file for 5 s \(job file .* has an invalid content \(not valid JSON\); remove the file\); GET \/api\/jobs\/unreadable shows where it stands$/) as unknown,
            type: 'server_error',
            param: null,
            code: 'job_unreadable',
          },
        });
        expect(data.some((payload) => payload.includes('finish_reason":"stop'))).toBe(false);
      } finally {
        await release();
      }
    });

    it('followed while that server stops: the stream ends with the job failed, its output kept', async () => {
      await store().write(stored({ id: 'dying' }));
      const release = await store().lock('dying', () => undefined);
      const stream = await readSse(`${t.url}/api/jobs/dying/stream`);
      await stream.until('so far');
      await store().write(stored({ id: 'dying', output: 'so far, then' }));
      await stream.until('then');
      await release();
      const data = await stream.rest();
      expect(JSON.parse(data.at(-2) ?? '')).toMatchObject({
        choices: [{ delta: {}, finish_reason: null }],
        argo: { job_id: 'dying', state: 'failed', error: 'the server stopped while the job was running; its output so far is kept', turn_id: 't0' },
      });
      expect(data.at(-1)).toBe('[DONE]');
      expect(await (await fetch(`${t.url}/api/jobs/dying`)).json()).toMatchObject({ state: 'failed', output: 'so far, then' });
    });
  });

  it("another server's job followed while this server shuts down: followed through the grace, then an error chunk saying where to follow it, no [DONE]", async () => {
    const s = await startTestServer();
    const store = new JobStore(join(s.home, 'jobs'));
    const running: JobRecord = { id: 'theirs', state: 'running', created_at: '2026-11-20T10:00:00.000Z', updated_at: '2026-11-20T10:00:00.000Z', session: 'api', model: 'argo', output: 'so far', error: null, turn_id: 't0' };
    await store.write(running);
    const release = await store.lock('theirs', () => undefined);
    try {
      const stream = await readSse(`${s.url}/api/jobs/theirs/stream`);
      await stream.until('so far');
      const closed = s.listening.close(300);
      // Still followed in the grace.
      await store.write({ ...running, output: 'so far, and more' });
      await stream.until('and more');
      const data = await stream.rest();
      await closed;
      expect(data.at(-1)).not.toBe('[DONE]');
      expect(data.some((payload) => payload.includes('finish_reason":"stop'))).toBe(false);
      expect(JSON.parse(data.at(-1) ?? '')).toEqual({
        error: {
          message: 'this server is shutting down; job "theirs" runs on another argo serve sharing this data home, and goes on there: follow it again with GET /api/jobs/theirs/stream on any server sharing the data home (this one once it is back), which sends its output so far first',
          type: 'server_error',
          param: null,
          code: 'shutting_down',
        },
      });
      expect(await store.read('theirs')).toMatchObject({ state: 'running' });
    } finally {
      await release();
    }
  });

  it('cancels with DELETE and with STOP, keeping the output', async () => {
    let held = 0;
    t.runner.onHold = () => held++;
    t.runner.script = () => ({ tokens: ['kept', 'lost'], holdAfter: 1 });
    const { job_id: a } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
    await waitFor(() => expect(held).toBe(1));
    expect(await (await fetch(`${t.url}/api/jobs/${a}`, { method: 'DELETE' })).json()).toMatchObject({ state: 'cancelled', output: 'kept', error: 'cancelled by request' });
    const { job_id: b } = (await (await post('/api/jobs', ask('y'))).json()) as { job_id: string };
    await waitFor(() => expect(held).toBe(2));
    await post('/api/stop', '');
    await waitFor(async () => expect(await (await fetch(`${t.url}/api/jobs/${b}`)).json()).toMatchObject({ state: 'cancelled', output: 'kept', error: 'stop signal' }));
    await waitFor(() => expect(JSON.parse(readFileSync(join(t.home, 'jobs', `${b}.json`), 'utf8'))).toMatchObject({ state: 'cancelled', output: 'kept' }));
    t.runner.onHold = () => undefined;
  });

  it.each([
    ['DELETE', { state: 'cancelled', error: 'cancelled by request' }, 'interrupted'],
    ['STOP', { state: 'cancelled', error: 'stop signal' }, 'stopped'],
    ['the shutdown', { state: 'failed', error: 'the server shut down before the job finished' }, 'interrupted'],
  ])('a job still queued behind another on its session, cut by %s, ends at once; its turn is logged with its prompt when it comes', async (cut, ended, status) => {
    const s = await startTestServer();
    let held = 0;
    s.runner.onHold = () => held++;
    s.runner.script = (input) => (input.userPrompt === 'long' ? { tokens: ['a', 'b'], holdAfter: 1 } : { tokens: ['q'] });
    const start = async (content: string): Promise<string> =>
      ((await (await fetch(`${s.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask(content, { argo: { session: 'play' } })) })).json()) as { job_id: string }).job_id;
    const record = async (id: string): Promise<JobRecord> => (await (await fetch(`${s.url}/api/jobs/${id}`)).json()) as JobRecord;
    try {
      const long = await start('long');
      await waitFor(() => expect(held).toBe(1));
      const queued = await start('queued');
      expect(await record(queued)).toMatchObject({ state: 'pending' });
      let drained: Promise<void> | null = null;
      if (cut === 'DELETE') expect(await (await fetch(`${s.url}/api/jobs/${queued}`, { method: 'DELETE' })).json()).toMatchObject({ ...ended, output: '' });
      if (cut === 'STOP') await fetch(`${s.url}/api/stop`, { method: 'POST' });
      // Its grace over at once: what runs is cut, and what waits.
      if (cut === 'the shutdown') drained = s.server.drain(0);
      await waitFor(async () => expect(await record(queued)).toMatchObject(ended));
      s.runner.release();
      await drained;
      await waitFor(async () => expect((await record(long)).state).not.toBe('running'));
      const turnId = (await record(queued)).turn_id;
      expect(turnId).toEqual(expect.any(String));
      await waitFor(() => expect(s.runner.logged.find((turn) => turn.turnId === turnId)).toMatchObject({ status, text: '' }));
      expect(s.runner.inputs.find((input) => input.turnId === turnId)).toMatchObject({ userPrompt: 'queued', session: 'play' });
    } finally {
      await s.listening.close(100);
    }
  });

  describe('a job another server failed over (this one was paused past its lock\'s staleness): stopped here, its file never brought back', () => {
    const failedOver = (id: string, output: string): JobRecord => ({
      id,
      state: 'failed',
      created_at: '2026-11-20T10:00:00.000Z',
      updated_at: '2026-11-20T10:00:07.000Z',
      session: 'api',
      model: 'argo',
      output,
      error: 'the server stopped while the job was running; its output so far is kept',
      turn_id: null,
    });
    const fileOf = (id: string): JobRecord => JSON.parse(readFileSync(join(t.home, 'jobs', `${id}.json`), 'utf8')) as JobRecord;
    /** A job held after its first token, its file then failed as another server fails it over; its id. */
    const heldThenFailedOver = async (): Promise<string> => {
      let held = 0;
      t.runner.onHold = () => held++;
      t.runner.script = () => ({ tokens: ['so far', ' and the rest'], holdAfter: 1 });
      const { job_id: id } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
      await waitFor(() => expect(held).toBe(1));
      await waitFor(() => expect(fileOf(id)).toMatchObject({ state: 'running', output: 'so far' }));
      await new JobStore(join(t.home, 'jobs')).write(failedOver(id, 'so far'));
      return id;
    };

    /** The last chunk of a stream of the job, which ends with the job failed (finish_reason null, then [DONE]): its `argo` field. */
    const streamEnd = async (id: string): Promise<() => Promise<unknown>> => {
      const response = await fetch(`${t.url}/api/jobs/${id}/stream`);
      const text = response.text();
      return async () => {
        const data = ssePayloads(await text);
        expect(data.at(-1)).toBe('[DONE]');
        const last = JSON.parse(data.at(-2) ?? '') as { choices: { finish_reason: unknown }[]; argo: unknown };
        expect(last.choices[0]?.finish_reason).toBeNull();
        return last.argo;
      };
    };
    const verdict = (id: string) => ({ job_id: id, state: 'failed', error: failedOver(id, '').error, turn_id: null });

    it('its lock removed and its file failed, as the other server does: the turn is cut within a second (interrupted, its text kept), the file stays failed', async () => {
      const id = await heldThenFailedOver();
      const followed = await streamEnd(id);
      rmSync(join(t.home, 'jobs', `${id}.json.lock`), { recursive: true });
      await waitFor(() => expect(t.runner.logged.find((turn) => turn.turnId === fileOf(id).turn_id || turn.text === 'so far')).toMatchObject({ status: 'interrupted', text: 'so far' }));
      expect(t.runner.inputs.at(-1)?.signal.reason).toBe('lost');
      await waitFor(async () => expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toEqual(failedOver(id, 'so far')));
      expect(fileOf(id)).toEqual(failedOver(id, 'so far'));
      // Its followers here hear the end its file keeps, and the line says so once it is so.
      expect(await followed()).toEqual(verdict(id));
      await waitFor(() =>
        expect(t.lines.filter((line) => line.includes(`job ${id}`))).toEqual([
          expect.stringMatching(new RegExp(`^argo serve: lost the lock on job ${id} \\(.*ENOENT.*\\); another server sharing the data home had marked it failed meanwhile, so it was stopped here, and its file keeps that verdict$`)),
        ]),
      );
      t.runner.onHold = () => undefined;
    });

    it('its lock lost with its file still running: stopped here, failed as this server says, and said so once it has', async () => {
      let held = 0;
      t.runner.onHold = () => held++;
      t.runner.script = () => ({ tokens: ['so far', ' and the rest'], holdAfter: 1 });
      const { job_id: id } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
      await waitFor(() => expect(held).toBe(1));
      const followed = await streamEnd(id);
      rmSync(join(t.home, 'jobs', `${id}.json.lock`), { recursive: true });
      const lost = { job_id: id, state: 'failed', error: expect.stringContaining('lost its lock on it') as string };
      expect(await followed()).toMatchObject(lost);
      expect(fileOf(id)).toMatchObject({ state: 'failed', output: 'so far', error: lost.error });
      await waitFor(() =>
        expect(t.lines.filter((line) => line.includes(`job ${id}`))).toEqual([expect.stringMatching(new RegExp(`^argo serve: lost the lock on job ${id} \\(.*ENOENT.*\\), so it was stopped here: failed, its output so far kept$`))]),
      );
      t.runner.onHold = () => undefined;
    });

    it('its file failed while its lock still looks held: the answer that completes after is not written over the verdict, nor told its followers', async () => {
      const id = await heldThenFailedOver();
      const followed = await streamEnd(id);
      const cancelled = fetch(`${t.url}/api/jobs/${id}`, { method: 'DELETE' }).then((response) => response.json());
      t.runner.release();
      expect(await followed()).toEqual(verdict(id));
      // Cancelled meanwhile: the record that comes back is the one its file keeps.
      expect(await cancelled).toEqual(failedOver(id, 'so far'));
      await waitFor(async () => expect(await (await fetch(`${t.url}/api/jobs/${id}`)).json()).toEqual(failedOver(id, 'so far')));
      await waitFor(() => expect(existsSync(join(t.home, 'jobs', `${id}.json.lock`))).toBe(false));
      expect(fileOf(id)).toEqual(failedOver(id, 'so far'));
      t.runner.onHold = () => undefined;
    });
  });

  it('a jobs folder replaced by a file: GET /api/jobs and GET /api/jobs/ID are a 500 naming the problem', async () => {
    const s = await startTestServer();
    try {
      writeFileSync(join(s.home, 'jobs'), 'not a folder');
      for (const path of ['/api/jobs', '/api/jobs/abc']) {
        const response = await fetch(`${s.url}${path}`);
        expect(response.status).toBe(500);
        const { error } = (await response.json()) as { error: { message: string; code: string } };
        expect(error.code).toBe('jobs_unreadable');
        expect(error.message).toMatch(/^the jobs in the data home cannot be read \(ENOTDIR: not a directory, .*\); the server's operator must mend its jobs folder/);
      }
    } finally {
      await s.listening.close(100);
    }
  });

  describe('a job whose record cannot be saved (a full disk; here a folder where its file goes)', () => {
    let n = 0;
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer({ newId: () => `saving${++n}` });
    });
    afterAll(async () => {
      await s.listening.close(100);
    });
    const jobFile = (id: string): string => join(s.home, 'jobs', `${id}.json`);

    it('the first save failing fails the POST: a 500 naming why, no job, nothing run', async () => {
      mkdirSync(jobFile(`saving${n + 1}`), { recursive: true });
      const response = await fetch(`${s.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('keep me')) });
      expect(response.status).toBe(500);
      const { error } = (await response.json()) as { error: { message: string; code: string; type: string } };
      expect(error).toMatchObject({ type: 'server_error', code: 'job_not_saved' });
      expect(error.message).toMatch(/^the job could not be saved in the data home, so none was made and nothing was run \(.*saving1\.json/);
      expect(s.runner.inputs).toEqual([]);
      await waitFor(() => expect(existsSync(`${jobFile('saving1')}.lock`)).toBe(false));
      rmSync(jobFile('saving1'), { recursive: true });
      expect((await fetch(`${s.url}/api/jobs/saving1`)).status).toBe(404);
    });

    it('an ended job whose last save failed stays readable from memory, said once on stderr, until a save succeeds', async () => {
      let held = 0;
      s.runner.onHold = () => held++;
      s.runner.script = () => ({ tokens: ['all ', 'of ', 'it'], holdAfter: 1 });
      const { job_id: id } = (await (await fetch(`${s.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('long')) })).json()) as { job_id: string };
      await waitFor(() => expect(held).toBe(1));
      rmSync(jobFile(id));
      mkdirSync(jobFile(id));
      s.runner.release();
      await waitFor(async () => expect(await (await fetch(`${s.url}/api/jobs/${id}`)).json()).toMatchObject({ id, state: 'completed', output: 'all of it' }));
      const said = (): string[] => s.lines.filter((line) => line.includes(`job ${id}`));
      await waitFor(() => expect(said()).toEqual([expect.stringMatching(new RegExp(`^argo serve: cannot save job ${id} \\(.+\\); it is kept in memory, as GET /api/jobs/${id} shows it, until a save succeeds$`))]));
      expect(await (await fetch(`${s.url}/api/jobs/${id}`)).json()).toMatchObject({ id, state: 'completed', output: 'all of it' });
      // Saved again once the disk takes it: the file has the end, and the server says so.
      rmSync(jobFile(id), { recursive: true });
      await waitFor(() => expect(JSON.parse(readFileSync(jobFile(id), 'utf8'))).toMatchObject({ state: 'completed', output: 'all of it' }));
      await waitFor(() => expect(said()).toHaveLength(2));
      expect(said()[1]).toBe(`argo serve: job ${id} is saved again`);
      await waitFor(() => expect(existsSync(`${jobFile(id)}.lock`)).toBe(false));
      expect(await (await fetch(`${s.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'completed', output: 'all of it' });
    });
  });
});

describe('auth', () => {
  it('needs the bearer key on every route but /health, and never logs it', async () => {
    const key = 'sk-test-secret-key';
    const locked = await startTestServer({ apiKey: key });
    try {
      expect((await fetch(`${locked.url}/health`)).status).toBe(200);
      for (const path of ['/v1/models', '/api/sessions', '/api/jobs', '/api/stop']) {
        const response = await fetch(`${locked.url}${path}`);
        expect(response.status).toBe(401);
        expect(await response.json()).toMatchObject({ error: { type: 'authentication_error', code: 'invalid_api_key' } });
      }
      expect((await fetch(`${locked.url}/v1/models`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
      const wrong = new OpenAI({ baseURL: `${locked.url}/v1`, apiKey: 'nope', maxRetries: 0 });
      await expect(wrong.models.list()).rejects.toMatchObject({ status: 401 });
      const right = new OpenAI({ baseURL: `${locked.url}/v1`, apiKey: key, maxRetries: 0 });
      expect((await right.chat.completions.create(ask('hi'))).choices[0]?.message.content).toBe('You said: hi');
      expect(locked.lines.join('\n')).not.toContain(key);
    } finally {
      await locked.listening.close(100);
    }
  });

  it.each([
    ['no Authorization', {}, 'Bearer'],
    ['another scheme', { authorization: 'Basic c2VjcmV0' }, 'Bearer'],
    ['a wrong bearer token', { authorization: 'Bearer wrong' }, 'Bearer error="invalid_token"'],
  ])('a 401 for %s says which scheme to use (RFC 6750)', async (_case, headers, challenge) => {
    const locked = await startTestServer({ apiKey: 'sk-test-secret-key' });
    try {
      const response = await fetch(`${locked.url}/api/sessions`, { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(challenge);
    } finally {
      await locked.listening.close(100);
    }
  });
});

describe('come back later: Retry-After on a 503', () => {
  it.each([
    ['Ollama said nothing', {}, '2'],
    ['Ollama (or a proxy before it) said 9 s', { retryAfterS: 9 }, '9'],
  ])('busy through the retries, when %s: %s s, streamed or not', async (_case, extra, seconds) => {
    t.runner.script = () => ({ failBefore: { kind: 'busy', message: 'Ollama is busy', ...extra } });
    for (const stream of [false, true]) {
      const response = await post('/v1/chat/completions', ask('x', { stream }));
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe(seconds);
      expect(await response.json()).toMatchObject({ error: { code: 'ollama_busy' } });
    }
  });

  it('a request that comes while the server shuts down: come back once the grace is over', async () => {
    const s = await startTestServer();
    let held = 0;
    s.runner.onHold = () => held++;
    s.runner.script = () => ({ tokens: ['so', 'far'], holdAfter: 1 });
    const hanging = fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('hang')) });
    await waitFor(() => expect(held).toBe(1));
    // Draining, still listening: the answer held above keeps it from ending.
    const drained = s.server.drain(30_000);
    try {
      for (const path of ['/v1/chat/completions', '/api/jobs']) {
        const refused = await fetch(`${s.url}${path}`, { method: 'POST', body: JSON.stringify(ask('late')) });
        expect(refused.status).toBe(503);
        expect(await refused.json()).toMatchObject({ error: { code: 'shutting_down' } });
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(20);
        expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(30);
      }
    } finally {
      s.runner.release();
      await hanging;
      await drained;
      await s.listening.close(100);
    }
  });

  it.each([
    ['/v1/chat/completions', false],
    ['/v1/chat/completions', true],
    ['/api/jobs', false],
  ])('a body to %s (stream %s) that is whole only once the shutdown has begun is refused: nothing runs, no job', async (path, stream) => {
    const s = await startTestServer();
    try {
      let reading!: () => void;
      const read = new Promise<void>((resolve) => (reading = resolve));
      let send!: ReadableStreamDefaultController<Uint8Array>;
      // Pulled only once the handler reads it: past the check made as the request came.
      const body = new ReadableStream<Uint8Array>({ start: (controller) => void (send = controller), pull: () => reading() }, { highWaterMark: 0 });
      const bytes = new TextEncoder().encode(JSON.stringify(ask('late', { stream, argo: { session: 'late' } })));
      const headers = { 'content-type': 'application/json', 'content-length': String(bytes.length) };
      const answered = s.server.app.request(path, { method: 'POST', body, duplex: 'half', headers });
      await read;
      await s.server.drain(1000);
      send.enqueue(bytes);
      send.close();
      const response = await answered;
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ error: { code: 'shutting_down' } });
      expect(s.runner.inputs).toEqual([]);
      expect(existsSync(join(s.home, 'jobs')) ? readdirSync(join(s.home, 'jobs')) : []).toEqual([]);
    } finally {
      await s.listening.close(100);
    }
  });

  it('a turn still queued when the shutdown begins does not start: 503 shutting_down naming its turn, logged interrupted with its prompt', async () => {
    const s = await startTestServer();
    s.runner.script = (input) => (input.userPrompt === 'first' ? { tokens: ['one', ' two'], holdAfter: 1 } : { tokens: ['never'] });
    const send = (content: string, stream: boolean): Promise<Response> => fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask(content, { stream, argo: { session: 'queued' } })) });
    const first = send('first', false);
    await waitFor(() => expect(s.runner.inputs).toHaveLength(1));
    const queued = [send('second', false), send('third', true)];
    await waitFor(() => expect(s.server.running).toBe(3));
    const drained = s.server.drain(30_000);
    s.runner.release();
    try {
      expect(await (await first).json()).toMatchObject({ choices: [{ message: { content: 'one two' } }] });
      for (const [response, prompt] of [[await queued[0], 'second'], [await queued[1], 'third']] as const) {
        expect(response?.status).toBe(503);
        expect(await response?.json()).toMatchObject({ error: { code: 'shutting_down' } });
        expect(Number(response?.headers.get('retry-after'))).toBeGreaterThan(0);
        const turn = s.runner.logged.find((logged) => logged.turnId === response?.headers.get('x-argo-turn-id'));
        expect(turn).toMatchObject({ status: 'interrupted', text: '' });
        expect(s.runner.inputs.find((input) => input.turnId === turn?.turnId)).toMatchObject({ userPrompt: prompt });
      }
    } finally {
      await drained;
      await s.listening.close(100);
    }
  });
});

describe('the shutdown: what runs has the grace, what waits ends at once', () => {
  it('a job accepted on an idle session just before SIGTERM runs in the grace and completes (its first save still under way counts as started)', async () => {
    const s = await startTestServer();
    s.runner.script = () => ({ tokens: ['all ', 'done'] });
    try {
      const accepted = await fetch(`${s.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('job', { argo: { session: 'idle' } })) });
      // Right on the 202, as a signal landing then.
      const drained = s.server.drain(30_000);
      const { job_id: id } = (await accepted.json()) as { job_id: string };
      await drained;
      expect(JSON.parse(readFileSync(join(s.home, 'jobs', `${id}.json`), 'utf8'))).toMatchObject({ state: 'completed', output: 'all done', error: null, finish_reason: 'stop' });
      expect(s.runner.logged.map((turn) => turn.status)).toEqual(['ok']);
    } finally {
      await s.listening.close(100);
    }
  });

  it('requests and jobs still queued behind a running answer end as the shutdown begins (503, failed), while the running one finishes; each turn is logged interrupted with its prompt when its place comes', async () => {
    const s = await startTestServer();
    let held = 0;
    s.runner.onHold = () => held++;
    s.runner.script = (input) => (input.userPrompt === 'first' ? { tokens: ['one', ' two'], holdAfter: 1 } : { tokens: ['never'] });
    const body = (content: string, stream = false): string => JSON.stringify(ask(content, { stream, argo: { session: 'queued' } }));
    const first = fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: body('first') });
    await waitFor(() => expect(held).toBe(1));
    const chats = [fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: body('second') }), fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: body('third', true) })];
    const { job_id: job } = (await (await fetch(`${s.url}/api/jobs`, { method: 'POST', body: body('fourth') })).json()) as { job_id: string };
    await waitFor(() => expect(s.server.running).toBe(5));
    const drained = s.server.drain(3_600_000);
    try {
      // Told while the first answer still holds its place.
      for (const response of await Promise.all(chats)) {
        expect(response.status).toBe(503);
        expect(response.headers.get('x-argo-turn-id')).toMatch(/^id/);
        expect(await response.json()).toMatchObject({ error: { code: 'shutting_down' } });
      }
      const record = (await (await fetch(`${s.url}/api/jobs/${job}`)).json()) as JobRecord;
      expect(record).toMatchObject({ state: 'failed', error: 'the server shut down before the job finished', finish_reason: null });
      expect(held).toBe(1);
      expect(s.runner.logged).toEqual([]);
      s.runner.release();
      expect(await (await first).json()).toMatchObject({ choices: [{ message: { content: 'one two' } }] });
      await drained;
      expect(s.runner.logged.map((turn) => [turn.status, s.runner.inputs.find((input) => input.turnId === turn.turnId)?.userPrompt])).toEqual([
        ['ok', 'first'],
        ['interrupted', 'second'],
        ['interrupted', 'third'],
        ['interrupted', 'fourth'],
      ]);
      expect(s.runner.logged.slice(1).map((turn) => turn.text)).toEqual(['', '', '']);
    } finally {
      s.runner.release();
      await drained;
      await s.listening.close(100);
    }
  });
});

describe('start and shutdown', () => {
  it('reports Ollama down on /health with 200, and 502 on /v1/models', async () => {
    const down = await startTestServer({ ollamaDown: true });
    try {
      const health = await fetch(`${down.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'degraded', ollama: { reachable: false, version: null } });
      expect((await fetch(`${down.url}/v1/models`)).status).toBe(502);
    } finally {
      await down.listening.close(100);
    }
  });

  it('leaves STOP alone at start, stale or not: clearing a stale one is for once the server listens (StopSignal.clearStale)', async () => {
    const other = await startTestServer();
    await other.listening.close(100);
    writeFileSync(join(other.home, 'STOP'), '');
    utimesSync(join(other.home, 'STOP'), new Date('2000-01-01T00:00:00Z'), new Date('2000-01-01T00:00:00Z'));
    const { createServer } = await import('../../src/serve/app.js');
    const { fileStopSignal } = await import('../../src/serve/stop.js');
    const stop = fileStopSignal(other.home, () => new Date());
    const server = createServer({ ...baseDeps(other), stop });
    await server.start();
    expect(existsSync(join(other.home, 'STOP'))).toBe(true);
    await server.drain(0);
  });

  it('hears STOP through the grace: a stream ends stopped, a job is cancelled, and the shutdown does not wait the grace out', async () => {
    const s = await startTestServer();
    let held = 0;
    s.runner.onHold = () => held++;
    s.runner.script = () => ({ tokens: ['so', 'far'], holdAfter: 1 });
    const { job_id: job } = (await (await fetch(`${s.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('job')) })).json()) as { job_id: string };
    const stream = await readSse(`${s.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('chat', { stream: true })) });
    await waitFor(() => expect(held).toBe(2));
    const closed = s.listening.close(3_600_000);
    // As `argo stop` sets it, from another process: new connections are refused now.
    writeFileSync(join(s.home, 'STOP'), '');
    const data = await stream.rest();
    expect(data.at(-1)).toBe('[DONE]');
    expect(JSON.parse(data.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { status: 'stopped' } });
    await closed;
    expect(s.runner.logged.map((turn) => [turn.status, turn.text])).toEqual([['stopped', 'so'], ['stopped', 'so']]);
    expect(JSON.parse(readFileSync(join(s.home, 'jobs', `${job}.json`), 'utf8'))).toMatchObject({ state: 'cancelled', error: 'stop signal', output: 'so' });
  });

  it('lets open streams finish within the grace, then cuts the rest as interrupted: an error chunk, no finish, no [DONE]', async () => {
    const s = await startTestServer();
    let held = 0;
    s.runner.onHold = () => held++;
    s.runner.script = (input) => (input.userPrompt === 'hang' ? { tokens: ['so', 'far'], holdAfter: 1 } : { tokens: ['quick'] });
    const hanging = fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('hang', { stream: true })) });
    await waitFor(() => expect(held).toBe(1));
    const response = await hanging;
    const closed = s.listening.close(50);
    const data = ssePayloads(await response.text());
    expect(data).not.toContain('[DONE]');
    const turnId = response.headers.get('x-argo-turn-id') ?? '';
    expect(data.map((payload) => JSON.parse(payload) as { choices?: { finish_reason: string | null }[] }).flatMap((chunk) => chunk.choices ?? []).map((choice) => choice.finish_reason)).toEqual([null, null]);
    expect(JSON.parse(data.at(-1) ?? '')).toEqual({
      error: {
        message: `the server shut down before the answer was finished: it is partial (its text so far is logged as turn ${turnId}, status interrupted); send the request again once the server is back`,
        type: 'server_error',
        param: null,
        code: 'shutting_down',
      },
    });
    await closed;
    expect(s.runner.logged.at(-1)).toMatchObject({ status: 'interrupted', text: 'so' });
    await expect(fetch(`${s.url}/health`)).rejects.toThrow();
  });

  it('a non-streamed answer the shutdown cuts is a 503 shutting_down naming its turn, not a 200 with half an answer', async () => {
    const s = await startTestServer();
    let held = 0;
    s.runner.onHold = () => held++;
    s.runner.script = () => ({ tokens: ['so', 'far'], holdAfter: 1 });
    const answered = fetch(`${s.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('hang')) });
    await waitFor(() => expect(held).toBe(1));
    const closed = s.listening.close(50);
    const response = await answered;
    const turnId = response.headers.get('x-argo-turn-id') ?? '';
    expect([response.status, turnId === '', await response.json()]).toEqual([
      503,
      false,
      { error: { message: `the server shut down before the answer was finished: it is partial (its text so far is logged as turn ${turnId}, status interrupted); send the request again once the server is back`, type: 'server_error', param: null, code: 'shutting_down' } },
    ]);
    await closed;
    expect(s.runner.logged.at(-1)).toMatchObject({ status: 'interrupted', text: 'so' });
  });

  // A client may open a connection it never uses (fetch does after a request it gave up). Node's
  // closeIdleConnections() leaves such a connection; with a flush bound no test outlasts, close()
  // ends only if the server closes it itself.
  it.each([
    { sent: 'nothing', bytes: '' },
    { sent: 'part of a request line', bytes: 'GET /hea' },
  ])('closes a connection that has sent $sent at once when it stops, not after the flush bound', async ({ bytes }) => {
    const s = await startTestServer({ listen: { flushMs: 3_600_000 } });
    const spare = connect(Number(new URL(s.url).port), '127.0.0.1');
    await once(spare, 'connect');
    spare.write(bytes);
    const spareClosed = once(spare, 'close');
    // Accepted in order: once a later connection is answered, the server holds the spare one.
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
    await s.listening.close(50);
    await spareClosed;
  });

  it('lets an answer still being written to a slow reader arrive whole when it stops', async () => {
    const s = await startTestServer({ listen: { flushMs: 3_600_000 } });
    // More than the system's socket buffers hold, so the server is still writing it.
    const text = 'x'.repeat(24 << 20);
    s.runner.script = () => ({ tokens: [text] });
    const port = Number(new URL(s.url).port);
    const request = httpRequest({ host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' } });
    request.end(JSON.stringify(ask('long')));
    const [response] = (await once(request, 'response')) as [IncomingMessage];
    response.pause();
    const spare = connect(port, '127.0.0.1');
    await once(spare, 'connect');
    const spareClosed = once(spare, 'close');
    expect((await fetch(`${s.url}/health`)).status).toBe(200);
    const closed = s.listening.close(50);
    // The spare connection is closed by the same sweep that would cut this answer.
    await spareClosed;
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toHaveLength(text.length);
    await closed;
  });
});

/** Follows a job's stream: its first read (the output so far), and the rest once the job ends. */
async function followJob(id: string): Promise<{ first: string; rest: () => Promise<string> }> {
  const response = await fetch(`${t.url}/api/jobs/${id}/stream`);
  const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  const first = decoder.decode((await reader.read()).value);
  const rest = async (): Promise<string> => {
    let text = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
    return text;
  };
  return { first, rest };
}

/** An SSE response read as it comes: wait for a piece of text, then take the rest as payloads. */
async function readSse(url: string, init?: RequestInit): Promise<{ until: (text: string) => Promise<void>; rest: () => Promise<string[]> }> {
  const response = await fetch(url, init);
  const reader = (response.body as ReadableStream<Uint8Array> | null)?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let seen = '';
  return {
    until: async (text) => {
      while (!seen.includes(text)) {
        const chunk = await reader.read();
        if (chunk.done) throw new Error(`the stream ended before "${text}"`);
        seen += decoder.decode(chunk.value, { stream: true });
      }
    },
    rest: async () => {
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) seen += decoder.decode(chunk.value, { stream: true });
      return ssePayloads(seen);
    },
  };
}

function baseDeps(s: TestServer) {
  return {
    runner: s.runner,
    sessions: { list: () => Promise.resolve([]), show: () => Promise.resolve(null), setTitle: () => Promise.resolve(null) },
    ollama: { host: 'http://127.0.0.1:11434', version: () => Promise.resolve('1'), models: () => Promise.resolve([]), answeringModel: () => Promise.resolve(undefined) },
    clock: { now: () => new Date(), monotonic: () => performance.now() },
    newId: () => 'x',
    jobsDir: join(s.home, 'jobs'),
    limits: { maxBodyBytes: 1000, jobRetentionDays: 30 },
    apiKey: null,
    argoDefaults: { session: 'default', replay: { kind: 'none' as const } },
    agentMode: false,
    log: () => undefined,
  };
}

describe('in process, through app.request()', () => {
  it("a streamed session is logged once its body has ended, with the whole answer's time", async () => {
    const { createServer } = await import('../../src/serve/app.js');
    const { fileStopSignal } = await import('../../src/serve/stop.js');
    const lines: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const show = () =>
      Promise.resolve(async (give: (piece: string) => Promise<boolean>) => {
        await give('{"session":{"name":"work"},"turns":[');
        await held;
        await give(']}');
      });
    const server = createServer({ ...baseDeps(t), sessions: { ...baseDeps(t).sessions, show }, stop: fileStopSignal(t.home, () => new Date()), log: (line: string) => lines.push(line) });
    const response = await server.app.request('/api/sessions/work');
    expect(response.status).toBe(200);
    const text = response.text();
    // The head went out; the request is not over until the rest has.
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((line) => line.startsWith('GET /api/sessions/work'))).toEqual([]);
    release();
    expect(await text).toBe('{"session":{"name":"work"},"turns":[]}');
    await waitFor(() => expect(lines).toContainEqual(expect.stringMatching(/^GET \/api\/sessions\/work 200 \d+ms session=work$/)));
  });

  it.each([
    ['argo', 200, 'argo:latest'],
    ['library/argo:latest', 200, 'argo:latest'],
    ['argo%20', 400, null],
    ['%20argo', 400, null],
    ['argo%09', 400, null],
    ['argo/', 400, null],
    ['argo:', 400, null],
    ['nope', 404, null],
  ])('GET /v1/models/%s: %i, a name Ollama would not take refused as a chat request\'s model is', async (id, status, found) => {
    const { createServer } = await import('../../src/serve/app.js');
    const { fileStopSignal } = await import('../../src/serve/stop.js');
    const { MODEL_NAME_RULE } = await import('../../src/ollama/model-name.js');
    const base = baseDeps(t);
    const server = createServer({ ...base, ollama: { ...base.ollama, models: () => Promise.resolve([{ name: 'argo:latest', modified_at: '2026-01-15T09:30:00Z' }]) }, stop: fileStopSignal(t.home, () => new Date()) });
    const response = await server.app.request(`/v1/models/${id}`);
    const answer = (await response.json()) as { id?: string; error?: { message: string; param: string | null; code: string | null } };
    expect(response.status).toBe(status);
    if (status === 200) expect(answer.id).toBe(found);
    if (status === 400) expect(answer.error).toEqual({ message: `invalid model id ${JSON.stringify(decodeURIComponent(id))}: ${MODEL_NAME_RULE}`, type: 'invalid_request_error', param: 'model', code: 'invalid_value' });
  });

  it('answers without a socket: health is open, everything else needs the key', async () => {
    const { createServer } = await import('../../src/serve/app.js');
    const { fileStopSignal } = await import('../../src/serve/stop.js');
    const server = createServer({ ...baseDeps(t), stop: fileStopSignal(t.home, () => new Date()), apiKey: 'k', limits: { maxBodyBytes: 4096, jobRetentionDays: 30 } });
    const health = await server.app.request('/health');
    expect(health.status).toBe(200);
    expect((await server.app.request('/api/stop')).status).toBe(401);
    const answer = await server.app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify(ask('in process')),
    });
    expect(await answer.json()).toMatchObject({ choices: [{ message: { content: 'You said: in process' } }] });
  });
});
