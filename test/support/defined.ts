// Narrowing helpers for tests: fail with a message instead of a non-null assertion.

/** `value`, or a thrown error naming `what` when it is null or undefined. */
export function defined<T>(value: T, what = 'value'): NonNullable<T> {
  if (value === undefined || value === null) throw new Error(`expected ${what} to be defined`);
  return value;
}

interface Indexable<T> {
  at(index: number): T | undefined;
  readonly length: number;
}

/** `items[index]` (negative counts from the end), or a thrown error when there is no such item. */
export function at<T>(items: Indexable<T>, index: number): T {
  const item = items.at(index);
  if (item === undefined) throw new Error(`expected an item at ${index} of ${items.length}`);
  return item;
}
