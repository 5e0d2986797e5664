// Counts in words: "1 turn", "3 turns".

/** `count` and the word for it, plural unless the count is 1 (`many` for irregular plurals). */
export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}
