// The `web` toolset: fetch_url gets a page as text (HTML reduced to its words), size-capped. What
// the model is told of it is in builtins.ts; this code loads with its availability check.
import { networkInterfaces } from 'node:os';
import { MIMEType, TextDecoder } from 'node:util';
import { headOf } from '../output/cut.js';
import { groupThousands } from '../text/decimal.js';
import { quoting } from './foreign-line.js';
import { FETCH_TEXT_CAP, FETCH_URL } from './builtins.js';
import { ToolError, isOverBudget, largestFitting, numberArg, stringArg } from './types.js';
import type { Tool, ToolResult } from './types.js';

/** Bytes of body read at most: pages carry far more markup and script than text, but not without end. */
export const FETCH_RAW_CAP = 5 * 1024 * 1024;
const TEXT_TYPES = /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json)|[^;]*\+json|[^;]*\+xml)/i;
/** Bytes looked at for a <meta charset> before decoding starts. */
const SNIFF_BYTES = 1024;

/** The charset the content type declares, else (for HTML) a simple <meta charset> in the first KB. */
function declaredCharset(type: string, bytes: Buffer): string | undefined {
  let charset: string | undefined;
  try {
    charset = new MIMEType(type).params.get('charset') ?? undefined;
  } catch {
    // A malformed content type declares nothing.
  }
  if (charset === undefined && /html/i.test(type)) {
    charset = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(bytes.subarray(0, SNIFF_BYTES).toString('latin1'))?.[1];
  }
  return charset;
}

