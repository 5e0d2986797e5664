// A session's index is a hint: where it names a place that does not hold — past the log's end, a
// length no line has, a folder, a named pipe or a link to neither where the day's log should be —
// `sessions show` and a replay read the log instead (the slow path) and put the index right. A
// folder where the index itself goes is read around and left (sessions reindex replaces an empty
// one); a link there says so in one line. Never a crash, a wait, or a huge allocation.
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../../src/errors.js';
import type { DataPaths } from '../../src/log/writer.js';
import type { PlanInput } from '../../src/replay/plan.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import type { HistoryTurn, ReplaySpec } from '../../src/replay/types.js';
import { forkSession, reindexAll } from '../../src/sessions/manage.js';
import { deleteSession, indexPath, readSession } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { openReplaySource, openSessionTurns, rebuildIndex } from '../../src/sessions/turns.js';
import type { TurnPick } from '../../src/sessions/turns.js';
import { planWithHistory } from '../../src/turn/turn.js';
import { recordTurns, tempData } from '../query/helpers.js';
import type { Home } from '../query/helpers.js';
import { makePlanInput } from '../support/plan-input.js';

const DAY = '2025-01-02.log';
/** A day no turn was written to, where a damage puts something that is not a day's log. */
const ELSEWHERE = '2025-01-05.log';

interface IndexLineJson {
  file: string;
  offset: number;
  length: number;
}

/** Rewrites every line of the session's index. */
function everyLine(paths: DataPaths, change: (line: IndexLineJson, i: number, all: IndexLineJson[]) => IndexLineJson): void {
  const path = indexPath(paths.sessions, 'work');
  const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((text) => JSON.parse(text) as IndexLineJson);
  writeFileSync(path, lines.map((line, i) => `${JSON.stringify(change(line, i, lines))}\n`).join(''));
}

/** The index names ELSEWHERE for every turn, and `make` puts something there. */
function elsewhere(make: (path: string, outside: string) => void): (paths: DataPaths) => void {
  return (paths) => {
    everyLine(paths, (line) => ({ ...line, file: ELSEWHERE }));
    make(join(paths.logs, ELSEWHERE), mkdtempSync(join(tmpdir(), 'argo-outside-')));
  };
}

/** The session's index itself replaced by what `make` puts at its place. */
function instead(make: (path: string, outside: string) => void): (paths: DataPaths) => void {
  return (paths) => {
    const path = indexPath(paths.sessions, 'work');
    const outside = mkdtempSync(join(tmpdir(), 'argo-outside-'));
    writeFileSync(join(outside, 'work.idx'), readFileSync(path));
    rmSync(path);
    make(path, outside);
  };
}

const mkfifo = (path: string): void => void execFileSync('mkfifo', [path]);
/** A folder of the user's, with a file in it. */
function folderWithFile(path: string): void {
  mkdirSync(path);
  writeFileSync(join(path, 'notes.txt'), 'mine');
}
/** What is at the index's place: the file's text, or a folder's entries. */
function atIndex(paths: DataPaths, name = 'work'): string | { folder: string[] } | null {
  const path = indexPath(paths.sessions, name);
  if (!existsSync(path)) return null;
  return lstatSync(path).isDirectory() ? { folder: readdirSync(path) } : readFileSync(path, 'utf8');
}

/** What the index holds once read: put right from the log, kept as it was (it still held), or a folder left as it was. */
type After = 'rebuilt' | 'kept' | 'folder';

const FALLS_BACK: [string, (paths: DataPaths) => void, After][] = [
  ['every offset past the log’s end', (paths) => everyLine(paths, (line) => ({ ...line, offset: line.offset + 10_000_000 })), 'rebuilt'],
  ['the newest line’s length past the log’s end', (paths) => everyLine(paths, (line, i, all) => (i === all.length - 1 ? { ...line, length: line.length + 1000 } : line)), 'rebuilt'],
  ['every length 10^12', (paths) => everyLine(paths, (line) => ({ ...line, length: 1e12 })), 'rebuilt'],
  ['every length one more than any text', (paths) => everyLine(paths, (line) => ({ ...line, length: 2 ** 31 })), 'rebuilt'],
  ['a line spanning two turns', (paths) => everyLine(paths, (line, i, all) => (i === 0 ? { ...line, length: (all[1]?.offset ?? 0) + (all[1]?.length ?? 0) - line.offset } : line)), 'rebuilt'],
  ['a folder where the day’s log should be', elsewhere((path) => mkdirSync(path)), 'rebuilt'],
  ['a named pipe where the day’s log should be', elsewhere((path) => mkfifo(path)), 'rebuilt'],
  [
    'a link to a named pipe',
    elsewhere((path, outside) => {
      mkfifo(join(outside, 'pipe'));
      symlinkSync(join(outside, 'pipe'), path);
    }),
    'rebuilt',
  ],
  ['a link to a folder', elsewhere((path, outside) => symlinkSync(outside, path)), 'rebuilt'],
  // Its file out of reach (a disk not mounted), not gone: read without it, the index is not saved so.
  ['a dangling link', elsewhere((path, outside) => symlinkSync(join(outside, 'gone.log'), path)), 'kept'],
  ['a link to a device', elsewhere((path) => symlinkSync('/dev/zero', path)), 'rebuilt'],
  ['a link to the day’s real log: read through it, as every reader of the log does', elsewhere((path) => symlinkSync(join(path, '..', DAY), path)), 'kept'],
  ['a named pipe where the index should be', instead((path) => mkfifo(path)), 'rebuilt'],
  ['an empty folder where the index should be', instead((path) => mkdirSync(path)), 'folder'],
  ['a folder with a file in it where the index should be', instead(folderWithFile), 'folder'],
];

