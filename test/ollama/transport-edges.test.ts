// Ollama's answers at the edges of its protocol: whole answers that are not its JSON, chunks not in
// its shape, the silence of a tool call being written, a body left open after the final chunk,
// figures Go leaves out, and failures that are not Ollama's at all.
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_HINTS, SERVER_HINTS } from '../../src/ollama/fix-hints.js';
import type { FixHints } from '../../src/ollama/fix-hints.js';
import { OllamaTransport, httpFailure, metricsOf } from '../../src/ollama/transport.js';
import type { Metrics, StreamOutcome, TransportOptions, TransportRequest } from '../../src/ollama/transport.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';

const ollama = await fakeOllamaPerFile({ models: [{ name: 'argo', capabilities: ['completion', 'tools'] }], tokens: ['a', 'b'] });
afterEach(() => {
  ollama.setScenario(undefined);
  ollama.options.tokens = ['a', 'b'];
  ollama.requests.length = 0;
});

const H = 'http://ollama.test:11434';
const TOOLS = [{ type: 'function' as const, function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: {} } } }];

function chat(stream: boolean, extra: { tools?: typeof TOOLS } = {}): TransportRequest {
  return { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream, ...extra } };
}

function transport(options: Partial<TransportOptions> = {}): OllamaTransport {
  return new OllamaTransport({ host: ollama.url, attempts: 1, initialDelayMs: 1, idleMs: 5000, ...options });
}

/** A server at H that answers every request with status 200 and `body`. */
function answering(body: string, type: string): typeof fetch {
  return () => Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': type } }));
}

/** A server at H whose streamed body fails with `error` after one chunk (each request gets its own). */
function failingAfterOne(error: Error): typeof fetch {
  const first = new TextEncoder().encode(line({ model: 'argo', message: { role: 'assistant', content: 'A' }, done: false }));
  return () => {
    let sent = false;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent) controller.error(error);
        else controller.enqueue(first);
        sent = true;
      },
    });
    return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson' } }));
  };
}

async function run(t: OllamaTransport, request: TransportRequest): Promise<{ outcome: StreamOutcome; texts: string[] }> {
  const texts: string[] = [];
  const outcome = await t.stream(request, { onText: (text) => texts.push(text) });
  return { outcome, texts };
}

