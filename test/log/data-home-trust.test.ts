// What Argo trusts in a data home other users can write in: only folders and links of the user's
// own. The cases with another user's need root (chown); elsewhere they are skipped.
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForeignFolderError, ForeignLinkError, ensureHomeDir, ensureHomeFolder, ensurePrivateDir, rescueText, writeFileAtomic } from '../../src/log/fs.js';

const OTHER = 65534;
const asRoot = process.getuid?.() === 0;

describe.runIf(asRoot)('as root: another user\'s files, folders and links in the data home (skipped unless the tests run as root)', () => {
  /** A home of root's that anyone may write in (sticky, as /tmp). */
  const sharedHome = (): string => {
    const home = mkdtempSync(join(tmpdir(), 'argo-shared-'));
    chmodSync(home, 0o1777);
    return home;
  };

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
