// list_files and search_files stop walking when their call is stopped (Ctrl-C, a STOP, the tool's
// timeout): a walk of a huge tree would otherwise go on unseen, keeping the process alive. Every
// folder read is counted here, and the call is stopped as the walk reads its fifth.
import type * as Fs from 'node:fs';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { listFilesTool, searchFilesTool } from '../../src/tools/fs.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';

const walk = { reads: 0, stopAt: Infinity, stop: (): void => undefined };

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof Fs>();
  const readdir = (...args: unknown[]): void => {
    walk.reads++;
    if (walk.reads === walk.stopAt) walk.stop();
    (real.readdir as (...args: unknown[]) => void)(...args);
  };
  return { ...real, readdir, default: { ...real, readdir } };
});

const FOLDERS = 40;
const SUBFOLDERS = 25;
let root: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-glob-abort-')));
  for (let folder = 0; folder < FOLDERS; folder++) {
    for (let sub = 0; sub < SUBFOLDERS; sub++) {
      mkdirSync(join(root, `f${folder}`, `s${sub}`), { recursive: true });
      writeFileSync(join(root, `f${folder}`, `s${sub}`, 'a.txt'), 'needle\n');
    }
  }
});

beforeEach(() => {
  walk.reads = 0;
  walk.stopAt = Infinity;
});

/** A context whose signal aborts as the walk reads its `at`th folder. */
function stoppedAt(at: number): ToolContext {
  const controller = new AbortController();
  walk.stopAt = at;
  walk.stop = () => controller.abort();
  return { root, home: join(root, '.argo-home'), signal: controller.signal };
}

const tools: [string, Tool, Record<string, unknown>][] = [
  ['list_files', listFilesTool, { pattern: '**/*' }],
  ['search_files', searchFilesTool, { pattern: 'needle' }],
];

describe('a walk whose call is stopped', () => {
  it.each(tools)('%s: a whole walk reads every folder (the baseline)', async (_name, tool, args) => {
    const result = await tool.run(args, { root, home: join(root, '.argo-home'), signal: new AbortController().signal });
    expect(walk.reads).toBe(1 + FOLDERS + FOLDERS * SUBFOLDERS);
    expect(JSON.stringify(result)).toContain('a.txt');
  });

  it.each(tools)('%s: stopped mid-walk, reads no folder after and rejects with the stop', async (_name, tool, args) => {
    const context = stoppedAt(5);
    await expect(tool.run(args, context)).rejects.toMatchObject({ name: 'AbortError' });
    expect(walk.reads).toBe(5);
  });

  it.each(tools)('%s: stopped before it starts, reads no folder', async (_name, tool, args) => {
    const controller = new AbortController();
    controller.abort();
    await expect(tool.run(args, { root, home: join(root, '.argo-home'), signal: controller.signal })).rejects.toBe(controller.signal.reason);
    expect(walk.reads).toBe(0);
  });
});
