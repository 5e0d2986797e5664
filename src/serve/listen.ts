import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { ArgoServer } from './app.js';

export interface Listening {
  url: string;
  port: number;
  /**
   * Stops accepting, lets answers finish for up to `graceMs` (or until `hurry` aborts), cuts the
   * rest, and closes every connection once their last bytes are out (at most `flushMs` later).
   */
  close: (graceMs: number, hurry?: AbortSignal) => Promise<void>;
}

const FLUSH_MS = 2000;

/** Binds the app; `port` 0 picks a free one (the URL says which). */
export async function listen(server: ArgoServer, host: string, port: number, flushMs = FLUSH_MS): Promise<Listening> {
  const http = createAdaptorServer({ fetch: server.app.fetch, hostname: host }) as Server;
  // Streams may stay quiet while a model loads: Node's default request timeout must not cut them.
  http.requestTimeout = 0;
  closeOnlyUnanswering(http);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
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
function closeOnlyUnanswering(http: Server): void {
  // Each connection and how many of its responses are not yet written out (pipelined requests queue on one).
  const open = new Map<Socket, number>();
  http.on('connection', (socket: Socket) => {
    open.set(socket, 0);
    socket.once('close', () => open.delete(socket));
  });
  http.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const count = (by: number): void => {
      const now = open.get(socket);
      if (now !== undefined) open.set(socket, now + by);
    };
    count(1);
    // 'close' follows 'finish' (the last bytes handed to the system) or the connection's end.
    response.once('close', () => count(-1));
  });
  http.closeIdleConnections = () => {
    for (const [socket, responses] of open) if (responses === 0) socket.destroy();
  };
}
