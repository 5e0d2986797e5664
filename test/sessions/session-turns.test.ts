// A session's turns handed on one at a time (sessions show, GET /api/sessions/:name): the same turns,
// counts and JSON as reading them all at once, whether they are held or read twice.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/log/entry.js';
import { sessionJson } from '../../src/query/session-json.js';
import { forkSession } from '../../src/sessions/manage.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { loadSessionEntries, openSessionTurns } from '../../src/sessions/turns.js';
import type { SessionTurns, TurnPick } from '../../src/sessions/turns.js';
import { recordTurns, tempData } from '../query/helpers.js';
import type { Home } from '../query/helpers.js';

let data: Home;
let parent: SessionRecord;
let fork: SessionRecord;

beforeAll(async () => {
  data = tempData();
  const made = await recordTurns(data.paths, 'parent', 4);
  fork = (await forkSession(data.paths, made.session, made.entries[1]?.id, 'fork', '2025-01-02T11:00:00.000Z')).record;
  ({ session: fork } = await recordTurns(data.paths, 'fork', 2, { start: '2025-01-02T12:00:00.000Z' }));
  ({ session: parent } = await recordTurns(data.paths, 'parent', 1, { start: '2025-01-02T13:00:00.000Z' }));
});
afterAll(() => rmSync(data.home, { recursive: true, force: true }));

async function handedOn(turns: SessionTurns, stopAfter = Infinity): Promise<string[]> {
  const ids: string[] = [];
  await turns.each((entry) => {
    ids.push(entry.id);
    return Promise.resolve(ids.length < stopAfter);
  });
  return ids;
}

const ids = (entries: readonly LogEntry[]): string[] => entries.map((entry) => entry.id);

describe('openSessionTurns', () => {
  // Held: the default. Read twice: a hold of one byte, as a session of years is.
  const holds: [string, number | undefined][] = [
    ['held', undefined],
    ['read twice', 1],
  ];
  const cases: [string, () => SessionRecord, TurnPick, number, number][] = [
    ['every turn of a session', () => parent, { kind: 'all' }, 5, 0],
    ['a fork: its parent’s first two, then its own', () => fork, { kind: 'all' }, 4, 2],
    ['the newest three of a fork', () => fork, { kind: 'last', count: 3, okOnly: false }, 3, 1],
    ['none asked for', () => parent, { kind: 'last', count: 0, okOnly: false }, 0, 0],
  ];
  for (const [hold, holdBytes] of holds) {
    it.each(cases)(`${hold}: %s`, async (_name, session, pick, count, inherited) => {
      const turns = await openSessionTurns(data.paths, session(), pick, undefined, holdBytes);
      expect({ count: turns.count, inherited: turns.inherited }).toEqual({ count, inherited });
      const all = await loadSessionEntries(data.paths, session(), pick.kind === 'last' ? pick.count : undefined);
      expect(await handedOn(turns)).toEqual(ids(all));
      // Handed on again, the same turns.
      expect(await handedOn(turns)).toEqual(ids(all));
    });

    it(`${hold}: a visitor answering false stops it`, async () => {
      const turns = await openSessionTurns(data.paths, parent, { kind: 'all' }, undefined, holdBytes);
      expect(await handedOn(turns, 2)).toHaveLength(2);
    });
  }

  it('read twice: a log changed between the count and the reading is an error, not other turns', async () => {
    const turns = await openSessionTurns(data.paths, parent, { kind: 'all' }, undefined, 1);
    const file = join(data.paths.logs, '2025-01-02.log');
    const text = readFileSync(file, 'utf8');
    try {
      // The same bytes, another turn's id where the index says the first turn is.
      writeFileSync(file, text.replace(/"id":"t(\d)/, '"id":"x$1'));
      await expect(handedOn(turns)).rejects.toThrow('the log changed while reading session "parent"; try again');
    } finally {
      writeFileSync(file, text);
    }
  });
});

describe('sessionJson', () => {
  it.each<[string, () => SessionRecord, TurnPick, number | undefined]>([
    ['a fork, held', () => fork, { kind: 'all' }, undefined],
    ['a fork, read twice', () => fork, { kind: 'all' }, 1],
    ['no turns', () => parent, { kind: 'last', count: 0, okOnly: false }, undefined],
  ])('%s: the text JSON.stringify gives for the whole object', async (_name, session, pick, holdBytes) => {
    const turns = await openSessionTurns(data.paths, session(), pick, undefined, holdBytes);
    let text = '';
    await sessionJson({ name: session().name, shown: true }, turns, (piece) => {
      text += piece;
      return Promise.resolve(true);
    });
    const entries = await loadSessionEntries(data.paths, session(), pick.kind === 'last' ? pick.count : undefined);
    expect(text).toBe(JSON.stringify({ session: { name: session().name, shown: true }, turns: entries }));
  });

  it('stops when the reader has gone', async () => {
    const turns = await openSessionTurns(data.paths, parent, { kind: 'all' });
    const pieces: string[] = [];
    await sessionJson({}, turns, (piece) => {
      pieces.push(piece);
      return Promise.resolve(pieces.length < 2);
    });
    expect(pieces).toHaveLength(2);
  });
});
