import { mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordRemoval, removedListPath, removedNames } from '../../src/sessions/removed.js';

const freshDir = (): string => mkdtempSync(join(tmpdir(), 'argo-removed-'));

describe("the note of removed sessions' last names", () => {
  it('is appended one line per removal, private, and read back by id (the newest note wins)', async () => {
    const dir = freshDir();
    await recordRemoval(dir, { id: 'id-1', name: 'B' }, '2025-01-01T10:00:00.000+00:00');
    await recordRemoval(dir, { id: 'id-2', name: '-dash' }, '2025-01-01T11:00:00.000+00:00');
    await recordRemoval(dir, { id: 'id-1', name: 'B2' }, '2025-01-01T12:00:00.000+00:00');
    expect(statSync(removedListPath(dir)).mode & 0o777).toBe(0o600);
    expect(await removedNames(dir)).toEqual(new Map([['id-1', 'B2'], ['id-2', '-dash']]));
  });

  it.each<[string, string, [string, string][]]>([
    ['none yet', '', []],
    ['a blank line', '\n\n', []],
    ['not JSON', 'oops\n{"session_id":"a","name":"A"}\n', [['a', 'A']]],
    ['a line cut short', '{"session_id":"a","name":"A"}\n{"session_id":"b","na', [['a', 'A']]],
    ['not an object', '[1]\n"x"\nnull\n', []],
    ['a field missing or of another type', '{"session_id":"a"}\n{"name":"A"}\n{"session_id":1,"name":"A"}\n{"session_id":"","name":"A"}\n', []],
  ])('a line it cannot read is passed over: %s', async (_case, text, expected) => {
    const dir = freshDir();
    if (text !== '') writeFileSync(removedListPath(dir), text);
    expect(await removedNames(dir)).toEqual(new Map(expected));
  });

  it('is never read nor written through a link', async () => {
    const dir = freshDir();
    const elsewhere = join(freshDir(), 'target');
    writeFileSync(elsewhere, '{"session_id":"a","name":"A"}\n');
    symlinkSync(elsewhere, removedListPath(dir));
    await expect(removedNames(dir)).rejects.toThrow();
    await expect(recordRemoval(dir, { id: 'b', name: 'B' }, 'now')).rejects.toThrow();
  });
});
