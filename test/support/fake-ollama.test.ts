// Checks the Ollama stand-in against /work/shared/spec/ollama-protocol.md, using plain fetch
// (and node:http where fetch cannot set the header), plus the real `ollama` client at the end.
import { spawn } from 'node:child_process';
import { request as httpRequest, Agent } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Ollama } from 'ollama';
import { describe, expect, it } from 'vitest';
import { BUSY_MESSAGE, CURRENT_VERSION, RUNNER_ERROR_MESSAGE, SIGNIN_URL, fakeLogprob, fakeLogprobValue, splitTokens, startFakeOllama } from './fake-ollama.js';
import { fakeOllamaPerTest } from './fake-ollama-hooks.js';
import type { FakeOllama } from './fake-ollama.js';
import { at, defined } from './defined.js';

type Json = Record<string, unknown>;

const RFC3339_NANO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/;
const METRICS = [
  'total_duration', 'load_duration', 'prompt_eval_count', 'prompt_eval_duration', 'eval_count', 'eval_duration',
];
const chatBody = (content = 'hello there', extra: Json = {}): Json => ({
  model: 'argo', messages: [{ role: 'user', content }], ...extra,
});

const start = fakeOllamaPerTest();

function post(fake: FakeOllama, path: string, body: Json | string, init: RequestInit = {}): Promise<Response> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return fetch(`${fake.url}${path}`, { method: 'POST', body: text, ...init });
}

async function ndjson(res: Response): Promise<{ text: string; lines: string[] }> {
  const text = await res.text();
  return { text, lines: text.split('\n').filter((l) => l !== '') };
}

const parseAll = (lines: string[]): Json[] => lines.map((l) => JSON.parse(l) as Json);

function chunkText(chunk: Json): string {
  if ('response' in chunk) return chunk.response as string;
  return ((chunk.message as Json | undefined)?.content as string | undefined) ?? '';
}

// Reads an NDJSON stream line by line as the lines arrive.
function lineReader(res: Response) {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    reader,
    async next(): Promise<string | undefined> {
      for (;;) {
        const newline = buffer.indexOf('\n');
        if (newline >= 0) {
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + 1);
          return line;
        }
        const { done, value } = await reader.read();
        if (done) return undefined;
        buffer += decoder.decode(value, { stream: true });
      }
    },
  };
}

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

