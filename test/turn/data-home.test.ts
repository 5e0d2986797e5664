import { chmodSync, existsSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from 'date-fns/format';
import { describe, expect, it } from 'vitest';
import { DAY_PATTERN } from '../../src/log/timestamp.js';
import { checkDataHome, openHomeWarning } from '../../src/turn/data-home.js';

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

describe("checkDataHome: the day's log file a turn would append to, opened as the log store opens it", () => {
  const today = format(new Date(), DAY_PATTERN);
  it.each<[string, (logs: string, file: string) => void, RegExp | null]>([
    ['no log yet', () => undefined, null],
    ['a log file of its own', (_logs, file) => writeFileSync(file, '', { mode: 0o644 }), null],
    ['a link where the log goes (never followed)', (_logs, file) => symlinkSync(join(mkdtempSync(join(tmpdir(), 'argo-elsewhere-')), 'x.log'), file), /\.log is a symbolic link; Argo does not follow links/],
    ['a folder where the log goes', (_logs, file) => mkdirSync(file), /\.log is not a file \(a folder\); move it out of the way/],
  ])('%s', async (name, arrange, problem) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-data-home-'));
    const logs = join(home, 'logs');
    mkdirSync(logs, { mode: 0o700 });
    const file = join(logs, `${today}.log`);
    arrange(logs, file);
    const check = await checkDataHome({ home, paths: { logs, sessions: join(home, 'sessions'), config: join(home, 'config.json') } });
    expect(check.files.map(({ path, cannot }) => [path, cannot])).toEqual(problem === null ? [] : [[file, 'write']]);
    if (problem !== null) expect(String(check.files[0]?.error)).toMatch(problem);
    // Opened, never written or made private: a check changes nothing.
    if (name.includes('of its own')) expect([statSync(file).mode & 0o777, statSync(file).size]).toEqual([0o644, 0]);
    if (name === 'no log yet') expect(existsSync(file)).toBe(false);
  });

  it('a logs/ that is not a folder is the folder check\'s: no file is looked at in it', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-data-home-'));
    writeFileSync(join(home, 'logs'), '');
    const check = await checkDataHome({ home, paths: { logs: join(home, 'logs'), sessions: join(home, 'sessions'), config: join(home, 'config.json') } });
    expect([check.folders.map(({ path }) => path), check.files]).toEqual([[join(home, 'logs')], []]);
  });
});

describe('openHomeWarning: a data home other users may write in', () => {
  it.each<[string, number, string | null]>([
    ['0700', 0o700, null],
    ['0755: others read, never write', 0o755, null],
    ['0775: its group writes', 0o775, '/h can be written by its group (mode 775): they can put files and links in it, and remove or rename yours; Argo refuses what they put there, which may stop a turn; run "chmod go-w /h", or set ARGO_HOME to a folder of your own'],
    ['0777', 0o777, '/h can be written by other users (mode 777): they can put files and links in it, and remove or rename yours; Argo refuses what they put there, which may stop a turn; run "chmod go-w /h", or set ARGO_HOME to a folder of your own'],
    ['1777, sticky as /tmp: what is yours stays', 0o1777, '/h can be written by other users (mode 1777): they can put files and links in it; Argo refuses what they put there, which may stop a turn; run "chmod go-w /h", or set ARGO_HOME to a folder of your own'],
  ])('%s', (_case, mode, expected) => {
    expect(openHomeWarning('/h', 0o040000 | mode)).toBe(expected);
  });

  it.each<[string, number, boolean]>([
    // case, mode, warned — the group being the user's private group (umask 002)
    ['0775, its group the user alone', 0o775, false],
    ['0777, its group the user alone: others still write', 0o777, true],
    ['0770, its group the user alone', 0o770, false],
  ])('%s', (_case, mode, warned) => {
    expect(openHomeWarning('/h', 0o040000 | mode, true) !== null).toBe(warned);
  });

  it('checkDataHome carries it for a home open to others, and not for a private one', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-data-home-'));
    const paths = { logs: join(home, 'logs'), sessions: join(home, 'sessions'), config: join(home, 'config.json') };
    expect((await checkDataHome({ home, paths })).warning).toBeUndefined();
    chmodSync(home, 0o1777);
    const check = await checkDataHome({ home, paths });
    expect(check).toMatchObject({ home: null, folders: [], files: [] });
    expect(check.warning).toMatch(/can be written by other users \(mode 1777\)/);
  });
});