const REFUSED: [string, (paths: DataPaths) => void, (error: unknown, paths: DataPaths) => void][] = [
  [
    'a link where the index should be (to a copy of it)',
    instead((path, outside) => symlinkSync(join(outside, 'work.idx'), path)),
    (error, paths) => expect((error as Error).message).toBe(`${indexPath(paths.sessions, 'work')} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`),
  ],
];

/** work: five turns, the newest a failed one; play: one. */
async function home(): Promise<Home & { work: SessionRecord }> {
  const data = tempData();
  const { session: work } = await recordTurns(data.paths, 'work', 5, { shape: (i) => (i === 4 ? { status: 'error', error: 'boom' } : {}) });
  await recordTurns(data.paths, 'play', 1, { start: '2025-01-02T12:00:00.000Z' });
  return { ...data, work };
}

const PICKS: [string, TurnPick][] = [
  ['sessions show', { kind: 'all' }],
  ['sessions show -n 2', { kind: 'last', count: 2, okOnly: false }],
];

const SPECS: [string, ReplaySpec][] = [
  ['--replay session', { kind: 'session' }],
  ['--replay last:2', { kind: 'last', count: 2 }],
];

/** What `sessions show` hands on (held, and read twice as a session of years is), and what a replay plans. */
async function readings(data: Home & { work: SessionRecord }): Promise<Record<string, unknown>> {
  const seen: Record<string, unknown> = {};
  for (const [name, pick] of PICKS) {
    for (const holdBytes of [undefined, 1]) {
      const turns = await openSessionTurns(data.paths, data.work, pick, undefined, holdBytes);
      const ids: string[] = [];
      await turns.each((entry) => Promise.resolve(ids.push(entry.id) > 0));
      seen[`${name}${holdBytes === undefined ? '' : ' (read twice)'}`] = { count: turns.count, ids };
    }
  }
  for (const [name, spec] of SPECS) {
    const plan = await planWithHistory((rebuild) => openReplaySource(data.paths, data.work, spec, DEFAULT_REPLAY_POLICY.classify, rebuild), planInput(spec), 'work');
    seen[name] = JSON.parse(JSON.stringify(plan)) as unknown;
  }
  return seen;
}

function planInput(spec: ReplaySpec): (history: HistoryTurn[]) => PlanInput {
  return (history) => makePlanInput({ input: 'Explain more', spec, history });
}

describe('a damaged session index', () => {
  it.each(FALLS_BACK)('%s: sessions show and replay read what the log holds', async (_case, damage, after) => {
    const data = await home();
    const expected = await readings(data);
    const pristine = atIndex(data.paths);
    damage(data.paths);
    const damaged = after === 'rebuilt' ? pristine : atIndex(data.paths);
    expect(await readings(data)).toEqual(expected);
    expect(atIndex(data.paths)).toEqual(damaged);
  });

  it.each(REFUSED)('%s: each reader stops with the one error that names it', async (_case, damage, check) => {
    const data = await home();
    damage(data.paths);
    for (const [, pick] of PICKS) check(await openSessionTurns(data.paths, data.work, pick).catch((error: unknown) => error), data.paths);
    for (const [, spec] of SPECS) {
      const planned = planWithHistory((rebuild) => openReplaySource(data.paths, data.work, spec, DEFAULT_REPLAY_POLICY.classify, rebuild), planInput(spec), 'work');
      check(await planned.catch((error: unknown) => error), data.paths);
    }
  });
});

/** The ids of a session's history, as `sessions show` reads them. */
async function shownIds(paths: DataPaths, session: SessionRecord): Promise<string[]> {
  const turns = await openSessionTurns(paths, session, { kind: 'all' });
  const ids: string[] = [];
  await turns.each((entry) => Promise.resolve(ids.push(entry.id) > 0));
  return ids;
}