// fetch forbids setting Host, so this goes through node:http.
function rawRequest(fake: FakeOllama, path: string, headers: Record<string, string>, agent?: Agent): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: fake.port, path, headers, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('plain endpoints', () => {
  it('answers GET and HEAD / with the text/plain banner', async () => {
    const fake = await start();
    const res = await fetch(`${fake.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('Ollama is running');
    const head = await fetch(`${fake.url}/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(fake.url).toBe(`http://127.0.0.1:${fake.port}`);
  });

  it('reports a configurable version', async () => {
    const fake = await start();
    expect(await (await fetch(`${fake.url}/api/version`)).json()).toEqual({ version: CURRENT_VERSION });
    fake.options.version = '0.13.1';
    expect(await (await fetch(`${fake.url}/api/version`)).json()).toEqual({ version: '0.13.1' });
  });

  it('lists models with their tag and full details, and [] when there are none', async () => {
    const fake = await start({ models: [{ name: 'argo' }, { name: 'library/coder:7b', family: 'qwen2' }, { name: 'me/tiny' }] });
    const res = await fetch(`${fake.url}/api/tags`);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const { models } = (await res.json()) as { models: Json[] };
    expect(models.map((m) => m.name)).toEqual(['argo:latest', 'coder:7b', 'me/tiny:latest']);
    for (const m of models) {
      expect(m.model).toBe(m.name);
      expect(typeof m.modified_at).toBe('string');
      expect(Number.isInteger(m.size)).toBe(true);
      expect(m.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(Object.keys(m.details as Json)).toEqual(
        expect.arrayContaining(['format', 'family', 'families', 'parameter_size', 'quantization_level']),
      );
    }
    expect((models[1]?.details as Json).family).toBe('qwen2');
    fake.options.models = [];
    expect(await (await fetch(`${fake.url}/api/tags`)).json()).toEqual({ models: [] });
  });

  it('answers unknown paths like Gin: 404 page not found, and 405 for a wrong method', async () => {
    const fake = await start();
    const missing = await fetch(`${fake.url}/api/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toBe('404 page not found');
    const wrong = await fetch(`${fake.url}/api/chat`);
    expect(wrong.status).toBe(405);
    expect(await wrong.text()).toBe('405 method not allowed');
  });

  it('shows details, capabilities and the context length under <family>.context_length', async () => {
    const fake = await start({ models: [{ name: 'argo', family: 'gemma3', contextLength: 32768, capabilities: ['completion', 'tools'] }] });
    const res = await post(fake, '/api/show', { model: 'Argo:latest' });
    expect(res.status).toBe(200);
    const show = (await res.json()) as Json;
    expect(show.capabilities).toEqual(['completion', 'tools']);
    expect((show.details as Json).family).toBe('gemma3');
    expect((show.model_info as Json)['gemma3.context_length']).toBe(32768);
    expect((await post(fake, '/api/show', { name: 'argo' })).status).toBe(200);

    const unknown = await post(fake, '/api/show', { model: 'nope' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: "model 'nope' not found" });
    const missing = await post(fake, '/api/show', {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: 'model is required' });
  });

  it('lists a model in /api/ps after use, and drops it after keep_alive 0', async () => {
    const fake = await start();
    const ps = async () => ((await (await fetch(`${fake.url}/api/ps`)).json()) as { models: Json[] }).models;
    expect(await ps()).toEqual([]);
    await (await post(fake, '/api/chat', chatBody('hi', { stream: false, options: { num_ctx: 8192 } }))).json();
    const [loaded] = await ps();
    expect(loaded).toMatchObject({ name: 'argo:latest', model: 'argo:latest', context_length: 8192 });
    expect(Date.parse(loaded?.expires_at as string)).toBeGreaterThan(Date.now() + 4 * 60_000);
    await (await post(fake, '/api/chat', chatBody('hi', { stream: false, keep_alive: 0 }))).json();
    expect(await ps()).toEqual([]);
  });
});

describe('streaming', () => {
  it('streams generate as NDJSON: one object per line, then a done line with integer metrics', async () => {
    const fake = await start();
    const res = await post(fake, '/api/generate', { model: 'argo', prompt: 'hello there' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const { text, lines } = await ndjson(res);
    expect(text.endsWith('\n')).toBe(true);
    const chunks = parseAll(lines);
    const final = defined(chunks.pop(), 'final chunk');
    for (const chunk of chunks) {
      expect(Object.keys(chunk)).toEqual(['model', 'created_at', 'response', 'done']);
      expect(chunk).toMatchObject({ model: 'argo', done: false });
      expect(chunk.created_at).toMatch(RFC3339_NANO_UTC);
    }
    expect(chunks.map(chunkText).join('')).toBe('You said: hello there');
    expect(final).toMatchObject({ model: 'argo', done: true, done_reason: 'stop', response: '' });
    expect(final.created_at).toMatch(RFC3339_NANO_UTC);
    for (const key of METRICS) expect(Number.isInteger(final[key]) && (final[key] as number) > 0, key).toBe(true);
    expect(final.eval_count).toBe(chunks.length);
    expect(final.total_duration as number).toBeGreaterThanOrEqual(final.load_duration as number);
    expect((final.context as unknown[]).every((n) => Number.isInteger(n))).toBe(true);
  });

  it('streams chat chunks with an assistant message, and streams by default', async () => {
    const fake = await start();
    for (const stream of [undefined, true]) {
      const body = stream === undefined ? chatBody() : chatBody('hello there', { stream });
      const { lines } = await ndjson(await post(fake, '/api/chat', body));
      const chunks = parseAll(lines);
      const final = defined(chunks.pop(), 'final chunk');
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks) {
        expect(Object.keys(chunk)).toEqual(['model', 'created_at', 'message', 'done']);
        expect(chunk.message).toEqual({ role: 'assistant', content: expect.any(String) as unknown });
      }
      expect(chunks.map(chunkText).join('')).toBe('You said: hello there');
      expect(final).toMatchObject({ done: true, done_reason: 'stop', message: { role: 'assistant', content: '' } });
      expect(final).not.toHaveProperty('context');
      for (const key of METRICS) expect(Number.isInteger(final[key]), key).toBe(true);
    }
  });

  it('answers stream:false with a single JSON object holding the whole text and the metrics', async () => {
    const fake = await start();
    const chat = await post(fake, '/api/chat', chatBody('one two', { stream: false }));
    expect(chat.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await chat.text();
    expect(text.trim().split('\n')).toHaveLength(1);
    const body = JSON.parse(text) as Json;
    expect(body).toMatchObject({ model: 'argo', done: true, done_reason: 'stop', message: { role: 'assistant', content: 'You said: one two' } });
    for (const key of METRICS) expect(Number.isInteger(body[key]), key).toBe(true);

    const gen = (await (await post(fake, '/api/generate', { model: 'argo', prompt: 'p', stream: false })).json()) as Json;
    expect(gen).toMatchObject({ response: 'You said: p', done: true });
    expect(Array.isArray(gen.context)).toBe(true);
  });

  it('can carry the last piece of text in the done line', async () => {
    const fake = await start({ reply: 'alpha beta gamma', textInDone: true });
    const chunks = parseAll((await ndjson(await post(fake, '/api/chat', chatBody()))).lines);
    const final = at(chunks, -1);
    expect(final.done).toBe(true);
    expect(chunkText(final)).toBe(' gamma');
    expect(chunks.map(chunkText).join('')).toBe('alpha beta gamma');
    expect(final.eval_count).toBe(3);
  });

  it('a thinking model streams its reasoning first, in thinking fields with empty content, unless think is false', async () => {
    const fake = await start({ models: [{ name: 'qwen3', capabilities: ['completion', 'thinking'] }], reply: 'Hi there', thinking: 'The user greets me.' });
    const chunks = parseAll((await ndjson(await post(fake, '/api/chat', chatBody('hi', { model: 'qwen3' })))).lines);
    expect(chunks.slice(0, 4).map((chunk) => chunk.message)).toEqual([
      { role: 'assistant', content: '', thinking: 'The' },
      { role: 'assistant', content: '', thinking: ' user' },
      { role: 'assistant', content: '', thinking: ' greets' },
      { role: 'assistant', content: '', thinking: ' me.' },
    ]);
    expect(chunks.map(chunkText).join('')).toBe('Hi there');
    expect(at(chunks, -1).eval_count).toBe(6);
    const whole = (await (await post(fake, '/api/generate', { model: 'qwen3', prompt: 'hi', stream: false })).json()) as Json;
    expect(whole).toMatchObject({ response: 'Hi there', thinking: 'The user greets me.' });
    const off = parseAll((await ndjson(await post(fake, '/api/chat', chatBody('hi', { model: 'qwen3', think: false })))).lines);
    expect(off.some((chunk) => 'thinking' in (chunk.message as Json))).toBe(false);
  });

  it('uses a fixed reply, a reply function of the body, or an explicit token array', async () => {
    const fake = await start({ tokens: ['Hel', 'lo', ',', ' world'] });
    const tokens = parseAll((await ndjson(await post(fake, '/api/generate', { model: 'argo', prompt: 'x' }))).lines);
    expect(tokens.slice(0, -1).map(chunkText)).toEqual(['Hel', 'lo', ',', ' world']);

    fake.options = { reply: (body, endpoint) => `${endpoint}:${(body.messages as Json[]).length}` };
    const chat = (await (await post(fake, '/api/chat', chatBody('a', { stream: false }))).json()) as Json;
    expect(chat.message).toEqual({ role: 'assistant', content: 'chat:1' });
    expect(splitTokens(' a  b\nc \n')).toEqual([' a', '  b', '\nc \n']);
  });

  it('caps the answer at options.num_predict with done_reason length, and cuts at a stop sequence', async () => {
    const fake = await start({ reply: 'one two three four five' });
    const capped = (await (await post(fake, '/api/generate', { model: 'argo', prompt: 'x', stream: false, options: { num_predict: 2 } })).json()) as Json;
    expect(capped).toMatchObject({ response: 'one two', done_reason: 'length', eval_count: 2 });
    const stopped = (await (await post(fake, '/api/generate', { model: 'argo', prompt: 'x', stream: false, options: { stop: [' thr'] } })).json()) as Json;
    expect(stopped).toMatchObject({ response: 'one two', done_reason: 'stop' });
  });

  it("counts a thinking model's reasoning against num_predict, before the answer", async () => {
    const fake = await start({ reply: 'one two three', thinking: 'a b c', models: [{ name: 'qwen3:latest', capabilities: ['completion', 'thinking'] }] });
    const ask = async (limit: number): Promise<Json> =>
      (await (await post(fake, '/api/chat', { model: 'qwen3', messages: [{ role: 'user', content: 'x' }], stream: false, options: { num_predict: limit } })).json()) as Json;
    expect(await ask(2)).toMatchObject({ message: { role: 'assistant', content: '', thinking: 'a b' }, done_reason: 'length', eval_count: 2 });
    expect(await ask(4)).toMatchObject({ message: { content: 'one', thinking: 'a b c' }, done_reason: 'length', eval_count: 4 });
    expect(await ask(6)).toMatchObject({ message: { content: 'one two three' }, done_reason: 'stop', eval_count: 6 });
  });

  it('a tool call the limit cuts short is no call: done_reason length, eval_count at the limit', async () => {
    const fake = await start({ reply: '', models: [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }], toolCalls: [{ function: { name: 'read_file', arguments: { path: 'a-rather-long-file-name.txt' } } }] });
    const ask = async (limit: number): Promise<Json> =>
      (await (await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'read_file' } }], stream: false, options: { num_predict: limit } })).json()) as Json;
    const cut = await ask(3);
    expect(cut).toMatchObject({ done_reason: 'length', eval_count: 3 });
    expect((cut.message as Json).tool_calls).toBeUndefined();
    expect(await ask(100)).toMatchObject({ done_reason: 'stop', message: { tool_calls: [{ function: { name: 'read_file' } }] } });
  });

  it('the calls whole before the limit are sent; the one it cuts short is dropped (a <tool_call> model)', async () => {
    const calls = [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }, { function: { name: 'read_file', arguments: { path: 'a-rather-long-file-name.txt' } } }];
    const fake = await start({ reply: '', models: [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }], toolCalls: calls });
    const res = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'read_file' } }], options: { num_predict: 14 } });
    const chunks = parseAll((await ndjson(res)).lines);
    const sent = chunks.flatMap((chunk) => ((chunk.message as Json).tool_calls as Json[] | undefined) ?? []);
    expect(sent.map((call) => (call.function as Json).arguments)).toEqual([{ path: 'a.txt' }]);
    expect(at(chunks, -1)).toMatchObject({ done: true, done_reason: 'length', eval_count: 14, message: { content: '' } });
  });

  it.each<[string, string]>([['{', 'llama 3.x'], ['[', 'a [ tag']])(
    'with tool tag %s (%s) a call the limit cuts short comes back as text in the done line, as tools.Parser.Content does',
    async (toolTag) => {
      const fake = await start({ reply: '', models: [{ name: 'argo:latest', toolTag, capabilities: ['completion', 'tools'] }], toolCalls: [{ function: { name: 'read_file', arguments: { path: 'a-rather-long-file-name.txt' } } }] });
      const ask = (limit: number) => post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'read_file' } }], options: { num_predict: limit } });
      const chunks = parseAll((await ndjson(await ask(5))).lines);
      expect(chunks.filter((chunk) => chunk.done !== true).map((chunk) => (chunk.message as Json).content)).toEqual([]);
      expect(at(chunks, -1)).toMatchObject({ done: true, done_reason: 'length', eval_count: 5, message: { role: 'assistant', content: '{"name":"read_file",' } });
      expect(chunks.some((chunk) => 'tool_calls' in (chunk.message as Json))).toBe(false);
      // Whole, it is a call as with any tag.
      const whole = parseAll((await ndjson(await ask(100))).lines);
      expect(whole.flatMap((chunk) => ((chunk.message as Json).tool_calls as unknown[] | undefined) ?? [])).toHaveLength(1);
    },
  );

  it('with tool tag {, a call after words is no call: the whole answer is text', async () => {
    const fake = await start({ models: [{ name: 'argo:latest', toolTag: '{', capabilities: ['completion', 'tools'] }], rounds: [{ reply: 'Let me look.', toolCalls: [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }] }] });
    const chunks = parseAll((await ndjson(await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'read_file' } }] }))).lines);
    expect(chunks.some((chunk) => 'tool_calls' in (chunk.message as Json))).toBe(false);
    expect(chunks.map((chunk) => (chunk.message as Json).content).join('')).toBe('Let me look.{"name":"read_file","arguments":{"path":"a.txt"}}');
  });

  it('flushes every chunk on its own, delayMs apart', async () => {
    const fake = await start({ reply: 'a b c d', scenario: { delayMs: 60 } });
    const res = await post(fake, '/api/chat', chatBody());
    const lines = lineReader(res);
    const arrivals: number[] = [];
    const t0 = Date.now();
    while ((await lines.next()) !== undefined) arrivals.push(Date.now() - t0);
    expect(arrivals).toHaveLength(5);
    // The first line comes with the headers, not with the rest: well ahead of the last, whatever the machine's load.
    expect(at(arrivals, 0)).toBeLessThan(at(arrivals, -1) - 2 * 60);
    expect(at(arrivals, -1)).toBeGreaterThanOrEqual(4 * 60 - 20);
  });

  it('holds the headers back for firstChunkDelayMs and counts it as load time', async () => {
    const fake = await start({ scenario: { firstChunkDelayMs: 150 } });
    const t0 = Date.now();
    const res = await post(fake, '/api/chat', chatBody());
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    const final = at(parseAll((await ndjson(res)).lines), -1);
    expect(final.load_duration as number).toBeGreaterThanOrEqual(140e6);
  });

  it('answers an empty chat or prompt with a load line, and keep_alive 0 with an unload line', async () => {
    const fake = await start();
    const load = await post(fake, '/api/chat', { model: 'argo', messages: [] });
    expect(await load.json()).toMatchObject({ model: 'argo', done: true, done_reason: 'load' });
    const unload = await post(fake, '/api/generate', { model: 'argo', keep_alive: 0 });
    expect(await unload.json()).toMatchObject({ response: '', done: true, done_reason: 'unload' });
  });

  it('sends tool calls in a done:false chunk when the request offers tools', async () => {
    const fake = await start({
      models: [{ name: 'argo', capabilities: ['completion', 'tools'] }],
      reply: '',
      toolCalls: [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }],
    });
    const tools = [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object' } } }];
    const chunks = parseAll((await ndjson(await post(fake, '/api/chat', chatBody('x', { tools })))).lines);
    expect(chunks).toHaveLength(2);
    expect(chunks[0]).toMatchObject({
      done: false,
      message: { role: 'assistant', content: '', tool_calls: [{ function: { index: 0, name: 'read_file', arguments: { path: 'a.txt' } } }] },
    });
    expect(chunks[1]?.done).toBe(true);
  });
});

describe('log probabilities (logprobs, top_logprobs), as Ollama 0.12.11+ sends them', () => {
  const asked = { logprobs: true, top_logprobs: 2 };
  const logprobsOf = (chunk: Json): unknown => chunk.logprobs;

  it('each done:false chunk carries its token\'s entry after "done"; the done line none; nothing unless logprobs is true', async () => {
    const fake = await start({ tokens: ['Hi', ' é', ''] });
    const chunks = parseAll((await ndjson(await post(fake, '/api/chat', chatBody('x', asked)))).lines);
    const final = defined(chunks.pop(), 'final chunk');
    for (const chunk of chunks) expect(Object.keys(chunk)).toEqual(['model', 'created_at', 'message', 'done', 'logprobs']);
    expect(chunks.map(logprobsOf)).toEqual([[fakeLogprob('Hi', 2)], [fakeLogprob(' é', 2)], [fakeLogprob('', 2)]]);
    // bytes are the token's UTF-8; an empty token has none (omitempty); the chosen token leads its alternatives.
    expect(fakeLogprob(' é', 2)).toEqual({
      token: ' é', logprob: fakeLogprobValue(' é'), bytes: [32, 195, 169],
      top_logprobs: [{ token: ' é', logprob: fakeLogprobValue(' é'), bytes: [32, 195, 169] }, { token: ' the', logprob: fakeLogprobValue(' é') - 0.5, bytes: [32, 116, 104, 101] }],
    });
    expect(fakeLogprob('', 0)).toEqual({ token: '', logprob: fakeLogprobValue('') });
    expect(final).not.toHaveProperty('logprobs');
    // top_logprobs 0: the chosen token only; top_logprobs without logprobs: nothing at all.
    const plain = parseAll((await ndjson(await post(fake, '/api/chat', chatBody('x', { logprobs: true, top_logprobs: 0 })))).lines);
    expect(plain.slice(0, -1).map(logprobsOf)).toEqual([[{ token: 'Hi', logprob: fakeLogprobValue('Hi'), bytes: [72, 105] }], [fakeLogprob(' é', 0)], [fakeLogprob('', 0)]]);
    for (const extra of [{}, { top_logprobs: 3 }, { logprobs: false, top_logprobs: 3 }]) {
      const lines = parseAll((await ndjson(await post(fake, '/api/chat', chatBody('x', extra)))).lines);
      expect(lines.some((chunk) => 'logprobs' in chunk), JSON.stringify(extra)).toBe(false);
    }
  });

  it('thinking tokens carry theirs, a done line with text its own; generate the same, logprobs after done', async () => {
    const fake = await start({ models: [{ name: 'qwen3', capabilities: ['completion', 'thinking'] }], reply: 'Hi there', thinking: 'Greet.', textInDone: true });
    const chunks = parseAll((await ndjson(await post(fake, '/api/chat', chatBody('hi', { model: 'qwen3', ...asked })))).lines);
    expect(chunks.map((chunk) => [chunk.message, chunk.logprobs])).toEqual([
      [{ role: 'assistant', content: '', thinking: 'Greet.' }, [fakeLogprob('Greet.', 2)]],
      [{ role: 'assistant', content: 'Hi' }, [fakeLogprob('Hi', 2)]],
      [{ role: 'assistant', content: ' there' }, [fakeLogprob(' there', 2)]],
    ]);
    expect(at(chunks, -1).done).toBe(true);
    const generated = parseAll((await ndjson(await post(fake, '/api/generate', { model: 'qwen3', prompt: 'hi', think: false, ...asked }))).lines);
    expect(Object.keys(at(generated, 0))).toEqual(['model', 'created_at', 'response', 'done', 'logprobs']);
    expect(generated.map(logprobsOf)).toEqual([[fakeLogprob('Hi', 2)], [fakeLogprob(' there', 2)]]);
  });

  it('a tool call\'s tokens go out as Ollama\'s parser holds the call back: chunks with empty content, the last with the call', async () => {
    const call = { function: { name: 'f', arguments: { path: 'a.txt' } } };
    const fake = await start({ models: [{ name: 'argo', capabilities: ['completion', 'tools'] }], reply: '', toolCalls: [call] });
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const chunks = parseAll((await ndjson(await post(fake, '/api/chat', chatBody('x', { tools, ...asked })))).lines);
    const final = defined(chunks.pop(), 'final chunk');
    const entries = chunks.flatMap((chunk) => chunk.logprobs as Json[]);
    // The call as the model wrote it (its name and arguments: Ollama adds the index and id), about four characters a token, one entry each.
    expect(entries.map((entry) => entry.token).join('')).toBe(JSON.stringify(call.function));
    expect(entries).toHaveLength(final.eval_count as number);
    expect(chunks.slice(0, -1).every((chunk) => JSON.stringify(chunk.message) === '{"role":"assistant","content":""}' && (chunk.logprobs as Json[]).length === 1)).toBe(true);
    expect(at(chunks, -1)).toMatchObject({ message: { tool_calls: [{ function: { name: 'f' } }] }, logprobs: [{ token: at(entries, -1).token }] });
    // Without logprobs the call comes in one chunk, as before.
    expect(parseAll((await ndjson(await post(fake, '/api/chat', chatBody('x', { tools })))).lines)).toHaveLength(2);
  });

  it('stream:false gathers every chunk\'s entries in order, as writeChatResponse does; none asked, none sent', async () => {
    const fake = await start({ models: [{ name: 'qwen3', capabilities: ['completion', 'thinking'] }], reply: 'one two', thinking: 'Hm.' });
    const whole = (await (await post(fake, '/api/chat', chatBody('x', { model: 'qwen3', stream: false, ...asked }))).json()) as Json;
    expect(Object.keys(whole).slice(0, 6)).toEqual(['model', 'created_at', 'message', 'done_reason', 'done', 'logprobs']);
    expect(whole.logprobs).toEqual([fakeLogprob('Hm.', 2), fakeLogprob('one', 2), fakeLogprob(' two', 2)]);
    const generated = (await (await post(fake, '/api/generate', { model: 'qwen3', prompt: 'x', think: false, stream: false, logprobs: true })).json()) as Json;
    expect(generated.logprobs).toEqual([fakeLogprob('one', 0), fakeLogprob(' two', 0)]);
    expect(await (await post(fake, '/api/chat', chatBody('x', { model: 'qwen3', stream: false }))).json()).not.toHaveProperty('logprobs');
  });

  it('refuses top_logprobs outside 0–20 before looking for the model, and wrong types as Gin binds them', async () => {
    const fake = await start();
    const refused = async (body: Json, path = '/api/chat'): Promise<[number, unknown]> => {
      const res = await post(fake, path, body);
      return [res.status, ((await res.json()) as Json).error];
    };
    const range = 'top_logprobs must be between 0 and 20';
    expect(await refused(chatBody('x', { logprobs: true, top_logprobs: 21 }))).toEqual([400, range]);
    expect(await refused(chatBody('x', { top_logprobs: -1 }))).toEqual([400, range]);
    expect(await refused({ model: 'nope', prompt: 'x', logprobs: true, top_logprobs: 99 }, '/api/generate')).toEqual([400, range]);
    expect(await refused(chatBody('x', { logprobs: true, top_logprobs: 2.5 }))).toEqual([400, 'json: cannot unmarshal number 2.5 into Go struct field ChatRequest.top_logprobs of type int']);
    expect(await refused(chatBody('x', { logprobs: 'yes' }))).toEqual([400, 'json: cannot unmarshal string into Go struct field ChatRequest.logprobs of type bool']);
    expect((await post(fake, '/api/chat', chatBody('x', { logprobs: true, top_logprobs: 20 }))).status).toBe(200);
  });
});

describe('model names', () => {
  it('treats every spelling of argo:latest as the same model and echoes the spelling', async () => {
    const fake = await start();
    for (const model of ['argo', 'argo:latest', 'library/argo:latest', 'registry.ollama.ai/library/argo:latest', 'ARGO:Latest']) {
      const res = await post(fake, '/api/chat', chatBody('x', { model, stream: false }));
      expect(res.status, model).toBe(200);
      expect(((await res.json()) as Json).model).toBe(model);
      const gen = await post(fake, '/api/generate', { model, prompt: 'x' });
      expect(parseAll((await ndjson(gen)).lines).every((c) => c.model === model)).toBe(true);
    }
  });

  it('does not take another tag for :latest, and reports unknown models with 404', async () => {
    const fake = await start();
    const gen = await post(fake, '/api/generate', { model: 'argo:7b', prompt: 'x' });
    expect(gen.status).toBe(404);
    expect(await gen.json()).toEqual({ error: "model 'argo:7b' not found" });
    const chat = await post(fake, '/api/chat', chatBody('x', { model: 'Other' }));
    expect(chat.status).toBe(404);
    expect(await chat.json()).toEqual({ error: "model 'Other' not found" });
    const bad = await post(fake, '/api/chat', chatBody('x', { model: 'a/b/c/d' }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'invalid model name' });
  });
});

describe('errors', () => {
  it('rejects an empty body with 400 missing request body', async () => {
    const fake = await start();
    for (const path of ['/api/generate', '/api/chat', '/api/show']) {
      const res = await post(fake, path, '');
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ error: 'missing request body' });
    }
  });

  it('rejects invalid JSON with 400 and a Go-style message', async () => {
    const fake = await start();
    const res = await post(fake, '/api/chat', 'xyz');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "invalid character 'x' looking for beginning of value" });
    const truncated = await post(fake, '/api/chat', '{"model":');
    expect(await truncated.json()).toEqual({ error: 'unexpected EOF' });
    const wrongType = await post(fake, '/api/chat', { model: 'argo', messages: 'hi' });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as Json).error).toMatch(/^json: cannot unmarshal string into Go struct field ChatRequest\.messages/);
    // api.Message's string fields: thinking, tool_name and tool_call_id are checked like content.
    const wrongThinking = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'assistant', content: '', thinking: 1 }] });
    expect(wrongThinking.status).toBe(400);
    expect(((await wrongThinking.json()) as Json).error).toBe('json: cannot unmarshal number into Go struct field Message.messages.thinking of type string');
    // api.ToolCall's ID too.
    const wrongCallId = await post(fake, '/api/chat', { model: 'argo', messages: [{ role: 'assistant', content: '', tool_calls: [{ id: 7, function: { name: 'f', arguments: {} } }] }] });
    expect(wrongCallId.status).toBe(400);
    expect(((await wrongCallId.json()) as Json).error).toBe('json: cannot unmarshal number into Go struct field ToolCall.messages.tool_calls.id of type string');
    expect(fake.requests[0]?.json).toBeUndefined();
  });

  it('needs a model for chat (400) and reports a missing one for generate as not found (404)', async () => {
    const fake = await start();
    const chat = await post(fake, '/api/chat', { messages: [{ role: 'user', content: 'x' }] });
    expect(chat.status).toBe(400);
    expect(await chat.json()).toEqual({ error: 'model is required' });
    const gen = await post(fake, '/api/generate', { prompt: 'x' });
    expect(gen.status).toBe(404);
    expect(await gen.json()).toEqual({ error: "model '' not found" });
  });

  it('refuses chat, generate, tools and thinking a model does not support', async () => {
    const fake = await start({ models: [{ name: 'embedder', capabilities: ['embedding'] }, { name: 'argo' }] });
    const chat = await post(fake, '/api/chat', chatBody('x', { model: 'embedder' }));
    expect(chat.status).toBe(400);
    expect(await chat.json()).toEqual({ error: '"embedder" does not support chat' });
    const gen = await post(fake, '/api/generate', { model: 'embedder', prompt: 'x' });
    expect(await gen.json()).toEqual({ error: '"embedder" does not support generate' });
    const tools = await post(fake, '/api/chat', chatBody('x', { tools: [{ type: 'function', function: { name: 'f' } }] }));
    expect(tools.status).toBe(400);
    expect(await tools.json()).toEqual({ error: 'registry.ollama.ai/library/argo:latest does not support tools' });
    const think = await post(fake, '/api/chat', chatBody('x', { think: true }));
    expect(await think.json()).toEqual({ error: '"argo" does not support thinking' });
    const level = await post(fake, '/api/chat', chatBody('x', { think: 'foo' }));
    expect(level.status).toBe(400);
    expect(await level.json()).toEqual({ error: 'invalid think value: "foo" (must be "high", "medium", "low", "max", true, or false)' });
  });

  it('answers 503 server busy for the next N inference requests, then serves normally', async () => {
    const fake = await start({ scenario: { busy: 2 } });
    for (let i = 0; i < 2; i++) {
      const res = await post(fake, '/api/chat', chatBody());
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ error: 'server busy, please try again.  maximum pending requests exceeded' });
    }
    expect((await fetch(`${fake.url}/api/tags`)).status).toBe(200);
    expect((await post(fake, '/api/chat', chatBody(), {})).status).toBe(200);
    expect(BUSY_MESSAGE).toContain('.  maximum');
  });

  it('fails with 500 before the first chunk on a runner error', async () => {
    const fake = await start({ scenario: { runnerError: true } });
    const res = await post(fake, '/api/chat', chatBody());
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: RUNNER_ERROR_MESSAGE });
    fake.setScenario({ runnerError: 'llama runner process has terminated: exit status 2' });
    const gen = await post(fake, '/api/generate', { model: 'argo', prompt: 'x', stream: false });
    expect(await gen.json()).toEqual({ error: 'llama runner process has terminated: exit status 2' });
  });

  it('answers with a proxy\'s page instead of Ollama when scripted to', async () => {
    const page = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n</html>\r\n';
    const fake = await start({ scenario: { proxyPage: { status: 502, body: page } } });
    const res = await post(fake, '/api/chat', chatBody());
    expect(res.status).toBe(502);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(await res.text()).toBe(page);
  });

  it('reports a mid-stream failure as status 200, one error line and no done line', async () => {
    const fake = await start({ reply: 'a b c d e', scenario: { errorMidStream: { afterChunks: 2, message: 'boom' } } });
    const res = await post(fake, '/api/chat', chatBody());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const chunks = parseAll((await ndjson(res)).lines);
    expect(chunks).toHaveLength(3);
    expect(chunks.slice(0, 2).map(chunkText)).toEqual(['a', ' b']);
    expect(chunks[2]).toEqual({ error: 'boom' });
    expect(chunks.some((c) => c.done === true)).toBe(false);

    const whole = await post(fake, '/api/chat', chatBody('x', { stream: false }));
    expect(whole.status).toBe(500);
    expect(await whole.json()).toEqual({ error: 'boom' });
  });

  it('drops the connection after K chunks', async () => {
    const fake = await start({ reply: 'a b c d e', scenario: { dropAfter: 2, delayMs: 5 } });
    const res = await post(fake, '/api/generate', { model: 'argo', prompt: 'x' });
    const lines = lineReader(res);
    expect(await lines.next()).toContain('"response":"a"');
    expect(await lines.next()).toContain('"response":" b"');
    await expect(lines.next()).rejects.toThrow();
    const record = fake.requests[0];
    await record?.settled;
    expect(record).toMatchObject({ linesWritten: 2, clientAborted: false });
  });

  it('writes a line that is not JSON, then goes on or ends as configured', async () => {
    const fake = await start({ reply: 'a b c', scenario: { malformedAfter: 1 } });
    const { lines } = await ndjson(await post(fake, '/api/chat', chatBody()));
    expect(lines).toHaveLength(5);
    expect((): unknown => JSON.parse(at(lines, 1))).toThrow();
    const rest = parseAll([lines[0], ...lines.slice(2)] as string[]);
    expect(rest.map(chunkText).join('')).toBe('a b c');
    expect(rest.at(-1)?.done).toBe(true);

    fake.setScenario({ malformedAfter: { afterChunks: 2, line: 'garbage', then: 'end' } });
    const ended = (await ndjson(await post(fake, '/api/chat', chatBody()))).lines;
    expect(ended).toHaveLength(3);
    expect(ended[2]).toBe('garbage');
  });

  it('truncates the stream cleanly without the done line', async () => {
    const fake = await start({ reply: 'a b c', scenario: { truncate: true } });
    const res = await post(fake, '/api/chat', chatBody());
    const chunks = parseAll((await ndjson(res)).lines);
    expect(chunks.map(chunkText).join('')).toBe('a b c');
    expect(chunks.every((c) => c.done === false)).toBe(true);
    fake.setScenario({ truncate: 1 });
    expect((await ndjson(await post(fake, '/api/chat', chatBody()))).lines).toHaveLength(1);
  });

  it('hangs after K chunks until the client gives up, and records the abort', async () => {
    const fake = await start({ reply: 'a b c', scenario: { hang: 1 } });
    const controller = new AbortController();
    const res = await post(fake, '/api/chat', chatBody(), { signal: controller.signal });
    const lines = lineReader(res);
    expect(await lines.next()).toContain('"content":"a"');
    const pending = lines.next().catch(() => 'aborted');
    // Without the hang the whole answer (4 lines) would be out long before the abort.
    controller.abort();
    expect(await pending).toBe('aborted');
    const record = fake.requests[0];
    await record?.settled;
    expect(record).toMatchObject({ clientAborted: true, linesWritten: 1, status: 200 });
  });

  it('holds the response open after the done line until the client leaves (a buffering proxy), and records the abort', async () => {
    const fake = await start({ reply: 'a b', scenario: { openAfterDone: true } });
    const controller = new AbortController();
    const res = await post(fake, '/api/chat', chatBody(), { signal: controller.signal });
    const lines = lineReader(res);
    expect(await lines.next()).toContain('"content":"a"');
    expect(await lines.next()).toContain('"content":" b"');
    expect(JSON.parse((await lines.next()) ?? '')).toMatchObject({ done: true, done_reason: 'stop' });
    const pending = lines.next().catch(() => 'aborted');
    controller.abort();
    expect(await pending).toBe('aborted');
    const record = fake.requests[0];
    await record?.settled;
    expect(record).toMatchObject({ clientAborted: true, linesWritten: 3, status: 200 });
  });

  it('applies a scenario to the next `times` requests only', async () => {
    const fake = await start({ scenario: { runnerError: true, times: 1 } });
    expect((await post(fake, '/api/chat', chatBody())).status).toBe(500);
    const second = await post(fake, '/api/chat', chatBody());
    expect(second.status).toBe(200);
    await second.text();
  });

  it('forbids a foreign Host header with 403 and an empty body', async () => {
    const fake = await start();
    for (const host of ['evil.example.com', 'ollama.com:11434', '8.8.8.8:80']) {
      const res = await rawRequest(fake, '/api/tags', { Host: host });
      expect(res.status, host).toBe(403);
      expect(res.body).toBe('');
    }
    expect((await rawRequest(fake, '/nowhere', { Host: 'evil.example.com' })).status).toBe(403);
    for (const host of ['localhost', 'localhost:1234', '127.0.0.1:9', '[::1]:5', 'argo.localhost']) {
      const res = await rawRequest(fake, '/', { Host: host });
      expect(res.status, host).toBe(200);
      expect(res.body).toBe('Ollama is running');
    }
  });
});

describe('recording and connections', () => {
  it('records every request in arrival order', async () => {
    const fake = await start();
    await fetch(`${fake.url}/api/version?x=1`);
    await (await post(fake, '/api/chat', chatBody('hi', { stream: false }), { headers: { 'X-Test': 'yes' } })).text();
    await (await fetch(`${fake.url}/missing`)).text();
    expect(fake.requests.map((r) => [r.method, r.path, r.status])).toEqual([
      ['GET', '/api/version', 200],
      ['POST', '/api/chat', 200],
      ['GET', '/missing', 404],
    ]);
    const chat = fake.requests[1];
    expect(chat?.headers['x-test']).toBe('yes');
    expect(chat?.body).toBe(JSON.stringify(chatBody('hi', { stream: false })));
    expect(chat?.json).toEqual(chatBody('hi', { stream: false }));
    expect(fake.requests[0]?.json).toBeUndefined();
  });

  it('counts TCP connections, so keep-alive reuse can be checked', async () => {
    const fake = await start();
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < 3; i++) await rawRequest(fake, '/api/version', {}, keepAlive);
    expect(fake.connections).toBe(1);
    keepAlive.destroy();
    const noKeepAlive = new Agent({ keepAlive: false });
    await rawRequest(fake, '/', {}, noKeepAlive);
    await rawRequest(fake, '/', {}, noKeepAlive);
    expect(fake.connections).toBe(3);
    // fetch reuses its pooled connections too (undici may open a second one while releasing the first).
    const before = fake.connections;
    for (let i = 0; i < 10; i++) await (await fetch(`${fake.url}/api/version`)).text();
    expect(fake.connections - before).toBeLessThanOrEqual(2);
  });

  it('notices a client that aborts mid-stream and stops writing', async () => {
    const fake = await start({ tokens: Array.from({ length: 50 }, (_, i) => ` t${i}`), scenario: { delayMs: 20 } });
    const controller = new AbortController();
    const res = await post(fake, '/api/chat', chatBody(), { signal: controller.signal });
    const lines = lineReader(res);
    await lines.next();
    await lines.next();
    controller.abort();
    const record = at(fake.requests, 0);
    await record.settled; // the writer has stopped by then
    expect(record.clientAborted).toBe(true);
    expect(record.linesWritten).toBeLessThan(10);
  });

  it('notices a client that aborts while the model is still loading', async () => {
    const fake = await start({ scenario: { firstChunkDelayMs: 5_000 } });
    const controller = new AbortController();
    const pending = post(fake, '/api/chat', chatBody(), { signal: controller.signal });
    await fake.waitForRequest((r) => r.json !== undefined); // read, so now loading
    controller.abort();
    await expect(pending).rejects.toThrow();
    await fake.requests[0]?.settled;
    expect(fake.requests[0]).toMatchObject({ clientAborted: true, linesWritten: 0, status: undefined });
  });

  it('closes with open streams still hanging, without calling that a client abort', async () => {
    const fake = await startFakeOllama({ scenario: { hang: 'beforeHeaders' } });
    const pending = post(fake, '/api/chat', chatBody()).catch((error: unknown) => error);
    await fake.waitForRequest((r) => r.json !== undefined);
    await fake.close();
    expect(await pending).toBeInstanceOf(Error);
    expect(fake.requests[0]?.clientAborted).toBe(false);
  });
});

describe('with the ollama npm client', () => {
  it('streams a chat and a generate', async () => {
    const fake = await start({ textInDone: true });
    const client = new Ollama({ host: fake.url });
    let chat = '';
    for await (const part of await client.chat({ model: 'argo', messages: [{ role: 'user', content: 'ping pong' }], stream: true })) {
      chat += part.message.content;
    }
    expect(chat).toBe('You said: ping pong');
    let gen = '';
    let last: Json | undefined;
    for await (const part of await client.generate({ model: 'argo:latest', prompt: 'ping', stream: true })) {
      gen += String(part.response);
      last = part as unknown as Json;
    }
    expect(gen).toBe('You said: ping');
    expect(last).toMatchObject({ done: true, done_reason: 'stop' });
    const logprobs: unknown[] = [];
    for await (const part of await client.chat({ model: 'argo', messages: [{ role: 'user', content: 'ping' }], stream: true, logprobs: true, top_logprobs: 1 })) {
      logprobs.push(...(part.logprobs ?? []));
    }
    expect(logprobs).toEqual(['You', ' said:', ' ping'].map((token) => fakeLogprob(token, 1)));
  });

  it('surfaces a mid-stream error line as a thrown Error, and HTTP errors as ResponseError', async () => {
    const fake = await start({ scenario: { errorMidStream: 1 } });
    const client = new Ollama({ host: fake.url });
    const received: string[] = [];
    const consume = async () => {
      for await (const part of await client.chat({ model: 'argo', messages: [{ role: 'user', content: 'x y' }], stream: true })) {
        received.push(part.message.content);
      }
    };
    await expect(consume()).rejects.toThrow(RUNNER_ERROR_MESSAGE);
    expect(received).toEqual(['You']);

    fake.setScenario(undefined);
    const error = await client.generate({ model: 'argo:7b', prompt: 'x', stream: true }).catch((e: unknown) => e as Json);
    expect(error).toMatchObject({ name: 'ResponseError', status_code: 404, error: "model 'argo:7b' not found" });
  });
});

describe('cloud models (routes.go: a model whose Modelfile names a remote host)', () => {
  const ask = (url: string, path: string) =>
    fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify({ model: 'gpt-oss:120b-cloud', messages: [{ role: 'user', content: 'hi' }], prompt: 'hi' }) });
  it.each(['/api/chat', '/api/generate'])('%s: OLLAMA_NO_CLOUD is a 403 in JSON; not signed in a 401 with the signin_url; else an answer', async (path) => {
    const fake = await start({ models: [{ name: 'gpt-oss:120b-cloud', remote: true }], cloud: 'disabled' });
    const disabled = await ask(fake.url, path);
    expect(disabled.status).toBe(403);
    expect(await disabled.json()).toEqual({ error: 'ollama cloud is disabled: remote model is unavailable' });
    fake.options.cloud = 'signed-out';
    const signedOut = await ask(fake.url, path);
    expect(signedOut.status).toBe(401);
    expect(await signedOut.json()).toEqual({ error: 'unauthorized', signin_url: SIGNIN_URL });
    fake.options.cloud = undefined;
    expect((await ask(fake.url, path)).status).toBe(200);
  });

  it('tagsBody replaces the /api/tags answer', async () => {
    const fake = await start({ tagsBody: '{"models":null}' });
    const response = await fetch(`${fake.url}/api/tags`);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.text()).toBe('{"models":null}');
  });
});

describe('standalone mode', () => {
  it('prints its URL and serves the configured number of tokens', async () => {
    const script = fileURLToPath(new URL('./fake-ollama.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script, '--port', '0', '--tokens', '7', '--delay-ms', '0'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [first] = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next().then((r) => [r.value as string]);
      expect(first).toMatch(/^listening http:\/\/127\.0\.0\.1:\d+$/);
      const url = defined(first, 'first line').slice('listening '.length);
      const res = await fetch(`${url}/api/generate`, { method: 'POST', body: JSON.stringify({ model: 'argo', prompt: 'x', stream: false }) });
      expect(await res.json()).toMatchObject({ response: 'lorem ipsum dolor sit amet consectetur adipiscing', eval_count: 7 });
    } finally {
      child.kill('SIGTERM');
    }
  });
});
