// `argo sessions show NAME --json` and argo serve's GET /api/sessions/:name: one JSON object
// {"session": record, "turns": [log lines]}, made a turn at a time, so a session of years is never
// one string (nor every turn held) at once.
import type { LogEntry } from '../log/entry.js';
import type { SessionTurns } from '../sessions/turns.js';

/**
 * The object's text in pieces, exactly what JSON.stringify({ session, turns }) gives, each turn as
 * `shown` makes it (the server leaves out what only the log's owner may read); `give` answers false
 * to stop early (the reader went away).
 */
export async function sessionJson(session: unknown, turns: SessionTurns, give: (piece: string) => Promise<boolean>, shown: (entry: LogEntry) => LogEntry = (entry) => entry): Promise<void> {
  if (!(await give(`{"session":${JSON.stringify(session)},"turns":[`))) return;
  let first = true;
  const whole = await turns.each(async (entry) => {
    const piece = `${first ? '' : ','}${JSON.stringify(shown(entry))}`;
    first = false;
    return give(piece);
  });
  if (whole) await give(']}');
}
