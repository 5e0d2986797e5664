export interface BufferTimers {
  setTimeout: (callback: () => void, ms: number) => unknown;
  clearTimeout: (handle: unknown) => void;
}

const NODE_TIMERS: BufferTimers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Batches streamed text into few writes: the first chunk goes out at once (the reader sees the
 * answer start), then a write every `flushChunks` chunks or `flushMs` after the oldest unwritten
 * chunk, whichever comes first, and whatever is left at the end.
 */
export class TokenBuffer {
  private pending: string[] = [];
  private timer: unknown = null;
  private started = false;
  writes = 0;

  constructor(
    private readonly write: (text: string) => void,
    private readonly limits: { flushChunks: number; flushMs: number },
    private readonly timers: BufferTimers = NODE_TIMERS,
  ) {}

  push(text: string): void {
    if (text === '') return;
    if (!this.started) {
      this.started = true;
      this.emit(text);
      return;
    }
    this.pending.push(text);
    if (this.pending.length >= this.limits.flushChunks) this.flush();
    else if (this.timer === null) this.timer = this.timers.setTimeout(() => this.flush(), this.limits.flushMs);
  }

  flush(): void {
    if (this.timer !== null) {
      this.timers.clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.emit(text);
  }

  private emit(text: string): void {
    this.writes++;
    this.write(text);
  }
}
