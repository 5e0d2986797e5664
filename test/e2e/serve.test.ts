// End-to-end: the built `bin/argo serve` against the Ollama stand-in, driven by the openai client and raw HTTP.
import { request as httpRequest } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import type { Stream } from 'openai/streaming';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CURRENT_VERSION, fakeLogprob } from '../support/fake-ollama.js';
import type { FakeLogprob } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { defined } from '../support/defined.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { ssePayloads, startServe } from '../support/run-serve.js';
import type { ServeProcess } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';

// The server writes a turn's line just after the response ends; on a loaded machine that takes a while.

const ollama = await fakeOllamaPerFile();
let home: string;
let serve: ServeProcess;
let client: OpenAI;
const config = { retries: { attempts: 2, initialDelayMs: 10 } };

beforeAll(async () => {
  home = tempHome(config);
  serve = await startServe({ home, host: ollama.url });
  client = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await serve.stop();
});
beforeEach(() => {
  ollama.setScenario(undefined);
  ollama.options.reply = undefined;
  ollama.options.tokens = undefined;
  delete ollama.options.toolCalls;
  ollama.options.rounds = undefined;
  ollama.options.models = undefined;
  ollama.options.thinking = undefined;
  ollama.options.callIds = undefined;
  ollama.requests.length = 0;
});

/** Ollama's own call ids (0.12.10+): `call_` and 8 random letters or digits. */
const OLLAMA_ID = /^call_[a-z0-9]{8}$/;

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'argo', messages: [{ role: 'user' as const, content }], ...extra });
const post = (path: string, body: unknown, headers: Record<string, string> = {}, base = serve.url): Promise<Response> =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
const chatBodies = (): string[] => ollama.requests.filter((r) => r.path === '/api/chat').map((r) => r.body);
const turnsOf = (id: string) => logLines(home).filter((line) => line.id === id);
/** Waits for a logged turn with these fields: other tests' turns (a disconnected client's, ended late) may be logged after it. */
const loggedLike = (fields: Record<string, unknown>) => waitFor(() => expect(logLines(home)).toContainEqual(expect.objectContaining(fields)));
/** The response ends with the answer; the log line follows at once. Waits for it and the session record. */
async function logged(id: string) {
  await waitFor(() => expect(turnsOf(id)).toHaveLength(1));
  const [entry] = turnsOf(id);
  const session = String(entry?.session);
  // Plain-mode turns run side by side, so session api's newest turn may be another one.
  if (session !== 'api') await waitFor(() => expect(JSON.parse(readFileSync(join(home, 'sessions', `${session}.json`), 'utf8'))).toMatchObject({ last_turn_id: id }));
  return entry;
}
async function healthy(): Promise<void> {
  expect(await (await fetch(`${serve.url}/health`)).json()).toMatchObject({ status: 'ok' });
}

describe('model windows', () => {
  it('asks Ollama for a model\'s num_ctx once, not on every long turn', async () => {
    const long = 'tell me about the sea '.repeat(400);
    for (const session of ['w1', 'w2']) {
      const response = await post('/v1/chat/completions', ask(long, { argo: { session } }));
      expect(response.status).toBe(200);
      const entry = await logged(response.headers.get('x-argo-turn-id') ?? '');
      expect(entry).toMatchObject({ num_ctx: expect.any(Number) as unknown, prompt_tokens_estimate: expect.any(Number) as unknown });
    }
    expect(ollama.requests.filter((request) => request.path === '/api/show')).toHaveLength(1);
  });
});

