// `argo logs --json` without a filter copies lines as bytes: the same lines the parsing readers keep,
// bad ones skipped and counted, and files the verified record vouches for copied unread — only while
// they are exactly as they were when verified.
import { mkdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync, appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyTurnLines } from '../../src/log/copy.js';
import type { CopyOptions } from '../../src/log/copy.js';
import { listLogFiles } from '../../src/log/files.js';
import { ScanStats, scanEntries } from '../../src/log/scan.js';
import { VERIFIED_RECORD, VerifiedLogs } from '../../src/log/verified.js';
import { makeEntry, tempData } from '../query/helpers.js';

const line = (id: string, overrides: Record<string, unknown> = {}): string => `${JSON.stringify({ ...makeEntry({ id }), ...overrides })}\n`;
/** A clock well after every file time: each file written by the test counts as settled. */
const later = (): bigint => BigInt(Date.now() + 60_000) * 1_000_000n;

async function copyAll(logsDir: string, options: CopyOptions = {}): Promise<{ out: string; stats: ScanStats; checked: number; trusted: number }> {
  const files = await listLogFiles(logsDir);
  const stats = new ScanStats();
  const chunks: Buffer[] = [];
  const result = await copyTurnLines(files, stats, async (bytes) => {
    chunks.push(Buffer.from(bytes));
    await Promise.resolve();
  }, options);
  return { out: Buffer.concat(chunks).toString('utf8'), stats, ...result };
}

/** What the parsing reader keeps, printed as `argo logs --json` always printed it. */
async function parsed(logsDir: string): Promise<{ out: string; unreadable: number }> {
  const stats = new ScanStats();
  let out = '';
  for await (const { line: raw } of scanEntries(await listLogFiles(logsDir), stats)) out += `${raw.text}\n`;
  return { out, unreadable: stats.unreadable };
}

async function withRecord(logsDir: string, now = later): Promise<{ out: string; stats: ScanStats; checked: number; trusted: number }> {
  const verified = VerifiedLogs.load(logsDir);
  const result = await copyAll(logsDir, { verified, now });
  await verified.save(await listLogFiles(logsDir));
  return result;
}

describe('copying every turn as bytes', () => {
  const cases: [string, string][] = [
    ['good lines only', line('a') + line('b')],
    ['a wrong type', line('a') + line('b', { persona: 7 }) + line('c')],
    ['not JSON, a blank line, an array', `${line('a')}{"id":\n\n   \n[1]\n${line('b')}`],
    ['a torn last line', line('a') + line('b').slice(0, 40)],
    ['a last line without its newline that is whole', line('a') + line('b').trimEnd()],
    ['a line that is not UTF-8', line('a') + line('b').replace('Rayleigh', 'Ray\xffleigh')],
    ['NUL bytes', `${line('a')}\0\0\0\n${line('b')}`],
    // Checked as Latin-1 bytes, shown as UTF-8: the verdict must not depend on it.
    ['words in any script', line('a', { user_prompt: '¿Qué? 日本語 🎉 "quoted" \\ back' }) + line('b', { model_response: 'ÿ\u0085\u00a0' })],
    ['a value of a fixed set written with non-ASCII letters', line('a', { entry_type: 'quéstion' }) + line('b', { verbosity: 'lóng' }) + line('c')],
    ['a non-ASCII key where a field should be', line('a').replace('"persona"', '"persoña"') + line('b')],
    ['non-ASCII white space alone on a line, or around a turn', `${line('a')}\u00a0\u2003\n\u00a0${line('b').trimEnd()}\u00a0\n\u0085\n${line('c')}`],
    ['a turn after leading white space', ` \t${line('a')}`],
  ];

  it.each(cases)('keeps what the parsing reader keeps: %s', async (_name, content) => {
    const { paths } = tempData();
    writeFileSync(join(paths.logs, '2025-01-02.log'), content === cases[5]?.[1] ? Buffer.from(content, 'latin1') : content);
    writeFileSync(join(paths.logs, '2025-01-03.log'), line('z'));
    const expected = await parsed(paths.logs);
    for (const chunkSize of [1, 7, 64, undefined]) {
      const copied = await copyAll(paths.logs, chunkSize === undefined ? {} : { chunkSize });
      expect(copied.out).toBe(expected.out);
      expect(copied.stats.unreadable).toBe(expected.unreadable);
    }
  });

  it('a line too long to be a string is skipped and named, with or without a leading brace, and the rest kept', async () => {
    const { paths } = tempData();
    const long = line('b', { user_prompt: 'x'.repeat(500) });
    writeFileSync(join(paths.logs, '2025-01-02.log'), line('a') + long + `x${long}` + line('c'));
    const stats = new ScanStats(true);
    const chunks: Buffer[] = [];
    await copyTurnLines(await listLogFiles(paths.logs), stats, (bytes) => (chunks.push(Buffer.from(bytes)), Promise.resolve()), { maxLineBytes: line('a').length });
    expect(Buffer.concat(chunks).toString('utf8')).toBe(line('a') + line('c'));
    expect(stats.problems.map((problem) => [problem.line, problem.reason])).toEqual([
      [2, expect.stringMatching(/^longer than \d+ bytes, more than Node can read as text$/) as unknown],
      [3, expect.stringMatching(/^longer than \d+ bytes/) as unknown],
    ]);
  });

  it('names what was wrong with a skipped line', async () => {
    const { paths } = tempData();
    writeFileSync(join(paths.logs, '2025-01-02.log'), line('a') + line('b', { persona: 7 }));
    const stats = new ScanStats(true);
    await copyTurnLines(await listLogFiles(paths.logs), stats, () => Promise.resolve());
    expect(stats.problems).toEqual([{ file: join(paths.logs, '2025-01-02.log'), line: 2, reason: expect.stringContaining('field "persona"') as unknown }]);
  });
});

