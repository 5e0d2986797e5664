import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import type { HistoryTurn, ReplaySpec } from '../replay/types.js';
import { listSessions } from '../sessions/store.js';
import type { SessionRecord } from '../sessions/store.js';
import { indexLine, readIndex, writeIndex } from '../sessions/turn-index.js';
import type { IndexLine } from '../sessions/turn-index.js';
import { parseEntry } from './entry.js';
import type { LogEntry } from './entry.js';
import { listLogFiles } from './files.js';
import { ScanStats, scanEntries } from './scan.js';
import type { DataPaths } from './writer.js';

/** The ok turns a replay spec asks for, oldest first, found through the session's index. */
export async function loadHistory(paths: DataPaths, session: SessionRecord, spec: ReplaySpec): Promise<HistoryTurn[]> {
  if (spec.kind === 'none') return [];
  const pick = (index: readonly IndexLine[]): IndexLine[] => {
    const ok = index.filter((line) => line.status === 'ok');
    return spec.kind === 'last' ? ok.slice(Math.max(0, ok.length - spec.count)) : ok;
  };
  const index = (await readIndex(paths.sessions, session.name)) ?? (await rebuildIndex(paths, session));
  let entries = await readIndexed(paths.logs, pick(index));
  if (entries === null) {
    entries = await readIndexed(paths.logs, pick(await rebuildIndex(paths, session)));
    if (entries === null) throw new RuntimeError(`the log changed while reading session "${session.name}"; try again`);
  }
  return entries.map((entry) => ({ id: entry.id, prompt: entry.user_prompt, response: entry.model_response }));
}

/** Every turn of the session, with a fork's inherited turns first. */
export async function loadSessionEntries(paths: DataPaths, session: SessionRecord): Promise<LogEntry[]> {
  const index = (await readIndex(paths.sessions, session.name)) ?? (await rebuildIndex(paths, session));
  const entries = await readIndexed(paths.logs, index);
  if (entries !== null) return entries;
  const rebuilt = await readIndexed(paths.logs, await rebuildIndex(paths, session));
  if (rebuilt === null) throw new RuntimeError(`the log changed while reading session "${session.name}"; try again`);
  return rebuilt;
}

/** Reads the indexed lines; null as soon as one does not hold the turn it should (stale index). */
async function readIndexed(logsDir: string, lines: readonly IndexLine[]): Promise<LogEntry[] | null> {
  const handles = new Map<string, FileHandle>();
  try {
    const entries: LogEntry[] = [];
    for (const line of lines) {
      let handle = handles.get(line.file);
      if (!handle) {
        handle = await open(join(logsDir, line.file), 'r').catch(() => undefined);
        if (!handle) return null;
        handles.set(line.file, handle);
      }
      const buffer = Buffer.allocUnsafe(line.length);
      const { bytesRead } = await handle.read(buffer, 0, line.length, line.offset);
      const entry = bytesRead === line.length ? parseEntry(buffer.toString('utf8')) : null;
      if (entry === null || entry.id !== line.id) return null;
      entries.push(entry);
    }
    return entries;
  } finally {
    await Promise.all([...handles.values()].map((handle) => handle.close()));
  }
}

/** Recreates the session's index from the log itself (and, for a fork, from its parent's history). */
export async function rebuildIndex(paths: DataPaths, session: SessionRecord): Promise<IndexLine[]> {
  const lines: IndexLine[] = [];
  if (session.parent) {
    const parent = (await listSessions(paths.sessions)).find((record) => record.id === session.parent?.session_id);
    if (parent) {
      const parentLines = (await readIndex(paths.sessions, parent.name)) ?? (await rebuildIndex(paths, parent));
      const cut = parentLines.findIndex((line) => line.id === session.parent?.turn_id);
      lines.push(...(cut === -1 ? parentLines : parentLines.slice(0, cut + 1)));
    }
  }
  const stats = new ScanStats();
  const needle = `"session_id":${JSON.stringify(session.id)}`;
  for await (const { entry, file, line } of scanEntries(await listLogFiles(paths.logs), stats, { prefilter: (text) => text.includes(needle) })) {
    if (entry.session_id === session.id) lines.push(indexLine(entry.id, file, line.offset, line.length, entry.status, entry.entry_type));
  }
  await writeIndex(paths.sessions, session.name, lines);
  return lines;
}
