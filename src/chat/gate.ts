// Stands between the terminal and the chat's readline, so that while an answer streams readline
// neither echoes keys into it nor redraws the prompt over it (on a resize); it also tells a paste
// from typing, and Ctrl-Z from a key.
import { PassThrough, Writable } from 'node:stream';
import { ReadStream, WriteStream, isatty } from 'node:tty';

const CTRL_C = 0x03;
const CTRL_D = 0x04;
const CTRL_Z = 0x1a;

/** How a terminal that went away (its window closed) refuses a change of mode or a read. */
const GONE_CODES: ReadonlySet<unknown> = new Set(['EIO', 'ENXIO', 'EBADF']);

// Bracketed paste: once asked, a terminal sends a paste between these, so it is told from typing.
const PASTE_ON = '\u001b[?2004h';
const PASTE_OFF = '\u001b[?2004l';
const PASTE_START = Buffer.from('\u001b[200~');
const PASTE_END = Buffer.from('\u001b[201~');
// What a paste's text loses: control characters (Tab and line breaks aside) are no keys — readline
// would take them as Ctrl-U or an arrow's escape — and would be obeyed when echoed.
// eslint-disable-next-line no-control-regex
const PASTED_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

const ENTER = 0x0d;
const LINE_FEED = 0x0a;

/**
 * What is held while an answer streams, in the order it came: keys, a paste of several lines (given
 * to readline whole, between its marks), and where a late answer may begin (see markLateAnswer).
 */
type Held = Buffer | { paste: Buffer } | { late: () => void };

