// A data home that cannot be written (EROFS, item 13): reading a session whose index is stale still
// works; the rebuilt index simply is not saved. Any other write fault still surfaces.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type * as Fs from '../../src/log/fs.js';
import { recordTurns, tempData } from '../query/helpers.js';

const failure = vi.hoisted(() => ({ code: null as string | null }));

vi.mock('../../src/log/fs.js', async (importOriginal) => {
  const original = await importOriginal<typeof Fs>();
  return {
    ...original,
    writeFileAtomic: async (target: string, data: string | Uint8Array): Promise<void> => {
      if (failure.code !== null) throw Object.assign(new Error(`${failure.code}: cannot write ${target}`), { code: failure.code });
      await original.writeFileAtomic(target, data);
    },
  };
});

const { loadIndexed } = await import('../../src/sessions/turns.js');

describe('a stale index on a data home that cannot be written', () => {
  it.each(['EROFS', 'EACCES', 'ENOSPC'])('%s: the history is read from the log all the same', async (code) => {
    const { paths } = tempData();
    const { session, entries } = await recordTurns(paths, 'work', 3);
    rmSync(join(paths.sessions, 'work.idx'));
    failure.code = code;
    try {
      const { entries: read } = await loadIndexed(paths, session, { kind: 'all' });
      expect(read.map((entry) => entry.id)).toEqual(entries.map((entry) => entry.id));
    } finally {
      failure.code = null;
    }
  });

  it('another fault is not hidden', async () => {
    const { paths } = tempData();
    const { session } = await recordTurns(paths, 'work', 1);
    rmSync(join(paths.sessions, 'work.idx'));
    failure.code = 'EIO';
    try {
      await expect(loadIndexed(paths, session, { kind: 'all' })).rejects.toThrow(/EIO/);
    } finally {
      failure.code = null;
    }
  });
});

