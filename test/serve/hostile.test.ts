// argo serve against hostile or broken HTTP clients, over real sockets: clients that trickle their
// request, send what Node's parser refuses, or leave half-way. The server stays healthy and every
// refusal is an OpenAI error body.
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ssePayloads } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';
import { startTestServer } from './fake-runner.js';
import type { TestServer } from './fake-runner.js';

/** A raw connection: what it has received, and whether the server has closed it. */
interface Raw {
  socket: Socket;
  received: () => string;
  closed: Promise<void>;
}

function open(url: string): Raw {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let received = '';
  socket.setEncoding('utf8').on('data', (text: string) => (received += text));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received: () => received, closed };
}

/** Status line and parsed JSON body of the one response a raw connection got. */
function response(text: string): { status: number; body: unknown } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body: JSON.parse(body) as unknown };
}

/** A request with the headers a browser sends and fetch() will not (Host, Origin). */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (piece: string) => (text += piece));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as unknown }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Status, CORS headers and body text of a request sent with headers fetch() will not send (Origin). */
function exchange(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; cors: Record<string, string | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (piece: string) => (text += piece));
      const header = (name: string): string | undefined => {
        const value = res.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      };
      const names = ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-expose-headers'];
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cors: Object.fromEntries(names.map((name) => [name, header(name)])), text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const CHAT = '{"model":"argo","messages":[{"role":"user","content":"hi"}]}';

describe('clients that trickle their request', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ listen: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
  });
  afterAll(async () => {
    await t.listening.close(1000);
  });

  it.each<[string, string, (piece: string) => string]>([
    ['with a length', `Content-Length: ${CHAT.length}`, (piece) => piece],
    ['chunked', 'Transfer-Encoding: chunked', (piece) => `1\r\n${piece}\r\n`],
  ])('a body sent a byte at a time (%s) is refused with 408 once the request time is up, and the connection closed', async (_case, framing, chunk) => {
    const before = t.lines.length;
    const raw = open(t.url);
    raw.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
    let sent = 0;
    const trickle = setInterval(() => raw.socket.write(chunk(CHAT.slice(sent, ++sent))), 20);
    await raw.closed;
    clearInterval(trickle);
    expect(sent).toBeLessThan(CHAT.length);
    expect(response(raw.received())).toEqual({
      status: 408,
      body: { error: { message: 'the request did not arrive in time: its headers must arrive within 0.3 s and the whole request within 0.6 s; send it at once', type: 'invalid_request_error', param: null, code: 'request_timeout' } },
    });
    expect(t.runner.inputs).toEqual([]);
    // Gone before an answer: the request line says so, and no "unexpected failure" is logged for it.
    await waitFor(() => expect(t.lines.slice(before)).toEqual([expect.stringMatching(/^POST \/v1\/chat\/completions 499 \d+ms session=-$/)]));
  });

  it('a client that leaves mid-body: its request line says 499, nothing else is logged, no turn runs', async () => {
    const raw = open(t.url);
    // Pipelined behind a quick GET: once that is answered, the server has the POST's headers and waits for its body.
    raw.socket.write(`GET /api/stop HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nPOST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${CHAT.length}\r\n\r\n${CHAT.slice(0, 10)}`);
    await waitFor(() => expect(raw.received()).toContain('{"stop":false,"since":null}'));
    raw.socket.destroy();
    await waitFor(() => expect(t.lines).toContainEqual(expect.stringMatching(/^POST \/api\/jobs 499 \d+ms session=-$/)));
    expect(t.lines.filter((line) => !/^(GET|POST) /.test(line))).toEqual([]);
    expect(t.runner.inputs).toEqual([]);
  });

  it('headers sent a line at a time, and a connection that sends nothing, are closed with 408 after the headers time', async () => {
    const trickled = open(t.url);
    trickled.socket.write('GET /health HTTP/1.1\r\n');
    const trickle = setInterval(() => trickled.socket.write('X-Slow: 1\r\n'), 20);
    const idle = open(t.url);
    await Promise.all([trickled.closed, idle.closed]);
    clearInterval(trickle);
    expect(response(trickled.received())).toMatchObject({ status: 408, body: { error: { code: 'request_timeout' } } });
    expect(response(idle.received())).toMatchObject({ status: 408, body: { error: { code: 'request_timeout' } } });
  });

  it('an answer that streams for longer than the request time is not cut: only the request is timed', async () => {
    t.runner.script = () => ({ tokens: ['a', 'b', 'c'], holdAfter: 1 });
    const held = new Promise<void>((resolve) => (t.runner.onHold = () => resolve()));
    const answer = fetch(`${t.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: CHAT.replace('}]', '}],"stream":true') });
    await held;
    // A request time passes while the answer is held: a trickled body started after it is refused first.
    const slow = open(t.url);
    slow.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${CHAT.length}\r\n\r\n{`);
    await slow.closed;
    t.runner.release();
    const body = await (await answer).text();
    expect(ssePayloads(body).at(-1)).toBe('[DONE]');
    expect(body).toContain('"content":"c"');
  });
});

