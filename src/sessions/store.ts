import { randomBytes, randomUUID } from 'node:crypto';
import { link, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { PRIVATE_FILE, ensurePrivateDir, listFiles } from '../log/files.js';
import { isSessionName } from './names.js';

/**
 * Where a fork came from. A fork of a fork also carries its parent's own link, so the whole
 * lineage can be rebuilt from the log even after an ancestor's record is removed.
 */
export interface ParentLink {
  session_id: string;
  name: string;
  turn_id: string;
  parent?: ParentLink;
}

export interface SessionRecord {
  name: string;
  id: string;
  title: string;
  turns: number;
  created_at: string;
  last_used_at: string;
  last_model: string | null;
  /** Set on a fork: its history starts with the parent's turns up to and including `turn_id`. */
  parent?: ParentLink;
  /**
   * The newest turn in the session's history (for a fresh fork, the turn it was forked at). Every
   * writer appends the index line before saving the record, so an index without this id is stale.
   */
  last_turn_id?: string;
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
  // Written whole to a temporary name, then linked into place: the record appears complete or not
  // at all, and link() fails if another process created it first (that one wins).
  const target = recordPath(dir, name);
  const temporary = temporaryPath(target);
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: PRIVATE_FILE });
  try {
    await link(temporary, target);
    return record;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const winner = await readSession(dir, name);
    if (!winner) throw new RuntimeError(`session "${name}" vanished while being created; try again`);
    return winner;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

/** Replaces the record in one rename, so readers never see half a file. */
export async function saveSession(dir: string, record: SessionRecord): Promise<void> {
  await ensurePrivateDir(dir);
  const target = recordPath(dir, record.name);
  const temporary = temporaryPath(target);
  await writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: PRIVATE_FILE });
  await rename(temporary, target);
}

/** Writes a new record; false when a session of that name already exists. */
export async function createSession(dir: string, record: SessionRecord): Promise<boolean> {
  await ensurePrivateDir(dir);
  try {
    await writeFile(recordPath(dir, record.name), `${JSON.stringify(record, null, 2)}\n`, { flag: 'wx', mode: PRIVATE_FILE });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Removes the record and its index (either may already be gone). */
export async function deleteSession(dir: string, name: string): Promise<void> {
  await rm(indexPath(dir, name), { force: true });
  await rm(recordPath(dir, name), { force: true });
}

/** The record with its newest-turn marker set to `id`, or without one. */
export function withLastTurn(record: SessionRecord, id: string | undefined): SessionRecord {
  const copy: SessionRecord = { ...record };
  if (id === undefined) delete copy.last_turn_id;
  else copy.last_turn_id = id;
  return copy;
}

/** A sibling name unique to this write (several may run at once, even in one process). */
export function temporaryPath(target: string): string {
  return `${target}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
}

export async function listSessions(dir: string): Promise<SessionRecord[]> {
  const names = await listFiles(dir, '*.json').catch(() => []);
  const records: SessionRecord[] = [];
  for (const file of names) {
    const name = file.slice(0, -'.json'.length);
    if (!isSessionName(name)) continue;
    const record = await readSession(dir, name).catch(() => null);
    if (record) records.push(record);
  }
  return records;
}
