// A rename killed at any of its steps is finished by the next argo that meets it, never left as two
// sessions of one id; and no rename or fork takes the name of a session whose first turn is being answered.
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bootId, machineId, pidNamespace, writeUnfinished } from '../../src/log/unfinished.js';
import type { TurnOwner, UnfinishedTurn } from '../../src/log/unfinished.js';
import { firstTurnsRefusal, forkSession, reindexAll, renameSession, requireFree, resumeRename, startsSession } from '../../src/sessions/manage.js';
import type { OwnerElsewhere } from '../../src/sessions/manage.js';
import { encodeRecord, listSessions, readSession, withoutRenamedSources } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { loadSessionEntries } from '../../src/sessions/turns.js';
import type { DataPaths } from '../../src/log/writer.js';
import { defined } from '../support/defined.js';
import { makeDraft, recordTurns, tempData } from '../query/helpers.js';

const record = (name: string, id: string, extra: Partial<SessionRecord> = {}): SessionRecord => ({
  name,
  id,
  title: '',
  turns: 0,
  created_at: '2025-01-02T10:00:00.000Z',
  last_used_at: '2025-01-02T10:00:00.000Z',
  last_model: null,
  ...extra,
});

describe('withoutRenamedSources: a rename cut short lists the session once, under its new name', () => {
  it.each<[string, SessionRecord[], string[]]>([
    ['no rename under way', [record('a', '1'), record('b', '2')], ['a', 'b']],
    ['the old and the new record of one rename', [record('old', '1'), record('new', '1', { renamed_from: 'old' })], ['new']],
    ['the old record gone already', [record('new', '1', { renamed_from: 'old' })], ['new']],
    ['another session under the old name (another id) stays', [record('old', '2'), record('new', '1', { renamed_from: 'old' })], ['old', 'new']],
    ['the same id under a third name stays (not this rename)', [record('other', '1'), record('new', '1', { renamed_from: 'old' })], ['other', 'new']],
  ])('%s', (_case, records, names) => {
    expect(withoutRenamedSources(records).map((one) => one.name)).toEqual(names);
  });
});

/** Where the rename was killed: the steps it had done. */
type Step = 'record made' | 'index moved' | 'old record removed';

/** Session "old" (two turns, a fork "kid"), renamed to "new" up to `step`, as a kill there leaves it. */
async function cutShort(step: Step): Promise<{ paths: DataPaths; old: SessionRecord; turns: string[] }> {
  const { paths } = tempData();
  const { session: old, entries } = await recordTurns(paths, 'old', 2);
  await forkSession(paths, old, undefined, 'kid', '2025-01-03T00:00:00.000Z');
  writeFileSync(join(paths.sessions, 'new.json'), encodeRecord({ ...old, name: 'new', renamed_from: 'old' }), { mode: 0o600 });
  if (step !== 'record made') renameSync(join(paths.sessions, 'old.idx'), join(paths.sessions, 'new.idx'));
  if (step === 'old record removed') rmSync(join(paths.sessions, 'old.json'));
  return { paths, old, turns: entries.map((entry) => entry.id) };
}

/** The rename, as finished: one record under the new name, unmarked, its index and forks with it. */
async function expectFinished(paths: DataPaths, old: SessionRecord, turns: string[]): Promise<void> {
  const files = readdirSync(paths.sessions).filter((file) => !file.startsWith('.'));
  expect(files.sort()).toEqual(['kid.idx', 'kid.json', 'new.idx', 'new.json']);
  const renamed = defined(await readSession(paths.sessions, 'new'), 'new');
  expect(renamed).toEqual({ ...old, name: 'new' });
  expect((await readSession(paths.sessions, 'kid'))?.parent).toMatchObject({ session_id: old.id, name: 'new' });
  expect((await loadSessionEntries(paths, renamed)).map((entry) => entry.id)).toEqual(turns);
}

