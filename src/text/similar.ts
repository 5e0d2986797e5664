// Pure: "did you mean …?" for mistyped names.

/** Edit distance with adjacent swaps counting as one edit ("doctr" → "doctor" is 1, "sesions" → "sessions" is 1). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i++) {
    const row = d[i];
    if (row === undefined) continue;
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** How far a word may be from a name and still be taken for a typo of it: 1 for short names, 2 from 6 letters. */
export function typoAllowance(name: string): number {
  return name.length >= 6 ? 2 : 1;
}

/** The names closest to `word` within their allowance, nearest first (ties keep the given order). */
export function similarNames(word: string, names: readonly string[]): string[] {
  const lower = word.toLowerCase();
  return names
    .map((name) => ({ name, distance: editDistance(lower, name.toLowerCase()) }))
    .filter(({ name, distance }) => distance > 0 && distance <= typoAllowance(name))
    .sort((x, y) => x.distance - y.distance)
    .map(({ name }) => name);
}

/** ` (did you mean "x"?)` or `` when nothing is close. */
export function didYouMean(word: string, names: readonly string[]): string {
  const [best] = similarNames(word, names);
  return best === undefined ? '' : ` (did you mean "${best}"?)`;
}
