import { STATUS_CODES, createServer, maxHeaderSize } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { RequestError, getRequestListener } from '@hono/node-server';
import type { ArgoServer } from './app.js';
import { ApiError } from './errors.js';

export interface Listening {
  url: string;
  port: number;
  /**
   * Stops accepting, lets answers finish for up to `graceMs` (or until `hurry` aborts), cuts the
   * rest, and closes every connection once their last bytes are out (at most `flushMs` later).
   */
  close: (graceMs: number, hurry?: AbortSignal) => Promise<void>;
}

export interface ListenOptions {
  /** How long close() waits for connections once the answers have ended. */
  flushMs?: number;
  /** A request's headers must arrive within this of its first byte (a new connection's, of its opening). */
  headersTimeoutMs?: number;
  /**
   * The whole request, body included, must arrive within this. Node stops timing a request once it
   * has arrived, so an answer (a stream quiet while a model loads) is never cut by it.
   */
  requestTimeoutMs?: number;
  /** A client that takes none of what waits for it for this long is taken to be gone, and cut. */
  stallMs?: number;
  /** Connections open at once (Node's server.maxConnections): one more is closed as it opens, and `log` hears of it. */
  maxConnections?: number;
  /** How often at most `log` hears how many connections were closed at the cap. */
  dropsSaidEveryMs?: number;
  /** The server's log, a line at a time. */
  log?: (line: string) => void;
}

export const TIMEOUTS = { flushMs: 2000, headersTimeoutMs: 10_000, requestTimeoutMs: 60_000, stallMs: 300_000, dropsSaidEveryMs: 10_000 };

/** Binds the app; `port` 0 picks a free one (the URL says which). */
export async function listen(server: ArgoServer, host: string, port: number, options: ListenOptions = {}): Promise<Listening> {
  const { flushMs, headersTimeoutMs, requestTimeoutMs, stallMs, dropsSaidEveryMs } = { ...TIMEOUTS, ...options };
  const onRequest = getRequestListener(server.app.fetch, { hostname: host, errorHandler: adapterError });
  const http = createServer(
    {
      // A client trickling its headers or body a byte at a time holds a connection only this long.
      headersTimeout: headersTimeoutMs,
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, Math.max(10, headersTimeoutMs / 4)),
      // Refused below instead, with a body: Node's own refusal is a bare 400.
      requireHostHeader: false,
    },
    (request, response) => {
      if (lacksHost(request)) refuse(response, missingHost());
      else {
        urlSpelledHost(request);
        void onRequest(request, response);
      }
    },
  );
  // A client sending `Expect: 100-continue` waits to be asked for its body: one refused from its
  // headers is answered (by the app, which logs it) without being asked, and Node then closes the
  // connection rather than read a body that may still come.
  http.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!lacksHost(request) && !server.refusesUnread(pathOf(request), (name) => headerOf(request, name))) response.writeContinue();
    http.emit('request', request, response);
  });
  const answering = closeOnlyUnanswering(http);
  answerClientErrors(http, answering, { headersTimeoutMs, requestTimeoutMs });
  cutStalledReaders(http, stallMs);
  if (options.maxConnections !== undefined) {
    http.maxConnections = options.maxConnections;
    sayDrops(http, options.maxConnections, dropsSaidEveryMs, options.log ?? (() => undefined));
  }
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  // Node writes an IPv4-mapped address dotted (::ffff:127.0.0.1); a URL, in hex.
  const shown = address.family === 'IPv6' ? `[${urlIpv6(address.address)}]` : address.address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${shown}:${address.port}`,
    port: address.port,
    close: (graceMs, hurry) =>
      (closing ??= (async () => {
        const closed = new Promise<void>((resolve) => http.close(() => resolve()));
        http.closeIdleConnections();
        await server.drain(graceMs, hurry);
        // Answers have ended; their last bytes may still be on the way. Connections that fall idle
        // are closed as they do, and whatever is left after flushMs is cut.
        const sweep = setInterval(() => http.closeIdleConnections(), 10);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, flushMs)))]);
        clearInterval(sweep);
        clearTimeout(timer);
        http.closeAllConnections();
        await closed;
      })()),
  };
}

/**
 * Makes `closeIdleConnections()` (which `http.close()` calls too) close exactly the connections with
 * no response still being written. Node's own closes one whose response has ended while its last
 * bytes still wait for a slow reader, and leaves one that has not sent a request yet (a client's
 * spare connection, opened after a request it gave up) until headersTimeout.
 */
function closeOnlyUnanswering(http: Server): (socket: Duplex) => boolean {
  // Each connection and its responses not yet written out (pipelined requests queue on one).
  const open = new Map<Duplex, Set<ServerResponse>>();
  http.on('connection', (socket: Socket) => {
    open.set(socket, new Set());
    socket.once('close', () => open.delete(socket));
  });
  http.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const responses = open.get(request.socket);
    responses?.add(response);
    // 'close' follows 'finish' (the last bytes handed to the system) or the connection's end.
    response.once('close', () => responses?.delete(response));
  });
  http.closeIdleConnections = () => {
    for (const [socket, responses] of open) if (responses.size === 0) socket.destroy();
  };
  // Whether a response has begun on the connection: nothing else may be written into it then.
  return (socket) => [...(open.get(socket) ?? [])].some((response) => response.headersSent);
}

/**
 * Cuts a connection whose client has taken none of what waits for it (its unsent bytes did not go
 * down) for `stallMs`: a client that never reads a stream would otherwise hold it, and the rest of
 * the answer, for ever. A quiet connection with nothing waiting (a model loading) is not looked at.
 * Cutting it is the client leaving: a turn still running ends as interrupted.
 */
function cutStalledReaders(http: Server, stallMs: number): void {
  const sockets = new Set<Socket>();
  // Per connection with bytes waiting: how many it had handed on when last seen, and since when.
  const progress = new Map<Socket, { sent: number; since: number }>();
  http.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      progress.delete(socket);
    });
  });
  const look = (): void => {
    const now = performance.now();
    for (const socket of sockets) {
      if (socket.writableLength === 0) {
        progress.delete(socket);
        continue;
      }
      // bytesWritten counts what is still queued too.
      const sent = socket.bytesWritten - socket.writableLength;
      const seen = progress.get(socket);
      if (seen?.sent !== sent) progress.set(socket, { sent, since: now });
      else if (now - seen.since >= stallMs) socket.destroy();
    }
  };
  const timer = setInterval(look, Math.min(1000, Math.max(10, stallMs / 4)));
  timer.unref();
  http.once('close', () => clearInterval(timer));
}

/**
 * Node closes a connection over the cap as it opens, before a byte of HTTP (no status can be sent):
 * the operator hears of it, the first at once, then a count at most every `everyMs`.
 */
function sayDrops(http: Server, max: number, everyMs: number, log: (line: string) => void): void {
  let dropped = 0;
  let quiet: NodeJS.Timeout | undefined;
  const dropsLine = (): string => `argo serve: ${dropped} connection(s) closed as they opened: ${max} were open (serve.maxConnections in config.json)`;
  const say = (): void => {
    if (dropped === 0) {
      quiet = undefined;
      return;
    }
    log(dropsLine());
    dropped = 0;
    quiet = setTimeout(say, everyMs);
    quiet.unref();
  };
  http.on('drop', () => {
    dropped++;
    if (quiet === undefined) say();
  });
  // A count still waiting for its quiet time is said at shutdown, not lost with the process.
  http.once('close', () => {
    clearTimeout(quiet);
    if (dropped > 0) log(dropsLine());
  });
}

/**
 * The refusals Node's HTTP parser makes before the app sees a request (a request it cannot parse,
 * headers over its limit, one that did not arrive in time), with the OpenAI error body every other
 * answer has instead of Node's bare status line.
 */
export function clientError(code: string | undefined, reason: string | undefined, limits: { headersTimeoutMs: number; requestTimeoutMs: number }): ApiError {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(
        408,
        `the request did not arrive in time: its headers must arrive within ${limits.headersTimeoutMs / 1000} s and the whole request within ${limits.requestTimeoutMs / 1000} s; send it at once`,
        'invalid_request_error',
        'request_timeout',
      );
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, `the request's headers (its URL included) are larger than ${maxHeaderSize} bytes; send a shorter URL or fewer headers`, 'invalid_request_error', 'headers_too_large');
    default:
      return new ApiError(400, `the request is not valid HTTP/1.1 (${reason ?? code ?? 'unreadable'}); send a well-formed request`, 'invalid_request_error', 'invalid_http');
  }
}

