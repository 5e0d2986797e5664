// Turn completion under concurrency and against session maintenance (items 5, 6, 8).
import { existsSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withSessionLock } from '../../src/log/lock.js';
import { SessionUpdateError, recordTurn, turnsGathering } from '../../src/sessions/record-turn.js';
import { renameSession } from '../../src/sessions/manage.js';
import { deleteSession, openSession, readSession } from '../../src/sessions/store.js';
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
    await expect(failing).rejects.toThrow(/^the turn was logged in .*2025-01-02\.log, but session "work" could not be updated \(.*\); do not ask again: its index is rebuilt from the log on next use$/);
    expect(logIds(paths.logs)).toEqual(['kept']);
  });
});
