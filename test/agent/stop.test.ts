import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { RuntimeError } from '../../src/errors.js';
import { HOME_WAIT_MS, STALE_STOP_MARGIN_MS, STOP_ABORT, abortOnStop, clearLeaves, clearStop, isStaleStop, isStopSet, setStop, stopPath, stopState, watchStopFile } from '../../src/agent/stop.js';
import { waitFor } from '../support/wait.js';

const home = (): string => mkdtempSync(join(tmpdir(), 'argo-stop-'));

/** What each test plants at STOP before the call. */
const plants: Record<string, (path: string) => void> = {
  nothing: () => undefined,
  'a regular file': (path) => writeFileSync(path, '2026-01-01T00:00:00.000Z\n'),
  'a dangling link': (path) => symlinkSync(join(path, '..', 'gone'), path),
  'a link to a regular file': (path) => {
    writeFileSync(join(path, '..', 'real'), 'x');
    symlinkSync(join(path, '..', 'real'), path);
  },
  'an empty folder': (path) => mkdirSync(path),
  'a folder with a file': (path) => {
    mkdirSync(path);
    writeFileSync(join(path, 'keep'), 'x');
  },
};

describe('the STOP signal: set only when STOP is a regular file (lstat)', () => {
  it.each([
    ['nothing', 'unset', false],
    ['a regular file', 'set', true],
    ['a dangling link', 'other', false],
    ['a link to a regular file', 'other', false],
    ['an empty folder', 'other', false],
  ])('with %s, stopState is %s and isStopSet %s', (plant, kind, set) => {
    const dir = home();
    plants[plant]?.(stopPath(dir));
    expect(stopState(dir).kind).toBe(kind);
    expect(isStopSet(dir)).toBe(set);
  });

  it.each([
    ['nothing', { kind: 'now' }],
    ['a regular file', { kind: 'set' }],
    ['a dangling link', { kind: 'other', what: 'a symbolic link' }],
    ['an empty folder', { kind: 'other', what: 'a folder' }],
  ])('setStop with %s gives %j and changes nothing already there', async (plant, expected) => {
    const dir = home();
    plants[plant]?.(stopPath(dir));
    const before = stopState(dir);
    const result = await setStop(dir, new Date('2026-02-02T00:00:00.000Z'));
    // An earlier STOP keeps its own time: compare the kind, and the file's text below.
    expect(result.kind).toBe(expected.kind);
    if (expected.kind === 'other') expect(result).toEqual(expected);
    if (plant === 'nothing') expect(readFileSync(stopPath(dir), 'utf8')).toBe('2026-02-02T00:00:00.000Z\n');
    if (plant === 'a regular file') expect(readFileSync(stopPath(dir), 'utf8')).toBe('2026-01-01T00:00:00.000Z\n');
    if (before.kind !== 'unset') expect(stopState(dir).kind).toBe(before.kind);
  });

  it.each([
    ['nothing', 'unset'],
    ['a regular file', 'set'],
    ['a dangling link', 'other'],
    ['a link to a regular file', 'other'],
    ['an empty folder', 'other'],
  ])('clearStop with %s removes it and says it was %s', async (plant, kind) => {
    const dir = home();
    plants[plant]?.(stopPath(dir));
    expect((await clearStop(dir)).kind).toBe(kind);
    expect(stopState(dir).kind).toBe('unset');
    // A link goes, what it points to stays.
    if (plant === 'a link to a regular file') expect(statSync(join(dir, 'real')).isFile()).toBe(true);
  });

  it('clearStop leaves a folder with files in it, with a one-line error naming it', async () => {
    const dir = home();
    plants['a folder with a file']?.(stopPath(dir));
    const error: unknown = await clearStop(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as Error).message).toBe(`${stopPath(dir)} is a folder with files in it, not the STOP signal; move or delete it yourself`);
    expect(statSync(join(stopPath(dir), 'keep')).isFile()).toBe(true);
  });
});

describe('what is at STOP when it is not the signal is said as what it is', () => {
  /** Plants `kind` at STOP; returns what ends it (a socket's server). */
  const kinds: Record<string, (path: string) => Promise<() => void>> = {
    'a named pipe': (path) => {
      execFileSync('mkfifo', [path]);
      return Promise.resolve(() => undefined);
    },
    'a socket': (path) =>
      new Promise((resolve) => {
        const server = createServer().listen(path, () => resolve(() => server.close()));
      }),
    'a folder': (path) => {
      mkdirSync(path);
      return Promise.resolve(() => undefined);
    },
    'a symbolic link': (path) => {
      symlinkSync(join(path, '..', 'gone'), path);
      return Promise.resolve(() => undefined);
    },
  };
  it.each(Object.keys(kinds))('%s: stopState, setStop and clearStop say so, and clearStop removes it', async (kind) => {
    const dir = home();
    const end = await kinds[kind]?.(stopPath(dir));
    try {
      expect(stopState(dir)).toEqual({ kind: 'other', what: kind });
      expect(await setStop(dir, new Date())).toEqual({ kind: 'other', what: kind });
      expect(clearLeaves(dir, stopState(dir))).toBe(false);
      expect(await clearStop(dir)).toEqual({ kind: 'other', what: kind });
      expect(stopState(dir)).toEqual({ kind: 'unset' });
    } finally {
      end?.();
    }
  });
});

