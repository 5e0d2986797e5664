// What Argo trusts in a data home other users can write in: only files, folders and links of the
// user's own. The cases with another user's files need root (chown); elsewhere they are skipped.
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForeignFolderError, ForeignLinkError, UntrustedFileError, distrustOf, privateGroupOf, trustedOwner, ensureHomeDir, ensureHomeFolder, ensurePrivateDir, readDataBytes, readDataText, rescueText, writeFileAtomic } from '../../src/log/fs.js';
import type { Reader } from '../../src/log/fs.js';

const ME = 1000;
const OTHER = 65534;
const asRoot = process.getuid?.() === 0;

describe('distrustOf: a file of the data home is read only when it is the user\'s (or root\'s) and others cannot change it', () => {
  const GROUP = 1000;
  const SHARED = 100;
  const file = (uid: number, mode: number, gid = SHARED) => ({ uid, gid, mode: 0o100000 | mode });
  const folder = (uid: number, mode: number) => ({ uid, mode: 0o040000 | mode });
  /** The reader: uid 1000, whose primary group 1000 is their private group unless said otherwise. */
  const me = (privateGroup: number | null = GROUP): Reader => ({ uid: ME, privateGroup });
  it.each<[string, ReturnType<typeof file>, ReturnType<typeof folder> | null, Reader | undefined, ReturnType<typeof distrustOf>]>([
    ['mine, 0600', file(ME, 0o600), null, me(), null],
    ['mine, 0644 (others read, never write)', file(ME, 0o644), null, me(), null],
    ['mine, read-only 0400', file(ME, 0o400), null, me(), null],
    ['another user\'s, 0600', file(OTHER, 0o600), null, me(), { owner: OTHER }],
    ['another user\'s, 0644, in their private group', file(OTHER, 0o644, OTHER), null, me(), { owner: OTHER }],
    ['another user\'s, read by root (never exempt)', file(OTHER, 0o600), null, { uid: 0, privateGroup: 0 }, { owner: OTHER }],
    // root: trusted as an owner, as ssh trusts it (a Nix store file, one an admin provisioned)
    ['root\'s, 0444 (a Nix store file)', file(0, 0o444, 0), null, me(), null],
    ['root\'s, 0644', file(0, 0o644, 0), folder(0, 0o755), me(), null],
    ['root\'s, but others may write (0666)', file(0, 0o666, 0), folder(0, 0o755), me(), { mode: 0o666 }],
    ['root\'s, its group (root) may write (0664)', file(0, 0o664, 0), folder(0, 0o755), me(), { mode: 0o664 }],
    ['root\'s, group-writable in my private group', file(0, 0o664, GROUP), folder(0, 0o755), me(), null],
    ['root\'s, read by root', file(0, 0o600, 0), null, { uid: 0, privateGroup: 0 }, null],
    // the group's write, with a user private group (umask 002 on Debian, Ubuntu, Fedora)
    ['mine, 0664 in my private group, folder 0775 (umask 002)', file(ME, 0o664, GROUP), folder(ME, 0o775), me(), null],
    ['mine, 0664 in my private group, folder unknown', file(ME, 0o664, GROUP), null, me(), null],
    ['mine, 0664 in my private group, in a 0777 folder of another user\'s', file(ME, 0o664, GROUP), folder(OTHER, 0o777), me(), null],
    ['mine, 0666 in my private group: others still write', file(ME, 0o666, GROUP), folder(ME, 0o775), me(), { mode: 0o666 }],
    ['mine, 0664 in a shared group (users)', file(ME, 0o664, SHARED), folder(ME, 0o775), me(), { mode: 0o664 }],
    ['mine, 0664 in my primary group, which is no private group (LDAP, or others in it)', file(ME, 0o664, GROUP), folder(ME, 0o775), me(null), { mode: 0o664 }],
    ['mine, 0664, in a group of the gid my private group has not', file(ME, 0o664, GROUP + 1), folder(ME, 0o775), me(), { mode: 0o664 }],
    // the group's and others' write, where they cannot reach the file
    ['mine, others may write (0666), folder unknown', file(ME, 0o666), null, me(), { mode: 0o666 }],
    ['mine, 0664 in a folder the group may enter (0750)', file(ME, 0o664), folder(ME, 0o750), me(), { mode: 0o664 }],
    ['mine, 0664 in a 0700 folder of mine: nobody else reaches it', file(ME, 0o664), folder(ME, 0o700), me(null), null],
    ['mine, 0666 in a 0711 folder of mine: others may enter it', file(ME, 0o666), folder(ME, 0o711), me(), { mode: 0o666 }],
    ['mine, 0620 in a 0701 folder: others enter, but only the group writes, and it cannot enter', file(ME, 0o620), folder(ME, 0o701), me(), null],
    ['mine, 0664 in a 0700 folder of another user\'s', file(ME, 0o664), folder(OTHER, 0o700), me(), { mode: 0o664 }],
    ['mine, 0664 in a 0700 folder of root\'s (not the user\'s: root may let others in)', file(ME, 0o664), folder(0, 0o700), me(), { mode: 0o664 }],
    ['mine, 0666 in a sticky 1777 folder', file(ME, 0o666), folder(ME, 0o1777), me(), { mode: 0o666 }],
    ['no uids (Windows): trusted', file(OTHER, 0o666), null, undefined, null],
  ])('%s', (_case, stats, parent, reader, expected) => {
    expect(distrustOf(stats, parent, reader)).toEqual(expected);
  });
});

