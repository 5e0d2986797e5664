// What answers at the address is not Ollama: a redirect (never followed: fetch would turn a chat's
// POST into a GET), or a bare 404 or 405 that names no model.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CHAT_HINTS, CLI_HINTS, SERVER_HINTS } from '../../src/ollama/fix-hints.js';
import { OllamaTransport, boundedClient, questionFailure } from '../../src/ollama/transport.js';
import type { TransportRequest } from '../../src/ollama/transport.js';

/** What the server answers next: a status, its headers and body. */
let answer: { status: number; headers?: Record<string, string>; body?: string };
const seen: { method: string; url: string }[] = [];
let server: Server;
let host: string;

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    seen.push({ method: request.method ?? '', url: request.url ?? '' });
    request.resume();
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const chat: TransportRequest = { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream: true } };
const transport = (): OllamaTransport => new OllamaTransport({ host, attempts: 3, initialDelayMs: 1, idleMs: 5000 });

const NOT_FOLLOWED = 'Argo does not follow redirects: set --host / OLLAMA_HOST to where Ollama itself answers';

describe('a redirect is not followed, and named with where it points', () => {
  it.each([
    // status, Location → the target as shown; the fix: the address that names it (the route asked taken off), or none
    [301, 'https://ollama.example/api/chat', 'https://ollama.example/api/chat', 'set --host / OLLAMA_HOST to https://ollama.example'],
    [308, 'https://ollama.example:11434/api/chat', 'https://ollama.example:11434/api/chat', 'set --host / OLLAMA_HOST to https://ollama.example:11434'],
    [307, '/v2/api/chat', 'HERE/v2/api/chat', 'set --host / OLLAMA_HOST to HERE/v2'],
    [302, 'http://127.0.0.1:1/elsewhere', 'http://127.0.0.1:1/elsewhere', NOT_FOLLOWED],
    [301, 'http://x.example/a b', 'http://x.example/a%20b', NOT_FOLLOWED],
    [302, 'http://[bad', 'http://[bad', NOT_FOLLOWED],
    // Secrets a Location may carry are never shown nor logged: user info, a query, a fragment.
    [302, 'https://me:s3cret@ollama.example/api/chat', 'https://***@ollama.example/api/chat', NOT_FOLLOWED],
    [302, 'https://sso.example/login?token=s3cret#x', 'https://sso.example/login…', NOT_FOLLOWED],
    [302, 'https://ollama.example/api/chat?sig=s3cret', 'https://ollama.example/api/chat…', 'set --host / OLLAMA_HOST to https://ollama.example'],
    [302, 'http://[bad?token=s3cret', 'http://[bad…', NOT_FOLLOWED],
  ])('%i to %j: one request, the chat fails naming %j, not retried', async (status, location, shown, fix) => {
    answer = { status, headers: { location } };
    seen.length = 0;
    const outcome = await transport().stream(chat, { onText: () => undefined });
    const target = shown.replace('HERE', host);
    expect(outcome).toMatchObject({
      status: 'error',
      failure: { kind: 'http', httpStatus: status, message: `Ollama at ${host} answered with a redirect to ${target}; ${fix.replace('HERE', host)}` },
    });
    expect(outcome.failure?.message).not.toContain('s3cret');
    expect(seen).toEqual([{ method: 'POST', url: '/api/chat' }]);
  });

  it('a question (the model list, the version) fails the same way, through the transport and a bounded client', async () => {
    answer = { status: 307, headers: { location: 'https://ollama.example/api/tags' } };
    const line = `Ollama at ${host} answered with a redirect to https://ollama.example/api/tags; set --host / OLLAMA_HOST to https://ollama.example`;
    const listed = await transport().installedModels().catch((error: unknown) => error);
    expect(questionFailure(host, listed, CLI_HINTS, 5000)).toBe(line);
    const asked = await boundedClient(host, 5000).list().catch((error: unknown) => error);
    expect(questionFailure(host, asked, CLI_HINTS, 5000)).toBe(line);
    answer = { status: 301, headers: { location: 'https://ollama.example/api/version' } };
    await expect(transport().version()).rejects.toThrow(`Ollama at ${host} answered with a redirect to https://ollama.example/api/version; set --host / OLLAMA_HOST to https://ollama.example`);
    // In a chat and in argo serve, the fix is where those set the address.
    expect(questionFailure(host, listed, CHAT_HINTS, 5000)).toBe(line.replace('--host / OLLAMA_HOST', CHAT_HINTS.host));
    expect(questionFailure(host, listed, SERVER_HINTS, 5000)).toContain(`set ${SERVER_HINTS.host} to https://ollama.example`);
  });

  it("a bounded client's error status without JSON is thrown as the transport's, the ollama client writing nothing on stdout", async () => {
    answer = { status: 500, body: 'boom' };
    const log = vi.spyOn(console, 'log');
    try {
      const asked = await boundedClient(host, 5000).version().catch((error: unknown) => error);
      expect(questionFailure(host, asked, CLI_HINTS, 5000)).toContain('boom');
      expect(log).not.toHaveBeenCalled();
    } finally {
      log.mockRestore();
    }
  });

  it('a question answered 204 (no body) is an answer that is not JSON, not a failure of the client', async () => {
    answer = { status: 204 };
    const listed = await transport().installedModels().catch((error: unknown) => error);
    expect(questionFailure(host, listed, CLI_HINTS, 5000)).toBe(`something at ${host} answered, but not as Ollama does (its answer is not JSON); check that --host / OLLAMA_HOST points at Ollama`);
  });

  it('a 300 without a location is an answer with an error status, not a redirect', async () => {
    answer = { status: 300, body: 'choose' };
    const outcome = await transport().stream(chat, { onText: () => undefined });
    expect(outcome.failure).toMatchObject({ kind: 'http', httpStatus: 300, message: `Ollama at ${host} answered HTTP 300: choose` });
  });
});

describe('a bare 404 or 405 on /api/chat is another server\'s', () => {
  it.each([
    [404, '404 page not found', 'text/plain', `HTTP 404: 404 page not found`],
    [405, '405 method not allowed', 'text/plain', `HTTP 405: 405 method not allowed`],
    [404, '', 'text/plain', 'HTTP 404: Not Found'],
    [404, '{"error":"no such route"}', 'application/json', 'HTTP 404: no such route'],
  ])('%i %j → says the address may not be Ollama', async (status, body, type, what) => {
    answer = { status, headers: { 'content-type': type }, body };
    const outcome = await transport().stream(chat, { onText: () => undefined });
    expect(outcome.failure).toEqual({ kind: 'http', httpStatus: status, message: `something at ${host} answered, but not as Ollama does (${what}); check that --host / OLLAMA_HOST points at Ollama` });
  });

  it('Ollama\'s own 404 for a missing model stays model-missing', async () => {
    answer = { status: 404, headers: { 'content-type': 'application/json' }, body: '{"error":"model \\"argo\\" not found, try pulling it first"}' };
    const outcome = await transport().stream(chat, { onText: () => undefined });
    expect(outcome.failure).toMatchObject({ kind: 'model-missing', httpStatus: 404 });
  });
});
