// The built-in tools as the catalog offers them (code loaded at the first call) against the tools
// their modules make: the same definitions, the same answers, and the process tool's handles
// killed by the run's close only when a call made some.
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/catalog.js';
import { editFileTool, writeFileTool } from '../../src/tools/edit.js';
import { listFilesTool, readFileTool, searchFilesTool } from '../../src/tools/fs.js';
import { processTool, runCommandTool } from '../../src/tools/shell.js';
import { fetchUrlTool } from '../../src/tools/web.js';
import { asksFirst } from '../../src/tools/types.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { alive } from '../support/alive.js';
import { defined } from '../support/defined.js';
import { waitFor } from '../support/wait.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-builtins-')));
writeFileSync(join(root, 'a.txt'), 'one\ntwo\n');
const home = mkdtempSync(join(tmpdir(), 'argo-builtins-home-'));
const context = (): ToolContext => ({ root, home, signal: new AbortController().signal });
const offered = (name: string): Tool => defined(builtinTools().find((tool) => tool.name === name));

/** What the model is told and what is asked before a call: everything but the code. */
function described(tool: Tool): Record<string, unknown> {
  const { name, description, parameters, sideEffects, ownStore, timeoutMs, resultBudget } = tool;
  return { name, description, parameters, sideEffects, ownStore, timeoutMs, resultBudget, check: tool.check !== undefined, preview: tool.preview !== undefined, refuse: tool.refuse !== undefined };
}

describe('the built-in tools the catalog offers', () => {
  it.each<[string, Tool]>([
    ['read_file', readFileTool],
    ['list_files', listFilesTool],
    ['search_files', searchFilesTool],
    ['write_file', writeFileTool],
    ['edit_file', editFileTool],
    ['run_command', runCommandTool],
    ['process', processTool()],
    ['fetch_url', fetchUrlTool],
  ])('%s is described as its module makes it', (name, made) => {
    expect(described(offered(name))).toEqual(described(made));
  });

  it.each<[string, boolean]>([
    // process operation, whether it asks "Allow?" first: looking at the run's own processes changes nothing
    ['start', true],
    ['kill', true],
    ['status', false],
    ['read_output', false],
    ['list', false],
    ['restart', true],
  ])('process %s asks first: %s, as offered and as its module makes it', (operation, asks) => {
    expect([asksFirst(offered('process'), { operation }), asksFirst(processTool(), { operation })]).toEqual([asks, asks]);
    expect(asksFirst(offered('process'))).toBe(true);
  });

  it.each<[string, Tool, Record<string, unknown>, string]>([
    // tool, as its module makes it, arguments, a piece of the answer
    ['read_file', readFileTool, { path: 'a.txt' }, 'two'],
    ['list_files', listFilesTool, { pattern: '*.txt' }, 'a.txt'],
    ['search_files', searchFilesTool, { pattern: 'two' }, 'two'],
    ['run_command', runCommandTool, { command: 'cat a.txt' }, 'one\\ntwo'],
  ])('%s answers as its module does', async (name, made, args, piece) => {
    const answer = await offered(name).run(args, context());
    expect(answer).toEqual(await made.run(args, context()));
    expect(JSON.stringify(answer)).toContain(piece);
  });

  it.each<[string, Record<string, unknown>]>([
    // tool, arguments: the preview is the diff its module shows
    ['write_file', { path: 'a.txt', content: 'one\nthree\n' }],
    ['edit_file', { path: 'a.txt', old: 'two', new: 'three' }],
  ])("%s's preview is its module's diff", async (name, args) => {
    const made = name === 'write_file' ? writeFileTool : editFileTool;
    const preview = await offered(name).preview?.(args, context());
    expect(preview).toBe(await made.preview?.(args, context()));
    expect(preview).toContain('+three');
  });

  // What the question to run a command shows: the command, and the folder it runs in unless the root.
  it.each<[string, Record<string, unknown>, string]>([
    ['run_command', { command: 'rm -f x' }, '$ rm -f x'],
    ['run_command', { command: 'rm -f x', cwd: '.' }, '$ rm -f x'],
    ['run_command', { command: 'rm -f x', cwd: 'newdir/deep' }, '$ rm -f x   (in newdir/deep)'],
    ['process', { operation: 'start', command: 'ls', cwd: 'newdir' }, 'process start ls   (in newdir)'],
    ['process', { operation: 'start', command: 'ls' }, 'process start ls'],
    ['process', { operation: 'kill', handle: 'proc_1' }, 'process kill proc_1'],
  ])('%s %j asks as %j', async (name, args, question) => {
    expect(await offered(name).preview?.(args, context())).toBe(question);
  });

  it("the process tool's close does nothing before a call, and kills what its calls started after", async () => {
    const [unused, used] = [offered('process') as Tool & { close: () => Promise<void> }, offered('process') as Tool & { close: () => Promise<void> }];
    await unused.close();
    await used.run({ operation: 'start', command: `sleep 30 & echo $! > ${join(root, 'left.pid')}; wait` }, context());
    await waitFor(() => expect(readFileSync(join(root, 'left.pid'), 'utf8')).toMatch(/^\d+\n$/));
    const pid = Number(readFileSync(join(root, 'left.pid'), 'utf8'));
    expect(alive(pid)).toBe(true);
    // Another run's tool has a table of its own.
    expect(await offered('process').run({ operation: 'list' }, context())).toEqual({ processes: [] });
    await used.close();
    await waitFor(() => expect(alive(pid)).toBe(false));
  });
});
