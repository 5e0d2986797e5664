import { RuntimeError } from '../errors.js';
import type { LogEntry } from '../log/entry.js';
import { withSessionLock } from '../log/lock.js';
import { appendEntry } from '../log/writer.js';
import type { AppendOptions, DataPaths } from '../log/writer.js';
import { listSessions, readSession, saveSession, titleFrom } from './store.js';
import type { SessionRecord } from './store.js';
import { appendIndex, indexLine } from './turn-index.js';

/**
 * The turn is in the log, but its session's index or record could not be updated. Not a lost turn:
 * asking again would log it twice. The index is rebuilt from the log on next use.
 */
export class SessionUpdateError extends RuntimeError {
  override name = 'SessionUpdateError';
}

/**
 * Appends the turn to the log, then its index line, then the session's counters, all under the
 * session's lock (which `sessions rename` and `sessions rm` take too), so concurrent turns never
 * lose a count and maintenance never works on a half-updated session. The session is found by id:
 * if it was renamed meanwhile, the new name is updated; if it was removed, only the log line is
 * written (under the session's id) and the old name is not brought back. The log line is the truth;
 * the index and the record can be rebuilt from it. `rules` fingerprints the classification rules
 * `entry.entry_type` was computed under. Returns the log file written.
 */
export async function recordTurn(
  paths: DataPaths,
  session: SessionRecord,
  entry: LogEntry,
  date: string,
  rules?: string,
  options: AppendOptions = {},
): Promise<string> {
  return withSessionLock(
    paths.logs,
    session.id,
    async () => {
      const { file, offset, length } = await appendEntry(paths.logs, entry, date, options);
      try {
        const current = await currentRecord(paths.sessions, session);
        if (current === null) return file;
        await appendIndex(paths.sessions, current.name, indexLine(entry.id, file, offset, length, entry.status, entry.entry_type, rules));
        await saveSession(paths.sessions, {
          ...current,
          title: current.title === '' ? titleFrom(entry.user_prompt) : current.title,
          turns: current.turns + 1,
          last_used_at: entry.timestamp,
          // A failed turn (a mistyped --model, say) must not become the session's model.
          last_model: entry.status === 'ok' ? entry.model : current.last_model,
          last_turn_id: entry.id,
        });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new SessionUpdateError(
          `the turn was logged in ${file}, but session "${session.name}" could not be updated (${reason}); do not ask again: its index is rebuilt from the log on next use`,
          { cause: error },
        );
      }
      return file;
    },
    options.lockWaitMs,
  );
}

/** The session's record as it is now (by id: the name may have changed), or null when it is gone. */
async function currentRecord(dir: string, session: SessionRecord): Promise<SessionRecord | null> {
  const byName = await readSession(dir, session.name);
  if (byName?.id === session.id) return byName;
  return (await listSessions(dir)).find((record) => record.id === session.id) ?? null;
}