describe('trustedOwner: whose files and links are trusted (the user\'s and root\'s, as ssh)', () => {
  it.each<[string, number, number, boolean]>([
    ['the user\'s', ME, ME, true],
    ['root\'s, for a user', 0, ME, true],
    ['root\'s, for root', 0, 0, true],
    ['another user\'s', OTHER, ME, false],
    ['a user\'s, for root', ME, 0, false],
  ])('%s', (_case, owner, uid, trusted) => {
    expect(trustedOwner(owner, uid)).toBe(trusted);
  });
});

describe('privateGroupOf: a user private group is a group of the user\'s name with no other member', () => {
  const GROUPS = ['root:x:0:', 'users:x:100:alice,bob', 'alice:x:1000:', 'bob:x:1001:bob', 'carol:x:1002:carol,dave', 'erin:x:1003:dave', 'dev:x:1004:', '+:::', '# a comment', ''].join('\n');
  it.each<[string, string, number, string, boolean]>([
    ['alice\'s own group, no members', GROUPS, 1000, 'alice', true],
    ['bob\'s, listing only bob', GROUPS, 1001, 'bob', true],
    ['carol\'s, listing dave too', GROUPS, 1002, 'carol', false],
    ['named erin, listing only dave', GROUPS, 1003, 'erin', false],
    ['a group of another name (dev) as the primary group', GROUPS, 1004, 'alice', false],
    ['a shared group (users)', GROUPS, 100, 'alice', false],
    ['a gid not listed (LDAP, sssd)', GROUPS, 5000, 'alice', false],
    ['root\'s', GROUPS, 0, 'root', true],
    ['the first entry of a gid decides, as getgrgid', 'team:x:1000:\nalice:x:1000:', 1000, 'alice', false],
    ['CRLF line ends', 'alice:x:1000:\r\n', 1000, 'alice', true],
    ['an empty /etc/group', '', 1000, 'alice', false],
  ])('%s', (_case, text, gid, name, expected) => {
    expect(privateGroupOf(text, gid, name)).toBe(expected);
  });
});

/** Whether the group files of this run's are made in is its user's private group, by this machine's /etc/group. */
const runnerPrivate = ((): boolean => {
  try {
    return privateGroupOf(readFileSync('/etc/group', 'utf8'), process.getgid?.() ?? -1, userInfo().username);
  } catch {
    return false;
  }
})();

describe('readDataText and readDataBytes refuse a file others can change', () => {
  const GROUP_WRITES = /can be written by other users \(mode 664\)/;
  // [case, folder's mode, file's mode, its group: the runner's own or a shared one (chgrp: root only), refusal]
  it.each(([
    ['a 0600 file in an open folder', 0o777, 0o600, 'own', null],
    ['a 0666 file in an open folder', 0o777, 0o666, 'own', /memo\.json can be written by other users \(mode 666\), and Argo reads only files others cannot change in its data home \(they decide what it sends and runs\): run "chmod go-w .*memo\.json"$/],
    ['a 0664 file of a shared group in a 0755 folder', 0o755, 0o664, 'shared', GROUP_WRITES],
    [`a 0664 file of the runner's group in a 0755 folder (${runnerPrivate ? 'its private group here' : 'no private group here'})`, 0o755, 0o664, 'own', runnerPrivate ? null : GROUP_WRITES],
    ['a 0664 file of a shared group in a 0700 folder', 0o700, 0o664, 'shared', null],
    ['a 0666 file of the runner\'s group in a 0775 folder: others still write', 0o775, 0o666, 'own', /mode 666/],
  ] satisfies [string, number, number, 'own' | 'shared', RegExp | null][]).filter(([, , , group]) => asRoot || group === 'own'))('%s', (_case, folderMode, fileMode, group, refused) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-trust-'));
    const path = join(home, 'memo.json');
    writeFileSync(path, '{"a":"b"}');
    chmodSync(path, fileMode);
    chmodSync(home, folderMode);
    if (group === 'shared') chownSync(path, process.getuid?.() ?? 0, OTHER);
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
    expect(() => readDataBytes(join(home, 'config.json'), { followLink: true })).toThrow(`${join(home, 'config.json')} is a link another user (uid ${OTHER}) made; Argo follows only links of your own (or root's) in its data home (remove it, or make it again as yourself)`);
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
