import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { LogEntrySchema } from '../../src/log/entry-schema.js';
import { LINE_CHECK, VERIFIED_RECORD, VerifiedLogs } from '../../src/log/verified.js';

describe('the verified-files record', () => {
  it('names the log line schema it was written under (update LINE_CHECK to the value below when the schema changes)', () => {
    const check = createHash('sha256').update(`1\n${JSON.stringify(z.toJSONSchema(LogEntrySchema))}`).digest('hex').slice(0, 32);
    expect(LINE_CHECK).toBe(check);
  });

  const stamp = { dev: '1', ino: '2', size: 10, mtime_ns: '3', ctime_ns: '4', tail: 'eA==' };
  it.each([
    ['a record of this check', { check: LINE_CHECK, files: { '2026-01-01.log': stamp } }, 1],
    ['another check', { check: 'f'.repeat(32), files: { '2026-01-01.log': stamp } }, 0],
    ['no check', { files: { '2026-01-01.log': stamp } }, 0],
    ['files not an object', { check: LINE_CHECK, files: [stamp] }, 0],
    ['a stamp with a wrong type', { check: LINE_CHECK, files: { a: stamp, b: { ...stamp, size: '10' } } }, 0],
    ['a negative size', { check: LINE_CHECK, files: { a: { ...stamp, size: -1 } } }, 0],
    ['a stamp missing its tail', { check: LINE_CHECK, files: { a: { ...stamp, tail: undefined } } }, 0],
    ['not an object', [1, 2], 0],
  ])('%s: kept for %s file(s), and rewritten with this check', async (_case, record, kept) => {
    const logs = mkdtempSync(join(tmpdir(), 'argo-verified-'));
    writeFileSync(join(logs, VERIFIED_RECORD), JSON.stringify(record));
    const verified = VerifiedLogs.load(logs);
    // Saving with no file listed drops every stamp it kept: the record is rewritten only then.
    await verified.save([]);
    const written = JSON.parse(readFileSync(join(logs, VERIFIED_RECORD), 'utf8')) as { check: string; files: object };
    if (kept > 0) expect(written).toEqual({ check: LINE_CHECK, files: {} });
    else expect(written).toEqual(record);
  });

  it.each([
    ['a record file', false, 'trusted whole'],
    ['a symlink to the same record', true, 'not trusted'],
  ])('read from %s (linked: %s): the file it vouches for is %s', async (_case, linked, expected) => {
    const logs = mkdtempSync(join(tmpdir(), 'argo-verified-'));
    const file = join(logs, '2026-01-01.log');
    writeFileSync(file, '{"id":"a"}\n');
    const stats = statSync(file, { bigint: true });
    const record = {
      check: LINE_CHECK,
      files: { '2026-01-01.log': { dev: String(stats.dev), ino: String(stats.ino), size: Number(stats.size), mtime_ns: String(stats.mtimeNs), ctime_ns: String(stats.ctimeNs), tail: readFileSync(file).toString('base64') } },
    };
    if (linked) {
      const elsewhere = join(mkdtempSync(join(tmpdir(), 'argo-elsewhere-')), 'record.json');
      writeFileSync(elsewhere, JSON.stringify(record));
      symlinkSync(elsewhere, join(logs, VERIFIED_RECORD));
    } else {
      writeFileSync(join(logs, VERIFIED_RECORD), JSON.stringify(record));
    }
    const verified = VerifiedLogs.load(logs);
    const handle = await open(file, 'r');
    try {
      const trusted = await verified.trusted(file, handle, await handle.stat({ bigint: true }));
      expect(trusted).toBe(expected === 'trusted whole' ? Number(stats.size) : 0);
    } finally {
      await handle.close();
    }
  });
});
