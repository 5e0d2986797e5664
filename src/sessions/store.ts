import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fg from 'fast-glob';
import { RuntimeError } from '../errors.js';
import { PRIVATE_FILE, ensurePrivateDir } from '../log/files.js';
import { isSessionName } from './names.js';

export interface SessionRecord {
  name: string;
  id: string;
  title: string;
  turns: number;
  created_at: string;
  last_used_at: string;
  last_model: string | null;
  /** Set on a fork: its history starts with the parent's turns up to and including `turn_id`. */
  parent?: { session_id: string; name: string; turn_id: string };
}

export const TITLE_LENGTH = 60;

export function recordPath(dir: string, name: string): string {
  return join(dir, `${name}.json`);
}

export function indexPath(dir: string, name: string): string {
  return join(dir, `${name}.idx`);
}

export function titleFrom(prompt: string): string {
  const line = prompt.replace(/\s+/g, ' ').trim();
  const chars = Array.from(line);
  return chars.length <= TITLE_LENGTH ? line : chars.slice(0, TITLE_LENGTH - 1).join('') + '…';
}

export async function readSession(dir: string, name: string): Promise<SessionRecord | null> {
  let text: string;
  try {
    text = await readFile(recordPath(dir, name), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new RuntimeError(`cannot read session "${name}": ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text) as SessionRecord;
  } catch (error) {
    throw new RuntimeError(`session file ${recordPath(dir, name)} is not valid JSON; fix it or remove it with "argo sessions rm ${name}"`, {
      cause: error,
    });
  }
}

/** The session's record, created on first use; concurrent creators agree on one id. */
export async function openSession(dir: string, name: string, now: string): Promise<SessionRecord> {
  const existing = await readSession(dir, name);
  if (existing) return existing;
  await ensurePrivateDir(dir);
  const record: SessionRecord = { name, id: randomUUID(), title: '', turns: 0, created_at: now, last_used_at: now, last_model: null };
  try {
    await writeFile(recordPath(dir, name), `${JSON.stringify(record, null, 2)}\n`, { flag: 'wx', mode: PRIVATE_FILE });
    return record;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = await readSession(dir, name);
    if (!winner) throw new RuntimeError(`session "${name}" vanished while being created; try again`);
    return winner;
  }
}

/** Replaces the record in one rename, so readers never see half a file. */
export async function saveSession(dir: string, record: SessionRecord): Promise<void> {
  await ensurePrivateDir(dir);
  const target = recordPath(dir, record.name);
  const temporary = `${target}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: PRIVATE_FILE });
  await rename(temporary, target);
}

export async function listSessions(dir: string): Promise<SessionRecord[]> {
  const names = await fg('*.json', { cwd: dir, onlyFiles: true }).catch(() => []);
  const records: SessionRecord[] = [];
  for (const file of names.sort()) {
    const name = file.slice(0, -'.json'.length);
    if (!isSessionName(name)) continue;
    const record = await readSession(dir, name).catch(() => null);
    if (record) records.push(record);
  }
  return records;
}
