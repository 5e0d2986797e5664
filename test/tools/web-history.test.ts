import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchHistoryTool } from '../../src/tools/history.js';
import { FETCH_CAP_BYTES, fetchUrlTool, htmlToText, webUnreachable } from '../../src/tools/web.js';

const context = (home = '/') => ({ root: '/', home, signal: new AbortController().signal });

/** Bodies served as they are, with the content type given (charset cases). */
const BODIES: Record<string, [string, Buffer]> = {
  '/latin1': ['text/plain; charset=iso-8859-1', Buffer.from('caf\xe9', 'latin1')],
  '/utf16': ['text/plain; charset=utf-16le', Buffer.from('café', 'utf16le')],
  '/unknown-charset': ['text/plain; charset=x-nonsense', Buffer.from('café', 'utf8')],
  '/meta-charset': ['text/html', Buffer.from('<html><head><meta charset="windows-1252"></head><body>caf\xe9</body></html>', 'latin1')],
  '/no-charset': ['text/plain', Buffer.from('café', 'utf8')],
};

describe('fetch_url', () => {
  const seen: string[] = [];
  const server = createServer((request, response) => {
    seen.push(request.url ?? '');
    const body = BODIES[request.url ?? ''];
    if (body !== undefined) {
      response.setHeader('content-type', body[0]);
      response.end(body[1]);
    } else if (request.url === '/to-file' || request.url === '/to-ftp' || request.url === '/loop' || request.url === '/to-credentials') {
      const location = { '/to-file': 'file:///etc/passwd', '/to-ftp': 'ftp://127.0.0.1/x', '/loop': '/loop', '/to-credentials': `${base.replace('//', '//alice:s3cret@')}/page` }[request.url];
      response.writeHead(302, { location });
      response.end();
    } else if (request.url === '/bad-gzip') {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      response.end('this is not gzip');
    } else if (request.url === '/page') {
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.end('<html><head><style>p{}</style><script>x()</script></head><body><h1>Title</h1><p>Tom &amp; Jerry</p></body></html>');
    } else if (request.url === '/big') {
      response.setHeader('content-type', 'text/plain');
      response.end('a'.repeat(FETCH_CAP_BYTES * 2));
    } else {
      response.setHeader('content-type', 'image/png');
      response.end(Buffer.from([0, 1, 2]));
    }
  });
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it('returns HTML as text', async () => {
    expect(await fetchUrlTool.run({ url: `${base}/page` }, context())).toEqual({ url: `${base}/page`, status: 200, content_type: 'text/html', text: 'Title\nTom & Jerry' });
  });

  it('stops at the size cap', async () => {
    const result = await fetchUrlTool.run({ url: `${base}/big` }, context());
    expect(String(result.text)).toHaveLength(FETCH_CAP_BYTES);
    expect(result.truncated).toBe(true);
  });

  it.each([
    ['/latin1', 'café'],
    ['/utf16', 'café'],
    ['/unknown-charset', 'café'],
    ['/meta-charset', 'café'],
    ['/no-charset', 'café'],
  ])('%s is decoded with its declared charset', async (path, text) => {
    expect((await fetchUrlTool.run({ url: `${base}${path}` }, context())).text).toBe(text);
  });

  it.each([
    ['/image', 'which is not text', true],
    ['file:///etc/passwd', 'only http and https', false],
    ['not a url', 'the url argument is not a URL', true],
    ['/to-file', 'redirected to a URL that is not http or https', false],
    ['/to-ftp', 'redirected to a URL that is not http or https', false],
    ['/loop', 'too many redirects', false],
    ['/to-credentials', 'redirected to a URL with a user name or password, which is not fetched', false],
    ['/bad-gzip', "the page's body could not be read (Z_DATA_ERROR", true],
    ['http://127.0.0.1:1/', 'could not connect to 127.0.0.1:1', true],
  ])('%s is a tool error', async (path, message, retryable) => {
    const url = path.startsWith('/') ? `${base}${path}` : path;
    await expect(fetchUrlTool.run({ url }, context())).rejects.toMatchObject({ message: expect.stringContaining(message) as unknown, retryable });
  });

  it.each([
    ['http://alice:s3cret@127.0.0.1:PORT/secret', 'a URL with a user name or password is not fetched'],
    ['http://alice@127.0.0.1:PORT/secret', 'a URL with a user name or password is not fetched'],
    ['ftp://alice:s3cret@127.0.0.1:PORT/secret', 'a URL with a user name or password is not fetched'],
    ['http://alice:s3cret@[/secret', 'the url argument is not a URL'],
  ])('%s is refused before anything else, without repeating the password', async (template, message) => {
    const url = template.replace('PORT', new URL(base).port);
    const failure: unknown = await fetchUrlTool.run({ url }, context()).then(() => null, (error: unknown) => error);
    expect(failure).toMatchObject({ name: 'ToolError', message });
    expect(String(failure)).not.toMatch(/s3cret|alice/);
    expect(seen).not.toContain('/secret');
  });

  it.each([
    ['a lookup that answers', true, () => Promise.resolve({ address: '93.184.215.14' }), null],
    ['a lookup that fails', true, () => Promise.reject(new Error('getaddrinfo ENOTFOUND example.com')), 'nothing answers: example.com cannot be looked up (offline?)'],
    ['a lookup that hangs', true, () => new Promise(() => undefined), 'nothing answers: looking up example.com took over 0.05 s'],
    ['no interface but loopback', false, () => Promise.resolve({}), 'no network interface is up'],
  ])('webUnreachable with %s', async (_name, up, resolve, reason) => {
    expect(await webUnreachable({ resolve, waitMs: 50, interfaceUp: () => up })).toBe(reason);
  });

  it('htmlToText', () => {
    expect(htmlToText('<p>a<br>b</p><!-- c --><div>&lt;d&gt;</div>')).toBe('a\nb\n<d>');
  });
});

