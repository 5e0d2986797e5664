import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScanStats, scanEntries } from '../../src/log/scan.js';
import { loadHistory, loadSessionEntries, rebuildIndex } from '../../src/sessions/turns.js';
import { recordTurn } from '../../src/sessions/record-turn.js';
import type { DataPaths } from '../../src/log/writer.js';
import { deleteSession, indexPath, openSession, readSession } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { forkSession } from '../../src/sessions/manage.js';
import { readIndex } from '../../src/sessions/turn-index.js';
import { appendRaw, makeEntry, recordTurns, tempData } from './helpers.js';
import { at, defined } from '../support/defined.js';

const ids = (turns: readonly { id: string }[]): string[] => turns.map((turn) => turn.id);
const indexText = (paths: DataPaths, name: string): string => readFileSync(indexPath(paths.sessions, name), 'utf8');

/** Two interleaved sessions over two days; work's turn 3 failed, so it is never replayed. */
async function history(): Promise<{ paths: DataPaths; work: SessionRecord; workIds: string[]; pristine: string }> {
  const { paths } = tempData();
  const first = await recordTurns(paths, 'work', 3, { date: '2025-01-01', shape: (i) => (i === 2 ? { status: 'error' } : {}) });
  await recordTurns(paths, 'play', 2, { date: '2025-01-01' });
  const second = await recordTurns(paths, 'work', 3, { date: '2025-01-02' });
  await recordTurns(paths, 'play', 2, { date: '2025-01-02' });
  const work = defined(await readSession(paths.sessions, 'work'), 'session work');
  return { paths, work, workIds: [...ids(first.entries), ...ids(second.entries)], pristine: indexText(paths, 'work') };
}

describe('recordTurn', () => {
  it('indexes each line at its exact offset, even with many concurrent writers', async () => {
    const { paths } = tempData();
    const sessions = await Promise.all(['a', 'b', 'c'].map((name) => openSession(paths.sessions, name, '2025-01-02T00:00:00Z')));
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const session = at(sessions, i % 3);
        const entry = makeEntry({ id: `c-${i}`, session: session.name, session_id: session.id, user_prompt: `p${i} ${'x'.repeat(i * 37)}` });
        return recordTurn(paths, session, entry, '2025-01-02');
      }),
    );
    const log = readFileSync(join(paths.logs, '2025-01-02.log'));
    let indexed = 0;
    for (const session of sessions) {
      const lines = (await readIndex(paths.sessions, session.name)) ?? [];
      for (const line of lines) {
        const text = log.subarray(line.offset, line.offset + line.length).toString('utf8');
        expect((JSON.parse(text) as { id: unknown }).id).toBe(line.id);
        expect(log[line.offset + line.length]).toBe(10);
      }
      indexed += lines.length;
    }
    expect(indexed).toBe(60);
    expect(log.toString('utf8').split('\n').filter((line) => line !== '')).toHaveLength(60);
  });

  it('starts on a new line when the file ends with a line cut short, so only that one stays unreadable', async () => {
    const { paths } = tempData();
    appendRaw(paths, '2025-01-02', '{"id":"cut-short","sess');
    const { entries } = await recordTurns(paths, 'work', 2);
    const stats = new ScanStats();
    const found: string[] = [];
    for await (const { entry } of scanEntries([join(paths.logs, '2025-01-02.log')], stats)) found.push(entry.id);
    expect(found).toEqual(ids(entries));
    expect(stats.unreadable).toBe(1);
    const session = defined(await readSession(paths.sessions, 'work'), 'session work');
    expect(ids(await loadSessionEntries(paths, session))).toEqual(ids(entries));
    expect(session).toMatchObject({ turns: 2, last_turn_id: entries[1]?.id });
  });
});

