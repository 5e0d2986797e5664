// Turn completion under concurrency and against session maintenance (items 5, 6, 8).
import { existsSync, lstatSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withSessionLock } from '../../src/log/lock.js';
import { SessionUpdateError, recordTurn, turnsGathering, usedBy } from '../../src/sessions/record-turn.js';
import { renameSession } from '../../src/sessions/manage.js';
import { byLastUsed, deleteSession, listSessions, openSession, readSession } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { readIndex } from '../../src/sessions/turn-index.js';
import { makeEntry, tempData } from '../query/helpers.js';
import { waitFor } from '../support/wait.js';

const NOW = '2025-01-02T00:00:00Z';
const logIds = (logs: string): string[] =>
  readFileSync(join(logs, '2025-01-02.log'), 'utf8').split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { id: string }).id);

describe('recordTurn', () => {
  it('50 concurrent turns of one session count 50 (item 6)', async () => {
    const { paths } = tempData();
    const session = await openSession(paths.sessions, 'shared', NOW);
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => recordTurn(paths, session, makeEntry({ id: `t-${i}`, session: 'shared', session_id: session.id }), '2025-01-02')),
    );
    expect((await readSession(paths.sessions, 'shared'))?.turns).toBe(50);
    expect(await readIndex(paths.sessions, 'shared')).toHaveLength(50);
    expect(logIds(paths.logs)).toHaveLength(50);
  });

  it('turns finishing while another is written go in together, in the order they finished, each index line on its own log line', async () => {
    const { paths } = tempData();
    const session = await openSession(paths.sessions, 'shared', NOW);
    let writing: Promise<string[]> = Promise.resolve([]);
    // The lock held here stands for a write under way: the turns below finish meanwhile.
    await withSessionLock(paths.logs, session.id, async () => {
      writing = Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          recordTurn(
            paths,
            session,
            makeEntry({ id: `t-${i}`, session: 'shared', session_id: session.id, status: i === 19 ? 'error' : 'ok', model: `m-${i}`, user_prompt: i === 0 ? '' : `question ${i}` }),
            '2025-01-02',
          ),
        ),
      );
      await waitFor(() => expect(turnsGathering()).toBe(1));
    });
    const files = await writing;
    expect(new Set(files)).toEqual(new Set([join(paths.logs, '2025-01-02.log')]));
    expect(logIds(paths.logs)).toEqual(Array.from({ length: 20 }, (_, i) => `t-${i}`));
    const bytes = readFileSync(join(paths.logs, '2025-01-02.log'));
    const index = (await readIndex(paths.sessions, 'shared')) ?? [];
    expect(index.map((line) => line.id)).toEqual(logIds(paths.logs));
    for (const line of index) {
      const text = bytes.subarray(line.offset, line.offset + line.length).toString('utf8');
      expect((JSON.parse(text) as { id: string }).id).toBe(line.id);
    }
    // As twenty writes one after another would leave it: the first prompt with words names the
    // session, and a failed last turn does not become its model.
    expect(await readSession(paths.sessions, 'shared')).toMatchObject({ turns: 20, last_turn_id: 't-19', last_model: 'm-18', title: 'question 1' });
    expect(turnsGathering()).toBe(0);
  });

  it('a session renamed while the turn ran gets the turn under its new name; the old name is not recreated (item 5)', async () => {
    const { paths } = tempData();
    const planned = await openSession(paths.sessions, 'work', NOW);
    await renameSession(paths.sessions, planned, 'project');
    await recordTurn(paths, planned, makeEntry({ id: 'late', session: 'work', session_id: planned.id }), '2025-01-02');
    expect(existsSync(join(paths.sessions, 'work.json'))).toBe(false);
    expect(existsSync(join(paths.sessions, 'work.idx'))).toBe(false);
    expect(await readSession(paths.sessions, 'project')).toMatchObject({ id: planned.id, turns: 1, last_turn_id: 'late' });
    expect((await readIndex(paths.sessions, 'project'))?.map((line) => line.id)).toEqual(['late']);
  });

  it('a session removed while the turn ran: the line is logged under its id, nothing recreated (item 5)', async () => {
    const { paths } = tempData();
    const planned = await openSession(paths.sessions, 'work', NOW);
    await deleteSession(paths.sessions, 'work');
    await recordTurn(paths, planned, makeEntry({ id: 'orphan', session: 'work', session_id: planned.id }), '2025-01-02');
    expect(logIds(paths.logs)).toEqual(['orphan']);
    expect(existsSync(join(paths.sessions, 'work.json'))).toBe(false);
    expect(existsSync(join(paths.sessions, 'work.idx'))).toBe(false);
  });

  it('a different session now under the old name is left alone', async () => {
    const { paths } = tempData();
    const planned = await openSession(paths.sessions, 'work', NOW);
    await deleteSession(paths.sessions, 'work');
    const other = await openSession(paths.sessions, 'work', NOW);
    await recordTurn(paths, planned, makeEntry({ id: 'orphan', session: 'work', session_id: planned.id }), '2025-01-02');
    expect(await readSession(paths.sessions, 'work')).toMatchObject({ id: other.id, turns: 0 });
  });

  it('a rename racing the turn: either order, the turn ends up under the new name and the old one stays gone', async () => {
    for (let round = 0; round < 10; round++) {
      const { paths } = tempData();
      const planned = await openSession(paths.sessions, 'work', NOW);
      await Promise.all([
        recordTurn(paths, planned, makeEntry({ id: 'during', session: 'work', session_id: planned.id }), '2025-01-02'),
        renameSession(paths.sessions, planned, 'project'),
      ]);
      expect(existsSync(join(paths.sessions, 'work.json'))).toBe(false);
      expect(await readSession(paths.sessions, 'project')).toMatchObject({ turns: 1, last_turn_id: 'during' });
    }
  });

  it('waits for session maintenance holding the lock', async () => {
    const { paths } = tempData();
    const planned = await openSession(paths.sessions, 'work', NOW);
    await withSessionLock(paths.logs, planned.id, async () => {
      const failing = recordTurn(paths, planned, makeEntry({ session_id: planned.id }), '2025-01-02', undefined, { lockWaitMs: 30 });
      await expect(failing).rejects.toThrow(/^session .* has been locked by another argo process/);
    });
  });

  it('an index that cannot be written after the log append is reported as that, not as a lost turn (item 8)', async () => {
    const { paths } = tempData();
    const session = await openSession(paths.sessions, 'work', NOW);
    rmSync(join(paths.sessions, 'work.idx'), { force: true });
    // A link where the index file belongs is refused (a folder there is read around: damaged-index.test.ts).
    symlinkSync(join(paths.logs, 'elsewhere.idx'), join(paths.sessions, 'work.idx'));
    const failing = recordTurn(paths, session, makeEntry({ id: 'kept', session: 'work', session_id: session.id }), '2025-01-02');
    await expect(failing).rejects.toBeInstanceOf(SessionUpdateError);
    await expect(failing).rejects.toThrow(/^the turn was logged in .*2025-01-02\.log, but session "work" could not be updated: .*work\.idx is a symbolic link, and Argo does not follow links in its data home; remove the link, then the index is rebuilt from the log on next use \(do not ask again\)$/);
    expect(logIds(paths.logs)).toEqual(['kept']);
    // Left for the user to remove, as the message says.
    expect(lstatSync(join(paths.sessions, 'work.idx')).isSymbolicLink()).toBe(true);
  });
});

