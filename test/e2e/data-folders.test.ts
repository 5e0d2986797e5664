// A logs/ or sessions/ that is there but out of reach (a link to a disk not mounted, a file) is
// said as such; no reader empties an index for it, and no removal reports a success that deleted nothing.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile();
const argo = (home: string, args: string[]) => runArgo(args, { home, host: ollama.url });

/** A home whose logs/ links to a folder on another "disk", with one turn of session `name` logged there. */
async function linkedHome(name: string, prompt: string): Promise<{ home: string; unmount: () => void; mount: () => void }> {
  const home = tempHome();
  const disk = mkdtempSync(join(tmpdir(), 'argo-disk-'));
  mkdirSync(join(disk, 'logs'));
  symlinkSync(join(disk, 'logs'), join(home, 'logs'));
  expect((await argo(home, ['-s', name, prompt])).code).toBe(0);
  return { home, unmount: () => renameSync(disk, `${disk}-away`), mount: () => renameSync(`${disk}-away`, disk) };
}

const turnsOf = async (home: string, name: string): Promise<number> => {
  const listed = JSON.parse((await argo(home, ['sessions', '--json'])).stdout) as { name: string; turns: number }[];
  return listed.find((session) => session.name === name)?.turns ?? -1;
};

describe('logs/ a link to a disk not mounted', () => {
  it.each([['last'], ['sessions', 'show', 'w'], ['-s', 'w', '-r', 'session', '--no-log', 'x'], ['logs'], ['logs', 'check'], ['logs', '--stats']])(
    'argo %s says so (exit 1) and the session keeps its turn for when the disk is back',
    async (...args) => {
      const { home, unmount, mount } = await linkedHome('w', 'remember me');
      unmount();
      const result = await argo(home, args);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^argo: .*\/logs is a link to .*\/logs, which does not exist: put the folder back there \(mount its disk\), or remove the link\n$/);
      mount();
      expect(await turnsOf(home, 'w')).toBe(1);
      expect((await argo(home, ['sessions', 'show', 'w'])).stdout).toContain('remember me');
    },
  );

  it('a new turn is answered and saved to rescued/, the line saying where logs/ points, not a bare ENOENT', async () => {
    const { home, unmount } = await linkedHome('w', 'remember me');
    unmount();
    const result = await argo(home, ['-s', 'w', 'and this']);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toBe('');
    expect(result.stderr).toMatch(/^argo: cannot write the log: .*\/logs is a link to .*\/logs, which does not exist: put the folder back there \(mount its disk\), or remove the link/m);
    expect(result.stderr).not.toContain('ENOENT');
    expect(result.stderr).toContain('rescued/');
  });

  it.each([
    ['logs', 'rm', '-s', 'secret', '--yes'],
    ['sessions', 'rm', 'secret', '--purge', '--yes'],
  ])('argo %s %s … refuses, and removes neither the lines nor the record', async (...args) => {
    const { home, unmount, mount } = await linkedHome('secret', 'my password is hunter2');
    unmount();
    const result = await argo(home, args);
    expect([result.code, result.stdout]).toEqual([1, '']);
    expect(result.stderr).toContain('which does not exist: put the folder back there (mount its disk)');
    mount();
    expect(await turnsOf(home, 'secret')).toBe(1);
    expect((await argo(home, ['logs'])).stdout).toContain('hunter2');
  });
});

describe("a day's log a link to a file on a disk not mounted", () => {
  it('readers say they skipped it; no index, count or line is lost; reindex and removals refuse naming the link', async () => {
    const home = tempHome();
    expect((await argo(home, ['-s', 'w', 'remember me'])).code).toBe(0);
    const disk = mkdtempSync(join(tmpdir(), 'argo-disk-'));
    const [today] = readdirSync(join(home, 'logs')).filter((name) => name.endsWith('.log'));
    renameSync(join(home, 'logs', today ?? ''), join(disk, '2026-01-01.log'));
    symlinkSync(join(disk, '2026-01-01.log'), join(home, 'logs', '2026-01-01.log'));
    expect((await argo(home, ['sessions', 'reindex', 'w'])).stdout).toBe('reindexed session "w": 1 turn\n');
    const index = readFileSync(join(home, 'sessions', 'w.idx'), 'utf8');
    renameSync(disk, `${disk}-away`);

    const skipped = 'argo: skipped 1 day\'s log file out of reach (a link to no file); run "argo logs check" to list them\n';
    for (const args of [['sessions', 'show', 'w'], ['-s', 'w', '-r', 'session', '--no-log', 'x'], ['logs'], ['last', '-s', 'w']]) {
      const result = await argo(home, args);
      expect([args, result.stderr]).toEqual([args, expect.stringContaining(skipped)]);
    }
    expect(readFileSync(join(home, 'sessions', 'w.idx'), 'utf8')).toBe(index);
    expect(await turnsOf(home, 'w')).toBe(1);

    const named = /^argo: .*\/logs\/2026-01-01\.log is a link to .*\/2026-01-01\.log, which does not exist: put the file back there \(mount its disk\), or remove the link; nothing (reindexed|deleted)\n$/;
    for (const args of [['sessions', 'reindex', 'w'], ['sessions', 'reindex'], ['logs', 'rm', '-s', 'w', '--yes'], ['sessions', 'rm', 'w', '--purge', '--yes']]) {
      const refused = await argo(home, args);
      expect([args, refused.code, refused.stderr]).toEqual([args, 1, expect.stringMatching(named)]);
    }
    expect(await turnsOf(home, 'w')).toBe(1);

    renameSync(`${disk}-away`, disk);
    const back = await argo(home, ['sessions', 'show', 'w']);
    expect([back.stdout, back.stderr]).toEqual([expect.stringContaining('remember me'), '']);
  });
});

