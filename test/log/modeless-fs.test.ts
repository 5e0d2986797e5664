// A data home on a file system without hard links or modes (exFAT, FAT, SMB, some FUSE mounts): link
// and chmod fail there even for the owner. A stand-in for node:fs/promises fails them as such a
// file system does, under one folder, so the test runs anywhere, as any user.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

const modeless = vi.hoisted(() => ({ under: null as string | null, linkCode: 'ENOTSUP', failWriteOf: null as string | null }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof FsPromises>();
  const refused = (code: string) => Promise.reject(Object.assign(new Error(`${code}: not on this file system`), { code }));
  const inside = (path: unknown): boolean => modeless.under !== null && String(path).startsWith(modeless.under);
  const link: typeof original.link = (existing, target) => (inside(target) ? refused(modeless.linkCode) : original.link(existing, target));
  const chmod: typeof original.chmod = (path, mode) => (inside(path) ? refused('EPERM') : original.chmod(path, mode));
  const open: typeof original.open = async (...args) => {
    const handle = await original.open(...args);
    const path = String(args[0]);
    if (inside(path)) handle.chmod = () => refused('EPERM');
    if (modeless.failWriteOf === path) handle.writeFile = () => refused('ENOSPC');
    return handle;
  };
  const replaced = { link, chmod, open };
  return { ...original, ...replaced, default: { ...original, ...replaced } };
});

const { createFileExclusive, ensureHomeFolder, ensurePrivateDir, openForAppend } = await import('../../src/log/fs.js');
const { openSession } = await import('../../src/sessions/store.js');

function modelessHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'argo-modeless-'));
  modeless.under = home;
  return home;
}

describe('createFileExclusive without hard links', () => {
  it.each(['ENOTSUP', 'EOPNOTSUPP', 'EPERM', 'ENOSYS', 'EINVAL'])('link failing with %s: the file is created in place, whole, 0600, and no temporary is left', async (code) => {
    modeless.linkCode = code;
    const home = modelessHome();
    const target = join(home, 'sessions', 'work.json');
    expect(await createFileExclusive(target, '{"name":"work"}\n')).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('{"name":"work"}\n');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(home, 'sessions'))).toEqual(['work.json']);
    // Something there already: false, as with links, and the file is untouched.
    expect(await createFileExclusive(target, 'other')).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('{"name":"work"}\n');
  });

  it('of many creators at once, exactly one wins and the file holds its text', async () => {
    modeless.linkCode = 'ENOTSUP';
    const home = modelessHome();
    const target = join(home, 'STOP');
    const wins = await Promise.all(Array.from({ length: 20 }, (_, i) => createFileExclusive(target, `creator ${i}\n`, { inHome: true })));
    expect(wins.filter(Boolean)).toHaveLength(1);
    expect(readFileSync(target, 'utf8')).toBe(`creator ${wins.indexOf(true)}\n`);
    expect(readdirSync(home)).toEqual(['STOP']);
  });

  it("a session's first turns at once agree on one record: a loser may find it part-written, and reads again", async () => {
    modeless.linkCode = 'ENOTSUP';
    const dir = join(modelessHome(), 'sessions');
    for (let round = 0; round < 5; round++) {
      const name = `race${round}`;
      const records = await Promise.all(Array.from({ length: 20 }, () => openSession(dir, name, '2026-11-27T10:00:00.000+00:00')));
      expect(new Set(records.map((record) => record.id)).size).toBe(1);
    }
  });

  it('a write that fails in place leaves no part-written file behind', async () => {
    modeless.linkCode = 'ENOTSUP';
    const home = modelessHome();
    const target = join(home, 'memo.json');
    modeless.failWriteOf = target;
    try {
      await expect(createFileExclusive(target, '{}', { inHome: true })).rejects.toThrow(/ENOSPC/);
      expect(readdirSync(home)).toEqual([]);
    } finally {
      modeless.failWriteOf = null;
    }
  });

  it('another failure of link is still an error', async () => {
    modeless.linkCode = 'EIO';
    const home = modelessHome();
    await expect(createFileExclusive(join(home, 'STOP'), 'x', { inHome: true })).rejects.toThrow(/EIO/);
    expect(readdirSync(home)).toEqual([]);
  });
});

describe('folders and files whose mode cannot be changed', () => {
  it('a folder left open is used as it is, not refused', async () => {
    const home = modelessHome();
    const folder = join(home, 'logs');
    mkdirSync(folder, { mode: 0o755 });
    chmodSync(folder, 0o755);
    await expect(ensurePrivateDir(folder)).resolves.toBeUndefined();
    await expect(ensureHomeFolder(home, 'unfinished')).resolves.toBe(join(home, 'unfinished'));
  });

  it('a log file left open is appended to, not refused', async () => {
    const home = modelessHome();
    const file = join(home, 'today.log');
    writeFileSync(file, 'a\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    const { handle, size } = await openForAppend(file);
    await handle.close();
    expect(size).toBe(2);
  });
});
