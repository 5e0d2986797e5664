// MCP servers end to end: the built bin/argo against the Ollama stand-in and a real MCP server over
// stdio (test/support/mcp-server.mjs): what is left running when argo is stopped at any moment.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { alive } from '../support/alive.js';
import type { FakeToolCall } from '../support/fake-ollama.js';
import { scriptedOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { TEST_MCP_SERVER } from '../support/mcp.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { startServe } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';

const { ollama, play } = await scriptedOllamaPerFile();

/** Servers a test started that ignore SIGTERM: never left running after it, whatever it found. */
const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    if (!alive(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  }
});

const call = (name: string, args: Record<string, unknown>): FakeToolCall => ({ function: { name, arguments: args } });

function argo(args: string[], home: string, extra: Partial<Parameters<typeof runArgo>[1]> = {}) {
  return runArgo(args, { home, host: ollama.url, ...extra });
}

/** The pids a file of the test server holds (one a line), once it holds `count`; each kept for afterEach. */
async function pidsIn(file: string, count = 1): Promise<number[]> {
  const pids = await waitFor(() => {
    const found = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((line) => line !== '').map(Number) : [];
    expect(found.length).toBeGreaterThanOrEqual(count);
    return found;
  });
  started.push(...pids);
  return pids;
}

const scratch = (): string => mkdtempSync(join(tmpdir(), 'argo-mcp-e2e-'));

describe('MCP servers: nothing is left running however argo ends', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s while a server is still starting (it never answers): argo exits %i at once and the server is gone', async (signal, code) => {
    const starts = join(scratch(), 'starts');
    const home = tempHome({ mcpServers: { hang: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_HANG: '1', ARGO_TEST_MCP_STARTS: starts } } } });
    const result = await argo(['-T', 'mcp:hang', 'hi'], home, {
      onSpawn: (child) => void pidsIn(starts).then(() => child.kill(signal)),
    });
    expect(result.code).toBe(code);
    const [pid = 0] = await pidsIn(starts);
    await waitFor(() => expect(alive(pid)).toBe(false));
    expect(ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(0);
  });

  it('a second Ctrl-C while a server that ignores its closed input is given its grace to leave: the server is gone', async () => {
    const dir = scratch();
    const waiting = join(dir, 'waiting');
    const home = tempHome({ mcpServers: { calc: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_STAYS: '1', ARGO_TEST_MCP_WAIT: waiting } } } });
    play.rounds = [{ calls: [call('wait', {})] }, { reply: 'never' }];
    let closing = false;
    const result = await argo(['-T', 'mcp:calc', 'wait'], home, {
      onSpawn: (child) => void pidsIn(waiting).then(() => child.kill('SIGINT')),
      // The turn has ended and said so: argo is closing the server, which stays.
      onStderr: (child, text) => {
        if (closing || !text.includes('(logged as interrupted)')) return;
        closing = true;
        child.kill('SIGINT');
      },
    });
    expect(result.code).toBe(130);
    const [pid = 0] = await pidsIn(waiting);
    await waitFor(() => expect(alive(pid)).toBe(false));
  });
});

describe("MCP servers: the secrets of a server's env", () => {
  const secret = 'correct-horse';

  it('a server that echoes one as it fails to start: masked in the note, the log and argo tools', async () => {
    const home = tempHome({ mcpServers: { db: { ...TEST_MCP_SERVER, env: { DB_PASSWORD: secret, ARGO_TEST_MCP_FAIL: '1', ARGO_TEST_MCP_FAIL_SAYS: `login with ${secret} refused\n` } } } });
    play.rounds = [{ reply: 'fine' }];
    const result = await argo(['-T', 'mcp:db,memo', 'hi'], home);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^argo: tool mcp:db is unavailable \(MCP server "db" did not start \(.*; exit code 3; it said: login with \*\*\* refused\)\); going on without it\n$/);
    const listed = await argo(['tools', '--json'], home);
    expect(listed.stdout).toContain('it said: login with *** refused');
    expect(`${result.stderr}${listed.stdout}${JSON.stringify(logLines(home))}`).not.toContain(secret);
  });

  it("a tool's error and a call's raw error that echo one: masked on the terminal and in the log, error_detail too", async () => {
    const env = { API_TOKEN: secret, ARGO_TEST_MCP_SHOUT_SAYS: `token ${secret} is expired` };
    const home = tempHome({ mcpServers: { gh: { ...TEST_MCP_SERVER, env }, raw: { ...TEST_MCP_SERVER, env: { API_TOKEN: secret, ARGO_TEST_MCP_RAW_ERROR: `no account for ${secret}` } } } });
    play.rounds = [{ calls: [call('shout', { text: 'hi', fail: true })] }, { reply: 'Expired.' }];
    const refused = await argo(['-T', 'mcp:gh', '--yes', 'shout hi'], home);
    expect(refused.stderr).toContain('argo: tool shout failed: token *** is expired\n');
    play.rounds = [{ calls: [call('add', { a: 1, b: 2 })] }, { reply: 'No.' }];
    play.next = 0;
    const thrown = await argo(['-T', 'mcp:raw', 'add 1 and 2'], home);
    expect(thrown.stderr).toContain('argo: tool add failed: tool execution failed\n');
    const calls = logLines(home).map((line) => (line.tool_calls as { error?: string; error_detail?: string }[])[0]);
    expect(calls).toMatchObject([{ error: 'token *** is expired' }, { error: 'tool execution failed', error_detail: expect.stringContaining('no account for ***') as unknown }]);
    expect(`${refused.stderr}${thrown.stderr}${JSON.stringify(logLines(home))}`).not.toContain(secret);
  });
});

