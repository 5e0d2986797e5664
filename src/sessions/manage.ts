// Renaming, forking and reindexing sessions. Log lines are never touched here: they carry the
// session's id, which none of these operations changes.
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RuntimeError, UsageError } from '../errors.js';
import { isPlainObject, parseEntry } from '../log/entry.js';
import { elsewhereOn, judgedOwner, listUnfinished, ownerState, readJournalName, readUnfinished, thisProcess, unfinishedDir, whereElsewhere } from '../log/unfinished.js';
import { listLogFiles, requireDaysInReach } from '../log/files.js';
import { PRIVATE_FILE, holdsExactly, isMissing, removeOrphanedTemporaries, temporaryPath, trackTemporary, untrackTemporary } from '../log/fs.js';
import { takeSessionLocks, withLogLock, withSessionLock } from '../log/lock.js';
import { commandWithNames, isSessionName } from './names.js';
import { DamagedForkPoints, composeHistory, indexLineOf, indexedOrder, lineageNeedle, lineageOf, turnCount, verifiedLines } from './turns.js';
import type { Lineage, RulesTagging } from './turns.js';
import { readLines } from '../log/lines.js';
import type { RawLine } from '../log/lines.js';
import { lineHolds } from '../log/needle.js';
import type { Needle } from '../log/needle.js';
import { ScanStats, isBlank } from '../log/scan.js';
import type { DataPaths } from '../log/writer.js';
import { createSession, encodeRecord, indexPath, inspectSession, isDamaged, listSessions, readSession, recordPath, saveSession, scanSessions, withLastTurn } from './store.js';
import type { DamagedRecord, ParentLink, SessionRecord } from './store.js';
import { markIndexStale, parseIndexLine, writeIndex, writeIndexIfChanged } from './turn-index.js';
import type { IndexLine } from './turn-index.js';

/** The record of a session the user named, or a usage error listing the sessions there are. */
export async function requireSession(dir: string, name: string, where: string): Promise<SessionRecord> {
  const record = await readSession(dir, name);
  if (record) return record;
  throw new UsageError(`${where}: no session named "${name}"; ${await knownSessions(dir)}`);
}

/** Like requireSession, but a damaged record is returned rather than thrown (for sessions rm). */
export async function requireSessionFile(dir: string, name: string, where: string): Promise<SessionRecord | DamagedRecord> {
  const found = await inspectSession(dir, name);
  if (found) return found;
  throw new UsageError(`${where}: no session named "${name}"; ${await knownSessions(dir)}`);
}

/**
 * Why a session whose record is damaged cannot have its log lines deleted by name: its id, which
 * they carry, is in the damaged record. `where` is the command refusing.
 */
export function damagedRecordPurgeError(where: string, name: string): UsageError {
  return new UsageError(
    `${where}: the record of session "${name}" is damaged, so its id and log lines are unknown; ` +
      `remove it with "${commandWithNames('argo sessions rm', name)}" (its log lines stay), then delete them with "argo logs rm --session ID" ` +
      `(ID is the "session_id" of its lines in "argo logs --json")`,
  );
}

/** Whether a session named `name` has a record that cannot be read (a name from a log line is checked before it becomes a path). */
export async function hasDamagedRecord(dir: string, name: string): Promise<boolean> {
  if (!isSessionName(name)) return false;
  const found = await inspectSession(dir, name).catch(() => null);
  return found !== null && isDamaged(found);
}

export async function knownSessions(dir: string): Promise<string> {
  const names = (await listSessions(dir)).map((record) => record.name);
  if (names.length === 0) return 'there are no sessions yet';
  const shown = names.slice(0, 20).join(', ');
  return `known sessions: ${shown}${names.length > 20 ? `, and ${names.length - 20} more (argo sessions)` : ''}`;
}

/**
 * Refuses a name a session has. A record left marked by a rename cut short (argo killed midway) is
 * that rename's: it is finished first, then said, so the user is not left with two names for one session.
 */
export async function requireFree(dir: string, name: string): Promise<void> {
  const record = await readSession(dir, name);
  if (record === null) return refuseFirstTurnsName(dir, name);
  const from = record.renamed_from;
  if (from !== undefined) {
    await completeRename(dir, record);
    throw new UsageError(`session "${from}" was being renamed to "${name}" when an earlier argo stopped: that rename is finished now, and "${name}" is that session's name`);
  }
  throw nameTaken(name);
}

/**
 * Refuses a name whose session a turn is starting: its first question, asked while no session had
 * the name, is being answered (its file in unfinished/ names the session and no id). Its record is
 * made when it is logged: a session renamed or forked onto the name now would take that turn, asked
 * with no history, as its own. Only while its argo runs, or runs where only its own machine or
 * container can tell: one gone from this machine has been logged by recovery, or will be.
 */