describe('a rename killed part-way', () => {
  const steps: Step[] = ['record made', 'index moved', 'old record removed'];

  it.each(steps)('after "%s": listed once, under the new name', async (step) => {
    const { paths, old } = await cutShort(step);
    expect((await listSessions(paths.sessions)).map((one) => [one.name, one.id])).toEqual([
      ['kid', expect.any(String) as unknown],
      ['new', old.id],
    ]);
  });

  it.each(steps)('after "%s": the new name asked for again finishes it, and says so', async (step) => {
    const { paths, old, turns } = await cutShort(step);
    await expect(requireFree(paths.sessions, 'new')).rejects.toThrow(
      'session "old" was being renamed to "new" when an earlier argo stopped: that rename is finished now, and "new" is that session\'s name',
    );
    await expectFinished(paths, old, turns);
  });

  it.each(steps)('after "%s": argo sessions reindex finishes it', async (step) => {
    const { paths, old, turns } = await cutShort(step);
    await reindexAll(paths);
    await expectFinished(paths, old, turns);
  });

  it('the same rename run again (the old record still there) takes it up and completes it', async () => {
    const { paths, old, turns } = await cutShort('record made');
    await renameSession(paths.sessions, old, 'new');
    await expectFinished(paths, old, turns);
  });

  it('a turn logged under the old name meanwhile is in the renamed session', async () => {
    const { paths, turns } = await cutShort('record made');
    const { entries } = await recordTurns(paths, 'old', 1, { start: '2025-01-02T11:00:00.000Z' });
    await expect(requireFree(paths.sessions, 'new')).rejects.toThrow(/that rename is finished now/);
    const renamed = defined(await readSession(paths.sessions, 'new'), 'new');
    expect(renamed.renamed_from).toBeUndefined();
    expect((await loadSessionEntries(paths, renamed)).map((entry) => entry.id)).toEqual([...turns, ...entries.map((entry) => entry.id)]);
    expect(await readSession(paths.sessions, 'new')).toMatchObject({ turns: 3 });
  });

  it.each(steps)('after "%s": renamed again, the new rename finishes it first and leaves no mark of the old name', async (step) => {
    const { paths, old, turns } = await cutShort(step);
    const half = defined(await readSession(paths.sessions, 'new'), 'new');
    await renameSession(paths.sessions, half, 'other');
    const files = readdirSync(paths.sessions).filter((file) => !file.startsWith('.'));
    expect(files.sort()).toEqual(['kid.idx', 'kid.json', 'other.idx', 'other.json']);
    const renamed = defined(await readSession(paths.sessions, 'other'), 'other');
    expect(renamed).toEqual({ ...old, name: 'other' });
    expect((await readSession(paths.sessions, 'kid'))?.parent).toMatchObject({ session_id: old.id, name: 'other' });
    expect((await loadSessionEntries(paths, renamed)).map((entry) => entry.id)).toEqual(turns);
    // Taken as any session's name, not as a rename of "old" still under way.
    await expect(requireFree(paths.sessions, 'other')).rejects.toThrow('a session named "other" already exists');
  });

  it("an old record that carries a mark of its own (a rename of it cut short before) does not pass it on", async () => {
    const { paths, old, turns } = await cutShort('record made');
    writeFileSync(join(paths.sessions, 'old.json'), encodeRecord({ ...old, renamed_from: 'older' }), { mode: 0o600 });
    await reindexAll(paths);
    await expectFinished(paths, old, turns);
  });

  it.each<[string, boolean, Step, ((paths: DataPaths, old: SessionRecord) => void) | null, string, string]>([
    ['the same rename, after "record made"', true, 'record made', null, 'old', 'new'],
    ['the same rename, after "index moved"', true, 'index moved', null, 'old', 'new'],
    ['the same rename, after "old record removed"', true, 'old record removed', null, 'old', 'new'],
    ['another rename onto the new name', false, 'record made', null, 'kid', 'new'],
    ['the old name is another session\'s now', false, 'old record removed', (paths, old) => writeFileSync(join(paths.sessions, 'old.json'), encodeRecord({ ...old, id: 'another' }), { mode: 0o600 }), 'old', 'new'],
    ['a name no rename is under way to', false, 'record made', null, 'old', 'kid'],
  ])('resumeRename: %s: finished = %s', async (_case, finished, step, change, from, to) => {
    const { paths, old, turns } = await cutShort(step);
    change?.(paths, old);
    expect(await resumeRename(paths.sessions, from, to)).toBe(finished);
    if (finished) await expectFinished(paths, old, turns);
    else expect(await readSession(paths.sessions, 'new')).toMatchObject({ renamed_from: 'old' });
  });

  it('a rename that ran whole leaves no mark', async () => {
    const { paths } = tempData();
    const { session: old } = await recordTurns(paths, 'old', 1);
    await renameSession(paths.sessions, old, 'new');
    expect(await readSession(paths.sessions, 'new')).toEqual({ ...old, name: 'new' });
  });
});

