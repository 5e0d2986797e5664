// Argo when the machine runs short: a full disk, a file system that takes no more, an output nobody
// can write to. /dev/full (Linux) stands for a full disk wherever a path can be given: every write to it
// fails with ENOSPC, as one to a full file system does.
import { spawn, spawnSync } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { ARGO_BIN, logLines, runArgo, scrubbedEnv, tempHome } from '../support/run-argo.js';
import type { ArgoResult, RunOptions } from '../support/run-argo.js';
import { TEST_MCP_SERVER } from '../support/mcp.js';
import { ssePayloads, startServe } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';

const FULL = '/dev/full';
const hasFull = existsSync(FULL);

const ollama = await fakeOllamaPerFile();

afterEach(() => {
  ollama.setScenario(undefined);
});

const argo = (home: string, args: string[], extra: Partial<RunOptions> = {}) => runArgo(args, { home, host: ollama.url, env: { TZ: 'UTC' }, ...extra });

/** argo with standard output or standard error written to `path` (the other one read, as runArgo does). */
function argoWritingTo(stream: 'stdout' | 'stderr', path: string, home: string, args: string[], input?: string): Promise<ArgoResult> {
  const fd = openSync(path, 'w');
  const stdin = input === undefined ? 'ignore' : 'pipe';
  const stdio: ['ignore' | 'pipe', number | 'pipe', number | 'pipe'] = stream === 'stdout' ? [stdin, fd, 'pipe'] : [stdin, 'pipe', fd];
  const child = spawn(process.execPath, [ARGO_BIN, ...args], { env: scrubbedEnv({ home, host: ollama.url, env: { TZ: 'UTC' } }), stdio });
  closeSync(fd);
  if (input !== undefined) child.stdin?.end(input);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe.runIf(hasFull)('a full disk where a path is given (/dev/full)', () => {
  it('export -o onto it: one line saying the disk is full and what to do, exit 1, never "unexpected failure"', async () => {
    const home = tempHome();
    expect((await argo(home, ['a question to export'])).code).toBe(0);
    const result = await argo(home, ['export', '--format', 'sharegpt', '--all', '-o', FULL]);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(`argo: cannot use ${FULL}: no space left on the device; free some space on its disk (df -h shows which) and try again\n`);
  });
});

describe.runIf(hasFull)('standard output or error on a full disk (/dev/full)', () => {
  it('an answer written to it is cut short, said in one line, exit 1, and logged as interrupted (argo crashed, and the turn was lost)', async () => {
    const home = tempHome();
    // The stream waits after its first chunk: argo writes that text, fails, and must end the request itself.
    ollama.setScenario({ holdAfter: 1 });
    const result = await argoWritingTo('stdout', FULL, home, ['tell me a long story']);
    expect(result).toMatchObject({ code: 1, stderr: 'argo: standard output could not be written (a full disk?); the answer was cut short (logged as interrupted)\n' });
    expect(logLines(home)).toMatchObject([{ user_prompt: 'tell me a long story', status: 'interrupted', error: 'interrupted: standard output could not be written' }]);
  });

  it.each<[string, string[]]>([
    ['a question', ['-s', 'f2', 'tell me x']],
    ['an agent run', ['-s', 'f2', '-T', 'fs', 'tell me x']],
  ])('%s answered at once onto it: the same line and exit 1, and logged as interrupted (it was logged ok, its failure heard only after)', async (_case, args) => {
    const home = tempHome();
    ollama.options.models = [{ name: 'argo', capabilities: ['completion', 'tools'] }];
    try {
      const result = await argoWritingTo('stdout', FULL, home, args);
      expect(result).toMatchObject({ code: 1, stderr: 'argo: standard output could not be written (a full disk?); the answer was cut short (logged as interrupted)\n' });
      expect(logLines(home)).toMatchObject([{ user_prompt: 'tell me x', status: 'interrupted', error: 'interrupted: standard output could not be written' }]);
    } finally {
      ollama.options.models = undefined;
    }
  });

  it('argo chat answered at once onto it: one line, exit 1, the turn logged as interrupted and the chat ended', async () => {
    const home = tempHome();
    const result = await argoWritingTo('stdout', FULL, home, ['chat', '-s', 'c1'], 'tell me x\nsecond\n');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^argo: standard output could not be written \(a full disk\?\)/m);
    expect(logLines(home)).toMatchObject([{ user_prompt: 'tell me x', status: 'interrupted', error: 'interrupted: standard output could not be written' }]);
  });

  it.each<[string[]]>([[['logs']], [['logs', '--json']], [['sessions']], [['--help']]])('argo %j onto it: one line saying so, exit 1 (it ended 0, or crashed)', async (args) => {
    const home = tempHome();
    expect((await argo(home, ['a question to list'])).code).toBe(0);
    const result = await argoWritingTo('stdout', FULL, home, args);
    expect(result).toMatchObject({ code: 1, stderr: 'argo: cannot write standard output (no space left on the device); what it got is incomplete\n' });
  });

  it('argo chat with its answers going onto it: one line, exit 1 (it ended 141, the code of a reader that left)', async () => {
    const home = tempHome();
    // The stream waits after its first chunk: the chat's turn sees the failed write and ends the chat.
    ollama.setScenario({ holdAfter: 1 });
    const result = await argoWritingTo('stdout', FULL, home, ['chat', '-s', 'c1'], 'tell me a long story\nsecond\n');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^argo: standard output could not be written \(a full disk\?\)/m);
    expect(logLines(home)).toMatchObject([{ user_prompt: 'tell me a long story', status: 'interrupted' }]);
  });

  it('standard error on it: a line said while the answer is awaited (a retry) does not end argo, and the turn is logged (it was lost)', async () => {
    const home = tempHome();
    ollama.setScenario({ busy: 1 });
    const result = await argoWritingTo('stderr', FULL, home, ['-s', 'work', 'a question']);
    expect(result).toMatchObject({ code: 0, stdout: 'You said: a question\n' });
    expect(logLines(home)).toMatchObject([{ user_prompt: 'a question', status: 'ok' }]);
  });
});

