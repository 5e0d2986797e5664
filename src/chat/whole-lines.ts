// Off line editing (TERM=dumb), what the chat's readline reads: the terminal's text up to its last
// line end. Text handed over without one (Ctrl-D after typing) waits here, not in readline, which
// would keep it for the next line: here Ctrl-C at the prompt can still take it back.
import { PassThrough } from 'node:stream';

const LF = 0x0a;
const CR = 0x0d;

export class WholeLines {
  /** What readline reads. */
  readonly output = new PassThrough();
  /** Text after the last line end, not yet passed on. */
  private rest = Buffer.alloc(0);
  private readonly onData = (chunk: Buffer | string): void => this.take(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // The input's last line, ended by the input rather than by Enter, is a line all the same.
  private readonly onEnd = (): void => {
    this.pass(this.rest);
    this.rest = Buffer.alloc(0);
    this.output.end();
  };
  private readonly onError = (error: Error): void => void this.output.destroy(error);

  constructor(private readonly input: NodeJS.ReadableStream) {
    input.on('data', this.onData);
    input.on('end', this.onEnd);
    input.on('error', this.onError);
  }

  /** Throws away the text of the line begun (Ctrl-C at the prompt). */
  dropLine(): void {
    this.rest = Buffer.alloc(0);
  }

  /** Stops reading the input, so nothing keeps the process alive. */
  close(): void {
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onError);
    this.input.pause();
  }

  private take(chunk: Buffer): void {
    const data = this.rest.length === 0 ? chunk : Buffer.concat([this.rest, chunk]);
    const end = Math.max(data.lastIndexOf(LF), data.lastIndexOf(CR));
    // Line ends are single bytes in UTF-8: a cut after one never splits a character.
    this.pass(data.subarray(0, end + 1));
    this.rest = Buffer.from(data.subarray(end + 1));
  }

  private pass(part: Buffer): void {
    if (part.length > 0 && !this.output.writableEnded) this.output.write(part);
  }
}
