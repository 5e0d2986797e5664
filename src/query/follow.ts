import { readdir, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isLogFileName, listLogFiles } from '../log/files.js';
import { openLogFile } from '../log/fs.js';
import { readLines, readLinesBackward } from '../log/lines.js';
import type { RawLine } from '../log/lines.js';

/** How many of the newest daily files are watched (Argo writes only to the newest or a new one; an older Argo, or a hand, may not). */
const WATCHED_FILES = 3;

/** Where following starts, and the files it starts on, held open to notice one renamed over (see followLines). */
export interface FollowStart {
  /** Each watched file's read position; updated as lines are read. */
  positions: Map<string, number>;
  handles: Map<string, FileHandle>;
}

/**
 * Where following starts: the end of the last whole line of each of the newest files. A line still
 * being written is left for the follower, which prints it once its newline arrives.
 */
export async function followStart(logsDir: string): Promise<FollowStart> {
  const files = (await listLogFiles(logsDir)).slice(-WATCHED_FILES);
  const start: FollowStart = { positions: new Map(), handles: new Map() };
  for (const file of files) {
    // Opened before the position is measured: a file replaced in between at worst prints a turn twice, never loses one.
    const handle = await openLogFile(file).catch(() => null);
    if (handle) start.handles.set(file, handle);
    start.positions.set(file, await endOfLastLine(file));
  }
  return start;
}

/** Just after the newline of the last whole line that is not blank (blank lines are never printed). */
async function endOfLastLine(file: string): Promise<number> {
  for await (const line of readLinesBackward(file)) if (line.complete) return line.offset + line.length + 1;
  return 0;
}

export interface FollowOptions {
  logsDir: string;
  /** From followStart; updated as lines are read, and its handles closed at the end. */
  start: FollowStart;
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
  const { signal } = options;
  const { positions, handles } = options.start;
  try {
    while (!signal.aborted && !options.stopped?.()) {
      await discoverFiles(options.logsDir, positions);
      for (const [file, handle] of [...handles]) {
        if (positions.has(file)) continue;
        handles.delete(file); // no longer watched
        await handle.close().catch(() => undefined);
      }
      for (const [file, position] of [...positions]) {
        let size: number;
        try {
          const now = await stat(file);
          size = now.size;
          const held = handles.get(file) ?? (await openHeld(file, handles));
          if (!(await sameFile(held, now))) {
            await readReplaced(file, position, held, options);
            continue;
          }
        } catch {
          positions.delete(file); // pruned
          await handles.get(file)?.close().catch(() => undefined);
          handles.delete(file);
          continue;
        }
        // Truncated in place: carry on from its new end.
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
  } finally {
    await Promise.all([...handles.values()].map((handle) => handle.close().catch(() => undefined)));
    handles.clear();
  }
}

async function openHeld(file: string, handles: Map<string, FileHandle>): Promise<FileHandle> {
  const handle = await openLogFile(file);
  handles.set(file, handle);
  return handle;
}

async function sameFile(handle: FileHandle, now: { dev: number; ino: number }): Promise<boolean> {
  const held = await handle.stat();
  return held.dev === now.dev && held.ino === now.ino;
}

/**
 * A file renamed over the one being read (argo logs rm writes a copy without a session's lines):
 * its byte positions mean nothing for the old one, so the lines already read are taken from the
 * old file, still open, and every other whole line of the new one is handed over.
 */
async function readReplaced(file: string, position: number, old: FileHandle, options: FollowOptions): Promise<void> {
  const { positions, handles } = options.start;
  const read = new Set<string>();
  for await (const line of readLines(file, { end: position, handle: old })) if (line.complete) read.add(line.text);
  await old.close();
  const handle = await openHeld(file, handles);
  let next = 0;
  for await (const line of readLines(file, { handle })) {
    if (!line.complete) break;
    next = line.offset + line.length + 1;
    if (line.length > 0 && !read.has(line.text)) await options.onLine(line, file);
  }
  positions.set(file, next);
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
