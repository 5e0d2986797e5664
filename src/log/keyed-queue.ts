/**
 * One line per key: tasks with the same key run one at a time in the order they were queued; tasks
 * with different keys run side by side. A key's chain is dropped once it is empty, so the map holds
 * only busy keys.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    // A failed task must not stop the ones queued behind it.
    const result = previous.then(task, task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running. */
  get busy(): number {
    return this.tails.size;
  }
}
