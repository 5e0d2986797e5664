// What Argo trusts in a data home other users can write in: only files, folders and links of the
// user's own. The cases with another user's files need root (chown); elsewhere they are skipped.
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForeignFolderError, ForeignLinkError, UntrustedFileError, distrustOf, ensureHomeDir, ensureHomeFolder, ensurePrivateDir, readDataBytes, readDataText, rescueText, writeFileAtomic } from '../../src/log/fs.js';

const ME = 1000;
const OTHER = 65534;
const asRoot = process.getuid?.() === 0;

describe('distrustOf: a file of the data home is read only when it is the user\'s and others cannot change it', () => {
  const file = (uid: number, mode: number) => ({ uid, mode: 0o100000 | mode });
  const folder = (uid: number, mode: number) => ({ uid, mode: 0o040000 | mode });
  it.each<[string, ReturnType<typeof file>, ReturnType<typeof folder> | null, number | undefined, ReturnType<typeof distrustOf>]>([
    ['mine, 0600', file(ME, 0o600), null, ME, null],
    ['mine, 0644 (others read, never write)', file(ME, 0o644), null, ME, null],
    ['mine, read-only 0400', file(ME, 0o400), null, ME, null],
    ['another user\'s, 0600', file(OTHER, 0o600), null, ME, { owner: OTHER }],
    ['root\'s, read by a user', file(0, 0o644), null, ME, { owner: 0 }],
    ['another user\'s, read by root (never exempt)', file(OTHER, 0o600), null, 0, { owner: OTHER }],
    ['mine, others may write (0666), folder unknown', file(ME, 0o666), null, ME, { mode: 0o666 }],
    ['mine, 0664 in a folder the group may enter (0750)', file(ME, 0o664), folder(ME, 0o750), ME, { mode: 0o664 }],
    ['mine, 0664 in a 0700 folder of mine (umask 002): nobody else reaches it', file(ME, 0o664), folder(ME, 0o700), ME, null],
    ['mine, 0666 in a 0711 folder of mine: others may enter it', file(ME, 0o666), folder(ME, 0o711), ME, { mode: 0o666 }],
    ['mine, 0620 in a 0701 folder: others enter, but only the group writes, and it cannot enter', file(ME, 0o620), folder(ME, 0o701), ME, null],
    ['mine, 0664 in a 0700 folder of another user\'s', file(ME, 0o664), folder(OTHER, 0o700), ME, { mode: 0o664 }],
    ['mine, 0666 in a sticky 1777 folder', file(ME, 0o666), folder(ME, 0o1777), ME, { mode: 0o666 }],
    ['no uids (Windows): trusted', file(OTHER, 0o666), null, undefined, null],
  ])('%s', (_case, stats, parent, uid, expected) => {
    expect(distrustOf(stats, parent, uid)).toEqual(expected);
  });
});

describe('readDataText and readDataBytes refuse a file others can change', () => {
  it.each<[string, number, number, RegExp | null]>([
    ['a 0600 file in an open folder', 0o777, 0o600, null],
    ['a 0666 file in an open folder', 0o777, 0o666, /memo\.json can be written by other users \(mode 666\), and Argo reads only files others cannot change in its data home \(they decide what it sends and runs\): run "chmod go-w .*memo\.json"$/],
    ['a 0664 file in a 0755 folder', 0o755, 0o664, /can be written by other users \(mode 664\)/],
    ['a 0664 file in a 0700 folder', 0o700, 0o664, null],
  ])('%s', (_case, folderMode, fileMode, refused) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-trust-'));
    const path = join(home, 'memo.json');
    writeFileSync(path, '{"a":"b"}');
    chmodSync(path, fileMode);
    chmodSync(home, folderMode);
    if (refused === null) {
      expect(readDataText(path)).toBe('{"a":"b"}');
      expect(readDataBytes(path).toString()).toBe('{"a":"b"}');
    } else {
      expect(() => readDataText(path)).toThrow(refused);
      expect(() => readDataBytes(path, { followLink: true })).toThrow(UntrustedFileError);
    }
  });

  it('a link of the user\'s to a file of theirs is read where links are followed', () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-trust-'));
    writeFileSync(join(home, 'real.json'), '{}', { mode: 0o600 });
    symlinkSync(join(home, 'real.json'), join(home, 'config.json'));
    expect(readDataBytes(join(home, 'config.json'), { followLink: true }).toString()).toBe('{}');
  });
});