describe('search_history', () => {
  it('finds earlier turns through the logs engine, newest matches, clipped', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-history-'));
    mkdirSync(join(home, 'logs'));
    const line = (id: string, prompt: string, response: string): string =>
      JSON.stringify({
        id, timestamp: '2026-01-02T10:00:00.000+00:00', session: 'default', session_id: 'S1', status: 'ok', entry_type: 'question', model: 'argo', endpoint: 'chat',
        active_mode: null, persona: 'neutral', verbosity: 'short', replay: { enabled: false, count: null, session: false }, user_prompt: prompt, model_response: response,
        replay_policy: null, replayed_ids: [], done_reason: 'stop', error: null,
        timings: { first_token_ms: 1, total_ms: 2, total_duration_ns: null, load_duration_ns: null, prompt_eval_count: null, prompt_eval_duration_ns: null, eval_count: null, eval_duration_ns: null },
      });
    writeFileSync(join(home, 'logs', '2026-01-02.log'), `${line('t1', 'about rust', 'Rust is fast')}\n${line('t2', 'about go', 'Go is simple')}\n${line('t3', 'more rust', 'x'.repeat(700))}\n`);
    const result = await searchHistoryTool.run({ query: 'RUST' }, context(home));
    expect(result.turns).toEqual([
      { id: 't1', timestamp: '2026-01-02T10:00:00.000+00:00', session: 'default', prompt: 'about rust', response: 'Rust is fast' },
      { id: 't3', timestamp: '2026-01-02T10:00:00.000+00:00', session: 'default', prompt: 'more rust', response: `${'x'.repeat(600)}…` },
    ]);
    expect((await searchHistoryTool.run({ query: 'rust', limit: 1 }, context(home))).turns).toHaveLength(1);
    await expect(searchHistoryTool.run({ query: 'rust', session: 'nope' }, context(home))).rejects.toMatchObject({ message: 'there is no session named "nope"', retryable: false });
  });
});