describe('loadHistory through the index', () => {
  it('last:N is the newest N ok turns, oldest first; session is every ok turn', async () => {
    const { paths, work, workIds } = await history();
    const ok = workIds.filter((_, i) => i !== 2);
    expect(ids(await loadHistory(paths, work, { kind: 'last', count: 2 }))).toEqual(ok.slice(-2));
    expect(ids(await loadHistory(paths, work, { kind: 'last', count: 4 }))).toEqual(ok.slice(-4));
    expect(ids(await loadHistory(paths, work, { kind: 'last', count: 50 }))).toEqual(ok);
    expect(ids(await loadHistory(paths, work, { kind: 'session' }))).toEqual(ok);
    expect(await loadHistory(paths, work, { kind: 'none' })).toEqual([]);
    const turns = await loadHistory(paths, work, { kind: 'last', count: 1 });
    expect(turns).toEqual([{ id: workIds[5], prompt: 'work prompt 3', response: 'work answer 3' }]);
  });

  const damage: [string, (paths: DataPaths, text: string) => void][] = [
    ['deleted', (paths) => rmSync(indexPath(paths.sessions, 'work'))],
    ['emptied', (paths) => writeFileSync(indexPath(paths.sessions, 'work'), '')],
    ['truncated to its first lines', (paths, text) => writeFileSync(indexPath(paths.sessions, 'work'), text.split('\n').slice(0, 2).join('\n') + '\n')],
    ['cut in the middle of a line', (paths, text) => writeFileSync(indexPath(paths.sessions, 'work'), text.slice(0, text.length - 20))],
    ['holding garbage', (paths, text) => writeFileSync(indexPath(paths.sessions, 'work'), `${text}\u0000\u0001garbage\n`)],
    ['pointing past the end of a file', (paths, text) => writeFileSync(indexPath(paths.sessions, 'work'), text.replace(/"offset":\d+/g, '"offset":99999999'))],
    ['off by one byte', (paths, text) => writeFileSync(indexPath(paths.sessions, 'work'), text.replace(/"offset":(\d+)/g, (_, n: string) => `"offset":${Number(n) + 1}`))],
    ['naming a file that is gone', (paths, text) => writeFileSync(indexPath(paths.sessions, 'work'), text.replaceAll('2025-01-02.log', '2025-01-09.log'))],
    [
      'left over from an older session of that name',
      (paths) => {
        const other = readFileSync(indexPath(paths.sessions, 'play'), 'utf8');
        writeFileSync(indexPath(paths.sessions, 'work'), other);
      },
    ],
  ];

  describe.each(damage)('an index %s is rebuilt from the log, transparently', (_name, harm) => {
    it.each<['last' | 'session']>([['last'], ['session']])('--replay %s', async (kind) => {
      const { paths, work, workIds, pristine } = await history();
      harm(paths, pristine);
      const ok = workIds.filter((_, i) => i !== 2);
      const spec = kind === 'last' ? ({ kind: 'last', count: 3 } as const) : ({ kind: 'session' } as const);
      expect(ids(await loadHistory(paths, work, spec))).toEqual(kind === 'last' ? ok.slice(-3) : ok);
      expect(indexText(paths, 'work')).toBe(pristine);
    });
  });

  it('last:N reads only the tail: damage far from the end does not force a rebuild', async () => {
    const { paths, work, workIds, pristine } = await history();
    const damaged = `not an index line\n${pristine.split('\n').slice(1).join('\n')}`;
    writeFileSync(indexPath(paths.sessions, 'work'), damaged);
    expect(ids(await loadHistory(paths, work, { kind: 'last', count: 2 }))).toEqual(workIds.slice(-2));
    expect(indexText(paths, 'work')).toBe(damaged);
    // Reading the whole session meets the damage and rebuilds.
    expect(ids(await loadHistory(paths, work, { kind: 'session' }))).toEqual(workIds.filter((_, i) => i !== 2));
    expect(indexText(paths, 'work')).toBe(pristine);
  });

  it('a rebuild also repairs the record: own turn count and newest-turn marker', async () => {
    const { paths, work, workIds, pristine } = await history();
    writeFileSync(indexPath(paths.sessions, 'work'), '');
    await rebuildIndex(paths, { ...work, turns: 99 });
    expect(indexText(paths, 'work')).toBe(pristine);
    expect(await readSession(paths.sessions, 'work')).toMatchObject({ turns: 6, last_turn_id: workIds[5] });
  });
});