describe.runIf(asRoot)('as root: another user\'s files, folders and links in the data home (skipped unless the tests run as root)', () => {
  /** A home of root's that anyone may write in (sticky, as /tmp). */
  const sharedHome = (): string => {
    const home = mkdtempSync(join(tmpdir(), 'argo-shared-'));
    chmodSync(home, 0o1777);
    return home;
  };

  it('another user\'s file is refused, root reading it included; their file in their folder points to the data home', () => {
    const home = sharedHome();
    const path = join(home, 'memo.json');
    writeFileSync(path, '{}', { mode: 0o600 });
    chownSync(path, OTHER, OTHER);
    expect(() => readDataText(path)).toThrow(`${path} belongs to another user (uid ${OTHER}), and Argo reads only your own files in its data home (they decide what it sends and runs): remove it, or make it yours with chown if you trust what it says`);
    chownSync(home, OTHER, OTHER);
    expect(() => readDataText(path)).toThrow(/belongs to another user \(uid 65534\), .*: so is its folder: set ARGO_HOME or --home to a data home of your own$/);
  });

  it('a link another user made to a file of the user\'s is not followed', () => {
    const home = sharedHome();
    writeFileSync(join(home, 'mine.json'), '{}', { mode: 0o600 });
    symlinkSync(join(home, 'mine.json'), join(home, 'config.json'));
    lchownSync(join(home, 'config.json'), OTHER, OTHER);
    expect(() => readDataBytes(join(home, 'config.json'), { followLink: true })).toThrow(ForeignLinkError);
    expect(() => readDataBytes(join(home, 'config.json'), { followLink: true })).toThrow(`${join(home, 'config.json')} is a link another user (uid ${OTHER}) made; Argo follows only links of your own in its data home (remove it, or make it again as yourself)`);
  });

  it.each(['jobs', 'logs'])('a link another user put where %s/ goes is refused: the folder it leads to keeps its mode and gets nothing', async (name) => {
    const home = sharedHome();
    const victim = mkdtempSync(join(tmpdir(), 'argo-victim-'));
    chmodSync(victim, 0o755);
    symlinkSync(victim, join(home, name));
    lchownSync(join(home, name), OTHER, OTHER);
    await expect(ensurePrivateDir(join(home, name))).rejects.toThrow(ForeignLinkError);
    await expect(writeFileAtomic(join(home, name, 'x.json'), '{}')).rejects.toThrow(/is a link another user \(uid 65534\) made/);
    expect(statSync(victim).mode & 0o777).toBe(0o755);
    expect(readdirSync(victim)).toEqual([]);
  });

  it('a link of the user\'s own to a folder of theirs is still followed and closed to others', async () => {
    const home = sharedHome();
    const elsewhere = mkdtempSync(join(tmpdir(), 'argo-elsewhere-'));
    chmodSync(elsewhere, 0o755);
    symlinkSync(elsewhere, join(home, 'logs'));
    await ensurePrivateDir(join(home, 'logs'));
    expect(statSync(elsewhere).mode & 0o777).toBe(0o700);
  });

  it('nothing is made in another user\'s data home: no folder, no file; a turn to rescue goes to a private temporary folder', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-theirs-'));
    chownSync(home, OTHER, OTHER);
    const refusal = `${home} belongs to another user (uid ${OTHER}); Argo writes only in a data home of your own (set ARGO_HOME or --home to a folder of yours)`;
    await expect(ensureHomeDir(home)).rejects.toThrow(refusal);
    for (const name of ['locks', 'logs', 'sessions', 'jobs']) await expect(ensurePrivateDir(join(home, name))).rejects.toThrow(ForeignFolderError);
    await expect(ensureHomeFolder(home, 'unfinished')).rejects.toThrow(refusal);
    await expect(writeFileAtomic(join(home, 'memo.json'), '{}', { inHome: true })).rejects.toThrow(refusal);
    const saved = await rescueText(home, '{"user_prompt":"keep me"}\n');
    expect(saved.startsWith(join(tmpdir(), 'argo-rescued-'))).toBe(true);
    expect(readdirSync(home)).toEqual([]);
  });

  it('a link another user made in place of the data home is refused, wherever it leads', async () => {
    const parent = sharedHome();
    const target = mkdtempSync(join(tmpdir(), 'argo-target-'));
    const home = join(parent, 'argo');
    symlinkSync(target, home);
    lchownSync(home, OTHER, OTHER);
    await expect(ensurePrivateDir(join(home, 'logs'))).rejects.toThrow(`${home} is a link another user (uid ${OTHER}) made`);
    expect(existsSync(join(target, 'logs'))).toBe(false);
  });

  it('a folder of the user\'s own in a home of theirs is used as before', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-mine-'));
    mkdirSync(join(home, 'logs'), { mode: 0o755 });
    await ensurePrivateDir(join(home, 'logs'));
    expect(statSync(join(home, 'logs')).mode & 0o777).toBe(0o700);
  });
});
