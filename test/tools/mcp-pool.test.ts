import { describe, expect, it, vi } from 'vitest';
import { McpStartAborted } from '../../src/tools/mcp.js';
import type { McpConnection, McpServerConfig } from '../../src/tools/mcp.js';
import { mcpPool } from '../../src/tools/mcp-pool.js';
import type { Tool } from '../../src/tools/types.js';

/** A stand-in for starting an MCP server: counts starts, and lets a test end a server as if it exited. */
function fakeServers() {
  const started: string[] = [];
  const closed: string[] = [];
  const exits = new Map<string, () => void>();
  const connect = vi.fn((name: string): Promise<McpConnection> => {
    if (name === 'broken') return Promise.reject(new Error(`MCP server "${name}" did not start`));
    started.push(name);
    const listeners: (() => void)[] = [];
    const end = (): void => {
      for (const listener of listeners.splice(0)) listener();
    };
    exits.set(name, end);
    const tool: Tool = { name: `${name}_tool`, description: '', parameters: { type: 'object', properties: {} }, sideEffects: false, run: () => Promise.resolve({}) };
    return Promise.resolve({
      tools: [tool],
      close: () => {
        closed.push(name);
        end();
        return Promise.resolve();
      },
      onClose: (listener: () => void) => listeners.push(listener),
    });
  });
  return { connect, started, closed, exit: (name: string) => exits.get(name)?.() };
}

describe('mcpPool', () => {
  it('starts a server once for runs one after another and at once; a run closing it leaves it running', async () => {
    const servers = fakeServers();
    const pool = mcpPool(servers.connect);
    const first = await pool.connect('calc', { command: 'x' });
    await first.close();
    const [second, third] = await Promise.all([pool.connect('calc', { command: 'x' }), pool.connect('calc', { command: 'x' })]);
    expect(servers.started).toEqual(['calc']);
    expect(servers.closed).toEqual([]);
    expect([second.tools, third.tools]).toEqual([first.tools, first.tools]);
    await pool.connect('other', { command: 'y' });
    expect(servers.started).toEqual(['calc', 'other']);
  });

  it('starts a server again after it exited, and does not keep a failed start', async () => {
    const servers = fakeServers();
    const pool = mcpPool(servers.connect);
    await pool.connect('calc', { command: 'x' });
    servers.exit('calc');
    await pool.connect('calc', { command: 'x' });
    expect(servers.started).toEqual(['calc', 'calc']);
    await expect(pool.connect('broken', { command: 'z' })).rejects.toThrow('did not start');
    await expect(pool.connect('broken', { command: 'z' })).rejects.toThrow('did not start');
    expect(servers.connect.mock.calls.filter(([name]) => name === 'broken')).toHaveLength(2);
  });

  it('with keepFailures (a chat), a server that did not start is not started again; one that exited is', async () => {
    const servers = fakeServers();
    const pool = mcpPool(servers.connect, { keepFailures: true });
    await expect(pool.connect('broken', { command: 'z' })).rejects.toThrow('did not start');
    await expect(pool.connect('broken', { command: 'z' })).rejects.toThrow('did not start');
    expect(servers.connect.mock.calls.filter(([name]) => name === 'broken')).toHaveLength(1);
    await pool.connect('calc', { command: 'x' });
    servers.exit('calc');
    await pool.connect('calc', { command: 'x' });
    expect(servers.started).toEqual(['calc', 'calc']);
    await pool.close();
  });

  it('close ends every server it started; a run after that gets a server of its own', async () => {
    const servers = fakeServers();
    const pool = mcpPool(servers.connect);
    await Promise.all([pool.connect('calc', { command: 'x' }), pool.connect('other', { command: 'y' })]);
    await pool.close();
    expect(servers.closed.sort()).toEqual(['calc', 'other']);
    const late = await pool.connect('calc', { command: 'x' });
    await late.close();
    expect(servers.closed).toHaveLength(3);
  });

  describe('a start cut by its signal', () => {
    /** Starts that end only when told to, or when their signal aborts. */
    function heldServers() {
      const pending: ((connection: McpConnection) => void)[] = [];
      const connect = vi.fn(
        (name: string, _config: McpServerConfig, signal?: AbortSignal): Promise<McpConnection> =>
          new Promise((resolve, reject) => {
            signal?.addEventListener('abort', () => reject(new McpStartAborted(name, signal)), { once: true });
            pending.push(resolve);
          }),
      );
      const tool: Tool = { name: 'tool', description: '', parameters: { type: 'object', properties: {} }, sideEffects: false, run: () => Promise.resolve({}) };
      const finish = (): void => {
        for (const resolve of pending.splice(0)) resolve({ tools: [tool], close: () => Promise.resolve() });
      };
      return { connect, finish };
    }

    it.each([false, true])('is not kept (keepFailures %s): the next run starts the server afresh', async (keepFailures) => {
      const servers = heldServers();
      const pool = mcpPool(servers.connect, { keepFailures });
      const controller = new AbortController();
      const cut = pool.connect('calc', { command: 'x' }, controller.signal);
      controller.abort();
      await expect(cut).rejects.toBeInstanceOf(McpStartAborted);
      const next = pool.connect('calc', { command: 'x' });
      servers.finish();
      expect((await next).tools.map((tool) => tool.name)).toEqual(['tool']);
      expect(servers.connect).toHaveBeenCalledTimes(2);
    });

    it("a run waiting on another's start that was cut starts the server itself; one whose own signal aborts stops waiting, the start going on", async () => {
      const servers = heldServers();
      const pool = mcpPool(servers.connect);
      const first = new AbortController();
      const second = new AbortController();
      const starter = pool.connect('calc', { command: 'x' }, first.signal);
      const waiter = pool.connect('calc', { command: 'x' });
      const impatient = pool.connect('calc', { command: 'x' }, second.signal);
      first.abort();
      await expect(starter).rejects.toBeInstanceOf(McpStartAborted);
      // The waiter has started its own by now (a second start), which the impatient run waits on too.
      await vi.waitFor(() => expect(servers.connect).toHaveBeenCalledTimes(2));
      second.abort();
      await expect(impatient).rejects.toBeInstanceOf(McpStartAborted);
      servers.finish();
      expect((await waiter).tools.map((tool) => tool.name)).toEqual(['tool']);
      expect(servers.connect).toHaveBeenCalledTimes(2);
      await pool.close();
    });
  });
});
