import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { definitionsDigest, definitionsPath, definitionsText, keepDefinitions, readDefinitions } from '../../src/agent/definitions.js';
import type { ToolDefinition } from '../../src/ollama/transport.js';

const home = (): string => mkdtempSync(join(tmpdir(), 'argo-definitions-'));
const tools: ToolDefinition[] = [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }];

describe('tool definitions kept by their content', () => {
  it('are written once per home, private, and read back by their digest', async () => {
    const first = home();
    const second = home();
    const digest = await keepDefinitions(first, tools);
    expect(digest).toBe(definitionsDigest(definitionsText(tools)));
    // Another home of the same process gets its own file: nothing is remembered across homes.
    expect(await keepDefinitions(second, tools)).toBe(digest);
    for (const dir of [first, second]) {
      expect(statSync(join(dir, definitionsPath(digest))).mode & 0o777).toBe(0o600);
      expect(readDefinitions(dir, digest)).toEqual(tools);
    }
  });

  it('a folder removed meanwhile is made again; a file already there is left as it is', async () => {
    const dir = home();
    const digest = await keepDefinitions(dir, tools);
    rmSync(join(dir, 'tool-definitions'), { recursive: true });
    await keepDefinitions(dir, tools);
    expect(existsSync(join(dir, definitionsPath(digest)))).toBe(true);
    const path = join(dir, definitionsPath(digest));
    writeFileSync(path, 'altered');
    await keepDefinitions(dir, tools);
    expect(readFileSync(path, 'utf8')).toBe('altered');
    expect(readDefinitions(dir, digest)).toBe('damaged');
  });

  it.each([
    ['missing', (dir: string, digest: string) => rmSync(join(dir, definitionsPath(digest))), 'missing'],
    ['not an array of definitions', (dir: string, digest: string) => writeFileSync(join(dir, definitionsPath(digest)), '{}'), 'damaged'],
  ] as const)('a digest whose file is %s reads as %s', async (_case, harm, verdict) => {
    const dir = home();
    const digest = await keepDefinitions(dir, tools);
    harm(dir, digest);
    expect(readDefinitions(dir, digest)).toBe(verdict);
  });
});
