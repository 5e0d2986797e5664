import * as fs from 'node:fs';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { STOP_FILE } from '../../src/agent/stop.js';
import { fileStopSignal } from '../../src/serve/stop.js';
import { waitFor } from '../support/wait.js';

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof fs>();
  return { ...actual, lstatSync: vi.fn(actual.lstatSync) };
});
const lstat = vi.mocked(fs.lstatSync);

let home: string;
let unwatch: () => void = () => undefined;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'argo-stop-'));
});
afterEach(() => {
  unwatch();
  rmSync(home, { recursive: true, force: true });
});

const signal = () => fileStopSignal(home, () => new Date('2026-11-23T12:00:00Z'));

describe('fileStopSignal', () => {
  it('without a watch, asks the disk every time', async () => {
    const stop = signal();
    expect(await stop.isSet()).toBe(false);
    writeFileSync(join(home, STOP_FILE), '');
    expect(await stop.isSet()).toBe(true);
  });

  it('while watching, hears STOP from another process come and go, and answers without asking the disk', async () => {
    const stop = signal();
    const heard = vi.fn();
    unwatch = stop.watch(heard);
    // The watch's first look settles what is known.
    await waitFor(() => expect(lstat).toHaveBeenCalled());
    await waitFor(async () => expect(await stop.isSet()).toBe(false));
    lstat.mockClear();
    for (let i = 0; i < 5; i++) expect(await stop.isSet()).toBe(false);
    expect(lstat).not.toHaveBeenCalled();

    writeFileSync(join(home, STOP_FILE), '');
    await waitFor(() => expect(heard).toHaveBeenCalledTimes(1));
    expect(await stop.isSet()).toBe(true);
    rmSync(join(home, STOP_FILE));
    await waitFor(async () => expect(await stop.isSet()).toBe(false));
    expect(heard).toHaveBeenCalledTimes(1);
  });

  it('its own set and clear are seen at once, watch or not', async () => {
    const stop = signal();
    unwatch = stop.watch(() => undefined);
    for (let i = 0; i < 3; i++) {
      await stop.set();
      expect(await stop.isSet()).toBe(true);
      await stop.clear();
      expect(await stop.isSet()).toBe(false);
    }
  });

  it('counts STOP as set only when it is a regular file, as the CLI does: a folder there is not the signal', async () => {
    const stop = signal();
    mkdirSync(join(home, STOP_FILE));
    expect(await stop.isSet()).toBe(false);
    await expect(stop.set()).rejects.toThrow(/STOP is a folder, not a file, so STOP cannot be set; remove it on the server/);
    await stop.clear();
    expect(await stop.isSet()).toBe(false);
    await stop.set();
    expect(await stop.isSet()).toBe(true);
  });

  // A STOP no watch hears: written from another machine on a shared data home, or with the watch
  // failed (none at all: no inotify). The poll sees it within pollMs, and cuts what runs.
  it.each([
    ['a watch that hears nothing', () => () => undefined],
    ['no watch at all', () => null],
  ])('with %s, the poll hears STOP come and go', async (_name, watchFile) => {
    const stop = fileStopSignal(home, () => new Date(), { pollMs: 5, watchFile });
    const heard = vi.fn();
    unwatch = stop.watch(heard);
    await waitFor(async () => expect(await stop.isSet()).toBe(false));
    writeFileSync(join(home, STOP_FILE), '');
    await waitFor(() => expect(heard).toHaveBeenCalledTimes(1));
    expect(await stop.isSet()).toBe(true);
    rmSync(join(home, STOP_FILE));
    await waitFor(async () => expect(await stop.isSet()).toBe(false));
    // Heard once per STOP, not at every look while it stays.
    writeFileSync(join(home, STOP_FILE), '');
    await waitFor(() => expect(heard).toHaveBeenCalledTimes(2));
  });

  it('looks at the disk once every pollMs while watching, and not after the watch ends', async () => {
    vi.useFakeTimers();
    try {
      const stop = fileStopSignal(home, () => new Date(), { pollMs: 1000, watchFile: () => () => undefined });
      const end = stop.watch(() => undefined);
      await vi.advanceTimersByTimeAsync(0);
      lstat.mockClear();
      await vi.advanceTimersByTimeAsync(3000);
      expect(lstat).toHaveBeenCalledTimes(3);
      end();
      lstat.mockClear();
      await vi.advanceTimersByTimeAsync(5000);
      expect(lstat).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  describe('clearStale: as a server starts', () => {
    const now = new Date('2026-11-23T12:00:00Z');
    const stale = new Date('2026-11-20T08:00:00Z');
    const fresh = new Date('2026-11-23T11:59:00Z');
    const withStop = (time: Date | null) => {
      if (time !== null) {
        writeFileSync(join(home, STOP_FILE), `${time.toISOString()}\n`);
        utimesSync(join(home, STOP_FILE), time, time);
      }
      // Booted an hour ago.
      return fileStopSignal(home, () => now, { uptime: () => 3600 });
    };
    it.each([
      ['none set', null, null, false],
      ['one set before this boot: removed', stale, { kind: 'cleared', since: stale }, false],
      ['one set since this boot: kept', fresh, { kind: 'kept', since: fresh }, true],
    ])('%s', async (_name, time, outcome, stays) => {
      const stop = withStop(time);
      unwatch = stop.watch(() => undefined);
      expect(await stop.clearStale()).toEqual(outcome);
      expect(existsSync(join(home, STOP_FILE))).toBe(stays);
      expect(await stop.isSet()).toBe(stays);
    });

    it('goes by the file\'s time, as argo stop --status does: a STOP touched since the boot is kept whatever it says inside', async () => {
      writeFileSync(join(home, STOP_FILE), `${stale.toISOString()}\n`);
      utimesSync(join(home, STOP_FILE), fresh, fresh);
      expect(await fileStopSignal(home, () => now, { uptime: () => 3600 }).clearStale()).toEqual({ kind: 'kept', since: fresh });
    });

    it('a folder named STOP is not the signal: left as it is', async () => {
      mkdirSync(join(home, STOP_FILE));
      expect(await fileStopSignal(home, () => now, { uptime: () => 3600 }).clearStale()).toBeNull();
      expect(existsSync(join(home, STOP_FILE))).toBe(true);
    });
  });

  it('after the watch ends, goes back to the disk', async () => {
    const stop = signal();
    const end = stop.watch(() => undefined);
    await waitFor(async () => expect(await stop.isSet()).toBe(false));
    end();
    writeFileSync(join(home, STOP_FILE), '');
    expect(await stop.isSet()).toBe(true);
  });
});
