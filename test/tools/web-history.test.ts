import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { saveSession } from '../../src/sessions/store.js';
import { searchHistoryTool, skippedNote } from '../../src/tools/history.js';
import { validateArguments } from '../../src/tools/validate.js';
import { htmlText } from '../../src/tools/html-text.js';
import { FETCH_TEXT_CAP } from '../../src/tools/builtins.js';
import { FETCH_RAW_CAP, budgetedResult, fetchUrlTool, readBodyText, readingNote, textWindow, webUnreachable } from '../../src/tools/web.js';
import { waitFor } from '../support/wait.js';

const context = (home = '/') => ({ root: '/', home, signal: new AbortController().signal });

/** Bodies served as they are, with the content type given (charset cases). */
const BODIES: Record<string, [string, Buffer]> = {
  '/latin1': ['text/plain; charset=iso-8859-1', Buffer.from('caf\xe9', 'latin1')],
  '/utf16': ['text/plain; charset=utf-16le', Buffer.from('café', 'utf16le')],
  '/unknown-charset': ['text/plain; charset=x-nonsense', Buffer.from('café', 'utf8')],
  '/meta-charset': ['text/html', Buffer.from('<html><head><meta charset="windows-1252"></head><body>caf\xe9</body></html>', 'latin1')],
  '/no-charset': ['text/plain', Buffer.from('café', 'utf8')],
  '/empty-type': ['', Buffer.from('café', 'utf8')],
  '/only-parameters': ['; charset=utf-8', Buffer.from('café', 'utf8')],
};

