import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { serializeEntry } from './entry.js';
import type { LogEntry } from './entry.js';
import { appendDay, logFileName } from './files.js';
import { ensurePrivateDir, errnoOf, openForAppend } from './fs.js';
import { withLogLock } from './lock.js';

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

/** The log line was not appended (nothing of it is left in the file): the turn is not in the log. */
export class LogAppendError extends RuntimeError {
  override name = 'LogAppendError';
}

/** One write(2) of `bytes` at the end of the file; returns how many it took (maybe fewer). A seam for fault tests. */
export type AppendWrite = (handle: FileHandle, bytes: Buffer) => Promise<number>;

const writeOnce: AppendWrite = async (handle, bytes) => (await handle.write(bytes)).bytesWritten;

/**
 * Writes all of `bytes`, one write after another: a file system that fills up mid-line takes what
 * fits and returns that count; only the next write says why (ENOSPC). Returns the bytes written.
 */
async function writeWhole(handle: FileHandle, bytes: Buffer, write: AppendWrite): Promise<number> {
  let written = 0;
  while (written < bytes.length) {
    const taken = await write(handle, bytes.subarray(written));
    if (taken <= 0) break;
    written += taken;
  }
  return written;
}

export interface AppendOptions {
  write?: AppendWrite;
  /** The longest wait for the log lock (held by `logs rm` and `logs prune`). */
  lockWaitMs?: number;
}

/**
 * Appends the turn as one line in one write to the day's file (or a later day's: appendDay), holding
 * the log lock so maintenance never replaces the file under it. A write that fails part-way (a full
 * disk) is cut back to where the file ended, so no torn line is left behind; then LogAppendError
 * says the turn is not logged. The log line is the truth; indexes and session records are derived
 * from it.
 */
export async function appendEntry(logsDir: string, entry: LogEntry, date: string, options: AppendOptions = {}): Promise<Appended> {
  const [appended] = await appendEntries(logsDir, [entry], date, options);
  if (appended === undefined) throw new LogAppendError(`cannot append to ${join(logsDir, logFileName(date))}: nothing was written`);
  return appended;
}

/**
 * Appends several turns, one line each, in order, in one write under one hold of the log lock (a
 * server logging many turns at once); all of them are logged, or none. Returns where each landed.
 */
export async function appendEntries(logsDir: string, entries: readonly LogEntry[], date: string, options: AppendOptions = {}): Promise<Appended[]> {
  const lines = entries.map((entry) => Buffer.from(`${serializeEntry(entry)}\n`, 'utf8'));
  const block = lines.length === 1 && lines[0] ? lines[0] : Buffer.concat(lines);
  const failIn = (file: string, error: unknown, reason = error instanceof Error ? error.message : String(error)): LogAppendError =>
    new LogAppendError(`cannot append to ${file}: ${reason}`, { cause: error });
  const dayFile = join(logsDir, logFileName(date));
  try {
    await ensurePrivateDir(logsDir);
  } catch (error) {
    throw failIn(dayFile, error);
  }
  return withLogLock(
    logsDir,
    async () => {
      let day: string;
      try {
        // Under the lock, so no other writer adds a later day between this choice and the write.
        day = await appendDay(logsDir, date);
      } catch (error) {
        throw failIn(dayFile, error);
      }
      const file = join(logsDir, logFileName(day));
      const fail = (error: unknown, reason?: string): LogAppendError => failIn(file, error, reason);
      let handle: FileHandle;
      let before: number;
      try {
        ({ handle, size: before } = await openForAppend(file));
      } catch (error) {
        throw fail(error);
      }
      try {
        // A last line cut short (an older version, a crash) must not swallow this one: start on a fresh line.
        const bytes = (await lastByte(handle, before)) === NEWLINE || before === 0 ? block : Buffer.concat([Buffer.from('\n'), block]);
        let written = 0;
        try {
          written = await writeWhole(handle, bytes, options.write ?? writeOnce);
          if (written !== bytes.length) throw new Error(`short write (${written} of ${bytes.length} bytes)`);
        } catch (error) {
          await handle.truncate(before).catch(() => undefined);
          const code = errnoOf(error);
          throw fail(error, code === 'ENOSPC' ? 'the disk is full' : undefined);
        }
        let offset = (await locate(handle, before, bytes)) + (bytes.length - block.length);
        return lines.map((line) => {
          const appended = { file, offset, length: line.length - 1 };
          offset += line.length;
          return appended;
        });
      } finally {
        await handle.close();
      }
    },
    options.lockWaitMs,
  );
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
