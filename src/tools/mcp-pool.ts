// A process that answers many runs (argo serve, argo chat) keeps each MCP server it starts: a run
// that names `mcp:<name>` borrows the running server instead of starting its own and ending it afterwards.
import type { ConnectMcp } from './catalog.js';
import { connectMcpServer } from './catalog.js';
import type { McpConnection } from './mcp.js';

export interface McpPool {
  /** A shared connection: its `close` leaves the server running for the next run. */
  connect: ConnectMcp;
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

export function mcpPool(connect: ConnectMcp = connectMcpServer, options: PoolOptions = {}): McpPool {
  const live = new Map<string, Promise<McpConnection>>();
  let ended = false;
  const forget = (name: string, connection: Promise<McpConnection>): void => {
    if (live.get(name) === connection) live.delete(name);
  };
  return {
    connect: async (name, config) => {
      if (ended) return connect(name, config);
      let shared = live.get(name);
      if (shared === undefined) {
        const started = connect(name, config);
        shared = started;
        live.set(name, started);
        // A server that exited since is started afresh by the next run; one that failed to start too, unless failures are kept.
        started.then(
          (connection) => connection.onClose?.(() => forget(name, started)),
          () => {
            if (options.keepFailures !== true) forget(name, started);
          },
        );
      }
      const connection = await shared;
      return { tools: connection.tools, ...(connection.leftOut !== undefined ? { leftOut: connection.leftOut } : {}), close: () => Promise.resolve() };
    },
    close: async () => {
      ended = true;
      const all = [...live.values()];
      live.clear();
      await Promise.allSettled(all.map(async (connection) => (await connection).close()));
    },
  };
}
