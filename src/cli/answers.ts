// Questions asked on the terminal and the answers typed. Its own module: the agent's Allow? needs
// it, and an agent run must not load what cli/common.ts brings (chalk, commander).
import { createInterface } from 'node:readline';
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
  io.stderr.write(question);
  rowOpened();
  return new Promise((resolveLine) => {
    // Listened to before readline does: `y` then Ctrl-D twice is a line that came with no Enter.
    let inputEnded = false;
    const onEnd = (): void => void (inputEnded = true);
    io.stdin.once('end', onEnd);
    const lines = createInterface({ input: io.stdin, terminal: false });
    let answered = false;
    const onAbort = (): void => lines.close();
    signal?.addEventListener('abort', onAbort, { once: true });
    lines.once('line', (line) => {
      answered = true;
      rowEnded();
      if (inputEnded) io.stderr.write('\n');
      lines.close();
      resolveLine(line);
    });
    lines.once('close', () => {
      signal?.removeEventListener('abort', onAbort);
      io.stdin.off('end', onEnd);
      if (answered) return;
      endOpenRow(io.stderr);
      resolveLine('');
    });
    if (signal?.aborted) lines.close();
  });
}
