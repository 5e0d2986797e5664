// A log line of a session that cannot be read is skipped, counted and said, as every reader does —
// and it is not a removed turn: no rebuild saves an index or record counters without it, so once the
// line is repaired the turn is back in the session, with no reindex.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScanStats } from '../../src/log/scan.js';
import type { DataPaths } from '../../src/log/writer.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import type { ReplaySpec } from '../../src/replay/types.js';
import { reindexAll } from '../../src/sessions/manage.js';
import { indexPath, readSession, recordPath } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { markIndexStale } from '../../src/sessions/turn-index.js';
import { openReplaySource, openSessionTurns, rebuildIndex } from '../../src/sessions/turns.js';
import type { TurnPick } from '../../src/sessions/turns.js';
import { planWithHistory } from '../../src/turn/turn.js';
import { recordTurns, tempData } from '../query/helpers.js';
import type { Home } from '../query/helpers.js';
import { defined } from '../support/defined.js';
import { makePlanInput } from '../support/plan-input.js';

const DAY = '2025-01-02.log';
const NOTICE = 'argo: skipped 1 unreadable log line; run "argo logs check" to list them';

/** work: turns A, B, C; play: one turn, in the same day's file. */
async function home(): Promise<Home & { ids: string[] }> {
  const data = tempData();
  const { entries } = await recordTurns(data.paths, 'work', 3);
  await recordTurns(data.paths, 'play', 1, { start: '2025-01-02T12:00:00.000Z' });
  return { ...data, ids: entries.map((entry) => entry.id) };
}

/**
 * Makes the turn's line unreadable without moving any other (a status that is not text, of the same
 * length), as a hand edit gone wrong would; returns the repair.
 */
function damage(paths: DataPaths, id: string): () => void {
  const file = join(paths.logs, DAY);
  const lines = readFileSync(file, 'utf8').split('\n');
  const at = lines.findIndex((line) => line.includes(`"id":"${id}"`));
  const line = defined(lines[at], `the line of ${id}`);
  lines[at] = line.replace('"status":"ok"', '"status":1234');
  expect(lines[at]).not.toBe(line);
  writeFileSync(file, lines.join('\n'));
  const damaged = lines[at];
  return () => writeFileSync(file, readFileSync(file, 'utf8').replace(damaged, line));
}

/** The session's index and record as files (null: none), to see that a read changed neither. */
function saved(paths: DataPaths): { index: string | null; record: string } {
  const index = indexPath(paths.sessions, 'work');
  return { index: existsSync(index) ? readFileSync(index, 'utf8') : null, record: readFileSync(recordPath(paths.sessions, 'work'), 'utf8') };
}

/** What saved files say of the history: the turns the index places (not their cached types), and the record. */
function described(files: ReturnType<typeof saved>): { placed: string[] | null; record: string } {
  const placed = files.index === null ? null : files.index.trimEnd().split('\n').map((text) => {
    const { id, file, offset, length } = JSON.parse(text) as { id: string; file: string; offset: number; length: number };
    return `${id} ${file}:${offset}+${length}`;
  });
  return { placed, record: files.record };
}

const work = async (paths: DataPaths): Promise<SessionRecord> => defined(await readSession(paths.sessions, 'work'), 'the work record');

/** What a reader of the session gets: the turns' ids, and the one notice it gives (null: none). */
type Reader = (paths: DataPaths) => Promise<{ ids: string[]; notice: string | null }>;

function replay(spec: ReplaySpec): Reader {
  return async (paths) => {
    const session = await work(paths);
    const notices: string[] = [];
    const plan = await planWithHistory(
      (rebuild) => openReplaySource(paths, session, spec, DEFAULT_REPLAY_POLICY.classify, rebuild),
      (history) => makePlanInput({ input: 'Write it', spec, history }),
      'work',
      (line) => notices.push(line),
    );
    expect(notices.length).toBeLessThanOrEqual(1);
    return { ids: plan.replayPolicy?.decisions.map((turn) => turn.id) ?? [], notice: notices[0] ?? null };
  };
}

function show(pick: TurnPick): Reader {
  return async (paths) => {
    const stats = new ScanStats();
    const turns = await openSessionTurns(paths, await work(paths), pick, stats);
    const ids: string[] = [];
    await turns.each((entry) => Promise.resolve(ids.push(entry.id) > 0));
    return { ids, notice: stats.notice()?.trimEnd() ?? null };
  };
}

const READERS: [string, Reader][] = [
  ['--replay session', replay({ kind: 'session' })],
  ['--replay last:3', replay({ kind: 'last', count: 3 })],
  ['sessions show', show({ kind: 'all' })],
  ['sessions show -n 3', show({ kind: 'last', count: 3, okOnly: false })],
];

/** The index as the reader finds it: as the writer left it, gone, or cut short (a failed update). */
const INDEXES: [string, (paths: DataPaths) => Promise<void>][] = [
  ['as written', () => Promise.resolve()],
  ['missing', (paths) => rm(indexPath(paths.sessions, 'work'))],
  ['marked stale', (paths) => markIndexStale(paths.sessions, 'work')],
];

const DAMAGED: [string, number][] = [
  ['the oldest turn', 0],
  ['a middle turn', 1],
  ['the newest turn (the record’s marker)', 2],
];