describe('routes', () => {
  it('/health and /v1/models speak for Ollama', async () => {
    expect(await (await fetch(`${serve.url}/health`)).json()).toEqual({ status: 'ok', ollama: { reachable: true, version: CURRENT_VERSION } });
    const models = await client.models.list();
    expect(models.data).toEqual([{ id: 'argo:latest', object: 'model', created: 1768469400, owned_by: 'ollama' }]);
  });

  it('/v1/models/{id}: one model as the list has it, names with a tag or a namespace; a missing one is the chat request\'s 404', async () => {
    ollama.options.models = [{ name: 'argo:latest' }, { name: 'team/coder:1.5b' }];
    const entry = { object: 'model', created: 1768469400, owned_by: 'ollama' };
    expect(await client.models.retrieve('argo')).toEqual({ id: 'argo:latest', ...entry });
    expect(await client.models.retrieve('argo:latest')).toEqual({ id: 'argo:latest', ...entry });
    expect(await client.models.retrieve('team/coder:1.5b')).toEqual({ id: 'team/coder:1.5b', ...entry });
    // Unencoded, as curl sends it.
    expect(await (await fetch(`${serve.url}/v1/models/team/coder:1.5b`)).json()).toEqual({ id: 'team/coder:1.5b', ...entry });
    const missing = await client.models.retrieve('nope:1b').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found', param: 'model' });
    expect((missing as Error).message).toContain(`model "nope:1b" not found on Ollama at ${ollama.url}; installed: argo:latest, team/coder:1.5b`);
    // An embedding model listed first is not suggested: it could not answer a chat either.
    ollama.options.models = [{ name: 'all-minilm:latest', capabilities: ['embedding'] }, { name: 'argo:latest', capabilities: ['completion'] }];
    const embedding = await fetch(`${serve.url}/v1/models/nope:1b`);
    expect(embedding.status).toBe(404);
    expect(((await embedding.json()) as { error: { message: string } }).error.message).toMatch(/or use an installed one \("model": "argo:latest"\)$/);
    // A name Ollama would not take is the 400 a chat request for it gets, not a model found or a pull to try.
    const refusalOf = async (response: Promise<Response>) => {
      const answered = await response;
      return [answered.status, ((await answered.json()) as { error: { code: string; param: string; message: string } }).error];
    };
    for (const [id, model] of [['argo%20', 'argo '], ['argo/', 'argo/']] as const) {
      const [status, error] = await refusalOf(fetch(`${serve.url}/v1/models/${id}`));
      expect([status, error]).toEqual([400, expect.objectContaining({ code: 'invalid_value', param: 'model', message: expect.stringContaining('not a model name Ollama takes') as string })]);
      expect(await refusalOf(post('/v1/chat/completions', { ...ask('hi'), model }))).toEqual([400, expect.objectContaining({ code: 'invalid_value', param: 'model', message: expect.stringContaining('not a model name Ollama takes') as string })]);
    }
  });

  it('plain mode: the messages go as they are, the turn is logged in session api', async () => {
    // Fields the SDK marks deprecated, which clients still send.
    const legacyFields: Record<string, number> = { max_tokens: 50, seed: 3 };
    const { data, response } = await client.chat.completions
      .create({ model: 'argo', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'part one' }, { type: 'text', text: 'part two' }] }], temperature: 0.1, ...legacyFields })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('You said: part one\npart two');
    expect(JSON.parse(chatBodies().at(-1) ?? '')).toEqual({
      model: 'argo',
      messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'part one\npart two' }],
      stream: true,
      // top_p: OpenAI's default, as Ollama's own OpenAI layer sends it when the client leaves it out.
      options: { temperature: 0.1, top_p: 1, seed: 3, num_predict: 50 },
    });
    const id = response.headers.get('x-argo-turn-id') ?? '';
    const entry = await logged(id);
    expect(entry).toMatchObject({ session: 'api', user_prompt: 'part one\npart two', model_response: 'You said: part one\npart two', status: 'ok', client_messages: 2 });
    expect(data.usage?.completion_tokens).toBe((entry?.timings as { eval_count: number }).eval_count);
    // The client's messages are not logged: rerun says so instead of blaming a changed config.
    expect(await runArgo(['rerun', id], { home, host: ollama.url })).toMatchObject({
      code: 1,
      stderr: `argo: cannot rerun: turn ${id} was asked through argo serve with the client's own 2 messages, which are not logged, so its request cannot be rebuilt; send it again from the client\n`,
    });
  });

  it('plain mode sampling: the client\'s value, else config.json\'s, else OpenAI\'s default; Argo mode adds none', async () => {
    await client.chat.completions.create(ask('defaults'));
    expect(JSON.parse(chatBodies().at(-1) ?? '')).toMatchObject({ options: { temperature: 1, top_p: 1 } });
    const configured = tempHome({ ...config, options: { temperature: 0.4 } });
    const second = await startServe({ home: configured, host: ollama.url });
    try {
      const other = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      await other.chat.completions.create(ask('configured'));
      expect((JSON.parse(chatBodies().at(-1) ?? '') as { options: unknown }).options).toEqual({ temperature: 0.4, top_p: 1 });
      await other.chat.completions.create(ask('client', { top_p: 0.5 }));
      expect((JSON.parse(chatBodies().at(-1) ?? '') as { options: unknown }).options).toEqual({ temperature: 0.4, top_p: 0.5 });
      await other.chat.completions.create(ask('argo mode', { argo: { session: 'sampling' } }) as ChatCompletionCreateParamsNonStreaming);
      expect((JSON.parse(chatBodies().at(-1) ?? '') as { options: unknown }).options).toEqual({ temperature: 0.4 });
    } finally {
      await second.stop();
    }
  });

  it('a thinking model: reasoning_effort becomes think, the reasoning comes back as `reasoning`, as from Ollama\'s own OpenAI layer', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'thinking'] }];
    ollama.options.thinking = 'The user wants depth.';
    try {
      const whole = await client.chat.completions.create({ ...ask('think hard'), reasoning_effort: 'high' });
      expect(JSON.parse(chatBodies()[0] ?? '{}')).toMatchObject({ think: 'high' });
      const answered = whole.choices[0]?.message;
      expect(answered).toMatchObject({ content: 'You said: think hard', reasoning: 'The user wants depth.' });
      // The client passes the message back as it came; its reasoning reaches Ollama as `thinking`. `reasoning.effort` wins over `reasoning_effort`.
      const followUp = { model: 'argo', messages: [{ role: 'user', content: 'think hard' }, answered, { role: 'user', content: 'and?' }], reasoning: { effort: 'none' }, reasoning_effort: 'high' };
      await client.chat.completions.create(followUp as unknown as ChatCompletionCreateParamsNonStreaming);
      expect(JSON.parse(chatBodies()[1] ?? '{}')).toMatchObject({ think: false, messages: [{ role: 'user' }, { role: 'assistant', content: 'You said: think hard', thinking: 'The user wants depth.' }, { role: 'user' }] });
      const stream = await client.chat.completions.create({ ...ask('go'), reasoning_effort: 'minimal', stream: true });
      let reasoning = '';
      let content = '';
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as { content?: string | null; reasoning?: string } | undefined;
        reasoning += delta?.reasoning ?? '';
        content += delta?.content ?? '';
      }
      expect(JSON.parse(chatBodies()[2] ?? '{}')).toMatchObject({ think: 'low' });
      expect({ reasoning, content }).toEqual({ reasoning: 'The user wants depth.', content: 'You said: go' });
      // Logged as the CLI logs it.
      await loggedLike({ model_response: 'You said: go', thinking: 'The user wants depth.' });
    } finally {
      ollama.options.thinking = undefined;
    }
  });

  it('streams with include_usage; curl -N sees exact SSE framing', async () => {
    const stream = await client.chat.completions.create({ ...ask('count with me'), stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    const argo: unknown[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
      if ('argo' in chunk) argo.push(chunk.argo);
    }
    expect(text).toBe('You said: count with me');
    expect(usage?.total_tokens).toBeGreaterThan(0);
    // On the finish chunk and on the usage chunk, the last one.
    expect(argo).toHaveLength(2);
    expect(argo[1]).toEqual(argo[0]);
    expect(argo[0]).toMatchObject({ status: 'ok', log: 'written' });
    const { spawn } = await import('node:child_process');
    const curl = spawn('curl', ['-sN', '-H', 'content-type: application/json', '-d', JSON.stringify(ask('raw', { stream: true })), `${serve.url}/v1/chat/completions`]);
    let out = '';
    curl.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    await new Promise((resolve) => curl.on('close', resolve));
    expect(out).toMatch(/^data: \{"id":"chatcmpl-[\w-]+","object":"chat.completion.chunk"/);
    expect(out.endsWith('\n\ndata: [DONE]\n\n')).toBe(true);
  });

  it("Argo mode with a client's response_format: logged by name, and rerun says why it cannot rebuild the request", async () => {
    const { response } = await client.chat.completions
      .create({ ...ask('list three beavers'), response_format: { type: 'json_object' }, argo: { session: 'formats' } } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    const id = response.headers.get('x-argo-turn-id') ?? '';
    expect(await logged(id)).toMatchObject({ session: 'formats', client_fields: ['format'] });
    expect(await runArgo(['rerun', id], { home, host: ollama.url })).toMatchObject({
      code: 1,
      stderr: `argo: cannot rerun: turn ${id} was asked through argo serve with the client's format, which is not logged, so its request cannot be rebuilt; send it again from the client\n`,
    });
  });

  it('Argo mode with half an emoji (a lone surrogate): sent as the log keeps it (U+FFFD), so rerun proves it', async () => {
    const response = await post('/v1/chat/completions', '{"model":"argo","messages":[{"role":"user","content":"Explain \\ud83d this"}],"argo":{"session":"halves"}}');
    expect(response.status).toBe(200);
    const id = response.headers.get('x-argo-turn-id') ?? '';
    expect(await logged(id)).toMatchObject({ user_prompt: 'Explain \ufffd this' });
    expect(chatBodies().at(-1)).toContain('"content":"Explain \ufffd this"');
    expect(await runArgo(['rerun', id, '--explain', '--json'], { home, host: ollama.url })).toMatchObject({ code: 0, stderr: '' });
  });

  it('sessions: list, search, show exactly as the CLI prints them, retitle', async () => {
    const { response } = await client.chat.completions.create({ ...ask('tell me about otters'), argo: { session: 'animals' } } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    await logged(response.headers.get('x-argo-turn-id') ?? '');
    const cliList = await runArgo(['sessions', '--json'], { home, host: ollama.url });
    expect(await (await fetch(`${serve.url}/api/sessions`)).json()).toEqual(JSON.parse(cliList.stdout));
    const found = (await (await fetch(`${serve.url}/api/sessions?q=OTTERS`)).json()) as { name: string }[];
    expect(found.map((s) => s.name)).toEqual(['animals']);
    expect(await (await fetch(`${serve.url}/api/sessions?q=nothing-like-this`)).json()).toEqual([]);
    const cliShow = await runArgo(['sessions', 'show', 'animals', '--json'], { home, host: ollama.url });
    expect(await (await fetch(`${serve.url}/api/sessions/animals`)).json()).toEqual(JSON.parse(cliShow.stdout));
    expect((await fetch(`${serve.url}/api/sessions/nobody`)).status).toBe(404);
    const patched = await fetch(`${serve.url}/api/sessions/animals`, { method: 'PATCH', body: JSON.stringify({ title: 'Otters' }) });
    expect(await patched.json()).toMatchObject({ name: 'animals', title: 'Otters' });
    expect(JSON.parse(readFileSync(join(home, 'sessions', 'animals.json'), 'utf8'))).toMatchObject({ title: 'Otters' });
    const bad = await fetch(`${serve.url}/api/sessions/animals`, { method: 'PATCH', body: JSON.stringify({ title: ['x'] }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { param: 'title' } });
  });

  it('a PATCH racing turns on the same session: the title and every turn\'s count survive', async () => {
    const first = await post('/v1/chat/completions', ask('the first question', { argo: { session: 'race' } }));
    await logged(first.headers.get('x-argo-turn-id') ?? '');
    // Each turn's record update and the title's change come one at a time under the session's lock.
    const turns = Array.from({ length: 6 }, (_, i) => post('/v1/chat/completions', ask(`question ${i}`, { argo: { session: 'race' } })));
    const patches = Array.from({ length: 3 }, () => fetch(`${serve.url}/api/sessions/race`, { method: 'PATCH', body: JSON.stringify({ title: 'Raced' }) }));
    const answered = await Promise.all([...turns, ...patches]);
    expect(answered.map((response) => response.status)).toEqual(Array.from({ length: 9 }, () => 200));
    await waitFor(() => expect(JSON.parse(readFileSync(join(home, 'sessions', 'race.json'), 'utf8'))).toMatchObject({ title: 'Raced', turns: 7 }));
  });

  // The openai client reaches Argo's own routes with absolute URLs, as docs/serve.md shows.
  it('Argo\'s own routes through the openai client: health, sessions, jobs (stream included), stop', async () => {
    const B = serve.url;
    expect(await client.get(`${B}/health`)).toMatchObject({ status: 'ok' });
    const { job_id } = await client.post<{ job_id: string }>(`${B}/api/jobs`, { body: { ...ask('Write a long story'), argo: { session: 'stories' } } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await client.get<Stream<OpenAI.ChatCompletionChunk>>(`${B}/api/jobs/${job_id}/stream`, { stream: true })) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('You said: Write a long story');
    expect(chunks.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { job_id, state: 'completed' } });
    expect(await client.get(`${B}/api/jobs/${job_id}`)).toMatchObject({ state: 'completed', session: 'stories', model: 'argo' });
    expect(await client.delete(`${B}/api/jobs/${job_id}`)).toMatchObject({ state: 'completed' });
    await logged((await client.get<{ turn_id: string }>(`${B}/api/jobs/${job_id}`)).turn_id);
    expect(await client.get(`${B}/api/sessions`, { query: { q: 'long story' } })).toEqual([expect.objectContaining({ name: 'stories' })]);
    expect(await client.patch(`${B}/api/sessions/stories`, { body: { title: 'Stories' } })).toMatchObject({ name: 'stories', title: 'Stories' });
    expect(await client.get(`${B}/api/sessions/stories`)).toMatchObject({ session: { name: 'stories', title: 'Stories' } });
    expect(await client.post(`${B}/api/stop`)).toEqual({ stop: true, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) as string });
    expect(await client.delete(`${B}/api/stop`)).toEqual({ stop: false, since: null });
  });

  it('/api/stop sets, reports (since when) and clears the stop file', async () => {
    expect(await (await fetch(`${serve.url}/api/stop`)).json()).toEqual({ stop: false, since: null });
    expect(await (await post('/api/stop', '')).json()).toEqual({ stop: true, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) as string });
    expect(statSync(join(home, 'STOP')).isFile()).toBe(true);
    // When it was set, as `argo stop --json` tells it: the file's time.
    expect(await (await fetch(`${serve.url}/api/stop`)).json()).toEqual({ stop: true, since: statSync(join(home, 'STOP')).mtime.toISOString() });
    expect(await (await fetch(`${serve.url}/api/stop`, { method: 'DELETE' })).json()).toEqual({ stop: false, since: null });
  });
});

describe('Argo mode', () => {
  it('builds a byte-identical Ollama request to argo -s NAME --replay SPEC', async () => {
    for (const prompt of ['what is a closure?', 'and a generator?', 'explain the difference']) {
      expect((await runArgo(['-s', 'lang', prompt], { home, host: ollama.url })).code).toBe(0);
    }
    for (const spec of ['last:2', 'session']) {
      ollama.requests.length = 0;
      const cli = await runArgo(['-s', 'lang', '--replay', spec, '--no-log', 'so which one should I use?'], { home, host: ollama.url });
      expect(cli.code).toBe(0);
      const [cliBody] = chatBodies();
      const { response } = await client.chat.completions.create({ ...ask('so which one should I use?'), argo: { session: 'lang', replay: spec } } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
      await logged(response.headers.get('x-argo-turn-id') ?? '');
      const serveBody = chatBodies()[1];
      expect(serveBody).toBe(cliBody);
      expect((JSON.parse(serveBody ?? '{}') as { messages: unknown[] }).messages.length).toBeGreaterThan(3);
    }
    // The same holds with X-Argo-* headers and a streamed answer.
    ollama.requests.length = 0;
    await runArgo(['-s', 'lang', '--replay', 'last:1', '--persona', 'neutral', '--no-log', 'ok'], { home, host: ollama.url });
    const { data: stream, response } = await client.chat.completions.create({ ...ask('ok'), stream: true }, { headers: { 'X-Argo-Session': 'lang', 'X-Argo-Replay': 'last:1' } }).withResponse();
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    await logged(response.headers.get('x-argo-turn-id') ?? '');
    expect(chunks.length).toBeGreaterThan(2);
    expect(chatBodies()[1]).toBe(chatBodies()[0]);
    // A text area's trailing line break and edge blanks are no part of the question, as the shell's are not.
    ollama.requests.length = 0;
    await runArgo(['-s', 'lang', '--replay', 'last:1', '--no-log', '  and which is faster?  '], { home, host: ollama.url });
    const blanks = await client.chat.completions.create({ ...ask(' and which is faster?\n'), argo: { session: 'lang', replay: 'last:1' } } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    await logged(blanks.response.headers.get('x-argo-turn-id') ?? '');
    expect(chatBodies()[1]).toBe(chatBodies()[0]);
    expect(chatBodies()[0]).toContain('"content":"and which is faster?"');
  });

  it('config.json\'s "tools" are not applied: the request is argo --tools none\'s, and one naming tools is --tools with that list', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    const toolsHome = tempHome({ ...config, tools: ['fs'] });
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-serve-root-')));
    for (const prompt of ['what is a closure?', 'and a generator?']) expect((await runArgo(['-s', 'lang', '--tools', 'none', prompt], { home: toolsHome, host: ollama.url, cwd: root })).code).toBe(0);
    const served = await startServe({ home: toolsHome, host: ollama.url, args: ['--root', root] });
    try {
      for (const [flags, argo] of [[['--tools', 'none'], {}], [['--tools', 'fs,memo', '--root', root], { tools: 'fs,memo' }]] as const) {
        ollama.requests.length = 0;
        const cli = await runArgo(['-s', 'lang', '--replay', 'session', ...flags, '--no-log', 'so which one should I use?'], { home: toolsHome, host: ollama.url, cwd: root });
        expect(cli.code).toBe(0);
        const [cliBody] = chatBodies();
        const response = await post('/v1/chat/completions', ask('so which one should I use?', { argo: { session: 'lang', replay: 'session', ...argo } }), {}, served.url);
        expect(response.status).toBe(200);
        await waitFor(() => expect(logLines(toolsHome).filter((line) => line.id === response.headers.get('x-argo-turn-id'))).toHaveLength(1));
        expect(chatBodies()[1]).toBe(cliBody);
        const sent = JSON.parse(cliBody ?? '{}') as { messages: unknown[]; tools?: { function: { name: string } }[] };
        expect(sent.tools?.map((tool) => tool.function.name)).toEqual(argo.tools ? expect.arrayContaining(['read_file', 'memo']) : undefined);
        expect(sent.messages.length).toBeGreaterThan(3);
      }
    } finally {
      await served.stop();
    }
  });

  it('replay skipping a damaged log line says so on the operator\'s log, as the CLI says it on stderr', async () => {
    const damagedHome = tempHome();
    for (const prompt of ['first', 'second']) expect((await runArgo(['-s', 'dmg', prompt], { home: damagedHome, host: ollama.url })).code).toBe(0);
    const [logFile] = readdirSync(join(damagedHome, 'logs')).filter((name) => name.endsWith('.log'));
    const path = join(damagedHome, 'logs', defined(logFile));
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace('"status":"ok"', '"status":1234'));
    const served = await startServe({ home: damagedHome, host: ollama.url });
    try {
      const response = await post('/v1/chat/completions', ask('and now?', { argo: { session: 'dmg', replay: 'session' } }), {}, served.url);
      expect(response.status).toBe(200);
      const id = response.headers.get('x-argo-turn-id') ?? '';
      await waitFor(() => expect(served.stderr()).toContain(`argo serve: turn ${id}: skipped 1 unreadable log line; run "argo logs check" to list them\n`));
    } finally {
      await served.stop();
    }
  });

  it('sampling values and reasoning effort are what -o and --think are to the CLI: the same bytes, the same logged options', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'thinking'] }];
    expect((await runArgo(['-s', 'tuned', 'first question'], { home, host: ollama.url })).code).toBe(0);
    ollama.requests.length = 0;
    const cli = await runArgo(['-s', 'tuned', '--replay', 'last:1', '-o', 'top_p=0.9', '-o', 'temperature=0.2', '--think', 'low', '--no-log', 'and now?'], { home, host: ollama.url });
    expect(cli.code).toBe(0);
    const { response } = await client.chat.completions
      .create({ ...ask('and now?'), top_p: 0.9, temperature: 0.2, reasoning_effort: 'low', argo: { session: 'tuned', replay: 'last:1' } } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    const entry = await logged(response.headers.get('x-argo-turn-id') ?? '');
    const [cliBody, serveBody] = chatBodies();
    expect(serveBody).toBe(cliBody);
    // Ordered as the CLI orders them (temperature, seed, num_ctx, then by name), whatever order the client used.
    expect(Object.keys((JSON.parse(serveBody ?? '{}') as { options: object }).options)).toEqual(['temperature', 'top_p']);
    expect(entry).toMatchObject({ options: { temperature: 0.2, top_p: 0.9 }, think: 'low' });
  });

  it('a second server on the same data home with ARGO_REPLAY: its default replay is the CLI\'s, and both log to one log', async () => {
    const env = { ARGO_REPLAY: 'last:2' };
    const second = await startServe({ home, host: ollama.url, env });
    try {
      for (const prompt of ['is rust fast?', 'is go fast?', 'is python fast?']) expect((await runArgo(['-s', 'speed', prompt], { home, host: ollama.url })).code).toBe(0);
      ollama.requests.length = 0;
      expect((await runArgo(['-s', 'speed', '--no-log', 'which is faster?'], { home, host: ollama.url, env })).code).toBe(0);
      const response = await post('/v1/chat/completions', ask('which is faster?', { argo: { session: 'speed' } }), {}, second.url);
      expect(response.status).toBe(200);
      const entry = await logged(response.headers.get('x-argo-turn-id') ?? '');
      expect(chatBodies()[1]).toBe(chatBodies()[0]);
      expect(entry?.replay_policy).toMatchObject({ entries_used: 2 });
      // The first server, sharing the log and the session, sees the second one's turn.
      const next = await post('/v1/chat/completions', ask('thanks', { argo: { session: 'speed', replay: 'last:1' } }));
      await logged(next.headers.get('x-argo-turn-id') ?? '');
      expect(chatBodies()[2]).toContain('which is faster?');
    } finally {
      await second.stop();
    }
  });

  it('returns X-Argo-Turn-Id and the argo field as logged', async () => {
    const { data, response } = await client.chat.completions.create({ ...ask('go on'), argo: { session: 'lang', replay: 'last:1' } } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    const id = response.headers.get('x-argo-turn-id') ?? '';
    const entry = await logged(id);
    expect((data as unknown as { argo: unknown }).argo).toEqual({ turn_id: id, status: 'ok', replay_policy: entry?.replay_policy, log: 'written' });
    expect(response.headers.get('x-argo-log')).toBe('written');
    expect(entry?.replay_policy).toMatchObject({ entries_used: 1 });
  });

  it('a last user message without text is refused as the CLI refuses no prompt: nothing sent to Ollama, nothing logged', async () => {
    const cli = await runArgo(['-s', 'img', '   '], { home, host: ollama.url });
    expect([cli.code, cli.stderr]).toEqual([2, expect.stringMatching(/^argo: no prompt: /) as unknown]);
    const image: OpenAI.ChatCompletionContentPart = { type: 'image_url', image_url: { url: 'data:image/png;base64,QUJD' } };
    for (const [content, said] of [['', 'send the question as its text'], ['   ', 'send the question as its text'], [[image], 'or send the images in plain mode (no argo object, no X-Argo-* header)']] as const) {
      const refused = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content }], argo: { session: 'img' } } as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      const { error } = refused as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error).toMatchObject({ param: 'messages', code: 'empty_user_message' });
      expect((error as { message: string }).message).toMatch(/^the last user message has no text, /);
      expect((error as { message: string }).message.endsWith(said)).toBe(true);
    }
    const job = await post('/api/jobs', { model: 'argo', messages: [{ role: 'user', content: ' ' }], argo: { session: 'img' } });
    expect([job.status, await job.json()]).toEqual([400, { error: expect.objectContaining({ param: 'messages', code: 'empty_user_message' }) as unknown }]);
    expect(chatBodies()).toEqual([]);
    expect(logLines(home).filter((line) => line.session === 'img')).toEqual([]);
    // Plain mode sends an image alone, as Ollama takes it.
    await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: [image] }] });
    expect(JSON.parse(chatBodies().at(-1) ?? '')).toMatchObject({ messages: [{ role: 'user', content: '', images: ['QUJD'] }] });
  });

  it('an argo object makes Argo mode, empty too; a blank X-Argo-* header does not; a misspelt Argo field is a 400 naming it', async () => {
    const cli = await runArgo(['--no-log', 'which is better?'], { home, host: ollama.url });
    expect(cli.code).toBe(0);
    const { response } = await client.chat.completions
      .create({ model: 'argo', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'which is better?' }], argo: {} } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    const entry = await logged(response.headers.get('x-argo-turn-id') ?? '');
    // What `argo "…"` sends: the configured session and replay, no client messages, no sampling defaults.
    expect(chatBodies()[1]).toBe(chatBodies()[0]);
    expect(entry?.session).not.toBe('api');
    ollama.requests.length = 0;
    // Raw HTTP, so the empty header is sent as it is (as a proxy may pass one on).
    const plain = await post('/v1/chat/completions', { model: 'argo', messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }] }, { 'X-Argo-Tools': '', 'X-Argo-Session': ' ' });
    expect(plain.status).toBe(200);
    expect((await logged(plain.headers.get('x-argo-turn-id') ?? ''))?.session).toBe('api');
    expect(JSON.parse(chatBodies()[0] ?? '')).toMatchObject({ messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }], options: { temperature: 1, top_p: 1 } });
    ollama.requests.length = 0;
    const typo = await client.chat.completions.create({ ...ask('hi'), argo: { sesion: 'work' } } as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((error: unknown) => error);
    expect(typo).toBeInstanceOf(OpenAI.BadRequestError);
    expect((typo as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({
      message: 'invalid "argo.sesion": unknown Argo field (did you mean "session"?); the Argo fields are session, replay, reason, budget, persona, verbosity, mode and tools',
      type: 'invalid_request_error',
      param: 'argo.sesion',
      code: 'invalid_value',
    });
    expect(chatBodies()).toEqual([]);
  });

  it('refuses unknown personas and unknown toolsets with a 400 naming the field', async () => {
    for (const [field, message] of [['persona', /^argo\.persona: unknown persona "nobody"/], ['mode', /^argo\.mode: unknown mode "nobody"/]] as const) {
      const style = await post('/v1/chat/completions', ask('x', { argo: { [field]: 'nobody' } }));
      expect(style.status).toBe(400);
      const body = (await style.json()) as { error: { message: string } };
      expect(body).toMatchObject({ error: { param: `argo.${field}`, code: 'invalid_value' } });
      expect(body.error.message).toMatch(message);
    }
    // Quoted as sent, the data home's path too: hidden only there, it would confirm a guess of it.
    const guess = await post('/v1/chat/completions', ask('x', { argo: { persona: home } }));
    expect(guess.status).toBe(400);
    expect(((await guess.json()) as { error: { message: string } }).error.message).toMatch(`argo.persona: unknown persona ${JSON.stringify(home)}`);
    const tools = await post('/v1/chat/completions', ask('x', { argo: { tools: ['fs', 'nosuchset'] } }));
    expect(tools.status).toBe(400);
    const refused = (await tools.json()) as { error: { message: string } };
    expect(refused).toMatchObject({ error: { param: 'argo.tools', code: 'unknown_tool' } });
    expect(refused.error.message).toMatch(/^argo\.tools: unknown toolset or tool "nosuchset"/);
  });

  it.each([
    ['X-Argo-Persona', 'nobody', 'X-Argo-Persona: unknown persona "nobody"; use one of this server\'s personas (critic, expert, friendly, neutral, teacher), or ask the server\'s operator to add it under "personas" in config.json'],
    ['X-Argo-Mode', 'nobody', 'X-Argo-Mode: unknown mode "nobody"; use one of this server\'s modes (code, review, shell, writing), or ask the server\'s operator to add it under "modes" in config.json'],
    ['X-Argo-Reason', 'clarification', 'X-Argo-Reason needs X-Argo-Replay: last:N or session'],
  ])('an unknown or unusable value sent as %s is a 400 naming the header', async (header, value, message) => {
    const refused = await post('/v1/chat/completions', ask('x'), { [header]: value });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: { message, type: 'invalid_request_error', param: header, code: 'invalid_value' } });
  });
});

