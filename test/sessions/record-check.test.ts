// The record reader's own check (isSessionRecord) must give SessionRecordSchema's verdict on every record.
import { describe, expect, it } from 'vitest';
import { disagreements } from '../support/schema-agreement.js';
import { SessionRecordSchema } from '../../src/sessions/record-schema.js';
import { decodeRecord, isDamaged, isSessionRecord } from '../../src/sessions/store.js';

const parent = { session_id: 'p1', name: 'base', turn_id: 't9' };
const record = {
  name: 'work',
  id: 'abc',
  title: 'a title',
  turns: 3,
  created_at: '2026-01-05T10:00:00.000+00:00',
  last_used_at: '2026-01-05T11:00:00.000+00:00',
  last_model: 'argo',
  parent: { ...parent, parent: { session_id: 'p0', name: 'root', turn_id: 't1' } },
  last_turn_id: 't12',
  renamed_from: 'old-name',
};

const PROBES: unknown[] = [undefined, null, true, 0, -0, -1, 1, 1.5, 2 ** 53, Infinity, Number.NaN, '', 'x', [], ['x'], {}, parent, { ...parent, parent: 'x' }, { ...parent, turn_id: 1 }];

describe('the session record check agrees with the schema', () => {
  it(`gives zod's verdict for each of ${Object.keys(record).length * PROBES.length} single-field changes`, () => {
    expect(disagreements(record, PROBES, isSessionRecord, SessionRecordSchema)).toEqual([]);
  });

  it.each([
    ['a record', record, true],
    ['a fresh one (no parent, no last turn, no model yet)', { ...record, parent: undefined, last_turn_id: undefined, last_model: null }, true],
    ['one with a field a newer Argo adds', { ...record, pinned: true }, true],
    ['an array', [record], false],
    ['a string', 'x', false],
    ['null', null, false],
  ])('%s', (_name, value, ok) => {
    expect(SessionRecordSchema.safeParse(value).success).toBe(ok);
    expect(isSessionRecord(value)).toBe(ok);
  });

  it('a record that is not one is damaged, naming the field as zod finds it', async () => {
    const found = await decodeRecord(JSON.stringify({ ...record, turns: -1 }), 'work', '/h/sessions/work.json');
    expect(isDamaged(found) && found.problem).toMatch(/^not a session record \(field "turns": /);
    expect(await decodeRecord(JSON.stringify(record), 'work', '/h/sessions/work.json')).toEqual(record);
  });
});