describe('the name of a session whose first turn is being answered', () => {
  const here: TurnOwner = { pid: process.pid, host: hostname(), boot: bootId(), machine: machineId(), pidns: pidNamespace() };
  /** A turn in the journal owned by `owner` (default: this process, alive), asked in session `name`, whose record had id `id` (null: none yet). */
  const asking = async (paths: DataPaths, name: string, id: string | null, owner: TurnOwner = here): Promise<void> => {
    const turn: UnfinishedTurn = { owner, day: '2025-01-02', session: { id, name }, entry: makeDraft('firstturn001') };
    await writeUnfinished(dirname(paths.sessions), turn);
  };

  it.each<[string, unknown, boolean]>([
    ['asked in it with no record yet', { session: { id: null, name: 'newx' } }, true],
    ['asked in it when it had a record', { session: { id: 'abc', name: 'newx' } }, false],
    ['asked in another session', { session: { id: null, name: 'other' } }, false],
    ['no session field', { entry: {} }, false],
    ['not an object', 'newx', false],
  ])('a journal file %s: starts it = %s', (_case, value, starts) => {
    expect(startsSession(value, 'newx')).toBe(starts);
  });

  const file = '/h/unfinished/t1.json';
  const leftThere = (there: string): string => `(${file}), which only ${there} can log: once that argo has ended, any argo command there that reads the log (argo logs) logs it, and the name is that session's; if argo will not run there again, move the file out of /h/unfinished (it holds the question) and the name is free`;
  it.each<[string, OwnerElsewhere | null, string]>([
    ['an argo running here', null, `session "newx" is being started by a question still being answered (${file}); wait until it is logged, then choose another name`],
    ['an argo on another host', { pid: 42, host: 'otherbox' }, `session "newx" is being started by a question of argo pid 42 on otherbox ${leftThere('that host')}`],
    ['another machine of this host name', { pid: 42, host: 'ubuntu', machine: '0123456789abcdef0123456789abcdef' }, `session "newx" is being started by a question of argo pid 42 on ubuntu (machine id 01234567…) ${leftThere('that host')}`],
    ['another container on this machine', { pid: 1, host: 'box', container: 'pid:[4026532]' }, `session "newx" is being started by a question of argo pid 1 in another container on this machine (pid:[4026532]) ${leftThere('that container')}`],
  ])('firstTurnsRefusal: %s', (_case, owner, message) => {
    expect(firstTurnsRefusal('newx', file, owner)).toBe(message);
  });

  it('is not free: a rename or a fork onto it is refused, naming the turn, and nothing is made', async () => {
    const { paths } = tempData();
    const { session: a } = await recordTurns(paths, 'a', 1);
    await asking(paths, 'newx', null);
    const refusal = /^session "newx" is being started by a question still being answered \(.*\/unfinished\/firstturn001\.json\); wait until it is logged, then choose another name$/;
    await expect(requireFree(paths.sessions, 'newx')).rejects.toThrow(refusal);
    await expect(renameSession(paths.sessions, a, 'newx')).rejects.toThrow(refusal);
    await expect(forkSession(paths, a, undefined, 'newx', '2025-01-03T00:00:00.000Z')).rejects.toThrow(refusal);
    expect(existsSync(join(paths.sessions, 'newx.json'))).toBe(false);
    expect(await readSession(paths.sessions, 'a')).toEqual(a);
  });

  it.each<[string, Partial<TurnOwner>, RegExp | null]>([
    ['on another host: refused, naming the host and how to free the name', { host: 'otherbox', pid: 4242 }, /^session "newx" is being started by a question of argo pid 4242 on otherbox \(.*\), which only that host can log: .* move the file out of .*\/unfinished \(it holds the question\) and the name is free$/],
    ['in another container: refused, naming the container', { pid: 1, pidns: 'pid:[1]' }, /^session "newx" is being started by a question of argo pid 1 in another container on this machine \(pid:\[1\]\) /],
    // A pid no system gives (above pid_max): gone, and recovered by the next argo.
    ['gone from this machine: free', { pid: 99999999 }, null],
  ])('an owner %s', async (_case, owner, refusal) => {
    const { paths } = tempData();
    await asking(paths, 'newx', null, { ...here, ...owner });
    if (refusal === null) await expect(requireFree(paths.sessions, 'newx')).resolves.toBeUndefined();
    else await expect(requireFree(paths.sessions, 'newx')).rejects.toThrow(refusal);
  });

  it("a turn of a session that has a record, or of another name, leaves it free", async () => {
    const { paths } = tempData();
    await recordTurns(paths, 'a', 1);
    await asking(paths, 'newx', 'some-id');
    await expect(requireFree(paths.sessions, 'newx')).resolves.toBeUndefined();
  });
});
