// Deleting history on purpose, and keeping every session's index and record consistent afterwards.
// Log files are rewritten through a temporary file and a rename, so a reader sees the old file or
// the new one, never half of one.
import { rm, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { RuntimeError, UsageError, shownPath } from '../errors.js';
import { listFiles, listLogFiles, logFileDate, requireDaysInReach } from '../log/files.js';
import { openLogFile, readDataText, replaceFile } from '../log/fs.js';
import { readLines } from '../log/lines.js';
import { parseEntry } from '../log/entry.js';
import type { DataPaths } from '../log/writer.js';
import { withEveryLock } from '../sessions/manage.js';
import { deleteSession, readSession, saveSession, scanSessions, withLastTurn } from '../sessions/store.js';
import type { ParentLink, SessionRecord } from '../sessions/store.js';
import { parseIndexLine, writeIndex } from '../sessions/turn-index.js';
import type { IndexLine } from '../sessions/turn-index.js';

export interface PrunePlan {
  files: string[];
  bytes: number;
}

/** Daily files named before `cutoffDay` (yyyy-MM-dd, firstDayFrom the cutoff): a file goes only when every turn in it is older. */
export async function planPrune(logsDir: string, cutoffDay: string): Promise<PrunePlan> {
  const files = (await listLogFiles(logsDir)).filter((file) => logFileDate(file) < cutoffDay);
  let bytes = 0;
  for (const file of files) bytes += (await stat(file)).size;
  return { files, bytes };
}

export interface IndexRepair {
  /** Sessions whose index and record were updated. */
  updated: number;
  /** Sessions left without any turn, whose record and index were removed. */
  emptied: string[];
}

/** Deletes the planned files, then drops their turns from every index and recounts the sessions. */
export async function prune(paths: DataPaths, plan: PrunePlan): Promise<IndexRepair> {
  return withEveryLock(paths, () => pruneLocked(paths, plan));
}

async function pruneLocked(paths: DataPaths, plan: PrunePlan): Promise<IndexRepair> {
  for (const file of plan.files) await rm(file, { force: true });
  const gone = new Set(plan.files.map((file) => basename(file)));
  return repairIndexes(paths, gone, (line) => (gone.has(line.file) ? null : line), { removeEmptied: true });
}

/** Byte ranges [start, end) removed from one file, newline included, in file order. */
type Ranges = [number, number][];

export interface RemoveResult {
  files: number;
  lines: number;
  bytes: number;
}

/**
 * Rewrites every daily file that holds turns of these sessions without those lines, then moves the
 * index offsets of every other session past the removed bytes, then runs `then` (removing the
 * sessions' records), all under every session's lock and the log's. Unreadable lines are kept: they
 * cannot be attributed to a session with certainty. A logs/ that is no folder (a link to a disk not
 * mounted) refuses before anything is removed (NotAFolderError), and so does one with no log file
 * when the sessions' records count turns (`logged`): the record and index are how the lines would
 * be found again, and "deleted 0 lines" would be a success that deleted nothing.
 */
export async function removeSessionLines(
  paths: DataPaths,
  sessionIds: ReadonlySet<string>,
  then: () => Promise<void> = () => Promise.resolve(),
  options: { logged?: boolean } = {},
): Promise<RemoveResult> {
  // Appends wait while the files are rewritten: a line added meanwhile would be lost in the rename.
  return withEveryLock(paths, async () => {
    const removed = await removeLocked(paths, sessionIds, options.logged === true);
    await then();
    return removed;
  });
}

async function removeLocked(paths: DataPaths, sessionIds: ReadonlySet<string>, logged: boolean): Promise<RemoveResult> {
  const result: RemoveResult = { files: 0, lines: 0, bytes: 0 };
  if (sessionIds.size === 0) return result;
  const removed = new Map<string, Ranges>();
  const needle = { kind: 'json-string', values: [...sessionIds] } as const;
  // Lines left in a day out of reach would come back with it, after "deleted" was said.
  await requireDaysInReach(paths.logs, 'nothing deleted');
  const files = await listLogFiles(paths.logs);
  if (files.length === 0 && logged) {
    throw new RuntimeError(`${shownPath(paths.logs)} holds no log file, yet the session has turns: nothing deleted. If logs/ is on a disk that is not mounted, mount it and try again; if its files were deleted, "argo sessions reindex" counts what is left`);
  }
  for (const file of files) {
    const ranges: Ranges = [];
    const size = (await stat(file)).size;
    for await (const line of readLines(file, { needle })) {
      const entry = parseEntry(line.text);
      if (entry && sessionIds.has(entry.session_id)) ranges.push([line.offset, Math.min(size, line.offset + line.length + 1)]);
    }
    if (ranges.length === 0) continue;
    await rewriteWithout(file, ranges);
    removed.set(basename(file), ranges);
    result.files++;
    result.lines += ranges.length;
    result.bytes += ranges.reduce((sum, [start, end]) => sum + end - start, 0);
  }
  if (removed.size > 0) {
    const shifts = new Map([...removed].map(([file, ranges]) => [file, new RemovedBytes(ranges)]));
    await repairIndexes(paths, new Set(removed.keys()), (line) => shifted(line, shifts.get(line.file)), { removeEmptied: false });
  }
  return result;
}

/**
 * The ranges removed from one file, with the bytes removed before each: an index line finds the
 * ranges before it by a binary search. Scanning them from the start for every line made `logs rm`
 * of half a long history quadratic (100,000 lines: 16 s, holding every lock).
 */
export class RemovedBytes {
  private readonly starts: number[];
  /** removedBefore[i]: the bytes of ranges[0..i). */
  private readonly removedBefore: number[];

  constructor(private readonly ranges: Ranges) {
    this.starts = ranges.map(([start]) => start);
    this.removedBefore = [0];
    for (const [start, end] of ranges) this.removedBefore.push((this.removedBefore.at(-1) ?? 0) + end - start);
  }

  /** How far `offset` moves back, or null when a removed range starts there (its line is gone). */
  shiftOf(offset: number): number | null {
    // The first range starting at or after the offset; those before it start before it.
    let low = 0;
    let high = this.starts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.starts[middle] ?? 0) < offset) low = middle + 1;
      else high = middle;
    }
    if (this.starts[low] === offset) return null;
    const last = this.ranges[low - 1];
    // An offset inside a removed range (an index gone stale) moves back by the whole ranges before it only.
    const inside = last !== undefined && last[1] > offset ? last[1] - last[0] : 0;
    return (this.removedBefore[low] ?? 0) - inside;
  }
}

