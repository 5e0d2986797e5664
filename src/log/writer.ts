import { open } from 'node:fs/promises';
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

/**
 * Appends the turn as one line in one write (O_APPEND keeps concurrent writers whole), then its
 * index line, then the session's counters. The log line is the truth; the rest can be rebuilt.
 */
export async function recordTurn(paths: DataPaths, session: SessionRecord, entry: LogEntry, date: string): Promise<string> {
  await ensurePrivateDir(paths.logs);
  const file = join(paths.logs, logFileName(date));
  const bytes = Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8');
  const handle = await open(file, 'a', PRIVATE_FILE);
  let offset: number;
  try {
    const { bytesWritten } = await handle.write(bytes);
    if (bytesWritten !== bytes.length) throw new RuntimeError(`short write to ${file} (${bytesWritten} of ${bytes.length} bytes)`);
    // Another writer may have appended since; the offset is a hint that readers verify.
    offset = (await handle.stat()).size - bytes.length;
  } finally {
    await handle.close();
  }
  await appendIndex(paths.sessions, session.name, indexLine(entry.id, file, offset, bytes.length - 1, entry.status, entry.entry_type));
  const current = (await readSession(paths.sessions, session.name)) ?? session;
  await saveSession(paths.sessions, {
    ...current,
    title: current.title === '' ? titleFrom(entry.user_prompt) : current.title,
    turns: current.turns + 1,
    last_used_at: entry.timestamp,
    last_model: entry.model,
  });
  return file;
}
