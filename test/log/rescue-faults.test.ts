// rescueText on a data home that fails mid-write (a full disk): the file it made there is removed, and
// the text goes to a private temporary folder instead. The write is made to fail through a stand-in
// for node:fs/promises, so the test runs anywhere, as any user.
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { tempData } from '../query/helpers.js';

const failing = vi.hoisted(() => ({ under: null as string | null, code: 'ENOSPC' }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof FsPromises>();
  const open: typeof original.open = async (...args) => {
    const handle = await original.open(...args);
    const path = String(args[0]);
    if (failing.under === null || !path.startsWith(failing.under)) return handle;
    // The file is made; writing into it fails, as on a disk with no block left.
    handle.writeFile = () => Promise.reject(Object.assign(new Error(`${failing.code}: cannot write`), { code: failing.code }));
    return handle;
  };
  return { ...original, open, default: { ...original, open } };
});

const { rescueText } = await import('../../src/log/fs.js');

describe('rescueText when the data home fails mid-write', () => {
  it.each(['ENOSPC', 'EDQUOT', 'EIO'])('%s: no empty file is left in rescued/, and the text is saved in a private temporary folder', async (code) => {
    const { home } = tempData();
    failing.under = join(home, 'rescued');
    failing.code = code;
    try {
      const path = await rescueText(home, 'the turn\n');
      expect(path.startsWith(join(tmpdir(), 'argo-rescued-'))).toBe(true);
      expect(readFileSync(path, 'utf8')).toBe('the turn\n');
      expect(readdirSync(join(home, 'rescued'))).toEqual([]);
      rmSync(dirname(path), { recursive: true, force: true });
    } finally {
      failing.under = null;
    }
  });

  it('a data home that takes it keeps it there', async () => {
    const { home } = tempData();
    const path = await rescueText(home, 'the turn\n');
    expect(path.startsWith(join(home, 'rescued'))).toBe(true);
    expect(existsSync(path)).toBe(true);
  });
});
