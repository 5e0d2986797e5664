import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { UsageError } from '../errors.js';

/** 127.0.0.0/8, ::1 and `localhost`: the only binds that may run without a key. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.startsWith('::ffff:127.') || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(bare);
  return false;
}

/**
 * The key in force, or null; throws when a non-loopback bind, or a server that lets tools have side
 * effects, has none. An empty key counts as none.
 */
export function requireKeyFor(host: string, key: string | undefined, sideEffects = false): string | null {
  const usable = key === undefined || key === '' ? null : key;
  if (usable === null && !isLoopback(host)) {
    throw new UsageError(
      `argo serve --host ${host} listens beyond this machine and needs an API key: set ARGO_API_KEY or "serve.apiKey" in config.json (or bind 127.0.0.1)`,
    );
  }
  // Loopback is every local user's: without a key any of them could run commands as this one.
  if (usable === null && sideEffects) {
    throw new UsageError(
      'argo serve --allow-side-effects needs an API key: without one any user of this machine can reach the server and run commands as you; set ARGO_API_KEY or "serve.apiKey" in config.json (or leave out --allow-side-effects)',
    );
  }
  return usable;
}

/**
 * `key` when a client can send it, else a usage error naming `where` (ARGO_API_KEY, config.json's
 * "serve.apiKey"), never the key. An Authorization header carries visible ASCII and spaces (RFC 9110;
 * other characters each client encodes its own way), and blanks at its ends are dropped as it is
 * read: a key breaking either rule could never be matched, so the server would refuse every client.
 */
export function checkApiKey(key: string, where: string): string {
  const fix = 'use letters, digits and punctuation, e.g. a key from "openssl rand -hex 24"';
  if (key.trim() === '') throw new UsageError(`${where} is blank, which no client can send: ${fix}, or leave it empty for no key`);
  // \p{C}: control and format characters (a line break pasted in, a zero-width space).
  if (/\p{C}/u.test(key)) throw new UsageError(`${where} contains a control character (a line break?), which an Authorization header cannot carry: ${fix}`);
  if (key.trim() !== key) throw new UsageError(`${where} starts or ends with a blank, which a client's Authorization header loses: ${fix}`);
  if (/[^\x20-\x7e]/.test(key)) throw new UsageError(`${where} contains a character beyond ASCII, which clients send in an Authorization header each their own way: ${fix}`);
  return key;
}

/** A name a browser sends only for this machine: loopback, `*.localhost` (RFC 6761), or the unspecified address. */
function isLocalName(hostname: string): boolean {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
  return isLoopback(bare) || bare.endsWith('.localhost') || bare === '0.0.0.0' || bare === '::';
}

/** `host[:port]` without its port; null when it is no host (a path, a user, spaces). */
function hostnameOf(authority: string): string | null {
  try {
    const url = new URL(`http://${authority}`);
    // `#` and `?` leave no trace in the parsed URL when nothing follows them: the raw text is checked.
    return url.username === '' && url.password === '' && url.pathname === '/' && !/[#?]/.test(authority) ? url.hostname : null;
  } catch {
    return null;
  }
}

/**
 * The schemes of pages that desktop apps show from their own files (Electron, Tauri, VS Code
 * webviews), as Ollama allows them by default (envconfig.AllowedOrigins): no web site can send one.
 */
const APP_SCHEMES = new Set(['app:', 'file:', 'tauri:', 'vscode-webview:', 'vscode-file:']);

/**
 * Whether an Origin is a page of this machine: http(s) on a local name (localhost:3000), or an app's
 * own page. Such a page may send requests (a keyless server answers them) and read the answers (CORS).
 */
export function isLocalOrigin(origin: string): boolean {
  const url = URL.canParse(origin) ? new URL(origin) : null;
  if (url === null) return false;
  if (APP_SCHEMES.has(url.protocol)) return true;
  return (url.protocol === 'http:' || url.protocol === 'https:') && isLocalName(url.hostname);
}

/**
 * What a keyless server refuses a request for: a Host not of this machine, an Origin of another site,
 * or the Origin `null` of a page with none of its own (a file opened in a browser, a sandboxed frame).
 */
export type BrowserRefusal = 'host' | 'origin' | 'opaque-origin';

/**
 * Why a server without a key refuses a request a web page may have made, or null. A page of another
 * site can reach a loopback server two ways: by a name of its own that resolves here (DNS
 * rebinding: the Host is that name), or by a request it need not read the answer of (a POST with
 * a text/plain body: its Origin is the site's). Programs send neither; a page on this machine is allowed.
 * `null` is refused too: any site's sandboxed frame sends it, as a local file does (Ollama refuses it as well).
 */
export function browserRefusal(host: string | undefined, origin: string | undefined): BrowserRefusal | null {
  if (host !== undefined) {
    const name = hostnameOf(host);
    if (name === null || !isLocalName(name)) return 'host';
  }
  if (origin === 'null') return 'opaque-origin';
  if (origin !== undefined && !isLocalOrigin(origin)) return 'origin';
  return null;
}

const BEARER = /^Bearer[ \t]+(.+)$/i;

/** Whether an Authorization header carries a bearer token at all (right or wrong). */
export function sentBearer(authorization: string | undefined): boolean {
  return BEARER.test(authorization?.trim() ?? '');
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Checks `Authorization: Bearer KEY`. Both sides are hashed first so the comparison takes the same
 * time whatever the length or content of the guess.
 */
export function keyChecker(key: string): (authorization: string | undefined) => boolean {
  const expected = digest(key);
  return (authorization) => {
    const given = BEARER.exec(authorization?.trim() ?? '')?.[1] ?? '';
    return timingSafeEqual(digest(given), expected);
  };
}
