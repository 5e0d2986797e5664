// Stands between the terminal and the chat's readline, so that while an answer streams readline
// neither echoes keys into it nor redraws the prompt over it (on a resize).
import { PassThrough, Writable } from 'node:stream';
import { ReadStream, WriteStream } from 'node:tty';

const CTRL_C = 0x03;
const CTRL_D = 0x04;
const CTRL_Z = 0x1a;

/** What the gate's owner does when keys ask for it. */
export interface GateHooks {
  /** Ctrl-C while held, which is never held back since it stops the answer. */
  interrupt: () => void;
  /** The process was suspended with Ctrl-Z and has been continued (`fg`): redraw what was on the line. */
  resumed?: () => void;
}

/** Stops the process as Ctrl-Z does in a terminal's cooked mode; `continued` runs once it goes on (`fg`). */
function suspendProcess(continued: () => void): void {
  process.once('SIGCONT', continued);
  process.kill(process.pid, 'SIGTSTP');
}

export class TerminalGate {
  /** What readline reads: the terminal's keys, less those held back. */
  readonly input: PassThrough;
  /** What readline draws on: the terminal, less its resizes while held. */
  readonly output: Writable;
  private held: Buffer[] = [];
  private holding = false;
  /** Where in `held` the keys typed after a question that closed unanswered begin (see markLateAnswer). */
  private lateAnswer: { at: number; reached: () => void } | null = null;
  /** Set while a question is open: called instead of passing Ctrl-D, or when the terminal input ends. */
  private stopQuestion: (() => void) | null = null;
  private terminalEnded = false;
  /** The mode readline (or the owner) last asked for, restored after a suspension. */
  private raw = false;
  private readonly onData = (chunk: Buffer | string): void => this.take(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  private readonly onEnd = (): void => {
    this.terminalEnded = true;
    const stop = this.stopQuestion;
    // An open question ends, not readline's input: the keys held for the chat are still to come.
    if (stop !== null) stop();
    else if (!this.holding) this.input.end();
  };
  private readonly onResize = (): void => {
    if (!this.holding) this.output.emit('resize');
  };

  constructor(
    private readonly terminalIn: NodeJS.ReadableStream,
    private readonly terminalOut: NodeJS.WritableStream,
    private readonly hooks: GateHooks,
  ) {
    this.input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: (mode: boolean) => this.setRawMode(mode) });
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

  /** True once the terminal's input has ended: nobody can answer a question any more. */
  get ended(): boolean {
    return this.terminalEnded;
  }

  /** Raw mode (keys read one by one, unechoed) or the terminal's own line mode; kept across a Ctrl-Z. */
  setRawMode(mode: boolean): void {
    this.raw = mode;
    this.setTerminalRaw(mode);
  }

  /** Keys typed from now on are kept for later, Ctrl-C aside. */
  hold(): void {
    this.holding = true;
    this.stopQuestion = null;
  }

  /**
   * For a question: keys typed from now on reach readline, those held stay held (they were typed
   * for later). Ctrl-D calls `stop` instead of reaching readline, where it would end the whole chat;
   * so does the end of the terminal's input (ask only while `ended` is false).
   */
  ask(stop: () => void): void {
    this.holding = false;
    this.stopQuestion = stop;
  }

  /**
   * While held, after a question closed without the user's answer: the keys typed from here on may
   * be meant as its answer. `typed`, what was on the question's line, is kept as the first of them
   * (readline drops it with the question). `reached` is called when release gets here: readline has
   * then read every key typed before, since it reads each write at once.
   */
  markLateAnswer(typed: string, reached: () => void): void {
    this.lateAnswer ??= { at: this.held.length, reached };
    if (typed !== '') this.held.push(Buffer.from(typed));
  }

  /** Throws the keys held away; whether there were any. */
  dropHeld(): boolean {
    const any = this.held.some((chunk) => chunk.length > 0);
    this.held = [];
    this.lateAnswer = null;
    return any;
  }

  /** Gives readline the keys held, in order, and lets new ones through. */
  release(): void {
    this.holding = false;
    this.stopQuestion = null;
    const held = this.held;
    const late = this.lateAnswer;
    this.held = [];
    this.lateAnswer = null;
    // Ended already when the terminal ended at the prompt: writing then would be an error.
    if (this.input.writableEnded) return;
    for (const [index, chunk] of held.entries()) {
      if (index === late?.at) late.reached();
      this.input.write(chunk);
    }
    if (late?.at === held.length) late.reached();
    if (this.terminalEnded) this.input.end();
  }

  /** Stops reading the terminal, so nothing keeps the process alive. */
  close(): void {
    this.terminalIn.off('data', this.onData);
    this.terminalIn.off('end', this.onEnd);
    this.terminalOut.off('resize', this.onResize);
    this.terminalIn.pause();
  }

  private setTerminalRaw(mode: boolean): void {
    if (this.terminalIn instanceof ReadStream) this.terminalIn.setRawMode(mode);
  }

  // Readline would suspend only once it reads the key, after the answer (while held), and pauses its
  // input when continued; here Ctrl-Z stops the process at once, in any state, and nothing pauses.
  // Raw mode goes off first, so the shell gets its terminal as it left it.
  private suspend(): void {
    this.setTerminalRaw(false);
    suspendProcess(() => {
      this.setTerminalRaw(this.raw);
      this.hooks.resumed?.();
    });
  }

  // Byte by byte: a Ctrl-C or Ctrl-D may change the mode, and the rest of the chunk follows the new one.
  private take(chunk: Buffer): void {
    let start = 0;
    for (let at = 0; at < chunk.length; at++) {
      const key = chunk[at];
      const stop = this.stopQuestion;
      if (key === CTRL_Z) {
        this.forward(chunk.subarray(start, at));
        start = at + 1;
        this.suspend();
      } else if (this.holding && key === CTRL_C) {
        this.forward(chunk.subarray(start, at));
        start = at + 1;
        this.hooks.interrupt();
      } else if (!this.holding && stop !== null && key === CTRL_D) {
        this.forward(chunk.subarray(start, at));
        start = at + 1;
        stop();
      }
    }
    this.forward(chunk.subarray(start));
  }

  private forward(part: Buffer): void {
    if (part.length === 0) return;
    if (this.holding) this.held.push(part);
    else if (!this.input.writableEnded) this.input.write(part);
  }
}