const cases = READERS.flatMap(([reader, read]) => INDEXES.flatMap(([index, prepare]) => DAMAGED.map(([turn, at]) => [reader, index, turn, read, prepare, at] as const)));

describe('a turn whose log line cannot be read', () => {
  it.each(cases)('%s, index %s, %s: skipped and said once, nothing saved without it, back once repaired', async (_reader, _index, _turn, read, prepare, at) => {
    const data = await home();
    const pristine = saved(data.paths);
    await prepare(data.paths);
    const before = saved(data.paths);
    const repair = damage(data.paths, defined(data.ids[at], 'the damaged turn'));

    expect(await read(data.paths)).toEqual({ ids: data.ids.filter((_, i) => i !== at), notice: NOTICE });
    expect(saved(data.paths)).toEqual(before);
    // Read again, the same: nothing saved made the damage look like the session's history.
    expect(await read(data.paths)).toEqual({ ids: data.ids.filter((_, i) => i !== at), notice: NOTICE });

    repair();
    expect(await read(data.paths)).toEqual({ ids: data.ids, notice: null });
    // A rebuild that read every line puts the index and record right again (a replay's caches types too).
    expect(described(saved(data.paths))).toEqual(described(pristine));
  });

  it.each(INDEXES)('index %s: a turn logged while the line is damaged is kept with it once repaired', async (_index, prepare) => {
    const data = await home();
    await prepare(data.paths);
    const repair = damage(data.paths, defined(data.ids[1], 'the middle turn'));
    const read = replay({ kind: 'session' });
    expect((await read(data.paths)).ids).toEqual([data.ids[0], data.ids[2]]);
    const { entries } = await recordTurns(data.paths, 'work', 1, { start: '2025-01-02T13:00:00.000Z' });
    const newest = defined(entries[0], 'the new turn').id;
    expect((await read(data.paths)).ids).toEqual([data.ids[0], data.ids[2], newest]);
    expect(await work(data.paths)).toMatchObject({ turns: 4, last_turn_id: newest });
    repair();
    expect(await read(data.paths)).toEqual({ ids: [...data.ids, newest], notice: null });
  });

  it('another session’s unreadable line is not this one’s: the rebuild saves the index and counters', async () => {
    const data = await home();
    const pristine = saved(data.paths);
    const play = defined(await readSession(data.paths.sessions, 'play'), 'the play record');
    damage(data.paths, defined(play.last_turn_id, 'play’s turn'));
    rmSync(indexPath(data.paths.sessions, 'work'));
    expect(await show({ kind: 'all' })(data.paths)).toEqual({ ids: data.ids, notice: null });
    expect(saved(data.paths)).toEqual(pristine);
  });
});

const REINDEX: [string, (paths: DataPaths) => Promise<{ left: boolean; skipped: number }>][] = [
  [
    'sessions reindex work',
    async (paths) => {
      const stats = new ScanStats();
      await rebuildIndex(paths, await work(paths), { stats, folder: 'replace' });
      return { left: stats.unreadable > 0, skipped: stats.unreadable };
    },
  ],
  [
    'sessions reindex',
    async (paths) => {
      const result = await reindexAll(paths);
      // play's index and record are rebuilt all the same.
      expect(result).toMatchObject({ sessions: result.left === 1 ? 1 : 2, turns: result.left === 1 ? 1 : 4 });
      return { left: result.left === 1, skipped: result.unreadable };
    },
  ],
];

describe('a reindex meeting an unreadable line of the session', () => {
  it.each(REINDEX)('%s leaves the index and record as they were; once repaired it reindexes', async (_name, reindex) => {
    const data = await home();
    const pristine = saved(data.paths);
    writeFileSync(indexPath(data.paths.sessions, 'work'), 'damaged\n');
    const before = saved(data.paths);
    const repair = damage(data.paths, defined(data.ids[2], 'the newest turn'));
    expect(await reindex(data.paths)).toEqual({ left: true, skipped: 1 });
    expect(saved(data.paths)).toEqual(before);
    repair();
    expect(await reindex(data.paths)).toEqual({ left: false, skipped: 0 });
    expect(saved(data.paths)).toEqual(pristine);
  });
});

describe('a rebuild that may write nothing (--explain)', () => {
  const SAVES: [string, boolean, (pristine: ReturnType<typeof saved>, before: ReturnType<typeof saved>) => ReturnType<typeof saved>][] = [
    ['saves: the index and counters are put right', true, (pristine) => pristine],
    ['saves nothing: both are left as they were', false, (_pristine, before) => before],
  ];

  it.each(SAVES)('%s', async (_case, save, after) => {
    const data = await home();
    const pristine = saved(data.paths);
    rmSync(indexPath(data.paths.sessions, 'work'));
    // A record that counts a turn too many, as after a hand edit of the log.
    const path = recordPath(data.paths.sessions, 'work');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"turns":3', '"turns":4'));
    const before = saved(data.paths);
    const session = await work(data.paths);
    const spec: ReplaySpec = { kind: 'session' };
    const plan = await planWithHistory(
      (rebuild) => openReplaySource(data.paths, session, spec, DEFAULT_REPLAY_POLICY.classify, rebuild, { save }),
      (history) => makePlanInput({ input: 'Write it', spec, history }),
      'work',
    );
    expect(plan.replayPolicy?.decisions.map((turn) => turn.id)).toEqual(data.ids);
    expect(described(saved(data.paths))).toEqual(described(after(pristine, before)));
  });
});
