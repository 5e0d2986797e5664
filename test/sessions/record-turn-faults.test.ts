// A turn whose log line landed but whose index line or record could not be written (a full disk):
// the next reader must see the turn, and the record's counters must come back in line.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type * as Fs from '../../src/log/fs.js';
import { makeEntry, tempData } from '../query/helpers.js';

const disk = vi.hoisted(() => ({ index: false, record: false }));

const full = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

vi.mock('../../src/log/fs.js', async (importOriginal) => {
  const original = await importOriginal<typeof Fs>();
  return {
    ...original,
    appendPrivate: async (path: string, text: string, options?: { create?: boolean }): Promise<boolean> => {
      if (disk.index && path.endsWith('.idx')) throw full();
      return original.appendPrivate(path, text, options);
    },
    writeFileAtomic: async (path: string, data: string | Uint8Array, options?: Fs.DataFileOptions): Promise<void> => {
      if ((disk.index && path.endsWith('.idx')) || (disk.record && path.endsWith('.json'))) throw full();
      return original.writeFileAtomic(path, data, options);
    },
  };
});

const { SessionUpdateError, recordTurn } = await import('../../src/sessions/record-turn.js');
const { openSession, readSession } = await import('../../src/sessions/store.js');
const { loadSessionEntries, openReplaySource } = await import('../../src/sessions/turns.js');
const { DEFAULT_REPLAY_POLICY } = await import('../../src/replay/policy.js');

const NOW = '2025-01-02T00:00:00Z';
const DAY = '2025-01-02';

async function fourTurns(): Promise<{ paths: ReturnType<typeof tempData>['paths']; turn: (id: string) => Promise<string> }> {
  const { paths } = tempData();
  const session = await openSession(paths.sessions, 'work', NOW);
  const turn = (id: string): Promise<string> => recordTurn(paths, session, makeEntry({ id, session: 'work', session_id: session.id, user_prompt: `Add ${id}` }), DAY);
  for (const id of ['t1', 't2', 't3', 't4']) await turn(id);
  return { paths, turn };
}

/** Logs turn `id` while `fault` fails the session's update (the turn's line still lands), then heals the disk. */
async function failingTurn(turn: (id: string) => Promise<string>, id: string, fault: { index: boolean; record: boolean }): Promise<void> {
  Object.assign(disk, fault);
  try {
    await expect(turn(id)).rejects.toBeInstanceOf(SessionUpdateError);
  } finally {
    Object.assign(disk, { index: false, record: false });
  }
}

describe('a turn logged while its session could not be updated', () => {
  it.each<[string, { index: boolean; record: boolean }]>([
    ['the index line fails (and so the record is not reached)', { index: true, record: false }],
    ['the index line is written, the record save fails', { index: false, record: true }],
  ])('%s: the next read has the turn, and the record is counted again', async (_case, fault) => {
    const { paths, turn } = await fourTurns();
    await failingTurn(turn, 't5', fault);
    const record = await readSession(paths.sessions, 'work');
    if (record === null) throw new Error('no record');
    expect((await loadSessionEntries(paths, record)).map((entry) => entry.id)).toEqual(['t1', 't2', 't3', 't4', 't5']);
    expect(await readSession(paths.sessions, 'work')).toMatchObject({ turns: 5, last_turn_id: 't5' });
    const source = await openReplaySource(paths, record, { kind: 'session' }, DEFAULT_REPLAY_POLICY.classify, false);
    expect(source.turns.map((one) => one.id)).toEqual(['t1', 't2', 't3', 't4', 't5']);
    source.close();
  });

  it('a replay while the disk is still full has the turn too (read from the log, nothing written)', async () => {
    const { paths, turn } = await fourTurns();
    disk.index = true;
    try {
      await expect(turn('t5')).rejects.toBeInstanceOf(SessionUpdateError);
      const record = await readSession(paths.sessions, 'work');
      if (record === null) throw new Error('no record');
      const source = await openReplaySource(paths, record, { kind: 'last', count: 2 }, DEFAULT_REPLAY_POLICY.classify, false);
      expect(source.turns.map((one) => one.id)).toEqual(['t4', 't5']);
      source.close();
    } finally {
      disk.index = false;
    }
  });

  it.each<[string, { index: boolean; record: boolean }]>([
    ['the index line', { index: true, record: false }],
    ['the record', { index: false, record: true }],
  ])('a turn logged after one whose %s failed, before any read, leaves the whole history to be read', async (_case, fault) => {
    const { paths, turn } = await fourTurns();
    await failingTurn(turn, 't5', fault);
    await turn('t6');
    const record = await readSession(paths.sessions, 'work');
    if (record === null) throw new Error('no record');
    expect((await loadSessionEntries(paths, record)).map((entry) => entry.id)).toEqual(['t1', 't2', 't3', 't4', 't5', 't6']);
    expect(await readSession(paths.sessions, 'work')).toMatchObject({ turns: 6, last_turn_id: 't6' });
  });

  it("a session's first turn whose record could not be saved is kept too", async () => {
    const { paths } = tempData();
    const session = await openSession(paths.sessions, 'fresh', NOW);
    const turn = (id: string): Promise<string> => recordTurn(paths, session, makeEntry({ id, session: 'fresh', session_id: session.id }), DAY);
    disk.record = true;
    try {
      await expect(turn('first')).rejects.toBeInstanceOf(SessionUpdateError);
    } finally {
      disk.record = false;
    }
    await turn('second');
    const record = await readSession(paths.sessions, 'fresh');
    if (record === null) throw new Error('no record');
    expect((await loadSessionEntries(paths, record)).map((entry) => entry.id)).toEqual(['first', 'second']);
    expect(await readSession(paths.sessions, 'fresh')).toMatchObject({ turns: 2, last_turn_id: 'second' });
  });
});

describe('a session whose index is missing', () => {
  it("a new session's first turn starts its index", async () => {
    const { paths } = tempData();
    const session = await openSession(paths.sessions, 'fresh', NOW);
    await recordTurn(paths, session, makeEntry({ id: 'first', session: 'fresh', session_id: session.id }), DAY);
    expect(existsSync(join(paths.sessions, 'fresh.idx'))).toBe(true);
  });

  it('a session with turns (its index removed by hand) gets no index of the new turn alone, which would pass for its history', async () => {
    const { paths, turn } = await fourTurns();
    rmSync(join(paths.sessions, 'work.idx'));
    await turn('t5');
    expect(existsSync(join(paths.sessions, 'work.idx'))).toBe(false);
    const record = await readSession(paths.sessions, 'work');
    if (record === null) throw new Error('no record');
    expect((await loadSessionEntries(paths, record)).map((entry) => entry.id)).toEqual(['t1', 't2', 't3', 't4', 't5']);
  });
});
