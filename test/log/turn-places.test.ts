// `argo logs check` finds a turn's line logged twice: the same id on another line, here or in another file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScanStats, TurnPlaces, checkLogFile } from '../../src/log/scan.js';
import type { ScanProblem } from '../../src/log/scan.js';
import { makeEntry } from '../query/helpers.js';

const line = (id: string): string => `${JSON.stringify(makeEntry({ id }))}\n`;

describe('checkLogFile with TurnPlaces', () => {
  // Files' contents; the problems expected as "file-index:line: reason", and how many lines repeat a turn.
  it.each<[string, string[], string[], number]>([
    ['every id once', [line('a') + line('b'), line('c')], [], 0],
    ['a line appended again in its file', [line('a') + line('b') + line('a')], ['0:3: turn id "a" also at 0:1'], 1],
    ['a backup added back to another day', [line('a') + line('b'), line('a') + line('b')], ['1:1: turn id "a" also at 0:1', '1:2: turn id "b" also at 0:2'], 2],
    ['three copies: each later one names the first', [line('a') + '\n' + line('a'), line('a')], ['0:3: turn id "a" also at 0:1', '1:1: turn id "a" also at 0:1'], 2],
    ['an unreadable line between is counted apart', [line('a') + '{"id":"a"\n' + line('a')], ['0:2: truncated JSON', '0:3: turn id "a" also at 0:1'], 1],
  ])('%s', async (_name, contents, expected, repeated) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-places-'));
    const files = contents.map((content, index) => {
      const file = join(dir, `${index}.log`);
      writeFileSync(file, content);
      return file;
    });
    const ids = new TurnPlaces();
    const stats = new ScanStats();
    const problems: ScanProblem[] = [];
    for (const file of files) {
      await checkLogFile(file, stats, (problem) => {
        problems.push(problem);
        return Promise.resolve();
      }, { ids });
    }
    const short = (text: string): string => files.reduce((said, file, index) => said.split(file).join(String(index)), text);
    expect(problems.map((problem) => short(`${problem.file}:${problem.line}: ${problem.reason}`).replace(/^(\d+:\d+: truncated JSON).*$/, '$1'))).toEqual(expected);
    expect(ids.repeated).toBe(repeated);
    // A repeated turn is not an unreadable line.
    expect(stats.unreadable).toBe(expected.filter((problem) => problem.includes('truncated')).length);
  });
});
