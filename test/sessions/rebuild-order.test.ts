// A rebuilt index keeps the order turns were appended in, and holds each turn once.
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { composeHistory, inIndexOrder, indexedOrder, openReplaySource, rebuildIndex } from '../../src/sessions/turns.js';
import type { Lineage } from '../../src/sessions/turns.js';
import { recordTurn } from '../../src/sessions/record-turn.js';
import { classifyEntry, rulesFingerprint } from '../../src/replay/classify.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import { indexPath, openSession, readSession } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { indexLine, readIndex } from '../../src/sessions/turn-index.js';
import type { IndexLine } from '../../src/sessions/turn-index.js';
import { makeEntry, tempData } from '../query/helpers.js';
import type { Home } from '../query/helpers.js';
import { defined } from '../support/defined.js';

const RULES = DEFAULT_REPLAY_POLICY.classify;
const D2 = '2025-01-02.log';
const D14 = '2025-01-14.log';
/** Index lines named by their ids, in the log's order: `a@14` is in the file of the 14th. */
const lines = (...ids: string[]): IndexLine[] =>
  ids.map((spec, offset) => {
    const [id = '', day] = spec.split('@');
    return indexLine(id, day === '14' ? D14 : D2, offset * 100, 50, 'ok', 'instruction');
  });
const ids = (history: readonly IndexLine[]): string => history.map((line) => line.id).join(' ');
const orderOf = (...listed: string[]): Map<string, number> => new Map(listed.map((id, place) => [id, place]));

describe('inIndexOrder', () => {
  const cases: [string, string[], string[], string][] = [
    ['no index: the log’s order', ['b', 'c', 'a@14'], [], 'b c a'],
    ['every turn listed: the index’s order (a file named for a day ahead)', ['b', 'c', 'a@14'], ['a', 'b', 'c'], 'a b c'],
    ['one logged since: after the listed turn before it in the log', ['b', 'c', 'd', 'a@14'], ['a', 'b', 'c'], 'a b c d'],
    ['one whose index line was never written: in its place among the others', ['a', 'b', 'c'], ['a', 'c'], 'a b c'],
    ['one before every listed turn in the log: leads', ['x', 'b', 'c', 'a@14'], ['a', 'b', 'c'], 'x a b c'],
    ['listed turns gone from the log: left out', ['b'], ['a', 'b', 'c'], 'b'],
    ['an index of other turns (a leftover of an earlier session): the log’s order', ['b', 'a@14'], ['p', 'q'], 'b a'],
  ];
  it.each(cases)('%s', (_, log, listed, expected) => {
    expect(ids(inIndexOrder(lines(...log), orderOf(...listed)))).toBe(expected);
  });
});

describe('composeHistory: one turn per id, in the order of the index it replaces', () => {
  const fork: Lineage[] = [{ id: 'f', forkedAt: 'b' }, { id: 'p' }];
  const cases: [string, Lineage[], Record<string, string[]>, string[], string][] = [
    ['a line appended back: one turn, at its first line', [{ id: 'p' }], { p: ['a', 'b', 'a', 'c'] }, [], 'a b c'],
    ['appended back, with the index: still once', [{ id: 'p' }], { p: ['a', 'b', 'c', 'b'] }, ['a', 'b', 'c'], 'a b c'],
    ['a fork: the parent’s order up to the fork point, then its own', fork, { p: ['b', 'c', 'a@14'], f: ['x', 'y'] }, ['a', 'b', 'x', 'y'], 'a b x y'],
    ['a fork whose own turn repeats an inherited one: once', fork, { p: ['a', 'b'], f: ['x', 'b'] }, [], 'a b x'],
  ];
  it.each(cases)('%s', (_, lineage, own, listed, expected) => {
    const history = composeHistory(lineage, (id) => lines(...(own[id] ?? [])), new Map(), orderOf(...listed));
    expect(ids(history)).toBe(expected);
  });

  it('a repeated line keeps the first line’s place in the log', () => {
    const history = composeHistory([{ id: 'p' }], () => lines('a', 'b', 'a'));
    expect(history.map((line) => line.offset)).toEqual([0, 100]);
  });
});

describe('indexedOrder', () => {
  const line = (id: string): string => `${JSON.stringify(indexLine(id, D2, 0, 50, 'ok', 'instruction'))}\n`;
  const cases: [string, string | null, string[]][] = [
    ['no index', null, []],
    ['an index', line('a') + line('b') + line('c'), ['a', 'b', 'c']],
    ['its last byte cut (marked stale): every line still read', (line('a') + line('b')).slice(0, -1), ['a', 'b']],
    ['a write cut short and garbage passed over', `${line('a')}not json\n${line('b')}{"id":"c","fi`, ['a', 'b']],
    ['an id listed twice: its first place', line('a') + line('b') + line('a'), ['a', 'b']],
  ];
  it.each(cases)('%s', async (_, text, expected) => {
    const { paths } = tempData();
    if (text !== null) writeFileSync(indexPath(paths.sessions, 'work'), text);
    expect([...(await indexedOrder(paths.sessions, 'work')).keys()]).toEqual(expected);
  });

  it('a folder where the index goes: none', async () => {
    const { paths } = tempData();
    mkdirSync(indexPath(paths.sessions, 'work'));
    expect((await indexedOrder(paths.sessions, 'work')).size).toBe(0);
  });
});

