import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CONTROLS } from '../../src/output/terminal-text.js';
import { loadToolbox } from '../../src/tools/catalog.js';
import { UNAVAILABLE_REASON_CHARS } from '../../src/tools/foreign-line.js';
import { connectMcp } from '../../src/tools/mcp.js';
import type { McpConnection } from '../../src/tools/mcp.js';
import { ToolError } from '../../src/tools/types.js';
import { classifyThrown } from '../../src/agent/taxonomy.js';
import type { Tool } from '../../src/tools/types.js';
import { defined } from '../support/defined.js';
import { TEST_MCP_SERVER } from '../support/mcp.js';
import { waitFor } from '../support/wait.js';

const server = TEST_MCP_SERVER;
const context = { root: '/', home: '/', signal: new AbortController().signal };

describe('MCP servers through the SDK client', () => {
  it('lists the server\'s tools with their schemas and calls them', async () => {
    const connection = await connectMcp('calc', server);
    try {
      const byName = new Map(connection.tools.map((tool) => [tool.name, tool]));
      expect([...byName.keys()].sort()).toEqual(['add', 'attach', 'crash', 'shout']);
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
    await waitFor(() => expect(readFileSync(starts, 'utf8')).toMatch(/^\d+\n$/));
    process.kill(Number(readFileSync(starts, 'utf8')), 'SIGTERM');
    await waitFor(() => expect(ended).toHaveBeenCalledTimes(1));

    const closed = await connectMcp('calc', server);
    const closedEnded = vi.fn();
    closed.onClose?.(closedEnded);
    await closed.close();
    expect(closedEnded).toHaveBeenCalledTimes(1);
    const late = vi.fn();
    closed.onClose?.(late);
    expect(late).toHaveBeenCalledTimes(1);
  });

  it("the SDK's own request timeout never ends a call: the loop's signal bounds it", async () => {
    const connection = await connectMcp('calc', server);
    try {
      const add = defined(toolNamed(connection, 'add'));
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      const pending = add.run({ a: 1, b: 1 }, context);
      // Past the SDK's default of 60 s: a configured timeout of 90 s must still be the loop's to apply.
      vi.advanceTimersByTime(120_000);
      vi.useRealTimers();
      expect(await pending).toEqual({ content: '2' });
      const aborted = new AbortController();
      const stopped = add.run({ a: 1, b: 1 }, { ...context, signal: aborted.signal });
      aborted.abort();
      await expect(stopped).rejects.toThrow();
    } finally {
      vi.useRealTimers();
      await connection.close();
    }
  });

  it('embedded resources reach the model as their text; binary content as its type and size', async () => {
    const connection = await connectMcp('calc', server);
    try {
      expect(await toolNamed(connection, 'attach')?.run({}, context)).toEqual({
        content: 'embedded notes\n[resource application/octet-stream, 4 bytes]\n[image image/png, 8 bytes]',
      });
    } finally {
      await connection.close();
    }
  });

  it('a server that exits mid-run fails each later call as permanent, saying it exited and how', async () => {
    const connection = await connectMcp('calc', server);
    try {
      const crash = toolNamed(connection, 'crash')?.run({}, context);
      await expect(crash).rejects.toSatisfy((error: unknown) => error instanceof ToolError && !error.retryable);
      await expect(crash).rejects.toThrow('MCP server "calc" exited (exit code 7)');
      const after = toolNamed(connection, 'add')?.run({ a: 1, b: 1 }, context);
      await expect(after).rejects.toSatisfy((error: unknown) => error instanceof ToolError && !error.retryable && error.message.startsWith('MCP server "calc" exited'));
    } finally {
      await connection.close();
    }
  });

  it("a server that exits mid-run with a secret at the end of its stderr: masked, Argo's closing bracket kept, through the loop's failure too", async () => {
    const connection = await connectMcp('calc', { ...server, env: { ARGO_TEST_MCP_CRASH_SAYS: 'Bad credentials for GITHUB_TOKEN=hunter2\n' } });
    try {
      const crash = defined(toolNamed(connection, 'crash')).run({}, context);
      const error = await crash.then(() => null, (thrown: unknown) => thrown);
      const said = 'MCP server "calc" exited (exit code 7; it said: Bad credentials for GITHUB_TOKEN=***)';
      expect(error).toMatchObject({ message: said, masked: true });
      expect(classifyThrown(error, [])).toMatchObject({ kind: 'failure', message: said });
    } finally {
      await connection.close();
    }
  });

  it("one malformed tool is left out with its reason; the server's other tools stay", async () => {
    const connection = await connectMcp('calc', { ...server, env: { ARGO_TEST_MCP_MALFORMED: '1' } });
    try {
      expect(connection.tools.map((tool) => tool.name)).toEqual(['add']);
      expect(connection.leftOut).toEqual([{ name: 'loose', reason: expect.stringMatching(/^its definition does not follow MCP: inputSchema\.type: .*"object"/) as unknown }]);
      expect(await toolNamed(connection, 'add')?.run({ a: 2, b: 3 }, context)).toEqual({ content: '5' });
    } finally {
      await connection.close();
    }
  });

  it("a tool whose schema follows MCP but not Ollama's types is left out, naming where; the server's other tools stay", async () => {
    const box = await loadToolbox(['mcp:calc'], { mcpServers: { calc: { ...server, env: { ARGO_TEST_MCP_UNREADABLE: '1' } } } });
    try {
      expect(box.tools.map((tool) => tool.name)).toEqual(['add']);
      expect(box.unavailable).toEqual([{ name: 'mcp:calc/lookup', reason: 'Ollama cannot read its input schema: properties.key.required must be a list of names; left out' }]);
      expect(box.leftOut?.get('mcp:calc/lookup')).toMatchObject({ toolset: 'mcp:calc', tool: { name: 'lookup' } });
    } finally {
      await box.close();
    }
  });

  it('a command tool whose schema is JSON Schema but not what Ollama reads is unavailable, the rest of the run kept', async () => {
    const box = await loadToolbox(['shout', 'memo'], {
      commandTools: { shout: { description: 'Say it', parameters: { type: 'object', properties: { text: true } }, argv: ['echo', '{text}'] } },
    });
    expect(box.tools.map((tool) => tool.name)).toEqual(['memo']);
    expect(box.unavailable).toEqual([{ name: 'shout', reason: 'Ollama cannot read its input schema: properties.text must be an object (Ollama cannot read a true or false schema there)' }]);
  });

  it.each([
    ['exits at start: its exit code and last stderr line, cleaned', { ...server, env: { ARGO_TEST_MCP_FAIL: '1' } }, /^MCP server "calc" did not start \(.*Connection closed; exit code 3; it said: cannot open the database\)$/],
    ['a cwd that is not a directory is named, not the command', { ...server, cwd: '/nonexistent/argo-dir' }, /^MCP server "calc" did not start \(its cwd "\/nonexistent\/argo-dir" is not a directory\)$/],
  ])('a server that does not start: %s', async (_name, config, reason) => {
    await expect(connectMcp('calc', config)).rejects.toThrow(reason);
  });

  it("a server's stderr in a reason is one line, its secrets masked, its controls gone, its length capped", async () => {
    const token = `ghp_${'Q'.repeat(36)}`;
    const says = `\u001b]0;owned\u0007login failed\r\nGITHUB_TOKEN=${token} rejected (${'detail '.repeat(200)})\n`;
    const box = await loadToolbox(['mcp:gh'], { mcpServers: { gh: { ...server, env: { ARGO_TEST_MCP_FAIL: '1', ARGO_TEST_MCP_FAIL_SAYS: says } } } });
    const reason = box.unavailable[0]?.reason ?? '';
    // The stderr line is cut at 200 characters, after its token was masked.
    expect(reason).toMatch(/^MCP server "gh" did not start \(.*; exit code 3; it said: GITHUB_TOKEN=\*\*\* rejected \(detail detail [a-z ]*…\)$/);
    expect(reason.length).toBeLessThanOrEqual(UNAVAILABLE_REASON_CHARS);
    expect(reason).not.toContain(token.slice(0, 8));
    expect(reason).not.toMatch(new RegExp(CONTROLS.source, 'u'));
  });

  it.each([
    ['ends its stderr', 'Bad credentials for GITHUB_TOKEN=hunter2\n', 'it said: Bad credentials for GITHUB_TOKEN=***)'],
    ['ends a line it did not finish', 'Bad credentials for GITHUB_TOKEN=hunter2', 'it said: Bad credentials for GITHUB_TOKEN=***)'],
    ['holds a bracket of its own', 'GITHUB_TOKEN=(hunter2)\n', 'it said: GITHUB_TOKEN=***)'],
  ])("a secret that %s is masked before Argo wraps it: Argo's closing bracket is kept, in the reason and in what names it", async (_name, says, end) => {
    const config = { mcpServers: { gh: { ...server, env: { ARGO_TEST_MCP_FAIL: '1', ARGO_TEST_MCP_FAIL_SAYS: says } } } };
    const reason = defined((await loadToolbox(['mcp:gh'], config)).unavailable[0]).reason;
    expect(reason).toMatch(/^MCP server "gh" did not start \(.*; exit code 3; /);
    expect(reason.endsWith(end)).toBe(true);
    expect(reason).not.toContain('hunter2');
    // A tool asked by name that no server offers: the failed start quoted in brackets of its own.
    const unknown = defined((await loadToolbox(['nosuch'], config, { keepUnknown: true })).unavailable.find((gone) => gone.name === 'nosuch')).reason;
    expect(unknown).toBe(`no toolset, built-in tool or MCP server (gh) has it; some MCP servers did not start (${reason})`);
  });

  it('a server that does not start is unavailable with a reason', async () => {
    const box = await loadToolbox(['mcp:broken'], { mcpServers: { broken: { command: '/nonexistent/argo-mcp' } } });
    expect(box.tools).toEqual([]);
    expect(box.unavailable).toHaveLength(1);
    expect(box.unavailable[0]?.name).toBe('mcp:broken');
    expect(box.unavailable[0]?.reason).toMatch(/^MCP server "broken" did not start/);
  });
});

function toolNamed(connection: McpConnection, name: string): Tool | undefined {
  return connection.tools.find((tool) => tool.name === name);
}