describe('log probabilities', () => {
  /** What an OpenAI client gets for a token Ollama sent: bytes null where Ollama left them out, top_logprobs [] where none. */
  const openAi = (entry: FakeLogprob) => ({ token: entry.token, logprob: entry.logprob, bytes: entry.bytes ?? null, top_logprobs: (entry.top_logprobs ?? []).map((top) => ({ token: top.token, logprob: top.logprob, bytes: top.bytes ?? null })) });
  const expected = (tokens: string[], top: number) => tokens.map((token) => openAi(fakeLogprob(token, top)));
  const sentToOllama = () => JSON.parse(chatBodies().at(-1) ?? '{}') as Record<string, unknown>;

  it('streamed, with top_logprobs: each chunk carries its token\'s, alternatives and bytes included (an empty token\'s null); the log line none', async () => {
    ollama.options.tokens = ['Hi', ' é', '', '!'];
    const { data: stream, response } = await client.chat.completions.create({ ...ask('hi'), stream: true, logprobs: true, top_logprobs: 2 }).withResponse();
    const chunks: [string | null | undefined, unknown][] = [];
    for await (const chunk of stream) chunks.push([chunk.choices[0]?.delta.content, chunk.choices[0]?.logprobs ?? null]);
    expect(sentToOllama()).toMatchObject({ logprobs: true, top_logprobs: 2 });
    expect(chunks).toEqual([
      ['', null],
      ...['Hi', ' é', '', '!'].map((token) => [token, { content: expected([token], 2), refusal: null }]),
      [undefined, null],
    ]);
    expect(expected([''], 2)[0]).toMatchObject({ token: '', bytes: null });
    const entry = await logged(response.headers.get('x-argo-turn-id') ?? '');
    // The log names the fields the client asked with, and keeps none of the figures.
    expect(entry).toMatchObject({ status: 'ok', model_response: 'Hi é!', client_fields: ['logprobs', 'top_logprobs'] });
    expect(JSON.stringify({ ...entry, client_fields: [] })).not.toContain('logprob');
  });

  it('not streamed, without top_logprobs: all of them in order, no alternatives asked of Ollama; not asked, null and nothing asked', async () => {
    const whole = await client.chat.completions.create({ ...ask('one two'), logprobs: true });
    const sent = sentToOllama();
    expect(sent).toMatchObject({ logprobs: true });
    expect(sent).not.toHaveProperty('top_logprobs');
    expect(whole.choices[0]?.message.content).toBe('You said: one two');
    expect(whole.choices[0]?.logprobs).toEqual({ content: expected(['You', ' said:', ' one', ' two'], 0), refusal: null });
    const plain = await client.chat.completions.create(ask('one two'));
    expect(plain.choices[0]?.logprobs).toBeNull();
    expect(sentToOllama()).not.toHaveProperty('logprobs');
    const stream = await client.chat.completions.create({ ...ask('one two'), stream: true });
    for await (const chunk of stream) expect(chunk.choices[0]?.logprobs ?? null).toBeNull();
  });

  it('a thinking model calling a client tool: the reasoning\'s tokens on its chunks, the call\'s held-back tokens on chunks of empty content, the last on the call; whole, all of them', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'thinking', 'tools'] }];
    ollama.options.thinking = 'Need time.';
    ollama.options.reply = '';
    ollama.options.toolCalls = [{ function: { name: 'get_time', arguments: {} } }];
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }];
    const callTokens = JSON.stringify({ name: 'get_time', arguments: {} }).match(/[^]{1,4}/g) ?? [];
    const stream = await client.chat.completions.create({ ...ask('time?'), stream: true, logprobs: true, top_logprobs: 1, tools });
    const carried: [string, unknown][] = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      const delta = choice?.delta as { role?: string; content?: string | null; reasoning?: string; tool_calls?: unknown[] } | undefined;
      const piece = delta?.reasoning !== undefined ? 'reasoning' : delta?.tool_calls ? 'call' : delta?.content === '' && !delta.role ? 'held' : null;
      if (piece !== null) carried.push([piece, choice?.logprobs?.content]);
      else expect(choice?.logprobs ?? null).toBeNull();
    }
    expect(carried).toEqual([
      ['reasoning', expected(['Need'], 1)],
      ['reasoning', expected([' time.'], 1)],
      ...callTokens.slice(0, -1).map((token) => ['held', expected([token], 1)]),
      ['call', expected(callTokens.slice(-1), 1)],
    ]);
    const whole = await client.chat.completions.create({ ...ask('time?'), logprobs: true, tools });
    expect(whole.choices[0]).toMatchObject({ finish_reason: 'tool_calls', logprobs: { content: expected(['Need', ' time.', ...callTokens], 0), refusal: null } });
    expect(whole.choices[0]?.logprobs?.content).toHaveLength(whole.usage?.completion_tokens ?? -1);
  });

  it('Argo mode: the replayed request is the CLI\'s plus logprobs, and the answer carries them', async () => {
    expect((await runArgo(['-s', 'probs', 'what is a closure?'], { home, host: ollama.url })).code).toBe(0);
    ollama.requests.length = 0;
    expect((await runArgo(['-s', 'probs', '--replay', 'last:1', '--no-log', 'and a generator?'], { home, host: ollama.url })).code).toBe(0);
    const { response, data } = await client.chat.completions.create({ ...ask('and a generator?'), logprobs: true, top_logprobs: 1, argo: { session: 'probs', replay: 'last:1' } } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    await logged(response.headers.get('x-argo-turn-id') ?? '');
    const [cli, served] = chatBodies().map((body) => JSON.parse(body) as Record<string, unknown>);
    expect(served).toEqual({ ...cli, logprobs: true, top_logprobs: 1 });
    expect(data.choices[0]?.logprobs?.content).toEqual(expected(['You', ' said:', ' and', ' a', ' generator?'], 1));
  });

  it('top_logprobs as OpenAI takes it: a whole number 0–20, with "logprobs": true; otherwise a 400 naming it, nothing sent to Ollama', async () => {
    const refused = async (extra: Partial<ChatCompletionCreateParamsNonStreaming>) => {
      const error = await client.chat.completions.create({ ...ask('hi'), ...extra }).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const { param, code, message } = (error as InstanceType<typeof OpenAI.BadRequestError>).error as { param: string; code: string; message: string };
      return { param, code, message };
    };
    expect(await refused({ logprobs: true, top_logprobs: 21 })).toEqual({ param: 'top_logprobs', code: 'invalid_value', message: 'invalid "top_logprobs": must be a whole number between 0 and 20' });
    expect(await refused({ top_logprobs: 3 })).toEqual({ param: 'top_logprobs', code: 'invalid_value', message: 'invalid "top_logprobs": needs "logprobs": true; send it too, or leave "top_logprobs" out' });
    expect(chatBodies()).toEqual([]);
    const edge = await client.chat.completions.create({ ...ask('hi'), logprobs: true, top_logprobs: 20 });
    expect(edge.choices[0]?.logprobs?.content?.[0]?.top_logprobs).toHaveLength(20);
  });
});

