// Pure: which columns of a table fit a width. A table is fixed columns then one free-text column
// (the prompt, the title) that takes what is left. When the free column would get fewer than its
// minimum, the table's steps are taken in order, one at a time, until it gets it: a column dropped,
// narrowed to a shorter form, or cut (shrunk just enough, never below its floor). A column cut
// further than needed once a later step freed room gets that room back. If every step still leaves
// too little, the free column takes what remains; with none left it is not shown, and the columns
// that do not fit are cut from the right (so every row is within the width, whatever it is).

export const COLUMN_GAP = 2;

export interface Column<K extends string> {
  key: K;
  width: number;
}

export type Step<K extends string> = { drop: K } | { narrow: K; to: number } | { cut: K; floor: number };

export interface Fitted<K extends string> {
  columns: Column<K>[];
  /** The free column's width; 0 when it is not shown. */
  free: number;
}

function fixedWidth(columns: readonly Column<string>[]): number {
  return columns.reduce((sum, column) => sum + column.width + COLUMN_GAP, 0);
}

export function fitColumns<K extends string>(full: readonly Column<K>[], steps: readonly Step<K>[], usable: number, minFree: number): Fitted<K> {
  let columns = full.map((column) => ({ ...column }));
  const room = (): number => usable - fixedWidth(columns);
  for (const step of steps) {
    if (room() >= minFree) break;
    if ('drop' in step) {
      columns = columns.filter((column) => column.key !== step.drop);
      continue;
    }
    const column = columns.find((shown) => shown.key === ('narrow' in step ? step.narrow : step.cut));
    if (column === undefined) continue;
    if ('narrow' in step) column.width = Math.min(column.width, step.to);
    else column.width = Math.max(Math.min(column.width, step.floor), column.width - (minFree - room()));
  }
  for (const column of columns) {
    const natural = full.find((original) => original.key === column.key)?.width ?? column.width;
    const spare = room() - minFree;
    if (spare > 0 && column.width < natural && steps.some((step) => 'cut' in step && step.cut === column.key)) column.width = Math.min(natural, column.width + spare);
  }
  if (room() >= 1) return { columns, free: room() };
  // No room for the free column (nor the gap before it): the fixed ones are cut from the right.
  let left = usable;
  const kept: Column<K>[] = [];
  for (const column of columns) {
    if (left < 1) break;
    kept.push({ key: column.key, width: Math.min(column.width, left) });
    left -= column.width + COLUMN_GAP;
  }
  return { columns: kept, free: 0 };
}
