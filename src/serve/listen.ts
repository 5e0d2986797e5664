import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { ArgoServer } from './app.js';

export interface Listening {
  url: string;
  port: number;
  /**
   * Stops accepting, lets answers finish for up to `graceMs` (or until `hurry` aborts), cuts the
   * rest, and closes every connection once their last bytes are out (at most FLUSH_MS later).
   */
  close: (graceMs: number, hurry?: AbortSignal) => Promise<void>;
}

const FLUSH_MS = 2000;

/** Binds the app; `port` 0 picks a free one (the URL says which). */
export async function listen(server: ArgoServer, host: string, port: number): Promise<Listening> {
  const http = createAdaptorServer({ fetch: server.app.fetch, hostname: host }) as Server;
  // Streams may stay quiet while a model loads: Node's default request timeout must not cut them.
  http.requestTimeout = 0;
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
        // are closed as they do, and whatever is left after FLUSH_MS is cut.
        const sweep = setInterval(() => http.closeIdleConnections(), 10);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))]);
        clearInterval(sweep);
        clearTimeout(timer);
        http.closeAllConnections();
        await closed;
      })()),
  };
}
