// A process that answers many runs (argo serve, argo chat) keeps each MCP server it starts: a run
// that names `mcp:<name>` borrows the running server instead of starting its own and ending it afterwards.
import { connectMcp, McpStartAborted } from './mcp.js';
import type { McpConnection, McpServerConfig } from './mcp.js';

/** Starts an MCP server; `signal` cuts the start (rejecting with McpStartAborted). */
export type StartMcp = (name: string, config: McpServerConfig, signal?: AbortSignal) => Promise<McpConnection>;

export interface McpPool {
  /** A shared connection: its `close` leaves the server running for the next run. */
  connect: StartMcp;
  /** Ends every server the pool started; later runs get servers of their own. */
  close: () => Promise<void>;
}

export interface PoolOptions {
  /**
   * A server that did not start stays failed for the pool's life (a chat: not waited on again at
   * each message); by default the next run starts it afresh (a server's next request).
   */
  keepFailures?: boolean;
}

export function mcpPool(connect: StartMcp = connectMcp, options: PoolOptions = {}): McpPool {
  const live = new Map<string, Promise<McpConnection>>();
  let ended = false;
  const forget = (name: string, connection: Promise<McpConnection>): void => {
    if (live.get(name) === connection) live.delete(name);
  };
  return {
    connect: async (name, config, signal) => {
      if (ended) return connect(name, config, signal);
      for (;;) {
        let shared = live.get(name);
        if (shared === undefined) {
          const started = connect(name, config, signal);
          shared = started;
          live.set(name, started);
          // A server that exited since is started afresh by the next run; one that failed to start
          // too, unless failures are kept; one whose start was cut always (it did not fail).
          started.then(
            (connection) => connection.onClose?.(() => forget(name, started)),
            (error: unknown) => {
              if (options.keepFailures !== true || error instanceof McpStartAborted) forget(name, started);
            },
          );
        }
        try {
          const connection = await until(shared, name, signal);
          return { tools: connection.tools, ...(connection.leftOut !== undefined ? { leftOut: connection.leftOut } : {}), close: () => Promise.resolve() };
        } catch (error) {
          // Another run's start, cut by that run's signal: this run starts the server itself.
          if (error instanceof McpStartAborted && signal?.aborted !== true) continue;
          throw error;
        }
      }
    },
    close: async () => {
      ended = true;
      const all = [...live.values()];
      live.clear();
      await Promise.allSettled(all.map(async (connection) => (await connection).close()));
    },
  };
}

/** A shared start, waited on until it settles or `signal` (this run's) aborts: the start goes on for the others. */
function until(start: Promise<McpConnection>, name: string, signal: AbortSignal | undefined): Promise<McpConnection> {
  if (signal === undefined) return start;
  if (signal.aborted) return Promise.reject(new McpStartAborted(name, signal));
  return new Promise((resolve, reject) => {
    const cut = (): void => reject(new McpStartAborted(name, signal));
    signal.addEventListener('abort', cut, { once: true });
    start.then(resolve, reject).finally(() => signal.removeEventListener('abort', cut));
  });
}