/** The line moved back by the bytes removed before it; null when it was removed itself. */
export function shifted(line: IndexLine, removed: RemovedBytes | undefined): IndexLine | null {
  const by = removed === undefined ? 0 : removed.shiftOf(line.offset);
  if (by === null) return null;
  return by === 0 ? line : { ...line, offset: line.offset - by };
}

async function rewriteWithout(file: string, ranges: Ranges): Promise<void> {
  const source = await openLogFile(file);
  try {
    await replaceFile(file, async (target) => {
      let cursor = 0;
      for (const [start, end] of ranges) {
        await copy(source, target, cursor, start);
        cursor = end;
      }
      // Everything after the last removed line, including what other processes appended meanwhile.
      for (let size = (await source.stat()).size; cursor < size; size = (await source.stat()).size) {
        await copy(source, target, cursor, size);
        cursor = size;
      }
    });
  } finally {
    await source.close();
  }
}

async function copy(source: FileHandle, target: FileHandle, from: number, to: number): Promise<void> {
  const buffer = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, to - from)));
  for (let position = from; position < to; ) {
    const { bytesRead } = await source.read(buffer, 0, Math.min(buffer.length, to - position), position);
    if (bytesRead === 0) break;
    await target.write(buffer, 0, bytesRead);
    position += bytesRead;
  }
}