describe("requests Node's parser refuses", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.listening.close(1000);
  });

  it.each<[string, number, string, string]>([
    ['headers over 16 KiB (a long URL)', 431, 'headers_too_large', `GET /health?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`],
    ['both Content-Length and Transfer-Encoding (a smuggling shape)', 400, 'invalid_http', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['two Content-Lengths', 400, 'invalid_http', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nabcde'],
    ['a folded header', 400, 'invalid_http', 'GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n'],
    ['an unknown method', 400, 'invalid_http', 'BREW /health HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a backslash in the path (the adapter refuses it)', 400, 'invalid_http', 'GET /api\\sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
    ['a Host that is no host name', 400, 'invalid_http', 'GET /health HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n'],
  ])('%s: %i %s with an OpenAI error body, the connection closed, the server healthy', async (_case, status, code, request) => {
    const raw = open(t.url);
    raw.socket.write(request);
    await raw.closed;
    const got = response(raw.received());
    expect(got).toMatchObject({ status, body: { error: { type: 'invalid_request_error', param: null, code } } });
    expect((got.body as { error: { message: string } }).error.message).toMatch(/; (send a shorter URL or fewer headers|send a well-formed request)$/);
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
  });
});

describe('an HTTP/1.1 request without a Host', () => {
  it.each([
    ['without a key', null],
    ['with a key, sent right', 'k'],
  ])('%s: 400 invalid_http saying Host is missing, the connection closed, no request line, nothing run; HTTP/1.0 needs none', async (_case, key) => {
    const s = await startTestServer(key === null ? {} : { apiKey: key });
    try {
      const auth = key === null ? '' : `Authorization: Bearer ${key}\r\n`;
      const raw = open(s.url);
      raw.socket.write(`POST /v1/chat/completions HTTP/1.1\r\n${auth}Content-Type: application/json\r\nContent-Length: ${CHAT.length}\r\n\r\n${CHAT}`);
      await raw.closed;
      expect(response(raw.received())).toEqual({
        status: 400,
        body: { error: { message: 'the request has no Host header, which HTTP/1.1 requires; send one (HTTP clients and curl send it by themselves)', type: 'invalid_request_error', param: null, code: 'invalid_http' } },
      });
      expect(raw.received()).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n(.+\r\n)*Connection: close\r\n/);
      expect(s.runner.inputs).toEqual([]);
      const old = open(s.url);
      old.socket.write(`GET /api/stop HTTP/1.0\r\n${auth}\r\n`);
      await old.closed;
      expect(response(old.received())).toEqual({ status: 200, body: { stop: false, since: null } });
      expect(s.lines).toEqual([expect.stringMatching(/^GET \/api\/stop 200 \d+ms session=-$/)]);
    } finally {
      await s.listening.close(100);
    }
  });
});

