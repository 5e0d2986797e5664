// Properties of the log line's codec, for generated turns and values near them: the fast check
// (isLogEntry) gives the schema's verdict, and a written line reads back as the turn it was.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LogEntrySchema } from '../../src/log/entry-schema.js';
import { entryProblem, isLogEntry, parseEntry, serializeEntry, wellFormedJson } from '../../src/log/entry.js';
import type { LogEntry } from '../../src/log/entry.js';
import { ENTRY_FIELDS, ENTRY_WORDS, logEntry } from '../support/entry-arbitrary.js';
import { runs, wellFormed } from '../support/property.js';
import { mutationsOf, respelledNumbers, showValue } from '../support/schema-agreement.js';

const zodSays = (value: unknown): boolean => LogEntrySchema.safeParse(value).success;

/** `value` with every string, keys included, made well-formed by a round trip through UTF-8 (Node's own encoder). */
function throughUtf8(value: unknown): unknown {
  const fix = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');
  if (typeof value === 'string') return fix(value);
  if (Array.isArray(value)) return value.map(throughUtf8);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [fix(key), throughUtf8(item)]));
  return value;
}

/** A turn with every lone surrogate made U+FFFD, as serializeEntry writes it. */
const asWritten = (value: unknown): unknown => JSON.parse(wellFormedJson(value));

describe('isLogEntry gives the schema’s verdict', () => {
  it('on generated turns (all accepted)', () => {
    fc.assert(
      fc.property(logEntry, (entry) => {
        expect(zodSays(entry)).toBe(true);
        expect(isLogEntry(entry)).toBe(true);
      }),
      runs(200),
    );
  });

  it('on turns with one to three changes (a field dropped, retyped, copied from elsewhere, or added)', () => {
    fc.assert(
      fc.property(mutationsOf(logEntry, ENTRY_WORDS, ENTRY_FIELDS), (value) => {
        expect(isLogEntry(value), showValue(value)).toBe(zodSays(value));
      }),
      runs(1500),
    );
  });

  it('on any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(isLogEntry(value)).toBe(zodSays(value));
      }),
      runs(300),
    );
  });

  it('on the JSON text of a changed turn, as parseEntry reads it', () => {
    fc.assert(
      fc.property(mutationsOf(logEntry, ENTRY_WORDS, ENTRY_FIELDS), (value) => {
        const line = JSON.stringify(value) as string | undefined;
        if (line === undefined) return;
        expect(parseEntry(line) !== null, line).toBe(zodSays(JSON.parse(line)));
      }),
      runs(500),
    );
  });

  it('on JSON text with a number written another way (1e999, -0, 3.0, past 2^53)', () => {
    fc.assert(
      fc.property(respelledNumbers(logEntry), (line) => {
        expect(parseEntry(line) !== null, line).toBe(zodSays(JSON.parse(line)));
      }),
      runs(300),
    );
  });
});

describe('entryProblem', () => {
  it('names a problem, on one line, for every value isLogEntry rejects, and none for one it accepts', async () => {
    await fc.assert(
      fc.asyncProperty(mutationsOf(logEntry, ENTRY_WORDS, ENTRY_FIELDS), async (value) => {
        const problem = await entryProblem(value);
        if (isLogEntry(value)) expect(problem).toBeNull();
        else expect(problem, showValue(value)).toMatch(/^valid JSON but not (an object|a turn \(field "[^]*": [^]*\))$/);
        expect(problem ?? '').not.toMatch(/[\n\r]/);
      }),
      runs(300),
    );
  });
});

describe('serializeEntry', () => {
  it('writes one well-formed line that parseEntry reads back as the turn (lone surrogates as U+FFFD)', () => {
    fc.assert(
      fc.property(logEntry, (entry) => {
        const line = serializeEntry(entry);
        expect(line).not.toMatch(/[\n\r]/);
        expect(wellFormed(line)).toBe(true);
        expect(Buffer.from(line, 'utf8').toString('utf8')).toBe(line);
        expect(parseEntry(line)).toEqual(asWritten(entry));
      }),
      runs(300),
    );
  });

  it('changes nothing else: a turn without lone surrogates is written as JSON.stringify writes it', () => {
    fc.assert(
      fc.property(
        logEntry.map((entry) => throughUtf8(entry) as LogEntry),
        (entry) => {
          expect(serializeEntry(entry)).toBe(JSON.stringify(entry));
        },
      ),
      runs(200),
    );
  });
});