async function refuseFirstTurnsName(dir: string, name: string): Promise<void> {
  const home = dirname(dir);
  const me = thisProcess();
  for (const file of await listUnfinished(home).catch((): string[] => [])) {
    const journal = readJournalName(file);
    if (journal === null) continue;
    const read = readUnfinished(home, file);
    if (read === null || 'problem' in read || !startsSession(read.value, name)) continue;
    const owner = judgedOwner(journal, read.owner);
    const state = ownerState(owner, me);
    if (state === 'dead') continue;
    const elsewhere = state === 'alive' ? null : { pid: owner.pid, host: owner.host, ...elsewhereOn(owner, me) };
    throw new UsageError(firstTurnsRefusal(name, join(unfinishedDir(home), file), elsewhere));
  }
}

/** An argo only another machine or container can judge: its pid, and where it runs. */
export interface OwnerElsewhere {
  pid: number;
  host: string;
  machine?: string;
  container?: string;
}

/**
 * Why `name` is refused while the first question of its session, kept in `file`, is being
 * answered, and what frees it; `owner`: the argo answering it, when it runs where only its own
 * machine or container can judge (null: here).
 */
export function firstTurnsRefusal(name: string, file: string, owner: OwnerElsewhere | null): string {
  if (owner === null) return `session "${name}" is being started by a question still being answered (${file}); wait until it is logged, then choose another name`;
  const there = owner.container === undefined ? 'that host' : 'that container';
  return (
    `session "${name}" is being started by a question of argo pid ${owner.pid} ${whereElsewhere(owner)} (${file}), which only ${there} can log: ` +
    `once that argo has ended, any argo command there that reads the log (argo logs) logs it, and the name is that session's; ` +
    `if argo will not run there again, move the file out of ${dirname(file)} (it holds the question) and the name is free`
  );
}

/** Whether a journal file's turn was asked in session `name` when it had no record yet. */
export function startsSession(value: unknown, name: string): boolean {
  if (!isPlainObject(value) || !isPlainObject(value.session)) return false;
  return value.session.name === name && value.session.id === null;
}

function nameTaken(name: string): UsageError {
  return new UsageError(`a session named "${name}" already exists; choose another name or remove it with "${commandWithNames('argo sessions rm', name)}"`);
}

/**
 * Gives the session a new name: a new record file and the index moved over. Forks that name it as
 * their parent are updated too; the log keeps the old name in its lines, and lookups go by id.
 */
export async function renameSession(dir: string, planned: SessionRecord, to: string): Promise<void> {
  // Under the session's lock, which turn completion takes too: no turn updates the old name midway.
  await withSessionLock(dir, planned.id, async () => {
    let record = await currentRecord(dir, planned);
    // A rename of it cut short is finished first: the new record must claim no other name.
    if (record.renamed_from !== undefined) {
      if (await finishRename(dir, record)) await markIndexStale(dir, record.name);
      record = await currentRecord(dir, planned);
    }
    await moveSession(dir, record, to);
  });
}

/** The session's record under the name it was planned with, or an error when it is not there any more. */
async function currentRecord(dir: string, planned: SessionRecord): Promise<SessionRecord> {
  const record = await readSession(dir, planned.name);
  if (record?.id !== planned.id) throw new RuntimeError(`session "${planned.name}" was renamed or removed meanwhile; nothing renamed`);
  return record;
}

/**
 * Finishes the rename of `from` to `to` an earlier argo was killed in, when that is what the record
 * under `to` is (marked `renamed_from` `from`, and no other session named `from`): running the same
 * rename again completes it. Returns whether it did.
 */
export async function resumeRename(dir: string, from: string, to: string): Promise<boolean> {
  const target = await readSession(dir, to);
  if (target?.renamed_from !== from) return false;
  const source = await inspectSession(dir, from).catch(() => null);
  if (source !== null && (isDamaged(source) || source.id !== target.id)) return false;
  await completeRename(dir, target);
  return true;
}

/**
 * The record is made under the new name first, marked with the old one (`renamed_from`); then the
 * index is moved, the old record removed, the forks relinked and the mark cleared. Killed at any
 * step, the mark says how to finish (finishRename); until then listings show the new name alone.
 */