/** The request's path, as the app routes it; '' for a target that is no path. */
function pathOf(request: IncomingMessage): string {
  try {
    return new URL(request.url ?? '', 'http://localhost').pathname;
  } catch {
    return '';
  }
}

/** A header as the app reads it: repeated ones joined. */
function headerOf(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * An IPv6 address as a URL spells it (lower case, zeros compressed, an IPv4 tail in hex: ::ffff:7f00:1);
 * as given when it is no address a URL takes (a zone such as %eth0).
 */
export function urlIpv6(address: string): string {
  try {
    return new URL(`http://[${address}]`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

/**
 * A Host naming an IPv6 address ([::ffff:127.0.0.1]:8080) rewritten in the URL spelling: the adapter
 * refuses a Host whose spelling differs from the URL it makes of it, though both name one address.
 */
function urlSpelledHost(request: IncomingMessage): void {
  const host = request.headers.host;
  if (host?.startsWith('[') === true) request.headers.host = host.replace(/^\[([^\]]*)\]/, (_literal, address: string) => `[${urlIpv6(address)}]`);
}

/** HTTP/1.1 requires a Host (RFC 9112, 3.2); HTTP/1.0 had none, and is served without one, as by Node. */
function lacksHost(request: IncomingMessage): boolean {
  return request.httpVersionMajor === 1 && request.httpVersionMinor === 1 && request.headers.host === undefined;
}

function missingHost(): ApiError {
  return new ApiError(400, 'the request has no Host header, which HTTP/1.1 requires; send one (HTTP clients and curl send it by themselves)', 'invalid_request_error', 'invalid_http');
}

/** A refusal before the app, as Node makes its own: the connection closed after it. */
function refuse(response: ServerResponse, refusal: ApiError): void {
  const body = JSON.stringify(refusal.body());
  response.writeHead(refusal.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' }).end(body);
}

/** A request the adapter cannot make a web Request of (a backslash in its path, a Host that is no host name). */
function adapterError(error: unknown): Response {
  const refusal = error instanceof RequestError ? clientError(undefined, error.message, TIMEOUTS) : new ApiError(500, 'unexpected server failure', 'server_error', 'internal_error');
  return Response.json(refusal.body(), { status: refusal.status });
}

function answerClientErrors(http: Server, answering: (socket: Duplex) => boolean, limits: { headersTimeoutMs: number; requestTimeoutMs: number }): void {
  http.on('clientError', (error: Error & { code?: string; reason?: string }, socket: Duplex) => {
    // As Node does it: nothing is written into a response already begun, or to a client gone.
    if (socket.writable && !answering(socket) && error.code !== 'ECONNRESET') {
      const refusal = clientError(error.code, error.reason, limits);
      const body = JSON.stringify(refusal.body());
      socket.write(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    }
    socket.destroy();
  });
}
