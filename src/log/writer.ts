import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { serializeEntry } from './entry.js';
import type { LogEntry } from './entry.js';
import { logFileName } from './files.js';
import { PRIVATE_FILE, ensurePrivateDir } from './fs.js';

export interface DataPaths {
  logs: string;
  sessions: string;
}

/** Beyond this many bytes appended by others between our stat and our write, keep the offset as a bare hint. */
const LOCATE_LIMIT = 8 << 20;
const NEWLINE = 10;

/** Where a turn's line landed in the log: the file, its byte offset and length (without the newline). */
export interface Appended {
  file: string;
  offset: number;
  length: number;
}

/**
 * Appends the turn as one line in one write (O_APPEND keeps concurrent writers whole) to the day's
 * file. The log line is the truth; indexes and session records are derived from it.
 */
export async function appendEntry(logsDir: string, entry: LogEntry, date: string): Promise<Appended> {
  await ensurePrivateDir(logsDir);
  const file = join(logsDir, logFileName(date));
  const line = Buffer.from(`${serializeEntry(entry)}\n`, 'utf8');
  const handle = await open(file, 'a+', PRIVATE_FILE);
  try {
    const before = (await handle.stat()).size;
    // A last line cut short (a crash, a full disk) must not swallow this one: start on a fresh line.
    const bytes = (await lastByte(handle, before)) === NEWLINE || before === 0 ? line : Buffer.concat([Buffer.from('\n'), line]);
    const { bytesWritten } = await handle.write(bytes);
    if (bytesWritten !== bytes.length) throw new RuntimeError(`short write to ${file} (${bytesWritten} of ${bytes.length} bytes)`);
    const offset = (await locate(handle, before, bytes)) + (bytes.length - line.length);
    return { file, offset, length: line.length - 1 };
  } finally {
    await handle.close();
  }
}

async function lastByte(handle: FileHandle, size: number): Promise<number | undefined> {
  if (size === 0) return undefined;
  const byte = Buffer.alloc(1);
  await handle.read(byte, 0, 1, size - 1);
  return byte[0];
}

/**
 * Where our bytes landed. Other processes may have appended between our stat and our write, so
 * look for them in what was appended since; the line holds a unique id, so the match is ours.
 */
async function locate(handle: FileHandle, before: number, bytes: Buffer): Promise<number> {
  const after = (await handle.stat()).size;
  const span = after - before;
  if (span === bytes.length || span > LOCATE_LIMIT) return after - bytes.length;
  const appended = Buffer.allocUnsafe(span);
  const { bytesRead } = await handle.read(appended, 0, span, before);
  const at = appended.subarray(0, bytesRead).indexOf(bytes);
  return at === -1 ? after - bytes.length : before + at;
}