const NOT_JSON = (shown: string): string => `Ollama sent a line that is not JSON (${shown}); the answer is incomplete`;
const NOT_A_CHUNK = (shown: string): string => `Ollama sent a line that is not a chunk of an answer (${shown}); the answer is incomplete`;
const line = (value: object): string => `${JSON.stringify(value)}\n`;
const DONE = { model: 'argo', created_at: '2026-01-15T09:30:00Z', message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', eval_count: 1 };

describe('a whole answer (stream: false) is read as the client reads it', () => {
  const ndjson = `${line({ model: 'argo', message: { role: 'assistant', content: 'A' }, done: false })}${line(DONE)}`;
  it.each<[string, string, string, StreamOutcome['failure']]>([
    ['a login page', 'text/html', '<html><body>Login required</body></html>\n', { kind: 'malformed', message: NOT_JSON('<html><body>Login required</body></html>') }],
    ['null', 'application/json', 'null', { kind: 'malformed', message: NOT_JSON('null') }],
    ['a list', 'application/json', '[{"done":true}]', { kind: 'malformed', message: NOT_JSON('[{"done":true}]') }],
    ['nothing', 'application/json', '', { kind: 'malformed', message: NOT_JSON('an empty answer') }],
    ['the lines of a stream', 'application/x-ndjson', ndjson, { kind: 'malformed', message: NOT_JSON(`${ndjson.slice(0, 80).replace('\n', ' ')}…`) }],
    ['a message that is null', 'application/json', line({ ...DONE, message: null }), { kind: 'malformed', message: NOT_A_CHUNK(`${JSON.stringify({ ...DONE, message: null }).slice(0, 80)}…`) }],
    ['Ollama\'s answer', 'application/json; charset=utf-8', line({ ...DONE, message: { role: 'assistant', content: 'Hi' } }), null],
    // A success status with an error for its whole answer: said in its words, not as an answer cut short.
    ['an error with a success status', 'application/json', '{"error":"upstream rate limit"}', { kind: 'mid-stream', message: 'Ollama answered with an error: upstream rate limit' }],
    ['an error object with a success status', 'application/json', '{"error":{"message":"quota used up","type":"x"}}', { kind: 'mid-stream', message: 'Ollama answered with an error: quota used up' }],
    ['an empty error with a success status', 'application/json', '{"error":null}', { kind: 'mid-stream', message: 'Ollama answered with an error: an empty error' }],
    ['Ollama\'s answer after a byte order mark', 'application/json', `\uFEFF${line({ ...DONE, message: { role: 'assistant', content: 'Hi' } })}`, null],
  ])('%s', async (_case, type, body, failure) => {
    const { outcome, texts } = await run(transport({ host: H, fetch: answering(body, type) }), chat(false));
    expect(outcome.failure).toEqual(failure);
    expect(outcome.status).toBe(failure === null ? 'ok' : 'error');
    expect(texts).toEqual(failure === null ? ['Hi'] : []);
  });

  it('a login page from the stand-in (a proxy before Ollama answering 200) fails the same way', async () => {
    ollama.setScenario({ proxyPage: { status: 200, body: '<html><body>Login required</body></html>\n' } });
    const { outcome } = await run(transport(), chat(false));
    expect(outcome.failure).toEqual({ kind: 'malformed', message: NOT_JSON('<html><body>Login required</body></html>') });
  });
});

describe('a streamed chunk that is JSON but not in the shape of Ollama\'s answers', () => {
  const chunk = (message: unknown): string => line({ model: 'argo', message, done: false });
  it.each<[string, string, string | null]>([
    ['a message that is null', chunk(null), JSON.stringify({ model: 'argo', message: null, done: false })],
    ['text that is a number', chunk({ role: 'assistant', content: 5 }), JSON.stringify({ model: 'argo', message: { role: 'assistant', content: 5 }, done: false })],
    ['reasoning that is an object', chunk({ role: 'assistant', content: '', thinking: {} }), JSON.stringify({ model: 'argo', message: { role: 'assistant', content: '', thinking: {} }, done: false })],
    ['tool calls that are no list', chunk({ role: 'assistant', content: '', tool_calls: {} }), JSON.stringify({ model: 'argo', message: { role: 'assistant', content: '', tool_calls: {} }, done: false })],
    // Go always sends them; a field left out is empty, not wrong.
    ['a message without content', chunk({ role: 'assistant' }), null],
  ])('%s', async (_case, bad, shown) => {
    const body = `${chunk({ role: 'assistant', content: 'A' })}${bad}${line(DONE)}`;
    const { outcome, texts } = await run(transport({ host: H, fetch: answering(body, 'application/x-ndjson') }), chat(true));
    expect(texts).toEqual(['A']);
    expect(outcome.failure).toEqual(shown === null ? null : { kind: 'malformed', message: NOT_A_CHUNK(shown.length > 80 ? `${shown.slice(0, 80)}…` : shown) });
  });
});

describe('failures that are not Ollama\'s', () => {
  it.each<[string, Error, StreamOutcome['failure'] | 'thrown']>([
    // What Node's fetch gives for a socket lost mid-body.
    ['a connection lost mid-answer', new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }), { kind: 'dropped', message: `the connection to Ollama at ${H} dropped mid-answer; the answer is incomplete` }],
    ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), { kind: 'dropped', message: `the connection to Ollama at ${H} dropped mid-answer; the answer is incomplete` }],
    // No network error has no cause: this is a bug, and said to be one where it is caught.
    ['a TypeError of no connection\'s', new TypeError('Cannot read properties of undefined'), 'thrown'],
    ['a RangeError', new RangeError('Invalid array length'), 'thrown'],
  ])('%s', async (_case, error, expected) => {
    const asked = run(transport({ host: H, fetch: failingAfterOne(error) }), chat(true));
    if (expected === 'thrown') await expect(asked).rejects.toBe(error);
    else expect((await asked).outcome.failure).toEqual(expected);
  });

  it('a hook that throws fails the call with its own error, not as a dropped connection, and the request is given up', async () => {
    ollama.setScenario({ hang: 1 });
    const bug = new TypeError('Cannot read properties of null (reading \'length\')');
    const asked = transport().stream(chat(true), {
      onText: () => {
        throw bug;
      },
    });
    await expect(asked).rejects.toBe(bug);
    const request = ollama.requests.find((r) => r.path === '/api/chat');
    await request?.settled;
    expect(request?.clientAborted).toBe(true);
  });
});

