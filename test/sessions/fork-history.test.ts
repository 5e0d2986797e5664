// How a fork's history is composed from its lineage, and how its parent is shown.
import { describe, expect, it } from 'vitest';
import { DamagedForkPoints, composeHistory, isBefore } from '../../src/sessions/turns.js';
import type { Lineage, LogPlace } from '../../src/sessions/turns.js';
import { shownRecord } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { indexLine } from '../../src/sessions/turn-index.js';
import type { IndexLine } from '../../src/sessions/turn-index.js';

const line = (id: string, file: string, offset: number): IndexLine => indexLine(id, file, offset, 10, 'ok', 'other');
const D1 = '2026-01-01.log';
const D2 = '2026-01-02.log';
// The parent p: a, b (day 1), c (day 2); the fork f, forked at b, has x (day 2).
const own: Record<string, IndexLine[]> = { p: [line('a', D1, 0), line('b', D1, 100), line('c', D2, 0)], f: [line('x', D2, 200)] };
const fork: Lineage[] = [{ id: 'f', forkedAt: 'b' }, { id: 'p' }];
const without = (id: string) => (session: string) => (own[session] ?? []).filter((one) => one.id !== id);

describe('composeHistory', () => {
  const cases: [string, (session: string) => readonly IndexLine[], Map<string, LogPlace>, string[]][] = [
    ['the fork point readable: up to it, then the fork’s own', (id) => own[id] ?? [], new Map<string, LogPlace>(), ['a', 'b', 'x']],
    ['the fork point unreadable, its place known: the turns before that place', without('b'), new Map([['b', { file: D1, offset: 100 }]]), ['a', 'x']],
    ['its place at the start of a later day: every earlier day’s turn, none of that day', without('b'), new Map([['b', { file: D2, offset: 0 }]]), ['a', 'x']],
    ['the fork point unreadable, its place unknown: nothing inherited, never a guess', without('b'), new Map<string, LogPlace>(), ['x']],
    ['a readable fork point wins over a damaged line of the same id', (id) => own[id] ?? [], new Map([['b', { file: D1, offset: 0 }]]), ['a', 'b', 'x']],
  ];
  it.each(cases)('%s', (_, lines, damaged, expected) => {
    expect(composeHistory(fork, lines, damaged).map((one) => one.id)).toEqual(expected);
  });

  it('the same inputs give the same history (a fork of a fork whose middle fork point is damaged)', () => {
    const lineage: Lineage[] = [{ id: 'g', forkedAt: 'x' }, { id: 'f', forkedAt: 'b' }, { id: 'p' }];
    const lines = (id: string): IndexLine[] => (id === 'g' ? [line('y', D2, 300)] : id === 'f' ? [] : (own[id] ?? []));
    const damaged = new Map([['x', { file: D2, offset: 200 }]]);
    const first = composeHistory(lineage, lines, damaged);
    expect(first.map((one) => one.id)).toEqual(['a', 'b', 'y']);
    expect(composeHistory(lineage, lines, damaged)).toEqual(first);
  });
});

describe('isBefore', () => {
  const cases: [LogPlace, LogPlace, boolean][] = [
    [{ file: D1, offset: 0 }, { file: D1, offset: 100 }, true],
    [{ file: D1, offset: 100 }, { file: D1, offset: 100 }, false],
    [{ file: D1, offset: 900 }, { file: D2, offset: 0 }, true],
    [{ file: D2, offset: 0 }, { file: D1, offset: 900 }, false],
  ];
  it.each(cases)('%o before %o: %s', (a, b, expected) => expect(isBefore(a, b)).toBe(expected));
});

describe('DamagedForkPoints', () => {
  const cases: [string, string, string | undefined][] = [
    ['a truncated line still holding its id', '{"id":"b","timestamp":"2026-01-01T0', 'b'],
    ['the id only quoted inside a prompt (escaped): not the turn', '{"user_prompt":"see \\"id\\":\\"b\\"", "x', undefined],
    ['a line whose id is gone', '{"i\u0000\u0000d":"b', undefined],
    ['another turn’s line', '{"id":"c","timestamp', undefined],
  ];
  it.each(cases)('%s', (_, text, expected) => {
    const damaged = new DamagedForkPoints(fork);
    damaged.see(`/home/logs/${D1}`, { text, offset: 42 });
    expect([...damaged.places.keys()][0]).toBe(expected);
    if (expected !== undefined) expect(damaged.places.get(expected)).toEqual({ file: D1, offset: 42 });
  });

  it('the first damaged line of an id wins', () => {
    const damaged = new DamagedForkPoints(fork);
    damaged.see(D1, { text: '{"id":"b"', offset: 5 });
    damaged.see(D1, { text: '{"id":"b"', offset: 50 });
    expect(damaged.places.get('b')).toEqual({ file: D1, offset: 5 });
  });
});

describe('shownRecord', () => {
  const base = { title: '', turns: 0, created_at: '', last_used_at: '', last_model: null };
  const record = (name: string, id: string, parent?: { session_id: string; name: string }): SessionRecord => ({
    ...base,
    name,
    id,
    ...(parent ? { parent: { ...parent, turn_id: 't' } } : {}),
  });
  const f = record('f', 'F', { session_id: 'W1', name: 'w' });
  const cases: [string, SessionRecord[], unknown][] = [
    ['the parent is there: as linked', [f, record('w', 'W1')], { session_id: 'W1', name: 'w', turn_id: 't' }],
    ['the parent was renamed: its current name', [f, record('v', 'W1')], { session_id: 'W1', name: 'v', turn_id: 't' }],
    ['the parent is gone: removed, under the name it had', [f], { session_id: 'W1', name: 'w', turn_id: 't', removed: true }],
    ['a new session took its name: still removed, never the newcomer', [f, record('w', 'W2')], { session_id: 'W1', name: 'w', turn_id: 't', removed: true }],
  ];
  it.each(cases)('%s', (_, records, parent) => expect(shownRecord(f, records).parent).toEqual(parent));

  it('a session that is not a fork is shown as it is', () => {
    const w = record('w', 'W1');
    expect(shownRecord(w, [w])).toBe(w);
  });
});
