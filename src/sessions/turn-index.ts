import { basename } from 'node:path';
import { isLogFileName } from '../log/files.js';
import { appendPrivate, holdsExactly, isMissing, readDataFile, writeFileAtomic } from '../log/fs.js';
import { TURN_STATUSES } from '../log/entry.js';
import type { TurnStatus } from '../log/entry.js';
import { readLinesBackward } from '../log/lines.js';
import { ENTRY_TYPES } from '../replay/types.js';
import type { EntryType } from '../replay/types.js';
import { indexPath } from './store.js';

/** Where one turn of a session sits in the log. A hint only: every read checks the line's id. */
export interface IndexLine {
  id: string;
  file: string;
  offset: number;
  length: number;
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

/** Appends a line (or several, in one write) to the session's index; a symlink at the index's path is refused. */
export async function appendIndex(dir: string, session: string, line: IndexLine | readonly IndexLine[]): Promise<void> {
  const lines = Array.isArray(line) ? line : [line];
  await appendPrivate(indexPath(dir, session), lines.map((one) => `${JSON.stringify(one)}\n`).join(''));
}

/** The index, or null when it is missing or damaged (the caller rebuilds it from the log). */
export async function readIndex(dir: string, session: string): Promise<IndexLine[] | null> {
  let bytes: Buffer;
  try {
    bytes = await readDataFile(indexPath(dir, session));
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
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
  const lines: IndexLine[] = [];
  try {
    for await (const raw of readLinesBackward(indexPath(dir, session))) {
      if (!raw.complete) return null;
      const line = parseIndexLine(raw.text);
      if (!line) return null;
      lines.push(line);
      if (enough(lines)) break;
    }
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
  return lines.reverse();
}

/** Replaces the index in one rename, so readers never see half a file. */
export async function writeIndex(dir: string, session: string, lines: readonly IndexLine[]): Promise<void> {
  await writeFileAtomic(indexPath(dir, session), indexText(lines));
}

/**
 * writeIndex, unless the index already holds exactly these lines (and is private): a rebuild that
 * finds every index right writes nothing, rather than thousands of files each flushed to disk.
 * True when it wrote.
 */
export async function writeIndexIfChanged(dir: string, session: string, lines: readonly IndexLine[]): Promise<boolean> {
  const text = Buffer.from(indexText(lines), 'utf8');
  const path = indexPath(dir, session);
  if (await holdsExactly(path, text)) return false;
  await writeFileAtomic(path, text);
  return true;
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

const STATUSES = new Set<unknown>(TURN_STATUSES);
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
    STATUSES.has(line.status) &&
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