describe('Expect: 100-continue', () => {
  const KEY = 'sk-continue';
  let keyless: TestServer;
  let keyed: TestServer;
  beforeAll(async () => {
    [keyless, keyed] = await Promise.all([startTestServer(), startTestServer({ apiKey: KEY })]);
  });
  afterAll(async () => {
    await Promise.all([keyless.listening.close(100), keyed.listening.close(100)]);
  });
  const big = 64 * 1024 + 1;

  it.each<[string, 'keyless' | 'keyed', string, number, number, string]>([
    ['a stated length over serve.maxBodyBytes', 'keyless', '', big, 413, 'body_too_large'],
    ['a key missing', 'keyed', '', CHAT.length, 401, 'invalid_api_key'],
    ['a wrong key', 'keyed', 'Authorization: Bearer wrong\r\n', CHAT.length, 401, 'invalid_api_key'],
    ["another site's page", 'keyless', 'Origin: https://evil.example\r\n', CHAT.length, 403, 'foreign_origin'],
    ['the key right, the length over', 'keyed', `Authorization: Bearer ${KEY}\r\n`, big, 413, 'body_too_large'],
  ])('%s: refused at once, the body never asked for (no 100 Continue), the connection closed; the request logged', async (_case, which, headers, length, status, code) => {
    const s = which === 'keyless' ? keyless : keyed;
    const before = s.lines.length;
    const raw = open(s.url);
    raw.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Content-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`);
    await raw.closed;
    expect(raw.received()).not.toContain('100 Continue');
    expect(response(raw.received())).toMatchObject({ status, body: { error: { code } } });
    expect(s.runner.inputs).toEqual([]);
    await waitFor(() => expect(s.lines.slice(before)).toEqual([expect.stringMatching(new RegExp(`^POST /v1/chat/completions ${status} \\d+ms session=-$`))]));
  });

  it.each<['keyless' | 'keyed', string]>([
    ['keyless', ''],
    ['keyed', `Authorization: Bearer ${KEY}\r\n`],
  ])('a request the %s server takes is asked for its body, then answered', async (which, headers) => {
    const s = which === 'keyless' ? keyless : keyed;
    const raw = open(s.url);
    raw.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Content-Type: application/json\r\nContent-Length: ${CHAT.length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
    await waitFor(() => expect(raw.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n'));
    raw.socket.write(CHAT);
    await raw.closed;
    expect(response(raw.received().slice('HTTP/1.1 100 Continue\r\n\r\n'.length))).toMatchObject({ status: 200, body: { choices: [{ message: { content: 'You said: hi' } }] } });
  });
});

describe('a body over serve.maxBodyBytes on a kept-alive connection', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.listening.close(100);
  });
  const limit = 64 * 1024;

  /** A chat request through `agent`, its body sent chunked (no length) or with one. */
  function chat(agent: Agent, body: Buffer, chunked: boolean): Promise<{ status: number; connection: string | undefined; body: unknown }> {
    return new Promise((resolve, reject) => {
      const headers = { 'content-type': 'application/json', ...(chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }) };
      const req = request(`${t.url}/v1/chat/completions`, { method: 'POST', agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (piece: string) => (text += piece));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text) as unknown }));
      });
      req.on('error', reject);
      if (!chunked) {
        req.end(body);
        return;
      }
      for (let at = 0; at < body.length; at += 16 * 1024) req.write(body.subarray(at, at + 16 * 1024));
      req.end();
    });
  }

  it.each<[string, boolean, number, string]>([
    ['chunked, a little over: refused half-read, so the connection is closed, and said to be', true, 1024, 'close'],
    ['chunked, 1 MiB over', true, 1024 * 1024, 'close'],
    ['chunked, 10 MiB over', true, 10 * 1024 * 1024, 'close'],
    ['with a length over: refused from it, the body drained, the connection kept', false, 1024 * 1024, 'keep-alive'],
  ])('%s; the requests after it on the same agent are answered', async (_case, chunked, excess, connection) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const refused = await chat(agent, Buffer.alloc(limit + excess, 'x'), chunked);
      expect(refused).toEqual({ status: 413, connection, body: { error: expect.objectContaining({ code: 'body_too_large' }) as unknown } });
      for (let i = 0; i < 3; i++) expect(await chat(agent, Buffer.from(CHAT), false)).toMatchObject({ status: 200 });
    } finally {
      agent.destroy();
    }
  });
});

describe('serve.maxConnections', () => {
  it('a connection over the cap is closed as it opens and the operator told, once for a burst; one that closes makes room', async () => {
    const said: string[] = [];
    const s = await startTestServer({ listen: { maxConnections: 2, dropsSaidEveryMs: 1000, log: (line) => said.push(line) } });
    try {
      // Two kept-alive connections, each answered once: both are open on the server.
      const kept = [open(s.url), open(s.url)];
      for (const raw of kept) {
        raw.socket.write('GET /api/stop HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
        await waitFor(() => expect(raw.received()).toContain('{"stop":false,"since":null}'));
      }
      const over = [open(s.url), open(s.url), open(s.url)];
      for (const raw of over) raw.socket.write('GET /api/stop HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      await Promise.all(over.map((raw) => raw.closed));
      expect(over.map((raw) => raw.received())).toEqual(['', '', '']);
      // The first at once; the rest are counted in the next line, once the quiet time is over.
      const line = (count: number): string => `argo serve: ${count} connection(s) closed as they opened: 2 were open (serve.maxConnections in config.json)`;
      expect(said).toEqual([line(1)]);
      await waitFor(() => expect(said).toEqual([line(1), line(2)]));
      kept[0]?.socket.destroy();
      await kept[0]?.closed;
      await waitFor(async () => expect((await fetch(`${s.url}/api/stop`)).status).toBe(200));
      kept[1]?.socket.destroy();
    } finally {
      await s.listening.close(100);
    }
  });

  it('a count still waiting for its quiet time is said at shutdown', async () => {
    const said: string[] = [];
    const s = await startTestServer({ listen: { maxConnections: 1, dropsSaidEveryMs: 60_000, log: (line) => said.push(line) } });
    const kept = open(s.url);
    kept.socket.write('GET /api/stop HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await waitFor(() => expect(kept.received()).toContain('{"stop":false,"since":null}'));
    const over = [open(s.url), open(s.url), open(s.url)];
    await Promise.all(over.map((raw) => raw.closed));
    const line = (count: number): string => `argo serve: ${count} connection(s) closed as they opened: 1 were open (serve.maxConnections in config.json)`;
    expect(said).toEqual([line(1)]);
    kept.socket.destroy();
    await s.listening.close(100);
    expect(said).toEqual([line(1), line(2)]);
  });
});

describe('what a web page can send to a server without a key', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.listening.close(1000);
  });

  it('a text/plain POST from another site (no preflight needed) is refused: no turn, no STOP', async () => {
    const page = { 'content-type': 'text/plain', origin: 'https://evil.example' };
    const chat = await send(`${t.url}/v1/chat/completions`, 'POST', page, CHAT);
    expect(chat).toEqual({
      status: 403,
      body: {
        error: {
          message: 'a request from the web page at "https://evil.example" is refused: without an API key argo serve takes requests from programs and from pages on this machine only, so a site you visit cannot use it; send it from a program, or set an API key',
          type: 'permission_error',
          param: null,
          code: 'foreign_origin',
        },
      },
    });
    expect(await send(`${t.url}/api/jobs`, 'POST', page, CHAT)).toMatchObject({ status: 403 });
    expect(await send(`${t.url}/api/stop`, 'POST', page)).toMatchObject({ status: 403 });
    expect(t.runner.inputs).toEqual([]);
    expect(await (await fetch(`${t.url}/api/stop`)).json()).toEqual({ stop: false, since: null });
  });

  it('a page with no origin (a local HTML file, a sandboxed frame) is refused, and told what works instead', async () => {
    const preflight = await exchange(`${t.url}/v1/chat/completions`, 'OPTIONS', { origin: 'null', 'access-control-request-method': 'POST' });
    expect([preflight.status, JSON.parse(preflight.text)]).toEqual([
      403,
      {
        error: {
          message:
            'a request from a web page with no origin (Origin "null": an HTML file opened in the browser, or a sandboxed frame of any site) is refused: without an API key argo serve cannot tell such a page from a site you visit; serve the page from http://localhost (e.g. "python3 -m http.server" in its folder, then open http://localhost:8000/), show it in an app\'s own file:// page, or send the request from a program',
          type: 'permission_error',
          param: null,
          code: 'foreign_origin',
        },
      },
    ]);
    expect(await send(`${t.url}/v1/chat/completions`, 'POST', { 'content-type': 'text/plain', origin: 'null' }, CHAT)).toMatchObject({ status: 403 });
    expect(t.runner.inputs).toEqual([]);
  });

  it('a page that rebinds its own name to 127.0.0.1 reads nothing: its Host is refused', async () => {
    const rebound = await send(`${t.url}/api/sessions`, 'GET', { host: 'evil.example:10007' });
    expect(rebound).toMatchObject({ status: 403, body: { error: { type: 'permission_error', code: 'foreign_host' } } });
    expect((rebound.body as { error: { message: string } }).error.message).toMatch(/^the Host "evil\.example:10007" is not a name of this machine: /);
  });

  it('programs and pages on this machine are served as before', async () => {
    expect(await send(`${t.url}/api/stop`, 'GET', { host: 'localhost:10007' })).toEqual({ status: 200, body: { stop: false, since: null } });
    expect(await send(`${t.url}/v1/chat/completions`, 'POST', { 'content-type': 'application/json', origin: 'http://localhost:3000' }, CHAT)).toMatchObject({ status: 200 });
  });

  const EXPOSED = 'X-Argo-Turn-Id,X-Argo-Log,Retry-After,X-Should-Retry';
  it.each([
    ['http://localhost:3000', true],
    ['https://127.0.0.1:8443', true],
    ['vscode-webview://abc', true],
    ['tauri://localhost', true],
    ['app://.', true],
    ['file://', true],
    ['https://evil.example', false],
    ['chrome-extension://abcdef', false],
    ['null', false],
  ])('a preflight from %s: answered 204 with CORS headers only for a page of this machine (%s), else refused as its request is', async (origin, allowed) => {
    const preflight = await exchange(`${t.url}/v1/chat/completions`, 'OPTIONS', { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization' });
    if (allowed) {
      expect(preflight).toEqual({
        status: 204,
        cors: { 'access-control-allow-origin': origin, 'access-control-allow-methods': 'GET,HEAD,POST,PATCH,DELETE', 'access-control-allow-headers': 'content-type,authorization', 'access-control-expose-headers': EXPOSED },
        text: '',
      });
    } else {
      expect(preflight.status).toBe(403);
      expect(preflight.cors).toEqual({ 'access-control-allow-origin': undefined, 'access-control-allow-methods': undefined, 'access-control-allow-headers': undefined, 'access-control-expose-headers': undefined });
    }
    const post = await exchange(`${t.url}/v1/chat/completions`, 'POST', { origin, 'content-type': 'application/json' }, CHAT);
    expect([post.status, post.cors['access-control-allow-origin']]).toEqual(allowed ? [200, origin] : [403, undefined]);
  });

  it('with a key a page of this machine reads the answers, the refusal too: its preflight needs no key, its request does', async () => {
    const locked = await startTestServer({ apiKey: 'k' });
    try {
      const origin = 'http://localhost:3000';
      const preflight = await exchange(`${locked.url}/v1/chat/completions`, 'OPTIONS', { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' });
      expect([preflight.status, preflight.cors['access-control-allow-origin']]).toEqual([204, origin]);
      const keyless = await exchange(`${locked.url}/v1/chat/completions`, 'POST', { origin, 'content-type': 'application/json' }, CHAT);
      expect([keyless.status, keyless.cors['access-control-allow-origin'], JSON.parse(keyless.text)]).toEqual([401, origin, { error: expect.objectContaining({ code: 'invalid_api_key' }) as unknown }]);
      const keyed = await exchange(`${locked.url}/v1/chat/completions`, 'POST', { origin, 'content-type': 'application/json', authorization: 'Bearer k' }, CHAT);
      expect([keyed.status, keyed.cors['access-control-allow-origin'], keyed.cors['access-control-expose-headers']]).toEqual([200, origin, EXPOSED]);
      const foreign = await exchange(`${locked.url}/v1/chat/completions`, 'OPTIONS', { origin: 'https://evil.example', 'access-control-request-method': 'POST' });
      expect([foreign.status, foreign.cors['access-control-allow-origin'], foreign.cors['access-control-allow-methods']]).toEqual([401, undefined, undefined]);
      expect(locked.runner.inputs).toHaveLength(1);
    } finally {
      await locked.listening.close(100);
    }
  });

  it('with a key the key is the guard: a page cannot send it, and a program that does is served whatever its Origin', async () => {
    const locked = await startTestServer({ apiKey: 'k' });
    try {
      expect(await send(`${locked.url}/api/stop`, 'POST', { origin: 'https://evil.example' })).toMatchObject({ status: 401 });
      expect(await send(`${locked.url}/api/stop`, 'GET', { origin: 'https://evil.example', host: 'argo.internal', authorization: 'Bearer k' })).toEqual({ status: 200, body: { stop: false, since: null } });
    } finally {
      await locked.listening.close(100);
    }
  });
});

describe('HEAD on the streamed routes', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.listening.close(1000);
  });

  it("answers with the GET's status and type and no body, and is logged at once (a stream begun for it was never read nor logged)", async () => {
    t.runner.script = () => ({ tokens: ['a', 'b'], holdAfter: 1 });
    const held = new Promise<void>((resolve) => (t.runner.onHold = () => resolve()));
    const { job_id: id } = (await (await fetch(`${t.url}/api/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: CHAT })).json()) as { job_id: string };
    await held;
    for (const [path, type] of [['/api/sessions/work', 'application/json'], [`/api/jobs/${id}/stream`, 'text/event-stream']]) {
      const head = await fetch(`${t.url}${path}`, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([200, type, '']);
      await waitFor(() => expect(t.lines).toContainEqual(expect.stringMatching(new RegExp(`^HEAD ${path} 200 \\d+ms session=`))));
    }
    expect((await fetch(`${t.url}/api/sessions/nope`, { method: 'HEAD' })).status).toBe(404);
    t.runner.release();
  });
});

