import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listLogFiles } from '../../src/log/files.js';

describe('listLogFiles: the days a reader reads, each file once', () => {
  /** Builds `logs/` from `layout` (name → 'file', 'dir', or 'link:<target>' relative to logs/), returns the names listed. */
  async function listed(layout: Record<string, string>): Promise<string[]> {
    const base = mkdtempSync(join(tmpdir(), 'argo-days-'));
    const logs = join(base, 'logs');
    mkdirSync(logs);
    writeFileSync(join(base, 'outside.log'), '');
    for (const [name, what] of Object.entries(layout)) {
      if (what === 'file') writeFileSync(join(logs, name), '');
      else if (what === 'dir') mkdirSync(join(logs, name));
      else symlinkSync(what.slice('link:'.length), join(logs, name));
    }
    return (await listLogFiles(logs)).map((path) => basename(path));
  }

  it.each<[string, Record<string, string>, string[]]>([
    ['files, by date', { '2026-11-02.log': 'file', '2026-11-01.log': 'file', 'notes.txt': 'file' }, ['2026-11-01.log', '2026-11-02.log']],
    ['a link to a file elsewhere is read', { '2026-11-01.log': 'file', '2026-11-02.log': 'link:../outside.log' }, ['2026-11-01.log', '2026-11-02.log']],
    ['a link to another day here is not read twice', { '2026-11-01.log': 'file', '2026-11-02.log': 'link:2026-11-01.log' }, ['2026-11-01.log']],
    ['two links to one file elsewhere: the first by name', { '2026-11-03.log': 'link:../outside.log', '2026-11-02.log': 'link:../outside.log' }, ['2026-11-02.log']],
    ['a dangling link and a folder are not days', { '2026-11-01.log': 'link:gone.log', '2026-11-02.log': 'dir', '2026-11-03.log': 'file' }, ['2026-11-03.log']],
  ])('%s', async (_case, layout, names) => {
    expect(await listed(layout)).toEqual(names);
  });
});
