// A journal file's owner is judged by a hand check (readUnfinished) before the schema loads: it must
// give the schema's verdict on the owner, and a file writeUnfinished wrote must read back whole.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wellFormedJson } from '../../src/log/entry.js';
import { unfinishedProblem } from '../../src/log/unfinished-schema.js';
import { checkUnfinished, readUnfinished, unfinishedDir, writeUnfinished } from '../../src/log/unfinished.js';
import type { TurnOwner, UnfinishedTurn } from '../../src/log/unfinished.js';
import { logEntry } from '../support/entry-arbitrary.js';
import { hostileText, runs } from '../support/property.js';
import { mutationsOf, showValue } from '../support/schema-agreement.js';

const text = hostileText(4);
const owner: fc.Arbitrary<TurnOwner> = fc.record(
  {
    pid: fc.integer({ min: 1, max: 2 ** 31 }),
    host: text.filter((host) => host !== ''),
    boot: fc.option(text, { nil: null }),
    machine: fc.option(text, { nil: null }),
    start: fc.option(fc.oneof(fc.nat(), fc.constant(2 ** 53 - 1)), { nil: null }),
    pidns: fc.option(text, { nil: null }),
  },
  { requiredKeys: ['pid', 'host', 'boot'] },
);
const OWNER_FIELDS = ['pid', 'host', 'boot', 'machine', 'start', 'pidns'];

const turn: fc.Arbitrary<UnfinishedTurn> = fc
  .record(
    {
      owner,
      day: fc.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      session: fc.record({ id: fc.option(text.filter((id) => id !== ''), { nil: null }), name: text.filter((name) => name !== '') }),
      rules: text,
      entry: fc.tuple(logEntry, fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/)).map(([entry, id]) => ({ ...entry, id })),
    },
    { requiredKeys: ['owner', 'day', 'session', 'entry'] },
  );

const home = mkdtempSync(join(tmpdir(), 'argo-unfinished-property-'));
mkdirSync(unfinishedDir(home), { recursive: true, mode: 0o700 });

/** The file's contents read back by readUnfinished: its owner, or why not. */
function readBack(value: unknown): ReturnType<typeof readUnfinished> {
  writeFileSync(join(unfinishedDir(home), 'x.json'), JSON.stringify(value), { mode: 0o600 });
  return readUnfinished(home, 'x.json');
}

describe('journal files', () => {
  it('readUnfinished takes an owner exactly when the schema does', () => {
    fc.assert(
      fc.property(turn, fc.oneof(owner, mutationsOf(owner, ['', 'x'], OWNER_FIELDS)), (file, changed) => {
        const value = { ...file, owner: changed };
        const schemaTakes = unfinishedProblem(JSON.parse(JSON.stringify(value))) === null;
        const read = readBack(value);
        expect(read !== null && 'owner' in read, showValue(changed)).toBe(schemaTakes);
      }),
      runs(150),
    );
  });

  it('the schema names what is wrong with a changed file on one line', () => {
    fc.assert(
      fc.property(mutationsOf(turn, ['', 'x', '0000-00-00'], [...OWNER_FIELDS, 'owner', 'day', 'session', 'rules', 'entry', 'options', 'a\nb']), (value) => {
        const problem = unfinishedProblem(value);
        if (problem !== null) expect(problem, showValue(value)).toMatch(/^not a journal file \(field "[^\n\r]*\)$/);
      }),
      runs(200),
    );
  });

  it('a turn written reads back as it was written (lone surrogates as U+FFFD), owner and all', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(turn, async (value) => {
        const id = `t${n++}`;
        const written = { ...value, entry: { ...value.entry, id } };
        await writeUnfinished(home, written);
        const read = readUnfinished(home, `${id}.json`);
        const expected = JSON.parse(wellFormedJson(written)) as UnfinishedTurn;
        expect(read).toEqual({ owner: expected.owner, value: expected });
        expect(await checkUnfinished(read !== null && 'value' in read ? read.value : null)).toEqual({ turn: expected });
      }),
      runs(100),
    );
  });
});
