import { Writable } from 'node:stream';

/** Where output goes: a real stream (stdout), or anything that takes text (tests). */
export interface TextOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

const FLUSH_AT = 64 * 1024;
/** Room for a batch plus one more text of up to (BUFFER - FLUSH_AT) / 3 UTF-16 units. */
const BUFFER = 4 * FLUSH_AT;

/**
 * Batches output into large writes (one syscall per 64 KiB instead of one per line) and waits for
 * 'drain' when the stream asks, so memory stays flat whatever a slow reader on the pipe does.
 * Writing to a real stream, texts are encoded straight into one reusable buffer: no joined string
 * and no new Buffer per batch, unless the stream still holds the last one when the next is due.
 */
export class Sink {
  private pending: string[] = [];
  private size = 0;
  private gone = false;
  private readonly stream: Writable | null;
  private bytes: Buffer | null = null;
  private used = 0;

  constructor(private readonly out: TextOutput) {
    this.stream = out instanceof Writable ? out : null;
  }

  async write(text: string): Promise<void> {
    if (this.stream === null) {
      this.pending.push(text);
      this.size += text.length;
      if (this.size >= FLUSH_AT) await this.flush();
      return;
    }
    // A UTF-16 unit takes at most 3 bytes in UTF-8 (a surrogate pair, 4 for 2 units).
    if (text.length * 3 > BUFFER - this.used) {
      await this.flush();
      if (text.length * 3 > BUFFER) {
        await this.send(text);
        return;
      }
    }
    this.bytes ??= Buffer.allocUnsafeSlow(BUFFER);
    this.used += this.bytes.write(text, this.used);
    if (this.used >= FLUSH_AT) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.stream !== null) {
      if (this.used === 0 || this.bytes === null) return;
      const batch = this.bytes.subarray(0, this.used);
      this.used = 0;
      const ok = this.stream.write(batch);
      // Not written out yet (queued behind a slow reader): the stream keeps the bytes, take a new buffer.
      if (this.stream.writableLength > 0) this.bytes = null;
      await this.settle(ok);
      return;
    }
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    this.size = 0;
    await this.send(text);
  }

  private async send(text: string): Promise<void> {
    await this.settle(this.out.write(text));
  }

  private async settle(ok: unknown): Promise<void> {
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
