// The shell, history and command tools at their limits, end to end: the built bin/argo against the
// Ollama stand-in scripting tool calls, with config.json's settings and mistakes.
import { existsSync, mkdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeToolCall, RequestBody } from '../support/fake-ollama.js';
import { scriptedOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const { ollama, play } = await scriptedOllamaPerFile();

const call = (name: string, args: Record<string, unknown>): FakeToolCall => ({ function: { name, arguments: args } });

function chatBodies(): RequestBody[] {
  return ollama.requests.filter((request) => request.path === '/api/chat').map((request) => JSON.parse(request.body) as RequestBody);
}

function root(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'argo-tool-limits-')));
  mkdirSync(join(dir, 'sub'));
  return dir;
}

function argo(args: string[], home: string) {
  return runArgo(args, { home, host: ollama.url });
}

describe('toolTimeouts.run_command', () => {
  it("is the command's own timeout, and what the model is told", async () => {
    const home = tempHome({ toolTimeouts: { run_command: 1500 } });
    play.rounds = [{ calls: [call('run_command', { command: 'sleep 5; echo hi' })] }, { reply: 'never' }];
    const result = await argo(['-T', 'run_command', '--yes', '--root', root(), 'wait'], home);
    expect(result.stderr).toContain('argo: tool run_command failed: the command timed out after 1.5 s and was killed; to allow longer, set "toolTimeouts": {"run_command": 3000} in config.json\n');
    const offered = (chatBodies()[0]?.tools ?? []) as { function: { description: string; parameters: { properties: { timeout: Record<string, unknown> } } } }[];
    expect(offered[0]?.function.description).toContain('Times out after 1.5 s, or sooner when timeout asks.');
    expect(offered[0]?.function.parameters.properties.timeout).toMatchObject({ maximum: 1 });
    expect(logLines(home)[0]?.tool_calls).toEqual([expect.objectContaining({ outcome: 'failure', error: expect.stringContaining('timed out after 1.5 s and was killed') as unknown })]);
  });
});

describe('search_history', () => {
  it('an empty session filters nothing; an unknown one is a failure the run goes on after, naming the sessions there are', async () => {
    const home = tempHome();
    play.rounds = [{ reply: 'noted' }];
    expect(await argo(['-s', 'work', 'remember go'], home)).toMatchObject({ code: 0 });
    play.next = 0;
    play.rounds = [{ calls: [call('search_history', { query: 'go', session: 'wrok' })] }, { calls: [call('search_history', { query: 'go', session: '' })] }, { reply: 'found' }];
    const result = await argo(['-T', 'history', 'what did I say?'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'found\n' });
    expect(result.stderr).toContain('argo: tool search_history failed: there is no session named "wrok"; sessions: work\n');
    const calls = (logLines(home)[1]?.tool_calls ?? []) as Record<string, unknown>[];
    expect(calls.map(({ outcome }) => outcome)).toEqual(['failure', 'success']);
    expect(JSON.stringify(calls[1]?.result)).toContain('remember go');
  });
});

describe('commands that cannot start', () => {
  it('argv[0] naming a folder is unavailable as a folder, not as missing', async () => {
    const dir = root();
    const result = await runArgo(['tools'], { home: tempHome({ commandTools: { build: { description: 'Build', argv: ['./sub'] } } }), host: ollama.url, cwd: dir });
    expect(result.stdout).toMatch(new RegExp(`^ {2}build +unavailable: "\\./sub" is a folder, not a program \\(a relative path is from the root, ${dir}\\)$`, 'm'));
  });

  it('a program not there ("requires": [] skips the check) stops the run at once, naming it', async () => {
    const home = tempHome({ commandTools: { build: { description: 'Build', argv: ['no-such-binary-q'], requires: [], sideEffects: false } } });
    play.rounds = [{ calls: [call('build', {})] }, { reply: 'never' }];
    const result = await argo(['-T', 'build', 'build it'], home);
    expect(result.code).toBe(1);
    const said = 'the command "no-such-binary-q" did not start (spawn ENOENT): it is not there, or the interpreter its #! line names is not; fix commandTools."build".argv in config.json';
    expect(result.stderr).toContain(`argo: tool build failed: ${said}\n`);
    expect(result.stderr).toContain(`argo: tool build failed and retrying cannot help (${said}); `);
    expect(chatBodies()).toHaveLength(1);
  });

  it('a NUL byte in a command makes the call invalid: the model is asked again, and nothing runs', async () => {
    const home = tempHome();
    const dir = root();
    play.rounds = [{ calls: [call('run_command', { command: `echo a\u0000b > ${join(dir, 'ran')}` })] }, { calls: [call('run_command', { command: 'echo ab' })] }, { reply: 'done' }];
    const result = await argo(['-T', 'shell', '--yes', '--root', dir, 'say ab'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'done\n' });
    expect(result.stderr).toContain('argo: the model\'s response was invalid (run_command: "command" contains a NUL byte, which no command can hold; give it without one); asking again (1 of 3)\n');
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    expect(chatBodies()).toHaveLength(3);
  });
});

describe('toolsets with a name in the wrong list', () => {
  it.each<[string, Record<string, unknown>, string]>([
    // case, toolsets → the usage error (exit 2)
    ['a toolset in "tools"', { mine: { tools: ['fs'] } }, 'argo: toolset "mine" lists "fs" in "tools", but it is a toolset; move it to the toolset\'s "includes"\n'],
    ['a tool in "includes"', { mine: { includes: ['read_file'] } }, 'argo: toolset "mine" includes "read_file", which is a tool, not a toolset; move it to the toolset\'s "tools"\n'],
  ])('%s is a usage error naming the fix', async (_case, toolsets, message) => {
    const result = await argo(['-T', 'mine', 'hi'], tempHome({ toolsets }));
    expect(result).toMatchObject({ code: 2, stderr: message });
  });

  it('argo tools names every broken toolset on its exit line', async () => {
    const result = await argo(['tools'], tempHome({ toolsets: { as_set: { includes: ['read_file'] }, as_tool: { tools: ['fs'] } } }));
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^ {2}as_tool +fs {2}\(config\) {2}unusable: toolset "as_tool" lists "fs" in "tools", but it is a toolset; move it to the toolset's "includes"$/m);
    expect(result.stderr).toBe(
      'argo: config.json: toolsets."as_set": toolset "as_set" includes "read_file", which is a tool, not a toolset; move it to the toolset\'s "tools"; also unusable: "as_tool" (each is listed with its problem)\n',
    );
  });
});
