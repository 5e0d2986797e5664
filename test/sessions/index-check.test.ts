// The index reader's own check (isIndexLine) must give IndexLineSchema's verdict on every line.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/log/entry.js';
import { ScanStats } from '../../src/log/scan.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import { recordTurn } from '../../src/sessions/record-turn.js';
import { openSession, readSession } from '../../src/sessions/store.js';
import { loadSessionEntries, openReplaySource } from '../../src/sessions/turns.js';
import { makeEntry, tempData } from '../query/helpers.js';
import { disagreements } from '../support/schema-agreement.js';
import { IndexLineSchema } from '../../src/sessions/index-schema.js';
import { isIndexLine, parseIndexLine } from '../../src/sessions/turn-index.js';

const line = { id: 'abc', file: '2025-01-02.log', offset: 0, length: 10, status: 'ok', type: 'question', rules: 'r1' };

const PROBES: unknown[] = [
  undefined,
  null,
  true,
  0,
  -0,
  -1,
  1,
  1.5,
  2 ** 53,
  Infinity,
  Number.NaN,
  '',
  'x',
  'ok',
  'error',
  'question',
  'meta',
  '2025-01-02.log',
  '../2025-01-02.log',
  'logs/2025-01-02.log',
  '2025-01-02.txt',
  [],
  ['ok'],
  {},
];

describe('the index line check agrees with the schema', () => {
  it(`gives zod's verdict for each of ${Object.keys(line).length * PROBES.length} single-field changes`, () => {
    expect(disagreements(line, PROBES, isIndexLine, IndexLineSchema)).toEqual([]);
  });

  it.each([['a line', line, true], ['without rules', { ...line, rules: undefined }, true], ["a status a newer Argo writes", { ...line, status: 'cancelled' }, true], ['a status that is no word', { ...line, status: 1 }, false], ['an array', [line], false], ['a string', 'x', false], ['null', null, false]])(
    '%s',
    (_name, value, ok) => {
      expect(IndexLineSchema.safeParse(value).success).toBe(ok);
      expect(isIndexLine(value)).toBe(ok);
    },
  );

  it('reads a line, sharing the repeated file name and rules between lines', () => {
    const first = parseIndexLine(JSON.stringify(line));
    const second = parseIndexLine(JSON.stringify({ ...line, id: 'def' }));
    expect(first).toEqual(line);
    expect(second?.file).toBe(first?.file);
    expect(parseIndexLine('{"id":')).toBeNull();
    expect(parseIndexLine(JSON.stringify({ ...line, length: 0 }))).toBeNull();
  });
});

describe('a turn a newer Argo logged with a status this version does not know', () => {
  it('is read through the index like any turn, never replayed, and no read rebuilds the index from the log', async () => {
    const { paths } = tempData();
    const session = await openSession(paths.sessions, 'work', '2025-01-02T00:00:00Z');
    const turn = (id: string, status: string): Promise<string> =>
      recordTurn(paths, session, makeEntry({ id, session: 'work', session_id: session.id, status: status as LogEntry['status'], user_prompt: `Add ${id}` }), '2025-01-02');
    await turn('t1', 'ok');
    await turn('t2', 'cancelled');
    // A line naming the session that cannot be read: a rebuild, which scans the log, counts it.
    appendFileSync(join(paths.logs, '2025-01-02.log'), `{"session_id":${JSON.stringify(session.id)},\n`);
    const record = await readSession(paths.sessions, 'work');
    if (record === null) throw new Error('no record');
    const stats = new ScanStats();
    expect((await loadSessionEntries(paths, record, undefined, stats)).map((entry) => [entry.id, entry.status])).toEqual([['t1', 'ok'], ['t2', 'cancelled']]);
    expect(stats.unreadable).toBe(0);
    const source = await openReplaySource(paths, record, { kind: 'session' }, DEFAULT_REPLAY_POLICY.classify, false);
    expect(source.turns.map((one) => one.id)).toEqual(['t1']);
    source.close();
  });
});
