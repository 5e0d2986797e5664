import { mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DamagedRecord, inspectSession, openSession, readSession, saveSession } from '../../src/sessions/store.js';

describe('openSession', () => {
  it('many concurrent first uses agree on one complete record, and no reader sees half of it', async () => {
    for (let round = 0; round < 5; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
      const opens = Array.from({ length: 40 }, (_, i) => openSession(dir, 'race', `2026-01-0${(i % 9) + 1}T00:00:00Z`));
      const reads = Array.from({ length: 40 }, () => readSession(dir, 'race'));
      // Reads that start once one creator is done, while the others may still be at work: each must find the record.
      const lateReads = opens[0]?.then(() => Promise.all(Array.from({ length: 40 }, () => readSession(dir, 'race'))));
      const [records, seen, late] = await Promise.all([Promise.all(opens), Promise.all(reads), lateReads]);
      expect(new Set(records.map((record) => record.id)).size).toBe(1);
      // A read racing the creation finds nothing or the whole record (half a file would have thrown).
      for (const record of seen) expect([null, records[0]]).toContainEqual(record);
      expect(late).toEqual(Array.from({ length: 40 }, () => records[0]));
      expect((JSON.parse(readFileSync(join(dir, 'race.json'), 'utf8')) as { id: string }).id).toBe(records[0]?.id);
      expect(readdirSync(dir)).toEqual(['race.json']);
    }
  });
});

describe('the session record codec', () => {
  const good = { name: 'work', id: '7f1c2d9e-1111-4222-8333-444455556666', title: 't', turns: 1, created_at: 'x', last_used_at: 'x', last_model: null };

  it.each([
    ['title', 5, /field "title"/],
    ['turns', 'many', /field "turns"/],
    ['last_model', 7, /field "last_model"/],
    ['parent', { session_id: 1, name: 'p', turn_id: 't' }, /field "parent\.session_id"/],
  ])('a record with a wrong %s is refused where it is read, naming the file and the field', async (field, value, problem) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    writeFileSync(join(dir, 'work.json'), JSON.stringify({ ...good, [field]: value }));
    await expect(readSession(dir, 'work')).rejects.toThrow(problem);
    await expect(readSession(dir, 'work')).rejects.toThrow(join(dir, 'work.json'));
    const found = await inspectSession(dir, 'work');
    expect(found instanceof DamagedRecord && found.problem).toMatch(problem);
  });

  it('keeps fields a newer version wrote when it saves the record again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    writeFileSync(join(dir, 'work.json'), JSON.stringify({ ...good, pinned: true }));
    const record = await readSession(dir, 'work');
    expect(record).toMatchObject({ ...good, pinned: true });
    await saveSession(dir, { ...good, ...record, title: 'renamed' });
    expect(JSON.parse(readFileSync(join(dir, 'work.json'), 'utf8'))).toMatchObject({ title: 'renamed', pinned: true });
  });

  it('never writes through a symlink where a record belongs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    const outside = join(mkdtempSync(join(tmpdir(), 'argo-outside-')), 'target.json');
    writeFileSync(outside, 'precious');
    symlinkSync(outside, join(dir, 'work.json'));
    await expect(saveSession(dir, good)).rejects.toThrow(/symbolic link/);
    expect(readFileSync(outside, 'utf8')).toBe('precious');
  });

  it('never reads a record through a symlink either (a planted record would steer replay)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    const outside = join(mkdtempSync(join(tmpdir(), 'argo-outside-')), 'target.json');
    writeFileSync(outside, JSON.stringify(good));
    symlinkSync(outside, join(dir, 'work.json'));
    await expect(readSession(dir, 'work')).rejects.toThrow(/work\.json is a symbolic link/);
  });
});