/**
 * Applies `fix` to every index line pointing into `files`, rewrites the indexes that changed, and
 * brings each record's turn count and newest-turn marker in line. An index that cannot be read is
 * deleted: it will be rebuilt from the log on next use.
 */
async function repairIndexes(
  paths: DataPaths,
  files: ReadonlySet<string>,
  fix: (line: IndexLine) => IndexLine | null,
  options: { removeEmptied: boolean },
): Promise<IndexRepair> {
  const repair: IndexRepair = { updated: 0, emptied: [] };
  const names = await listFiles(paths.sessions, '*.idx');
  const needles = [...files].map((file) => `"file":${JSON.stringify(file)}`);
  for (const name of names) {
    const session = name.slice(0, -'.idx'.length);
    const path = join(paths.sessions, name);
    const text = readIndexText(path);
    if (text === null || !needles.some((needle) => text.includes(needle))) continue;
    const before: IndexLine[] = [];
    let damaged = !text.endsWith('\n');
    for (const raw of text.split('\n')) {
      if (raw === '') continue;
      const line = parseIndexLine(raw);
      if (!line) damaged = true;
      else before.push(line);
    }
    if (damaged) {
      await rm(path, { force: true });
      continue;
    }
    const record = await readSession(paths.sessions, session).catch(() => null);
    const forkPoint = record?.parent ? before.findIndex((line) => line.id === record.parent?.turn_id) : -1;
    const after: IndexLine[] = [];
    let ownDropped = 0;
    before.forEach((line, position) => {
      const fixed = files.has(line.file) ? fix(line) : line;
      if (fixed) after.push(fixed);
      else if (position > forkPoint) ownDropped++;
    });
    if (after.length === 0 && before.length > 0 && options.removeEmptied) {
      await deleteSession(paths.sessions, session);
      repair.emptied.push(session);
      continue;
    }
    await writeIndex(paths.sessions, session, after);
    repair.updated++;
    if (record) await recount(paths.sessions, record, after, ownDropped);
  }
  return repair;
}

/**
 * An index's text, or null when it cannot be read. Synchronous: every index is read, thousands in a
 * row with nothing else to do, where each hand-over to the thread pool cost more than the read.
 */
function readIndexText(path: string): string | null {
  try {
    return readDataText(path);
  } catch {
    return null;
  }
}

async function recount(dir: string, record: SessionRecord, lines: readonly IndexLine[], ownDropped: number): Promise<void> {
  const marker = record.last_turn_id;
  const keepMarker = marker !== undefined && lines.some((line) => line.id === marker);
  if (ownDropped === 0 && keepMarker) return;
  await saveSession(dir, withLastTurn({ ...record, turns: Math.max(0, record.turns - ownDropped) }, keepMarker ? marker : lines[lines.length - 1]?.id));
}

/**
 * Sessions that replay turns of any of these ids through their own index: forks of them, and forks
 * of those forks at any depth (the lineage stays in the record even when a middle fork is removed).
 * Records under hidden or otherwise invalid file names count too: their history is just as real.
 */
export async function forksOf(dir: string, ids: ReadonlySet<string>): Promise<SessionRecord[]> {
  const { records } = await scanSessions(dir, { everyFile: true });
  const inherits = (link: ParentLink | undefined): boolean => link !== undefined && (ids.has(link.session_id) || inherits(link.parent));
  return records.filter((record) => !ids.has(record.id) && inherits(record.parent));
}

/** Forks replay their parent's lines: deleting those lines would silently cut the forks' history. */
export async function refuseWithForks(sessionsDir: string, id: string, label: string): Promise<void> {
  const forks = await forksOf(sessionsDir, new Set([id]));
  if (forks.length === 0) return;
  const names = forks.map((fork) => fork.name).join(', ');
  throw new UsageError(
    `${label} has forks that replay its turns (${names}); remove them first (argo sessions rm NAME), or keep the log lines and remove only the session (argo sessions rm without --purge)`,
  );
}