describe('usedBy: a session\'s title, creation and last use, whatever order its turns are logged in', () => {
  const [t1, t2, t3] = ['2025-01-02T10:00:00.000+00:00', '2025-01-02T10:05:00.000+00:00', '2025-01-02T10:10:00.000+00:00'];
  type Used = Pick<SessionRecord, 'title' | 'created_at' | 'last_used_at'>;
  const record = (used: Used, parent?: SessionRecord['parent']): SessionRecord => ({
    name: 'work',
    id: '00000000-0000-4000-8000-000000000001',
    turns: 1,
    last_model: null,
    ...used,
    ...(parent ? { parent } : {}),
  });
  const fork = { session_id: '00000000-0000-4000-8000-000000000002', name: 'parent', turn_id: 'p1' };

  // [case, the record, the turns logged (timestamp, prompt) in log order, the record after]
  it.each<[string, SessionRecord, [string, string][], Used]>([
    ['a new session\'s first turn', record({ title: '', created_at: t1, last_used_at: t1 }), [[t1, 'first']], { title: 'first', created_at: t1, last_used_at: t1 }],
    ['a later turn', record({ title: 'first', created_at: t1, last_used_at: t1 }), [[t2, 'second']], { title: 'first', created_at: t1, last_used_at: t2 }],
    // A slow turn asked first is logged after a quick one asked later, which made the record.
    ['a turn asked before the session\'s creation as recorded: its title, its start, and the last use kept',
      record({ title: 'quick', created_at: t3, last_used_at: t3 }), [[t1, 'slow']], { title: 'slow', created_at: t1, last_used_at: t3 }],
    ['then one asked between them: nothing moves back', record({ title: 'slow', created_at: t1, last_used_at: t3 }), [[t2, 'middle']], { title: 'slow', created_at: t1, last_used_at: t3 }],
    ['both in one write, in the order they finished', record({ title: '', created_at: t3, last_used_at: t3 }), [[t3, 'quick'], [t1, 'slow']], { title: 'slow', created_at: t1, last_used_at: t3 }],
    ['the earliest of three logged last', record({ title: '', created_at: t3, last_used_at: t3 }), [[t3, 'third'], [t2, 'second'], [t1, 'first']], { title: 'first', created_at: t1, last_used_at: t3 }],
    // 10:00+02:00 is 08:00 UTC: earlier than 09:00+00:00, although its text sorts later.
    ['instants, not texts: each writer\'s UTC offset counts', record({ title: 'first', created_at: '2025-01-02T10:00:00.000+02:00', last_used_at: '2025-01-02T10:00:00.000+02:00' }),
      [['2025-01-02T09:00:00.000+00:00', 'second']], { title: 'first', created_at: '2025-01-02T10:00:00.000+02:00', last_used_at: '2025-01-02T09:00:00.000+00:00' }],
    ['an earliest prompt with no words leaves the title', record({ title: 'quick', created_at: t3, last_used_at: t3 }), [[t1, '  \n ']], { title: 'quick', created_at: t1, last_used_at: t3 }],
    ['a fork keeps its parent\'s title and its own creation', record({ title: 'from the parent', created_at: t3, last_used_at: t3 }, fork), [[t1, 'asked before the fork']],
      { title: 'from the parent', created_at: t3, last_used_at: t3 }],
    ['a timestamp that cannot be read moves nothing, but names an untitled session', record({ title: '', created_at: t1, last_used_at: t1 }), [['yesterday', 'hello']], { title: 'hello', created_at: t1, last_used_at: t1 }],
    ['a last use that cannot be read is replaced', record({ title: 'first', created_at: t1, last_used_at: 'garbage' }), [[t2, 'second']], { title: 'first', created_at: t1, last_used_at: t2 }],
  ])('%s', (_case, current, turns, after) => {
    expect(usedBy(current, turns.map(([timestamp, user_prompt]) => ({ timestamp, user_prompt })))).toEqual(after);
  });

  it('through recordTurn: a slow first turn logged last names the session, and it still lists as used last', async () => {
    const { paths } = tempData();
    const [slowAt, midAt, quickAt] = ['2025-01-02T10:00:00.000+00:00', '2025-01-02T10:01:00.000+00:00', '2025-01-02T10:02:00.000+00:00'];
    // The quick turn's write made the record (as a new session's first write does), then the slow one was logged.
    const work = await openSession(paths.sessions, 'work', quickAt);
    const mid = await openSession(paths.sessions, 'mid', midAt);
    await recordTurn(paths, mid, makeEntry({ id: 'mid', timestamp: midAt, session: 'mid', session_id: mid.id, user_prompt: 'in between' }), '2025-01-02');
    await recordTurn(paths, work, makeEntry({ id: 'quick', timestamp: quickAt, session: 'work', session_id: work.id, user_prompt: 'the quick one' }), '2025-01-02');
    await recordTurn(paths, work, makeEntry({ id: 'slow', timestamp: slowAt, session: 'work', session_id: work.id, user_prompt: 'the slow one' }), '2025-01-02');
    expect(await readSession(paths.sessions, 'work')).toMatchObject({ title: 'the slow one', created_at: slowAt, last_used_at: quickAt, turns: 2, last_turn_id: 'slow' });
    expect((await listSessions(paths.sessions)).sort(byLastUsed).map((one) => one.name)).toEqual(['work', 'mid']);
  });
});
