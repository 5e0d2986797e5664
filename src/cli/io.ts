import { performance } from 'node:perf_hooks';
import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { UsageError } from '../errors.js';
import { rescueText } from '../log/fs.js';
import { bomLength, decodeUtf8, notText } from '../text/utf8.js';
import { STOP_SIGNALS } from './outcome.js';
import type { StopSignal } from './outcome.js';
import { nanoid } from 'nanoid';

/** Everything a command touches outside its arguments: streams, clock, ids, signals. */
export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: NodeJS.WriteStream;
  stdin: NodeJS.ReadStream;
  now: () => Date;
  /** Monotonic milliseconds, for durations. */
  clock: () => number;
  newId: () => string;
  /**
   * Calls `handler` on Ctrl-C, SIGTERM or SIGHUP until the returned function is called. A signal
   * counts as being handled until the handler calls `handled` (or unsubscribes): a second one before
   * that quits at once (signalQuits).
   */
  onInterrupt: (handler: InterruptHandler) => () => void;
  /**
   * A Ctrl-C read as a key: a terminal in raw mode (a chat's line editing, an agent run waiting to
   * ask) sends no SIGINT for it. It is handled as that SIGINT, so it is counted: a second one before
   * the first is dealt with quits, as at a terminal in cooked mode.
   */
  keyInterrupt: () => void;
  /**
   * The terminal went away while Argo read it (its window closed: its input ended and it is no
   * terminal any more, or it refuses a change of mode). Handled as the SIGHUP its closing sends,
   * which may come only later: the run ends as hung up, never as a failure or a refusal.
   */
  hangUp: () => void;
  /**
   * Calls `handler` once standard output takes no more: 'closed' by its reader (`argo … | head -1`),
   * or 'failed' (a full disk behind `>`). A closed terminal is neither: SIGHUP says so.
   */
  onOutputClosed: (handler: (how: OutputEnd) => void) => () => void;
  /**
   * Resolves once what was written to standard output so far has gone out, or failed (a failure
   * already told to the onOutputClosed handlers), or when `signal` aborts first.
   */
  outputWritten: (signal?: AbortSignal) => Promise<void>;
  /** Saves text that could not be logged, privately under the data home if it can; returns where. */
  rescue: (text: string, home: string) => Promise<string>;
  isInteractive: boolean;
  /** TERM is `dumb`: the terminal shows text but obeys no cursor control, and cannot edit a line for Argo (no spinner; the chat leaves editing to the terminal). */
  dumbTerminal: boolean;
}

/** How standard output stopped taking text. */
export type OutputEnd = 'closed' | 'failed';

/** `handled`: the handler has fully dealt with the signals it got so far, so the next one is a first again. */
export type InterruptHandler = (signal: StopSignal, handled: () => void) => void;

export const TURN_ID_LENGTH = 12;

/**
 * A turn (or job) id: nanoid's URL-safe alphabet, but never a leading "-" — ids are typed after a
 * command (`argo rerun ID`), where a leading dash would be read as an option. One id in 64 is drawn again.
 */
export function newTurnId(draw: (size: number) => string = nanoid): string {
  for (;;) {
    const id = draw(TURN_ID_LENGTH);
    if (!id.startsWith('-')) return id;
  }
}

/**
 * The commands handling stop signals right now, each with the signals it has not finished handling.
 * Kept here rather than read from process.listenerCount: libraries add signal listeners of their own
 * (proper-lockfile's exit hook), which must not keep Ctrl-C from ending a `logs rm`.
 */
export class SignalCount {
  private readonly pending = new Map<symbol, number>();

  /** A command starts handling signals: `handled` when it has dealt with those it got, `stop` when it no longer listens. */
  subscribe(): { handled: () => void; stop: () => void } {
    const key = Symbol('command');
    this.pending.set(key, 0);
    return {
      handled: () => {
        if (this.pending.has(key)) this.pending.set(key, 0);
      },
      stop: () => void this.pending.delete(key),
    };
  }

  /**
   * Whether a stop signal should end the process now: when no command handles signals, or when one
   * gets a second signal before it has finished handling the first. A command has finished when it
   * says so (`argo chat` after Ctrl-C at its prompt, or once the answer it stopped is logged) or
   * stops listening; so a chat stops one answer after another, while a second SIGTERM during its
   * shutdown quits though the turn inside it has stopped listening. SIGHUP never counts: a closing
   * terminal sends it more than once (the kernel, the terminal or the shell), and nobody is left at
   * it to insist; quitting on the second would lose the turn being logged.
   */
  quits(signal: StopSignal): boolean {
    if (this.pending.size === 0) return true;
    if (signal === 'SIGHUP') return false;
    let quits = false;
    for (const [key, count] of this.pending) {
      this.pending.set(key, count + 1);
      // It had one it has not finished handling: this is the second.
      if (count > 0) quits = true;
    }
    return quits;
  }
}

