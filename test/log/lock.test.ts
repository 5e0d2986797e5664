// Locks between Argo processes, as seen from one process with many callers (a server logging many
// turns at once): its callers queue in memory, so only one of them at a time tries the lock file.
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as lockfile from 'proper-lockfile';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockTimeoutError, LockWaitAbortedError, locksInUse, takeSessionLocks, waitWords, whenLockWaitIsLong, withLock, withSessionLock } from '../../src/log/lock.js';
import { tempData } from '../query/helpers.js';
import { waitFor } from '../support/wait.js';

vi.mock('proper-lockfile', async (importOriginal) => {
  const real = await importOriginal<typeof lockfile>();
  // withLock calls the default export's lock (the shape the bundle gives a CommonJS module): one spy for both.
  const lock = vi.fn(real.lock);
  return { ...real, lock, default: { ...real, lock } };
});

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

afterEach(() => {
  vi.mocked(lockfile.lock).mockClear();
});

describe('withLock with many callers in one process', () => {
  it('runs them one at a time in call order, tries the lock file once each, and keeps nothing afterwards', async () => {
    const { home } = tempData();
    const dir = join(home, 'locks');
    const order: number[] = [];
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        withLock(dir, 'session-a', 'session a', async () => {
          inside++;
          most = Math.max(most, inside);
          await tick();
          order.push(i);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order).toEqual(Array.from({ length: 30 }, (_, i) => i));
    // No caller found the lock taken (ELOCKED) and polled: each tried it exactly once.
    expect(lockfile.lock).toHaveBeenCalledTimes(30);
    expect(locksInUse()).toBe(0);
  });

  it('makes its lock directory private (0700), whatever the umask', async () => {
    const { home } = tempData();
    const dir = join(home, 'locks');
    await withLock(dir, 'a', 'a', () => {
      expect(statSync(join(dir, 'a.lock')).mode & 0o777).toBe(0o700);
      return Promise.resolve();
    });
  });

  it('different locks do not wait for each other', async () => {
    const { home } = tempData();
    const dir = join(home, 'locks');
    let releaseA: () => void = () => undefined;
    const holdingA = withLock(dir, 'a', 'a', () => new Promise<void>((resolve) => (releaseA = resolve)));
    await waitFor(() => expect(locksInUse()).toBe(1));
    await withLock(dir, 'b', 'b', () => Promise.resolve());
    releaseA();
    await holdingA;
    expect(locksInUse()).toBe(0);
  });

  it('a caller that waits past its bound gets LockTimeoutError; those behind it still get their turn', async () => {
    const { home } = tempData();
    const dir = join(home, 'locks');
    let release: () => void = () => undefined;
    const holder = withLock(dir, 'log', 'the log', () => new Promise<void>((resolve) => (release = resolve)));
    await waitFor(() => expect(lockfile.lock).toHaveBeenCalledTimes(1));
    const impatient = withLock(dir, 'log', 'the log', () => Promise.resolve('ran'), 20);
    const patient = withLock(dir, 'log', 'the log', () => Promise.resolve('ran'));
    await expect(impatient).rejects.toBeInstanceOf(LockTimeoutError);
    release();
    await holder;
    await expect(patient).resolves.toBe('ran');
    expect(locksInUse()).toBe(0);
  });
});

describe('a wait on another process', () => {
  afterEach(() => {
    whenLockWaitIsLong(null);
  });

  it('is said once past its threshold (a second in the CLI: the command would look stuck), never for a lock had at once', async () => {
    const { home } = tempData();
    const dir = join(home, 'locks');
    const said: string[] = [];
    whenLockWaitIsLong((line) => said.push(line), 50);
    await withLock(dir, 'log', 'the log', () => Promise.resolve());
    expect(said).toEqual([]);
    // Another process's lock: the directory proper-lockfile makes, fresh, so not stale.
    mkdirSync(join(dir, 'log.lock'));
    await expect(withLock(dir, 'log', 'the log in /x', () => Promise.resolve(), 300)).rejects.toBeInstanceOf(LockTimeoutError);
    expect(said).toEqual(['waiting for the log in /x, locked by another argo process (a lock left by one that died is taken over after 10 s)']);
  });
});

describe('a lock wait given up says how long it waited, truthfully', () => {
  it.each<[number, string]>([
    // timeouts.lockWaitMs → the message's "for more than …": under a second in ms, else seconds to a tenth, rounded down.
    [1, '1ms'],
    [50, '50ms'],
    [499, '499ms'],
    [500, '500ms'],
    [999, '999ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [1999, '1.9s'],
    [2000, '2s'],
    [30_000, '30s'],
    [3_600_000, '3600s'],
  ])('%i ms is %s', (waitMs, words) => {
    expect(waitWords(waitMs)).toBe(words);
  });

  it.each<[number, RegExp]>([
    [1500, /^the log in \/x has been locked by another argo process for more than 1\.5s \(a long "argo logs rm" or "prune"\?\); try again when it is done, or remove .*log\.lock if no argo process is running$/],
    [300, /^the log in \/x has been locked by another argo process for more than 300ms \(a long/],
    // Tried once, not waited for: no length is said.
    [0, /^the log in \/x has been locked by another argo process \(a long/],
  ])('a lock held elsewhere, a wait of %i ms: %s', async (waitMs, message) => {
    const { home } = tempData();
    const dir = join(home, 'locks');
    mkdirSync(join(dir, 'log.lock'), { recursive: true });
    await expect(withLock(dir, 'log', 'the log in /x', () => Promise.resolve(), waitMs)).rejects.toThrow(message);
  });
});

describe('a wait given up (its signal aborted: a tool call cut or timed out)', () => {
  it.each<[string, (dir: string) => Promise<() => Promise<void>>]>([
    // who holds the lock → how it is let go afterwards
    [
      'another process',
      (dir) => {
        // The directory proper-lockfile makes, fresh, so not stale.
        mkdirSync(join(dir, 'memo.lock'), { recursive: true });
        return Promise.resolve(() => {
          rmdirSync(join(dir, 'memo.lock'));
          return Promise.resolve();
        });
      },
    ],
    [
      'an earlier caller in this process',
      async (dir) => {
        let release: () => void = () => undefined;
        const holding = withLock(dir, 'memo', 'the memo', () => new Promise<void>((resolve) => (release = resolve)));
        await waitFor(() => expect(lockfile.lock).toHaveBeenCalledTimes(1));
        return async () => {
          release();
          await holding;
        };
      },
    ],
  ])('held by %s: ends with LockWaitAbortedError, and the work never runs', async (_case, hold) => {
    const { home } = tempData();
    const dir = join(home, 'locks');
    const letGo = await hold(dir);
    const controller = new AbortController();
    let ran = false;
    const waiting = withLock(dir, 'memo', 'the memo', () => Promise.resolve((ran = true)), 60_000, controller.signal);
    await waitFor(() => expect(locksInUse()).toBe(1));
    controller.abort();
    await expect(waiting).rejects.toThrow(new LockWaitAbortedError('stopped waiting for the memo: the work was cut'));
    await letGo();
    expect(ran).toBe(false);
    await waitFor(() => expect(locksInUse()).toBe(0));
    expect(existsSync(join(dir, 'memo.lock'))).toBe(false);
  });

  it('a signal aborted already: the lock is not even tried', async () => {
    const { home } = tempData();
    const controller = new AbortController();
    controller.abort();
    await expect(withLock(join(home, 'locks'), 'memo', 'the memo', () => Promise.resolve(), 60_000, controller.signal)).rejects.toBeInstanceOf(LockWaitAbortedError);
    expect(lockfile.lock).not.toHaveBeenCalled();
    expect(locksInUse()).toBe(0);
  });
});

describe('takeSessionLocks (every session\'s lock, for maintenance)', () => {
  it('takes them in the order given, as withSessionLock takes each, and lets them all go', async () => {
    const { home, paths } = tempData();
    const locks = join(home, 'locks');
    const ids = ['a', 'b', 'c', 'odd/id'];
    const release = await takeSessionLocks(paths.logs, ids);
    const names = ['session-a', 'session-b', 'session-c', `session-${Buffer.from('odd/id').toString('hex')}`];
    expect(readdirSync(locks).sort()).toEqual(names.map((name) => `${name}.lock`).sort());
    expect(vi.mocked(lockfile.lock).mock.calls.map(([target]) => target)).toEqual(names.map((name) => join(locks, name)));
    expect(locksInUse()).toBe(4);
    // A turn of one of them waits until they are let go.
    let ran = false;
    const turn = withSessionLock(paths.logs, 'b', () => Promise.resolve((ran = true)));
    // Its lock is not even tried while this process holds it: the in-process queue holds the turn back.
    for (let turnOfLoop = 0; turnOfLoop < 20; turnOfLoop++) await new Promise((resolve) => setImmediate(resolve));
    expect(vi.mocked(lockfile.lock).mock.calls).toHaveLength(4);
    expect(ran).toBe(false);
    await release();
    await turn;
    expect(ran).toBe(true);
    expect(readdirSync(locks)).toEqual([]);
    expect(locksInUse()).toBe(0);
  });

  it('one that cannot be had in time lets those taken go, and says which', async () => {
    const { home, paths } = tempData();
    const locks = join(home, 'locks');
    // Another process holds b's lock: the directory proper-lockfile makes, fresh, so not stale.
    mkdirSync(join(locks, 'session-b.lock'), { recursive: true });
    await expect(takeSessionLocks(paths.logs, ['a', 'b', 'c'], 50)).rejects.toThrow(/^session b has been locked by another argo process/);
    expect(existsSync(join(locks, 'session-a.lock'))).toBe(false);
    expect(existsSync(join(locks, 'session-c.lock'))).toBe(false);
    expect(locksInUse()).toBe(0);
  });
});
