import { performance } from 'node:perf_hooks';
import { UsageError } from '../errors.js';
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
  /** Calls `handler` on Ctrl-C, SIGTERM or SIGHUP until the returned function is called. */
  onInterrupt: (handler: (signal: StopSignal) => void) => () => void;
  /** Calls `handler` once standard output is closed by its reader (`argo … | head -1`). */
  onOutputClosed: (handler: () => void) => () => void;
  /** Saves text that could not be logged, privately under the data home if it can; returns where. */
  rescue: (text: string, home: string) => Promise<string>;
  isInteractive: boolean;
}

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

// How many commands are handling stop signals themselves right now. Counted here rather than read
// from process.listenerCount: libraries add signal listeners of their own (proper-lockfile's exit
// hook), which must not keep Ctrl-C from ending a `logs rm`.
let commandHandlers = 0;
// Stop signals received since a command last finished handling one (see signalQuits).
let signalsPending = 0;

/**
 * Whether a stop signal should end the process now: when no command handles signals, or on the
 * second one before the command has finished reacting to the first. A command that stops listening
 * has finished reacting, so `argo chat` can stop one answer after another. SIGHUP never counts: a
 * closing terminal sends it more than once (the kernel, the terminal or the shell), and nobody is
 * left at it to insist; quitting on the second would lose the turn being logged.
 */
export function signalQuits(signal: StopSignal): boolean {
  if (commandHandlers === 0) return true;
  return signal !== 'SIGHUP' && ++signalsPending > 1;
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
      const signals = Object.keys(STOP_SIGNALS) as StopSignal[];
      const listeners = signals.map((signal) => [signal, () => handler(signal)] as const);
      for (const [signal, listener] of listeners) process.on(signal, listener);
      commandHandlers++;
      return () => {
        for (const [signal, listener] of listeners) process.off(signal, listener);
        commandHandlers--;
        signalsPending = 0;
      };
    },
    onOutputClosed: (handler) => {
      const listener = (error: unknown): void => {
        if (typeof error === 'object' && error !== null && 'code' in error && error.code === 'EPIPE') handler();
      };
      process.stdout.on('error', listener);
      return () => process.stdout.off('error', listener);
    },
    rescue: async (text, home) => (await import('../log/fs.js')).rescueText(home, text),
    isInteractive: process.stdin.isTTY && process.stderr.isTTY,
  };
}

/** The most standard input a prompt may take (documented in docs/cli.md). */
export const STDIN_LIMIT_BYTES = 1024 * 1024;

/** All of `stream` as UTF-8; past `limit` bytes it stops reading and says so (usage error, exit 2). */
export async function readAll(stream: NodeJS.ReadableStream, limit = STDIN_LIMIT_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > limit) {
      throw new UsageError(
        `standard input is larger than ${limit / 1024 / 1024} MiB, the most argo takes as a prompt; send a part of it (e.g. head -c 1000000 file | argo "…")`,
      );
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}
