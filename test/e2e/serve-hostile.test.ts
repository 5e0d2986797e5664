// The built `argo serve` against hostile clients: what they send is refused in one OpenAI error,
// nothing reaches Ollama or the log, and the server goes on serving.
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, tempHome } from '../support/run-argo.js';
import { startServe } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';
import type { ServeProcess } from '../support/run-serve.js';

const ollama = await fakeOllamaPerFile();
let serve: ServeProcess;
let home: string;

beforeAll(async () => {
  home = tempHome();
  serve = await startServe({ home, host: ollama.url });
});
afterAll(async () => {
  await serve.stop();
});

/** A request with the headers a browser sends and fetch() will not (Host, Origin). */
function send(path: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(`${serve.url}${path}`, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (piece: string) => (text += piece));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? null : (JSON.parse(text) as unknown) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const chat = (extra: Record<string, unknown> = {}): string => JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: 'hi' }], ...extra });
const chatRequests = (): number => ollama.requests.filter((r) => r.path === '/api/chat').length;

describe('argo serve without a key, as a web page would reach it', () => {
  it('a page of another site POSTing text/plain (a run of server-side tools, say) is refused; Ollama and the log never hear of it', async () => {
    const refused = await send('/v1/chat/completions', 'POST', { 'content-type': 'text/plain', origin: 'https://evil.example' }, chat({ argo: { tools: 'fs' } }));
    expect(refused).toMatchObject({ status: 403, body: { error: { type: 'permission_error', code: 'foreign_origin' } } });
    const rebound = await send('/api/sessions', 'GET', { host: 'evil.example:10007' });
    expect(rebound).toMatchObject({ status: 403, body: { error: { code: 'foreign_host' } } });
    expect(chatRequests()).toBe(0);
    expect(logLines(home)).toEqual([]);
    // A program is served as ever.
    expect(await send('/v1/chat/completions', 'POST', { 'content-type': 'application/json' }, chat())).toMatchObject({ status: 200 });
    await waitFor(() => expect(serve.stderr()).toMatch(/^argo serve: no API key, [^\n]+\nPOST \/v1\/chat\/completions 403 \d+ms session=-\nGET \/api\/sessions 403 \d+ms session=-\nPOST \/v1\/chat\/completions 200 \d+ms session=api\n$/));
    await waitFor(() => expect(logLines(home)).toHaveLength(1));
  });
});

describe('argo serve and pages of this machine (CORS)', () => {
  it("a page on localhost:3000 passes its preflight and reads the answer; an app's own page is served as such a page is", async () => {
    const origin = 'http://localhost:3000';
    const headersOf = (method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; allowed: string | undefined }> =>
      new Promise((resolve, reject) => {
        const req = request(`${serve.url}/v1/chat/completions`, { method, headers }, (res) => {
          res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, allowed: res.headers['access-control-allow-origin'] }));
        });
        req.on('error', reject);
        req.end(body);
      });
    expect(await headersOf('OPTIONS', { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' })).toEqual({ status: 204, allowed: origin });
    expect(await headersOf('POST', { origin, 'content-type': 'application/json' }, chat())).toEqual({ status: 200, allowed: origin });
    expect(await headersOf('POST', { origin: 'vscode-webview://abc', 'content-type': 'application/json' }, chat())).toEqual({ status: 200, allowed: 'vscode-webview://abc' });
    expect(await headersOf('POST', { origin: 'https://evil.example', 'content-type': 'application/json' }, chat())).toEqual({ status: 403, allowed: undefined });
  });
});