describe('a turn whose day sorts before one already written to', () => {
  it('lands in the later file, so a rebuilt index keeps the order the turns were written in', async () => {
    const { paths } = tempData();
    // Written in this order: the second started on an earlier local day (another zone, or before midnight).
    const east = await recordTurns(paths, 'trip', 1, { date: '2025-01-02', start: '2025-01-02T01:00:00+14:00' });
    const west = await recordTurns(paths, 'trip', 1, { date: '2025-01-01', start: '2025-01-01T12:00:00Z' });
    const later = await recordTurns(paths, 'trip', 1, { date: '2025-01-01', start: '2025-01-01T12:05:00Z' });
    const written = [...ids(east.entries), ...ids(west.entries), ...ids(later.entries)];
    const pristine = indexText(paths, 'trip');
    expect((await readIndex(paths.sessions, 'trip'))?.map((line) => line.file)).toEqual(['2025-01-02.log', '2025-01-02.log', '2025-01-02.log']);
    // Each keeps the timestamp of its own start.
    expect((await loadSessionEntries(paths, later.session)).map((entry) => entry.timestamp)).toEqual([
      '2025-01-01T11:00:00.000Z',
      '2025-01-01T12:00:00.000Z',
      '2025-01-01T12:05:00.000Z',
    ]);
    rmSync(indexPath(paths.sessions, 'trip'));
    expect(ids(await loadHistory(paths, later.session, { kind: 'session' }))).toEqual(written);
    expect(ids(await loadHistory(paths, later.session, { kind: 'last', count: 1 }))).toEqual(written.slice(-1));
    expect(indexText(paths, 'trip')).toBe(pristine);
  });
});

describe('forks replay their parent’s turns without copying log lines', () => {
  it('inherits up to the fork point, then its own turns; survives a lost index and a removed parent', async () => {
    const { paths, work, workIds } = await history();
    const logBytes = (): string => readFileSync(join(paths.logs, '2025-01-01.log'), 'utf8') + readFileSync(join(paths.logs, '2025-01-02.log'), 'utf8');
    const before = logBytes();
    const { record: fork, inherited } = await forkSession(paths, work, workIds[3], 'branch', '2025-01-03T00:00:00Z');
    expect(inherited).toBe(4);
    expect(logBytes()).toBe(before);
    expect(fork).toMatchObject({ turns: 0, last_model: 'argo', parent: { session_id: work.id, name: 'work', turn_id: workIds[3] }, last_turn_id: workIds[3] });

    const own = await recordTurns(paths, 'branch', 2, { date: '2025-01-03' });
    const expected = [workIds[0], workIds[1], workIds[3], ...ids(own.entries)];
    const branch = defined(await readSession(paths.sessions, 'branch'), 'session branch');
    expect(ids(await loadHistory(paths, branch, { kind: 'session' }))).toEqual(expected);
    expect(ids(await loadHistory(paths, branch, { kind: 'last', count: 3 }))).toEqual(expected.slice(-3));
    const pristine = indexText(paths, 'branch');

    rmSync(indexPath(paths.sessions, 'branch'));
    expect(ids(await loadHistory(paths, branch, { kind: 'session' }))).toEqual(expected);
    expect(indexText(paths, 'branch')).toBe(pristine);

    // The parent's record and index go (its log lines stay): the fork still finds them by id.
    await deleteSession(paths.sessions, 'work');
    rmSync(indexPath(paths.sessions, 'branch'));
    expect(ids(await loadHistory(paths, branch, { kind: 'session' }))).toEqual(expected);
    expect(indexText(paths, 'branch')).toBe(pristine);
  });

  it('a fork of a fork, with no own turns yet, replays the whole lineage', async () => {
    const { paths, work, workIds } = await history();
    await forkSession(paths, work, workIds[1], 'one', '2025-01-03T00:00:00Z');
    const ownOne = await recordTurns(paths, 'one', 2, { date: '2025-01-03' });
    await forkSession(paths, ownOne.session, undefined, 'two', '2025-01-03T00:00:00Z');
    const two = defined(await readSession(paths.sessions, 'two'), 'session two');
    const expected = [workIds[0], workIds[1], ...ids(ownOne.entries)];
    expect(ids(await loadHistory(paths, two, { kind: 'last', count: 2 }))).toEqual(expected.slice(-2));
    expect(ids(await loadSessionEntries(paths, two))).toEqual(expected);
    rmSync(indexPath(paths.sessions, 'two'));
    rmSync(indexPath(paths.sessions, 'one'));
    expect(ids(await loadSessionEntries(paths, two))).toEqual(expected);
  });
});
