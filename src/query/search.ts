import type { ByteWriter, CopyResult } from '../log/copy.js';
import { logFileDate, listLogFiles } from '../log/files.js';
import { scanEntries } from '../log/scan.js';
import type { ScanStats, ScannedEntry } from '../log/scan.js';
import { fileMayMatch, grepMatcher, linePrefilter, matchesQuery, rawNeedle } from './query.js';
import type { Query } from './query.js';

export interface SearchOptions {
  /** The newest N matches (read newest file first, from its end, stopping at N). */
  limit?: number;
  /** Per file: read only up to this byte (a snapshot taken before following). */
  endOf?: (file: string) => number | undefined;
}

/**
 * The turns matching the query, oldest first, streamed. Files outside the time range are not
 * opened; lines that cannot match are rejected on their raw bytes before any JSON parsing.
 */
export async function* searchTurns(logsDir: string, query: Query, stats: ScanStats, options: SearchOptions = {}): AsyncGenerator<ScannedEntry> {
  const files = (await listLogFiles(logsDir)).filter((file) => fileMayMatch(logFileDate(file), query));
  const grep = grepMatcher(query.grep);
  const needle = rawNeedle(query);
  const prefilter = linePrefilter(query);
  const scan = {
    ...(needle ? { needle } : {}),
    ...(prefilter ? { prefilter } : {}),
    ...(options.endOf ? { endOf: options.endOf } : {}),
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

/**
 * Every turn, oldest first, each line exactly as stored, written as raw bytes (`argo logs --json`
 * with no filter). Files the verified record vouches for are copied without reading a line; the
 * others are checked line by line and recorded once found clean. Returns what was checked and what was trusted.
 */
export async function copyAllTurns(logsDir: string, stats: ScanStats, out: { write: ByteWriter; readonly closed: boolean }): Promise<CopyResult> {
  const files = await listLogFiles(logsDir);
  if (files.length === 0) return { checked: 0, trusted: 0 };
  // The copier and its record (with the record's zod codec) load only for this one command.
  const [{ copyTurnLines }, { VerifiedLogs }] = await Promise.all([import('../log/copy.js'), import('../log/verified.js')]);
  const verified = VerifiedLogs.load(logsDir);
  const result = await copyTurnLines(files, stats, out.write, { verified, stopped: () => out.closed });
  await verified.save(files);
  return result;
}