describe('MCP servers: a call cut short', () => {
  it('Ctrl-C during a call: the call was interrupted, not a failure of the tool', async () => {
    const waiting = join(scratch(), 'waiting');
    const home = tempHome({ mcpServers: { calc: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_WAIT: waiting } } } });
    play.rounds = [{ calls: [call('wait', {})] }, { reply: 'never' }];
    const result = await argo(['-T', 'mcp:calc', 'wait'], home, { onSpawn: (child) => void pidsIn(waiting).then(() => child.kill('SIGINT')) });
    expect(result.code).toBe(130);
    expect(logLines(home)[0]).toMatchObject({ status: 'interrupted', tool_calls: [{ name: 'wait', outcome: 'failure', error: 'the call was interrupted' }] });
    expect(logLines(home)[0]?.tool_calls).not.toMatchObject([{ error_detail: expect.anything() as unknown }]);
  });
});

describe('MCP servers: a STOP, Ctrl-C or SIGTERM while they start', () => {
  const hanging = (starts: string) => ({ mcpServers: { hang: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_HANG: '1', ARGO_TEST_MCP_STARTS: starts } } } });

  it('STOP set already: the run ends stopped at once, logged as stopped, and no server is started', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome(hanging(starts));
    writeFileSync(join(home, 'STOP'), '');
    const result = await argo(['-T', 'mcp:hang', 'hi'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^argo: stopped by the STOP signal; .* \(logged as stopped\)\n$/);
    // Its tools are the server's to list: not known, as it was not started to ask.
    expect(logLines(home)).toMatchObject([{ status: 'stopped', tools: [] }]);
    expect(existsSync(join(home, 'tool-definitions'))).toBe(false);
    expect(existsSync(starts)).toBe(false);
    expect(ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(0);
  });

  it('STOP set while a server starts: the start is cut, the run ends stopped, the server is gone', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome(hanging(starts));
    const result = await argo(['-T', 'mcp:hang', 'hi'], home, { onSpawn: () => void pidsIn(starts).then(() => writeFileSync(join(home, 'STOP'), '')) });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^argo: stopped by the STOP signal; .* \(logged as stopped\)\n$/);
    const [pid = 0] = await pidsIn(starts);
    await waitFor(() => expect(alive(pid)).toBe(false));
  });

  it.each([
    ['SIGINT', 130, 'argo: interrupted (logged as interrupted)\n', 'interrupted by the user'],
    ['SIGTERM', 143, 'argo: terminated (SIGTERM) (logged as interrupted)\n', 'interrupted by SIGTERM'],
  ] as const)('%s while a one-liner starts its servers: it ends at once (%i), logged as interrupted with its prompt, the model never asked', async (signal, code, stderr, error) => {
    const starts = join(scratch(), 'starts');
    const home = tempHome(hanging(starts));
    const asked = ollama.requests.filter((request) => request.path === '/api/chat').length;
    const result = await argo(['-T', 'mcp:hang', 'my prompt'], home, { onSpawn: (child) => void pidsIn(starts).then(() => child.kill(signal)) });
    expect(result).toMatchObject({ code, stderr });
    expect(logLines(home)).toMatchObject([{ status: 'interrupted', user_prompt: 'my prompt', error }]);
    expect(ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(asked);
    const [pid = 0] = await pidsIn(starts);
    await waitFor(() => expect(alive(pid)).toBe(false));
  });

  it('two SIGHUPs at once while a one-liner starts its servers (a terminal closing): the second does not lose the turn', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome(hanging(starts));
    const hangUpTwice = (child: ChildProcess): void => void pidsIn(starts).then(() => child.kill('SIGHUP') && child.kill('SIGHUP'));
    const result = await argo(['-T', 'mcp:hang', 'my prompt'], home, { onSpawn: hangUpTwice });
    expect(result).toMatchObject({ code: 129, stderr: 'argo: hung up (SIGHUP) (logged as interrupted)\n' });
    expect(logLines(home)).toMatchObject([{ status: 'interrupted', user_prompt: 'my prompt' }]);
  });

  it('SIGINT while --explain starts its servers: it ends at once (130), nothing explained or logged', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome(hanging(starts));
    const result = await argo(['-T', 'mcp:hang', '--explain', 'my prompt'], home, { onSpawn: (child) => void pidsIn(starts).then(() => child.kill('SIGINT')) });
    expect(result).toMatchObject({ code: 130, stdout: '', stderr: 'argo: interrupted\n' });
    expect(logLines(home)).toEqual([]);
    const [pid = 0] = await pidsIn(starts);
    await waitFor(() => expect(alive(pid)).toBe(false));
  });

  it('SIGTERM while a chat starts its servers: it ends at once (143), the server gone', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome(hanging(starts));
    const result = await argo(['chat', '-T', 'mcp:hang'], home, { stdin: 'hello\n', onSpawn: (child) => void pidsIn(starts).then(() => child.kill('SIGTERM')) });
    expect(result).toMatchObject({ code: 143, stderr: 'argo: terminated (SIGTERM)\n' });
    const [pid = 0] = await pidsIn(starts);
    await waitFor(() => expect(alive(pid)).toBe(false));
    expect(logLines(home)).toEqual([]);
  });

  it('argo serve with STOP set: a request with MCP tools is answered 503 at once, and no server is started', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome(hanging(starts));
    const serve = await startServe({ home, host: ollama.url, args: ['--root', scratch()] });
    try {
      writeFileSync(join(home, 'STOP'), '');
      const body = { model: 'argo', messages: [{ role: 'user', content: 'go' }], argo: { tools: 'mcp:hang' } };
      const began = Date.now();
      const response = await fetch(`${serve.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await response.text();
      expect(response.status).toBe(503);
      // Not the server's 15 s start timeout, nor any wait on it.
      expect(Date.now() - began).toBeLessThan(5_000);
      expect(existsSync(starts)).toBe(false);
      await waitFor(() => expect(logLines(home)).toMatchObject([{ status: 'stopped' }]));
      expect(serve.stderr()).not.toMatch(/\n +at /);
    } finally {
      await serve.stop();
    }
  });

  it('a name no MCP server offers is refused as the chat starts (exit 2), before any message is sent', async () => {
    const home = tempHome({ mcpServers: { calc: TEST_MCP_SERVER } });
    const result = await argo(['chat', '-T', 'mcp:calc,zzz'], home, { stdin: 'one\ntwo\n' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^argo: --tools: unknown toolset or tool "zzz"; .*no MCP server \(calc\) offers it either\n$/);
    expect(logLines(home)).toEqual([]);
  });
});

describe('argo tools: a name a server lists twice', () => {
  it("is in its toolset's tools once; the second definition is listed as left out", async () => {
    const home = tempHome({ mcpServers: { s: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_TWICE: '1' } } } });
    const result = await argo(['tools', '--json'], home);
    expect(result.code).toBe(0);
    const listing = JSON.parse(result.stdout) as { toolsets: { name: string; tools: string[] }[]; tools: { name: string; available: boolean }[] };
    const tools = listing.toolsets.find((set) => set.name === 'mcp:s')?.tools ?? [];
    expect(tools.filter((name) => name === 'add')).toEqual(['add']);
    expect(listing.tools.filter((tool) => tool.name === 'mcp:s/add')).toMatchObject([{ available: false }]);
  });
});

describe('MCP servers: a -name that names nothing', () => {
  it.each([
    // argv → what stderr says
    [['--explain', '-T', 'mcp:calc,-shuot', 'hi'], 'argo: --tools: unknown toolset or tool "shuot"; '],
    [['--explain', '-T', 'mcp:calc,-mcp:calc/shuot', 'hi'], 'argo: --tools: "-mcp:calc/shuot" takes away nothing: MCP server "calc" offers no tool "shuot"'],
    [['--explain', '-T', 'fs,-zzz', 'hi'], 'the run starts no MCP server that could offer it'],
  ])('%j is a usage error once the servers have listed their tools (exit 2); the server is gone', async (args, message) => {
    const starts = join(scratch(), 'starts');
    const home = tempHome({ mcpServers: { calc: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_STARTS: starts } } } });
    const result = await argo(args, home);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    if (args.includes('mcp:calc,-shuot')) expect(result.stderr).toContain("the run's MCP servers (calc) do not offer it either");
    for (const pid of existsSync(starts) ? await pidsIn(starts) : []) await waitFor(() => expect(alive(pid)).toBe(false));
  });

  it('-NAME of a tool the server offers takes it away (--explain)', async () => {
    const home = tempHome({ mcpServers: { calc: TEST_MCP_SERVER } });
    const result = await argo(['--explain', '--json', '-T', 'mcp:calc,-shout', 'hi'], home);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"excluded"');
    expect(result.stdout).toContain('"shout"');
  });
});

describe('MCP servers in a chat', () => {
  it('each server starts once and serves every message; a server that did not start is told of once, and logged with each turn', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome({ mcpServers: { calc: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_STARTS: starts } }, broken: { command: '/nonexistent/argo-mcp' } } });
    play.rounds = [{ calls: [call('add', { a: 1, b: 2 })] }, { reply: 'It is 3.' }, { calls: [call('add', { a: 2, b: 2 })] }, { reply: 'It is 4.' }];
    const result = await argo(['chat', '-T', 'mcp:calc,mcp:broken', '-q'], home, { stdin: 'add 1 and 2\nadd 2 and 2\n' });
    expect(result).toMatchObject({ code: 0, stdout: 'It is 3.\nIt is 4.\n' });
    expect(result.stderr).toBe('argo: tool mcp:broken is unavailable (MCP server "broken" did not start (spawn /nonexistent/argo-mcp ENOENT)); going on without it\n');
    expect(await pidsIn(starts)).toHaveLength(1);
    expect(logLines(home).map((line) => [line.tools, line.tools_unavailable])).toEqual([
      [['add', 'attach', 'crash', 'shout'], [{ name: 'mcp:broken', reason: 'MCP server "broken" did not start (spawn /nonexistent/argo-mcp ENOENT)' }]],
      [['add', 'attach', 'crash', 'shout'], [{ name: 'mcp:broken', reason: 'MCP server "broken" did not start (spawn /nonexistent/argo-mcp ENOENT)' }]],
    ]);
  });
});

describe('MCP servers: a message past the 10 MB Argo reads', () => {
  const stopped = 'MCP server "big" was stopped (it sent a message over 10 MB, the most Argo reads)';

  it('a result of 12 MB: the call fails naming the limit, the turn ends and is logged, no stack trace; the server is gone', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome({ mcpServers: { big: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_HUGE: 'call', ARGO_TEST_MCP_STARTS: starts } } } });
    play.rounds = [{ calls: [call('huge', {})] }, { reply: 'never' }];
    const result = await argo(['-T', 'mcp:big', 'go'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`argo: tool huge failed: ${stopped}\n`);
    expect(result.stderr).not.toMatch(/ReadBuffer|\n +at /);
    expect(logLines(home)).toMatchObject([{ status: 'tool_failures', tool_calls: [{ name: 'huge', outcome: 'failure', error: stopped }] }]);
    const [pid = 0] = await pidsIn(starts);
    await waitFor(() => expect(alive(pid)).toBe(false));
  });

  it('argo serve stays up: the request gets its answer, the next request starts the server afresh', async () => {
    const starts = join(scratch(), 'starts');
    const home = tempHome({ mcpServers: { big: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_HUGE: 'call', ARGO_TEST_MCP_STARTS: starts } } } });
    const serve = await startServe({ home, host: ollama.url, args: ['--root', scratch()] });
    try {
      const ask = async (): Promise<number> => {
        play.rounds = [{ calls: [call('huge', {})] }, { reply: 'It failed.' }];
        play.next = 0;
        const body = { model: 'argo', messages: [{ role: 'user', content: 'go' }], argo: { tools: 'mcp:big' } };
        const response = await fetch(`${serve.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        await response.text();
        return response.status;
      };
      expect(await ask()).toBe(200);
      expect(await ask()).toBe(200);
      expect(await pidsIn(starts, 2)).toHaveLength(2);
      expect(serve.child.exitCode).toBeNull();
      expect(serve.stderr()).not.toMatch(/ReadBuffer|\n +at /);
    } finally {
      await serve.stop();
    }
  });
});

describe('MCP servers: a process a server left holding its pipes', () => {
  // The process lives 60 s, three times the test's timeout: argo must not wait for it.
  it.each([
    ['exits during a call', { calls: [call('crash', {})] }, 'MCP server "calc" exited (exit code 7)', {}],
    ['fails as it starts', { reply: 'Fine.' }, 'MCP server "calc" did not start (MCP error -32000: Connection closed; exit code 3; it said: cannot open the database)', { ARGO_TEST_MCP_FAIL: '1' }],
  ])('a server that %s: argo ends with its answer, not when that process does', async (_case, round, said, env) => {
    const orphans = join(scratch(), 'orphans');
    const home = tempHome({ mcpServers: { calc: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_ORPHAN: orphans, ...env } } } });
    play.rounds = [round, { reply: 'Fine.' }];
    const result = await argo(['-T', 'mcp:calc', 'go'], home);
    expect(result.stderr).toContain(said);
    const [orphan = 0] = await pidsIn(orphans);
    // Still there: it held the pipes while argo ended.
    expect(alive(orphan)).toBe(true);
  });
});