describe('fetch_url', () => {
  const seen: string[] = [];
  const endlessSent: number[] = [];
  const server = createServer((request, response) => {
    seen.push(request.url ?? '');
    const body = BODIES[request.url ?? ''];
    if (body !== undefined) {
      response.setHeader('content-type', body[0]);
      response.end(body[1]);
    } else if (request.url === '/to-file' || request.url === '/to-ftp' || request.url === '/loop' || request.url === '/to-credentials' || request.url === '/to-bad-port') {
      const location = { '/to-file': 'file:///etc/passwd', '/to-ftp': 'ftp://127.0.0.1/x', '/loop': '/loop', '/to-credentials': `${base.replace('//', '//alice:s3cret@')}/page`, '/to-bad-port': 'http://127.0.0.1:6000/' }[request.url];
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
      response.end(`${'a'.repeat(FETCH_TEXT_CAP)}${'b'.repeat(FETCH_TEXT_CAP)}c`);
    } else if (request.url === '/script-first') {
      // What the old byte cap saw of a real page: 100 KB of head and script, then the words.
      response.setHeader('content-type', 'text/html');
      response.end(`<html><head><title>Late</title><script>${'var x = "<p>not text</p>";\n'.repeat(5000)}</script></head><body><p>the words</p></body></html>`);
    } else if (request.url === '/long-title') {
      response.setHeader('content-type', 'text/html');
      response.end(`<html><head><title>${'T'.repeat(20_000)}</title></head><body><p>The real content here.</p></body></html>`);
    } else if (request.url === '/open') {
      // A page that never ends (a long poll, a slow server): its words, then the connection held open.
      response.setHeader('content-type', 'text/plain');
      response.write('word '.repeat(4000));
    } else if (request.url === '/endless') {
      // HTML that never ends: written until the client goes away (or, bounded, 4× the raw cap).
      response.setHeader('content-type', 'text/html');
      response.write('<title>Endless</title><p>start</p>');
      let sent = 0;
      const more = (): void => {
        while (sent < FETCH_RAW_CAP * 4 && !response.destroyed) {
          sent += 65_536;
          if (!response.write(`<p>${'z'.repeat(65_529)}</p>`)) {
            response.once('drain', more);
            return;
          }
        }
        response.end();
      };
      response.on('close', () => endlessSent.push(sent));
      more();
    } else {
      response.setHeader('content-type', 'image/png');
      response.end(Buffer.from([0, 1, 2]));
    }
  });
  let base = '';
  // A port nothing listens on: one the system gave a server that has closed since.
  let closedPort = 0;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('returns HTML as text', async () => {
    expect(await fetchUrlTool.run({ url: `${base}/page` }, context())).toEqual({ url: `${base}/page`, status: 200, content_type: 'text/html', text: 'Title\nTom & Jerry' });
  });

  it('stops at the text cap and names the offset to read on from; the offset reads on', async () => {
    const first = await fetchUrlTool.run({ url: `${base}/big` }, context());
    expect(String(first.text)).toBe('a'.repeat(FETCH_TEXT_CAP));
    expect(first).toMatchObject({ truncated: true, note: 'stopped at 100,000 characters of text; read on with offset 100000' });
    const second = await fetchUrlTool.run({ url: `${base}/big`, offset: FETCH_TEXT_CAP }, context());
    expect(String(second.text)).toBe('b'.repeat(FETCH_TEXT_CAP));
    expect(second).toMatchObject({ offset: FETCH_TEXT_CAP, note: 'stopped at 100,000 characters of text; read on with offset 200000' });
    const last = await fetchUrlTool.run({ url: `${base}/big`, offset: 2 * FETCH_TEXT_CAP }, context());
    expect(last.text).toBe('c');
    expect(last).not.toHaveProperty('truncated');
    expect(last).not.toHaveProperty('note');
    expect(await fetchUrlTool.run({ url: `${base}/big`, offset: 300_000 }, context())).toMatchObject({ text: '', note: 'offset 300000 is past the end: the text has 200001 characters' });
  });

  it('limit asks for a smaller part; the note comes before the text, so a head cut to a budget keeps it', async () => {
    const part = await fetchUrlTool.run({ url: `${base}/big`, offset: FETCH_TEXT_CAP - 2, limit: 4 }, context());
    expect(part).toEqual({ url: `${base}/big`, status: 200, content_type: 'text/plain', offset: FETCH_TEXT_CAP - 2, truncated: true, note: 'stopped at 4 characters of text; read on with offset 100002', text: 'aabb' });
    const keys = Object.keys(await fetchUrlTool.run({ url: `${base}/big` }, context()));
    expect(keys.indexOf('note')).toBeLessThan(keys.indexOf('text'));
    expect(keys.at(-1)).toBe('text');
  });

  it('with a result budget and no limit, a long page comes in pieces the budget keeps whole, each naming where the next starts', async () => {
    let offset = 0;
    let text = '';
    for (let piece = 0; piece < 200; piece++) {
      const result = await fetchUrlTool.run({ url: `${base}/big`, ...(offset > 0 ? { offset } : {}) }, { ...context(), resultBudget: 4000 });
      expect(JSON.stringify(result).length).toBeLessThanOrEqual(4000);
      text += String(result.text);
      if (result.truncated !== true) break;
      const next = Number(/read on with offset (\d+)$/.exec(String(result.note))?.[1]);
      expect(next).toBe(offset + String(result.text).length);
      offset = next;
    }
    expect(text).toBe(`${'a'.repeat(FETCH_TEXT_CAP)}${'b'.repeat(FETCH_TEXT_CAP)}c`);
    // A limit the model asks for is kept, budget or not.
    expect(String((await fetchUrlTool.run({ url: `${base}/big`, limit: 9000 }, { ...context(), resultBudget: 4000 })).text)).toHaveLength(9000);
  });

  it.each<[string, Record<string, unknown>, number, [number, number]]>([
    // case, arguments besides the url, budget, least and most text shown
    ['no limit: what its budget shows', {}, 4000, [3700, 4000]],
    ['no limit, from an offset', { offset: 5000 }, 4000, [3700, 4000]],
    ['no limit and a tiny budget: the least piece', {}, 100, [500, 500]],
    ['a limit', { limit: 3000 }, 4000, [3000, 3000]],
  ])('a page that never ends answers once there is enough text for the call: %s', async (_case, args, resultBudget, [least, most]) => {
    const result = await fetchUrlTool.run({ url: `${base}/open`, ...args }, { ...context(), resultBudget });
    expect(result).toMatchObject({ truncated: true });
    expect(String(result.text).length).toBeGreaterThanOrEqual(least);
    expect(String(result.text).length).toBeLessThanOrEqual(most);
  });

  it('a long title is cut, so the note and the text still fit the budget', async () => {
    const result = await fetchUrlTool.run({ url: `${base}/long-title` }, { ...context(), resultBudget: 4000 });
    expect(result).toEqual({ url: `${base}/long-title`, status: 200, content_type: 'text/html', title: `${'T'.repeat(200)}…`, text: 'The real content here.' });
  });

  it('a page whose text starts after 100 KB of script still gives its text, and its title apart', async () => {
    expect(await fetchUrlTool.run({ url: `${base}/script-first` }, context())).toEqual({ url: `${base}/script-first`, status: 200, content_type: 'text/html', title: 'Late', text: 'the words' });
  });

  it('a body larger than the raw cap is read only as far as needed, at most up to the cap, and the result says so', async () => {
    const first = await fetchUrlTool.run({ url: `${base}/endless` }, context());
    expect(String(first.text)).toMatch(/^start\nz{65529}\nz/);
    expect(String(first.text)).toHaveLength(FETCH_TEXT_CAP);
    expect(first).toMatchObject({ truncated: true, note: 'stopped at 100,000 characters of text; read on with offset 100000' });
    // Enough text for the cap: the rest was never asked for.
    await waitFor(() => expect(endlessSent).toHaveLength(1));
    expect(endlessSent[0]).toBeLessThan(FETCH_RAW_CAP);
    const result = await fetchUrlTool.run({ url: `${base}/endless`, offset: FETCH_RAW_CAP }, context());
    expect(result).toMatchObject({ title: 'Endless', text: '', note: expect.stringMatching(/^offset 5242880 is past the end: the text has \d+ characters \(the page is over 5 MB and only its first 5 MB were read\)$/) as unknown });
    // The server stopped writing soon after the cap: the client went away.
    await waitFor(() => expect(endlessSent).toHaveLength(2));
    expect(endlessSent[1]).toBeLessThan(FETCH_RAW_CAP * 2);
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
    ['/image', 'sent image/png, which is not text', false],
    ['/empty-type', 'sent no content type, so its body is not known to be text', false],
    ['/only-parameters', 'sent no content type, so its body is not known to be text', false],
    ['file:///etc/passwd', 'only http and https', false],
    ['not a url', 'the url argument is not a URL', true],
    ['/to-file', 'redirected to a URL that is not http or https', false],
    ['/to-ftp', 'redirected to a URL that is not http or https', false],
    ['/loop', 'too many redirects', false],
    ['/to-credentials', 'redirected to a URL with a user name or password, which is not fetched', false],
    ['/bad-gzip', "the page's body could not be read (Z_DATA_ERROR", true],
    ['http://127.0.0.1:CLOSED/', 'could not connect to 127.0.0.1:CLOSED (ECONNREFUSED)', true],
    ['http://127.0.0.1:1/', "127.0.0.1:1: Node's fetch refuses to connect to that port", false],
    ['http://127.0.0.1:6000/', `127.0.0.1:6000: Node's fetch refuses to connect to that port, or to the port of an address it redirected to (a "bad port" in the Fetch standard`, false],
    ['http://127.0.0.1:6667/', "127.0.0.1:6667: Node's fetch refuses to connect to that port", false],
    ['/to-bad-port', "Node's fetch refuses to connect to that port, or to the port of an address it redirected to", false],
  ])('%s is a tool error', async (path, message, retryable) => {
    const url = path.startsWith('/') ? `${base}${path}` : path.replace('CLOSED', String(closedPort));
    await expect(fetchUrlTool.run({ url }, context())).rejects.toMatchObject({ message: expect.stringContaining(message.replace('CLOSED', String(closedPort))) as unknown, retryable });
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

});

/** Chunks of `body` (bytes), `size` at a time, counting how many bytes were pulled. */
function chunked(body: Buffer, size: number, pulled = { bytes: 0 }): AsyncIterable<Uint8Array> {
  return (async function* chunks() {
    for (let at = 0; at < body.length; at += size) {
      const chunk = body.subarray(at, at + size);
      pulled.bytes += chunk.length;
      // As from a socket: each chunk a turn of the event loop later.
      await Promise.resolve();
      yield chunk;
    }
  })();
}

/** An endless body: `<p>` after `<p>`, counting how many bytes were pulled. */
function endless(pulled: { bytes: number }): AsyncIterable<Uint8Array> {
  return (async function* chunks() {
    for (;;) {
      const chunk = Buffer.from(`<p>${'w'.repeat(1000)}</p>`);
      pulled.bytes += chunk.length;
      // As from a socket: each chunk a turn of the event loop later.
      await Promise.resolve();
      yield chunk;
    }
  })();
}

const plain = () => {
  let out = '';
  return { write: (chunk: string) => void (out += chunk), end: () => undefined, text: () => out, length: () => out.length };
};

describe('readBodyText', () => {
  it.each([
    ['plain text, whole', 'text/plain', Buffer.from('hello'), 3, { rawCap: 100, enough: 100 }, { text: 'hello', rawCut: false }],
    ['plain text past the raw cap', 'text/plain', Buffer.from('abcdefghij'), 3, { rawCap: 4, enough: 100 }, { text: 'abcd', rawCut: true }],
    ['a UTF-8 character split between chunks', 'text/plain', Buffer.from('é€😀'), 1, { rawCap: 100, enough: 100 }, { text: 'é€😀', rawCut: false }],
    ['a character cut by the raw cap is dropped, not U+FFFD', 'text/plain', Buffer.from('ab€'), 1, { rawCap: 4, enough: 100 }, { text: 'ab', rawCut: true }],
    ['a <meta charset> in the first KB, split across chunks', 'text/html', Buffer.from('<meta charset="iso-8859-1"><p>caf\xe9</p>', 'latin1'), 5, { rawCap: 2000, enough: 100 }, { text: 'café', rawCut: false }],
    ['the content type before <meta charset>', 'text/html; charset=utf-8', Buffer.from('<meta charset="iso-8859-1"><p>café</p>'), 7, { rawCap: 2000, enough: 100 }, { text: 'café', rawCut: false }],
    ['an entity split between chunks', 'text/html', Buffer.from('<p>&amp;lt; &#x1F600; &eacute;</p>'), 2, { rawCap: 2000, enough: 100 }, { text: '&lt; 😀 é', rawCut: false }],
    ['HTML past the raw cap', 'text/html', Buffer.from(`<p>one</p><p>${'x'.repeat(50)}</p>`), 4, { rawCap: 16, enough: 100 }, { text: 'one\nxxx', rawCut: true }],
    ['an empty body', 'text/html', Buffer.alloc(0), 4, { rawCap: 16, enough: 100 }, { text: '', rawCut: false }],
    ['a UTF-8 byte order mark over a declared latin1', 'text/plain; charset=iso-8859-1', Buffer.from('\ufeffcafé'), 2, { rawCap: 100, enough: 100 }, { text: 'café', rawCut: false }],
    ['a UTF-8 byte order mark over a <meta charset>', 'text/html', Buffer.from('\ufeff<meta charset="windows-1252"><p>café</p>'), 5, { rawCap: 2000, enough: 100 }, { text: 'café', rawCut: false }],
    ['a UTF-16LE byte order mark over a declared UTF-8', 'text/plain; charset=utf-8', Buffer.from('\ufeffcafé', 'utf16le'), 3, { rawCap: 100, enough: 100 }, { text: 'café', rawCut: false }],
    ['a UTF-16BE byte order mark, no charset', 'text/plain', Buffer.from('\ufeffcafé', 'utf16le').swap16(), 3, { rawCap: 100, enough: 100 }, { text: 'café', rawCut: false }],
    ['a mark of the declared charset is dropped too', 'text/plain; charset=utf-8', Buffer.from('\ufeffcafé'), 3, { rawCap: 100, enough: 100 }, { text: 'café', rawCut: false }],
  ])('%s', async (_name, type, body, size, limits, expected) => {
    const sink = type.includes('html') ? htmlText() : plain();
    expect(await readBodyText(chunked(body, size), type, sink, limits)).toEqual(expected);
  });

  it('stops pulling an endless body at the raw cap, or once there is enough text', async () => {
    const atCap = { bytes: 0 };
    const capped = await readBodyText(endless(atCap), 'text/html', htmlText(), { rawCap: 100_000, enough: 1_000_000 });
    expect(capped.rawCut).toBe(true);
    expect(atCap.bytes).toBeLessThanOrEqual(100_000 + 1007);
    const early = { bytes: 0 };
    const enough = await readBodyText(endless(early), 'text/html', htmlText(), { rawCap: 100_000, enough: 5000 });
    expect(enough).toMatchObject({ rawCut: false });
    expect(enough.text.length).toBeGreaterThan(5000);
    expect(early.bytes).toBeLessThan(10_000);
  });

  it('a null body is empty text', async () => {
    expect(await readBodyText(null, 'text/plain', plain(), { rawCap: 10, enough: 10 })).toEqual({ text: '', rawCut: false });
  });
});

describe('budgetedResult', () => {
  const resultOf = (window: { shown: string; cut: boolean }, cap: number): Record<string, unknown> => ({
    url: 'http://x/',
    ...(window.cut ? { truncated: true, note: `stopped at ${cap} characters of text; read on with offset ${cap}` } : {}),
    text: window.shown,
  });
  it.each([
    ['plain text', 'a'.repeat(20_000), 4000],
    ['text JSON doubles (quotes, line breaks, backslashes)', '"\n\\'.repeat(5000), 4000],
    ['emoji, never cut in half', '😀'.repeat(10_000), 3001],
    ['text shorter than the budget, whole', 'short', 4000],
  ])('%s: the JSON fits the budget and the text is the longest head that does', (_case, text, budget) => {
    const result = budgetedResult(text, 0, FETCH_TEXT_CAP, budget, resultOf);
    const shown = String(result.text);
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(budget);
    expect(text.startsWith(shown)).toBe(true);
    expect(/[\uD800-\uDBFF]$/.test(shown)).toBe(false);
    if (shown.length < text.length) expect(JSON.stringify(resultOf({ shown: text.slice(0, shown.length + 2), cut: true }, shown.length + 2)).length).toBeGreaterThan(budget);
  });

  it('a budget too small for the note and 500 characters gives 500, to be cut later as any result', () => {
    expect(String(budgetedResult('a'.repeat(5000), 0, FETCH_TEXT_CAP, 100, resultOf).text)).toHaveLength(500);
  });
});

describe('textWindow and readingNote', () => {
  it.each([
    ['all of a short text', 'abc', 0, 5, { shown: 'abc', cut: false }],
    ['the cap', 'abcdef', 0, 4, { shown: 'abcd', cut: true }],
    ['from an offset', 'abcdef', 2, 2, { shown: 'cd', cut: true }],
    ['the end from an offset', 'abcdef', 4, 4, { shown: 'ef', cut: false }],
    ['past the end', 'abc', 5, 4, { shown: '', cut: false }],
    ['never ends inside a surrogate pair', 'ab😀c', 0, 3, { shown: 'ab', cut: true }],
  ])('textWindow: %s', (_name, text, offset, cap, expected) => {
    expect(textWindow(text, offset, cap)).toEqual(expected);
  });

  it.each([
    ['nothing cut', { offset: 0, limit: 100_000, shown: 10, total: 10, textCut: false, rawCut: false }, undefined],
    ['the text cap', { offset: 0, limit: 100_000, shown: 100_000, total: 150_000, textCut: true, rawCut: false }, { truncated: true, note: 'stopped at 100,000 characters of text; read on with offset 100000' }],
    ['the text cap, from an offset', { offset: 100_000, limit: 100_000, shown: 99_999, total: 300_000, textCut: true, rawCut: true }, { truncated: true, note: 'stopped at 100,000 characters of text; read on with offset 199999' }],
    ['a limit the model gave', { offset: 2000, limit: 3000, shown: 3000, total: 150_000, textCut: true, rawCut: false }, { truncated: true, note: 'stopped at 3,000 characters of text; read on with offset 5000' }],
    ['the raw cap', { offset: 0, limit: 100_000, shown: 40, total: 40, textCut: false, rawCut: true }, { truncated: true, note: 'the page is over 5 MB and only its first 5 MB were read: the text ends there' }],
    ['an offset past the end', { offset: 50, limit: 100_000, shown: 0, total: 40, textCut: false, rawCut: false }, { note: 'offset 50 is past the end: the text has 40 characters' }],
    ['an offset at the end', { offset: 40, limit: 100_000, shown: 0, total: 40, textCut: false, rawCut: false }, { note: 'offset 40 is past the end: the text has 40 characters' }],
  ])('readingNote: %s', (_name, window, expected) => {
    expect(readingNote(window)).toEqual(expected);
  });
});

describe('search_history', () => {
  const line = (id: string, session: [string, string], prompt: string, response: string): string =>
    JSON.stringify({
      id, timestamp: '2026-01-02T10:00:00.000+00:00', session: session[0], session_id: session[1], status: 'ok', entry_type: 'question', model: 'argo', endpoint: 'chat',
      active_mode: null, persona: 'neutral', verbosity: 'short', replay: { enabled: false, count: null, session: false }, user_prompt: prompt, model_response: response,
      replay_policy: null, replayed_ids: [], done_reason: 'stop', error: null,
      timings: { first_token_ms: 1, total_ms: 2, total_duration_ns: null, load_duration_ns: null, prompt_eval_count: null, prompt_eval_duration_ns: null, eval_count: null, eval_duration_ns: null },
    });
  /** A data home whose log has these lines, and a record for each session, by name and id. */
  const homeWith = async (lines: string[], sessions: [string, string][]): Promise<string> => {
    const home = mkdtempSync(join(tmpdir(), 'argo-history-'));
    mkdirSync(join(home, 'logs'));
    mkdirSync(join(home, 'sessions'));
    writeFileSync(join(home, 'logs', '2026-01-02.log'), `${lines.join('\n')}\n`);
    const at = '2026-01-02T10:00:00.000+00:00';
    for (const [name, id] of sessions) await saveSession(join(home, 'sessions'), { name, id, title: '', turns: 1, created_at: at, last_used_at: at, last_model: null });
    return home;
  };

  it('finds earlier turns through the logs engine, newest matches, clipped', async () => {
    const home = await homeWith([line('t1', ['default', 'S1'], 'about rust', 'Rust is fast'), line('t2', ['default', 'S1'], 'about go', 'Go is simple'), line('t3', ['default', 'S1'], 'more rust', 'x'.repeat(700))], [['default', 'S1']]);
    const result = await searchHistoryTool.run({ query: 'RUST' }, context(home));
    expect(result.turns).toEqual([
      { id: 't1', timestamp: '2026-01-02T10:00:00.000+00:00', session: 'default', prompt: 'about rust', response: 'Rust is fast' },
      { id: 't3', timestamp: '2026-01-02T10:00:00.000+00:00', session: 'default', prompt: 'more rust', response: `${'x'.repeat(600)}…` },
    ]);
    expect((await searchHistoryTool.run({ query: 'rust', limit: 1 }, context(home))).turns).toHaveLength(1);
  });

  it.each<[string, Record<string, unknown>, string[] | string]>([
    // case, arguments → the turns' ids, or the failure (the model may correct its arguments: retryable)
    ['no session', { query: 'rust' }, ['t1', 't3']],
    ['an empty session: no filter', { query: 'rust', session: '' }, ['t1', 't3']],
    ['a blank session: no filter', { query: 'rust', session: '  ' }, ['t1', 't3']],
    ['a null session: no filter', { query: 'rust', session: null }, ['t1', 't3']],
    ['a session by its name', { query: 'rust', session: 'work' }, ['t3']],
    ['an unknown session, the likeliest first', { query: 'rust', session: 'wrok' }, 'there is no session named "wrok"; sessions: work, default'],
    ['an unknown session', { query: 'rust', session: 'nope' }, 'there is no session named "nope"; sessions: default, work'],
  ])('%s', async (_case, args, expected) => {
    const home = await homeWith([line('t1', ['default', 'S1'], 'about rust', 'a'), line('t2', ['default', 'S1'], 'about go', 'b'), line('t3', ['work', 'S2'], 'more rust', 'c')], [['default', 'S1'], ['work', 'S2']]);
    expect(validateArguments(searchHistoryTool, args)).toEqual({ kind: 'ok', args });
    const run = searchHistoryTool.run(args, context(home));
    if (typeof expected === 'string') await expect(run).rejects.toMatchObject({ message: expected, retryable: true });
    else expect(((await run).turns as { id: string }[]).map((turn) => turn.id)).toEqual(expected);
  });

  it.each<[number, string]>([
    // sessions there are → what an unknown name's failure lists
    [0, 'there is no session named "nope"; there are no sessions yet'],
    [5, 'there is no session named "nope"; sessions: s1, s2, s3, s4, s5'],
    [7, 'there is no session named "nope"; sessions: s1, s2, s3, s4, s5 and 2 more'],
  ])('with %i sessions an unknown name says: %s', async (count, message) => {
    const home = await homeWith([line('t1', ['s1', 'S1'], 'rust', 'a')], Array.from({ length: count }, (_, index): [string, string] => [`s${index + 1}`, `S${index + 1}`]));
    await expect(searchHistoryTool.run({ query: 'rust', session: 'nope' }, context(home))).rejects.toMatchObject({ message, retryable: true });
  });

  it('tells the model what it could not read: unreadable lines, days out of reach', async () => {
    const home = await homeWith([line('t1', ['default', 'S1'], 'about rust', 'a'), '{"id":"broken, about rust', line('t2', ['default', 'S1'], 'more rust', 'b')], [['default', 'S1']]);
    symlinkSync(join(home, 'gone', '2026-01-01.log'), join(home, 'logs', '2026-01-01.log'));
    const result = await searchHistoryTool.run({ query: 'rust' }, context(home));
    expect(result).toMatchObject({ turns: [{ id: 't1' }, { id: 't2' }], note: "skipped 1 unreadable log line and 1 day's log file out of reach: a turn there was not searched" });
    const clean = await homeWith([line('t1', ['default', 'S1'], 'about rust', 'a')], [['default', 'S1']]);
    expect(await searchHistoryTool.run({ query: 'rust' }, context(clean))).not.toHaveProperty('note');
  });

  it.each<[number, number, string | null]>([
    [0, 0, null],
    [2, 0, 'skipped 2 unreadable log lines: a turn there was not searched'],
    [0, 3, "skipped 3 days' log files out of reach: a turn there was not searched"],
  ])('skippedNote: %i unreadable lines, %i days out of reach', (unreadable, days, note) => {
    expect(skippedNote({ unreadable, missedDays: Array.from({ length: days }, (_, index) => `d${index}`) })).toBe(note);
  });

  it('stops a search when its call is aborted (Ctrl-C, a STOP, its timeout): a permanent failure, not a result', async () => {
    // Many days of turns, none matching: the search reads them all before it yields anything.
    const home = await homeWith([], []);
    const day = `${Array.from({ length: 2000 }, (_, index) => line(`t${index}`, ['default', 'S1'], 'about go', 'b')).join('\n')}\n`;
    for (let dayOfMonth = 3; dayOfMonth <= 28; dayOfMonth++) writeFileSync(join(home, 'logs', `2026-01-${String(dayOfMonth).padStart(2, '0')}.log`), day);
    const controller = new AbortController();
    controller.abort();
    await expect(searchHistoryTool.run({ query: 'rust' }, { ...context(home), signal: controller.signal })).rejects.toMatchObject({ message: 'the search was interrupted', retryable: false });
    const later = new AbortController();
    const running = searchHistoryTool.run({ query: 'rust' }, { ...context(home), signal: later.signal });
    later.abort();
    await expect(running).rejects.toMatchObject({ message: 'the search was interrupted', retryable: false });
  });

  describe('names a session as it is named now, which its session argument takes', () => {
    // alpha (S1) was renamed gamma; beta (S2) was removed and a new session took its name (S3).
    const lines = [line('t1', ['alpha', 'S1'], 'the password is hunter2', 'noted'), line('t2', ['beta', 'S2'], 'hunter2 again', 'noted'), line('t3', ['beta', 'S3'], 'no match here', 'ok')];
    const records: [string, string][] = [['gamma', 'S1'], ['beta', 'S3']];

    it.each<[string, Record<string, unknown>, Record<string, unknown>[] | string]>([
      // case, arguments, the turns' ids and sessions (or the failure)
      ['a renamed session by its name now; a removed one as null, never the name another has now', { query: 'hunter2' }, [
        { id: 't1', session: 'gamma' },
        { id: 't2', session: null, session_note: 'the session this turn was in has been removed' },
      ]],
      ['the name a result gave', { query: 'hunter2', session: 'gamma' }, [{ id: 't1', session: 'gamma' }]],
      ['a name taken since by another session: that session only', { query: 'hunter2', session: 'beta' }, []],
      ['the name it was logged under', { query: 'hunter2', session: 'alpha' }, 'there is no session named "alpha"; sessions: beta, gamma'],
    ])('%s', async (_case, args, expected) => {
      const home = await homeWith(lines, records);
      const run = searchHistoryTool.run(args, context(home));
      if (typeof expected === 'string') {
        await expect(run).rejects.toMatchObject({ message: expected, retryable: true });
        return;
      }
      const turns = (await run).turns as Record<string, unknown>[];
      expect(turns.map(({ id, session, session_note }) => ({ id, session, ...(session_note !== undefined ? { session_note } : {}) }))).toEqual(expected);
    });
  });
});
