import { closeSync, readdirSync, readFileSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isLogFileName } from '../log/files.js';
import { RuntimeError } from '../errors.js';
import { NotRegularFileError, appendPrivate, dropLastByte, holdsExactly, holdsFolder, openDataFile, openRegularSync, removeEmptyFolder, removeFile, writeFileAtomic } from '../log/fs.js';
import { parseEntry } from '../log/entry.js';
import type { LogEntry, TurnStatus } from '../log/entry.js';
import { readLinesBackward } from '../log/lines.js';
import { needleFinder } from '../log/needle.js';
import { PlacedLines } from '../log/placed-lines.js';
import type { DataPaths } from '../log/writer.js';
import { ENTRY_TYPES } from '../replay/types.js';
import type { EntryType } from '../replay/types.js';
import { indexPath } from './store.js';

/** Where one turn of a session sits in the log. A hint only: every read checks the line's id. */
export interface IndexLine {
  id: string;
  file: string;
  offset: number;
  length: number;
  /** As the turn's log line has it: a newer Argo's status is kept as written (only `ok` is replayed). */
  status: TurnStatus;
  type: EntryType;
  /** Fingerprint of the classification rules `type` was computed under (absent: unknown, classify again). */
  rules?: string | undefined;
}

export function indexLine(
  id: string,
  file: string,
  offset: number,
  length: number,
  status: TurnStatus,
  type: EntryType,
  rules?: string,
): IndexLine {
  return { id, file: basename(file), offset, length, status, type, ...(rules !== undefined ? { rules } : {}) };
}

/**
 * Appends a line (or several, in one write) to the session's index; a symlink at the index's path is
 * refused. A folder there takes nothing: it is a stale hint every reader reads around (IndexFolder);
 * nor does a named pipe, which readers take for a damaged index and replace with the one they rebuild.
 * `create: false` leaves a missing index missing, for the next reader to rebuild from the log.
 */
export async function appendIndex(dir: string, session: string, line: IndexLine | readonly IndexLine[], options: { create?: boolean } = {}): Promise<void> {
  const lines = Array.isArray(line) ? line : [line];
  try {
    await appendPrivate(indexPath(dir, session), lines.map((one) => `${JSON.stringify(one)}\n`).join(''), options);
  } catch (error) {
    if (!(error instanceof NotRegularFileError)) throw error;
  }
}

/**
 * Marks the session's index stale, so its next reader rebuilds it (and the record's counters) from
 * the log: its last byte is cut, so it reads as a write cut short, and stays so when a later turn
 * appends to it (neither needs free space: this works on a full disk). An empty one is removed. A
 * link, a folder there, or a failure, is left as it is (nothing better can be done; a folder is read around).
 */
export async function markIndexStale(dir: string, session: string): Promise<void> {
  const path = indexPath(dir, session);
  try {
    // Only an empty file goes: a link (refused, as docs/security.md says) is the user's to remove.
    if (!(await dropLastByte(path)) && (await lstat(path)).isFile()) await removeFile(path);
  } catch {
    // As above: left as it is.
  }
}

/**
 * What a write of the index does with a folder where the index goes (made by hand, or by a restore):
 * 'keep' leaves it, and the session's history is read from the log around it, as for a missing
 * index; 'replace' (argo sessions reindex) removes it when it is empty, and refuses, naming it, when
 * it holds files, which are not Argo's to delete.
 */
export type IndexFolder = 'keep' | 'replace';

/**
 * The index, or null when it is missing or damaged (the caller rebuilds it from the log): anything
 * but a regular file at its place (a folder, a named pipe) is damaged; a link is refused.
 */
export async function readIndex(dir: string, session: string): Promise<IndexLine[] | null> {
  const handle = await openDataFile(indexPath(dir, session));
  if (handle === null) return null;
  let bytes: Buffer;
  try {
    bytes = await handle.readFile();
  } finally {
    await handle.close();
  }
  // An index always ends with a newline: anything else is a write cut short.
  if (bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE) return null;
  // Decoded a line at a time: a long session's index never exists as one string plus its split copy.
  const lines: IndexLine[] = [];
  for (let start = 0, end = bytes.indexOf(NEWLINE); end !== -1; start = end + 1, end = bytes.indexOf(NEWLINE, start)) {
    if (end === start) continue;
    const line = parseIndexLine(bytes.toString('utf8', start, end));
    if (!line) return null;
    lines.push(line);
  }
  return lines;
}

const NEWLINE = 10;

/**
 * The last lines of the index, oldest first, reading backwards until `enough` says so (it sees the
 * lines newest first). Null when the index is missing or damaged. Cost: what is read, not the index size.
 */
export async function readIndexTail(dir: string, session: string, enough: (newestFirst: readonly IndexLine[]) => boolean): Promise<IndexLine[] | null> {
  const path = indexPath(dir, session);
  const handle = await openDataFile(path);
  if (handle === null) return null;
  const lines: IndexLine[] = [];
  try {
    for await (const raw of readLinesBackward(path, { handle })) {
      if (!raw.complete) return null;
      const line = parseIndexLine(raw.text);
      if (!line) return null;
      lines.push(line);
      if (enough(lines)) break;
    }
  } finally {
    await handle.close();
  }
  return lines.reverse();
}

