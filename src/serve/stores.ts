// The server's views of Argo's stores and of Ollama, as the routes need them.
import { SERVER_HINTS } from '../ollama/fix-hints.js';
import { hideHome } from './errors.js';
import { OllamaTransport, boundedClient, questionFailure } from '../ollama/transport.js';
import { withSessionLock } from '../log/lock.js';
import type { LogEntry } from '../log/entry.js';
import type { DataPaths } from '../log/writer.js';
import { byLastUsed, readSession, saveSession, scanSessions } from '../sessions/store.js';
import { openSessionTurns } from '../sessions/turns.js';
import { sessionJson } from '../query/session-json.js';
import { sessionsWithText } from '../query/session-search.js';
import type { OllamaInfo, SessionStore } from './types.js';

/**
 * A logged turn as a client of the server sees it: a tool call's raw exception text (`error_detail`,
 * which may name the server's files) stays in the server's log; its safe `error` is kept, and the
 * turn's and each call's `error` name the data home `<data home>`, not by its path, as the client
 * was told them. The CLI's `sessions show --json` prints the log whole: there the log is the reader's own.
 */
export function turnForClients(entry: LogEntry, home?: string): LogEntry {
  const shown: LogEntry = { ...entry, error: entry.error === null ? null : hideHome(entry.error, home) };
  if (entry.tool_calls) shown.tool_calls = entry.tool_calls.map(({ error_detail: _detail, ...call }) => (call.error === undefined ? call : { ...call, error: hideHome(call.error, home) }));
  return shown;
}

/**
 * `lockWaitMs`: how long a title change waits for a session's lock (timeouts.lockWaitMs, as a turn
 * waits); `home`: the data home, which turns shown to clients do not name.
 */
export function sessionStore(paths: DataPaths, lockWaitMs?: number, home?: string): SessionStore {
  return {
    list: async (query) => {
      const records = (await scanSessions(paths.sessions)).records.sort(byLastUsed);
      return query === null ? records : sessionsWithText(paths, records, query);
    },
    show: async (name) => {
      const record = await readSession(paths.sessions, name);
      if (!record) return null;
      // Counted and checked now, so a damaged session is an error response, not a cut one.
      const turns = await openSessionTurns(paths, record, { kind: 'all' });
      return (give) => sessionJson(record, turns, give, (entry) => turnForClients(entry, home));
    },
    setTitle: async (name, title) => {
      const found = await readSession(paths.sessions, name);
      if (!found) return null;
      // Under the session's lock, which a turn finishing takes too: read again there, so neither the
      // title nor a turn's count is written over the other. Renamed or removed meanwhile: not found.
      return withSessionLock(paths.sessions, found.id, async () => {
        const record = await readSession(paths.sessions, name);
        if (record?.id !== found.id) return null;
        const updated = { ...record, title };
        await saveSession(paths.sessions, updated);
        return updated;
      }, lockWaitMs);
    },
  };
}

/** Ollama's answer to /health within 2 s, or none: a hung Ollama must not hold a request (or the process) open. */
const VERSION_TIMEOUT_MS = 2000;
const MODELS_TIMEOUT_MS = 10_000;

export function ollamaInfo(host: string, bounds = { versionMs: VERSION_TIMEOUT_MS, modelsMs: MODELS_TIMEOUT_MS }): OllamaInfo {
  const quick = boundedClient(host, bounds.versionMs);
  const asking = new OllamaTransport({ host, attempts: 1, initialDelayMs: 0, idleMs: bounds.modelsMs, hints: SERVER_HINTS });
  return {
    host,
    version: async () => (await quick.version()).version,
    models: async () => {
      try {
        // Checked where it is read: a list of another shape is not Ollama's, an entry without a name is left out.
        return await asking.listedModels();
      } catch (error) {
        throw new Error(questionFailure(host, error, SERVER_HINTS, bounds.modelsMs), { cause: error });
      }
    },
    answeringModel: (installed) => asking.answeringModel(installed),
  };
}
