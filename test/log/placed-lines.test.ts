// A line read where a session index says it is (sessions show, replay, rerun): the index is a hint,
// so a place that does not hold, or a file that is not a day's log, is null — never a crash, a wait
// on a named pipe, or an allocation as large as a damaged length asks for.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES } from '../../src/log/lines.js';
import { PlacedLines } from '../../src/log/placed-lines.js';

const FIRST = '{"id":"a"}';
const SECOND = '{"id":"bb"}';
const LAST = '{"id":"ccc"}';
// The last line has no newline yet (a writer may be writing it): it still ends where the file does.
const DAY = `${FIRST}\n${SECOND}\n${LAST}`;
const AT_SECOND = FIRST.length + 1;
const AT_LAST = AT_SECOND + SECOND.length + 1;

const logs = mkdtempSync(join(tmpdir(), 'argo-placed-'));
const elsewhere = mkdtempSync(join(tmpdir(), 'argo-placed-elsewhere-'));
writeFileSync(join(logs, '2025-01-01.log'), DAY);
writeFileSync(join(elsewhere, 'day.log'), DAY);
mkdirSync(join(logs, '2025-01-02.log'));
execFileSync('mkfifo', [join(logs, '2025-01-03.log')]);
execFileSync('mkfifo', [join(elsewhere, 'pipe')]);
symlinkSync(join(elsewhere, 'day.log'), join(logs, '2025-01-04.log'));
symlinkSync(join(elsewhere, 'pipe'), join(logs, '2025-01-05.log'));
symlinkSync(elsewhere, join(logs, '2025-01-06.log'));
symlinkSync(join(elsewhere, 'gone.log'), join(logs, '2025-01-07.log'));
symlinkSync('/dev/zero', join(logs, '2025-01-08.log'));

const lines = new PlacedLines(logs);
afterAll(() => lines.close());

describe('PlacedLines.line', () => {
  it.each<[string, string, number, number, string | null]>([
    ['the first line', '2025-01-01.log', 0, FIRST.length, FIRST],
    ['a line in the middle', '2025-01-01.log', AT_SECOND, SECOND.length, SECOND],
    ['the last line, no newline after it yet', '2025-01-01.log', AT_LAST, LAST.length, LAST],
    ['a link to a day file: read through it, as every reader does', '2025-01-04.log', AT_SECOND, SECOND.length, SECOND],
    ['one byte into a line', '2025-01-01.log', AT_SECOND + 1, SECOND.length - 1, null],
    ['one byte short of a line', '2025-01-01.log', AT_SECOND, SECOND.length - 1, null],
    ['one byte past a line (its newline)', '2025-01-01.log', AT_SECOND, SECOND.length + 1, null],
    ['two lines as one', '2025-01-01.log', 0, AT_LAST - 1, null],
    ['an offset past the end', '2025-01-01.log', 1_000_000, 10, null],
    ['a length past the end', '2025-01-01.log', AT_LAST, LAST.length + 1, null],
    ['a length of 10^12', '2025-01-01.log', 0, 1e12, null],
    ['a length longer than any text', '2025-01-01.log', 0, MAX_LINE_BYTES + 1, null],
    ['a length of 0', '2025-01-01.log', 0, 0, null],
    ['a negative offset', '2025-01-01.log', -1, FIRST.length, null],
    ['an offset that is not a whole number', '2025-01-01.log', 0.5, FIRST.length, null],
    ['a day that is not there', '2024-12-31.log', 0, FIRST.length, null],
    ['a folder where the day was', '2025-01-02.log', 0, FIRST.length, null],
    ['a named pipe where the day was', '2025-01-03.log', 0, FIRST.length, null],
    ['a link to a named pipe', '2025-01-05.log', 0, FIRST.length, null],
    ['a link to a folder', '2025-01-06.log', 0, FIRST.length, null],
    ['a dangling link', '2025-01-07.log', 0, FIRST.length, null],
    ['a link to a device', '2025-01-08.log', 0, FIRST.length, null],
  ])('%s', (_case, day, offset, length, expected) => {
    expect(lines.line(day, offset, length)).toBe(expected);
  });

  it('a place past the end the file had when opened is read once the file has grown (the log grows)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-placed-grows-'));
    const day = join(dir, '2025-02-01.log');
    writeFileSync(day, `${FIRST}\n`);
    const growing = new PlacedLines(dir);
    try {
      expect(growing.line('2025-02-01.log', 0, FIRST.length)).toBe(FIRST);
      expect(growing.line('2025-02-01.log', AT_SECOND, SECOND.length)).toBeNull();
      appendFileSync(day, `${SECOND}\n`);
      expect(growing.line('2025-02-01.log', AT_SECOND, SECOND.length)).toBe(SECOND);
    } finally {
      growing.close();
    }
  });

  it('a line longer than the buffer kept between reads, then a short one again', () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-placed-long-'));
    const long = `{"id":"long","text":"${'é'.repeat(100_000)}"}`;
    writeFileSync(join(dir, '2025-03-01.log'), `${long}\n${FIRST}\n`);
    const reader = new PlacedLines(dir);
    try {
      const at = Buffer.byteLength(long);
      expect(reader.line('2025-03-01.log', 0, at)).toBe(long);
      expect(reader.line('2025-03-01.log', at + 1, FIRST.length)).toBe(FIRST);
    } finally {
      reader.close();
    }
  });
});