const commands = new SignalCount();

/** Whether this process should quit on `signal` now (SignalCount.quits, over the commands of processIo). */
export function signalQuits(signal: StopSignal): boolean {
  return commands.quits(signal);
}

export function processIo(): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    now: () => new Date(),
    clock: () => performance.now(),
    newId: () => newTurnId(),
    onInterrupt: (handler) => {
      const { handled, stop } = commands.subscribe();
      const signals = Object.keys(STOP_SIGNALS) as StopSignal[];
      const listeners = signals.map((signal) => [signal, () => handler(signal, handled)] as const);
      for (const [signal, listener] of listeners) process.on(signal, listener);
      return () => {
        for (const [signal, listener] of listeners) process.off(signal, listener);
        stop();
      };
    },
    // What Node does on a SIGINT: every listener of the process, main's count first.
    keyInterrupt: () => void process.emit('SIGINT', 'SIGINT'),
    hangUp: () => void process.emit('SIGHUP', 'SIGHUP'),
    onOutputClosed: (handler) => {
      const listener = (error: unknown): void => {
        const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
        if (code !== 'EIO') handler(code === 'EPIPE' ? 'closed' : 'failed');
      };
      process.stdout.on('error', listener);
      return () => process.stdout.off('error', listener);
    },
    outputWritten: (signal) => afterOutput(process.stdout, signal),
    // Imported with the program (main.ts uses log/fs.js): a rescue must not need a module loaded then.
    rescue: (text, home) => rescueText(home, text),
    isInteractive: process.stdin.isTTY && process.stderr.isTTY,
    dumbTerminal: process.env.TERM === 'dumb',
  };
}

/**
 * A write's failure reaches its callback first and its 'error' listeners a tick later, even when
 * the write itself was synchronous (a file on a full disk): an empty write's callback comes after
 * every earlier write's, and the next turn of the event loop after their errors.
 */
export function afterOutput(stream: NodeJS.WritableStream & { destroyed?: boolean }, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) {
      resolve();
      return;
    }
    let settled = false;
    const done = (): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', done);
      setImmediate(resolve);
    };
    signal?.addEventListener('abort', done, { once: true });
    if (stream.destroyed === true || !stream.writable) done();
    else stream.write('', () => done());
  });
}

/** The most standard input a prompt may take (documented in docs/cli.md). */
export const STDIN_LIMIT_BYTES = 1024 * 1024;

/** How long standard input may stay silent before argo says it is waiting for it. */
export const STDIN_SILENCE_MS = 2000;

/**
 * Said once when piped standard input has brought nothing for STDIN_SILENCE_MS: a pipe nobody ends
 * (`execFile` leaves one open, so does `ssh host argo …` without -n) would otherwise hang in silence.
 */
export const STDIN_WAITING_LINE =
  'argo: waiting for standard input, which is not a terminal and has not ended; end it, or run argo with --no-stdin (or </dev/null) if no input is coming\n';

/** What readAll may do besides reading: a limit, and what to do when nothing arrives for a while. */
export interface ReadAllOptions {
  limit?: number;
  /** Called once when no byte has arrived `afterMs` after the read began (a slow command's output is still read). */
  whenSilent?: { afterMs: number; say: () => void };
}

/** All of `stream` as UTF-8; past `limit` bytes, or at a byte that is not UTF-8, it says so (usage error, exit 2). */
export async function readAll(stream: NodeJS.ReadableStream, options: ReadAllOptions = {}): Promise<string> {
  const { limit = STDIN_LIMIT_BYTES } = options;
  const bytes = await readBytes(stream, {
    ...options,
    tooLarge: () =>
      new UsageError(`standard input is larger than ${limit / 1024 / 1024} MiB, the most argo takes as a prompt; send a part of it (e.g. head -c 1000000 file | argo "…")`),
  });
  // A byte order mark (a file saved by Notepad) is no text of the prompt, as a piped chat drops it.
  const bom = bomLength(bytes);
  const decoded = decodeUtf8(bytes.subarray(bom));
  if (decoded.ok) return decoded.text;
  // Offsets count the mark, as they count every byte of standard input.
  throw new UsageError(notText('standard input', bytes, { ...decoded, offset: decoded.offset + bom }, (encoding) => `iconv -f ${encoding} -t utf-8 file.txt | argo "…"`));
}

/**
 * All of `stream`, stopping (it is destroyed) as soon as it brings more than `limit` bytes: then
 * `tooLarge` is what is thrown. A device that never ends (/dev/zero) is read no further than that.
 */