describe('session names from the URL', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.listening.close(1000);
  });

  it.each<[string, string]>([
    ['a line break (a forged request line)', 'x%0AGET%20%2Fforged%20200%201ms%20session%3Devil'],
    ['terminal controls and a bidirectional mark', 'y%0Dz%1B%5B2J%E2%80%AE'],
    ['a path', '..%2F..%2Fetc%2Fpasswd'],
  ])('%s: 404, and the one request line it logs has no session and no control', async (_case, encoded) => {
    const before = t.lines.length;
    for (const method of ['GET', 'PATCH']) {
      const response = await fetch(`${t.url}/api/sessions/${encoded}`, { method, headers: { 'content-type': 'application/json' }, ...(method === 'PATCH' ? { body: '{"title":"t"}' } : {}) });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: 'session_not_found' } });
    }
    await waitFor(() => expect(t.lines.length).toBe(before + 2));
    for (const line of t.lines.slice(before)) {
      expect(line).toMatch(/^(GET|PATCH) \/api\/sessions\/\S+( \S+)* 404 \d+ms session=-$/);
      for (const control of ['\n', '\r', '\u001b', '\u202e']) expect(line).not.toContain(control);
    }
  });

  it('a name of pages is quoted cut short in the 404, not echoed whole', async () => {
    const response = await fetch(`${t.url}/api/sessions/${'n'.repeat(5000)}`);
    expect(await response.json()).toMatchObject({ error: { message: `no session named "${'n'.repeat(80)}…"` } });
  });
});

