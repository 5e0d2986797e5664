// Calls on one file in a round run in the model's order, however long each call's path takes to
// resolve: here the earlier a call, the slower its resolution, so a call that waited for its path
// before taking its place in line would run after the calls that followed it.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as Root from '../../src/tools/root.js';
import type { ToolContext } from '../../src/tools/types.js';

/** Resolutions started since the round began: the first waits longest. */
let started = 0;
const SLOWEST_MS = 16;

vi.mock('../../src/tools/root.js', async (importOriginal) => {
  const original = await importOriginal<typeof Root>();
  return {
    ...original,
    resolveInRoot: async (...args: Parameters<typeof original.resolveInRoot>) => {
      const delay = Math.max(0, SLOWEST_MS - 8 * started++);
      const resolved = await original.resolveInRoot(...args);
      await new Promise((resolve) => setTimeout(resolve, delay));
      return resolved;
    },
  };
});

const { editFileTool, writeFileTool } = await import('../../src/tools/edit.js');

let root: string;
let context: ToolContext;

beforeAll(() => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'argo-call-order-')));
  root = join(base, 'root');
  mkdirSync(root);
  context = { root, home: join(base, 'home'), signal: new AbortController().signal };
});

beforeEach(() => {
  started = 0;
});

const ROUNDS = 10;

describe('calls on one file in a round', () => {
  it.each<[string, string | null, [string, Record<string, unknown>][], string]>([
    ['an overwrite then an append', null, [['write', { content: 'A\n' }], ['write', { content: 'B\n', mode: 'append' }]], 'A\nB\n'],
    ['an overwrite, an append, an edit of what was appended', null, [['write', { content: 'A\n' }], ['write', { content: 'B\n', mode: 'append' }], ['edit', { old: 'B', new: 'C' }]], 'A\nC\n'],
    ['two edits, the second of what the first wrote', 'x\n', [['edit', { old: 'x', new: 'y' }], ['edit', { old: 'y', new: 'z' }]], 'z\n'],
    ['create, then an edit of it', null, [['write', { content: 'new\n', mode: 'create' }], ['edit', { old: 'new', new: 'old' }]], 'old\n'],
    ['an append, then an overwrite that replaces it', 'x\n', [['write', { content: 'more\n', mode: 'append' }], ['write', { content: 'whole\n' }]], 'whole\n'],
  ])('%s: in the order made, every time', async (name, before, calls, expected) => {
    for (let round = 0; round < ROUNDS; round++) {
      const file = `${name.replace(/\W+/g, '-')}-${round}.txt`;
      if (before !== null) writeFileSync(join(root, file), before);
      started = 0;
      // Made in one tick, as the loop makes a round's calls.
      await Promise.all(calls.map(([tool, args]) => (tool === 'write' ? writeFileTool : editFileTool).run({ path: file, ...args }, context)));
      expect(readFileSync(join(root, file), 'utf8')).toBe(expected);
    }
  });

  it('through the catalog, which loads the tools with the first call: the same order, from the first round on', async () => {
    // A fresh module graph: the round's first call loads edit.ts, as in a new argo process.
    vi.resetModules();
    const { builtinTools } = await import('../../src/tools/catalog.js');
    for (let round = 0; round < ROUNDS; round++) {
      const tools = new Map(builtinTools().map((tool) => [tool.name, tool]));
      const write = tools.get('write_file');
      const edit = tools.get('edit_file');
      if (write === undefined || edit === undefined) throw new Error('no edit tools in the catalog');
      const path = `catalog-${round}.txt`;
      started = 0;
      await Promise.all([write.run({ path, content: 'A\n' }, context), write.run({ path, content: 'B\n', mode: 'append' }, context), edit.run({ path, old: 'B', new: 'C' }, context)]);
      expect(readFileSync(join(root, path), 'utf8')).toBe('A\nC\n');
    }
  });

  it.each<[string, 'once' | 'at each call']>([
    ['the code loaded by the first call', 'once'],
    ['the code loaded already', 'at each call'],
  ])("the catalog reaches the tool in the order the calls were made, however its loading resolves: %s", async (_case, when) => {
    const { offeredTool } = await import('../../src/tools/catalog.js');
    const { WRITE_FILE } = await import('../../src/tools/builtins.js');
    const reached: number[] = [];
    const code = { ...WRITE_FILE, run: (args: Record<string, unknown>) => (reached.push(Number(args.n)), Promise.resolve({})) };
    let loads = 0;
    // Each load resolves later than the one before: were each call to load for itself, the last would come first.
    const tool = offeredTool(WRITE_FILE, () => {
      const delay = 20 - 5 * loads++;
      return new Promise((resolve) => setTimeout(() => resolve(code), delay));
    });
    if (when === 'at each call') await tool.run({ n: -1 }, context);
    reached.length = 0;
    await Promise.all([0, 1, 2, 3].map((n) => tool.run({ n }, context)));
    expect(reached).toEqual([0, 1, 2, 3]);
    expect(loads).toBe(1);
  });

  it('two spellings of one file (through a link, with ./) never run together', async () => {
    mkdirSync(join(root, 'real'));
    symlinkSync(join(root, 'real'), join(root, 'alias'));
    writeFileSync(join(root, 'real', 'n.txt'), '');
    const paths = ['real/n.txt', 'alias/n.txt', './real/n.txt', 'alias/../real/n.txt'];
    await Promise.all(Array.from({ length: 12 }, (_, index) => writeFileTool.run({ path: paths[index % paths.length], content: `${index}\n`, mode: 'append' }, context)));
    const lines = readFileSync(join(root, 'real', 'n.txt'), 'utf8').split('\n').filter((line) => line !== '');
    expect(lines.map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, index) => index));
  });
});

describe('a call cut while it waits in line, or before it writes, writes nothing', () => {
  it.each<[string, 'before' | 'after']>([
    ['cut once the calls are in line (Ctrl-C, a STOP)', 'after'],
    ['cut before they are made (a timeout already past)', 'before'],
  ])('%s', async (_case, when) => {
    writeFileSync(join(root, 'cut.txt'), 'kept\n');
    const cut = new AbortController();
    const cutContext = { ...context, signal: cut.signal };
    if (when === 'before') cut.abort();
    const calls = [
      writeFileTool.run({ path: 'cut.txt', content: 'line 1\n', mode: 'append' }, cutContext),
      editFileTool.run({ path: 'cut.txt', old: 'kept', new: 'changed' }, cutContext),
      writeFileTool.run({ path: 'cut.txt', content: 'all new\n' }, cutContext),
      writeFileTool.run({ path: 'new-after-cut.txt', content: 'x\n' }, cutContext),
    ];
    // Every call has taken its place in line by now; none has reached the disk (each resolves its path first).
    if (when === 'after') cut.abort();
    const outcomes = await Promise.allSettled(calls);
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'written'))).toEqual(Array(4).fill('the call was cut before it wrote anything'));
    expect(readFileSync(join(root, 'cut.txt'), 'utf8')).toBe('kept\n');
    expect(() => readFileSync(join(root, 'new-after-cut.txt'))).toThrow();
  });
});
