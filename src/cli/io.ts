import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
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
  /** Calls `handler` on Ctrl-C until the returned function is called. */
  onInterrupt: (handler: () => void) => () => void;
  /** Saves text that could not be logged; returns where. */
  rescue: (text: string) => Promise<string>;
  isInteractive: boolean;
}

export const TURN_ID_LENGTH = 12;

export function processIo(): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    now: () => new Date(),
    clock: () => performance.now(),
    newId: () => nanoid(TURN_ID_LENGTH),
    onInterrupt: (handler) => {
      process.on('SIGINT', handler);
      return () => process.off('SIGINT', handler);
    },
    rescue: async (text) => {
      const path = join(tmpdir(), `argo-unlogged-${Date.now()}-${process.pid}.ndjson`);
      await writeFile(path, text, { mode: 0o600 });
      return path;
    },
    isInteractive: process.stdin.isTTY && process.stderr.isTTY,
  };
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk));
  return Buffer.concat(chunks).toString('utf8');
}