describe('silence', () => {
  // The fix names the config file whose it is: the server's operator's, for a client of argo serve.
  it.each<[string, number | 'beforeHeaders', FixHints, string]>([
    ['before the first chunk (a model loading)', 'beforeHeaders', CLI_HINTS, `no data from Ollama at ${ollama.url} for 0.15s; the stream was aborted (raise timeouts.idleMs in config.json if the model is slow to load)`],
    ['after the answer began', 1, CLI_HINTS, `no data from Ollama at ${ollama.url} for 0.15s after its answer began; the stream was aborted (Ollama went silent mid-answer; raise timeouts.idleMs in config.json to wait longer)`],
    ['before the first chunk, through argo serve', 'beforeHeaders', SERVER_HINTS, `no data from Ollama at ${ollama.url} for 0.15s; the stream was aborted (raise timeouts.idleMs in argo serve's config.json if the model is slow to load)`],
    ['after the answer began, through argo serve', 1, SERVER_HINTS, `no data from Ollama at ${ollama.url} for 0.15s after its answer began; the stream was aborted (Ollama went silent mid-answer; raise timeouts.idleMs in argo serve's config.json to wait longer)`],
  ])('%s, without tools: aborted after idleMs, said so', async (_case, hang, hints, message) => {
    ollama.setScenario({ hang });
    const { outcome } = await run(transport({ idleMs: 150, hints }), chat(true));
    expect(outcome).toMatchObject({ status: 'error', failure: { kind: 'idle', message } });
  });

  it('a request that offers tools is not cut by idleMs: Ollama sends nothing while the model writes a call', async () => {
    ollama.setScenario({ holdAfter: 1 });
    const withTools = run(transport({ idleMs: 150 }), chat(true, { tools: TOOLS }));
    const held = await ollama.waitForHold();
    // The same silence without tools, begun later, is cut: the one with tools has been silent longer.
    const without = await run(transport({ idleMs: 150 }), chat(true));
    expect(without.outcome.failure?.kind).toBe('idle');
    expect(held).toMatchObject({ held: true, clientAborted: false });
    ollama.release();
    const { outcome, texts } = await withTools;
    expect(outcome).toMatchObject({ status: 'ok', failure: null });
    expect(texts).toEqual(['a', 'b']);
  });

  it.each<[string, TransportRequest, string]>([
    ['without tools', chat(true), ''],
    ['with tools', chat(true, { tools: TOOLS }), ' (Ollama sends nothing while a model loads or writes a tool call: preload the model, or ask for smaller steps)'],
  ])('Node\'s own 300 s, %s, is said to be the most it waits', async (_case, request, why) => {
    const timeout = new TypeError('terminated', { cause: Object.assign(new Error('Body Timeout Error'), { code: 'UND_ERR_BODY_TIMEOUT' }) });
    const { outcome } = await run(transport({ host: H, fetch: failingAfterOne(timeout) }), request);
    expect(outcome.failure).toEqual({ kind: 'idle', message: `no data from Ollama at ${H} for 300s, the most Node's HTTP client waits; the request was abandoned${why}` });
  });
});

describe('the final chunk ends the answer', () => {
  it('a body held open after it (a buffering proxy) is given up: the answer is complete', async () => {
    ollama.setScenario({ openAfterDone: true });
    const { outcome, texts } = await run(transport(), chat(true));
    expect(outcome).toMatchObject({ status: 'ok', failure: null, metrics: { done_reason: 'stop', eval_count: 2 } });
    expect(texts).toEqual(['a', 'b']);
    const request = ollama.requests.find((r) => r.path === '/api/chat');
    await request?.settled;
    expect(request).toMatchObject({ clientAborted: true, linesWritten: 3 });
  });

  it('a body that ends keeps its connection for the next request', async () => {
    const t = transport();
    const before = ollama.connections;
    for (let turn = 0; turn < 5; turn++) expect((await run(t, chat(true))).outcome.status).toBe('ok');
    // undici may open a second while it releases the first.
    expect(ollama.connections - before).toBeLessThanOrEqual(2);
    expect(ollama.requests.filter((r) => r.clientAborted)).toEqual([]);
  });

  it('so does one whose end comes in a later write, as Ollama writes it', async () => {
    ollama.setScenario({ endAfterMs: 30 });
    const t = transport();
    const before = ollama.connections;
    for (let turn = 0; turn < 5; turn++) expect((await run(t, chat(true))).outcome.status).toBe('ok');
    expect(ollama.connections - before).toBeLessThanOrEqual(2);
    expect(ollama.requests.filter((r) => r.clientAborted)).toEqual([]);
  });
});

describe('modelCapabilities: asked once per model, as the window is', () => {
  it('one /api/show for several turns, the capabilities as listed', async () => {
    const t = transport();
    expect(await t.modelCapabilities('argo')).toEqual(['completion', 'tools']);
    expect(await t.modelCapabilities('argo')).toEqual(['completion', 'tools']);
    expect(ollama.requests.filter((request) => request.path === '/api/show')).toHaveLength(1);
  });
});