describe('logs/ an empty folder (a mount point with its disk away) or missing, while an index names its files', () => {
  it.each(['empty', 'missing'])('%s: readers find no turn but leave the index and the record as they were', async (state) => {
    const home = tempHome();
    expect((await argo(home, ['-s', 'w', 'remember me'])).code).toBe(0);
    const index = readFileSync(join(home, 'sessions', 'w.idx'), 'utf8');
    renameSync(join(home, 'logs'), join(home, 'logs-away'));
    if (state === 'empty') mkdirSync(join(home, 'logs'));
    for (const args of [['last'], ['sessions', 'show', 'w'], ['-s', 'w', '-r', 'session', '--no-log', 'x']]) expect((await argo(home, args)).code).toBe(0);
    expect(readFileSync(join(home, 'sessions', 'w.idx'), 'utf8')).toBe(index);
    expect(await turnsOf(home, 'w')).toBe(1);
    for (const args of [['logs', 'rm', '-s', 'w', '--yes'], ['sessions', 'rm', 'w', '--purge', '--yes']]) {
      const refused = await argo(home, args);
      expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/\/logs holds no log file, yet the session has turns: nothing deleted\. If logs\/ is on a disk that is not mounted, mount it and try again; if its files were deleted, "argo sessions reindex" counts what is left\n$/)]);
    }
    rmSync(join(home, 'logs'), { recursive: true, force: true });
    renameSync(join(home, 'logs-away'), join(home, 'logs'));
    expect((await argo(home, ['sessions', 'show', 'w'])).stdout).toContain('remember me');
  });

  it('a reindex asked for takes the log as it is, none', async () => {
    const home = tempHome();
    expect((await argo(home, ['-s', 'w', 'remember me'])).code).toBe(0);
    rmSync(join(home, 'logs'), { recursive: true });
    expect((await argo(home, ['sessions', 'reindex', 'w'])).stdout).toBe('reindexed session "w": 0 turns\n');
    expect(await turnsOf(home, 'w')).toBe(0);
    // The way out the refusal names: with the count mended, the removal goes through.
    expect(await argo(home, ['sessions', 'rm', 'w', '--purge', '--yes'])).toMatchObject({ code: 0, stdout: 'removed session "w" and 0 log lines from 0 files\n' });
  });
});

describe('logs/ or sessions/ a file', () => {
  it.each([
    ['logs', ['logs'], /\/logs is a file, not a folder; Argo keeps its data in folders \(move it out of the way\)\n$/],
    ['logs', ['logs', 'check'], /\/logs is a file, not a folder/],
    ['sessions', ['sessions'], /\/sessions is a file, not a folder; Argo keeps its data in folders \(move it out of the way\)\n$/],
    ['sessions', ['sessions', '--json'], /\/sessions is a file, not a folder/],
    ['sessions', ['hi'], /\/sessions is a file, not a folder/],
    ['sessions', ['--no-log', 'hi'], /\/sessions is a file, not a folder/],
  ])('%s a file: argo %j says so, exit 1, nothing asked', async (folder, args, said) => {
    const home = tempHome();
    writeFileSync(join(home, folder), 'x');
    const asked = ollama.requests.length;
    const result = await argo(home, args);
    expect([result.code, result.stdout]).toEqual([1, '']);
    expect(result.stderr).toMatch(new RegExp(`^argo: [^\\n]*${said.source}`));
    expect(ollama.requests.length).toBe(asked);
  });
});

describe('a leftover index of a removed session of the same name', () => {
  it("never passes the removed session's turns as the new one's in replay", async () => {
    const home = tempHome();
    for (const prompt of ['Why is the sky blue?', 'How do birds fly?', 'What is rain?']) expect((await argo(home, ['-s', 'lo', prompt])).code).toBe(0);
    const leftover = readFileSync(join(home, 'sessions', 'lo.idx'));
    expect((await argo(home, ['sessions', 'rm', 'lo', '--yes'])).code).toBe(0);
    writeFileSync(join(home, 'sessions', 'lo.idx'), leftover);
    expect((await argo(home, ['-s', 'lo', 'Write a poem'])).code).toBe(0);
    expect((await argo(home, ['-s', 'lo', 'Write a song'])).code).toBe(0);
    const explained = await argo(home, ['-s', 'lo', '--replay', 'session', '--explain', '--json', 'Add x']);
    const policy = (JSON.parse(explained.stdout) as { replay_policy: { entries_available: number; decisions: { id: string }[] } }).replay_policy;
    expect(policy.entries_available).toBe(2);
  });
});

describe("a session's index that is a symbolic link", () => {
  it('is left for the user to remove, and the logged turn says so once', async () => {
    const home = tempHome();
    expect((await argo(home, ['-s', 'work', 'Add y'])).code).toBe(0);
    const index = join(home, 'sessions', 'work.idx');
    renameSync(index, join(home, 'real.idx'));
    symlinkSync(join(home, 'real.idx'), index);
    const result = await argo(home, ['-s', 'work', 'Add z']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/but session "work" could not be updated: .*\/work\.idx is a symbolic link, and Argo does not follow links in its data home; remove the link, then the index is rebuilt from the log on next use \(do not ask again\)\n$/);
    expect(lstatSync(index).isSymbolicLink()).toBe(true);
    rmSync(index);
    expect((await argo(home, ['sessions', 'show', 'work'])).stdout).toMatch(/· 2 turns\n/);
  });
});
