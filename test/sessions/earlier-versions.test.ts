// Session records and index lines that earlier versions wrote (test/fixtures/earlier-versions), read
// by today's checks and stores.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IndexLineSchema } from '../../src/sessions/index-schema.js';
import { SessionRecordSchema } from '../../src/sessions/record-schema.js';
import { isSessionRecord, scanSessions, shownRecord } from '../../src/sessions/store.js';
import { isIndexLine } from '../../src/sessions/turn-index.js';
import { defined } from '../support/defined.js';
import { earlierHome } from '../support/earlier-homes.js';

const HOMES = ['caf6b5f-first', '92c02f1-forks', '5be5160-agent-serve', 'c24b503-journal', 'f09f18a-journal-owner'];

const sessionsOf = (home: string): string => join(earlierHome(home), 'sessions');
const recordOf = (home: string, name: string): Record<string, unknown> => JSON.parse(readFileSync(join(sessionsOf(home), `${name}.json`), 'utf8')) as Record<string, unknown>;

describe('every session record and index line an earlier version wrote is read', () => {
  it.each(HOMES)('%s: records pass the hand check and zod; index lines too', (home) => {
    const files = readdirSync(sessionsOf(home));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(join(sessionsOf(home), file), 'utf8');
      const values: unknown[] = file.endsWith('.json') ? [JSON.parse(text)] : text.split('\n').filter((line) => line !== '').map((line): unknown => JSON.parse(line));
      for (const value of values) {
        const verdicts = file.endsWith('.json') ? [isSessionRecord(value), SessionRecordSchema.safeParse(value).success] : [isIndexLine(value), IndexLineSchema.safeParse(value).success];
        expect(verdicts, `${home}/${file}`).toEqual([true, true]);
      }
    }
  });
});

describe('each earlier shape of a record or an index line', () => {
  it.each<[string, string, string, (record: Record<string, unknown>) => unknown, unknown]>([
    // last_turn_id came with 92c02f1: without it the index is taken as it is (no stale check).
    ['caf6b5f-first', 'work', 'no last_turn_id', (r) => 'last_turn_id' in r, false],
    // Before 5fc8e2d a failed turn's model became the session's; it stays what the file says.
    ['caf6b5f-first', 'work', 'the model of a failed turn as last_model', (r) => r.last_model, 'nosuch'],
    ['92c02f1-forks', 'alt2', 'a fork of a fork: the whole lineage', (r) => (r.parent as { parent?: { name: string } }).parent?.name, 'work'],
    ['92c02f1-forks', '.notes', 'a name with a leading dot', (r) => r.name, '.notes'],
    ['5be5160-agent-serve', 'stories2', 'no model yet (its one turn was cut)', (r) => r.last_model, null],
  ])('%s %s: %s', (home, name, _shape, field, expected) => {
    expect(field(recordOf(home, name))).toEqual(expected);
  });

  it.each([
    ['caf6b5f-first', 'work', false],
    ['92c02f1-forks', 'fork1', false],
    ['5be5160-agent-serve', 'agent', true],
  ])('%s %s.idx: lines with rules: %s (a line without says: classify again)', (home, name, withRules) => {
    const lines = readFileSync(join(sessionsOf(home), `${name}.idx`), 'utf8').split('\n').filter((line) => line !== '');
    expect(lines.map((line) => 'rules' in (JSON.parse(line) as object))).toEqual(lines.map(() => withRules));
  });
});

describe('a session an earlier version named with a leading dot', () => {
  it.each([
    [{}, ['alt2', 'fork1', 'shop', 'work']],
    [{ earlierNames: true }, ['.notes', 'alt2', 'fork1', 'shop', 'work']],
  ])('scanSessions(%j) finds %j', async (options, names) => {
    const { records, damaged } = await scanSessions(sessionsOf('92c02f1-forks'), options);
    expect([records.map((record) => record.name).sort(), damaged]).toEqual([names, []]);
  });

  it('is the parent its fork shows, not a removed one', async () => {
    const { records } = await scanSessions(sessionsOf('92c02f1-forks'), { earlierNames: true });
    const shop = defined(records.find((record) => record.name === 'shop'), 'the fork shop');
    expect(shownRecord(shop, records).parent).toEqual({ session_id: recordOf('92c02f1-forks', '.notes').id, name: '.notes', turn_id: '2aYrA9y5buYE' });
  });
});