/** Session ck: A logged while the clock was 12 days ahead, then B, C and D once it was right. */
async function clockAhead(): Promise<Home & { session: SessionRecord; turnIds: Record<string, string> }> {
  const data = tempData();
  const opened = await openSession(data.paths.sessions, 'ck', '2025-01-02T09:00:00.000Z');
  const turnIds: Record<string, string> = {};
  for (const [name, day] of [['A', '2025-01-14'], ['B', '2025-01-02'], ['C', '2025-01-02'], ['D', '2025-01-02']] as const) {
    const prompt = `Explain ${name}`;
    const entry = makeEntry({ id: `turn-000000${name}`, session: 'ck', session_id: opened.id, user_prompt: prompt, entry_type: classifyEntry(prompt, RULES) });
    turnIds[name] = entry.id;
    await recordTurn(data.paths, opened, entry, day, rulesFingerprint(RULES));
  }
  return { ...data, session: defined(await readSession(data.paths.sessions, 'ck'), 'session ck'), turnIds };
}

describe('rebuildIndex after a clock was set days ahead', () => {
  const indexIds = async (home: Home): Promise<string> => ids((await readIndex(home.paths.sessions, 'ck')) ?? []);

  it('the index written at the time lists the turns as they were appended; a rebuild keeps that order', async () => {
    const data = await clockAhead();
    const { turnIds } = data;
    const appended = [turnIds.A, turnIds.B, turnIds.C, turnIds.D].join(' ');
    expect(await indexIds(data)).toBe(appended);
    expect(ids(await rebuildIndex(data.paths, data.session, { classify: { ...RULES, politePrefixes: ['kindly'] } }))).toBe(appended);
    expect(await indexIds(data)).toBe(appended);
    // Its last byte cut (a turn's index write that failed): still the same order.
    const path = indexPath(data.paths.sessions, 'ck');
    writeFileSync(path, readFileSync(path).subarray(0, -1));
    expect(ids(await rebuildIndex(data.paths, data.session))).toBe(appended);
  });

  it('without an index, the log’s order: files by name', async () => {
    const data = await clockAhead();
    writeFileSync(indexPath(data.paths.sessions, 'ck'), '');
    expect(ids(await rebuildIndex(data.paths, data.session))).toBe([data.turnIds.B, data.turnIds.C, data.turnIds.D, data.turnIds.A].join(' '));
  });

  it('--explain (nothing saved) plans from the history the turn itself would rebuild', async () => {
    const { paths, session, turnIds } = await clockAhead();
    const path = indexPath(paths.sessions, 'ck');
    // C's index line never written, and the cached types stale: the turn would rebuild, and find C.
    writeFileSync(path, readFileSync(path, 'utf8').split('\n').filter((text) => !text.includes(turnIds.C ?? '-')).join('\n'));
    const classify = { ...RULES, politePrefixes: ['kindly'] };
    const spec = { kind: 'last', count: 2 } as const;
    const explained = await openReplaySource(paths, session, spec, classify, false, { save: false });
    expect(explained.turns.map((turn) => turn.id)).toEqual([turnIds.C, turnIds.D]);
    expect(readFileSync(path, 'utf8')).not.toContain(turnIds.C);
    const run = await openReplaySource(paths, session, spec, classify, false);
    expect(run.turns).toEqual(explained.turns);
    explained.close();
    run.close();
  });

  const appendBack = (paths: Home['paths'], id: string): void => {
    const copy = readFileSync(join(paths.logs, D2), 'utf8').split('\n').find((text) => text.includes(id));
    appendFileSync(join(paths.logs, D2), `${copy ?? ''}\n`);
  };

  it('a line appended back to the log is one turn at its first line, counted once, with the index or without', async () => {
    const { paths, session, turnIds } = await clockAhead();
    const { B = '', C = '', D = '', A = '' } = turnIds;
    const [before] = (await readIndex(paths.sessions, 'ck')) ?? [];
    appendBack(paths, B);
    const rebuilt = await rebuildIndex(paths, session, { classify: { ...RULES, politePrefixes: ['kindly'] } });
    expect(ids(rebuilt)).toBe([A, B, C, D].join(' '));
    expect(rebuilt[1]?.offset).toBe(0);
    writeFileSync(indexPath(paths.sessions, 'ck'), '');
    expect(ids(await rebuildIndex(paths, session))).toBe([B, C, D, A].join(' '));
    expect(before?.id).toBe(A);
    expect((await readSession(paths.sessions, 'ck'))?.turns).toBe(4);
  });

  it('an index listing a turn twice (an earlier rebuild of such a log) is rebuilt: the turn is replayed once', async () => {
    const { paths, session, turnIds } = await clockAhead();
    const path = indexPath(paths.sessions, 'ck');
    const lastLine = readFileSync(path, 'utf8').trimEnd().split('\n').at(-1) ?? '';
    appendFileSync(path, `${lastLine}\n`);
    for (const spec of [{ kind: 'session' }, { kind: 'last', count: 2 }] as const) {
      const source = await openReplaySource(paths, session, spec, RULES, false);
      expect(source.turns.map((turn) => turn.id)).toEqual(spec.kind === 'session' ? [turnIds.A, turnIds.B, turnIds.C, turnIds.D] : [turnIds.C, turnIds.D]);
      source.close();
    }
  });

  it('an index listing an old turn again after the newest (its first listing before the tail last:N reads) is rebuilt too', async () => {
    const { paths, session, turnIds } = await clockAhead();
    const path = indexPath(paths.sessions, 'ck');
    const firstLine = readFileSync(path, 'utf8').split('\n')[0] ?? '';
    appendFileSync(path, `${firstLine}\n`);
    const source = await openReplaySource(paths, session, { kind: 'last', count: 2 }, RULES, false);
    expect(source.turns.map((turn) => turn.id)).toEqual([turnIds.C, turnIds.D]);
    source.close();
  });
});
