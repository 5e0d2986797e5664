// Failures quoting outside words that an end-to-end run cannot reach at will (a race, a slow
// pattern, Node's own words from fetch, a broken memo.json, config.json's paths in a reason): each
// with a secret at the end of the outside words, as the loop logs and shows it (classifyThrown).
// test/e2e/agent.test.ts runs every failure a real run can reach the same way.
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { classifyThrown, parameterNames } from '../../src/agent/taxonomy.js';
import type { CallOutcome } from '../../src/agent/taxonomy.js';
import { loadToolbox } from '../../src/tools/catalog.js';
import { searchFilesTool } from '../../src/tools/fs.js';
import type * as LineSearch from '../../src/tools/line-search.js';
import { connectMcp } from '../../src/tools/mcp.js';
import { memoTool } from '../../src/tools/memo.js';
import { HeldFolder, openInRoot } from '../../src/tools/root-files.js';
import type { Tool } from '../../src/tools/types.js';
import { fetchUrlTool } from '../../src/tools/web.js';

// A pattern that backtracks for ever takes 5 s to be stopped; this one is said to at once.
vi.mock('../../src/tools/line-search.js', async (importOriginal) => {
  const original = await importOriginal<typeof LineSearch>();
  return { ...original, matchLines: () => Promise.reject(new original.PatternTooSlowError('too slow')) };
});

const MASKED = 'GITHUB_TOKEN=***';
// Bare, a value runs to the next space; with an open quote, to a closing quote (' is not escaped by JSON quoting).
const SECRETS = ['GITHUB_TOKEN=hunter2', 'GITHUB_TOKEN="hunter2', "GITHUB_TOKEN='hunter2"];

function tree(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), 'argo-quoted-')));
}

const contextIn = (root: string) => ({ root, home: join(root, '.argo-home'), signal: new AbortController().signal });

