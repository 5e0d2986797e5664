// What an error status says depends on who sent it: Ollama's own answers are JSON ({"error": …}),
// its Host/Origin check is a 403 with no body, and a proxy's page is neither. And a whole answer,
// and an answer without a body are read as Ollama sends them, not trusted blindly.
import { afterEach, describe, expect, it } from 'vitest';
import { SERVER_HINTS } from '../../src/ollama/fix-hints.js';
import { MAX_LINE_BYTES } from '../../src/ollama/line-guard.js';
import { OllamaTransport } from '../../src/ollama/transport.js';
import type { TransportRequest } from '../../src/ollama/transport.js';
import { BUSY_MESSAGE, SIGNIN_URL } from '../support/fake-ollama.js';
import type { FakeOllamaOptions, FakeScenario } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';

const ollama = await fakeOllamaPerFile({ tokens: ['a', 'b'] });
const H = ollama.url;
afterEach(() => {
  ollama.setScenario(undefined);
  ollama.options.models = undefined;
  ollama.options.cloud = undefined;
  ollama.requests.length = 0;
});

const CLOUD = 'gpt-oss:120b-cloud';

function transport(overrides: Partial<ConstructorParameters<typeof OllamaTransport>[0]> = {}): OllamaTransport {
  return new OllamaTransport({ host: H, attempts: 3, initialDelayMs: 1, idleMs: 2000, ...overrides });
}

function chat(model = 'argo', stream = true): TransportRequest {
  return { endpoint: '/api/chat', body: { model, messages: [{ role: 'user', content: 'hi' }], stream } };
}

async function run(t: OllamaTransport, request: TransportRequest = chat()) {
  const texts: string[] = [];
  const outcome = await t.stream(request, { onText: (text) => texts.push(text), sleep: () => Promise.resolve() });
  return { outcome, texts };
}

const html = (status: number, title: string): FakeScenario => ({ proxyPage: { status, body: `<html>\r\n<head><title>${title}</title></head>\r\n</html>\r\n` } });
const json = (status: number, body: string): FakeScenario => ({ proxyPage: { status, body, type: 'application/json; charset=utf-8' } });
const HOST_HINT = 'check OLLAMA_HOST and OLLAMA_ORIGINS on the server';