/** Replaces the index in one rename, so readers never see half a file. True when it wrote (a folder kept: false). */
export async function writeIndex(dir: string, session: string, lines: readonly IndexLine[], folder: IndexFolder = 'keep'): Promise<boolean> {
  return placeIndex(dir, session, indexText(lines), folder);
}

/**
 * writeIndex, unless the index already holds exactly these lines (and is private): a rebuild that
 * finds every index right writes nothing, rather than thousands of files each flushed to disk.
 * True when it wrote.
 */
export async function writeIndexIfChanged(dir: string, session: string, lines: readonly IndexLine[], folder: IndexFolder = 'keep'): Promise<boolean> {
  const text = Buffer.from(indexText(lines), 'utf8');
  if (holdsExactly(indexPath(dir, session), text)) return false;
  return placeIndex(dir, session, text, folder);
}

async function placeIndex(dir: string, session: string, text: string | Buffer, folder: IndexFolder): Promise<boolean> {
  const path = indexPath(dir, session);
  if (folder === 'keep') {
    // Looked at first, not met as the rename's EISDIR: every read of the session rebuilds its history, and would write it in vain.
    if (await holdsFolder(path)) return false;
  } else if ((await removeEmptyFolder(path)) === 'holds-files') {
    throw new RuntimeError(`${path} is a folder with files in it where the index of session "${session}" goes; move it out of ${dir}, then reindex again`);
  }
  await writeFileAtomic(path, text);
  return true;
}

/**
 * Turns found by id through the session indexes, without reading the log around them: each index
 * (one read; `first`'s, a session's name, before the others) is searched as bytes for the ids, and
 * a line naming one is followed to the log, where the turn is taken only if a whole line at that
 * place is the turn with that id. Ids no index names rightly are left out: the caller searches the
 * log for them. Stops once every id is found. Synchronous: many small files, nothing else to do.
 */
export function findIndexedTurns(paths: DataPaths, ids: ReadonlySet<string>, first?: string): Map<string, LogEntry> {
  const found = new Map<string, LogEntry>();
  if (ids.size === 0) return found;
  const finder = needleFinder({ kind: 'json-string', values: [...ids] });
  const places = new PlacedLines(paths.logs);
  const turnAt = (line: IndexLine): LogEntry | null => {
    const text = places.line(line.file, line.offset, line.length);
    const entry = text === null ? null : parseEntry(text);
    return entry?.id === line.id ? entry : null;
  };
  try {
    let names: string[];
    try {
      names = readdirSync(paths.sessions).filter((name) => name.endsWith('.idx')).sort();
    } catch {
      return found;
    }
    const firstName = first === undefined ? undefined : `${first}.idx`;
    if (firstName !== undefined && names.includes(firstName)) names = [firstName, ...names.filter((name) => name !== firstName)];
    for (const name of names) {
      let bytes: Buffer;
      try {
        // Never through a link: an index planted elsewhere names nothing here.
        const index = openRegularSync(join(paths.sessions, name));
        if (index === null) continue;
        try {
          bytes = readFileSync(index.fd);
        } finally {
          closeSync(index.fd);
        }
      } catch {
        continue;
      }
      for (const [from, to] of finder.lines(bytes, 0, bytes.length)) {
        const line = parseIndexLine(bytes.toString('utf8', from, to));
        if (line === null || !ids.has(line.id) || found.has(line.id)) continue;
        const entry = turnAt(line);
        if (entry !== null) found.set(line.id, entry);
      }
      if (found.size === ids.size) break;
    }
    return found;
  } finally {
    places.close();
  }
}

function indexText(lines: readonly IndexLine[]): string {
  return lines.map((line) => `${JSON.stringify(line)}\n`).join('');
}


/** One index line, or null when it is not one (the caller treats the index as damaged and rebuilds it). */
export function parseIndexLine(raw: string): IndexLine | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isIndexLine(value)) return null;
  // A long session's index names few files and one set of rules thousands of times: keep one copy of each.
  value.file = shared(value.file);
  if (value.rules !== undefined) value.rules = shared(value.rules);
  return value;
}

const TYPES = new Set<unknown>(ENTRY_TYPES);

/**
 * IndexLineSchema's verdict (index-schema.ts) without the copy zod makes (a long session's index has one line per
 * turn, all read at once); test/sessions/index-check.test.ts proves they agree.
 */
export function isIndexLine(value: unknown): value is IndexLine {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const line = value as Record<string, unknown>;
  const { id, file, offset, length, rules } = line;
  return (
    typeof id === 'string' &&
    id.length >= 1 &&
    typeof file === 'string' &&
    isLogFileName(file) &&
    file === basename(file) &&
    Number.isSafeInteger(offset) &&
    (offset as number) >= 0 &&
    Number.isSafeInteger(length) &&
    (length as number) > 0 &&
    // Any status, as a log line takes any: a newer Argo's turn must not make every read rebuild the index.
    typeof line.status === 'string' &&
    TYPES.has(line.type) &&
    (rules === undefined || typeof rules === 'string')
  );
}

const sharedStrings = new Map<string, string>();

function shared(text: string): string {
  const known = sharedStrings.get(text);
  if (known !== undefined) return known;
  if (sharedStrings.size < 1024) sharedStrings.set(text, text);
  return text;
}