describe('client tools', () => {
  it('a full round: the call goes out, the result comes in, the final answer', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    ollama.options.toolCalls = (body) => {
      const messages = body.messages as { role: string }[];
      return messages.at(-1)?.role === 'tool' ? undefined : [{ function: { name: 'get_time', arguments: { zone: 'UTC' } } }];
    };
    ollama.options.reply = (body) => ((body.messages as { role: string }[]).at(-1)?.role === 'tool' ? 'It is noon.' : '');
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'what time is it?' }];
    const first = await client.chat.completions.create({ model: 'argo', messages, tools });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const call = choice?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error('no function call');
    expect(call.function).toEqual({ name: 'get_time', arguments: '{"zone":"UTC"}' });
    expect((JSON.parse(chatBodies().at(-1) ?? '') as { tools: unknown }).tools).toEqual(tools);
    messages.push(choice?.message as OpenAI.ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: '{"time":"12:00"}' });
    const stream = await client.chat.completions.create({ model: 'argo', messages, tools, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('It is noon.');
    const sent = JSON.parse(chatBodies().at(-1) ?? '') as { messages: unknown[] };
    // The call's id goes back as Ollama's own OpenAI layer sends it: on the call and on its result.
    expect(sent.messages.slice(1)).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ id: call.id, function: { name: 'get_time', arguments: { zone: 'UTC' } } }] },
      { role: 'tool', content: '{"time":"12:00"}', tool_name: 'get_time', tool_call_id: call.id },
    ]);
    // The call the client was answered with is in its turn's line (it was in none), and argo logs --tool finds it.
    const { turn_id: calling } = (first as unknown as { argo: { turn_id: string } }).argo;
    const entry = await logged(calling);
    expect(entry).toMatchObject({ model_response: '', client_fields: ['tools'], client_tool_calls: [{ id: call.id, name: 'get_time', arguments: { zone: 'UTC' } }] });
    const found = await runArgo(['logs', '--tool', 'get_time', '--json'], { home, host: ollama.url });
    expect(found.code).toBe(0);
    // Of this round's two turns, the one answered with the call (other tests' turns may have called it too).
    const turns = found.stdout.trim().split('\n').map((line) => JSON.parse(line) as { id: string; user_prompt: string });
    expect(turns.filter((turn) => turn.user_prompt === 'what time is it?').map((turn) => turn.id)).toEqual([calling]);
  });

  it("in Argo mode, a turn answered only with calls is logged tool_calls and left out of its session's replay (it was replayed as an empty answer)", async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    const lastUser = (body: Record<string, unknown>): string | undefined => (body.messages as { role: string; content: string }[]).findLast((m) => m.role === 'user')?.content;
    ollama.options.toolCalls = (body) => (lastUser(body) === 'what time is it' ? [{ function: { name: 'get_time', arguments: {} } }] : undefined);
    ollama.options.reply = (body) => (lastUser(body) === 'what time is it' ? '' : 'It is Tuesday.');
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }];
    const first = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'what time is it' }], tools, argo: { session: 'ct' } } as ChatCompletionCreateParamsNonStreaming);
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    const { argo } = first as unknown as { argo: { turn_id: string; status: string } };
    expect(argo.status).toBe('tool_calls');
    expect(await logged(argo.turn_id)).toMatchObject({ status: 'tool_calls', model_response: '', client_tool_calls: [{ name: 'get_time', arguments: {} }] });
    // Answered, not failed: argo last says what the answer was and exits 0.
    const last = await runArgo(['last', '-s', 'ct'], { home, host: ollama.url });
    expect([last.code, last.stdout, last.stderr]).toEqual([0, '', `argo: turn ${argo.turn_id} was answered with calls of argo serve's client's own tools ("get_time"), for that client to run\n`]);
    const second = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'and the date' }], tools, argo: { session: 'ct', replay: 'session' } } as ChatCompletionCreateParamsNonStreaming);
    expect(second.choices[0]?.message.content).toBe('It is Tuesday.');
    // Ollama got [.., user "what time is it", assistant "", user "and the date"]: now the question alone.
    const sent = (JSON.parse(chatBodies().at(-1) ?? '') as { messages: { role: string; content: string }[] }).messages;
    expect(sent.filter((message) => message.role !== 'system')).toEqual([{ role: 'user', content: 'and the date' }]);
    const { turn_id: asked } = (second as unknown as { argo: { turn_id: string } }).argo;
    expect(await logged(asked)).toMatchObject({ status: 'ok', replayed_ids: [], replay_policy: { entries_available: 0 } });
    const listed = await runArgo(['logs', '--status', 'tool_calls', '--session', 'ct', '--json'], { home, host: ollama.url });
    expect(listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id)).toEqual([argo.turn_id]);
  });

  it('a tool whose schema Ollama cannot read is a 400 naming the tool and the part, before Ollama is asked; streamed or not, a job too', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
      // Valid JSON Schema, but Ollama's ToolProperty is a Go struct: `true` fails the whole request there.
      { type: 'function', function: { name: 'get_date', parameters: { type: 'object', properties: { tz: true } } } },
    ];
    const param = 'tools[1].function.parameters.properties.tz';
    const message = `invalid "${param}": tool "get_date": Ollama cannot read its input schema: properties.tz must be an object (Ollama cannot read a true or false schema there); change that part of its schema, or leave the tool out`;
    const refusals = (): number => serve.stderr().match(/^POST \/v1\/chat\/completions 400 \d+ms session=-$/gm)?.length ?? 0;
    const before = refusals();
    for (const stream of [false, true]) {
      const refused = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'date?' }], tools, stream }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({ message, type: 'invalid_request_error', param, code: 'invalid_value' });
    }
    const job = await post('/api/jobs', ask('date?', { tools }));
    expect([job.status, await job.json()]).toEqual([400, { error: { message, type: 'invalid_request_error', param, code: 'invalid_value' } }]);
    // Like any other refused request: its line on stderr, no turn, nothing sent to Ollama.
    await waitFor(() => expect(refusals()).toBe(before + 2));
    expect(chatBodies()).toEqual([]);
    expect(logLines(home).filter((line) => line.user_prompt === 'date?')).toEqual([]);
  });

  it('a client that numbers each round\'s calls from call_0 again keeps every round, each result named after its own call; a result sent again as it was goes once', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    ollama.options.reply = 'Both done.';
    const tools: OpenAI.ChatCompletionTool[] = ['get_time', 'get_date'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: {} } } }));
    const round = (name: string): OpenAI.ChatCompletionMessageParam[] => [
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name, arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_0', content: `${name} result` },
    ];
    const answer = await client.chat.completions.create({ model: 'argo', tools, messages: [{ role: 'user', content: 'time, then date' }, ...round('get_time'), ...round('get_date'), { role: 'tool', tool_call_id: 'call_0', content: 'get_date result' }] });
    expect(answer.choices[0]?.message.content).toBe('Both done.');
    expect((JSON.parse(chatBodies().at(-1) ?? '') as { messages: unknown[] }).messages.slice(1)).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_0', function: { name: 'get_time', arguments: {} } }] },
      { role: 'tool', content: 'get_time result', tool_name: 'get_time', tool_call_id: 'call_0' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_0', function: { name: 'get_date', arguments: {} } }] },
      { role: 'tool', content: 'get_date result', tool_name: 'get_date', tool_call_id: 'call_0' },
    ]);
  });

  it('parallel calls that share an id, or have an empty one, reach Ollama all of them, with every result', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    ollama.options.reply = 'Noon and one.';
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: { tz: { type: 'string' } } } } }];
    for (const id of ['get_time', '']) {
      const calls = ['UTC', 'CET'].map((tz) => ({ id, type: 'function' as const, function: { name: 'get_time', arguments: JSON.stringify({ tz }) } }));
      const answer = await client.chat.completions.create({
        model: 'argo',
        tools,
        messages: [{ role: 'user', content: `times ${id}` }, { role: 'assistant', content: null, tool_calls: calls }, { role: 'tool', tool_call_id: id, content: '12:00' }, { role: 'tool', tool_call_id: id, content: '13:00' }],
      });
      const named = id === '' ? {} : { tool_name: 'get_time', tool_call_id: id };
      expect((JSON.parse(chatBodies().at(-1) ?? '') as { messages: unknown[] }).messages.slice(1)).toEqual([
        { role: 'assistant', content: '', tool_calls: ['UTC', 'CET'].map((tz) => ({ ...(id === '' ? {} : { id }), function: { name: 'get_time', arguments: { tz } } })) },
        { role: 'tool', content: '12:00', ...named },
        { role: 'tool', content: '13:00', ...named },
      ]);
      expect(await logged(answer.id.replace(/^chatcmpl-/, ''))).toMatchObject({ client_messages: 4 });
    }
  });

  it('calls Ollama sends one chunk each stream as calls of their own: finalChatCompletion has both, ids unique across rounds', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    // Without ids, as an Ollama before 0.12.10 sends them: Argo numbers them.
    ollama.options.callIds = 'scripted';
    ollama.options.rounds = () => ({
      toolCalls: [{ function: { name: 'get_time', arguments: { tz: 'UTC' } } }, { function: { name: 'get_date', arguments: { tz: 'CET' } } }],
      splitToolCalls: true,
    });
    const tools: OpenAI.ChatCompletionTool[] = ['get_time', 'get_date'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { tz: { type: 'string' } } } } }));
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'time and date?' }];
    const callsOf = async () => {
      const final = await client.chat.completions.stream({ model: 'argo', messages, tools }).finalChatCompletion();
      const message = defined(final.choices[0], 'a choice').message;
      expect(final.choices[0]?.finish_reason).toBe('tool_calls');
      messages.push(message);
      const calls = (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments) as unknown }));
      for (const call of calls) messages.push({ role: 'tool', tool_call_id: call.id, content: 'ok' });
      return calls;
    };
    expect(await callsOf()).toEqual([
      { id: 'call_1_0', name: 'get_time', args: { tz: 'UTC' } },
      { id: 'call_1_1', name: 'get_date', args: { tz: 'CET' } },
    ]);
    // The next round's generated ids differ from the first's, so the history keeps all four.
    expect(await callsOf()).toEqual([
      { id: 'call_2_0', name: 'get_time', args: { tz: 'UTC' } },
      { id: 'call_2_1', name: 'get_date', args: { tz: 'CET' } },
    ]);
    // Each turn's line has its calls under the ids its client was given.
    await waitFor(() => expect(logLines(home).filter((line) => line.user_prompt === 'time and date?').map((line) => line.client_tool_calls)).toEqual(
      [1, 2].map((round) => [
        { id: `call_${round}_0`, name: 'get_time', arguments: { tz: 'UTC' } },
        { id: `call_${round}_1`, name: 'get_date', arguments: { tz: 'CET' } },
      ]),
    ));
  });

  it('unset fields sent as null, as some clients send them, count as absent: in messages, tool calls, tools, parts and argo', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    ollama.options.reply = 'Noon.';
    const parameters = { type: 'object', properties: { tz: { type: 'string', default: null } } };
    const messages = [
      { role: 'user', content: [{ type: 'text', text: 'time?', image_url: null }], name: null },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: null, function: { name: 'get_time', arguments: '{}' } }] },
      { role: 'tool', content: 'noon', tool_call_id: 'c1', name: null },
      { role: 'tool', content: 'late', tool_call_id: null, name: 'get_time' },
    ];
    const tools = [
      { type: 'function', function: { name: 'get_time', description: null, parameters } },
      { type: 'function', function: { name: 'ping', parameters: null } },
    ];
    const answer = await client.chat.completions.create({ model: 'argo', messages, tools, response_format: { type: 'json_schema', json_schema: { name: 'time', schema: null } } } as unknown as ChatCompletionCreateParamsNonStreaming);
    expect(answer.choices[0]?.message.content).toBe('Noon.');
    expect(JSON.parse(chatBodies().at(-1) ?? '')).toMatchObject({
      messages: [
        { role: 'user', content: 'time?' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'get_time', arguments: {} } }] },
        { role: 'tool', content: 'noon', tool_name: 'get_time', tool_call_id: 'c1' },
        { role: 'tool', content: 'late', tool_name: 'get_time' },
      ],
      // The client's own schema keeps its null: only unset fields of the request are absent.
      tools: [{ type: 'function', function: { name: 'get_time', parameters } }, { type: 'function', function: { name: 'ping' } }],
      format: 'json',
    });
    const argo = await post('/v1/chat/completions', ask('hello', { argo: { session: 'nulls', persona: null, replay: null } }));
    expect(argo.status).toBe(200);
    expect(await logged(argo.headers.get('x-argo-turn-id') ?? '')).toMatchObject({ session: 'nulls', user_prompt: 'hello' });
  });

  it('with Ollama 0.12.10+, the model\'s own call ids reach the client as they are', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    ollama.options.toolCalls = [{ function: { name: 'get_time', arguments: {} } }];
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }];
    const answer = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'time?' }], tools });
    expect(answer.choices[0]?.message.tool_calls?.[0]?.id).toMatch(OLLAMA_ID);
  });
});

