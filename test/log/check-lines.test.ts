// `argo logs check` reads lines as Latin-1 for the check (checkLogFile) and must report exactly what
// the plain reading did: every line decoded as UTF-8, parseEntry, and a reason for each bad one.
// The reference below is that reading, as `logs check` did it before.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEntry } from '../../src/log/entry.js';
import { readLines } from '../../src/log/lines.js';
import { ScanStats, checkLogFile, describeBadLine, isBlank } from '../../src/log/scan.js';
import type { ScanProblem } from '../../src/log/scan.js';
import { ENTRY_FIELDS, ENTRY_WORDS, logEntry } from '../support/entry-arbitrary.js';
import { runs } from '../support/property.js';
import { mutationsOf } from '../support/schema-agreement.js';
import { ODD_LOG_FILES, line } from '../support/odd-log-lines.js';

interface Report {
  turns: number;
  problems: ScanProblem[];
  unreadable: number;
}

/** `argo logs check` on one file as it read before: every line as UTF-8 text, then parseEntry. */
async function reference(file: string, maxLineBytes?: number): Promise<Report> {
  const stats = new ScanStats(true);
  let turns = 0;
  for await (const line of readLines(file, maxLineBytes === undefined ? {} : { maxLineBytes })) {
    if (isBlank(line)) continue;
    if (parseEntry(line.text) !== null) {
      turns++;
      continue;
    }
    stats.skip(file, line, (await describeBadLine(line)) + (line.complete ? '' : '; it is the last line and has no newline (a write cut short)'));
  }
  return { turns, problems: stats.problems, unreadable: stats.unreadable };
}

async function checked(file: string, options: { chunkSize?: number; maxLineBytes?: number } = {}): Promise<Report> {
  const stats = new ScanStats();
  const problems: ScanProblem[] = [];
  const turns = await checkLogFile(file, stats, (problem) => {
    problems.push(problem);
    return Promise.resolve();
  }, options);
  return { turns, problems, unreadable: stats.unreadable };
}

const dir = mkdtempSync(join(tmpdir(), 'argo-check-lines-'));
let files = 0;
function fileOf(content: string | Buffer): string {
  const path = join(dir, `${files++}.log`);
  writeFileSync(path, content);
  return path;
}

describe('checkLogFile reports what the UTF-8 reading reported', () => {
  it.each(ODD_LOG_FILES)('%s', async (_name, content) => {
    const file = fileOf(content);
    const expected = await reference(file);
    for (const chunkSize of [1, 7, 64, undefined]) {
      expect(await checked(file, chunkSize === undefined ? {} : { chunkSize })).toEqual(expected);
    }
  });

  it('a line too long to be a string, with or without a leading brace', async () => {
    const long = line('b', { user_prompt: 'x'.repeat(500) });
    const file = fileOf(line('a') + long + `x${long}` + line('c') + long.trimEnd());
    const maxLineBytes = line('a').length;
    const expected = await reference(file, maxLineBytes);
    expect(expected.problems.map((problem) => problem.line)).toEqual([2, 3, 5]);
    for (const chunkSize of [5, 64, undefined]) expect(await checked(file, { maxLineBytes, ...(chunkSize === undefined ? {} : { chunkSize }) })).toEqual(expected);
  });

  it('the log files of every earlier version', async () => {
    const root = join(import.meta.dirname, '..', 'fixtures', 'earlier-versions');
    let seen = 0;
    for (const home of readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      const logs = join(root, home.name, 'logs');
      for (const name of readdirSync(logs).filter((each) => each.endsWith('.log'))) {
        const file = join(logs, name);
        expect(await checked(file)).toEqual(await reference(file));
        seen++;
      }
    }
    expect(seen).toBeGreaterThan(4);
  });
});

/** A line's bytes with some changed: a byte from 0x80 up put in, a byte taken out, or the line cut. */
const damagedLine = (text: string): fc.Arbitrary<Buffer> => {
  const raw = Buffer.from(text, 'utf8');
  return fc
    .array(
      fc.record({
        at: fc.nat({ max: Math.max(0, raw.length - 1) }),
        kind: fc.constantFrom('insert', 'drop', 'cut'),
        byte: fc.oneof(fc.integer({ min: 0x80, max: 0xff }), fc.constantFrom(0x00, 0x09, 0x20, 0x22, 0x5c, 0x7b, 0x7d)),
      }),
      { maxLength: 3 },
    )
    .map((changes) => {
      let out = raw;
      for (const change of changes) {
        const at = Math.min(change.at, out.length);
        if (change.kind === 'insert') out = Buffer.concat([out.subarray(0, at), Buffer.from([change.byte]), out.subarray(at)]);
        else if (change.kind === 'drop') out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1)]);
        else out = out.subarray(0, at);
      }
      return out;
    });
};

const jsonLine = mutationsOf(logEntry, ENTRY_WORDS, ENTRY_FIELDS).map((value) => JSON.stringify(value) as string | undefined).filter((text): text is string => text !== undefined);
const someLine = fc.oneof({ arbitrary: logEntry.map((entry) => JSON.stringify(entry)), weight: 2 }, { arbitrary: jsonLine, weight: 2 }).chain((text) => fc.oneof(fc.constant(Buffer.from(text, 'utf8')), damagedLine(text)));

describe('checkLogFile agrees with the UTF-8 reading on generated files', () => {
  it('turns, turns one to three changes away, and their bytes damaged, in chunks of any size', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(someLine, { maxLength: 6 }), fc.boolean(), fc.option(fc.integer({ min: 1, max: 300 }), { nil: undefined }), async (lines, newline, chunkSize) => {
        const content = Buffer.concat(lines.flatMap((each, i) => (i < lines.length - 1 || newline ? [each, Buffer.from('\n')] : [each])));
        const file = fileOf(content);
        expect(await checked(file, chunkSize === undefined ? {} : { chunkSize })).toEqual(await reference(file));
      }),
      runs(300),
    );
  });
});

describe('ScanStats: each unreadable line counted once, however many scans pass it', () => {
  const line = (offset: number) => ({ text: '{', offset, length: 1, number: 0, complete: true });
  it.each<[string, [string, number][], number]>([
    ['one line, one scan', [['a.log', 0]], 1],
    ['one line, two scans', [['a.log', 0], ['a.log', 0]], 1],
    ['two lines of a file', [['a.log', 0], ['a.log', 40]], 2],
    ['the same offset in two files', [['a.log', 0], ['b.log', 0]], 2],
  ])('%s → %i', (_case, skips, counted) => {
    const stats = new ScanStats(true);
    for (const [file, offset] of skips) stats.skip(file, line(offset), 'not JSON');
    expect(stats.unreadable).toBe(counted);
    expect(stats.problems).toHaveLength(counted);
  });
});
