import { chmodSync, existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { confirm } from '../../src/cli/common.js';
import type { Io } from '../../src/cli/io.js';
import { UsageError } from '../../src/errors.js';
import { locksInUse, withSessionLock } from '../../src/log/lock.js';
import { RemovedBytes, planPrune, prune, removeSessionLines, shifted } from '../../src/maintenance/maintain.js';
import { loadSessionEntries, rebuildIndex } from '../../src/sessions/turns.js';
import type { DataPaths } from '../../src/log/writer.js';
import { findTurn, forkSession, parseForkSource, reindexAll, renameSession } from '../../src/sessions/manage.js';
import { indexPath, listSessions, readSession } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { indexLine } from '../../src/sessions/turn-index.js';
import type { IndexLine } from '../../src/sessions/turn-index.js';
import { appendRaw, recordTurns, tempData } from '../query/helpers.js';
import { defined } from '../support/defined.js';
import { waitFor } from '../support/wait.js';

const ids = (turns: readonly { id: string }[]): string[] => turns.map((turn) => turn.id);
const indexText = (paths: DataPaths, name: string): string => readFileSync(indexPath(paths.sessions, name), 'utf8');
const session = async (paths: DataPaths, name: string): Promise<SessionRecord> =>
  defined(await readSession(paths.sessions, name), `session ${name}`);

/**
 * work, play and misc interleaved over three days, with an unreadable line in the middle day;
 * `first` records turns before them (a turn recorded later on the first day would go to the last).
 */
async function history(first?: (paths: DataPaths) => Promise<unknown>) {
  const { paths } = tempData();
  await first?.(paths);
  const turns: Record<string, string[]> = { work: [], play: [], misc: [] };
  for (const date of ['2025-01-01', '2025-01-02', '2025-01-03']) {
    for (const name of ['work', 'play', 'misc']) {
      turns[name]?.push(...ids((await recordTurns(paths, name, 2, { date })).entries));
      if (date === '2025-01-02' && name === 'play') appendRaw(paths, date, 'garbage that mentions nobody\n');
    }
  }
  return { paths, turns };
}

describe('shifted', () => {
  const line = (offset: number): IndexLine => indexLine('x', '2025-01-01.log', offset, 5, 'ok', 'question');
  it.each<[number, [number, number][] | undefined, number | null]>([
    [100, undefined, 100],
    [100, [], 100],
    [100, [[200, 250]], 100],
    [100, [[0, 10]], 90],
    [100, [[0, 10], [50, 100]], 40],
    [100, [[0, 10], [100, 120]], null],
    [100, [[0, 10], [60, 70], [150, 170]], 80],
    [0, [[0, 10]], null],
    [0, [[10, 20]], 0],
    [100, [[0, 10], [20, 30], [40, 50], [60, 70], [80, 90]], 50],
    [100, [[0, 10], [20, 30], [40, 50], [60, 70], [80, 90], [100, 110], [120, 130]], null],
    // A stale index pointing inside a removed range: only the ranges wholly before it count.
    [100, [[0, 10], [90, 120]], 90],
  ])('offset %d with %j removed → %j', (offset, ranges, expected) => {
    const result = shifted(line(offset), ranges === undefined ? undefined : new RemovedBytes(ranges));
    expect(result === null ? null : result.offset).toBe(expected);
  });

  it('agrees with counting every range before each offset, over many ranges and offsets', () => {
    // Every other 7-byte line removed from a file of 2,000 lines, each offset of the file asked.
    const ranges: [number, number][] = Array.from({ length: 1000 }, (_, i) => [14 * i + 7, 14 * i + 14]);
    const removed = new RemovedBytes(ranges);
    for (let offset = 0; offset < 14_000; offset++) {
      const gone = ranges.some(([start]) => start === offset);
      const before = ranges.filter(([, end]) => end <= offset).reduce((sum, [start, end]) => sum + end - start, 0);
      expect(shifted(line(offset), removed)?.offset ?? null).toBe(gone ? null : offset - before);
    }
  });
});

describe('removeSessionLines', () => {
  it('takes every session\'s lock, in order, before the log\'s: it waits for a turn still updating its session', async () => {
    const { paths } = await history();
    const play = await session(paths, 'play');
    const [first, second, last] = [(await session(paths, 'work')).id, play.id, (await session(paths, 'misc')).id].sort();
    const day = join(paths.logs, '2025-01-02.log');
    const before = readFileSync(day, 'utf8');
    let removal: Promise<unknown> = Promise.resolve();
    // As a turn would, between its log line and its index line: holding its session's lock.
    await withSessionLock(paths.logs, defined(last, 'last'), async () => {
      removal = removeSessionLines(paths, new Set([play.id]));
      // The removal holds the other sessions' locks and waits for this one, not yet the log's: nothing rewritten.
      const locks = join(dirname(paths.logs), 'locks');
      await waitFor(() => expect(existsSync(join(locks, `session-${defined(second, 'second')}.lock`))).toBe(true));
      expect(existsSync(join(locks, `session-${defined(first, 'first')}.lock`))).toBe(true);
      expect(locksInUse()).toBe(3);
      expect(existsSync(join(locks, 'log.lock'))).toBe(false);
      expect(readFileSync(day, 'utf8')).toBe(before);
    });
    await removal;
    expect(readFileSync(day, 'utf8')).not.toContain(play.id);
    expect(locksInUse()).toBe(0);
  });


  it('deletes exactly that session’s lines, keeps unreadable ones, and keeps other indexes exact', async () => {
    const { paths, turns } = await history();
    const play = await session(paths, 'play');
    const result = await removeSessionLines(paths, new Set([play.id]));
    expect(result).toMatchObject({ files: 3, lines: 6 });
    const text = ['2025-01-01', '2025-01-02', '2025-01-03'].map((date) => readFileSync(join(paths.logs, `${date}.log`), 'utf8')).join('');
    expect(text).not.toContain(play.id);
    expect(text).toContain('garbage that mentions nobody\n');
    expect(readdirSync(paths.logs).sort()).toEqual(['2025-01-01.log', '2025-01-02.log', '2025-01-03.log']);
    for (const name of ['work', 'misc']) {
      const shiftedIndex = indexText(paths, name);
      const record = await session(paths, name);
      // Reading goes through the shifted offsets with no rebuild: the index is untouched by it…
      expect(ids(await loadSessionEntries(paths, record))).toEqual(turns[name]);
      expect(indexText(paths, name)).toBe(shiftedIndex);
      // …and it is byte for byte what a rebuild from the log produces.
      await rebuildIndex(paths, record);
      expect(indexText(paths, name)).toBe(shiftedIndex);
    }
  });
});

describe('prune', () => {
  it('deletes whole days before the cutoff, drops their index lines, recounts, removes emptied sessions', async () => {
    const { paths, turns } = await history((data) => recordTurns(data, 'old', 2, { date: '2025-01-01' }));
    const plan = await planPrune(paths.logs, '2025-01-02');
    expect(plan.files.map((file) => file.slice(paths.logs.length + 1))).toEqual(['2025-01-01.log']);
    expect(plan.bytes).toBeGreaterThan(0);
    const repair = await prune(paths, plan);
    expect(repair).toEqual({ updated: 3, emptied: ['old'] });
    expect(readdirSync(paths.logs).sort()).toEqual(['2025-01-02.log', '2025-01-03.log']);
    expect(await readSession(paths.sessions, 'old')).toBeNull();
    expect(existsSync(indexPath(paths.sessions, 'old'))).toBe(false);
    const work = await session(paths, 'work');
    expect(work).toMatchObject({ turns: 4, last_turn_id: turns.work?.[5] });
    const pruned = indexText(paths, 'work');
    expect(ids(await loadSessionEntries(paths, work))).toEqual(turns.work?.slice(2));
    expect(indexText(paths, 'work')).toBe(pruned);
  });

  it('keeps the file of the cutoff day itself', async () => {
    const { paths } = await history();
    expect((await planPrune(paths.logs, '2025-01-01')).files).toEqual([]);
    expect((await planPrune(paths.logs, '2025-01-04')).files).toHaveLength(3);
  });

  it('drops a fork’s inherited lines without miscounting its own turns', async () => {
    const { paths, turns } = await history();
    const work = await session(paths, 'work');
    await forkSession(paths, work, turns.work?.[1], 'branch', '2025-01-03T00:00:00Z');
    const own = await recordTurns(paths, 'branch', 2, { date: '2025-01-03' });
    await prune(paths, await planPrune(paths.logs, '2025-01-02'));
    const branch = await session(paths, 'branch');
    expect(branch.turns).toBe(2);
    expect(ids(await loadSessionEntries(paths, branch))).toEqual(ids(own.entries));
  });
});

describe('rename', () => {
  it('moves record and index, keeps the id, and updates forks', async () => {
    const { paths, turns } = await history();
    const work = await session(paths, 'work');
    await forkSession(paths, work, undefined, 'branch', '2025-01-03T00:00:00Z');
    const index = indexText(paths, 'work');
    await renameSession(paths.sessions, work, 'job');
    expect(await readSession(paths.sessions, 'work')).toBeNull();
    expect(existsSync(indexPath(paths.sessions, 'work'))).toBe(false);
    const job = await session(paths, 'job');
    expect(job).toEqual({ ...work, name: 'job' });
    expect(indexText(paths, 'job')).toBe(index);
    expect((await session(paths, 'branch')).parent).toEqual({ session_id: work.id, name: 'job', turn_id: turns.work?.[5] });
    expect(ids(await loadSessionEntries(paths, job))).toEqual(turns.work);
  });
});

describe('fork', () => {
  it.each<[string, string | undefined, number | string]>([
    ['the newest turn by default', undefined, 6],
    ['an exact id', 'EXACT:2', 3],
    ['an unknown turn', 'nope', 'session "work" has no turn "nope"; list its turn ids with "argo sessions show work"'],
    ['a too-short prefix', 't0', 'turn "t0" is too short to name a turn of session "work": give at least 4 characters of its id'],
    ['an ambiguous prefix', 't000', 'turn "t000" is ambiguous in session "work"'],
  ])('at %s', async (_name, spec, expected) => {
    const { paths, turns } = await history();
    const work = await session(paths, 'work');
    const workTurns = defined(turns.work, 'the work turns');
    const turn = spec?.startsWith('EXACT:') ? workTurns[Number(spec.slice(6))] : spec;
    const attempt = forkSession(paths, work, turn, 'branch', '2025-01-03T00:00:00Z');
    if (typeof expected === 'string') {
      await expect(attempt).rejects.toThrow(UsageError);
      await expect(forkSession(paths, work, turn, 'branch', 'x')).rejects.toThrow(expected);
      expect(await readSession(paths.sessions, 'branch')).toBeNull();
      return;
    }
    const { inherited } = await attempt;
    expect(inherited).toBe(expected);
    expect(ids(await loadSessionEntries(paths, await session(paths, 'branch')))).toEqual(workTurns.slice(0, expected));
  });

  it('refuses a taken name and a session without turns', async () => {
    const { paths } = await history();
    const work = await session(paths, 'work');
    await expect(forkSession(paths, work, undefined, 'play', 'x')).rejects.toThrow('a session named "play" already exists');
    const rest: SessionRecord = { ...work };
    delete rest.last_turn_id;
    const empty = { ...rest, name: 'empty', id: '00000000-0000-4000-8000-00000000000e', turns: 0 };
    await expect(forkSession(paths, empty, undefined, 'branch', 'x')).rejects.toThrow('session "empty" has no turns to fork yet');
  });

  it('findTurn tells an ambiguous prefix apart', () => {
    const lines = ['abcd1', 'abcd2', 'zzzz9'].map((id) => indexLine(id, '2025-01-01.log', 0, 1, 'ok', 'other'));
    expect(findTurn(lines, 'zzzz', 's')).toBe(2);
    expect(() => findTurn(lines, 'abcd', 's')).toThrow('turn "abcd" is ambiguous in session "s" (2 turns start with it); give more of its id');
    expect(() => findTurn(lines, 'zzz', 's')).toThrow('turn "zzz" is too short to name a turn of session "s": give at least 4 characters of its id');
    expect(() => findTurn(lines, 'qqq', 's')).toThrow('session "s" has no turn "qqq"; list its turn ids with "argo sessions show s"');
  });

  it.each<[string, { name: string; turn?: string } | string]>([
    ['work', { name: 'work' }],
    ['work@abc', { name: 'work', turn: 'abc' }],
    ['work@', 'give a turn id after "@"'],
  ])('parseForkSource(%j)', (spec, expected) => {
    if (typeof expected === 'string') expect(() => parseForkSource(spec)).toThrow(expected);
    else expect(parseForkSource(spec)).toEqual(expected);
  });
});

describe('reindexAll', () => {
  it('waits for every session\'s lock, then the log\'s, before it reads anything', async () => {
    const { paths } = await history();
    const [first, last] = [(await session(paths, 'work')).id, (await session(paths, 'play')).id, (await session(paths, 'misc')).id].sort();
    const locks = join(dirname(paths.logs), 'locks');
    let reindex: Promise<unknown> = Promise.resolve();
    await withSessionLock(paths.logs, defined(last, 'last'), async () => {
      reindex = reindexAll(paths);
      await waitFor(() => expect(existsSync(join(locks, `session-${defined(first, 'first')}.lock`))).toBe(true));
      expect(existsSync(join(locks, 'log.lock'))).toBe(false);
    });
    expect(await reindex).toMatchObject({ sessions: 3, turns: 18 });
    expect(locksInUse()).toBe(0);
  });

  it('rebuilds every index in one pass, forks included, identical to the indexes the writer kept', async () => {
    const { paths } = await history();
    const work = await session(paths, 'work');
    const fork = await forkSession(paths, work, undefined, 'branch', '2025-01-03T00:00:00Z');
    await recordTurns(paths, 'branch', 2, { date: '2025-01-03' });
    // A fork of a fork whose parent is then removed (its log lines stay).
    await forkSession(paths, await session(paths, 'branch'), undefined, 'leaf', '2025-01-03T00:00:00Z');
    rmSync(join(paths.sessions, 'branch.json'));
    rmSync(indexPath(paths.sessions, 'branch'));
    const names = ['work', 'play', 'misc', 'leaf'];
    const before = Object.fromEntries(names.map((name) => [name, indexText(paths, name)]));
    for (const name of names) writeFileSync(indexPath(paths.sessions, name), 'damaged\n');
    const result = await reindexAll(paths);
    expect(result).toEqual({ sessions: 4, turns: 18, unreadable: 1, left: 0 });
    for (const name of names) expect(indexText(paths, name)).toBe(before[name]);
    expect(readdirSync(paths.sessions).filter((name) => name.includes('.tmp'))).toEqual([]);
    expect(fork.inherited).toBe(6);
    expect((await listSessions(paths.sessions)).map((record) => [record.name, record.turns])).toEqual([
      ['leaf', 0],
      ['misc', 6],
      ['play', 6],
      ['work', 6],
    ]);
  });

  it('a session of many batches of lines, and forks of it, come out as the writer kept them', async () => {
    const { paths } = await history();
    const long = await recordTurns(paths, 'long', 150, { date: '2025-01-04' });
    await forkSession(paths, long.session, long.entries[99]?.id, 'long-fork', '2025-01-05T00:00:00Z');
    await recordTurns(paths, 'long-fork', 70, { date: '2025-01-05' });
    await recordTurns(paths, 'long', 3, { date: '2025-01-05' });
    const names = ['work', 'long', 'long-fork'];
    const before = Object.fromEntries(names.map((name) => [name, indexText(paths, name)]));
    for (const name of names) rmSync(indexPath(paths.sessions, name));
    expect(await reindexAll(paths)).toMatchObject({ sessions: 5, turns: 18 + 153 + 70 });
    for (const name of names) expect(indexText(paths, name)).toBe(before[name]);
    expect(readdirSync(paths.sessions).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('leaves what is right as it is: a second reindex writes no file, but makes a readable one private', async () => {
    const { paths } = await history();
    await reindexAll(paths);
    const files = readdirSync(paths.sessions).map((name) => join(paths.sessions, name));
    const stamps = (): string[] => files.map((file) => `${statSync(file).ino}:${statSync(file).mtimeMs}`);
    const first = stamps();
    await reindexAll(paths);
    expect(stamps()).toEqual(first);
    const work = files.indexOf(indexPath(paths.sessions, 'work'));
    chmodSync(indexPath(paths.sessions, 'work'), 0o644);
    await reindexAll(paths);
    expect(statSync(indexPath(paths.sessions, 'work')).mode & 0o777).toBe(0o600);
    expect(stamps().filter((_, i) => i !== work)).toEqual(first.filter((_, i) => i !== work));
  });
});

describe('confirm', () => {
  const io = (interactive: boolean, answer?: string): Io => {
    const stdin = new PassThrough();
    if (answer !== undefined) stdin.end(answer);
    const stderr = new PassThrough();
    return { stdin, stderr, isInteractive: interactive } as unknown as Io;
  };

  it.each<[string, boolean]>([
    ['y\n', true],
    ['YES\n', true],
    [' yes \n', true],
    ['n\n', false],
    ['\n', false],
    ['', false],
    ['yep\n', false],
  ])('on a terminal, %j → %s', async (answer, expected) => {
    expect(await confirm(io(true, answer), 'delete?', undefined, 'logs prune')).toBe(expected);
  });

  it('--yes skips the question; without a terminal it is a usage error asking for --yes', async () => {
    expect(await confirm(io(false), 'delete?', true, 'logs prune')).toBe(true);
    await expect(confirm(io(false), 'delete?', undefined, 'logs prune')).rejects.toThrow(
      new UsageError('logs prune deletes history: pass --yes to confirm (there is no terminal to ask on)'),
    );
  });
});
