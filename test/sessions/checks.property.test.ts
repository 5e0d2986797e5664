// The session index's and record's hand checks (isIndexLine, isSessionRecord) give their schemas'
// verdicts on generated values and values near them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ENTRY_TYPES, TURN_STATUSES } from '../../src/log/entry.js';
import { IndexLineSchema } from '../../src/sessions/index-schema.js';
import { SessionRecordSchema } from '../../src/sessions/record-schema.js';
import type { ParentLink } from '../../src/sessions/record-schema.js';
import { isSessionRecord } from '../../src/sessions/store.js';
import { isIndexLine, parseIndexLine } from '../../src/sessions/turn-index.js';
import { hostileText, runs } from '../support/property.js';
import { mutationsOf, respelledNumbers, showValue } from '../support/schema-agreement.js';

const text = hostileText(5);

const indexLine = fc.record(
  {
    id: text.filter((id) => id !== ''),
    file: fc.date({ min: new Date('1970-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }).map((date) => `${date.toISOString().slice(0, 10)}.log`),
    offset: fc.oneof(fc.nat(), fc.constant(2 ** 53 - 1)),
    length: fc.integer({ min: 1, max: 2 ** 53 - 1 }),
    status: fc.constantFrom(...TURN_STATUSES),
    type: fc.constantFrom(...ENTRY_TYPES),
    rules: text,
  },
  { requiredKeys: ['id', 'file', 'offset', 'length', 'status', 'type'] },
);
const INDEX_WORDS = [...TURN_STATUSES, ...ENTRY_TYPES, '2025-01-02.log', '../2025-01-02.log', 'logs/2025-01-02.log', '2025-01-02.log/', '2025-1-02.log', '2025-01-02.txt', '.log'];
const INDEX_FIELDS = ['id', 'file', 'offset', 'length', 'status', 'type', 'rules'];

const parent: fc.Arbitrary<ParentLink> = fc.letrec<{ link: ParentLink }>((tie) => ({
  link: fc.record({ session_id: text, name: text, turn_id: text, parent: fc.oneof({ depthSize: 'small' }, fc.constant(undefined), tie('link')) }, { requiredKeys: ['session_id', 'name', 'turn_id'] }),
})).link.map((link) => JSON.parse(JSON.stringify(link)) as ParentLink);

const sessionRecord = fc.record(
  {
    name: text,
    id: text.filter((id) => id !== ''),
    title: text,
    turns: fc.oneof(fc.nat(), fc.constant(2 ** 53 - 1)),
    created_at: text,
    last_used_at: text,
    last_model: fc.option(text, { nil: null }),
    parent,
    last_turn_id: text,
    pinned: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: ['name', 'id', 'title', 'turns', 'created_at', 'last_used_at', 'last_model'] },
);
const RECORD_FIELDS = ['name', 'id', 'title', 'turns', 'created_at', 'last_used_at', 'last_model', 'parent', 'last_turn_id', 'session_id', 'turn_id'];

describe('isIndexLine gives the schema’s verdict', () => {
  it('on generated lines (all accepted) and lines with one to three changes', () => {
    fc.assert(
      fc.property(fc.oneof(indexLine, mutationsOf(indexLine, INDEX_WORDS, INDEX_FIELDS)), (value) => {
        expect(isIndexLine(value), showValue(value)).toBe(IndexLineSchema.safeParse(value).success);
      }),
      runs(600),
    );
  });

  it('on their JSON text, as parseIndexLine reads it', () => {
    fc.assert(
      fc.property(mutationsOf(indexLine, INDEX_WORDS, INDEX_FIELDS), (value) => {
        const line = JSON.stringify(value) as string | undefined;
        if (line === undefined) return;
        expect(parseIndexLine(line) !== null, line).toBe(IndexLineSchema.safeParse(JSON.parse(line)).success);
      }),
      runs(200),
    );
  });

  it('on lines with a number written another way (1e999, -0, 3.0, past 2^53)', () => {
    fc.assert(
      fc.property(respelledNumbers(indexLine), (line) => {
        expect(parseIndexLine(line) !== null, line).toBe(IndexLineSchema.safeParse(JSON.parse(line)).success);
      }),
      runs(200),
    );
  });
});

describe('isSessionRecord gives the schema’s verdict', () => {
  it('on generated records (all accepted) and records with one to three changes', () => {
    fc.assert(
      fc.property(fc.oneof(sessionRecord, mutationsOf(sessionRecord, [], RECORD_FIELDS)), (value) => {
        expect(isSessionRecord(value), showValue(value)).toBe(SessionRecordSchema.safeParse(value).success);
      }),
      runs(600),
    );
  });

  it('on records with a number written another way (1e999, -0, 3.0, past 2^53)', () => {
    fc.assert(
      fc.property(respelledNumbers(sessionRecord), (text) => {
        const value: unknown = JSON.parse(text);
        expect(isSessionRecord(value), text).toBe(SessionRecordSchema.safeParse(value).success);
      }),
      runs(200),
    );
  });
});
