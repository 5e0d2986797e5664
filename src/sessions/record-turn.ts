import type { LogEntry } from '../log/entry.js';
import { appendEntry } from '../log/writer.js';
import type { DataPaths } from '../log/writer.js';
import { readSession, saveSession, titleFrom } from './store.js';
import type { SessionRecord } from './store.js';
import { appendIndex, indexLine } from './turn-index.js';

/**
 * Appends the turn to the log, then its index line, then the session's counters. The log line is
 * the truth; the index and the record can be rebuilt from it. `rules` fingerprints the
 * classification rules `entry.entry_type` was computed under. Returns the log file written.
 */
export async function recordTurn(paths: DataPaths, session: SessionRecord, entry: LogEntry, date: string, rules?: string): Promise<string> {
  const { file, offset, length } = await appendEntry(paths.logs, entry, date);
  await appendIndex(paths.sessions, session.name, indexLine(entry.id, file, offset, length, entry.status, entry.entry_type, rules));
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
