// What a command loads: the plain question and an agent run the model answers in words stay off the
// heavy dependencies (docs/architecture.md, "The build"). Checked on the built bundle, by the chunks
// the process really loads.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { ARGO_BIN, scrubbedEnv, tempHome } from '../support/run-argo.js';

const TRACE = fileURLToPath(new URL('../support/trace-loads.mjs', import.meta.url));

const ollama = await fakeOllamaPerFile({ reply: 'ok', models: [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }] });

/** The module URLs `argo args…` loaded, Node's own modules (`node:readline`) among them. */
async function urlsLoaded(args: string[], home = tempHome()): Promise<string[]> {
  const trace = join(home, 'loads.txt');
  rmSync(trace, { force: true });
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TRACE, ARGO_BIN, ...args], {
      env: { ...scrubbedEnv({ home, host: ollama.url }), ARGO_TRACE_LOADS: trace },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('close', resolve);
  });
  expect(code).toBe(0);
  return readFileSync(trace, 'utf8').split('\n');
}

/** What esbuild's marks of each module's source path (`// src/cli/main.ts`) match in the chunks `argo args…` loaded. */
async function bundledLoaded(args: string[], home: string, mark: RegExp): Promise<Set<string>> {
  const found = new Set<string>();
  for (const url of await urlsLoaded(args, home)) {
    if (!url.startsWith('file:') || !url.includes('/dist/cli/')) continue;
    for (const match of readFileSync(fileURLToPath(url), 'utf8').matchAll(mark)) {
      if (match[1] !== undefined) found.add(match[1]);
    }
  }
  return found;
}

/** The packages bundled into the chunks `argo args…` loaded. */
function packagesLoaded(args: string[], home = tempHome()): Promise<Set<string>> {
  return bundledLoaded(args, home, /^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm);
}

const HEAVY = ['zod', 'chalk', 'string-width', 'hono', '@hono/node-server', '@modelcontextprotocol/sdk', 'ajv', 'fast-glob', 'proper-lockfile', 'diff'];

describe('start-up loads only what the command needs', () => {
  it('a plain question loads the client and commander, none of the heavy packages', async () => {
    const packages = await packagesLoaded(['--no-log', 'hi']);
    expect(packages).toContain('ollama');
    expect(packages).toContain('commander');
    expect(HEAVY.filter((name) => packages.has(name))).toEqual([]);
  });

  it('a plain question does not load readline (only a question asked on the terminal needs it)', async () => {
    const urls = await urlsLoaded(['--no-log', 'hi']);
    expect(urls).toContain('node:fs');
    expect(urls.filter((url) => url === 'node:readline' || url === 'readline')).toEqual([]);
  });

  it('logged questions that create a session, then replay it, and a search of the log, read and write every store without zod', async () => {
    const home = tempHome();
    // Writing a turn takes the log and session locks: proper-lockfile is expected there, nothing else heavy.
    const heavyFor = (packages: Set<string>): string[] => HEAVY.filter((name) => name !== 'proper-lockfile' && packages.has(name));
    expect(heavyFor(await packagesLoaded(['-s', 'work', 'hi'], home))).toEqual([]);
    expect(heavyFor(await packagesLoaded(['-s', 'work', '--replay', 'session', 'and then?'], home))).toEqual([]);
    // A search reads every line it prints without zod, and `logs --json` keeps its verified record without it.
    expect(await packagesLoaded(['logs', '-q', 'then', '--json'], home)).not.toContain('zod');
    expect(await packagesLoaded(['logs', '--json'], home)).not.toContain('zod');
  });

  it('an agent run answered in words loads no schema library, MCP client or file walker, with a memo to read', async () => {
    const home = tempHome();
    writeFileSync(join(home, 'memo.json'), JSON.stringify({ project: 'argo' }));
    const root = join(home, 'root');
    mkdirSync(root);
    const packages = await packagesLoaded(['--no-log', '--tools', 'dev', '--root', root, 'hi'], home);
    expect(packages).toContain('ollama');
    expect(HEAVY.filter((name) => packages.has(name))).toEqual([]);
  });

  it('an agent run answered in words loads no tool code: the file and command tools bring theirs with their first call', async () => {
    const home = tempHome();
    const root = join(home, 'root');
    mkdirSync(root);
    const sources = await bundledLoaded(['--no-log', '--tools', 'dev', '--root', root, 'hi'], home, /^\/\/ (src\/\S+)$/gm);
    expect(sources).toContain('src/tools/builtins.ts');
    expect(['fs', 'edit', 'shell', 'root-files', 'line-search', 'web'].map((name) => `src/tools/${name}.ts`).filter((source) => sources.has(source))).toEqual([]);
  });

  it('an agent run off a terminal and without fetch_url loads no readline, tty or DNS resolver (only Allow? on a terminal and the web check need them)', async () => {
    const home = tempHome();
    const root = join(home, 'root');
    mkdirSync(root);
    const urls = await urlsLoaded(['--no-log', '--tools', 'dev', '--root', root, 'hi'], home);
    expect(urls).toContain('node:fs');
    expect(urls.filter((url) => ['readline', 'tty', 'dns/promises'].includes(url.replace(/^node:/, '')))).toEqual([]);
  });
});