describe('clearLeaves: what --status says --clear removes is what clearStop removes', () => {
  it.each([
    ['nothing', false],
    ['a regular file', false],
    ['a dangling link', false],
    ['a link to a regular file', false],
    ['an empty folder', false],
    ['a folder with a file', true],
  ])('with %s: %s, and clearStop agrees', async (plant, leaves) => {
    const dir = home();
    plants[plant]?.(stopPath(dir));
    expect(clearLeaves(dir, stopState(dir))).toBe(leaves);
    const cleared = await clearStop(dir).then(
      () => true,
      () => false,
    );
    expect(cleared).toBe(!leaves);
  });
});

describe('isStaleStop: a STOP set before this machine last booted', () => {
  const now = new Date('2026-11-27T12:00:00.000Z');
  const hour = 3600;
  const bootedAt = now.getTime() - hour * 1000;
  it.each([
    ['a day before the boot', bootedAt - 86_400_000, hour, true],
    ['just past the margin before the boot', bootedAt - STALE_STOP_MARGIN_MS - 1, hour, true],
    ['right at the margin before the boot (unsure: kept)', bootedAt - STALE_STOP_MARGIN_MS, hour, false],
    ['30 s before the boot (a clock stepped at boot may put it there)', bootedAt - 30_000, hour, false],
    ['at the boot', bootedAt, hour, false],
    ['after the boot (set while this machine ran)', bootedAt + 60_000, hour, false],
    ['a minute ago', now.getTime() - 60_000, hour, false],
    ['in the future (another machine\'s clock)', now.getTime() + 3_600_000, hour, false],
    ['a year ago on a machine up for two years', now.getTime() - 365 * 86_400_000, 2 * 365 * 86_400, false],
    ['a second before a boot a second ago', now.getTime() - 2000, 1, false],
  ])('%s: stale %s', (_name, since, uptime, stale) => {
    expect(isStaleStop(new Date(since), now, uptime)).toBe(stale);
  });
});

describe('abortOnStop: a run is cut the moment STOP appears', () => {
  it('aborts with STOP_ABORT when STOP is set, and only then', async () => {
    const dir = home();
    const cut = abortOnStop(dir);
    // A second watch, opened after the first, tells when the first has heard the same events.
    const seen = vi.fn();
    const close = watchStopFile(dir, seen);
    try {
      // Other files, and a folder named STOP, are not the signal.
      writeFileSync(join(dir, 'memo.json'), '{}');
      mkdirSync(stopPath(dir));
      await waitFor(() => expect(seen).toHaveBeenCalled());
      expect(cut.signal.aborted).toBe(false);
      await clearStop(dir);
      await setStop(dir, new Date());
      await waitFor(() => expect(cut.signal.aborted).toBe(true));
      expect(cut.signal.reason).toBe(STOP_ABORT);
    } finally {
      close?.();
      cut.close();
    }
  });

  it('a file named STOP in another case is looked at (on macOS the file system finds it as STOP)', async () => {
    const dir = home();
    const seen = vi.fn();
    const close = watchStopFile(dir, seen);
    try {
      writeFileSync(join(dir, 'stop'), 'by hand\n');
      await waitFor(() => expect(seen).toHaveBeenCalled());
    } finally {
      close?.();
    }
  });

  it('after close, STOP no longer aborts; a watch of a home that is not there closes without error', async () => {
    const dir = home();
    const cut = abortOnStop(dir);
    cut.close();
    await setStop(dir, new Date());
    // A second watch sees the STOP, so the first would have by now.
    const seen = vi.fn();
    const close = watchStopFile(dir, seen);
    writeFileSync(stopPath(dir), 'again\n');
    await waitFor(() => expect(seen).toHaveBeenCalled());
    close?.();
    expect(cut.signal.aborted).toBe(false);
    const gone = abortOnStop(join(dir, 'missing'));
    expect(() => gone.close()).not.toThrow();
  });

  it('a home under a regular file cannot be watched: no watch, no error', () => {
    const dir = home();
    writeFileSync(join(dir, 'file'), 'x');
    expect(watchStopFile(join(dir, 'file', 'home'), vi.fn())).toBeNull();
  });
});

describe('abortOnStop in a home not made yet: looked for, never made, watched once there', () => {
  // [case, where the home is under a fresh folder, whether STOP comes with the home or after the watch began]
  it.each<[string, string, 'with the home' | 'after']>([
    ['the home and STOP made together (argo stop in a fresh home)', 'home', 'with the home'],
    ['the home made by the run, STOP later', 'home', 'after'],
    ['a home whose parent is missing too', join('parent', 'home'), 'after'],
  ])('%s: heard', async (_case, under, when) => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const dir = join(home(), under);
    const cut = abortOnStop(dir);
    try {
      vi.advanceTimersByTime(HOME_WAIT_MS * 4);
      expect(existsSync(dir)).toBe(false);
      mkdirSync(dir, { recursive: true });
      if (when === 'with the home') writeFileSync(stopPath(dir), 'set\n');
      vi.advanceTimersByTime(HOME_WAIT_MS);
      expect(cut.signal.aborted).toBe(when === 'with the home');
      if (when === 'after') await setStop(dir, new Date());
      await waitFor(() => expect(cut.signal.reason).toBe(STOP_ABORT));
    } finally {
      cut.close();
      vi.useRealTimers();
    }
  });

  it('closed before the home appears, it stops looking and hears nothing', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const dir = join(home(), 'home');
    const seen = vi.fn();
    try {
      const close = watchStopFile(dir, seen);
      expect(vi.getTimerCount()).toBe(1);
      close?.();
      expect(vi.getTimerCount()).toBe(0);
      mkdirSync(dir);
      writeFileSync(stopPath(dir), 'set\n');
      vi.advanceTimersByTime(HOME_WAIT_MS * 2);
      expect(seen).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });
});
