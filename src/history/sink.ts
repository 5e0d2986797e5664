import type { Io } from '../cli/io.js';

const FLUSH_AT = 64 * 1024;

/**
 * Batches output into large writes (one syscall per 64 KiB instead of one per line) and waits for
 * 'drain' when the stream asks, so memory stays flat whatever a slow reader on the pipe does.
 */
export class Sink {
  private pending: string[] = [];
  private size = 0;
  private gone = false;

  constructor(private readonly out: Io['stdout']) {}

  async write(text: string): Promise<void> {
    this.pending.push(text);
    this.size += text.length;
    if (this.size >= FLUSH_AT) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.size = 0;
    const ok = this.out.write(text);
    const stream = this.out as Partial<NodeJS.WritableStream> & { writable?: boolean };
    // After EPIPE, process.stdout reports writable=false only until the error is emitted: note it now.
    if (ok === false && stream.writable === false) this.gone = true;
    if (ok !== false || typeof stream.once !== 'function' || typeof stream.off !== 'function' || this.closed) return;
    await new Promise<void>((resolve) => {
      const events = ['drain', 'close', 'error'];
      const done = (): void => {
        for (const event of events) stream.off?.(event, done);
        resolve();
      };
      for (const event of events) stream.once?.(event, done);
    });
  }

  /** True once the reader of our output went away. */
  get closed(): boolean {
    const stream = this.out as { destroyed?: boolean; writable?: boolean };
    return this.gone || stream.destroyed === true || stream.writable === false;
  }
}
