import { mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDataHome } from '../../src/turn/data-home.js';

// Modes that keep a user from writing are tried in test/e2e/doctor.test.ts, as another user than root.
describe('checkDataHome: the folders a turn writes, made as a turn makes them', () => {
  const FOLDERS = ['logs', 'sessions', 'locks', 'unfinished'];
  it.each<[string, (home: string) => void, [string, 'make' | 'write', RegExp][]]>([
    ['an empty home: every folder made', () => undefined, []],
    ['a home not made yet', () => undefined, []],
    ['a file where locks/ goes', (home) => writeFileSync(join(home, 'locks'), ''), [['locks', 'make', /locks is not a folder; Argo keeps its data in folders/]]],
    [
      'a link where unfinished/ goes (a turn never writes through one)',
      (home) => symlinkSync(mkdtempSync(join(tmpdir(), 'argo-elsewhere-')), join(home, 'unfinished')),
      [['unfinished', 'make', /unfinished is a symbolic link; Argo does not follow links/]],
    ],
    [
      'a file where logs/ goes and one where sessions/ goes: each named, in order',
      (home) => {
        writeFileSync(join(home, 'sessions'), '');
        writeFileSync(join(home, 'logs'), '');
      },
      [
        ['logs', 'make', /logs is not a folder/],
        ['sessions', 'make', /sessions is not a folder/],
      ],
    ],
  ])('%s', async (name, arrange, problems) => {
    const parent = mkdtempSync(join(tmpdir(), 'argo-data-home-'));
    const home = join(parent, 'home');
    if (!name.includes('not made yet')) mkdirSync(home);
    arrange(home);
    const check = await checkDataHome({ home, paths: { logs: join(home, 'logs'), sessions: join(home, 'sessions'), config: join(home, 'config.json') } });
    expect(check.home).toBeNull();
    expect(check.folders.map(({ path, cannot }) => [path, cannot])).toEqual(problems.map(([folder, cannot]) => [join(home, folder), cannot]));
    check.folders.forEach(({ error }, index) => expect(String(error)).toMatch(problems[index]?.[2] ?? /^$/));
    const named = new Set(problems.map(([folder]) => folder));
    for (const folder of FOLDERS.filter((one) => !named.has(one))) expect(statSync(join(home, folder)).mode & 0o777).toBe(0o700);
  });
});