describe('faults: the contract status, the turn logged, the server still up', () => {
  it('model missing → 404 model_not_found', async () => {
    const error = await client.chat.completions.create({ ...ask('x'), model: 'nope' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    // The fix in a client's terms: the request's "model", not the CLI's --model.
    expect((error as Error).message).toMatch(/Pull it with "ollama pull nope", or use an installed one \("model": "argo:latest"\)$/);
    // Not the last line: the previous test's turn may still be being written (responses end before their log line).
    await waitFor(() => expect(logLines(home).find((line) => line.model === 'nope')).toMatchObject({ status: 'error', session: 'api' }));
    await healthy();
  });

  it('busy after retries → 503', async () => {
    ollama.setScenario({ busy: 5 });
    const error = await client.chat.completions.create({ ...ask('x'), stream: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: 'ollama_busy' });
    expect(ollama.requests.filter((r) => r.path === '/api/chat')).toHaveLength(2);
    // Told when to come back: Ollama's own Retry-After (a proxy before it may send one), else 2 s.
    expect((error as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('2');
    ollama.setScenario({ busy: 2, busyRetryAfter: '11' });
    const raw = await post('/v1/chat/completions', ask('x'));
    expect(raw.status).toBe(503);
    expect(raw.headers.get('retry-after')).toBe('11');
    // Told at once, not asked again before the 11 s it said.
    expect(ollama.requests.filter((r) => r.path === '/api/chat')).toHaveLength(3);
    await healthy();
  });

  it("a cloud model's rate limit → 429 rate_limit_exceeded, its Retry-After passed on at once, Ollama not asked again sooner", async () => {
    ollama.setScenario({ busy: 2, busyAsRateLimit: true, busyRetryAfter: '20' });
    const raw = await post('/v1/chat/completions', ask('x'));
    expect(raw.status).toBe(429);
    expect(ollama.requests.filter((r) => r.path === '/api/chat')).toHaveLength(1);
    expect(raw.headers.get('retry-after')).toBe('20');
    expect(await raw.json()).toMatchObject({ error: { type: 'requests', code: 'rate_limit_exceeded', message: expect.stringContaining('is rate-limited (rate limit exceeded)') as string } });
    await healthy();
  });

  it('an error line mid-stream → an error chunk, no [DONE], partial text logged', async () => {
    ollama.options.reply = 'one two three four five';
    ollama.setScenario({ errorMidStream: { afterChunks: 2, message: 'runner crashed' } });
    const response = await post('/v1/chat/completions', ask('x', { stream: true }));
    expect(response.status).toBe(200);
    const id = response.headers.get('x-argo-turn-id') ?? '';
    const data = ssePayloads(await response.text());
    expect(data).not.toContain('[DONE]');
    expect(JSON.parse(data.at(-1) ?? '')).toMatchObject({ error: { type: 'api_error', message: expect.stringContaining('runner crashed') as string } });
    expect(await logged(id)).toMatchObject({ status: 'error', model_response: 'one two' });
    await healthy();
  });

  it('a dropped Ollama connection → an error chunk, partial text logged', async () => {
    ollama.options.reply = 'one two three four';
    ollama.setScenario({ dropAfter: 3, delayMs: 20 });
    const response = await post('/v1/chat/completions', ask('x', { stream: true }));
    const id = response.headers.get('x-argo-turn-id') ?? '';
    const data = ssePayloads(await response.text());
    expect(JSON.parse(data.at(-1) ?? '')).toMatchObject({ error: { code: 'ollama_dropped' } });
    expect(await logged(id)).toMatchObject({ status: 'error', model_response: 'one two three' });
    await healthy();
  });

  it('an error before any text is a real status, not a stream', async () => {
    ollama.setScenario({ runnerError: 'out of memory' });
    const response = await post('/v1/chat/completions', ask('x', { stream: true }));
    expect(response.status).toBe(502);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(await response.json()).toMatchObject({ error: { message: expect.stringContaining('out of memory') as string } });
    await healthy();
  });

  it.each<[string, object, boolean, string]>([
    ['a proxy\'s HTML 502 page', { proxyPage: { status: 502, body: '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n</html>\r\n' } }, false, 'answered HTTP 502: <html> <head><title>502 Bad Gateway</title></head> </html>'],
    ['an error of several lines mid-answer', { errorMidStream: { afterChunks: 2, message: 'boom\r\nline2\nargo: fake line' } }, true, 'mid-answer: boom line2 argo: fake line'],
    ['an error object mid-answer (a proxy\'s)', { malformedAfter: { afterChunks: 2, line: '{"error":{"message":"rate limit","type":"x"}}', then: 'end' } }, true, 'mid-answer: rate limit'],
    ['an empty error mid-answer', { malformedAfter: { afterChunks: 2, line: '{"error":""}', then: 'end' } }, true, 'mid-answer: an empty error'],
    ['an error object as a 429', { proxyPage: { status: 429, body: '{"error":{"message":"slow down","type":"x"}}', type: 'application/json' } }, false, 'is rate-limited (slow down)'],
  ])('%s: the error message and the logged error are one line', async (_case, scenario, stream, ending) => {
    ollama.options.reply = 'one two three';
    ollama.setScenario(scenario);
    const response = await post('/v1/chat/completions', ask('x', { stream }));
    const text = await response.text();
    const body = stream ? (ssePayloads(text).at(-1) ?? '') : text;
    const { error } = JSON.parse(body) as { error: { message: string } };
    expect(error.message.endsWith(ending)).toBe(true);
    await loggedLike({ status: 'error', error: error.message });
    await healthy();
  });

  it('a client that disconnects mid-stream cancels its Ollama request; the turn is interrupted', async () => {
    ollama.options.reply = 'a b c d e f';
    ollama.setScenario({ hang: 2 });
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ ...ask('x'), stream: true }, { signal: controller.signal });
    const seen: string[] = [];
    for await (const chunk of stream) {
      seen.push(chunk.choices[0]?.delta.content ?? '');
      if (seen.join('') === 'a b') controller.abort();
    }
    const chat = ollama.requests.filter((r) => r.path === '/api/chat').at(-1);
    await chat?.settled;
    expect(chat?.clientAborted).toBe(true);
    await loggedLike({ status: 'interrupted', model_response: 'a b', error: 'the client disconnected' });
    await healthy();
  });

  it('a slow client gets every byte and does not hold up the log', async () => {
    ollama.options.tokens = Array.from({ length: 400 }, (_, i) => `w${i} `);
    const { status, headers, read } = await rawPost('/v1/chat/completions', ask('slow', { stream: true }));
    expect(status).toBe(200);
    const id = headers['x-argo-turn-id'] as string;
    // The answer is complete and logged while the client has not read a byte of the body.
    await waitFor(() => expect(turnsOf(id)).toEqual([expect.objectContaining({ status: 'ok' })]));
    const data = ssePayloads(await read());
    const text = data.slice(0, -1).map((d) => (JSON.parse(d) as { choices: { delta: { content?: string } }[] }).choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(ollama.options.tokens.join(''));
    expect(data.at(-1)).toBe('[DONE]');
  });

  it('a turn the log cannot take: answered all the same, saved to rescued/, and the client told so (X-Argo-Log, argo.log)', async () => {
    const blockedHome = tempHome(config);
    // A folder where today's log goes (and tomorrow's, should the day turn meanwhile): every append fails.
    const day = (offset: number): string => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    for (const offset of [0, 1]) mkdirSync(join(blockedHome, 'logs', `${day(offset)}.log`), { recursive: true });
    const blocked = await startServe({ home: blockedHome, host: ollama.url, env: { TZ: 'UTC' } });
    try {
      const whole = await post('/v1/chat/completions', ask('keep me'), {}, blocked.url);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('x-argo-log')).toBe('rescued');
      expect(await whole.json()).toMatchObject({ choices: [{ message: { content: 'You said: keep me' } }], argo: { status: 'ok', log: 'rescued' } });
      const streamed = ssePayloads(await (await post('/v1/chat/completions', ask('and me', { stream: true }), {}, blocked.url)).text());
      expect(JSON.parse(streamed.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { status: 'ok', log: 'rescued' } });
      const rescued = readdirSync(join(blockedHome, 'rescued')).map((file) => JSON.parse(readFileSync(join(blockedHome, 'rescued', file), 'utf8')) as Record<string, unknown>);
      expect(rescued).toEqual(expect.arrayContaining([expect.objectContaining({ user_prompt: 'keep me' }), expect.objectContaining({ user_prompt: 'and me' })]));
      // Where and why, on the operator's log only.
      expect(blocked.stderr()).toMatch(/argo serve: turn \S+: cannot write the log: .*\.log is a folder where the day's log goes; the turn was saved to .*rescued/);
    } finally {
      await blocked.stop();
    }
  });

  it('what Ollama cannot do is a 400 naming it, nothing sent to Ollama: n, image URLs, other data URLs, unknown parts', async () => {
    const refusedWith = async (extra: Partial<ChatCompletionCreateParamsNonStreaming>) => {
      const error = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'hi' }], ...extra }).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const { param, code } = (error as InstanceType<typeof OpenAI.BadRequestError>).error as { param: string; code: string };
      expect(code).toBe('invalid_value');
      return { param, message: (error as Error).message };
    };
    const withPart = (part: OpenAI.ChatCompletionContentPart): Partial<ChatCompletionCreateParamsNonStreaming> => ({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, part] }],
    });
    expect((await refusedWith({ n: 2 })).param).toBe('n');
    const url = await refusedWith(withPart({ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }));
    expect(url).toEqual({ param: 'messages[0].content[1]', message: expect.stringContaining('image URLs are not supported (Ollama takes images inline); send the image inline as a base64 data URL') as unknown });
    expect(await refusedWith(withPart({ type: 'image_url', image_url: { url: 'data:image/gif;base64,R0lG' } }))).toEqual({ param: 'messages[0].content[1]', message: expect.stringContaining('not an image Ollama takes') as unknown });
    expect(await refusedWith(withPart({ type: 'file', file: { file_id: 'file-1' } }))).toEqual({ param: 'messages[0].content[1]', message: expect.stringContaining('content parts of type "file" are not supported') as unknown });
    expect(chatBodies()).toEqual([]);
    // What Ollama's own OpenAI layer passes on, Argo does too: images and audio as `images`.
    const heard = await client.chat.completions.create({ model: 'argo', ...withPart({ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }) } as ChatCompletionCreateParamsNonStreaming);
    const seen = await client.chat.completions.create({ model: 'argo', ...withPart({ type: 'image_url', image_url: { url: 'data:image/webp;base64,UklGRg==' } }) } as ChatCompletionCreateParamsNonStreaming);
    expect(chatBodies().map((body) => (JSON.parse(body) as { messages: unknown[] }).messages)).toEqual([
      [{ role: 'user', content: 'look', images: ['UklGRg=='] }],
      [{ role: 'user', content: 'look', images: ['UklGRg=='] }],
    ]);
    // The window check counts each as 768 tokens ("look" is 1, the message 4): past 512, so the model's window is asked.
    for (const answer of [heard, seen]) {
      const { turn_id: id } = (answer as unknown as { argo: { turn_id: string } }).argo;
      expect(await logged(id)).toMatchObject({ prompt_tokens_estimate: 768 + 1 + 4, num_ctx: expect.any(Number) as unknown });
    }
  });

  it('malformed and oversized bodies → 400 and 413', async () => {
    const malformed = await post('/v1/chat/completions', '{"model": "argo", "messages": [');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_json' } });
    const small = tempHome({ serve: { maxBodyBytes: 1024 } });
    const limited = await startServe({ home: small, host: ollama.url });
    try {
      const big = await fetch(`${limited.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('x'.repeat(2000))) });
      expect(big.status).toBe(413);
      expect(await big.json()).toMatchObject({ error: { code: 'body_too_large' } });
      expect((await fetch(`${limited.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('fits')) })).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });

  it('an Ollama that accepts and never answers: said at start, /health degraded within its bound, and a stop is not held up', async () => {
    const sockets = new Set<Socket>();
    const hung = createNetServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const hungHome = tempHome(config);
    const served = await startServe({ home: hungHome, host: `http://127.0.0.1:${(hung.address() as AddressInfo).port}` });
    try {
      await waitFor(() => expect(served.stderr()).toMatch(/^argo serve: Ollama at http:\/\/127\.0\.0\.1:\d+ does not answer \(no answer in time\); requests will fail until it does/m));
      expect(await (await fetch(`${served.url}/health`)).json()).toEqual({ status: 'degraded', ollama: { reachable: false, version: null } });
      // The sockets stay open on the other side: only the server's own bound can end its requests.
      expect(sockets.size).toBeGreaterThan(0);
      expect(await served.stop()).toEqual({ code: 0, signal: null });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => hung.close(() => resolve()));
    }
  });

  it('Ollama down → 502 on chat, 200 degraded on /health', async () => {
    const downHome = tempHome(config);
    const down = await startServe({ home: downHome, host: `http://127.0.0.1:${await closedPort()}` });
    try {
      const health = await fetch(`${down.url}/health`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'degraded', ollama: { reachable: false, version: null } });
      // Said once at start, so the first 502 is no surprise.
      await waitFor(() => expect(down.stderr()).toMatch(/^argo serve: Ollama at http:\/\/127\.0\.0\.1:\d+ does not answer \(connection refused: nothing listens there\); requests will fail until it does: start it with "ollama serve", or set OLLAMA_HOST to where it runs$/m));
      const error = await new OpenAI({ baseURL: `${down.url}/v1`, apiKey: 'x', maxRetries: 0 }).chat.completions.create(ask('x')).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 502, code: 'ollama_unreachable' });
      expect((error as Error).message).toMatch(/start it with "ollama serve", or set argo serve's OLLAMA_HOST \(or "host" in its config\.json\) to where it runs$/);
      await waitFor(() => expect(logLines(downHome)).toEqual([expect.objectContaining({ status: 'error', session: 'api' })]));
      const models = await fetch(`${down.url}/v1/models`);
      expect(models.status).toBe(502);
      // The same words as the chat request's, not "fetch failed".
      expect(await models.json()).toMatchObject({ error: { code: 'ollama_unreachable', message: (error as Error).message.replace(/^502 /, '') } });
    } finally {
      await down.stop();
    }
  });
});