export async function readBytes(stream: NodeJS.ReadableStream, options: ReadAllOptions & { tooLarge: () => Error }): Promise<Buffer> {
  const { limit = STDIN_LIMIT_BYTES, whenSilent, tooLarge } = options;
  const chunks: Buffer[] = [];
  let size = 0;
  const silence = whenSilent === undefined ? undefined : setTimeout(whenSilent.say, whenSilent.afterMs);
  try {
    for await (const chunk of stream) {
      clearTimeout(silence);
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += bytes.length;
      if (size > limit) throw tooLarge();
      chunks.push(bytes);
    }
  } finally {
    clearTimeout(silence);
  }
  return Buffer.concat(chunks);
}

// The lines refusing bytes that are not UTF-8 are text's: config.json says them too.
export { notText, notUtf8 } from '../text/utf8.js';


/**
 * A piped chat's input, passed on a whole line at a time while it is UTF-8 and no longer than
 * `limit` bytes (a message may be no longer than a one-liner's standard input). At the first line
 * that is not UTF-8 it ends there: the lines before it are read and sent, that line and those after
 * are not, and `bad` says where it was (its line number, counted from 1, and the stream offset of
 * the byte). At the first line too long it ends so too, and `tooLong` names the line; it is read no
 * further than the limit, so a line that never ends (`< /dev/zero`) takes no more memory than that.
 */
export class Utf8Lines extends Transform {
  bad: { line: number; offset: number; byte: number } | null = null;
  tooLong: { line: number; limit: number } | null = null;
  /** The unfinished last line so far, in the chunks it came in (joined once it ends: linear time). */
  private rest: Buffer[] = [];
  private restLength = 0;
  /** Lines passed on, and their bytes. */
  private lines = 0;
  private passed = 0;

  constructor(private readonly limit: number = STDIN_LIMIT_BYTES) {
    super();
  }

  private stopped(): boolean {
    return this.bad !== null || this.tooLong !== null;
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, done: TransformCallback): void {
    if (!this.stopped()) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      const end = bytes.lastIndexOf(0x0a) + 1;
      if (end > 0) {
        const whole = Buffer.concat([...this.rest, bytes.subarray(0, end)]);
        this.rest = [];
        this.restLength = 0;
        this.passWhole(whole);
      }
      if (end < bytes.length && !this.stopped()) {
        this.rest.push(Buffer.from(bytes.subarray(end)));
        this.restLength += bytes.length - end;
        // A CR last may be a Windows line end's, which is no text of the line.
        if (this.restLength > this.limit + (bytes.at(-1) === 0x0d ? 1 : 0)) this.refuseLong(this.lines + 1);
      }
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (!this.stopped()) this.pass(Buffer.concat(this.rest));
    this.rest = [];
    done();
  }

  /** Whole lines: those before the first one too long are passed on, and it ends the input. */
  private passWhole(whole: Buffer): void {
    let start = 0;
    for (let at = whole.indexOf(0x0a); at !== -1; at = whole.indexOf(0x0a, at + 1)) {
      if (at - start - (at > start && whole[at - 1] === 0x0d ? 1 : 0) > this.limit) {
        const before = whole.subarray(0, start);
        this.pass(before);
        // A line before it that is not UTF-8 ended the input first.
        if (!this.stopped()) this.refuseLong(this.lines + 1);
        return;
      }
      start = at + 1;
    }
    this.pass(whole);
  }

  private refuseLong(line: number): void {
    this.tooLong = { line, limit: this.limit };
    this.rest = [];
    this.restLength = 0;
    this.push(null);
  }

  private pass(text: Buffer): void {
    // A byte order mark (a script saved by Notepad) is no text of its first line: a `/bye` after it
    // is the command. Offsets still count it, as they count the bytes of standard input.
    const bom = this.passed === 0 ? bomLength(text) : 0;
    this.passed += bom;
    const whole = text.subarray(bom);
    if (whole.length === 0) return;
    const decoded = decodeUtf8(whole);
    if (decoded.ok) {
      this.push(whole);
      this.lines += countLines(whole);
      this.passed += whole.length;
      return;
    }
    // The lines before the bad one (a newline is one byte, never inside a character).
    const start = decoded.offset === 0 ? 0 : whole.lastIndexOf(0x0a, decoded.offset - 1) + 1;
    const before = whole.subarray(0, start);
    if (before.length > 0) this.push(before);
    this.bad = { line: this.lines + countLines(before) + 1, offset: this.passed + decoded.offset, byte: decoded.byte };
    this.push(null);
  }
}

function countLines(bytes: Buffer): number {
  let count = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) count++;
  return count;
}
