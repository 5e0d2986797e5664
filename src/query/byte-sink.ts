import { Writable } from 'node:stream';
import type { TextOutput } from '../output/sink.js';

/** Slices up to this size are gathered into one batch; larger ones are written as they are. */
const BATCH = 64 * 1024;

/**
 * Output for raw bytes (`argo logs --json`). Each write waits until the stream is done with the
 * bytes, so nothing is copied to be kept: a large slice goes out straight from the reader's buffer
 * and small ones are gathered into one reusable batch. Waiting on every write is also the
 * back-pressure: a slow reader on the pipe slows the copy, memory stays flat. An output that takes
 * only text (tests) gets the bytes decoded.
 */
export class ByteSink {
  private batch: Buffer | null = null;
  private used = 0;
  private failed = false;
  private readonly stream: Writable | null;

  constructor(private readonly out: TextOutput) {
    this.stream = out instanceof Writable ? out : null;
  }

  /** Takes bytes valid only during the call: they are written, or copied, before it returns. */
  readonly write = async (data: Buffer): Promise<void> => {
    if (this.stream === null) {
      this.out.write(data.toString('utf8'));
      return;
    }
    if (data.length > BATCH - this.used) await this.flush();
    if (data.length > BATCH) {
      await this.send(data);
      return;
    }
    this.batch ??= Buffer.allocUnsafeSlow(BATCH);
    this.used += data.copy(this.batch, this.used);
  };

  async flush(): Promise<void> {
    if (this.used === 0 || this.batch === null) return;
    const bytes = this.batch.subarray(0, this.used);
    this.used = 0;
    await this.send(bytes);
  }

  private send(bytes: Buffer): Promise<void> {
    const stream = this.stream;
    if (stream === null || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      stream.write(bytes, (error) => {
        if (error) this.failed = true;
        resolve();
      });
    });
  }

  /** True once the reader of our output went away (or a write failed). */
  get closed(): boolean {
    return this.failed || (this.stream !== null && (this.stream.destroyed || !this.stream.writable));
  }
}
