// Ollama's answers at the edges of its protocol: a body left open after the final chunk, figures Go
// leaves out of that chunk, and a refusal of what the model cannot do, naming the fix.
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_HINTS, SERVER_HINTS } from '../../src/ollama/fix-hints.js';
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

function chat(stream: boolean): TransportRequest {
  return { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream } };
}

function transport(options: Partial<TransportOptions> = {}): OllamaTransport {
  return new OllamaTransport({ host: ollama.url, attempts: 1, initialDelayMs: 1, idleMs: 5000, ...options });
}

async function run(t: OllamaTransport, request: TransportRequest): Promise<{ outcome: StreamOutcome; texts: string[] }> {
  const texts: string[] = [];
  const outcome = await t.stream(request, { onText: (text) => texts.push(text) });
  return { outcome, texts };
}

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