/** What the gate's owner does when keys ask for it. */
export interface GateHooks {
  /** Ctrl-C while held, which is never held back since it stops the answer. */
  interrupt: () => void;
  /** The process was suspended with Ctrl-Z and has been continued (`fg`): redraw what was on the line. */
  resumed?: () => void;
  /**
   * Given, the terminal is asked to mark pastes (bracketed paste) until close. A paste of several
   * lines reaches readline as those lines, each ended as by Enter, between `start` and `end`, so the
   * owner can take them as one message; a paste within a line is typed text.
   */
  paste?: { start: () => void; end: () => void };
  /**
   * The terminal went away under the process (its window closed): it is handled as the SIGHUP its
   * closing sends, which closes an open question; without it, its end answers the question as Ctrl-D.
   */
  hangUp?: () => void;
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
  /** Keys held, the pastes among them, and where a late answer begins. */
  private held: Held[] = [];
  /** The paste coming, while its end has not; and a marker's first bytes that ended a read. */
  private pasting: Buffer[] | null = null;
  private partial = Buffer.alloc(0);
  private holding = false;
  /** Whether `held` marks where the keys typed after a question that closed unanswered begin. */
  private lateMarked = false;
  /** Set while a question is open: called instead of passing Ctrl-D, or when the terminal input ends. */
  private stopQuestion: (() => void) | null = null;
  private terminalEnded = false;
  private terminalGone = false;
  /** The mode readline (or the owner) last asked for, restored after a suspension. */
  private raw = false;
  private readonly onData = (chunk: Buffer | string): void => this.read(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // Written however the process ends (a second Ctrl-C quits at once): the shell must not get pastes marked.
  private readonly pasteOff = (): void => void this.terminalOut.write(PASTE_OFF);
  private readonly onEnd = (): void => this.inputEnded(this.isGone());
  private readonly onError = (error: unknown): void => {
    if (!isGoneError(error)) throw error;
    this.inputEnded(true);
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
    terminalIn.on('error', this.onError);
    terminalOut.on('resize', this.onResize);
    if (hooks.paste !== undefined) {
      terminalOut.write(PASTE_ON);
      process.on('exit', this.pasteOff);
    }
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
    if (!this.lateMarked) this.held.push({ late: reached });
    this.lateMarked = true;
    if (typed !== '') this.held.push(Buffer.from(typed));
  }

  /** Throws the keys held away; whether there were any. */
  dropHeld(): boolean {
    const any = this.held.some((item) => !('late' in item) && ('paste' in item || item.length > 0));
    this.held = [];
    this.lateMarked = false;
    return any;
  }

  /**
   * Gives readline the keys held, in order, up to and including the first line they end (Enter, or
   * a paste of several lines), and lets new keys through once none is left held. What follows that
   * line stays held for the next release: given now, readline would take it as typed on the line
   * after, before the prompt for it is drawn, and show it on no prompt or the wrong one.
   */
  release(): void {
    this.stopQuestion = null;
    // Ended already when the terminal ended at the prompt: writing then would be an error.
    if (this.input.writableEnded) {
      this.holding = false;
      this.held = [];
      this.lateMarked = false;
      return;
    }
    for (let item = this.held.shift(); item !== undefined; item = this.held.shift()) {
      if ('late' in item) {
        this.lateMarked = false;
        item.late();
        continue;
      }
      if ('paste' in item) {
        this.writePaste(item.paste);
        break;
      }
      const end = lineEnd(item);
      if (end === -1) {
        this.input.write(item);
        continue;
      }
      this.input.write(item.subarray(0, end));
      if (end < item.length) this.held.unshift(item.subarray(end));
      break;
    }
    // Keys still held keep those typed meanwhile behind them, until the loop takes the line given.
    this.holding = this.held.length > 0;
    if (!this.holding && this.terminalEnded) this.input.end();
  }

  /** Stops reading the terminal, so nothing keeps the process alive. */
  close(): void {
    this.terminalIn.off('data', this.onData);
    this.terminalIn.off('end', this.onEnd);
    this.terminalIn.off('error', this.onError);
    this.terminalOut.off('resize', this.onResize);
    this.terminalIn.pause();
    if (this.hooks.paste !== undefined) {
      this.pasteOff();
      process.off('exit', this.pasteOff);
    }
  }

  // A terminal gone refuses any mode: that is its hang-up, not a failure of the run.
  private setTerminalRaw(mode: boolean): void {
    if (!(this.terminalIn instanceof ReadStream) || this.terminalGone) return;
    try {
      this.terminalIn.setRawMode(mode);
    } catch (error) {
      if (!isGoneError(error)) throw error;
      this.wentAway();
    }
  }

  /** Whether the terminal's input is no terminal any more, as after its window closed. */
  private isGone(): boolean {
    return this.terminalIn instanceof ReadStream && inputGone(this.terminalIn);
  }

  private inputEnded(gone: boolean): void {
    this.terminalEnded = true;
    if (gone) this.wentAway();
    const stop = this.stopQuestion;
    // An open question ends, not readline's input: the keys held for the chat are still to come.
    // A terminal gone is no Ctrl-D: its hang-up closes the question, which nobody answered.
    if (stop !== null) {
      if (!this.terminalGone || this.hooks.hangUp === undefined) stop();
    } else if (!this.holding) this.input.end();
  }

  private wentAway(): void {
    if (this.terminalGone) return;
    this.terminalGone = true;
    this.hooks.hangUp?.();
  }

  // Readline would suspend only once it reads the key, after the answer (while held), and pauses its
  // input when continued; here Ctrl-Z stops the process at once, in any state, and nothing pauses.
  // Raw mode goes off first, so the shell gets its terminal as it left it.
  private suspend(): void {
    this.setTerminalRaw(false);
    const paste = this.hooks.paste !== undefined;
    if (paste) this.pasteOff();
    suspendProcess(() => {
      this.setTerminalRaw(this.raw);
      if (paste) this.terminalOut.write(PASTE_ON);
      this.hooks.resumed?.();
    });
  }

  // Keys and pastes apart: keys are taken as they come, a paste once it has ended (a large one comes
  // in several reads). A marker cut by the end of a read waits for the rest of it, but for a lone
  // ESC among keys: that is the Escape key (held, it would make the next key an Alt one).
  private read(chunk: Buffer): void {
    if (this.hooks.paste === undefined) {
      this.take(chunk);
      return;
    }
    let data = this.partial.length === 0 ? chunk : Buffer.concat([this.partial, chunk]);
    this.partial = Buffer.alloc(0);
    while (data.length > 0) {
      const marker = this.pasting === null ? PASTE_START : PASTE_END;
      const at = data.indexOf(marker);
      const cut = startOfAtEnd(marker, data);
      const upTo = at !== -1 ? at : data.length - (cut === 1 && this.pasting === null ? 0 : cut);
      const part = data.subarray(0, upTo);
      if (this.pasting === null) this.take(part);
      else this.pasting.push(Buffer.from(part));
      if (at === -1) {
        this.partial = Buffer.from(data.subarray(upTo));
        return;
      }
      data = data.subarray(at + marker.length);
      if (this.pasting === null) this.pasting = [];
      else {
        const text = Buffer.concat(this.pasting).toString('utf8');
        this.pasting = null;
        this.pasted(text);
      }
    }
  }

  private pasted(raw: string): void {
    const text = raw.replace(/\r\n?/g, '\n').replace(PASTED_CONTROLS, '');
    const marks = this.hooks.paste;
    if (marks === undefined || !text.includes('\n')) {
      this.forward(Buffer.from(text));
      return;
    }
    // Its lines, each ended as Enter ends one (its last line breaks go: they would be empty lines).
    const lines = Buffer.from(`${text.replace(/\n+$/, '').replace(/\n/g, '\r')}\r`);
    // Held while an answer streams; at a question it is no answer, but lines for the chat after it.
    if (this.holding || this.stopQuestion !== null) this.held.push({ paste: lines });
    else this.writePaste(lines);
  }

  private writePaste(lines: Buffer): void {
    const marks = this.hooks.paste;
    marks?.start();
    if (!this.input.writableEnded) this.input.write(lines);
    marks?.end();
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

/** Where the first line in `keys` ends (after its Enter, and a line feed right after it), or -1. */
function lineEnd(keys: Buffer): number {
  const at = keys.findIndex((key) => key === ENTER || key === LINE_FEED);
  if (at === -1) return -1;
  return keys[at] === ENTER && keys[at + 1] === LINE_FEED ? at + 2 : at + 1;
}

/** Whether a terminal's input is no terminal any more, as after its window closed; a stream without a descriptor never is. */
export function inputGone(input: NodeJS.ReadableStream): boolean {
  const fd: unknown = (input as { fd?: unknown }).fd;
  return typeof fd === 'number' && !isatty(fd);
}

function isGoneError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && GONE_CODES.has(error.code);
}

/** How many of the last bytes of `data` are the first bytes of `marker` (not all of them). */
function startOfAtEnd(marker: Buffer, data: Buffer): number {
  for (let length = Math.min(marker.length - 1, data.length); length > 0; length--) {
    if (data.subarray(data.length - length).equals(marker.subarray(0, length))) return length;
  }
  return 0;
}
