// A turn on a full disk (item 9), end to end through the use case: the append fails part-way, the
// torn bytes are cut back, the turn is rescued, and the error says what happened and where it went.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import type { Settings } from '../../src/config/settings.js';
import { RuntimeError } from '../../src/errors.js';
import type * as Fs from '../../src/log/fs.js';
import type * as Store from '../../src/sessions/store.js';
import { portsFor } from '../support/turn-ports.js';

const disk = vi.hoisted(() => ({ full: false, code: 'ENOSPC' }));
/** `disk.code` for a log folder of another user's, refused before any errno. */
const FOREIGN = 'another user';
/** `disk.code` for a day's log whose own mode refuses the write (a chmod 400): the file is named, not its folder. */
const READ_ONLY = 'a read-only file';
/** `disk.code` for a link another user made in place of the log folder. */
const FOREIGN_LINK = "another user's link";

vi.mock('../../src/log/fs.js', async (importOriginal) => {
  const original = await importOriginal<typeof Fs>();
  return {
    ...original,
    // The log's handle writes ten bytes, then fails as a full disk does (or with `disk.code`).
    openForAppend: async (path: string): Promise<{ handle: FileHandle; size: number }> => {
      const opened = await original.openForAppend(path);
      if (!disk.full || !path.endsWith('.log')) return opened;
      const handle = new Proxy(opened.handle, {
        get(target, key) {
          if (key === 'write') {
            return async (bytes: Buffer) => {
              await target.write(bytes.subarray(0, 10));
              if (disk.code === FOREIGN) throw new original.ForeignFolderError(dirname(path), 0, 'Argo keeps its data only in folders of its own (set ARGO_HOME to one)');
              if (disk.code === FOREIGN_LINK) throw new original.ForeignLinkError(dirname(path), 65534);
              if (disk.code === READ_ONLY) throw new original.UnwritableFileError(path, 'permission denied', `make it writable (chmod 600 ${path})`);
              throw Object.assign(new Error(`${disk.code}: cannot write`), { code: disk.code });
            };
          }
          const value: unknown = Reflect.get(target, key);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
      return { ...opened, handle };
    },
  };
});

// A new session's record that cannot be made: openSession fails with `records.code`.
const records = vi.hoisted(() => ({ code: null as string | null }));

vi.mock('../../src/sessions/store.js', async (importOriginal) => {
  const original = await importOriginal<typeof Store>();
  return {
    ...original,
    openSession: async (dir: string, name: string, now: string, id?: string) => {
      if (records.code !== null) throw Object.assign(new Error(`${records.code}: cannot make ${dir}/${name}.json`), { code: records.code });
      return original.openSession(dir, name, now, id);
    },
  };
});

const { runTurn } = await import('../../src/turn/turn.js');

describe('a turn when the disk fills mid-append', () => {
  it('leaves no partial line, rescues the turn privately, and fails with a clear message', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-full-disk-'));
    const settings = loadSettings({ home, session: 'work' }, {});
    const ports = portsFor('turn00000001');
    disk.full = true;
    let error: unknown;
    try {
      await runTurn(settings, { prompt: 'keep me', replay: { kind: 'none' }, log: true, ollamaStream: true }, ports);
    } catch (caught) {
      error = caught;
    } finally {
      disk.full = false;
    }
    expect(error).toBeInstanceOf(RuntimeError);
    const message = (error as Error).message;
    expect(message).toMatch(/^cannot write the log in .*\/logs \(cannot append to .*\.log: the disk is full\); the turn was saved to .*\/rescued\/unlogged-.*\.ndjson — free some space on its disk \(df -h .*\/logs shows it\), then add the saved turn back \(docs\/troubleshooting\.md\)$/);

    const logs = join(home, 'logs');
    for (const file of readdirSync(logs)) expect(statSync(join(logs, file)).size).toBe(0);
    const [rescued] = readdirSync(join(home, 'rescued'));
    const saved = JSON.parse(readFileSync(join(home, 'rescued', rescued ?? ''), 'utf8')) as Record<string, unknown>;
    expect(saved).toMatchObject({ id: 'turn00000001', user_prompt: 'keep me', model_response: 'the answer', status: 'ok' });
  });
});

describe('a turn whose day log is a planted link', () => {
  it('writes nothing through it, rescues the turn, and names the link and the fix (not permissions or space)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-linked-log-'));
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'argo-elsewhere-')), 'target.log');
    writeFileSync(elsewhere, '');
    mkdirSync(join(home, 'logs'), { mode: 0o700 });
    symlinkSync(elsewhere, join(home, 'logs', '2025-03-04.log'));
    const settings = loadSettings({ home, session: 'work' }, {});
    const ports = portsFor('turn00000002');
    const error = await runTurn(settings, { prompt: 'keep me', replay: { kind: 'none' }, log: true, ollamaStream: true }, ports).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as Error).message).toMatch(
      /^cannot write the log: .*\/logs\/2025-03-04\.log is a symbolic link, and Argo does not follow links in its data home; the turn was saved to .*\/rescued\/unlogged-.*\.ndjson — replace the link with the real file, then add the saved turn back \(docs\/troubleshooting\.md\)$/,
    );
    expect(readFileSync(elsewhere, 'utf8')).toBe('');
    expect(readdirSync(join(home, 'rescued'))).toHaveLength(1);
  });
});

