// Questions asked on the terminal and the answers typed. Its own module: the agent's Allow? needs
// it, and an agent run must not load what cli/common.ts brings (chalk, commander).
import { createInterface } from 'node:readline';
import { TerminalGate } from '../chat/gate.js';
import type { Io } from './io.js';
import { endOpenRow, rowOpened, rowEnded } from './open-row.js';

/** A typed answer that says yes (`y`, `yes`, any case); anything else is no. */
export function isYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}

/**
 * Asks `question` on the terminal and reads the line typed. A read that ends without Enter (Ctrl-D,
 * or Ctrl-C or a STOP aborting the run) answers '' and ends the question's row there and then, so
 * the line written next (`argo: interrupted …`) starts at the left edge, not after the question.
 * The reader is closed either way, so nothing keeps the process alive.
 */
export function askOnTerminal(io: Pick<Io, 'stdin' | 'stderr'>, question: string, signal?: AbortSignal): Promise<string> {
  return readAnswer(io.stdin, io.stderr, question, signal);
}

/** askOnTerminal, reading the answer from `input` (the terminal, or what a gate lets through of it). */
function readAnswer(input: NodeJS.ReadableStream, stderr: NodeJS.WritableStream, question: string, signal?: AbortSignal): Promise<string> {
  stderr.write(question);
  rowOpened();
  return new Promise((resolveLine) => {
    // Listened to before readline does: `y` then Ctrl-D twice is a line that came with no Enter.
    let inputEnded = false;
    const onEnd = (): void => void (inputEnded = true);
    input.once('end', onEnd);
    const lines = createInterface({ input, terminal: false });
    let answered = false;
    const onAbort = (): void => lines.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    lines.once('line', (line) => {
      answered = true;
      rowEnded();
      if (inputEnded) stderr.write('\n');
      lines.close();
      resolveLine(line);
    });
    lines.once('close', () => {
      signal?.removeEventListener('abort', onAbort);
      input.off('end', onEnd);
      if (answered) return;
      endOpenRow(stderr);
      resolveLine('');
    });
    // An input that has ended will not say so again.
    if (signal?.aborted === true || (input as { readableEnded?: boolean }).readableEnded === true) lines.close();
  });
}

export const TYPED_AHEAD_IGNORED = 'argo: what was typed before this question was ignored: only keys typed after it answer it';

/**
 * The terminal's side of an agent run that may ask: its keys are read from the start, unechoed one
 * by one (raw mode), and dropped while no question is open, so a key typed while the run works
 * (`y` and Enter out of habit) never answers a question it did not see. A question is read in the
 * terminal's own line mode, as askOnTerminal reads it. Ctrl-C while the run works stops it as the
 * SIGINT it stands for; Ctrl-Z suspends it.
 */
export class TerminalAnswers {
  private readonly gate: TerminalGate;
  private told = false;

  constructor(private readonly io: Pick<Io, 'stdin' | 'stderr' | 'keyInterrupt' | 'hangUp'>) {
    this.gate = new TerminalGate(io.stdin, io.stderr, { interrupt: io.keyInterrupt, hangUp: io.hangUp });
    this.gate.hold();
    this.gate.setRawMode(true);
  }

  async ask(question: string, signal?: AbortSignal): Promise<string> {
    // Said once: a run asking again has made its point.
    if (this.gate.dropHeld() && !this.told) {
      this.told = true;
      this.io.stderr.write(`${TYPED_AHEAD_IGNORED}\n`);
    }
    // Ended already (Ctrl-D at an earlier question): nobody can answer, and the read ends at once.
    if (this.gate.ended && !this.gate.input.writableEnded) this.gate.input.end();
    this.gate.setRawMode(false);
    // The terminal's input ending (Ctrl-D on an empty line) ends the answer: a last line typed
    // without Enter is still read.
    this.gate.ask(() => this.gate.input.end());
    try {
      return await readAnswer(this.gate.input, this.io.stderr, question, signal);
    } finally {
      this.gate.hold();
      this.gate.setRawMode(true);
    }
  }

  /** The terminal back as it was; nothing more is read. */
  close(): void {
    this.gate.close();
    this.gate.setRawMode(false);
  }
}