describe('an HTTP/1.1 request without a Host (Node\'s own refusal had no body)', () => {
  it('is a 400 invalid_http with an OpenAI error body, the connection closed; nothing reaches Ollama or the log', async () => {
    const before = { chats: chatRequests(), lines: logLines(home).length };
    const socket = connect(Number(new URL(serve.url).port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8').on('data', (text: string) => (received += text));
    const body = chat();
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await once(socket, 'close');
    const [head = '', json = ''] = received.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(json)).toEqual({
      error: { message: 'the request has no Host header, which HTTP/1.1 requires; send one (HTTP clients and curl send it by themselves)', type: 'invalid_request_error', param: null, code: 'invalid_http' },
    });
    expect(chatRequests()).toBe(before.chats);
    expect(logLines(home)).toHaveLength(before.lines);
  });
});

describe('serve.maxConnections from config.json', () => {
  it('a connection over it is closed as it opens, and the server\'s log says why', async () => {
    const capped = await startServe({ home: tempHome({ serve: { maxConnections: 1 } }), host: ollama.url });
    try {
      const port = Number(new URL(capped.url).port);
      const kept = connect(port, '127.0.0.1');
      let answer = '';
      kept.setEncoding('utf8').on('data', (text: string) => (answer += text));
      kept.write('GET /api/stop HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await waitFor(() => expect(answer).toContain('{"stop":false,"since":null}'));
      const over = connect(port, '127.0.0.1');
      let got = '';
      over.setEncoding('utf8').on('data', (text: string) => (got += text));
      // Closed at once: reset, or ended (events.once would reject on the reset).
      over.on('error', () => undefined);
      const closed = new Promise((resolve) => over.on('close', resolve));
      over.write('GET /api/stop HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await closed;
      expect(got).toBe('');
      await waitFor(() => expect(capped.stderr()).toContain('argo serve: 1 connection(s) closed as they opened: 1 were open (serve.maxConnections in config.json)\n'));
      kept.destroy();
    } finally {
      await capped.stop();
    }
  });
});

describe('a body over serve.maxBodyBytes sent chunked on a kept-alive connection', () => {
  it('is a 413 saying Connection: close (it was refused half-read), and the client\'s next requests are answered on a new connection', async () => {
    const limited = await startServe({ home: tempHome({ serve: { maxBodyBytes: 4096 } }), host: ollama.url });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const post = (body: Buffer, chunked: boolean): Promise<{ status: number; connection: string | undefined; code: unknown }> =>
      new Promise((resolve, reject) => {
        const headers = { 'content-type': 'application/json', ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }) };
        const req = request(`${limited.url}/v1/chat/completions`, { method: 'POST', agent, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (piece: string) => (text += piece));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, code: (JSON.parse(text) as { error?: { code?: unknown } }).error?.code }));
        });
        req.on('error', reject);
        if (chunked) for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
        req.end(chunked ? undefined : body);
      });
    try {
      const before = chatRequests();
      expect(await post(Buffer.alloc(1024 * 1024, 'x'), true)).toEqual({ status: 413, connection: 'close', code: 'body_too_large' });
      // It failed with "socket hang up": the server closed the connection the 413 said to keep.
      for (let i = 0; i < 3; i++) expect(await post(Buffer.from(chat()), false)).toMatchObject({ status: 200, connection: 'keep-alive' });
      expect(chatRequests()).toBe(before + 3);
      await waitFor(() => expect(limited.stderr()).toMatch(/^POST \/v1\/chat\/completions 413 \d+ms session=-$/m));
    } finally {
      agent.destroy();
      await limited.stop();
    }
  });
});

describe('bodies that parse but are not what a client sends', () => {
  /** A JSON schema `levels` objects deep, as a response_format. */
  const schemaOf = (levels: number): string => `${'{"type":"object","properties":{"a":'.repeat(levels - 1)}{"type":"string"}${'}}'.repeat(levels - 1)}`;
  const withSchema = (levels: number): string => chat().replace(/}$/, `,"response_format":{"type":"json_schema","json_schema":{"name":"deep","schema":${schemaOf(levels)}}}}`);

  it('a body nested past 100 levels is a 400 before any turn (it failed as a 500 that logged nothing); up to the limit it is answered and logged', async () => {
    const before = { chats: chatRequests(), lines: logLines(home).length };
    // The body, response_format and json_schema are 3 levels; the schema's level k is 3 + 2(k - 1) deep.
    const deep = await send('/v1/chat/completions', 'POST', { 'content-type': 'application/json' }, withSchema(50_000));
    expect(deep).toEqual({
      status: 400,
      body: { error: { message: 'the request body nests arrays and objects more than 100 deep; send a flatter one (a JSON schema or tool parameters nest a few levels)', type: 'invalid_request_error', param: null, code: 'invalid_json' } },
    });
    expect(await send('/v1/chat/completions', 'POST', { 'content-type': 'application/json' }, withSchema(50))).toMatchObject({ status: 400 });
    expect(chatRequests()).toBe(before.chats);
    const atLimit = await send('/v1/chat/completions', 'POST', { 'content-type': 'application/json' }, withSchema(49));
    expect(atLimit.status).toBe(200);
    // The answer goes out as its line is written.
    await waitFor(() => expect(logLines(home).slice(before.lines).map((line) => line.status)).toEqual(['ok']));
    expect(serve.stderr()).not.toContain('unexpected failure');
  });
});

describe('a client that asks for its session as soon as it has its answer', () => {
  it("finds the turn there: the session routes wait for answered turns' log lines (GET after a new session's first answer was a 404 most times)", async () => {
    for (let i = 0; i < 10; i++) {
      const name = `fresh-${i}`;
      // Streamed or not: once the answer has ended, the session has the turn.
      const answered = await fetch(`${serve.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chat({ argo: { session: name }, stream: i % 2 === 1 }) });
      expect(answered.status).toBe(200);
      await answered.text();
      const shown = await fetch(`${serve.url}/api/sessions/${name}`);
      expect(shown.status).toBe(200);
      expect(((await shown.json()) as { turns: unknown[] }).turns).toHaveLength(1);
      const listed = (await (await fetch(`${serve.url}/api/sessions`)).json()) as { name: string; turns: number }[];
      expect(listed.find((session) => session.name === name)?.turns).toBe(1);
    }
  });
});
