// Folders list_files and search_files could not read are counted, not passed over in silence. Read
// permission cannot be taken from root (which runs CI here), so readdir is made to fail as it does
// for another user's 0700 folder: EACCES for any folder named "locked".
import type * as Fs from 'node:fs';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { listFilesTool, searchFilesTool } from '../../src/tools/fs.js';
import type { ToolContext } from '../../src/tools/types.js';

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof Fs>();
  const readdir = (path: string, ...rest: unknown[]): void => {
    const done = rest.at(-1) as (error: NodeJS.ErrnoException | null, entries?: unknown) => void;
    if (basename(path) === 'locked') {
      done(Object.assign(new Error(`EACCES: permission denied, scandir '${path}'`), { code: 'EACCES' }));
      return;
    }
    (real.readdir as (...args: unknown[]) => void)(path, ...rest);
  };
  return { ...real, readdir, default: { ...real, readdir } };
});

let context: ToolContext;

beforeAll(() => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-unreadable-')));
  mkdirSync(join(root, 'src', 'locked'), { recursive: true });
  mkdirSync(join(root, 'locked'));
  writeFileSync(join(root, 'a.txt'), 'needle\n');
  writeFileSync(join(root, 'src', 'b.txt'), 'needle\n');
  writeFileSync(join(root, 'src', 'locked', 'c.txt'), 'needle\n');
  context = { root, home: join(root, '.argo-home'), signal: new AbortController().signal };
});

describe('folders that cannot be read', () => {
  it.each<[string, Record<string, unknown>, unknown]>([
    ['list_files walking both', { pattern: '**/*' }, { count: 2, skipped: { unreadable_folders: 2 }, files: ['a.txt', 'src/b.txt'] }],
    ['list_files in one of them', { pattern: '*', path: 'src/locked' }, { count: 0, skipped: { unreadable_folders: 1 }, files: [] }],
    ['list_files not walking into them: nothing said', { pattern: '*.txt' }, { count: 1, files: ['a.txt'] }],
  ])('%s', async (_case, args, result) => {
    expect(await listFilesTool.run(args, context)).toEqual(result);
  });

  it('search_files counts them with the files it skipped, before the matches', async () => {
    const result = await searchFilesTool.run({ pattern: 'needle' }, context);
    expect(Object.keys(result)).toEqual(['skipped', 'matches']);
    expect(result).toEqual({
      skipped: { unreadable_folders: 2 },
      matches: [
        { file: 'a.txt', line: 1, text: 'needle' },
        { file: 'src/b.txt', line: 1, text: 'needle' },
      ],
    });
  });
});
