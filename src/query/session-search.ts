// Which sessions a text finds (argo serve's GET /api/sessions?q=): by title, or by any prompt of
// their history, a fork's inherited turns included. One pass over the log, its lines searched as raw
// bytes before any is decoded, rather than every turn of every session read session by session.
import { ScanStats } from '../log/scan.js';
import type { DataPaths } from '../log/writer.js';
import type { SessionRecord } from '../sessions/store.js';
import { readIndex } from '../sessions/turn-index.js';
import { loadSessionEntries } from '../sessions/turns.js';
import { EMPTY_QUERY, grepMatcher } from './query.js';
import { searchTurns } from './search.js';

/** The records (in their order) whose title or any prompt holds `text`, case-insensitively as `argo logs -q` finds it. */
export async function sessionsWithText(paths: DataPaths, records: readonly SessionRecord[], text: string): Promise<SessionRecord[]> {
  const grep = grepMatcher(text);
  if (grep === null) return [...records];
  const untitled = records.filter((record) => !grep.test(record.title));
  const hits = untitled.length === 0 ? { sessions: new Set<string>(), turns: new Set<string>() } : await promptHits(paths, text, grep);
  const found: SessionRecord[] = [];
  for (const record of records) {
    if (grep.test(record.title) || hits.sessions.has(record.id) || (record.parent !== undefined && (await inheritsHit(paths, record, hits.turns, grep)))) found.push(record);
  }
  return found;
}

/** The sessions (by id) and turns (by id) whose prompt holds the text. */
async function promptHits(paths: DataPaths, text: string, grep: RegExp): Promise<{ sessions: Set<string>; turns: Set<string> }> {
  const sessions = new Set<string>();
  const turns = new Set<string>();
  for await (const { entry } of searchTurns(paths.logs, { ...EMPTY_QUERY, grep: text }, new ScanStats())) {
    if (!grep.test(entry.user_prompt)) continue;
    sessions.add(entry.session_id);
    turns.add(entry.id);
  }
  return { sessions, turns };
}

/**
 * Whether a fork's inherited turns (its index's lines up to the fork point) hold a hit. An index
 * that cannot say (missing, damaged, without the fork point or the record's newest turn) is not
 * trusted: the fork's turns are read as `sessions show` reads them, rebuilding it from the log.
 */
async function inheritsHit(paths: DataPaths, record: SessionRecord, hits: ReadonlySet<string>, grep: RegExp): Promise<boolean> {
  const lines = await readIndex(paths.sessions, record.name);
  const forkPoint = lines?.findIndex((line) => line.id === record.parent?.turn_id) ?? -1;
  const current = record.last_turn_id === undefined || lines?.some((line) => line.id === record.last_turn_id) === true;
  if (lines === null || forkPoint === -1 || !current) return (await loadSessionEntries(paths, record)).some((entry) => grep.test(entry.user_prompt));
  return lines.slice(0, forkPoint + 1).some((line) => hits.has(line.id));
}
