import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { STOP_FILE, fileStopSignal } from '../../src/serve/stop.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof fsPromises>();
  return { ...actual, lstat: vi.fn(actual.lstat) };
});
const lstat = vi.mocked(fsPromises.lstat);

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
    await vi.waitFor(() => expect(lstat).toHaveBeenCalled());
    await vi.waitFor(async () => expect(await stop.isSet()).toBe(false));
    lstat.mockClear();
    for (let i = 0; i < 5; i++) expect(await stop.isSet()).toBe(false);
    expect(lstat).not.toHaveBeenCalled();

    writeFileSync(join(home, STOP_FILE), '');
    await vi.waitFor(() => expect(heard).toHaveBeenCalledTimes(1));
    expect(await stop.isSet()).toBe(true);
    rmSync(join(home, STOP_FILE));
    await vi.waitFor(async () => expect(await stop.isSet()).toBe(false));
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

  it('after the watch ends, goes back to the disk', async () => {
    const stop = signal();
    const end = stop.watch(() => undefined);
    await vi.waitFor(async () => expect(await stop.isSet()).toBe(false));
    end();
    writeFileSync(join(home, STOP_FILE), '');
    expect(await stop.isSet()).toBe(true);
  });
});
