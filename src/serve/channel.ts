/**
 * A one-reader queue from callbacks to an async loop: the turn pushes as Ollama sends, the response
 * pulls as the client reads, so a slow client never holds up the model (or the log).
 */
export class Channel<T> {
  private readonly items: T[] = [];
  private waiting: ((item: T) => void) | null = null;

  push(item: T): void {
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = null;
      waiting(item);
    } else {
      this.items.push(item);
    }
  }

  next(): Promise<T> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => (this.waiting = resolve));
  }

  /** Everything already queued, without waiting. */
  drain(): T[] {
    return this.items.splice(0);
  }
}