describe('metricsOf: the figures of a final chunk, a zero Ollama left out being 0', () => {
  const all = { total_duration: 9, load_duration: 1, prompt_eval_count: 3, prompt_eval_duration: 2, eval_count: 4, eval_duration: 5 };
  it.each<[string, Parameters<typeof metricsOf>[0], Metrics]>([
    ['every figure', { ...all, done_reason: 'stop' }, { ...all, done_reason: 'stop' }],
    // Go's api.Metrics is all omitempty: an empty answer's counts are not sent.
    ['the counts left out', { done_reason: 'stop', total_duration: 5, load_duration: 1 }, { total_duration: 5, load_duration: 1, prompt_eval_count: 0, prompt_eval_duration: 0, eval_count: 0, eval_duration: 0, done_reason: 'stop' }],
    ['a load line (nothing but its reason)', { done_reason: 'load' }, { total_duration: 0, load_duration: 0, prompt_eval_count: 0, prompt_eval_duration: 0, eval_count: 0, eval_duration: 0, done_reason: 'load' }],
    ['a release before done_reason', { ...all }, { ...all, done_reason: null }],
    // Not Ollama's: unknown, not 0.
    ['a count that is no number', { ...all, eval_count: '4', prompt_eval_count: null }, { ...all, eval_count: null, prompt_eval_count: null, done_reason: null }],
  ])('%s', (_case, chunk, metrics) => {
    expect(metricsOf(chunk)).toEqual(metrics);
  });

  it('an empty answer from the stand-in (no eval_count sent) has 0 answer tokens, not none', async () => {
    ollama.options.tokens = [];
    const { outcome } = await run(transport(), chat(true));
    expect(outcome.status).toBe('ok');
    expect(outcome.metrics.eval_count).toBe(0);
    expect(outcome.metrics.prompt_eval_count).toBeGreaterThan(0);
  });
});

describe('httpFailure: a model that cannot think, asked to', () => {
  const refusal = Object.assign(new Error('"argo" does not support thinking'), { name: 'ResponseError', status_code: 400, error: '"argo" does not support thinking' });
  it.each([
    [CLI_HINTS, 'ask with --think off (or remove "think" from config.json), or choose a thinking model with --model ("ollama show MODEL" lists "thinking" under its capabilities)'],
    [SERVER_HINTS, 'leave out "reasoning_effort" (and "think" in argo serve\'s config.json), or choose a thinking model with the request\'s "model" ("ollama show MODEL" lists "thinking" under its capabilities)'],
  ])('names the fix in the caller\'s terms (%#)', (hints, fix) => {
    expect(httpFailure(H, refusal, hints)).toEqual({ kind: 'http', httpStatus: 400, message: `Ollama at ${H} answered HTTP 400: "argo" does not support thinking; ${fix}` });
  });

  it('as the stand-in refuses it', async () => {
    const { outcome } = await run(transport(), { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream: true, think: true } });
    expect(outcome.failure?.message).toBe(`Ollama at ${ollama.url} answered HTTP 400: "argo" does not support thinking; ask with --think off (or remove "think" from config.json), or choose a thinking model with --model ("ollama show MODEL" lists "thinking" under its capabilities)`);
  });
});

describe('an error that is not a plain string is said in words', () => {
  const refusing = (status: number, body: string): typeof fetch => () => Promise.resolve(new Response(body, { status, headers: { 'content-type': 'application/json' } }));
  it.each([
    [429, '{"error":{"message":"rate limit","type":"x"}}', { kind: 'busy', message: `Ollama at ${H} is rate-limited (rate limit)` }],
    [500, '{"error":null}', { kind: 'http', message: `Ollama at ${H} answered HTTP 500: an empty error` }],
    [500, '{"error":""}', { kind: 'http', message: `Ollama at ${H} answered HTTP 500: an empty error` }],
    [500, '{"error":{"code":17}}', { kind: 'http', message: `Ollama at ${H} answered HTTP 500: {"code":17}` }],
  ])('HTTP %i %s', async (status, body, failure) => {
    const { outcome } = await run(transport({ host: H, fetch: refusing(status, body) }), chat(true));
    expect(outcome.failure).toMatchObject({ ...failure, httpStatus: status });
  });

  it.each([
    ['{"error":{"message":"rate limit","type":"x"}}', 'rate limit'],
    ['{"error":null}', 'an empty error'],
    ['{"error":""}', 'an empty error'],
  ])('mid-answer %s', async (line, words) => {
    const first = JSON.stringify({ model: 'argo', message: { role: 'assistant', content: 'A' }, done: false });
    const { outcome, texts } = await run(transport({ host: H, fetch: answering(`${first}\n${line}\n`, 'application/x-ndjson') }), chat(true));
    expect(texts).toEqual(['A']);
    expect(outcome.failure).toEqual({ kind: 'mid-stream', message: `Ollama reported an error mid-answer: ${words}` });
  });
});