const FOLDERS: [string, (path: string) => void, { folder: string[] }][] = [
  ['an empty folder', (path) => mkdirSync(path), { folder: [] }],
  ['a folder with a file in it', folderWithFile, { folder: ['notes.txt'] }],
];

describe('a folder where a session index goes', () => {
  it.each(FOLDERS)('%s: a turn is logged around it, counted in the record, and read from the log; the folder is left', async (_case, make, folder) => {
    const data = await home();
    const before = await shownIds(data.paths, data.work);
    rmSync(indexPath(data.paths.sessions, 'work'));
    make(indexPath(data.paths.sessions, 'work'));
    const { session, entries } = await recordTurns(data.paths, 'work', 1, { start: '2025-01-02T13:00:00.000Z' });
    expect({ turns: session.turns, last: session.last_turn_id }).toEqual({ turns: 6, last: entries[0]?.id });
    expect(await shownIds(data.paths, session)).toEqual([...before, entries[0]?.id]);
    expect(atIndex(data.paths)).toEqual(folder);
  });

  it('a named pipe there: a turn is logged, counted in the record and never written into it; the next reader puts the index back', async () => {
    const data = await home();
    const pristine = atIndex(data.paths);
    rmSync(indexPath(data.paths.sessions, 'work'));
    mkfifo(indexPath(data.paths.sessions, 'work'));
    const { session, entries } = await recordTurns(data.paths, 'work', 1, { start: '2025-01-02T13:00:00.000Z' });
    expect({ turns: session.turns, last: session.last_turn_id }).toEqual({ turns: 6, last: entries[0]?.id });
    expect(lstatSync(indexPath(data.paths.sessions, 'work')).isFIFO()).toBe(true);
    expect((await shownIds(data.paths, session)).at(-1)).toBe(entries[0]?.id);
    const rebuilt = atIndex(data.paths);
    expect(typeof rebuilt === 'string' && typeof pristine === 'string' && rebuilt.startsWith(pristine)).toBe(true);
    expect(rebuilt).toContain(`"id":"${entries[0]?.id ?? ''}"`);
  });

  it.each(FOLDERS)('%s where a fork’s index goes: the fork is made and reads its inherited history from the log', async (_case, make, folder) => {
    const data = await home();
    make(indexPath(data.paths.sessions, 'alt'));
    const { record, inherited } = await forkSession(data.paths, data.work, undefined, 'alt', '2025-01-03T00:00:00.000Z');
    expect(inherited).toBe(5);
    expect(await shownIds(data.paths, record)).toEqual(await shownIds(data.paths, data.work));
    expect(atIndex(data.paths, 'alt')).toEqual(folder);
  });

  const REINDEX: [string, (paths: DataPaths, work: SessionRecord) => Promise<unknown>][] = [
    ['sessions reindex work', (paths, work) => rebuildIndex(paths, work, { folder: 'replace' })],
    ['sessions reindex', (paths) => reindexAll(paths)],
  ];

  it.each(REINDEX)('%s replaces an empty one with the index', async (_case, reindex) => {
    const data = await home();
    const pristine = atIndex(data.paths);
    rmSync(indexPath(data.paths.sessions, 'work'));
    mkdirSync(indexPath(data.paths.sessions, 'work'));
    await reindex(data.paths, data.work);
    expect(atIndex(data.paths)).toEqual(pristine);
  });

  it.each(REINDEX)('%s refuses one with files in it, naming it and what to do, and leaves it', async (_case, reindex) => {
    const data = await home();
    const path = indexPath(data.paths.sessions, 'work');
    rmSync(path);
    folderWithFile(path);
    await expect(reindex(data.paths, data.work)).rejects.toThrow(
      new RuntimeError(`${path} is a folder with files in it where the index of session "work" goes; move it out of ${data.paths.sessions}, then reindex again`),
    );
    expect(atIndex(data.paths)).toEqual({ folder: ['notes.txt'] });
  });

  it.each<[string, (path: string) => void, { folder: string[] } | null]>([
    ['an empty folder: removed with the record', (path) => mkdirSync(path), null],
    ['a folder with a file in it: left, the record removed', folderWithFile, { folder: ['notes.txt'] }],
  ])('sessions rm, %s', async (_case, make, left) => {
    const data = await home();
    rmSync(indexPath(data.paths.sessions, 'work'));
    make(indexPath(data.paths.sessions, 'work'));
    await deleteSession(data.paths.sessions, 'work');
    expect(await readSession(data.paths.sessions, 'work')).toBeNull();
    expect(atIndex(data.paths)).toEqual(left);
  });
});
