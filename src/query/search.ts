import type { ByteWriter, CopyResult } from '../log/copy.js';
import { logFileDate, listLogFiles } from '../log/files.js';
import { parseEntry } from '../log/entry.js';
import type { LogEntry } from '../log/entry.js';
import { checkLines, describeBadLine, scanEntries } from '../log/scan.js';
import type { ScanStats, ScannedEntry } from '../log/scan.js';
import { fileMayMatch, grepMatcher, linePrefilter, matchesQuery, rawNeedle } from './query.js';
import type { Query } from './query.js';

export interface SearchOptions {
  /** The newest N matches (read newest file first, from its end, stopping at N). */
  limit?: number;
  /** Per file: read only up to this byte (a snapshot taken before following). */
  endOf?: (file: string) => number | undefined;
  /** Ends the search between reads (throws its reason): a tool call's, stopped with the call. */
  signal?: AbortSignal;
}

/**
 * The turns matching the query, oldest first, streamed. Files outside the time range are not
 * opened; lines that cannot match are rejected on their raw bytes before any JSON parsing.
 */
export async function* searchTurns(logsDir: string, query: Query, stats: ScanStats, options: SearchOptions = {}): AsyncGenerator<ScannedEntry> {
  const files = (await listLogFiles(logsDir, stats)).filter((file) => fileMayMatch(logFileDate(file), query));
  const grep = grepMatcher(query.grep);
  const needle = rawNeedle(query);
  const prefilter = linePrefilter(query);
  const scan = {
    ...(needle ? { needle } : {}),
    ...(prefilter ? { prefilter } : {}),
    ...(options.endOf ? { endOf: options.endOf } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  if (options.limit === undefined) {
    for await (const found of scanEntries(files, stats, scan)) if (matchesQuery(found.entry, query, grep)) yield found;
    return;
  }
  const newestFirst: ScannedEntry[] = [];
  if (options.limit > 0) {
    for await (const found of scanEntries(files, stats, { ...scan, backward: true })) {
      if (!matchesQuery(found.entry, query, grep)) continue;
      newestFirst.push(found);
      if (newestFirst.length >= options.limit) break;
    }
  }
  yield* newestFirst.reverse();
}

/** The fields of a turn `argo logs --stats` counts (query/stats.ts). */
export type CountedTurn = Pick<LogEntry, 'timestamp' | 'entry_type' | 'status' | 'model' | 'replay_policy' | 'timings'>;

/**
 * Whether turnsToCount may count this query's turns: its filters read no text of a turn but the
 * timestamp, status and model (a session's id, the prompt and answer, tool names are left to
 * searchTurns, whose raw-byte search makes them cheap anyway).
 */
export function countableFromLatin1(query: Query): boolean {
  return query.sessionIds === null && query.grep === null && !query.tools && !query.agentRuns;
}

const NON_ASCII = /[\u0080-\uffff]/;

/**
 * The counted fields of the turns matching the query, oldest first, as searchTurns finds them, for
 * a query countableFromLatin1, at less cost: every line is checked as Latin-1 text (checkLine), and
 * a turn is decoded again as UTF-8 only when its timestamp, status or model holds a character from
 * 0x80 up. Every other field counting or such a query reads is a number, a boolean or one of a
 * fixed set of ASCII words, the same in either decoding, so the counts are those of the turns as
 * every reader sees them (test/query/count-turns.test.ts compares the two).
 */
export async function* turnsToCount(logsDir: string, query: Query, stats: ScanStats): AsyncGenerator<CountedTurn> {
  const files = (await listLogFiles(logsDir, stats)).filter((file) => fileMayMatch(logFileDate(file), query));
  for (const file of files) {
    for await (const checked of checkLines(file)) {
      if (checked.blank) continue;
      let entry: LogEntry | null = checked.entry;
      if (entry === null) {
        const line = checked.raw();
        stats.skip(file, line, await describeBadLine(line));
        continue;
      }
      if (checked.latin1 && (NON_ASCII.test(entry.timestamp) || NON_ASCII.test(entry.status) || NON_ASCII.test(entry.model))) {
        // Checked already: the UTF-8 text is a turn too.
        entry = parseEntry(checked.raw().text);
      }
      if (entry !== null && matchesQuery(entry, query, null)) yield entry;
    }
  }
}

/**
 * Every turn, oldest first, each line exactly as stored, written as raw bytes (`argo logs --json`
 * with no filter). Files the verified record vouches for are copied without reading a line; the
 * others are checked line by line and recorded once found clean. Returns what was checked and what was trusted.
 */
export async function copyAllTurns(logsDir: string, stats: ScanStats, out: { write: ByteWriter; readonly closed: boolean }): Promise<CopyResult> {
  const files = await listLogFiles(logsDir, stats);
  if (files.length === 0) return { checked: 0, trusted: 0 };
  // The copier and its record (with the record's zod codec) load only for this one command.
  const [{ copyTurnLines }, { VerifiedLogs }] = await Promise.all([import('../log/copy.js'), import('../log/verified.js')]);
  const verified = VerifiedLogs.load(logsDir);
  const result = await copyTurnLines(files, stats, out.write, { verified, stopped: () => out.closed });
  await verified.save(files);
  return result;
}
