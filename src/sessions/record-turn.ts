import { RuntimeError } from '../errors.js';
import type { LogEntry } from '../log/entry.js';
import { SymlinkRefusedError } from '../log/fs.js';
import { withSessionLock } from '../log/lock.js';
import { appendEntries } from '../log/writer.js';
import type { AppendOptions, Appended, DataPaths } from '../log/writer.js';
import { listSessions, readSession, saveSession, titleFrom } from './store.js';
import type { SessionRecord } from './store.js';
import { appendIndex, indexLine, markIndexStale } from './turn-index.js';

/**
 * The turn is in the log, but its session's index or record could not be updated. Not a lost turn:
 * asking again would log it twice. The index is rebuilt from the log on next use.
 */
export class SessionUpdateError extends RuntimeError {
  override name = 'SessionUpdateError';
}

/** A turn waiting to be written with the others of its session that finished meanwhile. */
interface Waiting {
  entry: LogEntry;
  done: (file: string) => void;
  fail: (error: unknown) => void;
}

/** Turns gathering for the next write, by session, day and options; the write takes them all. */
const gathering = new Map<string, Waiting[]>();

/**
 * Appends the turn to the log, then its index line, then the session's counters, all under the
 * session's lock (which `sessions rename` and `sessions rm` take too), so concurrent turns never
 * lose a count and maintenance never works on a half-updated session. The session is found by id:
 * if it was renamed meanwhile, the new name is updated; if it was removed, only the log line is
 * written (under the session's id) and the old name is not brought back. The log line is the truth;
 * the index and the record can be rebuilt from it. `rules` fingerprints the classification rules
 * `entry.entry_type` was computed under. Returns the log file written.
 *
 * Turns of one session that finish while an earlier one is being written are written together, in
 * the order they finished: one append, one index write, one record update, whatever their number.
 * One at a time, a server under load fell further behind the longer the load lasted.
 */
export function recordTurn(
  paths: DataPaths,
  session: SessionRecord,
  entry: LogEntry,
  date: string,
  rules?: string,
  options: AppendOptions = {},
): Promise<string> {
  return new Promise((done, fail) => {
    const waiting: Waiting = { entry, done, fail };
    // A caller with its own write (a fault test) is written on its own.
    const key = options.write ? null : [paths.logs, paths.sessions, session.id, date, rules ?? '', options.lockWaitMs ?? ''].join('\0');
    const open = key === null ? undefined : gathering.get(key);
    if (open) {
      open.push(waiting);
      return;
    }
    const batch = [waiting];
    if (key !== null) gathering.set(key, batch);
    const close = (): void => {
      if (key !== null && gathering.get(key) === batch) gathering.delete(key);
    };
    void writeTurns(paths, session, batch, date, rules, options, close);
  });
}

/** Turns gathering to be written now (for tests: none once all writes are done). */
export function turnsGathering(): number {
  return gathering.size;
}

async function writeTurns(
  paths: DataPaths,
  session: SessionRecord,
  batch: Waiting[],
  date: string,
  rules: string | undefined,
  options: AppendOptions,
  close: () => void,
): Promise<void> {
  try {
    await withSessionLock(
      paths.logs,
      session.id,
      async () => {
        // Turns finishing from now on gather for the next write.
        close();
        const entries = batch.map((waiting) => waiting.entry);
        let appended: Appended[];
        try {
          appended = await appendEntries(paths.logs, entries, date, options);
        } catch (error) {
          for (const waiting of batch) waiting.fail(error);
          return;
        }
        const file = appended[0]?.file ?? '';
        let name = session.name;
        try {
          const current = await currentRecord(paths.sessions, session);
          if (current !== null) {
            name = current.name;
            await updateSession(paths.sessions, current, entries, appended, rules);
          }
        } catch (error) {
          // The index or the record may stop short of the lines just logged, and both would still
          // agree: an index that reads as damaged makes the next reader rebuild both from the log.
          await markIndexStale(paths.sessions, name);
          const failure = new SessionUpdateError(updateFailure(file, session.name, error), { cause: error });
          for (const waiting of batch) waiting.fail(failure);
          return;
        }
        for (const waiting of batch) waiting.done(file);
      },
      options.lockWaitMs,
    );
  } catch (error) {
    close();
    for (const waiting of batch) waiting.fail(error);
  }
}

/** What a turn logged whose session could not be updated says: never to ask again, and what, if anything, the user must do. */
export function updateFailure(file: string, name: string, error: unknown): string {
  const logged = `the turn was logged in ${file}, but session "${name}" could not be updated`;
  // A link is left where it is (docs/security.md): the rebuild waits until the user removes it.
  if (error instanceof SymlinkRefusedError) {
    return `${logged}: ${error.path} is a symbolic link, and Argo does not follow links in its data home; remove the link, then the index is rebuilt from the log on next use (do not ask again)`;
  }
  const reason = error instanceof Error ? error.message : String(error);
  return `${logged} (${reason}); do not ask again: its index is rebuilt from the log on next use`;
}

