import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CONTROLS } from '../../src/output/terminal-text.js';
import { loadToolbox } from '../../src/tools/catalog.js';
import { UNAVAILABLE_REASON_CHARS } from '../../src/tools/foreign-line.js';
import { connectMcp, McpStartAborted } from '../../src/tools/mcp.js';
import type { McpConnection } from '../../src/tools/mcp.js';
import { ToolError } from '../../src/tools/types.js';
import { classifyThrown } from '../../src/agent/taxonomy.js';
import type { Tool } from '../../src/tools/types.js';
import { alive } from '../support/alive.js';
import { defined } from '../support/defined.js';
import { TEST_MCP_SERVER } from '../support/mcp.js';
import { waitFor } from '../support/wait.js';

const server = TEST_MCP_SERVER;
const context = { root: '/', home: '/', signal: new AbortController().signal };
/** A context of its own: the SDK leaves a listener on each call's signal, and one shared by many calls would warn. */
const ownContext = () => ({ ...context, signal: new AbortController().signal });

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

  it('embedded resources reach the model as their text; binary content as its type and size; a link as where it is and what', async () => {
    const connection = await connectMcp('calc', server);
    try {
      expect(await toolNamed(connection, 'attach')?.run({}, context)).toEqual({
        content: [
          'embedded notes',
          '[resource application/octet-stream, 4 bytes]',
          '[image image/png, 8 bytes]',
          '[resource_link {"uri":"file:///report.md","name":"report","description":"The weekly report","mimeType":"text/markdown"}]',
          '[resource_link {"uri":"https://example.test/data","name":"data"}]',
        ].join('\n'),
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

  it('a name the server lists twice: the first is kept, the second left out as listed twice by the server', async () => {
    const box = await loadToolbox(['mcp:calc'], { mcpServers: { calc: { ...server, env: { ARGO_TEST_MCP_TWICE: '1' } } } });
    try {
      expect(box.tools.map((tool) => [tool.name, tool.description])).toEqual([['add', 'Add two numbers']]);
      expect(box.unavailable).toEqual([{ name: 'mcp:calc/add', reason: 'listed twice by the server; left out' }]);
    } finally {
      await box.close();
    }
  });

  it("a tool whose outputSchema does not compile is left out, naming it and why; the server's other tools stay", async () => {
    const box = await loadToolbox(['mcp:calc'], { mcpServers: { calc: { ...server, env: { ARGO_TEST_MCP_BAD_OUTPUT: '1' } } } });
    try {
      expect(box.tools.map((tool) => tool.name)).toEqual(['add']);
      expect(box.unavailable).toEqual([{ name: 'mcp:calc/status', reason: 'its outputSchema is not usable JSON Schema (type must be JSONType or JSONType[]: strin); left out' }]);
      expect(await defined(box.tools[0]).run({ a: 2, b: 3 }, ownContext())).toEqual({ content: '5' });
    } finally {
      await box.close();
    }
  });

  it("a result checked against an outputSchema pattern that backtracks for minutes in JavaScript's engine is judged at once (RE2)", async () => {
    const box = await loadToolbox(['mcp:calc'], { mcpServers: { calc: { ...server, env: { ARGO_TEST_MCP_SLUG: '1' } } } });
    try {
      const slug = defined(box.tools.find((tool) => tool.name === 'slug'));
      // Its result does not match: the SDK refuses it, a failure of the call, and argo goes on.
      await expect(slug.run({}, ownContext())).rejects.toThrow(/output schema|does not match/i);
    } finally {
      await box.close();
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

  it.each([
    ['has no tools capability (resources alone): it is not asked for tools', 'capability', 'it does not have the tools capability'],
    ['lists no tools', 'empty', 'its list of tools is empty'],
  ])('a server that %s offers no tools: unavailable saying so, and stopped', async (_case, noTools, why) => {
    const starts = join(mkdtempSync(join(tmpdir(), 'argo-mcp-')), 'starts');
    const box = await loadToolbox(['mcp:docs', 'memo'], { mcpServers: { docs: { ...server, env: { ARGO_TEST_MCP_NO_TOOLS: noTools, ARGO_TEST_MCP_STARTS: starts } } } });
    expect(box.tools.map((tool) => tool.name)).toEqual(['memo']);
    expect(box.unavailable).toEqual([{ name: 'mcp:docs', reason: `MCP server "docs" offers no tools (${why})` }]);
    const pid = await waitFor(() => Number(readFileSync(starts, 'utf8').split('\n')[0]));
    await waitFor(() => expect(alive(pid)).toBe(false));
  });

  it('a server that does not start is unavailable with a reason', async () => {
    const box = await loadToolbox(['mcp:broken'], { mcpServers: { broken: { command: '/nonexistent/argo-mcp' } } });
    expect(box.tools).toEqual([]);
    expect(box.unavailable).toHaveLength(1);
    expect(box.unavailable[0]?.name).toBe('mcp:broken');
    expect(box.unavailable[0]?.reason).toMatch(/^MCP server "broken" did not start/);
  });
});

describe('MCP servers: what they list', () => {
  it('a tool whose inputSchema is {"type": "object"} alone is offered, with no parameters', async () => {
    const box = await loadToolbox(['mcp:calc'], { mcpServers: { calc: { ...server, env: { ARGO_TEST_MCP_BARE: '1' } } } });
    try {
      expect(box.unavailable).toEqual([]);
      const ping = defined(box.tools.find((tool) => tool.name === 'ping'));
      expect(ping.parameters).toEqual({ type: 'object', properties: {} });
      expect(await ping.run({}, ownContext())).toEqual({ content: 'pong' });
    } finally {
      await box.close();
    }
  });

  it.each([
    ['every tool of every page is kept', { ARGO_TEST_MCP_BARE: '1', ARGO_TEST_MCP_UNREADABLE: '1' }, ['add', 'lookup', 'ping'], []],
    ['a malformed tool on a later page is left out, the pages after it kept', { ARGO_TEST_MCP_MALFORMED: '1', ARGO_TEST_MCP_BARE: '1' }, ['add', 'ping'], ['loose']],
  ])('a list in pages (nextCursor): %s', async (_case, env, names, leftOut) => {
    const connection = await connectMcp('calc', { ...server, env: { ARGO_TEST_MCP_PAGES: '1', ...env } });
    try {
      expect(connection.tools.map((tool) => tool.name).sort()).toEqual(names);
      expect((connection.leftOut ?? []).map((gone) => gone.name)).toEqual(leftOut);
    } finally {
      await connection.close();
    }
  });

  it.each([
    ['names a page it gave already', 'loop', 'its list of tools names a page it has given already (the same nextCursor)'],
    ['goes on for ever', 'endless', 'its list of tools goes on past 100 pages'],
  ])('a list that %s is refused', async (_case, pages, reason) => {
    await expect(connectMcp('calc', { ...server, env: { ARGO_TEST_MCP_PAGES: pages } })).rejects.toThrow(new Error(`MCP server "calc" did not start (${reason})`));
  });
});

describe('MCP servers: how a start or a call that never ends is told', () => {
  it.each<[string, string, number | undefined, string]>([
    ['initialize', '1', undefined, '10 s'],
    ['its list of tools', 'list', undefined, '10 s'],
    ['initialize', '1', 2500, '2.5 s'],
    ['its list of tools', 'list', 30_000, '30 s'],
  ])("a server that never answers %s (startTimeoutMs %s): it did not answer within %s, not how Argo's own close then ended it", async (_what, hang, startTimeoutMs, within) => {
    const starts = join(mkdtempSync(join(tmpdir(), 'argo-mcp-')), 'starts');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const failed: { error?: unknown } = {};
      void connectMcp('slow', { ...server, env: { ARGO_TEST_MCP_HANG: hang, ARGO_TEST_MCP_STARTS: starts }, ...(startTimeoutMs !== undefined ? { startTimeoutMs } : {}) }).catch((error: unknown) => (failed.error = error));
      await waitFor(() => expect(existsSync(starts)).toBe(true));
      // Time moves past the start's wait, then past the grace its close gives it.
      await waitFor(async () => {
        await vi.advanceTimersByTimeAsync(1000);
        expect(failed.error).toBeDefined();
      });
      expect(failed.error).toMatchObject({ message: `MCP server "slow" did not start (it did not answer within ${within}; raise "mcpServers.slow.startTimeoutMs" in config.json if it is slow to start)` });
    } finally {
      vi.useRealTimers();
      for (const pid of existsSync(starts) ? readFileSync(starts, 'utf8').split('\n').filter(Boolean) : []) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
    }
  });

  it('a command that cannot be started fails at once, without the grace a running server is given to leave', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-mcp-'));
    const notExecutable = join(dir, 'server.sh');
    writeFileSync(notExecutable, '#!/bin/sh\n');
    chmodSync(notExecutable, 0o644);
    // No time passes: a wait for the grace would never end.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      for (const [command, code] of [[join(dir, 'missing'), 'ENOENT'], [notExecutable, 'EACCES'], [dir, 'EACCES']] as const) {
        await expect(connectMcp('broken', { command })).rejects.toThrow(new Error(`MCP server "broken" did not start (spawn ${command} ${code})`));
      }
      // A name from config.json with a line break and an escape sequence in it: still one clean line.
      await expect(connectMcp('broken', { command: `${dir}/two\nlines\u001b[31m` })).rejects.toThrow(new Error(`MCP server "broken" did not start (spawn ${dir}/two lines ENOENT)`));
    } finally {
      vi.useRealTimers();
    }
  });

  it('a call cut by Ctrl-C or a STOP (its signal aborted) was interrupted: not a failure of the tool', async () => {
    const waiting = join(mkdtempSync(join(tmpdir(), 'argo-mcp-')), 'waiting');
    const connection = await connectMcp('calc', { ...server, env: { ARGO_TEST_MCP_WAIT: waiting } });
    try {
      const aborted = new AbortController();
      const call = defined(toolNamed(connection, 'wait')).run({}, { ...context, signal: aborted.signal });
      await waitFor(() => expect(existsSync(waiting)).toBe(true));
      aborted.abort(new Error('interrupted by the user'));
      const error = await call.then(() => null, (thrown: unknown) => thrown);
      expect(error).toMatchObject({ message: 'the call was interrupted', retryable: false });
      expect(classifyThrown(error, [])).toEqual({ kind: 'failure', message: 'the call was interrupted', retryable: false, detail: null });
    } finally {
      await connection.close();
    }
  });
});

describe('MCP servers: a start cut by its signal', () => {
  it('a server that never answers initialize: the abort rejects at once as an AbortError, and its group is killed', async () => {
    const starts = join(mkdtempSync(join(tmpdir(), 'argo-mcp-')), 'starts');
    const controller = new AbortController();
    // A wait of 60 s: only the abort can end the start within the test's time.
    const start = connectMcp('slow', { ...server, env: { ARGO_TEST_MCP_HANG: '1', ARGO_TEST_MCP_STARTS: starts }, startTimeoutMs: 60_000 }, controller.signal);
    const pid = await waitFor(() => Number(readFileSync(starts, 'utf8').split('\n')[0]));
    const reason = new Error('interrupted by the user');
    controller.abort(reason);
    const error = await start.then(() => null, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(McpStartAborted);
    expect(error).toMatchObject({ name: 'AbortError', message: 'MCP server "slow" was not started: its start was interrupted', cause: reason });
    // It ignores SIGTERM: SIGKILL follows.
    await waitFor(() => expect(alive(pid)).toBe(false));
  });

  it('a signal aborted already: nothing is started', async () => {
    const starts = join(mkdtempSync(join(tmpdir(), 'argo-mcp-')), 'starts');
    const controller = new AbortController();
    controller.abort();
    await expect(connectMcp('calc', { ...server, env: { ARGO_TEST_MCP_STARTS: starts } }, controller.signal)).rejects.toBeInstanceOf(McpStartAborted);
    expect(existsSync(starts)).toBe(false);
  });

  it('a signal that aborts once the server has started changes nothing: it bounds the start alone', async () => {
    const controller = new AbortController();
    const connection = await connectMcp('calc', server, controller.signal);
    controller.abort();
    try {
      expect(await defined(toolNamed(connection, 'add')).run({ a: 1, b: 2 }, ownContext())).toEqual({ content: '3' });
    } finally {
      await connection.close();
    }
  });
});

describe('MCP servers: a message past the 10 MB Argo reads', () => {
  const limit = 'it sent a message over 10 MB, the most Argo reads';
  /** Its pid, once the server wrote it (it does so first with ARGO_TEST_MCP_HUGE). */
  const pidOf = (file: string): Promise<number> => waitFor(() => Number(readFileSync(file, 'utf8').split('\n')[0]));

  it.each([
    ['its list of tools', 'list'],
    ['11 MB on stdout with no line break', 'line'],
  ])('in %s: the server is stopped and did not start, naming the limit', async (_case, huge) => {
    const starts = join(mkdtempSync(join(tmpdir(), 'argo-mcp-')), 'starts');
    await expect(connectMcp('big', { ...server, env: { ARGO_TEST_MCP_HUGE: huge, ARGO_TEST_MCP_STARTS: starts } })).rejects.toThrow(new Error(`MCP server "big" did not start (${limit})`));
    const pid = await pidOf(starts);
    await waitFor(() => expect(alive(pid)).toBe(false));
  });

  it("in a call's result: the call fails for good naming the limit, and so does every later call; the server is stopped", async () => {
    const starts = join(mkdtempSync(join(tmpdir(), 'argo-mcp-')), 'starts');
    const connection = await connectMcp('big', { ...server, env: { ARGO_TEST_MCP_HUGE: 'call', ARGO_TEST_MCP_STARTS: starts } });
    const ended = vi.fn();
    connection.onClose?.(ended);
    try {
      const stopped = `MCP server "big" was stopped (${limit})`;
      const error = await defined(toolNamed(connection, 'huge')).run({}, ownContext()).then(() => null, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ToolError);
      expect(error).toMatchObject({ message: stopped, retryable: false });
      await expect(defined(toolNamed(connection, 'add')).run({ a: 1, b: 2 }, ownContext())).rejects.toThrow(stopped);
      expect(ended).toHaveBeenCalledTimes(1);
      const pid = await pidOf(starts);
      await waitFor(() => expect(alive(pid)).toBe(false));
    } finally {
      await connection.close();
    }
  });
});

describe("MCP servers: the secrets of a server's env are masked wherever it says them", () => {
  const secret = 'correct-horse-battery';
  const env = { DB_PASSWORD: secret };

  it.each([
    ['its stderr when it does not start', { ARGO_TEST_MCP_FAIL: '1', ARGO_TEST_MCP_FAIL_SAYS: `cannot log in with ${secret}: refused\n` }, /; exit code 3; it said: cannot log in with \*\*\*: refused\)$/],
    ['the last line of its stderr, cut short', { ARGO_TEST_MCP_FAIL: '1', ARGO_TEST_MCP_FAIL_SAYS: `${'x'.repeat(190)} ${secret}` }, /; exit code 3; it said: x+ \*\*\*\)$/],
  ])('in %s', async (_where, says, reason) => {
    const box = await loadToolbox(['mcp:db'], { mcpServers: { db: { ...server, env: { ...env, ...says } } } });
    expect(defined(box.unavailable[0]).reason).toMatch(reason);
    expect(JSON.stringify(box.unavailable)).not.toContain('horse');
  });

  it("in a tool's error result, an error a call throws (the log's error_detail), its stderr when it exits mid-run", async () => {
    const said = { ARGO_TEST_MCP_SHOUT_SAYS: `cannot log in with ${secret}`, ARGO_TEST_MCP_CRASH_SAYS: `lost ${secret}\n` };
    const connection = await connectMcp('db', { ...server, env: { ...env, ...said } });
    const thrower = await connectMcp('db', { ...server, env: { ...env, ARGO_TEST_MCP_RAW_ERROR: `no user for ${secret}` } });
    try {
      const refused = await defined(toolNamed(connection, 'shout')).run({ text: 'x', fail: true }, ownContext()).then(() => null, (thrown: unknown) => thrown);
      expect(classifyThrown(refused, [])).toMatchObject({ kind: 'failure', message: 'cannot log in with ***' });
      const thrown = await defined(toolNamed(thrower, 'add')).run({ a: 1, b: 2 }, ownContext()).then(() => null, (error: unknown) => error);
      expect(classifyThrown(thrown, [])).toMatchObject({ kind: 'failure', message: 'tool execution failed', detail: expect.stringContaining('no user for ***') as unknown });
      const crashed = await defined(toolNamed(connection, 'crash')).run({}, ownContext()).then(() => null, (error: unknown) => error);
      expect(crashed).toMatchObject({ message: 'MCP server "db" exited (exit code 7; it said: lost ***)' });
    } finally {
      await Promise.all([connection.close(), thrower.close()]);
    }
  });

  it('a value shorter than 4 characters, or under a name that says nothing secret, is kept', async () => {
    const kept = { DB_PASSWORD: 'abc', LOG_LEVEL: 'verbose-mode', ARGO_TEST_MCP_FAIL: '1', ARGO_TEST_MCP_FAIL_SAYS: 'abc verbose-mode\n' };
    const box = await loadToolbox(['mcp:db'], { mcpServers: { db: { ...server, env: kept } } });
    expect(defined(box.unavailable[0]).reason).toMatch(/; it said: abc verbose-mode\)$/);
  });
});

function toolNamed(connection: McpConnection, name: string): Tool | undefined {
  return connection.tools.find((tool) => tool.name === name);
}
