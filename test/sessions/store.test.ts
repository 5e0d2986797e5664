import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession, readSession } from '../../src/sessions/store.js';

describe('openSession', () => {
  it('many concurrent first uses agree on one complete record, and no reader sees half of it', async () => {
    for (let round = 0; round < 5; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
      const opens = Array.from({ length: 40 }, (_, i) => openSession(dir, 'race', `2026-01-0${(i % 9) + 1}T00:00:00Z`));
      const reads = Array.from({ length: 40 }, () => readSession(dir, 'race'));
      const [records, seen] = await Promise.all([Promise.all(opens), Promise.all(reads)]);
      expect(new Set(records.map((record) => record.id)).size).toBe(1);
      for (const record of seen) if (record) expect(record.id).toBe(records[0]?.id);
      expect((JSON.parse(readFileSync(join(dir, 'race.json'), 'utf8')) as { id: unknown }).id).toBe(records[0]?.id);
      expect(readdirSync(dir)).toEqual(['race.json']);
    }
  });
});
