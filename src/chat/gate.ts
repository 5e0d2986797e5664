// Stands between the terminal and the chat's readline, so that while an answer streams readline
// neither echoes keys into it nor redraws the prompt over it (on a resize).
import { PassThrough, Writable } from 'node:stream';
import { ReadStream, WriteStream } from 'node:tty';

const CTRL_C = 0x03;

export class TerminalGate {
  /** What readline reads: the terminal's keys, less those held back. */
  readonly input: PassThrough;
  /** What readline draws on: the terminal, less its resizes while held. */
  readonly output: Writable;
  private held: Buffer[] = [];
  private holding = false;
  private ended = false;
  private readonly onData = (chunk: Buffer | string): void => this.take(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  private readonly onEnd = (): void => {
    this.ended = true;
    if (!this.holding) this.input.end();
  };
  private readonly onResize = (): void => {
    if (!this.holding) this.output.emit('resize');
  };

  /** `interrupt`: Ctrl-C while held, which is never held back since it stops the answer. */
  constructor(
    private readonly terminalIn: NodeJS.ReadableStream,
    private readonly terminalOut: NodeJS.WritableStream,
    private readonly interrupt: () => void,
  ) {
    const setRawMode = (mode: boolean): void => {
      if (terminalIn instanceof ReadStream) terminalIn.setRawMode(mode);
    };
    this.input = Object.assign(new PassThrough(), { isTTY: true, setRawMode });
    // Written through at once (the callback is synchronous), so it keeps its order with direct writes.
    this.output = new Writable({
      decodeStrings: false,
      write: (chunk: string | Buffer, _encoding, done) => {
        terminalOut.write(chunk);
        done();
      },
    });
    Object.defineProperty(this.output, 'columns', { get: () => (terminalOut instanceof WriteStream ? terminalOut.columns : undefined) });
    terminalIn.on('data', this.onData);
    terminalIn.on('end', this.onEnd);
    terminalOut.on('resize', this.onResize);
  }

  /** Keys typed from now on are kept for later, Ctrl-C aside. */
  hold(): void {
    this.holding = true;
  }

  /** Keys typed from now on reach readline; those held stay held (they were typed for later). */
  pass(): void {
    this.holding = false;
  }

  /** Gives readline the keys held, in order, and lets new ones through. */
  release(): void {
    this.holding = false;
    const held = this.held;
    this.held = [];
    for (const chunk of held) this.input.write(chunk);
    if (this.ended) this.input.end();
  }

  /** Stops reading the terminal, so nothing keeps the process alive. */
  close(): void {
    this.terminalIn.off('data', this.onData);
    this.terminalIn.off('end', this.onEnd);
    this.terminalOut.off('resize', this.onResize);
    this.terminalIn.pause();
  }

  private take(chunk: Buffer): void {
    if (!this.holding) {
      this.input.write(chunk);
      return;
    }
    let start = 0;
    for (let at = chunk.indexOf(CTRL_C); at !== -1; at = chunk.indexOf(CTRL_C, start)) {
      if (at > start) this.held.push(chunk.subarray(start, at));
      start = at + 1;
      this.interrupt();
    }
    if (start < chunk.length) this.held.push(chunk.subarray(start));
  }
}
