import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { PRIVATE_FILE, ensurePrivateDir } from '../log/files.js';
import type { TurnStatus } from '../log/entry.js';
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
}

export function indexLine(id: string, file: string, offset: number, length: number, status: TurnStatus, type: EntryType): IndexLine {
  return { id, file: basename(file), offset, length, status, type };
}

export async function appendIndex(dir: string, session: string, line: IndexLine): Promise<void> {
  await ensurePrivateDir(dir);
  await appendFile(indexPath(dir, session), `${JSON.stringify(line)}\n`, { mode: PRIVATE_FILE });
}

/** The index, or null when it is missing or damaged (the caller rebuilds it from the log). */
export async function readIndex(dir: string, session: string): Promise<IndexLine[] | null> {
  let text: string;
  try {
    text = await readFile(indexPath(dir, session), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const lines: IndexLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    const line = parseIndexLine(raw);
    if (!line) return null;
    lines.push(line);
  }
  return lines;
}

export async function writeIndex(dir: string, session: string, lines: readonly IndexLine[]): Promise<void> {
  await ensurePrivateDir(dir);
  const target = indexPath(dir, session);
  const temporary = `${target}.${process.pid}.tmp`;
  await writeFile(temporary, lines.map((line) => `${JSON.stringify(line)}\n`).join(''), { mode: PRIVATE_FILE });
  await rename(temporary, target);
}

function parseIndexLine(raw: string): IndexLine | null {
  try {
    const value = JSON.parse(raw) as Partial<IndexLine>;
    const valid =
      typeof value.id === 'string' &&
      typeof value.file === 'string' &&
      Number.isInteger(value.offset) &&
      Number.isInteger(value.length) &&
      typeof value.status === 'string' &&
      typeof value.type === 'string';
    return valid ? (value as IndexLine) : null;
  } catch {
    return null;
  }
}
