import { describe, expect, it } from 'vitest';
import { fitColumns } from '../../src/query/columns.js';
import type { Column, Step } from '../../src/query/columns.js';
import { logColumns, sessionColumns } from '../../src/query/format.js';

/** "time:16 id:12 | 31": the columns shown with their widths, then the free column's width. */
function layout({ columns, free }: { columns: readonly Column<string>[]; free: number }): string {
  return `${columns.map((column) => `${column.key}:${column.width}`).join(' ')} | ${free}`;
}

// The last terminal column is left empty, so a row uses at most width - 1 columns.
describe('argo logs: which columns fit a width', () => {
  it.each<[number | null, string]>([
    [null, 'time:16 id:12 session:14 type:11 strength:8 | 80'],
    [120, 'time:16 id:12 session:14 type:11 strength:8 | 48'],
    [92, 'time:16 id:12 session:14 type:11 strength:8 | 20'],
    [91, 'time:16 id:12 session:14 type:11 | 29'],
    [81, 'time:16 id:12 session:14 | 32'],
    [80, 'time:16 id:12 session:14 | 31'],
    [68, 'time:11 id:12 session:14 | 24'],
    [64, 'time:11 id:12 session:14 | 20'],
    [60, 'time:11 id:12 session:10 | 20'],
    [58, 'time:11 id:12 session:8 | 20'],
    [57, 'time:11 id:12 | 29'],
    [50, 'time:11 id:12 | 22'],
    [48, 'time:11 id:12 | 20'],
    [47, 'id:12 | 32'],
    [40, 'id:12 | 25'],
    [20, 'id:12 | 5'],
    [16, 'id:12 | 1'],
    [15, 'id:12 | 0'],
    [10, 'id:9 | 0'],
    [1, 'id:1 | 0'],
  ])('%s columns → %s', (width, expected) => {
    expect(layout(logColumns(width))).toBe(expected);
  });
});

describe('argo sessions: which columns fit a width and the widest name', () => {
  it.each<[number | null, number, string]>([
    [null, 29, 'name:29 turns:5 used:16 model:14 | 80'],
    [null, 2, 'name:4 turns:5 used:16 model:14 | 80'],
    [120, 29, 'name:29 turns:5 used:16 model:14 | 47'],
    [100, 29, 'name:29 turns:5 used:16 model:14 | 27'],
    [80, 4, 'name:4 turns:5 used:16 model:14 | 32'],
    [80, 29, 'name:29 turns:5 used:16 | 23'],
    [80, 64, 'name:44 used:11 | 20'],
    [60, 4, 'name:4 turns:5 used:16 | 28'],
    [40, 4, 'name:4 used:11 | 20'],
    // Cut to 8 did not make room; once the time is dropped the name gets back what is spare.
    [40, 29, 'name:17 | 20'],
    [20, 4, 'name:4 | 13'],
    [20, 29, 'name:8 | 9'],
    [8, 29, 'name:7 | 0'],
  ])('%s columns, names %d wide → %s', (width, nameWidth, expected) => {
    expect(layout(sessionColumns(width, nameWidth))).toBe(expected);
  });

  // The turns column is as wide as the longest count: a count is dropped whole, never cut.
  it.each<[number | null, number, string]>([
    [null, 3, 'name:4 turns:5 used:16 model:14 | 80'],
    [null, 6, 'name:4 turns:6 used:16 model:14 | 80'],
    [200, 6, 'name:4 turns:6 used:16 model:14 | 151'],
    [80, 9, 'name:4 turns:9 used:16 model:14 | 28'],
    [60, 9, 'name:4 turns:9 used:16 | 24'],
    [56, 9, 'name:4 turns:9 used:16 | 20'],
    [55, 9, 'name:4 used:16 | 30'],
  ])('%s columns, counts %d digits long → %s', (width, turnsWidth, expected) => {
    expect(layout(sessionColumns(width, 4, turnsWidth))).toBe(expected);
  });
});

describe('fitColumns', () => {
  const full: Column<'a' | 'b'>[] = [
    { key: 'a', width: 10 },
    { key: 'b', width: 10 },
  ];
  it.each<[string, Step<'a' | 'b'>[], number, string]>([
    ['room enough: no step taken', [{ drop: 'b' }], 44, 'a:10 b:10 | 20'],
    ['a drop frees the column and its gap', [{ drop: 'b' }], 40, 'a:10 | 28'],
    ['a narrow never widens', [{ narrow: 'a', to: 12 }, { drop: 'b' }], 40, 'a:10 | 28'],
    ['a cut takes only what is missing', [{ cut: 'a', floor: 2 }], 40, 'a:6 b:10 | 20'],
    ['a cut stops at its floor', [{ cut: 'a', floor: 8 }], 40, 'a:8 b:10 | 18'],
    ['a step on a column already dropped does nothing', [{ drop: 'a' }, { cut: 'a', floor: 1 }], 30, 'b:10 | 18'],
    ['too narrow for the free column: the fixed ones cut from the right', [], 15, 'a:10 b:3 | 0'],
  ])('%s', (_case, steps, usable, expected) => {
    expect(layout(fitColumns(full, steps, usable, 20))).toBe(expected);
  });
});