describe('auth', () => {
  it('a non-loopback bind refuses to start without a key', async () => {
    const result = await runArgo(['serve', '--host', '0.0.0.0', '--port', '0'], { home: tempHome(), env: { ARGO_API_KEY: '' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/needs an API key: set ARGO_API_KEY/);
  });

  it('--allow-side-effects refuses to start without a key, on loopback too (any local user could run commands as you); without a key the server says who can use it', async () => {
    const result = await runArgo(['serve', '--port', '0', '--allow-side-effects'], { home: tempHome(), env: { ARGO_API_KEY: '' } });
    expect(result).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'argo: argo serve --allow-side-effects needs an API key: without one any user of this machine can reach the server and run commands as you; set ARGO_API_KEY or "serve.apiKey" in config.json (or leave out --allow-side-effects)\n',
    });
    expect(serve.stderr()).toContain('argo serve: no API key, so every user of this machine can use this server: read its sessions and jobs, and start answers; on a shared machine set ARGO_API_KEY or "serve.apiKey" in config.json\n');
  });

  it('with a key from config.json: 401 without it, every route but /health; the key never in the log', async () => {
    const key = 'sk-e2e-9f8e7d6c';
    const keyHome = tempHome({ serve: { apiKey: key } });
    chmodSync(join(keyHome, 'config.json'), 0o644);
    const keyed = await startServe({ home: keyHome, host: ollama.url, args: ['--host', '0.0.0.0'] });
    const url = keyed.url.replace('0.0.0.0', '127.0.0.1');
    try {
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const refused = await fetch(`${url}/api/jobs`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer');
      await expect(new OpenAI({ baseURL: `${url}/v1`, apiKey: 'wrong', maxRetries: 0 }).models.list()).rejects.toMatchObject({ status: 401 });
      const answer = await new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create(ask('hi'));
      expect(answer.choices[0]?.message.content).toBe('You said: hi');
    } finally {
      await keyed.stop();
    }
    expect(keyed.stderr() + keyed.stdout()).not.toContain(key);
    // The key's file is open to other users: said once, naming the fix.
    expect(keyed.stderr()).toContain(`argo serve: ${join(keyHome, 'config.json')} holds an API key and other users can read it (mode 644); run "chmod 600 ${join(keyHome, 'config.json')}"`);
    expect(keyed.stderr()).not.toContain('does not answer');
    expect(keyed.stderr()).not.toContain('no API key');
    expect(logLines(keyHome)).toHaveLength(1);
    expect(JSON.stringify(logLines(keyHome))).not.toContain(key);
  });
});

describe('jobs', () => {
  it('runs in the background: 202 at once, then completed with its output', async () => {
    ollama.options.reply = 'background work done';
    const response = await post('/api/jobs', ask('do it', { argo: { session: 'jobs' } }));
    expect(response.status).toBe(202);
    const { job_id: id } = (await response.json()) as { job_id: string };
    await waitFor(async () => expect(await (await fetch(`${serve.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'completed' }));
    const record = (await (await fetch(`${serve.url}/api/jobs/${id}`)).json()) as { turn_id: string };
    expect(record).toMatchObject({ id, session: 'jobs', output: 'background work done', error: null });
    expect(turnsOf(record.turn_id)).toEqual([expect.objectContaining({ session: 'jobs', model_response: 'background work done' })]);
    expect(statSync(join(home, 'jobs', `${id}.json`)).mode & 0o777).toBe(0o600);
    expect(((await (await fetch(`${serve.url}/api/jobs`)).json()) as { id: string }[]).map((job) => job.id)).toContain(id);
    expect((await fetch(`${serve.url}/api/jobs/unknown`)).status).toBe(404);
  });

  it.each([
    [{ persona: 'pirate' }, 'argo.persona', 'invalid_value'],
    [{ tools: 'zz' }, 'argo.tools', 'unknown_tool'],
    [{ tools: 'fs,none' }, 'argo.tools', 'invalid_value'],
  ])('a body a chat completion refuses (%j) is refused as one, 400 and no job made', async (argo, param, code) => {
    const before = ((await (await fetch(`${serve.url}/api/jobs`)).json()) as unknown[]).length;
    const asked = ask('x', { argo });
    const chat = await post('/v1/chat/completions', asked);
    const job = await post('/api/jobs', asked);
    expect(job.status).toBe(400);
    const refusal = (await job.json()) as { error: { param: string; code: string } };
    expect(refusal.error).toMatchObject({ param, code });
    expect(refusal).toEqual(await chat.json());
    expect(((await (await fetch(`${serve.url}/api/jobs`)).json()) as unknown[]).length).toBe(before);
  });

  it('SSE resume of a half-done job: all output so far in one chunk, then live chunks, then [DONE]', async () => {
    const words = Array.from({ length: 30 }, (_, i) => `w${i} `);
    const sofar = words.slice(0, 15).join('');
    ollama.options.tokens = words;
    ollama.setScenario({ holdAfter: 15 });
    const { job_id: id } = (await (await post('/api/jobs', ask('long'))).json()) as { job_id: string };
    // The job is half done and stays so: the stand-in holds its answer after 15 words.
    await ollama.waitForHold();
    await waitFor(async () => expect(((await (await fetch(`${serve.url}/api/jobs/${id}`)).json()) as { output: string }).output).toBe(sofar));
    const stream = await fetch(`${serve.url}/api/jobs/${id}/stream`);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let body = '';
    while (!body.includes('\n\n')) {
      const { done, value } = await reader.read();
      if (done) break;
      body += decoder.decode(value, { stream: true });
    }
    // The first chunk arrived while the job was still held; only now does the rest of the answer come.
    ollama.release();
    for (let next = await reader.read(); !next.done; next = await reader.read()) body += decoder.decode(next.value, { stream: true });
    const data = ssePayloads(body);
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d) as { choices: { delta: { content?: string }; finish_reason: string | null }[]; argo?: unknown });
    expect(chunks[0]?.choices[0]?.delta.content).toBe(sofar);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(words.join(''));
    expect(chunks.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { job_id: id, state: 'completed' } });
    expect(data.at(-1)).toBe('[DONE]');
  });

  it('a job with client tools streams its calls as a chat stream does, live and on resume; its record keeps them', async () => {
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    ollama.options.rounds = () => ({
      reply: 'Checking. ',
      toolCalls: [{ function: { name: 'get_time', arguments: { tz: 'UTC' } } }, { function: { name: 'get_date', arguments: { tz: 'CET' } } }],
      splitToolCalls: true,
    });
    // Text, then the first call; the second waits until released.
    ollama.setScenario({ holdAfter: 2 });
    const tools: OpenAI.ChatCompletionTool[] = ['get_time', 'get_date'].map((name) => ({ type: 'function', function: { name, parameters: { type: 'object', properties: { tz: { type: 'string' } } } } }));
    const { job_id: id } = await client.post<{ job_id: string }>(`${serve.url}/api/jobs`, { body: { ...ask('time and date?'), tools } });
    await ollama.waitForHold();
    await waitFor(async () => expect(((await (await fetch(`${serve.url}/api/jobs/${id}`)).json()) as { tool_calls?: unknown[] }).tool_calls).toHaveLength(1));
    const stream = await fetch(`${serve.url}/api/jobs/${id}/stream`);
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let body = '';
    while (ssePayloads(body.slice(0, body.lastIndexOf('\n\n') + 2)).length < 2) {
      const { done, value } = await reader.read();
      if (done) break;
      body += decoder.decode(value, { stream: true });
    }
    ollama.release();
    for (let next = await reader.read(); !next.done; next = await reader.read()) body += decoder.decode(next.value, { stream: true });
    const record = (await (await fetch(`${serve.url}/api/jobs/${id}`)).json()) as { tool_calls: { id: string }[] };
    const ids = record.tool_calls.map((c) => c.id);
    expect(ids).toEqual([expect.stringMatching(OLLAMA_ID), expect.stringMatching(OLLAMA_ID)]);
    const call = (index: number, name: string, args: string) => ({ index, id: ids[index], type: 'function', function: { name, arguments: args } });
    const chunkShapes = (text: string) => ssePayloads(text).slice(0, -1).map((d) => JSON.parse(d) as { choices: { delta: Record<string, unknown>; finish_reason: string | null }[]; argo?: unknown });
    const live = chunkShapes(body);
    // Resumed half done: the text and the call so far, then the rest live; the same deltas a chat stream sends.
    expect(live.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: 'Checking. ' },
      { tool_calls: [call(0, 'get_time', '{"tz":"UTC"}')] },
      { tool_calls: [call(1, 'get_date', '{"tz":"CET"}')] },
      {},
    ]);
    expect(live.at(-1)).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }], argo: { job_id: id, state: 'completed' } });
    const calls = [
      { id: ids[0], type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } },
      { id: ids[1], type: 'function', function: { name: 'get_date', arguments: '{"tz":"CET"}' } },
    ];
    expect(await (await fetch(`${serve.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'completed', output: 'Checking. ', tool_calls: calls, finish_reason: 'tool_calls' });
    // Resumed once finished: everything at once, ending as the answer did.
    const again = chunkShapes(await (await fetch(`${serve.url}/api/jobs/${id}/stream`)).text());
    expect(again.map((chunk) => chunk.choices[0]?.delta)).toEqual([{ role: 'assistant', content: 'Checking. ' }, { tool_calls: [call(0, 'get_time', '{"tz":"UTC"}'), call(1, 'get_date', '{"tz":"CET"}')] }, {}]);
    expect(again.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('DELETE cancels a running job, keeping its output', async () => {
    ollama.options.reply = 'alpha beta gamma delta';
    ollama.setScenario({ hang: 2 });
    const { job_id: id } = (await (await post('/api/jobs', ask('x'))).json()) as { job_id: string };
    await waitFor(async () => expect(((await (await fetch(`${serve.url}/api/jobs/${id}`)).json()) as { output: string }).output).toBe('alpha beta'));
    const cancelled = await (await fetch(`${serve.url}/api/jobs/${id}`, { method: 'DELETE' })).json();
    expect(cancelled).toMatchObject({ state: 'cancelled', output: 'alpha beta', error: 'cancelled by request' });
    await loggedLike({ status: 'interrupted', model_response: 'alpha beta', error: 'cancelled by request' });
  });

  it('kill -9 mid-job, restart: the job is failed with a reason, its output intact, no torn file', async () => {
    const jobHome = tempHome(config);
    const first = await startServe({ home: jobHome, host: ollama.url });
    ollama.options.reply = 'saved words then nothing';
    ollama.setScenario({ hang: 2 });
    const { job_id: id } = (await (await fetch(`${first.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('x')) })).json()) as { job_id: string };
    const path = join(jobHome, 'jobs', `${id}.json`);
    await waitFor(() => expect(JSON.parse(readFileSync(path, 'utf8'))).toMatchObject({ state: 'running', output: 'saved words' }));
    first.child.kill('SIGKILL');
    await first.exited;
    // The record and its lock (proper-lockfile's directory); no temporary file left behind.
    expect(readdirSync(join(jobHome, 'jobs')).sort()).toEqual([`${id}.json`, `${id}.json.lock`]);
    // A save the kill cut short leaves its temporary file (no process has pid 5000000).
    const halfWritten = join(jobHome, 'jobs', `.${id}.json.5000000-0a1b2c3d.tmp`);
    writeFileSync(halfWritten, '{"id":"half a rec');
    const second = await startServe({ home: jobHome, host: ollama.url });
    expect(existsSync(halfWritten)).toBe(false);
    try {
      // The dead server's lock goes stale within seconds; then the job is failed, its output kept.
      await waitFor(async () => expect(await (await fetch(`${second.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'failed' }), { timeout: 15_000, interval: 200 });
      const record = await (await fetch(`${second.url}/api/jobs/${id}`)).json();
      expect(record).toMatchObject({ state: 'failed', output: 'saved words', error: expect.stringContaining('server stopped') as string });
      // By the sweep, or by the first request for the job, whichever comes first.
      expect(second.stderr()).toMatch(new RegExp(`marked failed the job\\(s\\) a previous server left unfinished: 1 running\n|1 job\\(s\\) whose server stopped marked failed|job ${id}, whose server stopped, marked failed`));
      // The dead server's stale lock goes with it.
      expect(readdirSync(join(jobHome, 'jobs'))).toEqual([`${id}.json`]);
    } finally {
      await second.stop();
    }
  });
  it('kill -9 with jobs queued behind another on its session: each prompt is logged once, interrupted, under the turn its failed record names, in the order the jobs came', async () => {
    const jobHome = tempHome(config);
    const first = await startServe({ home: jobHome, host: ollama.url });
    ollama.options.reply = 'saved words then nothing';
    ollama.setScenario({ hang: 2 });
    const argo = { argo: { session: 'queue' } };
    const { job_id: running } = (await (await fetch(`${first.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('the first', argo)) })).json()) as { job_id: string };
    const queued = await fetch(`${first.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('the queued one', argo)) });
    expect(queued.status).toBe(202);
    const { job_id: pending } = (await queued.json()) as { job_id: string };
    const { job_id: last } = (await (await fetch(`${first.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('the last one', argo)) })).json()) as { job_id: string };
    const recordOf = (id: string) => JSON.parse(readFileSync(join(jobHome, 'jobs', `${id}.json`), 'utf8')) as { state: string; turn_id: string | null };
    await waitFor(() => expect(recordOf(running)).toMatchObject({ state: 'running' }));
    const queuedTurn = recordOf(pending).turn_id;
    expect(recordOf(pending)).toMatchObject({ state: 'pending', turn_id: expect.any(String) as string });
    // Kept in the journal from the moment the job was made, not only once its turn comes.
    expect(existsSync(join(jobHome, 'unfinished', `${queuedTurn}.json`))).toBe(true);
    expect(recordOf(last)).toMatchObject({ state: 'pending' });
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startServe({ home: jobHome, host: ollama.url });
    try {
      await waitFor(() => expect(second.stderr()).toContain('argo serve: logged 3 turns an earlier argo left unfinished'));
      const lines = logLines(jobHome);
      // As the jobs came, which is how the session replays them; their timestamps say so too.
      expect(lines.map((line) => line.user_prompt)).toEqual(['the first', 'the queued one', 'the last one']);
      const instants = lines.map((line) => Date.parse(String(line.timestamp)));
      expect(instants).toEqual([...instants].sort((a, b) => a - b));
      expect(lines.map((line) => line.id)).toEqual([recordOf(running).turn_id, queuedTurn, recordOf(last).turn_id]);
      expect(lines.find((line) => line.id === queuedTurn)).toMatchObject({ status: 'interrupted', user_prompt: 'the queued one', model_response: '', error: expect.stringContaining('waited in its session\'s queue') as string });
      expect(lines[0]).toMatchObject({ status: 'interrupted', user_prompt: 'the first' });
      await waitFor(async () => expect(await (await fetch(`${second.url}/api/jobs/${pending}`)).json()).toMatchObject({ state: 'failed' }), { timeout: 15_000, interval: 200 });
      expect(await (await fetch(`${second.url}/api/jobs/${pending}`)).json()).toMatchObject({
        state: 'failed',
        turn_id: queuedTurn,
        output: '',
        error: `the server stopped while the job was pending, before its turn began, so nothing was answered (turn ${queuedTurn}, logged interrupted with its prompt by the next argo to start)`,
      });
      await waitFor(async () => expect(await (await fetch(`${second.url}/api/jobs/${running}`)).json()).toMatchObject({ state: 'failed', error: expect.stringContaining('the server stopped while the job was running') as string }), { timeout: 15_000, interval: 200 });
      expect(second.stderr()).toMatch(/marked failed the job\(s\) a previous server left unfinished: 1 running, 2 pending\n|job\(s\) whose server stopped marked failed|whose server stopped, marked failed/);
      expect(readdirSync(join(jobHome, 'unfinished'))).toEqual([]);
    } finally {
      await second.stop();
    }
  });

  it('a job another server runs: a stream here follows it to its end, DELETE here is a 409 naming that; once that server dies, the job as it ended', async () => {
    const jobHome = tempHome(config);
    const first = await startServe({ home: jobHome, host: ollama.url });
    const second = await startServe({ home: jobHome, host: ollama.url });
    try {
      ollama.options.reply = 'saved words then the rest';
      ollama.setScenario({ holdAfter: 2 });
      const { job_id: id } = (await (await fetch(`${first.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('x')) })).json()) as { job_id: string };
      await ollama.waitForHold();
      const followed = await fetch(`${second.url}/api/jobs/${id}/stream`);
      expect(followed.status).toBe(200);
      const cancel = await fetch(`${second.url}/api/jobs/${id}`, { method: 'DELETE' });
      expect(cancel.status).toBe(409);
      expect(await cancel.json()).toMatchObject({ error: { code: 'job_running_elsewhere', message: expect.stringContaining('is run by another argo serve sharing this data home; cancel it on that server') as string } });
      ollama.release();
      const data = ssePayloads(await followed.text());
      const chunks = data.slice(0, -1).map((payload) => JSON.parse(payload) as { choices: { delta: { content?: string } }[] });
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('saved words then the rest');
      expect(JSON.parse(data.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { job_id: id, state: 'completed', error: null } });
      expect(data.at(-1)).toBe('[DONE]');

      ollama.options.reply = 'kept words then nothing';
      ollama.setScenario({ hang: 2 });
      const { job_id: dying } = (await (await fetch(`${first.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('y')) })).json()) as { job_id: string };
      await waitFor(async () => expect(await (await fetch(`${second.url}/api/jobs/${dying}`)).json()).toMatchObject({ state: 'running', output: 'kept words' }));
      const orphaned = await fetch(`${second.url}/api/jobs/${dying}/stream`);
      first.child.kill('SIGKILL');
      await first.exited;
      // Once the dead server's lock is stale (5 s), the follower's stream ends with the job failed, output kept.
      const ended = ssePayloads(await orphaned.text());
      expect(JSON.parse(ended[0] ?? '')).toMatchObject({ choices: [{ delta: { content: 'kept words' } }] });
      // Its answer never ended: its last chunk says so (finish_reason null) and why, then [DONE].
      expect(JSON.parse(ended.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: null }], argo: { job_id: dying, state: 'failed', error: expect.stringContaining('the server stopped') as string } });
      expect(ended.at(-1)).toBe('[DONE]');
      expect(await (await fetch(`${second.url}/api/jobs/${dying}`)).json()).toMatchObject({ state: 'failed', output: 'kept words' });
      expect(readdirSync(join(jobHome, 'jobs')).sort()).toEqual([`${dying}.json`, `${id}.json`].sort());
    } finally {
      first.child.kill('SIGKILL');
      await second.stop();
    }
  });

  it("a server following another's job shuts down: its stream ends with an error chunk saying where to follow it, and the job goes on", async () => {
    const jobHome = tempHome({ ...config, serve: { shutdownGraceMs: 300 } });
    const runs = await startServe({ home: jobHome, host: ollama.url });
    const follows = await startServe({ home: jobHome, host: ollama.url });
    try {
      ollama.options.reply = 'saved words then the rest';
      ollama.setScenario({ holdAfter: 2 });
      const { job_id: id } = (await (await fetch(`${runs.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('x')) })).json()) as { job_id: string };
      await ollama.waitForHold();
      const followed = await fetch(`${follows.url}/api/jobs/${id}/stream`);
      follows.child.kill('SIGTERM');
      const data = ssePayloads(await followed.text());
      expect(data.at(-1)).not.toBe('[DONE]');
      expect(JSON.parse(data.at(-1) ?? '')).toMatchObject({ error: { code: 'shutting_down', message: expect.stringContaining(`follow it again with GET /api/jobs/${id}/stream on any server sharing the data home`) as string } });
      expect(await follows.exited).toEqual({ code: 0, signal: null });
      ollama.release();
      await waitFor(async () => expect(await (await fetch(`${runs.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'completed', output: 'saved words then the rest' }));
    } finally {
      ollama.release();
      await runs.stop();
    }
  });

  // Five seconds of a paused server are what its lock's staleness is made of: the one slow test here.
  it('a server paused while another fails its job over stops the job once it runs again: the job stays failed, there too, its turn interrupted with its text', async () => {
    const jobHome = tempHome(config);
    const paused = await startServe({ home: jobHome, host: ollama.url });
    const other = await startServe({ home: jobHome, host: ollama.url });
    try {
      ollama.options.reply = 'saved words then the rest';
      ollama.setScenario({ holdAfter: 2 });
      const { job_id: id } = (await (await fetch(`${paused.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('x')) })).json()) as { job_id: string };
      const held = await ollama.waitForHold();
      await waitFor(async () => expect(await (await fetch(`${other.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'running', output: 'saved words' }));
      const followed = fetch(`${other.url}/api/jobs/${id}/stream`).then((response) => response.text());
      // Its own server's stream of it: it ends as the job's file does, not as that server would have ended it.
      const followedThere = await fetch(`${paused.url}/api/jobs/${id}/stream`);
      const endThere = followedThere.text();
      paused.child.kill('SIGSTOP');
      const failedOver = { state: 'failed', output: 'saved words', error: 'the server stopped while the job was running; its output so far is kept' };
      await waitFor(async () => expect(await (await fetch(`${other.url}/api/jobs/${id}`)).json()).toMatchObject(failedOver), { timeout: 15_000, interval: 200 });
      // A failed job's last chunk says its answer never ended (finish_reason null) and why.
      expect(JSON.parse(ssePayloads(await followed).at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: null }], argo: { job_id: id, state: 'failed' } });
      paused.child.kill('SIGCONT');
      // Its turn is cut (the request to Ollama with it) and logged with what it had.
      await held.settled;
      expect(held.clientAborted).toBe(true);
      await waitFor(() => expect(logLines(jobHome)).toEqual([expect.objectContaining({ status: 'interrupted', model_response: 'saved words', error: "the server lost the job's lock" })]));
      expect(JSON.parse(ssePayloads(await endThere).at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: null }], argo: { job_id: id, state: 'failed', error: failedOver.error } });
      await waitFor(() => expect(paused.stderr()).toMatch(new RegExp(`argo serve: lost the lock on job ${id} \\(.*\\); another server sharing the data home had marked it failed meanwhile, so it was stopped here, and its file keeps that verdict\n`)));
      await waitFor(() => expect(readdirSync(join(jobHome, 'jobs'))).toEqual([`${id}.json`]));
      expect(JSON.parse(readFileSync(join(jobHome, 'jobs', `${id}.json`), 'utf8'))).toMatchObject(failedOver);
      expect(await (await fetch(`${paused.url}/api/jobs/${id}`)).json()).toMatchObject(failedOver);
    } finally {
      paused.child.kill('SIGCONT');
      ollama.release();
      await Promise.all([paused.stop(), other.stop()]);
    }
  });
});

describe('STOP', () => {
  it('ends a streaming answer within one chunk: finish_reason stop, [DONE], logged stopped; a job becomes cancelled', async () => {
    ollama.options.reply = 'first second third fourth';
    ollama.setScenario({ hang: 2 });
    const { job_id: job } = (await (await post('/api/jobs', ask('job'))).json()) as { job_id: string };
    const response = await post('/v1/chat/completions', ask('x', { stream: true }));
    const id = response.headers.get('x-argo-turn-id') ?? '';
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await waitFor(async () => expect(((await (await fetch(`${serve.url}/api/jobs/${job}`)).json()) as { output: string }).output).toBe('first second'));
    writeFileSync(join(home, 'STOP'), '');
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += new TextDecoder().decode(chunk.value);
    const data = ssePayloads(rest);
    expect(data.at(-1)).toBe('[DONE]');
    expect(JSON.parse(data.at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { status: 'stopped' } });
    await waitFor(() => expect(turnsOf(id)).toEqual([expect.objectContaining({ status: 'stopped', model_response: 'first second', error: 'stop signal' })]));
    await waitFor(async () => expect(await (await fetch(`${serve.url}/api/jobs/${job}`)).json()).toMatchObject({ state: 'cancelled', error: 'stop signal', output: 'first second' }));
    expect(await (await fetch(`${serve.url}/api/stop`, { method: 'DELETE' })).json()).toEqual({ stop: false, since: null });
  });
});

describe('usage of an answer cut short', () => {
  it("STOP mid-stream: the usage chunk gives Argo's estimates (the log's prompt_tokens_estimate, the words sent), not zeros", async () => {
    ollama.options.reply = 'first second third fourth';
    ollama.setScenario({ hang: 2 });
    try {
      const stream = await client.chat.completions.create({ ...ask('count with me'), stream: true, stream_options: { include_usage: true } });
      let text = '';
      let usage: OpenAI.CompletionUsage | null | undefined;
      let id = '';
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (text === 'first second' && !existsSync(join(home, 'STOP'))) writeFileSync(join(home, 'STOP'), '');
        usage = chunk.usage ?? usage;
        id = (chunk as unknown as { argo?: { turn_id: string } }).argo?.turn_id ?? id;
      }
      const entry = await logged(id);
      expect(entry).toMatchObject({ status: 'stopped', model_response: 'first second', timings: { prompt_eval_count: null, eval_count: null } });
      const prompt = entry?.prompt_tokens_estimate as number;
      expect(prompt).toBeGreaterThan(0);
      // 'first second': 12 characters, 3 estimated tokens. It was {"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}.
      expect(usage).toEqual({ prompt_tokens: prompt, completion_tokens: 3, total_tokens: prompt + 3 });
    } finally {
      expect(await (await fetch(`${serve.url}/api/stop`, { method: 'DELETE' })).json()).toEqual({ stop: false, since: null });
    }
  });
});

describe('a request while STOP is set', () => {
  it('the openai client throws 503 argo_stopped, streamed or not, plain or Argo mode; each turn is logged stopped with its prompt; a job is refused the same way', async () => {
    expect(await (await post('/api/stop', '')).json()).toEqual({ stop: true, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) as string });
    try {
      const asked = ollama.requests.length;
      const cases: [string, OpenAI.ChatCompletionCreateParams][] = [
        ['plain', ask('plain while stopped')],
        ['plain, streamed', ask('plain streamed while stopped', { stream: true })],
        ['Argo mode', ask('argo while stopped', { argo: { session: 'held' } })],
        ['Argo mode, streamed', ask('argo streamed while stopped', { stream: true, argo: { session: 'held' } })],
      ] as [string, OpenAI.ChatCompletionCreateParams][];
      for (const [name, body] of cases) {
        const error: unknown = await client.chat.completions.create(body).then(() => null, (thrown: unknown) => thrown);
        expect(error, name).toBeInstanceOf(OpenAI.APIError);
        const api = error as InstanceType<typeof OpenAI.APIError>;
        expect(api).toMatchObject({ status: 503, code: 'argo_stopped', type: 'server_error' });
        expect(api.message).toContain('DELETE /api/stop');
        const id = api.headers?.get('x-argo-turn-id') ?? '';
        expect(await logged(id)).toMatchObject({ status: 'stopped', user_prompt: (body.messages[0] as { content: string }).content, model_response: '', error: 'stop signal' });
      }
      const job = await post('/api/jobs', ask('job while stopped', { argo: { session: 'held' } }));
      expect(job.status).toBe(503);
      expect(await job.json()).toMatchObject({ error: { code: 'argo_stopped' } });
      expect(await logged(job.headers.get('x-argo-turn-id') ?? '')).toMatchObject({ status: 'stopped', user_prompt: 'job while stopped' });
      // Nothing reached the model.
      expect(ollama.requests.slice(asked).filter((request) => request.path === '/api/chat')).toEqual([]);
    } finally {
      expect(await (await fetch(`${serve.url}/api/stop`, { method: 'DELETE' })).json()).toEqual({ stop: false, since: null });
    }
    expect((await client.chat.completions.create(ask('after the clear'))).choices[0]?.message.content).toBe('You said: after the clear');
  });
});

describe('STOP at start', () => {
  const longAgo = new Date('2000-01-01T00:00:00Z');
  const stopIn = (dir: string, time: Date | null): string => {
    const path = join(dir, 'STOP');
    writeFileSync(path, `${(time ?? new Date()).toISOString()}\n`);
    if (time !== null) utimesSync(path, time, time);
    return path;
  };

  it('a STOP set since this boot is kept across a restart, said on stderr; answers stop until it is cleared', async () => {
    const own = tempHome(config);
    const path = stopIn(own, null);
    const first = await startServe({ home: own, host: ollama.url });
    try {
      await waitFor(() => expect(first.stderr()).toMatch(/argo serve: STOP is set \(since \d{4}-\d\d-\d\dT[\d:.]+Z\): answers and jobs stop until "argo stop --clear" or DELETE \/api\/stop\n/));
      expect(await (await fetch(`${first.url}/api/stop`)).json()).toEqual({ stop: true, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) as string });
    } finally {
      await first.stop();
    }
    // A restart (systemd's Restart=) does not lift it.
    const second = await startServe({ home: own, host: ollama.url });
    try {
      await waitFor(() => expect(second.stderr()).toContain('argo serve: STOP is set (since'));
      expect(statSync(path).isFile()).toBe(true);
      expect(await (await fetch(`${second.url}/api/stop`)).json()).toEqual({ stop: true, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) as string });
    } finally {
      await second.stop();
    }
  });

  it('a start that cannot bind leaves even a stale STOP; one that listens clears it, saying so', async () => {
    const own = tempHome(config);
    const path = stopIn(own, longAgo);
    const taken = createNetServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const failed = await runArgo(['serve', '--port', String(port)], { home: own, host: ollama.url });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is in use`);
      expect(statSync(path).isFile()).toBe(true);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    const started = await startServe({ home: own, host: ollama.url });
    try {
      await waitFor(() => expect(started.stderr()).toContain('argo serve: cleared a STOP left from before this boot (set 2000-01-01T00:00:00.000Z)\n'));
      expect(existsSync(path)).toBe(false);
      expect(await (await fetch(`${started.url}/api/stop`)).json()).toEqual({ stop: false, since: null });
    } finally {
      await started.stop();
    }
  });
});

describe('load and shutdown', () => {
  it('20 concurrent streaming clients on mixed sessions: all answered, every turn logged once', async () => {
    ollama.setScenario({ delayMs: 2 });
    const before = logLines(home).length;
    const sessions = ['s1', 's2', 's3', 's4', null];
    const runs = Array.from({ length: 20 }, async (_, i) => {
      const session = sessions[i % sessions.length];
      const body = { ...ask(`question ${i}`), stream: true, ...(session ? { argo: { session } } : {}) } as OpenAI.ChatCompletionCreateParamsStreaming;
      const { data: stream, response } = await client.chat.completions.create(body).withResponse();
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(text).toBe(`You said: question ${i}`);
      return response.headers.get('x-argo-turn-id') ?? '';
    });
    const ids = await Promise.all(runs);
    expect(new Set(ids).size).toBe(20);
    await waitFor(() => expect(logLines(home).length - before).toBe(20));
    const lines = logLines(home).slice(before);
    expect(lines).toHaveLength(20);
    expect(new Set(lines.map((line) => line.id))).toEqual(new Set(ids));
    for (const session of ['s1', 's2', 's3', 's4']) {
      await waitFor(() => expect(JSON.parse(readFileSync(join(home, 'sessions', `${session}.json`), 'utf8'))).toMatchObject({ turns: 4 }));
    }
  });

  it('SIGTERM with streams open: finishes within the grace, then cuts them (logged interrupted) as failed answers, never as whole ones, and exits 0', async () => {
    const shutHome = tempHome({ ...config, serve: { shutdownGraceMs: 300 } });
    const server = await startServe({ home: shutHome, host: ollama.url });
    ollama.options.reply = 'kept part never sent';
    ollama.setScenario({ hang: 2 });
    const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('x', { stream: true })) });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = new TextDecoder().decode((await reader.read()).value);
    // The openai client's stream too: it throws on the error chunk rather than ending as if whole.
    const sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const stream = await sdk.chat.completions.create({ ...ask('y'), stream: true });
    const pieces: string[] = [];
    const iterated = (async () => {
      for await (const chunk of stream) pieces.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((error: unknown) => error);
    await waitFor(() => expect(pieces.join('')).toBe('kept part'));
    server.child.kill('SIGTERM');
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) seen += new TextDecoder().decode(chunk.value);
    const payloads = ssePayloads(seen);
    expect(payloads).not.toContain('[DONE]');
    expect(payloads.join('\n')).not.toContain('"finish_reason":"stop"');
    expect(JSON.parse(payloads.at(-1) ?? '')).toMatchObject({ error: { type: 'server_error', code: 'shutting_down' } });
    const thrown = await iterated;
    expect(thrown).toBeInstanceOf(OpenAI.APIError);
    expect((thrown as InstanceType<typeof OpenAI.APIError>).code).toBe('shutting_down');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(logLines(shutHome)).toEqual([
      expect.objectContaining({ status: 'interrupted', model_response: 'kept part', error: 'the server shut down' }),
      expect.objectContaining({ status: 'interrupted', model_response: 'kept part', error: 'the server shut down' }),
    ]);
  });

  it('argo stop during the grace ends a stream, a job and an agent job within one chunk (stopped, cancelled), and the server exits without waiting the grace out', async () => {
    const shutHome = tempHome({ ...config, serve: { shutdownGraceMs: 60_000 } });
    const server = await startServe({ home: shutHome, host: ollama.url });
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    ollama.options.reply = 'kept part never sent';
    ollama.setScenario({ hang: 2 });
    const start = async (argo: Record<string, unknown>): Promise<string> =>
      ((await (await fetch(`${server.url}/api/jobs`, { method: 'POST', body: JSON.stringify(ask('a job', { argo })) })).json()) as { job_id: string }).job_id;
    const jobs = [await start({ session: 'g' }), await start({ session: 't', tools: 'fs' })];
    const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('x', { stream: true })) });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = '';
    const jobFile = (id: string): unknown => JSON.parse(readFileSync(join(shutHome, 'jobs', `${id}.json`), 'utf8'));
    for (const id of jobs) await waitFor(() => expect(jobFile(id)).toMatchObject({ state: 'running', output: 'kept part' }));
    while (!seen.includes('part')) seen += new TextDecoder().decode((await reader.read()).value);
    server.child.kill('SIGTERM');
    await waitFor(() => expect(server.stderr()).toMatch(/SIGTERM: finishing running answers \(up to 60000 ms/));
    expect((await runArgo(['stop'], { home: shutHome })).code).toBe(0);
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) seen += new TextDecoder().decode(chunk.value);
    expect(ssePayloads(seen).at(-1)).toBe('[DONE]');
    expect(JSON.parse(ssePayloads(seen).at(-2) ?? '')).toMatchObject({ choices: [{ finish_reason: 'stop' }], argo: { status: 'stopped' } });
    expect(await server.exited).toEqual({ code: 0, signal: null });
    for (const id of jobs) expect(jobFile(id)).toMatchObject({ state: 'cancelled', error: 'stop signal', output: 'kept part' });
    expect(logLines(shutHome).map((line) => [line.session, line.status, line.model_response])).toEqual(
      expect.arrayContaining([['g', 'stopped', 'kept part'], ['t', 'stopped', 'kept part'], ['api', 'stopped', 'kept part']]),
    );
    expect(logLines(shutHome)).toHaveLength(3);
  });

  it('SIGINT, then SIGINT again during a long grace: the open stream is cut at once, still logged, exit 130', async () => {
    const shutHome = tempHome({ ...config, serve: { shutdownGraceMs: 60_000 } });
    const server = await startServe({ home: shutHome, host: ollama.url });
    ollama.options.reply = 'kept words never sent';
    ollama.setScenario({ hang: 2 });
    const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(ask('x', { stream: true, argo: { session: 'late' } })) });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let seen = new TextDecoder().decode((await reader.read()).value);
    server.child.kill('SIGINT');
    await waitFor(() => expect(server.stderr()).toMatch(/SIGINT: finishing running answers/));
    expect((await fetch(`${server.url}/health`).catch(() => null))?.status ?? 'closed').not.toBe(200);
    server.child.kill('SIGINT');
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) seen += new TextDecoder().decode(chunk.value);
    expect(await server.exited).toEqual({ code: 130, signal: null });
    expect(server.stderr()).toMatch(/SIGINT again: cutting running answers now/);
    expect(JSON.parse(ssePayloads(seen).at(-1) ?? '')).toMatchObject({ error: { code: 'shutting_down' } });
    expect(logLines(shutHome)).toEqual([expect.objectContaining({ session: 'late', status: 'interrupted', model_response: 'kept words', error: 'the server shut down' })]);
    expect(JSON.parse(readFileSync(join(shutHome, 'sessions', 'late.json'), 'utf8'))).toMatchObject({ turns: 1 });
  });
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A request whose body is read only when asked: a client that reads slowly. */
function rawPost(path: string, body: unknown): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; read: () => Promise<string> }> {
  const url = new URL(path, serve.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      res.pause();
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        read: () =>
          new Promise((done) => {
            let text = '';
            res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
            res.on('end', () => done(text));
            res.resume();
          }),
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