/** What the loop logs and shows of a call of `tool` that throws. */
async function outcomeOf(tool: Tool, args: Record<string, unknown>, root: string): Promise<CallOutcome> {
  const thrown = await tool.run(args, contextIn(root)).then(() => null, (error: unknown) => error);
  return classifyThrown(thrown, parameterNames(tool.parameters));
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe.each(SECRETS)('a secret ending the outside words (%s) is masked, and Argo\'s punctuation after it kept', (secret) => {
  it('search_files: a pattern stopped as too slow', async () => {
    const root = tree();
    writeFileSync(join(root, 'a.txt'), 'aaaa\n');
    expect(await outcomeOf(searchFilesTool, { pattern: `(a+)+${secret}` }, root)).toEqual({
      kind: 'failure',
      message: `the pattern "(a+)+${MASKED}" took over 5 s and was stopped: it backtracks too much (nested repetition such as (a+)+ or (.*)*); simplify it or narrow the glob`,
      retryable: true,
      detail: null,
    });
  });

  it("fetch_url: Node's fetch failing before a response, in its own words", async () => {
    vi.stubGlobal('fetch', () => Promise.reject(new TypeError('fetch failed', { cause: new Error(`the proxy refused ${secret}`) })));
    expect(await outcomeOf(fetchUrlTool, { url: 'http://example.test/' }, tree())).toMatchObject({ kind: 'failure', message: `could not connect to example.test (the proxy refused ${MASKED})` });
  });

  it("fetch_url: a body cut mid-page, in Node's words with their code", async () => {
    const cut = new TypeError('terminated', { cause: Object.assign(new Error(`other side closed for ${secret}`), { code: 'UND_ERR_SOCKET' }) });
    const body = new ReadableStream<Uint8Array>({ start: (controller) => controller.error(cut) });
    vi.stubGlobal('fetch', () => Promise.resolve(new Response(body, { headers: { 'content-type': 'text/plain' } })));
    expect(await outcomeOf(fetchUrlTool, { url: 'http://example.test/' }, tree())).toMatchObject({
      kind: 'failure',
      message: `the page's body could not be read (UND_ERR_SOCKET: other side closed for ${MASKED})`,
    });
  });

  it('the file tools: a path that led elsewhere between its check and its open', async () => {
    const root = tree();
    writeFileSync(join(root, 'real.txt'), 'x');
    symlinkSync('real.txt', join(root, 'link'));
    const thrown = await openInRoot({ root, home: null }, join(root, 'link'), constants.O_RDONLY, `link/${secret}`).then(() => null, (error: unknown) => error);
    expect(classifyThrown(thrown, [])).toMatchObject({
      message: `"link/${MASKED}" changed while it was opened (a folder on its way was replaced, perhaps by a link out of the root); try again`,
    });
  });

  it('the edit tools: a file where the folder on its way should be', async () => {
    const root = tree();
    writeFileSync(join(root, secret), 'x');
    const thrown = await HeldFolder.open({ root, home: null }, join(root, secret, 'sub'), 'x/y').then(() => null, (error: unknown) => error);
    expect(classifyThrown(thrown, [])).toMatchObject({ message: `"x/y" cannot be written: "${MASKED}" on its way is a file, not a folder` });
  });

  it("memo: a memo.json whose entry is no string: the store's error kept aside, masked once", async () => {
    const root = tree();
    const home = join(root, '.argo-home');
    mkdirSync(home);
    writeFileSync(join(home, 'memo.json'), JSON.stringify({ [secret]: 1 }));
    expect(await outcomeOf(memoTool, { operation: 'get', key: 'k' }, root)).toEqual({
      kind: 'failure',
      message: 'tool execution failed',
      retryable: true,
      detail: `RuntimeError: ${join(home, 'memo.json')}: "${MASKED}" must be a string; fix or remove the file`,
    });
  });

  it("MCP: a server whose cwd in config.json is not a directory, the reason as the catalog records it", async () => {
    const config = { command: 'node', cwd: `/nonexistent/${secret}` };
    const reason = `MCP server "gh" did not start (its cwd "/nonexistent/${MASKED}" is not a directory)`;
    await expect(connectMcp('gh', config)).rejects.toThrow(reason);
    expect((await loadToolbox(['mcp:gh'], { mcpServers: { gh: config } })).unavailable).toEqual([{ name: 'mcp:gh', reason }]);
  });

  it.each<[string, (root: string) => string[], (root: string) => string]>([
    ['a path that is not there', () => [`./${secret}`], (root) => `"./${MASKED}" does not exist (a relative path is from the root, ${root.slice(0, -secret.length)}${MASKED})`],
    ['a file without its x bit', (root) => {
      writeFileSync(join(root, secret), '#!/bin/sh\n');
      chmodSync(join(root, secret), 0o644);
      return [`./${secret}`];
    }, () => `"./${MASKED}" is not executable (chmod +x it)`],
    ['a name not on PATH', () => [secret], () => `"${MASKED}" is not on PATH`],
  ])("a command tool from config.json: %s, in the reason it is unavailable for", async (_case, requires, reason) => {
    // The root's own name ends in the secret: a reason quotes it.
    const root = join(tree(), secret);
    mkdirSync(root);
    const box = await loadToolbox(['mine'], { commandTools: { mine: { description: 'mine', argv: ['true'], requires: requires(root) } } }, { root });
    expect(box.unavailable).toEqual([{ name: 'mine', reason: reason(root) }]);
  });

  it("an MCP server's tool whose schema Ollama cannot read: its property's name in the reason", async () => {
    const tool: Tool = { name: 'look', description: 'look', parameters: { type: 'object', properties: { [secret]: true } as unknown as Record<string, Record<string, unknown>> }, sideEffects: false, run: () => Promise.resolve({}) };
    const box = await loadToolbox(['mcp:gh'], { mcpServers: { gh: { command: 'gh' } } }, { connectMcp: () => Promise.resolve({ tools: [tool], close: () => Promise.resolve(), onClose: () => undefined }) });
    expect(box.unavailable).toEqual([{ name: 'mcp:gh/look', reason: `Ollama cannot read its input schema: properties."${MASKED}" must be an object (Ollama cannot read a true or false schema there); left out` }]);
    await box.close();
  });
});