describe('streams to clients that read until the connection ends', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.listening.close(1000);
  });

  const streamed = CHAT.replace('}]', '}],"stream":true');

  it.each<[string, string, boolean]>([
    ['an HTTP/1.0 client gets the events unchunked, ended by the connection', 'HTTP/1.0', false],
    ['an HTTP/1.1 client asking "Connection: close" gets them chunked, then the connection closed', 'HTTP/1.1', true],
  ])('%s', async (_case, version, chunked) => {
    const raw = open(t.url);
    raw.socket.write(`POST /v1/chat/completions ${version}\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${streamed.length}\r\nConnection: close\r\n\r\n${streamed}`);
    // Closed by the server once the answer has ended (it was held open for the keep-alive time).
    await raw.closed;
    const text = raw.received();
    const [head, body] = [text.slice(0, text.indexOf('\r\n\r\n')), text.slice(text.indexOf('\r\n\r\n') + 4)];
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(/^transfer-encoding: chunked$/im.test(head)).toBe(chunked);
    expect(head).not.toMatch(/^connection: keep-alive$/im);
    if (!chunked) expect(ssePayloads(body).at(-1)).toBe('[DONE]');
    else expect(body).toMatch(/data: \[DONE\]\n\n\r\n0\r\n\r\n$/);
  });
});

