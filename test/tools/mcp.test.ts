import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadToolbox } from '../../src/tools/catalog.js';
import { connectMcp } from '../../src/tools/mcp.js';
import { TEST_MCP_SERVER } from '../support/mcp.js';

const server = TEST_MCP_SERVER;
const context = { root: '/', home: '/', signal: new AbortController().signal };

describe('MCP servers through the SDK client', () => {
  it('lists the server\'s tools with their schemas and calls them', async () => {
    const connection = await connectMcp('calc', server);
    try {
      const byName = new Map(connection.tools.map((tool) => [tool.name, tool]));
      expect([...byName.keys()].sort()).toEqual(['add', 'shout']);
      const add = byName.get('add');
      expect(add?.parameters).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
      expect(add?.sideEffects).toBe(false);
      expect(byName.get('shout')?.sideEffects).toBe(true);
      expect(await add?.run({ a: 2, b: 40 }, context)).toEqual({ content: '42' });
      await expect(byName.get('shout')?.run({ text: 'x', fail: true }, context)).rejects.toThrow('shouting is not allowed');
    } finally {
      await connection.close();
    }
  });

  it('says when the connection ends, whether closed or because the server exited', async () => {
    const starts = join(mkdtempSync(join(tmpdir(), 'argo-mcp-')), 'starts');
    const withPid = { ...server, env: { ARGO_TEST_MCP_STARTS: starts } };
    const exited = await connectMcp('calc', withPid);
    const ended = vi.fn();
    exited.onClose?.(ended);
    await vi.waitFor(() => expect(readFileSync(starts, 'utf8')).toMatch(/^\d+\n$/));
    process.kill(Number(readFileSync(starts, 'utf8')), 'SIGTERM');
    await vi.waitFor(() => expect(ended).toHaveBeenCalledTimes(1));

    const closed = await connectMcp('calc', server);
    const closedEnded = vi.fn();
    closed.onClose?.(closedEnded);
    await closed.close();
    expect(closedEnded).toHaveBeenCalledTimes(1);
    const late = vi.fn();
    closed.onClose?.(late);
    expect(late).toHaveBeenCalledTimes(1);
  });

  it('a server that does not start is unavailable with a reason', async () => {
    const box = await loadToolbox(['mcp:broken'], { mcpServers: { broken: { command: '/nonexistent/argo-mcp' } } });
    expect(box.tools).toEqual([]);
    expect(box.unavailable).toHaveLength(1);
    expect(box.unavailable[0]?.name).toBe('mcp:broken');
    expect(box.unavailable[0]?.reason).toMatch(/^MCP server "broken" did not start/);
  });
});
