// The `web` toolset: fetch_url gets a page as text (HTML reduced to its words), size-capped.
import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { MIMEType } from 'node:util';
import { ToolError, stringArg } from './types.js';
import type { Tool } from './types.js';

export const FETCH_CAP_BYTES = 100 * 1024;
const TEXT_TYPES = /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json)|[^;]*\+json|[^;]*\+xml)/i;

/** Rough text of an HTML page: scripts, styles and tags dropped, entities for the common five. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|noscript)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(br|\/p|\/div|\/li|\/h[1-6]|\/tr)\b[^>]*>/gi, '\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/[ \t]+/g, ' ')
    .replace(/\s*\n\s*/g, '\n')
    .trim();
}

async function readCapped(response: Response, cap: number): Promise<{ bytes: Buffer; truncated: boolean }> {
  if (response.body === null) return { bytes: Buffer.alloc(0), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  // Leaving the loop early cancels the stream: nothing past the cap is downloaded.
  for await (const value of response.body as unknown as AsyncIterable<Uint8Array>) {
    if (size + value.length > cap) {
      chunks.push(value.subarray(0, cap - size));
      truncated = true;
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  return { bytes: Buffer.concat(chunks), truncated };
}

/** The charset the content type declares, else (for HTML) a simple <meta charset> in the first KB. */
function declaredCharset(type: string, bytes: Buffer): string | undefined {
  let charset: string | undefined;
  try {
    charset = new MIMEType(type).params.get('charset') ?? undefined;
  } catch {
    // A malformed content type declares nothing.
  }
  if (charset === undefined && /html/i.test(type)) {
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(bytes.subarray(0, 1024).toString('latin1'))?.[1];
  }
  return charset;
}

/** The body as text in its declared charset; a label TextDecoder does not know falls back to UTF-8. */
function decodeBody(bytes: Buffer, type: string): string {
  const charset = declaredCharset(type, bytes);
  let decoder = new TextDecoder('utf-8');
  try {
    if (charset !== undefined) decoder = new TextDecoder(charset);
  } catch {
    // Unknown label: UTF-8, the web's default.
  }
  return decoder.decode(bytes);
}

/** The code (ECONNREFUSED, Z_DATA_ERROR) or message of what undici wraps in "fetch failed"/"terminated". */
function causeOf(error: unknown): { code: string | undefined; message: string } {
  const cause: unknown = error instanceof Error && error.cause !== undefined ? error.cause : error;
  if (!(cause instanceof Error)) return { code: undefined, message: String(cause) };
  const code = 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
  return { code, message: cause.message.split('\n')[0] ?? '' };
}

/**
 * One line for a fetch that failed before a response. Node's fetch (undici) gives redirect refusals
 * no code, only these messages; anything unrecognised still reads "could not connect".
 */
function connectFailure(error: unknown, host: string): ToolError {
  const { code, message } = causeOf(error);
  if (message === 'redirect count exceeded') return new ToolError(`too many redirects from ${host}`, false);
  if (message.includes('URL scheme must be a HTTP(S) scheme')) return new ToolError(`${host} redirected to a URL that is not http or https (file:, ftp:…), which fetch_url does not follow`, false);
  // Node's fetch raises this only for a redirect whose address holds a user name or password.
  if (message.includes('cross origin not allowed')) return new ToolError(`${host} redirected to a URL with a user name or password, which is not fetched`, false);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ToolError(`${host} cannot be looked up (${code})`);
  return new ToolError(`could not connect to ${host} (${code ?? message})`);
}

/** The web is reachable only through a network interface other than loopback. */
export function hasNetwork(): boolean {
  return Object.values(networkInterfaces()).some((list) => list?.some((address) => !address.internal) ?? false);
}

/** A name any connected resolver knows: asking it is how fetch_url learns that something answers. */
export const PROBE_HOST = 'example.com';
const PROBE_MS = 1500;

/**
 * Null when the web answers, else why not: no interface but loopback, or a name lookup that fails or
 * takes longer than `waitMs` (offline, or a network without a way out).
 */
export async function webUnreachable(probe: { resolve?: (host: string) => Promise<unknown>; waitMs?: number; interfaceUp?: () => boolean } = {}): Promise<string | null> {
  const { resolve = (host: string) => lookup(host), waitMs = PROBE_MS, interfaceUp = hasNetwork } = probe;
  if (!interfaceUp()) return 'no network interface is up';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((done) => (timer = setTimeout(() => done(`nothing answers: looking up ${PROBE_HOST} took over ${waitMs / 1000} s`), waitMs)));
  try {
    return await Promise.race([resolve(PROBE_HOST).then(() => null, () => `nothing answers: ${PROBE_HOST} cannot be looked up (offline?)`), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asked once a minute at most: a server checks its tools for every request that asks for them. */
const VERDICT_MS = 60_000;
let verdict: { at: number; reason: Promise<string | null> } | null = null;

function webVerdict(): Promise<string | null> {
  const now = performance.now();
  if (verdict === null || now - verdict.at > VERDICT_MS) verdict = { at: now, reason: webUnreachable() };
  return verdict.reason;
}

export const fetchUrlTool: Tool = {
  name: 'fetch_url',
  description: 'Fetch a web page or text resource over http(s) and return its text (HTML reduced to text, at most 100 KB).',
  parameters: {
    type: 'object',
    properties: { url: { type: 'string', description: 'an http:// or https:// URL' } },
    required: ['url'],
    additionalProperties: false,
  },
  sideEffects: false,
  timeoutMs: 30_000,
  check: () => webVerdict(),
  run: async (args, context) => {
    const raw = stringArg(args, 'url') ?? '';
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      // Not echoed: an unparseable argument may still hold a password.
      throw new ToolError('the url argument is not a URL');
    }
    // Refused first, and the message never repeats the user name or password.
    if (url.username !== '' || url.password !== '') throw new ToolError('a URL with a user name or password is not fetched', false);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolError('only http and https URLs can be fetched', false);
    let response: Response;
    try {
      response = await fetch(url, { signal: context.signal, redirect: 'follow', headers: { accept: 'text/html, text/plain, application/json;q=0.9, */*;q=0.5' } });
    } catch (error) {
      throw connectFailure(error, url.host);
    }
    const type = response.headers.get('content-type') ?? 'text/plain';
    if (!TEXT_TYPES.test(type)) {
      await response.body?.cancel();
      throw new ToolError(`${url.host} sent ${type.split(';')[0] ?? type}, which is not text`);
    }
    let body: { bytes: Buffer; truncated: boolean };
    try {
      body = await readCapped(response, FETCH_CAP_BYTES);
    } catch (error) {
      // A broken gzip body, or a connection cut mid-page.
      const { code, message } = causeOf(error);
      throw new ToolError(`the page's body could not be read (${code !== undefined ? `${code}: ` : ''}${message})`);
    }
    const { truncated } = body;
    const text = decodeBody(body.bytes, type);
    return {
      url: response.url || url.href,
      status: response.status,
      content_type: type.split(';')[0]?.trim() ?? type,
      text: /html/i.test(type) ? htmlToText(text) : text,
      ...(truncated ? { truncated: true, note: 'stopped at 100 KB' } : {}),
    };
  },
};