describe('an error status, by who sent it', () => {
  it.each<[string, Partial<FakeOllamaOptions>, FakeScenario | undefined, string, { kind: string; httpStatus: number; message: string }, number]>([
    ["Ollama's Host/Origin check (403, no body)", {}, { proxyPage: { status: 403, body: '' } }, 'argo', { kind: 'http', httpStatus: 403, message: `Ollama at ${H} refused the request (403 Forbidden); ${HOST_HINT}` }, 1],
    ["a proxy's 403 page", {}, html(403, '403 Forbidden'), 'argo', { kind: 'http', httpStatus: 403, message: `Ollama at ${H} refused the request (403 Forbidden: <html> <head><title>403 Forbidden</title></head> </html>); check the proxy in front of Ollama, then OLLAMA_HOST and OLLAMA_ORIGINS on the server` }, 1],
    ['Ollama with its cloud turned off (OLLAMA_NO_CLOUD)', { cloud: 'disabled' }, undefined, CLOUD, {
      kind: 'http', httpStatus: 403,
      message: `Ollama at ${H} answered HTTP 403: ollama cloud is disabled: remote model is unavailable; that Ollama has cloud models turned off (OLLAMA_NO_CLOUD, or "disable_ollama_cloud" in its server.json): choose a local model with --model, or turn cloud models on there`,
    }, 1],
    ["a cloud model's own refusal, passed on", {}, json(403, '{"error":"this model requires a subscription"}'), CLOUD, { kind: 'http', httpStatus: 403, message: `Ollama at ${H} answered HTTP 403: this model requires a subscription` }, 1],
    ['Ollama not signed in to ollama.com', { cloud: 'signed-out' }, undefined, CLOUD, {
      kind: 'http', httpStatus: 401,
      message: `Ollama at ${H} answered HTTP 401: unauthorized; a cloud model needs that Ollama signed in to ollama.com: run "ollama signin" on its machine, or choose a local model with --model`,
    }, 1],
    ["Ollama's full queue (503 with its JSON)", {}, { busy: 3 }, 'argo', { kind: 'busy', httpStatus: 503, message: `Ollama at ${H} is busy (${BUSY_MESSAGE})` }, 3],
    ["a proxy's 503 page", {}, html(503, '503 Service Temporarily Unavailable'), 'argo', { kind: 'http', httpStatus: 503, message: `Ollama at ${H} answered HTTP 503: <html> <head><title>503 Service Temporarily Unavailable</title></head> </html>` }, 1],
    ['a 503 with no body', {}, { proxyPage: { status: 503, body: '' } }, 'argo', { kind: 'http', httpStatus: 503, message: `Ollama at ${H} answered HTTP 503: Service Unavailable` }, 1],
  ])('%s', async (_case, options, scenario, model, failure, requests) => {
    Object.assign(ollama.options, options);
    ollama.options.models = [{ name: 'argo' }, { name: CLOUD, remote: true }];
    ollama.setScenario(scenario);
    const { outcome, texts } = await run(transport(), chat(model));
    expect(texts).toEqual([]);
    expect(outcome.failure).toEqual(failure);
    // Only Ollama's own "busy" is asked again.
    expect(ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(requests);
  });

  it('the sign-in address (it names the server\'s key) is never shown, whatever the body', async () => {
    ollama.options.models = [{ name: CLOUD, remote: true }];
    for (const scenario of [json(401, JSON.stringify({ signin_url: SIGNIN_URL })), json(401, JSON.stringify({ error: { message: 'denied' }, signin_url: SIGNIN_URL })), undefined]) {
      ollama.options.cloud = scenario === undefined ? 'signed-out' : undefined;
      ollama.setScenario(scenario);
      const { outcome } = await run(transport(), chat(CLOUD));
      expect(outcome.failure?.message).toContain('ollama signin');
      expect(outcome.failure?.message).not.toContain('ollama.com/connect');
      expect(outcome.failure?.message).not.toContain('key=');
    }
  });

  it('a question (the version) says the same for the same status', async () => {
    const t = transport({ fetch: () => Promise.resolve(new Response('<html>down</html>', { status: 503, statusText: 'Service Unavailable', headers: { 'content-type': 'text/html' } })) });
    await expect(t.version()).rejects.toThrow(`Ollama at ${H} answered HTTP 503: <html>down</html>`);
    const forbidden = transport({ fetch: () => Promise.resolve(new Response(null, { status: 403, statusText: 'Forbidden' })) });
    await expect(forbidden.version()).rejects.toThrow(`Ollama at ${H} refused the request (403 Forbidden); ${HOST_HINT}`);
  });

  it('a server says its fix in its operator\'s words', async () => {
    ollama.options.models = [{ name: CLOUD, remote: true }];
    ollama.options.cloud = 'disabled';
    const { outcome } = await run(transport({ hints: SERVER_HINTS }), chat(CLOUD));
    expect(outcome.failure?.message).toMatch(/: choose a local model with the request's "model", or turn cloud models on there$/);
  });
});

describe('a whole answer (stream: false) and an answer without a body', () => {
  /** A 200 whose body never ends: `chunk` after `chunk`, until it is cancelled. */
  const endless = (cancelled: { bytes: number; done: boolean }): typeof fetch => () => {
    const chunk = new TextEncoder().encode(`{"model":"argo","message":{"role":"assistant","content":"${'x'.repeat(65_000)}`);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        cancelled.bytes += chunk.length;
        controller.enqueue(chunk);
      },
      cancel() {
        cancelled.done = true;
      },
    });
    return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'application/json' } }));
  };

  it('an endless body is read no further than a streamed line would be, and ends as overlong', async () => {
    const read = { bytes: 0, done: false };
    const { outcome } = await run(transport({ fetch: endless(read) }), chat('argo', false));
    expect(outcome.status).toBe('error');
    expect(outcome.failure?.kind).toBe('malformed');
    expect(outcome.failure?.message).toMatch(new RegExp(`^Ollama sent an answer of more than 32 MiB \\(\\{"model":"argo".*\\); the answer is incomplete \\(is it Ollama at ${H.replace(/[.]/g, '\\.')}, with nothing in between\\?\\)$`));
    expect(read.done).toBe(true);
    expect(read.bytes).toBeLessThan(MAX_LINE_BYTES + 200_000);
  });

  it.each([true, false])('a 200 without a body (stream: %s) is an empty answer, not an error of Ollama\'s', async (stream) => {
    const t = transport({ fetch: () => Promise.resolve(new Response(null, { status: 204 })) });
    const { outcome } = await run(t, chat('argo', stream));
    expect(outcome.failure).toEqual({ kind: 'malformed', message: 'Ollama sent a line that is not JSON (an empty answer); the answer is incomplete' });
  });

  it("only an error Ollama sent is worded as Ollama's", async () => {
    ollama.setScenario({ errorMidStream: { afterChunks: 1, message: 'out of memory' } });
    const { outcome, texts } = await run(transport());
    expect(texts).toEqual(['a']);
    expect(outcome.failure).toEqual({ kind: 'mid-stream', message: 'Ollama reported an error mid-answer: out of memory' });
    // A body that breaks off on its own (a bad gzip block) is no report of Ollama's.
    const broken = transport({
      fetch: () => {
        let pulls = 0;
        const body = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (pulls++ === 0) controller.enqueue(new TextEncoder().encode('{"model":"argo","message":{"role":"assistant","content":"a"},"done":false}\n'));
            else controller.error(new Error('gzip: invalid block'));
          },
        });
        return Promise.resolve(new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson' } }));
      },
    });
    const unread = await run(broken);
    expect(unread.texts).toEqual(['a']);
    expect(unread.outcome.failure).toEqual({ kind: 'malformed', message: `the answer from Ollama at ${H} could not be read (gzip: invalid block); the answer is incomplete` });
  });
});

describe('a server that does not answer in HTTP', () => {
  it('is said to be one, not "no answer"', async () => {
    const { createServer } = await import('node:net');
    const server = createServer((socket) => socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.6\r\n')));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const host = `http://127.0.0.1:${port}`;
      await expect(transport({ host }).version()).rejects.toThrow(`the connection to Ollama at ${host} failed before an answer (something answers there, but not in HTTP: is that port Ollama's?)`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