async function moveSession(dir: string, record: SessionRecord, to: string): Promise<void> {
  const moving: SessionRecord = { ...record, name: to, renamed_from: record.name };
  if (await createSession(dir, moving)) {
    // A first turn that began after the caller's check is refused as the check refuses it.
    try {
      await refuseFirstTurnsName(dir, to);
    } catch (error) {
      await rm(recordPath(dir, to), { force: true });
      throw error;
    }
  } else {
    // This very rename, cut short before: taken up again. Anything else there is another session.
    const there = await readSession(dir, to);
    if (there?.id !== record.id || there.renamed_from !== record.name) throw nameTaken(to);
    await saveSession(dir, moving);
  }
  try {
    await rename(indexPath(dir, record.name), indexPath(dir, to));
  } catch (error) {
    if (!isMissing(error)) {
      await rm(recordPath(dir, to), { force: true });
      throw new RuntimeError(`cannot move the index of "${record.name}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  await finishRename(dir, moving);
}

/**
 * Finishes the rename `target` is marked with, the session's lock held: the index moved if it is
 * still under the old name, the old record removed (its counters, newer if a turn was logged under
 * the old name meanwhile, kept), the forks relinked and the mark cleared. Returns whether the old
 * record was still there (a rename cut short).
 */
async function finishRename(dir: string, target: SessionRecord): Promise<boolean> {
  const { renamed_from: from, ...moved } = target;
  if (from === undefined) return false;
  const source = await inspectSession(dir, from).catch(() => null);
  const cutShort = source !== null && !isDamaged(source) && source.id === target.id;
  let record: SessionRecord = moved;
  if (cutShort) {
    // The old record's own mark, from a rename of it cut short before, is no part of this one.
    record = { ...source, name: target.name };
    delete record.renamed_from;
    await rename(indexPath(dir, from), indexPath(dir, target.name)).catch((error: unknown) => {
      if (!isMissing(error)) throw error;
    });
    await rm(recordPath(dir, from), { force: true });
  }
  for (const fork of await listSessions(dir)) {
    const parent = fork.parent ? renamedLink(fork.parent, target.id, target.name) : undefined;
    if (parent && parent !== fork.parent) await saveSession(dir, { ...fork, parent });
  }
  await saveSession(dir, record);
  return cutShort;
}

/**
 * Completes a rename argo was killed in the middle of (the record `target` under the new name still
 * marked), under the session's lock. A turn logged under either name meanwhile may be missing from
 * the index or the counters kept: the index is marked stale, so its next reader rebuilds both from the log.
 */
export async function completeRename(dir: string, target: SessionRecord): Promise<void> {
  await withSessionLock(dir, target.id, async () => {
    const current = await readSession(dir, target.name);
    if (current?.id !== target.id || current.renamed_from === undefined) return;
    if (await finishRename(dir, current)) await markIndexStale(dir, current.name);
  });
  // What the cut-short write of the record left.
  await removeOrphanedTemporaries(dir).catch(() => 0);
}

/** The link with `id` renamed wherever it appears in the lineage; the same object when it does not. */
function renamedLink(link: ParentLink, id: string, name: string): ParentLink {
  const parent = link.parent ? renamedLink(link.parent, id, name) : undefined;
  if (link.session_id !== id && parent === link.parent) return link;
  return { ...link, ...(link.session_id === id ? { name } : {}), ...(parent ? { parent } : {}) };
}

export interface ForkResult {
  record: SessionRecord;
  inherited: number;
}

/**
 * A new session whose history is the parent's up to and including `turn` (default: its newest).
 * Nothing is copied from the log: the new index is seeded with the parent's index lines, which
 * point at the parent's log lines, so the inherited turns replay in the fork as they were.
 */
export async function forkSession(paths: DataPaths, parent: SessionRecord, turn: string | undefined, name: string, now: string): Promise<ForkResult> {
  await requireFree(paths.sessions, name);
  // Every inherited hint is checked against the log (and the parent's index rebuilt if need be), no turn held.
  const lines = await verifiedLines(paths, parent, { kind: 'all' });
  if (lines.length === 0) throw new UsageError(`session "${parent.name}" has no turns to fork yet`);
  const cut = turn === undefined ? lines.length - 1 : findTurn(lines, turn, parent.name);
  const inherited = lines.slice(0, cut + 1);
  const forkTurn = inherited.at(-1);
  if (forkTurn === undefined) throw new UsageError(`session "${parent.name}" has no turns to fork yet`);
  const record: SessionRecord = {
    name,
    id: randomUUID(),
    title: parent.title,
    turns: 0,
    created_at: now,
    last_used_at: now,
    last_model: parent.last_model,
    parent: { session_id: parent.id, name: parent.name, turn_id: forkTurn.id, ...(parent.parent ? { parent: parent.parent } : {}) },
    last_turn_id: forkTurn.id,
  };
  // Index first: a record without its index would be rebuilt, an index without a record is ignored.
  await writeIndex(paths.sessions, name, inherited);
  if (!(await createSession(paths.sessions, record))) {
    throw new UsageError(`a session named "${name}" was created meanwhile; choose another name`);
  }
  return { record, inherited: inherited.length };
}

/** A turn id, or an unambiguous prefix of one (at least 4 characters), within the session's history. */
export function findTurn(lines: readonly IndexLine[], turn: string, session: string): number {
  const exact = lines.findIndex((line) => line.id === turn);
  if (exact !== -1) return exact;
  const matches = turn.length >= 4 ? lines.flatMap((line, position) => (line.id.startsWith(turn) ? [position] : [])) : [];
  const [only] = matches;
  if (only !== undefined && matches.length === 1) return only;
  if (matches.length > 1) throw new UsageError(`turn "${turn}" is ambiguous in session "${session}" (${matches.length} turns start with it); give more of its id`);
  if (turn.length < 4 && lines.some((line) => line.id.startsWith(turn))) {
    throw new UsageError(`turn "${turn}" is too short to name a turn of session "${session}": give at least 4 characters of its id`);
  }
  throw new UsageError(`session "${session}" has no turn "${turn}"; list its turn ids with "${commandWithNames('argo sessions show', session)}"`);
}

/** `name` or `name@turn`. */
export function parseForkSource(spec: string): { name: string; turn?: string } {
  const at = spec.lastIndexOf('@');
  if (at === -1) return { name: spec };
  const turn = spec.slice(at + 1);
  if (turn === '') throw new UsageError(`"${spec}": give a turn id after "@", or leave out "@" to fork at the newest turn`);
  return { name: spec.slice(0, at), turn };
}

export interface ReindexResult {
  /** Sessions reindexed, and their own turns. */
  sessions: number;
  turns: number;
  unreadable: number;
  /** Sessions left as they were: an unreadable line may be one of their turns (rebuildIndex says why). */
  left: number;
}

/**
 * Runs `work` holding every session's lock, then the log's: the order a turn takes them (its
 * session's, then the log's for the append), so neither waits on the other in a circle, and two of
 * these take them in the same (sorted) order. A turn that wrote its log line just before then
 * updates its index and record before `work` reads them. Sessions created while the locks were
 * being taken are locked too before the log's.
 */
export async function withEveryLock<T>(paths: DataPaths, work: () => Promise<T>): Promise<T> {
  const held = new Set<string>();
  const releases: (() => Promise<void>)[] = [];
  try {
    for (;;) {
      const { records } = await scanSessions(paths.sessions, { everyFile: true });
      const ids = [...new Set(records.map((record) => record.id))].filter((id) => !held.has(id)).sort();
      if (ids.length === 0) break;
      releases.push(await takeSessionLocks(paths.logs, ids));
      for (const id of ids) held.add(id);
    }
    return await withLogLock(paths.logs, async () => {
      // The copies a killed rewrite left behind (kill -9 during logs rm) go before the next one starts.
      await Promise.all([removeOrphanedTemporaries(paths.logs), removeOrphanedTemporaries(paths.sessions)]);
      return work();
    });
  } finally {
    for (let release = releases.pop(); release !== undefined; release = releases.pop()) await release();
  }
}

/**
 * Rebuilds every session's index in one pass over the log: lines are spooled per session to a
 * temporary file (memory bounded by the number of sessions, not turns), then forks get their
 * parent's rebuilt history up to the fork point in front of their own lines.
 */
export async function reindexAll(paths: DataPaths, tagging?: RulesTagging): Promise<ReindexResult> {
  // Turns finishing meanwhile wait: one logged during the scan could be left out, and an index line
  // appended during the writes overwritten.
  return withEveryLock(paths, () => reindexLocked(paths, tagging));
}

async function reindexLocked(paths: DataPaths, tagging?: RulesTagging): Promise<ReindexResult> {
  await requireDaysInReach(paths.logs, 'nothing reindexed');
  // Renames cut short are finished first (every lock is held): the index is rebuilt under the new name.
  for (const record of (await scanSessions(paths.sessions)).records) if (record.renamed_from !== undefined) await finishRename(paths.sessions, record);
  const records = await listSessions(paths.sessions);
  const lineages = new Map(records.map((record) => [record, lineageOf(record, records)]));
  // One spool per session id met in any lineage: removed ancestors still have lines to inherit.
  const spools = new Map<string, Spool>();
  for (const lineage of lineages.values()) {
    for (const level of lineage) if (!spools.has(level.id)) spools.set(level.id, new Spool(paths.sessions, level.id));
  }
  const forkPoints = [...lineages.values()].map((lineage) => new DamagedForkPoints(lineage));
  const damaged = new DamagedLineages([...lineages.values()]);
  const stats = new ScanStats();
  try {
    for (const file of await listLogFiles(paths.logs)) {
      for await (const line of readLines(file)) {
        if (isBlank(line)) continue;
        const entry = parseEntry(line.text);
        if (!entry) {
          stats.skip(file, line, 'unreadable');
          for (const points of forkPoints) points.see(file, line);
          damaged.see(line);
          continue;
        }
        await spools.get(entry.session_id)?.push(indexLineOf(entry, file, line, tagging));
      }
    }
    let turns = 0;
    for (const [position, [record, lineage]] of [...lineages].entries()) {
      if (damaged.positions.has(position)) continue;
      const own = new Map<string, IndexLine[]>();
      for (const level of lineage) own.set(level.id, (await spools.get(level.id)?.lines()) ?? []);
      const lines = composeHistory(lineage, (id) => own.get(id) ?? [], forkPoints[position]?.places, await indexedOrder(paths.sessions, record.name));
      // What is right already is left as it is: a healthy home's reindex writes nothing.
      await writeIndexIfChanged(paths.sessions, record.name, lines, 'replace');
      const count = turnCount(own.get(record.id) ?? []);
      turns += count;
      const updated = withLastTurn({ ...record, turns: count }, lines[lines.length - 1]?.id);
      if (!holdsExactly(recordPath(paths.sessions, record.name), Buffer.from(encodeRecord(updated), 'utf8'))) await saveSession(paths.sessions, updated);
    }
    return { sessions: records.length - damaged.positions.size, turns, unreadable: stats.unreadable, left: damaged.positions.size };
  } finally {
    for (const spool of spools.values()) await spool.discard();
  }
}

/**
 * The lineages (by position) an unreadable line may belong to: those whose needle it holds, as a
 * rebuild of one of their sessions would count it (rebuildIndex). A line holding no id of any is
 * passed over in one search.
 */
class DamagedLineages {
  readonly positions = new Set<number>();
  private readonly needles: Extract<Needle, { kind: 'json-string' }>[];
  private readonly any: Needle | null;

  constructor(lineages: readonly (readonly Lineage[])[]) {
    this.needles = lineages.map((lineage) => lineageNeedle(lineage));
    const values = [...new Set(this.needles.flatMap((needle) => needle.values))];
    this.any = values.length === 0 ? null : { kind: 'json-string', values };
  }

  see(line: Pick<RawLine, 'text'>): void {
    if (this.any === null) return;
    const bytes = Buffer.from(line.text, 'utf8');
    if (!lineHolds(this.any, bytes)) return;
    this.needles.forEach((needle, position) => {
      if (!this.positions.has(position) && lineHolds(needle, bytes)) this.positions.add(position);
    });
  }
}

const SPOOL_LINES = 64;

/**
 * A session's rebuilt index lines: held while there are fewer than SPOOL_LINES, written out in
 * batches beyond, to a temporary file of its own (a random name, created exclusively and never
 * through a link, so a leftover or a planted file is never appended to). Most sessions never fill a
 * batch and never touch the disk; memory stays bounded by the number of sessions, not turns.
 */
class Spool {
  private pending: IndexLine[] = [];
  private readonly path: string;
  private created = false;

  constructor(dir: string, id: string) {
    this.path = temporaryPath(join(dir, `reindex-${id}`));
    trackTemporary(this.path);
  }

  async push(line: IndexLine): Promise<void> {
    this.pending.push(line);
    if (this.pending.length >= SPOOL_LINES) await this.flush();
  }

  private async flush(): Promise<void> {
    const text = this.pending.map((line) => `${JSON.stringify(line)}\n`).join('');
    this.pending = [];
    // Opened per batch, not kept: a reindex has a spool per session, more than a process may hold open.
    const flags = this.created ? constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW : constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    const handle = await open(this.path, flags, PRIVATE_FILE);
    this.created = true;
    try {
      await handle.write(text);
    } finally {
      await handle.close();
    }
  }

  /** Every line pushed, in order: those written out, then those held. */
  async lines(): Promise<IndexLine[]> {
    if (!this.created) return this.pending;
    const text = await readFile(this.path, 'utf8').catch(() => '');
    const written = text
      .split('\n')
      .filter((raw) => raw !== '')
      .map((raw) => parseIndexLine(raw))
      .filter((line): line is IndexLine => line !== null);
    return [...written, ...this.pending];
  }

  async discard(): Promise<void> {
    if (this.created) await rm(this.path, { force: true });
    untrackTemporary(this.path);
  }
}
