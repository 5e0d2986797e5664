// isMemo gives MemoSchema's verdict on generated memos and values near them; a memo written reads back.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../../src/errors.js';
import { MemoSchema } from '../../src/tools/memo-schema.js';
import { isMemo, parseMemo, serializeMemo } from '../../src/tools/memo.js';
import type { Memo } from '../../src/tools/memo.js';
import { hostileText, runs } from '../support/property.js';
import { mutationsOf, showValue } from '../support/schema-agreement.js';

const key = fc.oneof(hostileText(4), fc.constantFrom('__proto__', 'constructor', 'toString'));
/** Built as own entries, as JSON.parse makes them: `__proto__` included. */
const memo: fc.Arbitrary<Memo> = fc.array(fc.tuple(key, hostileText(6)), { maxLength: 5 }).map((entries) => Object.fromEntries(entries));

describe('memo.json', () => {
  it('isMemo gives the schema’s verdict on memos and values near them', () => {
    fc.assert(
      fc.property(fc.oneof(memo, mutationsOf(memo, [], ['__proto__', 'a'])), (value) => {
        expect(isMemo(value), showValue(value)).toBe(MemoSchema.safeParse(value).success);
      }),
      runs(500),
    );
  });

  it('parseMemo reads what isMemo takes, and refuses anything else with a one-line RuntimeError', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(memo, mutationsOf(memo, [], ['__proto__', 'a\nb'])), async (value) => {
        const read = await parseMemo(JSON.stringify(value), 'memo.json').then(
          (memo) => ({ memo }),
          (error: unknown) => ({ error }),
        );
        if (isMemo(value)) expect(read).toEqual({ memo: value });
        else {
          expect('error' in read && read.error, showValue(value)).toBeInstanceOf(RuntimeError);
          expect('error' in read && read.error instanceof Error ? read.error.message : '').not.toMatch(/[\n\r]/);
        }
      }),
      runs(300),
    );
  });

  it('a memo serialised reads back with the same entries, keys named like Object.prototype members included', async () => {
    await fc.assert(
      fc.asyncProperty(memo, async (value) => {
        const back = await parseMemo(serializeMemo(value), 'memo.json');
        expect(back).toEqual(value);
      }),
      runs(200),
    );
  });
});
