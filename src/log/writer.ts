import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { readSession, saveSession, titleFrom } from '../sessions/store.js';
import type { SessionRecord } from '../sessions/store.js';
import { appendIndex, indexLine } from '../sessions/turn-index.js';
import type { LogEntry } from './entry.js';
import { PRIVATE_FILE, ensurePrivateDir, logFileName } from './files.js';

export interface DataPaths {
  logs: string;
  sessions: string;
}

/** Beyond this many bytes appended by others between our stat and our write, keep the offset as a bare hint. */
const LOCATE_LIMIT = 8 << 20;
const NEWLINE = 10;

/**
 * Appends the turn as one line in one write (O_APPEND keeps concurrent writers whole), then its
 * index line, then the session's counters. The log line is the truth; the rest can be rebuilt.
 * `rules` fingerprints the classification rules `entry.entry_type` was computed under.
 */
export async function recordTurn(paths: DataPaths, session: SessionRecord, entry: LogEntry, date: string, rules?: string): Promise<string> {
  await ensurePrivateDir(paths.logs);
  const file = join(paths.logs, logFileName(date));
  const line = Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8');
  const handle = await open(file, 'a+', PRIVATE_FILE);
  let offset: number;
  try {
    const before = (await handle.stat()).size;
    // A last line cut short (a crash, a full disk) must not swallow this one: start on a fresh line.
    const bytes = (await lastByte(handle, before)) === NEWLINE || before === 0 ? line : Buffer.concat([Buffer.from('\n'), line]);
    const { bytesWritten } = await handle.write(bytes);
    if (bytesWritten !== bytes.length) throw new RuntimeError(`short write to ${file} (${bytesWritten} of ${bytes.length} bytes)`);
    offset = (await locate(handle, before, bytes)) + (bytes.length - line.length);
  } finally {
    await handle.close();
  }
  await appendIndex(paths.sessions, session.name, indexLine(entry.id, file, offset, line.length - 1, entry.status, entry.entry_type, rules));
  const current = (await readSession(paths.sessions, session.name)) ?? session;
  await saveSession(paths.sessions, {
    ...current,
    title: current.title === '' ? titleFrom(entry.user_prompt) : current.title,
    turns: current.turns + 1,
    last_used_at: entry.timestamp,
    // A failed turn (a mistyped --model, say) must not become the session's model.
    last_model: entry.status === 'ok' ? entry.model : current.last_model,
    last_turn_id: entry.id,
  });
  return file;
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