/** The encoding a byte order mark at the start names: it wins over any declared charset, as the WHATWG encoding standard decodes. */
function bomEncoding(bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

/**
 * A streaming decoder for the body's byte order mark, else its declared charset; a label TextDecoder
 * does not know falls back to UTF-8. The decoder drops the mark itself.
 */
function decoderFor(type: string, head: Buffer): TextDecoder {
  const charset = bomEncoding(head) ?? declaredCharset(type, head);
  try {
    if (charset !== undefined) return new TextDecoder(charset);
  } catch {
    // Unknown label: UTF-8, the web's default.
  }
  return new TextDecoder('utf-8');
}

/** Where decoded text goes: reduced to words for HTML, as it is otherwise. */
interface TextSink {
  write: (chunk: string) => void;
  end: () => void;
  text: () => string;
  length: () => number;
  title?: () => string;
}

function plainText(): TextSink {
  let out = '';
  return { write: (chunk) => (out += chunk), end: () => undefined, text: () => out, length: () => out.length };
}

export interface BodyText {
  text: string;
  title?: string;
  /** The body went on past `rawCap` bytes, which were all that was read. */
  rawCut: boolean;
}

/**
 * The body decoded and written into `sink` as it streams in. Reading stops at `rawCap` bytes, or once
 * the sink holds more than `enough` characters: leaving the loop cancels the stream, so nothing
 * past that is downloaded and memory stays bounded whatever the server sends.
 */
export async function readBodyText(body: AsyncIterable<Uint8Array> | null, type: string, sink: TextSink, limits: { rawCap: number; enough: number }): Promise<BodyText> {
  const head: Uint8Array[] = [];
  let decoder: TextDecoder | undefined;
  let read = 0;
  let rawCut = false;
  // The charset is known once the first KB is in (a <meta charset> may say it).
  const start = (): TextDecoder => {
    const bytes = Buffer.concat(head);
    const chosen = decoderFor(type, bytes);
    sink.write(chosen.decode(bytes, { stream: true }));
    return chosen;
  };
  for await (const chunk of body ?? []) {
    let piece = chunk;
    if (read + piece.length > limits.rawCap) {
      piece = piece.subarray(0, limits.rawCap - read);
      rawCut = true;
    }
    read += piece.length;
    if (decoder === undefined) {
      head.push(piece);
      if (read >= SNIFF_BYTES || rawCut) decoder = start();
    } else {
      sink.write(decoder.decode(piece, { stream: true }));
    }
    if (rawCut || sink.length() > limits.enough) break;
  }
  decoder ??= start();
  // A character cut in two by the raw cap is dropped rather than shown as U+FFFD.
  if (!rawCut) sink.write(decoder.decode());
  sink.end();
  const title = sink.title?.();
  return { text: sink.text(), ...(title !== undefined && title !== '' ? { title } : {}), rawCut };
}

/** Text from `offset`, at most `cap` characters, never ending inside a surrogate pair. */
export function textWindow(text: string, offset: number, cap: number): { shown: string; cut: boolean } {
  const shown = headOf(text.slice(offset, offset + cap + 1), cap);
  return { shown, cut: text.length > offset + shown.length };
}

/** The least text a budgeted piece keeps, whatever its budget: smaller, reading on would crawl. */
const LEAST_PIECE = 500;

/** The most text a piece of `budget` can show, at most `cap`: its JSON is never shorter than its text. */
export function mostInPiece(budget: number, cap: number): number {
  return Math.min(cap, Math.max(budget, LEAST_PIECE));
}

/**
 * The result from `offset` whose JSON fits `budget` characters (the most text that does, at most
 * `cap`); a budget too small for even LEAST_PIECE characters gets that many, cut later as any result.
 */
export function budgetedResult(text: string, offset: number, cap: number, budget: number, resultOf: (window: { shown: string; cut: boolean }, cap: number) => ToolResult): ToolResult {
  const piece = (size: number): ToolResult => {
    const window = textWindow(text, offset, size);
    return resultOf(window, window.shown.length);
  };
  const most = mostInPiece(budget, cap);
  const whole = piece(most);
  if (!isOverBudget(JSON.stringify(whole), budget)) return whole;
  // The longest piece that fits: each look is one JSON.stringify of at most `most` characters.
  const fits = largestFitting(Math.min(most, Math.max(0, text.length - offset)), budget, piece);
  return piece(Math.max(fits, Math.min(LEAST_PIECE, cap)));
}

/**
 * What the model is told when a cap cut the text (and how to read on), or when its offset is past
 * the end; nothing when it got the whole text.
 */
export function readingNote(window: { offset: number; limit: number; shown: number; total: number; textCut: boolean; rawCut: boolean }): { truncated?: true; note: string } | undefined {
  const { offset, limit, shown, total, textCut, rawCut } = window;
  const megabytes = FETCH_RAW_CAP / 1024 / 1024;
  const raw = `the page is over ${megabytes} MB and only its first ${megabytes} MB were read`;
  if (offset > 0 && offset >= total) return { note: `offset ${offset} is past the end: the text has ${total} characters${rawCut ? ` (${raw})` : ''}` };
  if (textCut) return { truncated: true, note: `stopped at ${groupThousands(limit)} characters of text; read on with offset ${offset + shown}` };
  if (rawCut) return { truncated: true, note: `${raw}: the text ends there` };
  return undefined;
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
  if (message === 'redirect count exceeded') return new ToolError(quoting`too many redirects from ${host}`, false);
  if (message.includes('URL scheme must be a HTTP(S) scheme')) return new ToolError(quoting`${host} redirected to a URL that is not http or https (file:, ftp:…), which fetch_url does not follow`, false);
  // Node's fetch raises this only for a redirect whose address holds a user name or password.
  if (message.includes('cross origin not allowed')) return new ToolError(quoting`${host} redirected to a URL with a user name or password, which is not fetched`, false);
  // The request or a redirect went to a port the Fetch standard blocks; the error does not say which.
  if (message === 'bad port') {
    return new ToolError(
      quoting`${host}: Node's fetch refuses to connect to that port, or to the port of an address it redirected to (a "bad port" in the Fetch standard, kept for other protocols: 6000, 6665–6669, 10080 and others); fetch_url cannot reach it`,
      false,
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new ToolError(quoting`${host} cannot be looked up (${code})`);
  // Node's words, masked before Argo's bracket closes them.
  return new ToolError(quoting`could not connect to ${host} (${code ?? message})`);
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
  // The resolver is loaded here, not with the tool: a run without fetch_url never looks a name up.
  // Node's own module, in the binary: its import needs no file, so loadToolModules leaves it out.
  const { resolve = async (host: string) => (await import('node:dns/promises')).lookup(host), waitMs = PROBE_MS, interfaceUp = hasNetwork } = probe;
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

export function webVerdict(): Promise<string | null> {
  const now = performance.now();
  if (verdict === null || now - verdict.at > VERDICT_MS) verdict = { at: now, reason: webUnreachable() };
  return verdict.reason;
}

export const fetchUrlTool: Tool = {
  ...FETCH_URL,
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
      // The same URL gives the same type again: not retryable.
      const named = type.split(';')[0]?.trim() ?? '';
      throw new ToolError(named === '' ? quoting`${url.host} sent no content type, so its body is not known to be text` : quoting`${url.host} sent ${named}, which is not text`, false);
    }
    const offset = numberArg(args, 'offset') ?? 0;
    const asked = numberArg(args, 'limit');
    const limit = asked ?? FETCH_TEXT_CAP;
    // No limit asked: a page longer than the tool's budget comes in pieces the budget keeps whole,
    // each naming the offset the next starts at (cut to the budget, a note would name one unseen).
    const budget = asked === undefined ? context.resultBudget : undefined;
    // Read no further than the call can show: a page that stays open (a long poll, a slow server) still answers.
    const enough = offset + (budget !== undefined ? mostInPiece(budget, limit) : limit);
    // The HTML reducer (and its parser) is loaded only when a page is HTML.
    const sink = /html/i.test(type) ? (await import('./html-text.js')).htmlText() : plainText();
    let body: BodyText;
    try {
      body = await readBodyText(response.body, type, sink, { rawCap: FETCH_RAW_CAP, enough });
    } catch (error) {
      // A broken gzip body, or a connection cut mid-page.
      const { code, message } = causeOf(error);
      throw new ToolError(quoting`the page's body could not be read (${code !== undefined ? `${code}: ${message}` : message})`);
    }
    const resultOf = (window: { shown: string; cut: boolean }, cap: number): ToolResult => ({
      url: response.url || url.href,
      status: response.status,
      content_type: type.split(';')[0]?.trim() ?? type,
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(offset > 0 ? { offset } : {}),
      // Before the text: a result cut to its budget keeps its head, and the note must be in it.
      ...readingNote({ offset, limit: cap, shown: window.shown.length, total: body.text.length, textCut: window.cut, rawCut: body.rawCut }),
      text: window.shown,
    });
    return budget !== undefined ? budgetedResult(body.text, offset, limit, budget, resultOf) : resultOf(textWindow(body.text, offset, limit), limit);
  },
};