/** The index lines and the record's counters for turns just appended, as one turn after another would leave them. */
async function updateSession(dir: string, current: SessionRecord, entries: readonly LogEntry[], appended: readonly Appended[], rules: string | undefined): Promise<void> {
  const lines = entries.map((entry, at) => {
    const { file, offset, length } = appended[at] ?? { file: '', offset: 0, length: 0 };
    return indexLine(entry.id, file, offset, length, entry.status, entry.entry_type, rules);
  });
  // A session with turns and no index (removed by hand, or empty after a failed update) gets no
  // index of this turn alone, which would pass for its whole history: the next reader rebuilds it.
  const hasHistory = current.turns > 0 || current.last_turn_id !== undefined || current.parent !== undefined;
  // Appended even to a leftover index of an earlier session of the name: its first reader tells
  // (startsWithOwnTurn, readVerified) and rebuilds it; replacing it here would also drop a first
  // turn whose record could not be saved, kept only by the index it marked stale.
  await appendIndex(dir, current.name, lines, { create: !hasHistory });
  const last = entries.at(-1);
  if (last === undefined) return;
  // A failed turn (a mistyped --model, say) must not become the session's model; one answered with a client's tool calls was answered.
  const lastOk = entries.findLast((entry) => entry.status === 'ok' || entry.status === 'tool_calls');
  await saveSession(dir, {
    ...current,
    ...usedBy(current, entries),
    turns: current.turns + entries.length,
    last_model: lastOk ? lastOk.model : current.last_model,
    last_turn_id: last.id,
  });
}

/**
 * The record's title, creation and last use once `entries` are counted, in the order they were
 * logged, which need not be the order they were asked in: a slow turn logs after a quick one asked
 * later. So the last use never moves back, and the title is the prompt of the session's earliest
 * asked turn: a turn asked before the session's creation as recorded (its record made by a later
 * turn's write) started the session, and gives it its title and its creation. A fork keeps its
 * parent's title. Times are compared as instants (each carries its writer's UTC offset); one that
 * cannot be read changes nothing.
 */
export function usedBy(current: SessionRecord, entries: readonly Pick<LogEntry, 'timestamp' | 'user_prompt'>[]): Pick<SessionRecord, 'title' | 'created_at' | 'last_used_at'> {
  let { title, created_at: created, last_used_at: lastUsed } = current;
  for (const entry of entries) {
    const at = Date.parse(entry.timestamp);
    if (current.parent === undefined && at < Date.parse(created)) {
      title = titleFrom(entry.user_prompt) || title;
      created = entry.timestamp;
    } else if (title === '') {
      title = titleFrom(entry.user_prompt);
    }
    // A last use that cannot be read is replaced by one that can.
    if (!Number.isNaN(at) && !(at <= Date.parse(lastUsed))) lastUsed = entry.timestamp;
  }
  return { title, created_at: created, last_used_at: lastUsed };
}

/**
 * Finishes what a turn's write left undone when its argo was killed after the log line (the index
 * line, the record's counters): the index is marked stale, then, under the session's lock, rebuilt
 * from the log with the counters. The mark comes first, without the lock: when the lock cannot be
 * had (argo serve holds it) or the rebuild fails, a SessionUpdateError says so and the mark stays,
 * so the next reader rebuilds it. `session` is where the turn was logged, by id; a session removed
 * since gains nothing. Turns whose write was whole cost only the rebuild.
 */
export async function settleLoggedTurn(paths: DataPaths, session: Pick<SessionRecord, 'id' | 'name'>, options: Pick<AppendOptions, 'lockWaitMs'> = {}): Promise<void> {
  const found = await currentRecord(paths.sessions, session);
  if (found === null) return;
  await markIndexStale(paths.sessions, found.name);
  try {
    await withSessionLock(
      paths.logs,
      session.id,
      async () => {
        const current = await currentRecord(paths.sessions, session);
        if (current === null) return;
        // Marked again under the lock: a turn or a rename may have replaced the index meanwhile.
        await markIndexStale(paths.sessions, current.name);
        const { rebuildIndex } = await import('./turns.js');
        await rebuildIndex(paths, current);
      },
      options.lockWaitMs,
    );
  } catch (error) {
    throw new SessionUpdateError(`session "${found.name}" is left for its next reader to rebuild (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
}

/**
 * The session's record as it is now (by id: the name may have changed), or null when it is gone. A
 * damaged record under the name it was logged with is another session's, or none to update.
 */
async function currentRecord(dir: string, session: Pick<SessionRecord, 'id' | 'name'>): Promise<SessionRecord | null> {
  const byName = await readSession(dir, session.name).catch(() => null);
  if (byName?.id === session.id) return byName;
  return (await listSessions(dir)).find((record) => record.id === session.id) ?? null;
}