describe('a failed log write names the fix that fits its cause', () => {
  const attempt = async (settings: Settings, id: string): Promise<string> => {
    const error = await runTurn(settings, { prompt: 'keep me', replay: { kind: 'none' }, log: true, ollamaStream: true }, portsFor(id)).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RuntimeError);
    return (error as Error).message;
  };

  it.each<[string, (path: string) => void]>([
    ['a folder', (path) => mkdirSync(path, { mode: 0o700 })],
    ['a named pipe', (path) => execFileSync('mkfifo', [path])],
  ])('%s where the day\'s log goes: named, and moved away (not permissions or space)', async (kind, make) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-log-not-file-'));
    mkdirSync(join(home, 'logs'), { mode: 0o700 });
    const day = join(home, 'logs', '2025-03-04.log');
    make(day);
    const message = await attempt(loadSettings({ home, session: 'work' }, {}), 'turn00000003');
    const saved = join(home, 'rescued', readdirSync(join(home, 'rescued'))[0] ?? '');
    expect(message).toBe(`cannot write the log: ${day} is ${kind} where the day's log goes; the turn was saved to ${saved} — move it away, then add the saved turn back (docs/troubleshooting.md)`);
    expect(JSON.parse(readFileSync(saved, 'utf8'))).toMatchObject({ id: 'turn00000003', user_prompt: 'keep me' });
  });

  it('a file where logs/ goes: named as such, and moved out of the way (not permissions or space)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-folder-file-'));
    writeFileSync(join(home, 'logs'), 'junk');
    const message = await attempt(loadSettings({ home, session: 'work' }, {}), 'turn00000008');
    const saved = join(home, 'rescued', readdirSync(join(home, 'rescued'))[0] ?? '');
    expect(message).toBe(
      `cannot write the log: ${join(home, 'logs')} is a file, not a folder; Argo keeps its data in folders (move it out of the way); the turn was saved to ${saved} — mend that, then add the saved turn back (docs/troubleshooting.md)`,
    );
  });

  it.each([
    ['EDQUOT', /free some space on its disk \(df -h .*\/logs shows it\)/],
    ['EROFS', /its file system is read-only: make it writable or set ARGO_HOME to a folder on one/],
    ['EMFILE', /raise the limit on open files \(ulimit -n\)/],
    ['EACCES', /fix the folder's permissions or set ARGO_HOME to a folder you can write/],
    [FOREIGN, /run argo as the user who owns it, or set ARGO_HOME to a folder of your own/],
    // Not "replace the link with the real file": the link is not the user's, its message says what to do.
    [FOREIGN_LINK, /mend that/],
    [READ_ONLY, /make it writable \(chmod 600 .*\/logs\/[0-9-]+\.log\)/],
    ['EIO', /fix the directory's permissions or free space/],
  ])('the log write fails with %s: the fix for it', async (code, fix) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-log-code-'));
    disk.full = true;
    disk.code = code;
    try {
      const message = await attempt(loadSettings({ home, session: 'work' }, {}), 'turn00000005');
      expect(message).toMatch(new RegExp(` — ${fix.source}, then add the saved turn back \\(docs\\/troubleshooting\\.md\\)$`));
    } finally {
      disk.full = false;
      disk.code = 'ENOSPC';
    }
  });

  it('a log another argo holds past the wait: wait for it (not permissions or space)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-log-locked-'));
    const settings = loadSettings({ home, session: 'work' }, {});
    // Another process's fresh lock (proper-lockfile's directory): not stale for 10 s.
    mkdirSync(join(home, 'locks', 'log.lock'), { recursive: true, mode: 0o700 });
    const message = await attempt({ ...settings, timeouts: { ...settings.timeouts, lockWaitMs: 200 } }, 'turn00000004');
    expect(message).toMatch(/^cannot write the log in .*\(the log in .* has been locked by another argo process .*\); the turn was saved to .* — wait until the other argo is done, then add the saved turn back \(docs\/troubleshooting\.md\)$/);
  });
});

describe('a new session whose record cannot be made', () => {
  // [errno, the advice for it]: the turn is saved with the id its session was given, and the advice
  // says to make the record before adding it back (reindex makes none).
  it.each([
    ['EACCES', "fix the folder's permissions or set ARGO_HOME to a folder you can write"],
    ['ENOSPC', 'free some space on its disk \\(df -h .*\\/sessions shows it\\)'],
    ['EROFS', 'its file system is read-only: make it writable or set ARGO_HOME to a folder on one'],
  ])('%s: the saved line names the session and its id; the message says to make the record', async (code, fix) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-no-record-'));
    const settings = loadSettings({ home, session: 'fresh' }, {});
    records.code = code;
    let error: unknown;
    try {
      error = await runTurn(settings, { prompt: 'full from start', replay: { kind: 'none' }, log: true, ollamaStream: true }, portsFor('turn00000006')).then(
        () => null,
        (caught: unknown) => caught,
      );
    } finally {
      records.code = null;
    }
    const saved = join(home, 'rescued', readdirSync(join(home, 'rescued'))[0] ?? '');
    expect((error as Error).message).toMatch(
      new RegExp(`^cannot create session "fresh" in .*/sessions \\(${code}: cannot make .*/fresh\\.json\\); the turn was saved to ${saved} — ${fix}, then make the session's record and add the saved turn back \\(docs/troubleshooting\\.md\\)$`),
    );
    const line = JSON.parse(readFileSync(saved, 'utf8')) as { session: string; session_id: string };
    expect(line.session).toBe('fresh');
    expect(line.session_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('the record made at last takes the id the turn was given, so the saved turn is its own', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-record-id-'));
    const settings = loadSettings({ home, session: 'fresh' }, {});
    const { entry } = await runTurn(settings, { prompt: 'hello', replay: { kind: 'none' }, log: true, ollamaStream: true }, portsFor('turn00000007'));
    const record = JSON.parse(readFileSync(join(home, 'sessions', 'fresh.json'), 'utf8')) as { id: string };
    expect(entry.session_id).toBe(record.id);
  });
});
