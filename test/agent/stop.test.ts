import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../../src/errors.js';
import { clearStop, isStopSet, setStop, stopPath, stopState } from '../../src/agent/stop.js';

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
