import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isLogFileName, listLogFiles } from '../log/files.js';
import { readLines, readLinesBackward } from '../log/lines.js';
import type { RawLine } from '../log/lines.js';

/** How many of the newest daily files are watched (a turn that starts before midnight is written to the older one). */
const WATCHED_FILES = 3;

/**
 * Where following starts: the end of the last whole line of each of the newest files. A line still
 * being written is left for the follower, which prints it once its newline arrives.
 */
export async function followStart(logsDir: string): Promise<Map<string, number>> {
  const files = (await listLogFiles(logsDir)).slice(-WATCHED_FILES);
  const positions = new Map<string, number>();
  for (const file of files) positions.set(file, await endOfLastLine(file));
  return positions;
}

/** Just after the newline of the last whole line that is not blank (blank lines are never printed). */
async function endOfLastLine(file: string): Promise<number> {
  for await (const line of readLinesBackward(file)) if (line.complete) return line.offset + line.length + 1;
  return 0;
}

export interface FollowOptions {
  logsDir: string;
  /** From followStart; updated as lines are read. */
  positions: Map<string, number>;
  pollMs: number;
  signal: AbortSignal;
  onLine: (line: RawLine, file: string) => Promise<void>;
  /** Called after each poll that printed something (to flush output). */
  onIdle?: () => Promise<void>;
  /** Stop when this says so (the reader of our output went away). */
  stopped?: () => boolean;
}

/** Polls the newest daily files and hands over every whole new line exactly once, until aborted. */
export async function followLines(options: FollowOptions): Promise<void> {
  const { positions, signal } = options;
  while (!signal.aborted && !options.stopped?.()) {
    await discoverFiles(options.logsDir, positions);
    for (const [file, position] of [...positions]) {
      let size: number;
      try {
        size = (await stat(file)).size;
      } catch {
        positions.delete(file); // pruned
        continue;
      }
      // Rewritten shorter (argo logs rm): carry on from its new end.
      if (size < position) positions.set(file, size);
      if (size <= position) continue;
      let next = position;
      for await (const line of readLines(file, { start: position, end: size })) {
        if (!line.complete) break;
        next = line.offset + line.length + 1;
        if (line.length > 0) await options.onLine(line, file);
      }
      positions.set(file, next);
    }
    await options.onIdle?.();
    try {
      await sleep(options.pollMs, undefined, { signal });
    } catch {
      break;
    }
  }
}

async function discoverFiles(logsDir: string, positions: Map<string, number>): Promise<void> {
  const names = await readdir(logsDir).catch((): string[] => []);
  const known = [...positions.keys()].sort();
  const oldest = known[0];
  for (const name of names.filter(isLogFileName).sort()) {
    const file = join(logsDir, name);
    // A new day's file (or the first one): read it from its start.
    if (!positions.has(file) && (oldest === undefined || file > oldest)) positions.set(file, 0);
  }
  const watched = [...positions.keys()].sort();
  for (const file of watched.slice(0, Math.max(0, watched.length - WATCHED_FILES))) positions.delete(file);
}
