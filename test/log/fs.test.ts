import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMissing, readSmallText } from '../../src/log/fs.js';

describe('readSmallText', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-small-'));
  it.each([
    ['empty', ''],
    ['a record', '{\n  "name": "work"\n}\n'],
    ['non-ASCII text', 'héron — 鷺 🐦\n'],
    ['one byte under one read', 'x'.repeat(16 * 1024 - 1)],
    ['exactly one read', 'x'.repeat(16 * 1024)],
    ['longer than one read, a character across the boundary', `${'x'.repeat(16 * 1024 - 1)}é${'y'.repeat(40_000)}`],
  ])('%s: the whole text, as readFile gives it', (_case, text) => {
    const path = join(dir, `${text.length}.txt`);
    writeFileSync(path, text);
    expect(readSmallText(path)).toBe(text);
  });

  it('a missing file is the same error readFile gives', () => {
    let error: unknown;
    try {
      readSmallText(join(dir, 'none.json'));
    } catch (thrown) {
      error = thrown;
    }
    expect(isMissing(error)).toBe(true);
  });
});