describe('the verified record', () => {
  function twoDays(): { logs: string; first: string; second: string } {
    const { paths } = tempData();
    const first = join(paths.logs, '2025-01-02.log');
    const second = join(paths.logs, '2025-01-03.log');
    writeFileSync(first, line('a') + line('b'));
    writeFileSync(second, line('c'));
    return { logs: paths.logs, first, second };
  }

  it('lets a second read copy clean files without checking a line', async () => {
    const { logs, first, second } = twoDays();
    const cold = await withRecord(logs);
    expect(cold).toMatchObject({ checked: 3, trusted: 0 });
    expect(existsSync(join(logs, VERIFIED_RECORD))).toBe(true);
    const warm = await withRecord(logs);
    expect(warm).toMatchObject({ out: cold.out, checked: 0, trusted: statSync(first).size + statSync(second).size });
  });

  it('does not record a file that holds a bad line, and keeps counting it', async () => {
    const { logs, first } = twoDays();
    appendFileSync(first, line('x', { timings: null }));
    await withRecord(logs);
    const again = await withRecord(logs);
    expect(again.stats.unreadable).toBe(1);
    expect(again.checked).toBe(2);
    expect(again.trusted).toBe(readFileSync(join(logs, '2025-01-03.log')).length);
  });

  it('checks again a file edited in place after it was verified, even with its size and mtime put back', async () => {
    const { logs, first } = twoDays();
    await withRecord(logs);
    const before = statSync(first);
    const content = readFileSync(first, 'utf8');
    // Same length, same inode: "neutral" (9 bytes with quotes) becomes 123456789.
    writeFileSync(first, content.replace('"persona":"neutral"', '"persona":123456789'));
    utimesSync(first, before.atime, before.mtime);
    expect(statSync(first).size).toBe(before.size);
    const after = await withRecord(logs);
    expect(after.stats.unreadable).toBe(1);
    expect(after.out).toBe((await parsed(logs)).out);
  });

  it('checks what was appended: a torn tail is skipped and counted', async () => {
    const { logs, first } = twoDays();
    await withRecord(logs);
    appendFileSync(first, line('d') + line('e').slice(0, 30));
    const after = await withRecord(logs);
    expect(after.stats.unreadable).toBe(1);
    expect(after.out).toBe((await parsed(logs)).out);
    expect(after.out).toContain('"id":"d"');
  });

  it('checks a file replaced by another (a new inode, as maintenance writes them)', async () => {
    const { logs, first } = twoDays();
    await withRecord(logs);
    const replacement = join(logs, '.replacement.tmp');
    writeFileSync(replacement, line('a', { entry_type: 'riddle' }) + line('f'));
    renameSync(replacement, first);
    const after = await withRecord(logs);
    expect(after.stats.unreadable).toBe(1);
    expect(after.out).toBe((await parsed(logs)).out);
  });

  it('does not record a file changed too recently to be sure it has settled', async () => {
    const { logs } = twoDays();
    await withRecord(logs, () => BigInt(Date.now()) * 1_000_000n);
    expect(existsSync(join(logs, VERIFIED_RECORD))).toBe(false);
  });

  it('ignores a record it cannot read or did not write for this check, and rebuilds it', async () => {
    const { logs } = twoDays();
    await withRecord(logs);
    const record = JSON.parse(readFileSync(join(logs, VERIFIED_RECORD), 'utf8')) as { check: string };
    for (const text of ['not json', JSON.stringify({ ...record, check: 'another' }), JSON.stringify({ check: record.check, files: { '2025-01-02.log': { size: 'big' } } })]) {
      writeFileSync(join(logs, VERIFIED_RECORD), text);
      expect(await withRecord(logs)).toMatchObject({ checked: 3, trusted: 0 });
      expect(await withRecord(logs)).toMatchObject({ checked: 0 });
    }
  });

  it('reads in full, without an error, where the record cannot be written', async () => {
    const { logs } = twoDays();
    mkdirSync(join(logs, VERIFIED_RECORD));
    const first = await withRecord(logs);
    const second = await withRecord(logs);
    expect(second).toMatchObject({ out: first.out, checked: 3, trusted: 0 });
  });

  it('forgets files that are gone', async () => {
    const { logs, second } = twoDays();
    await withRecord(logs);
    writeFileSync(second, '');
    renameSync(second, join(logs, 'old.txt'));
    await withRecord(logs);
    const record = JSON.parse(readFileSync(join(logs, VERIFIED_RECORD), 'utf8')) as { files: Record<string, unknown> };
    expect(Object.keys(record.files)).toEqual(['2025-01-02.log']);
  });
});