describe('a client that never reads its stream', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ listen: { stallMs: 300 } });
  });
  afterAll(async () => {
    await t.listening.close(1000);
  });

  it('is cut once it has taken nothing for the stall time, and its turn ends interrupted; a quiet answer with nothing waiting is not cut', async () => {
    // More than the system's buffers hold, then the turn waits (as a model may): only the unread bytes can stall.
    const piece = 'x'.repeat(64 * 1024);
    t.runner.script = (input) => (input.userPrompt === 'flood' ? { tokens: [...Array.from({ length: 400 }, () => piece), 'y'], holdAfter: 400 } : { tokens: ['a', 'b'], holdAfter: 1 });
    const quiet = fetch(`${t.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: CHAT.replace('}]', '}],"stream":true') });
    const raw = open(t.url);
    raw.socket.pause();
    const flood = CHAT.replace('"hi"', '"flood"').replace('}]', '}],"stream":true');
    raw.socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${flood.length}\r\n\r\n${flood}`);
    await waitFor(() => expect(t.runner.logged.find((result) => result.text.startsWith('x'))?.status).toBe('interrupted'));
    // What the system had taken still reaches it; then the connection ends.
    raw.socket.resume();
    await raw.closed;
    // The held answer with nothing waiting for its client is still there: released, it ends whole.
    t.runner.release();
    expect(ssePayloads(await (await quiet).text()).at(-1)).toBe('[DONE]');
  });
});
