// The STOP signal (seed 004): a file named STOP in the data home halts every agent loop.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileExclusive } from '../log/fs.js';

export const STOP_FILE = 'STOP';

export function stopPath(home: string): string {
  return join(home, STOP_FILE);
}

/** Synchronous on purpose: it is checked on every streamed chunk, and a stat is cheaper than a promise. */
export function isStopSet(home: string): boolean {
  return existsSync(stopPath(home));
}

/** True when this call set it (false: it was already set). */
export function setStop(home: string, now: Date): Promise<boolean> {
  return createFileExclusive(stopPath(home), `${now.toISOString()}\n`);
}

/** True when there was one to clear. */
export async function clearStop(home: string): Promise<boolean> {
  const was = isStopSet(home);
  await rm(stopPath(home), { force: true });
  return was;
}