describe('argo serve under too few file descriptors', () => {
  // Node keeps an import() that failed (EMFILE while 30 clients hold sockets) failed for the life of
  // the process: a turn that loaded its log writer then could never log again, nor be rescued. So a
  // turn loads no module of Argo's once the server listens; the start-up trace shows it.
  const TRACE = fileURLToPath(new URL('../support/trace-loads.mjs', import.meta.url));

  it('plain and Argo-mode turns, a new session and its replay, load nothing once it listens', async () => {
    const home = tempHome();
    const trace = join(home, 'loads.txt');
    const serve = await startServe({ home, host: ollama.url, env: { NODE_OPTIONS: `--import ${TRACE}`, ARGO_TRACE_LOADS: trace } });
    try {
      const loaded = (): string[] => readFileSync(trace, 'utf8').split('\n').filter((url) => url.includes('/dist/cli/'));
      const atStart = loaded();
      const ask = (body: object): Promise<Response> =>
        fetch(`${serve.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'argo', ...body }) });
      expect((await ask({ messages: [{ role: 'user', content: 'plain' }] })).status).toBe(200);
      expect((await ask({ messages: [{ role: 'user', content: 'first' }], argo: { session: 'work' } })).status).toBe(200);
      expect((await ask({ messages: [{ role: 'user', content: 'and then?' }], stream: true, argo: { session: 'work', replay: 'session' } })).status).toBe(200);
      await waitFor(() => expect(logLines(home)).toHaveLength(3));
      expect(loaded().filter((url) => !atStart.includes(url))).toEqual([]);
    } finally {
      await serve.stop();
    }
  });
});

describe('argo serve\'s tools under too few file descriptors', () => {
  // The same for server-side tools: what a tool loads on first use (the argument validator, globbing,
  // diffs, whole-file writes, the HTML reducer, the memo's schema, the history search, the MCP client)
  // is loaded as the server starts. Every built-in tool is called, and a command tool and an MCP
  // server's: a lazy import added to any of them fails this test until loadToolModules loads it.
  const TRACE = fileURLToPath(new URL('../support/trace-loads.mjs', import.meta.url));
  // fetch_url is offered only where the web answers: this makes its check pass offline too.
  const WEB = fileURLToPath(new URL('../support/web-reachable.mjs', import.meta.url));
  let pages: HttpServer;
  let pageUrl = '';

  beforeAll(async () => {
    // An HTML page, so fetch_url takes the path that loads the HTML reducer.
    pages = createHttpServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html><head><title>Birds</title></head><body><p>an egret</p></body></html>'));
    await new Promise<void>((listening) => pages.listen(0, '127.0.0.1', listening));
    pageUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}/birds.html`;
  });
  afterAll(async () => {
    await new Promise((closed) => pages.close(closed));
  });

  afterEach(() => {
    ollama.options.rounds = undefined;
    ollama.options.models = undefined;
  });

  it('a run calling every kind of tool, a command tool and an MCP server\'s included, loads nothing once it listens', async () => {
    ollama.options.models = [{ name: 'argo', capabilities: ['completion', 'tools'] }];
    const calls = [
      { function: { name: 'read_file', arguments: { path: 'notes.txt' } } },
      { function: { name: 'list_files', arguments: { pattern: '*.txt' } } },
      { function: { name: 'search_files', arguments: { pattern: 'heron' } } },
      { function: { name: 'write_file', arguments: { path: 'out.txt', content: 'written' } } },
      { function: { name: 'edit_file', arguments: { path: 'notes.txt', old: 'heron', new: 'egret' } } },
      { function: { name: 'run_command', arguments: { command: 'echo ran' } } },
      { function: { name: 'process', arguments: { operation: 'start', command: 'echo started' } } },
      { function: { name: 'fetch_url', arguments: { url: pageUrl } } },
      { function: { name: 'memo', arguments: { operation: 'set', key: 'bird', value: 'egret' } } },
      { function: { name: 'search_history', arguments: { query: 'heron' } } },
      { function: { name: 'greet', arguments: { who: 'egret' } } },
      { function: { name: 'add', arguments: { a: 2, b: 40 } } },
    ];
    const resultsIn = (body: { messages?: { role: string }[] }): boolean => (body.messages ?? []).some((message) => message.role === 'tool');
    ollama.options.rounds = (body) => (resultsIn(body) ? { reply: 'done' } : { toolCalls: calls });
    const greet = { description: 'greet someone', argv: ['echo', 'hello', '{who}'], parameters: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }, sideEffects: false };
    const home = tempHome({ mcpServers: { calc: TEST_MCP_SERVER }, commandTools: { greet } });
    const root = mkdtempSync(join(tmpdir(), 'argo-serve-root-'));
    writeFileSync(join(root, 'notes.txt'), 'the secret word is heron\n');
    const trace = join(home, 'loads.txt');
    const serve = await startServe({
      home,
      host: ollama.url,
      args: ['--root', root, '--allow-side-effects'],
      // Side effects need a key.
      env: { NODE_OPTIONS: `--import ${TRACE} --import ${WEB}`, ARGO_TRACE_LOADS: trace, ARGO_API_KEY: 'sk-loads' },
    });
    try {
      const loaded = (): string[] => readFileSync(trace, 'utf8').split('\n').filter((url) => url.includes('/dist/cli/'));
      const atStart = loaded();
      const response = await fetch(`${serve.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-loads' },
        body: JSON.stringify({ model: 'argo', stream: true, messages: [{ role: 'user', content: 'use them all' }], argo: { session: 'tools', tools: 'fs,edit,shell,web,memo,history,greet,mcp:calc' } }),
      });
      expect(response.status).toBe(200);
      const ended = ssePayloads(await response.text())
        .filter((data) => data.includes('"tool_status"'))
        .map((data) => (JSON.parse(data) as { tool_status: { name: string; status: string } }).tool_status)
        .filter((status) => status.status !== 'running');
      // Every call ran: the modules it needed were there, or it would have failed.
      expect(Object.fromEntries(ended.map(({ name, status }) => [name, status]))).toEqual(Object.fromEntries(calls.map(({ function: { name } }) => [name, 'success'])));
      await waitFor(() => expect(logLines(home)).toMatchObject([{ session: 'tools', status: 'ok', model_response: 'done' }]));
      expect(loaded().filter((url) => !atStart.includes(url))).toEqual([]);
    } finally {
      await serve.stop();
    }
  });
});

describe('argo started with too few file descriptors', () => {
  // Node opens the bundle's ~30 files at once as it loads argo. With a limit it starts under but argo's
  // files do not fit in, argo says so in one line (it printed Node's stack trace).
  const LIMIT = 30;
  const underLimit = (command: string, args: string[]) =>
    spawnSync('sh', ['-c', `ulimit -n ${LIMIT} && exec "$0" "$@"`, command, ...args], { encoding: 'utf8', env: scrubbedEnv({ home: tempHome() }) });
  const nodeStarts = process.platform !== 'win32' && underLimit(process.execPath, ['-e', '']).status === 0;

  it.runIf(nodeStarts)(`under ulimit -n ${LIMIT}: the version, or one line saying to raise the limit, never a stack trace`, () => {
    const result = underLimit(process.execPath, [ARGO_BIN, '--version']);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    if (result.status === 0) expect(result.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    else expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 1, stderr: 'argo: cannot start: too many open files; raise the limit on open files (ulimit -n) and try again\n' });
  });
});

// A real full file system, where one can be made (root, with mount): the kernel's own ENOSPC, which
// takes part of a write before refusing the rest. CI not running as root skips it; the faults above
// stand for it there.
describe.runIf(process.platform === 'linux' && process.getuid?.() === 0)('a data home on a file system that is full (a 256 KB tmpfs)', () => {
  const disk = { dir: '', mounted: false };
  beforeAll(() => {
    disk.dir = mkdtempSync(join(tmpdir(), 'argo-small-disk-'));
    disk.mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', disk.dir]).status === 0;
  });
  afterAll(() => {
    if (disk.mounted) spawnSync('umount', [disk.dir]);
    rmSync(disk.dir, { recursive: true, force: true });
  });

  it('a question: answered, the log left whole, the turn saved in a private temporary folder, and the line says the disk is full', async (context) => {
    // Root in a container may still be refused a mount.
    if (!disk.mounted) context.skip();
    const home = join(disk.dir, 'home');
    expect((await argo(home, ['a first question'])).code).toBe(0);
    const log = readdirSync(join(home, 'logs')).map((name) => join(home, 'logs', name));
    const before = log.map((file) => readFileSync(file));
    // Fill what is left, to the last block.
    const filler = join(disk.dir, 'filler');
    try {
      for (;;) writeFileSync(filler, Buffer.alloc(4096), { flag: 'a' });
    } catch {
      // ENOSPC: full.
    }
    const prompt = `a long question ${'x'.repeat(6000)}`;
    const result = await argo(home, [prompt]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(`You said: ${prompt}\n`);
    const saved = /the turn was saved to (\S+\.ndjson) — /.exec(result.stderr)?.[1] ?? '';
    expect(result.stderr).toMatch(/: the disk is full\); the turn was saved to .* — free some space on its disk \(df -h .* shows it\), then add the saved turn back/);
    expect(saved.startsWith(join(tmpdir(), 'argo-rescued-'))).toBe(true);
    expect(JSON.parse(readFileSync(saved, 'utf8'))).toMatchObject({ user_prompt: prompt, model_response: `You said: ${prompt}` });
    rmSync(dirname(saved), { recursive: true, force: true });
    expect(log.map((file) => readFileSync(file))).toEqual(before);
    expect(existsSync(join(home, 'rescued')) ? readdirSync(join(home, 'rescued')) : []).toEqual([]);
  });
});
