import { randomUUID } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { ParentLink, SessionRecord } from './record-schema.js';
import { RuntimeError, UsageError } from '../errors.js';
import { isPlainObject } from '../log/entry.js';
import { NotAFolderError, NotRegularFileError, SymlinkRefusedError, UntrustedFileError, createFileExclusive, folderTrouble, errnoOf, isMissing, readDataText, removeEmptyFolder, writeFileAtomic } from '../log/fs.js';
import { byCodeUnits } from '../text/order.js';
import { removedNames } from './removed.js';
import { commandWithNames, indexPath, isEarlierSessionName, isSessionName, recordPath } from './names.js';

export type { ParentLink, SessionRecord } from './record-schema.js';

/**
 * A record file that is there but unusable: not JSON (a write cut short, a hand edit gone wrong) or
 * JSON that is not a session record. Its name is known (the file's), its id is not.
 */
export class DamagedRecord {
  constructor(
    readonly name: string,
    readonly path: string,
    /** Why, for messages: "not valid JSON" or the first wrong field. */
    readonly problem: string,
  ) {}
}

export function isDamaged(found: SessionRecord | DamagedRecord): found is DamagedRecord {
  return found instanceof DamagedRecord;
}

/** The record in a file's text, or why it is not one (naming the field: zod loads only then). */
export async function decodeRecord(text: string, name: string, path: string, anyName = false): Promise<SessionRecord | DamagedRecord> {
  const named = async (record: SessionRecord): Promise<SessionRecord | DamagedRecord> => (anyName ? record : await ownName(record, name, path));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return new DamagedRecord(name, path, 'not valid JSON');
  }
  if (isSessionRecord(value)) return await named(value);
  const { SessionRecordSchema } = await import('./record-schema.js');
  const parsed = SessionRecordSchema.safeParse(value);
  if (parsed.success) return await named(parsed.data);
  const [issue] = parsed.error.issues;
  const field = issue?.path.map(String).join('.') ?? '';
  return new DamagedRecord(name, path, field === '' ? 'not a session record' : `not a session record (field "${field}": ${issue?.message ?? 'invalid'})`);
}

/**
 * A record is found by its file's name: one that calls itself something else (a copy made by hand) is
 * damaged. One whose name differs only in case is another session's file on a file system that
 * ignores case (macOS, Windows): calling it damaged would have `sessions rm` delete that session.
 */
async function ownName(record: SessionRecord, name: string, path: string): Promise<SessionRecord | DamagedRecord> {
  if (record.name === name) return record;
  if (isSessionName(record.name) && record.name.toLowerCase() === name.toLowerCase() && (await sameFile(path, recordPath(dirname(path), record.name)))) {
    throw new UsageError(
      `session "${name}" and session "${record.name}" are the same file here (this file system ignores case); use "${record.name}" or a name that differs in more than case`,
    );
  }
  return new DamagedRecord(name, path, `a record whose "name" (${JSON.stringify(record.name.slice(0, 64))}) is not its file's`);
}

/**
 * Whether two names lead to one file (a file system that ignores case). Only a name that is not
 * there says no: any other failure is thrown, never taken for "another file" (which would call the
 * record damaged and advise removing it).
 */
async function sameFile(one: string, other: string): Promise<boolean> {
  try {
    const [a, b] = await Promise.all([lstat(one), lstat(other)]);
    return a.dev === b.dev && a.ino === b.ino;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

const isOptionalString = (value: unknown): boolean => value === undefined || typeof value === 'string';

function isParentLink(value: unknown): value is ParentLink {
  return (
    isPlainObject(value) &&
    typeof value.session_id === 'string' &&
    typeof value.name === 'string' &&
    typeof value.turn_id === 'string' &&
    (value.parent === undefined || isParentLink(value.parent))
  );
}

/**
 * SessionRecordSchema's verdict (record-schema.ts) without loading zod: every question on a session
 * reads its record. test/sessions/record-check.test.ts proves the two agree.
 */
export function isSessionRecord(value: unknown): value is SessionRecord {
  return (
    isPlainObject(value) &&
    typeof value.name === 'string' &&
    typeof value.id === 'string' &&
    value.id.length >= 1 &&
    typeof value.title === 'string' &&
    Number.isSafeInteger(value.turns) &&
    (value.turns as number) >= 0 &&
    typeof value.created_at === 'string' &&
    typeof value.last_used_at === 'string' &&
    (value.last_model === null || typeof value.last_model === 'string') &&
    (value.parent === undefined || isParentLink(value.parent)) &&
    isOptionalString(value.last_turn_id) &&
    isOptionalString(value.renamed_from)
  );
}

export function encodeRecord(record: SessionRecord): string {
  return `${JSON.stringify(record, null, 2)}\n`;
}

export const TITLE_LENGTH = 60;

export { indexPath, recordPath } from './names.js';

export function titleFrom(prompt: string): string {
  const line = prompt.replace(/\s+/g, ' ').trim();
  const chars = Array.from(line);
  return chars.length <= TITLE_LENGTH ? line : chars.slice(0, TITLE_LENGTH - 1).join('') + '…';
}

/**
 * The session's record, a DamagedRecord when its file cannot be used, or null when there is none.
 * A damaged file is an answer rather than an error here, so it can be listed and removed. `anyName`
 * takes a record whatever it calls itself (a scan of every file, for the history it protects).
 */
export async function inspectSession(dir: string, name: string, anyName = false): Promise<SessionRecord | DamagedRecord | null> {
  const path = recordPath(dir, name);
  let text: string;
  try {
    text = readDataText(path);
  } catch (error) {
    if (isMissing(error)) return null;
    if (errnoOf(error) === 'ENOTDIR') await refuseNonFolder(dir, error);
    // A link, a folder or a file of another user's refused says its own fix; a file that cannot be read needs one.
    const fix = error instanceof SymlinkRefusedError || error instanceof NotRegularFileError || error instanceof UntrustedFileError ? '' : '; check the file and its permissions (the data home is ARGO_HOME or --home)';
    throw new RuntimeError(`cannot read session "${name}": ${error instanceof Error ? error.message : String(error)}${fix}`, { cause: error });
  }
  return await decodeRecord(text, name, path, anyName);
}

/** The session's record or null when there is none; a damaged record is an error naming the file and field. */
export async function readSession(dir: string, name: string): Promise<SessionRecord | null> {
  const found = await inspectSession(dir, name);
  if (found === null || !isDamaged(found)) return found;
  throw new RuntimeError(`session file ${found.path} is ${found.problem}; fix it or remove it with "${commandWithNames('argo sessions rm', name)}"`);
}

/** Most recently used first, as instants (the text carries the writer's UTC offset), then by name. */
export function byLastUsed(a: SessionRecord, b: SessionRecord): number {
  const lastUsed = (record: SessionRecord): number => Date.parse(record.last_used_at) || 0;
  return lastUsed(b) - lastUsed(a) || byCodeUnits(a.name, b.name);
}

/**
 * Sessions found as a command showing turns needs them, reading as few records as it can: by name
 * (one file), and a current name by id starting from the name a turn was logged under (its record
 * read, its id compared). Only an id that is not where its name says (a session renamed or removed
 * since) reads every record, once: years of sessions are thousands of files.
 */
export class SessionLookup {
  private readonly names = new Map<string, string | null>();
  private readonly removedNames = new Map<string, string>();
  private every: Promise<SessionRecord[]> | null = null;
  private removals: Promise<Map<string, string>> | null = null;
  /** The folder as it was when `every` was read (its mtime): a change since means a record came, went or moved. */
  private readAt: Promise<string> | null = null;

  constructor(readonly dir: string) {}

  /** The readable record of that name, or null (none, or damaged: listings leave those out too). */
  async byName(name: string): Promise<SessionRecord | null> {
    // A name only an earlier version took (.notes) still names its record.
    if (!isSessionName(name) && !isEarlierSessionName(name)) return null;
    const found = await inspectSession(this.dir, name).catch(() => null);
    return found === null || isDamaged(found) ? null : found;
  }

  /** Every readable record, read once. */
  all(): Promise<SessionRecord[]> {
    if (this.every === null) {
      // Stamped before reading: a change made while reading is seen as one after it.
      this.readAt = folderStamp(this.dir);
      this.every = this.readAt.then(() => scanSessions(this.dir, { earlierNames: true })).then(({ records }) => records);
    }
    return this.every;
  }

  /**
   * As learn, for a reader that runs on while sessions change (`argo logs -f`): a name learned
   * before is checked against its record (one file), and an id no record had is looked for again
   * once the folder has changed, so a session created, renamed or removed since is named as it is now.
   */
  async relearn(id: string, loggedName: string): Promise<void> {
    const known = this.names.get(id);
    // A session seen first now (one made since the records were read) is found by its name: one file,
    // whatever the folder's time says (a record made in the same tick as the last read leaves it still).
    if (known === undefined || known === null) {
      const byName = await this.byName(loggedName);
      if (byName?.id === id) {
        this.names.set(id, byName.name);
        this.removedNames.delete(id);
        return;
      }
    }
    if (known !== undefined) {
      if (known !== null ? (await this.byName(known))?.id === id : !(await this.changed())) return;
      this.names.delete(id);
      this.removedNames.delete(id);
    }
    // A name that is another's now is read again even when the folder's time did not move (a coarse clock).
    if (typeof known === 'string' || (await this.changed())) {
      this.every = null;
      this.removals = null;
      this.readAt = null;
    }
    await this.learn(id, loggedName);
  }

  /** Whether the folder changed since every record was read (false when they were not). */
  private async changed(): Promise<boolean> {
    if (this.readAt === null) return false;
    return (await this.readAt) !== (await folderStamp(this.dir));
  }

  /** Finds the current name of session `id`, whose turn was logged as `loggedName`; then nameOf knows it. */
  async learn(id: string, loggedName: string): Promise<void> {
    if (this.names.has(id)) return;
    const byName = this.every === null ? await this.byName(loggedName) : null;
    if (byName?.id === id) {
      this.names.set(id, byName.name);
      return;
    }
    const records = await this.all();
    const record = records.find((candidate) => candidate.id === id);
    this.names.set(id, record?.name ?? null);
    if (record === undefined) {
      // Removed: the name it had last, as its removal noted it, or as a fork's link to it names it.
      const last = (await this.removed()).get(id) ?? linkedName(records, id);
      if (last !== undefined) this.removedNames.set(id, last);
    }
  }

  /** The current name learned for `id`; undefined when no record has it (removed) or it was not learned. */
  nameOf(id: string): string | undefined {
    return this.names.get(id) ?? undefined;
  }

  /**
   * A turn's session as a reader names it to a program (search_history, export): its name now, or
   * null with a note once removed, never the logged name another session may have taken since.
   */
  async namedNow(id: string, loggedName: string): Promise<{ session: string } | { session: null; session_note: string }> {
    await this.learn(id, loggedName);
    const session = this.nameOf(id);
    return session !== undefined ? { session } : { session: null, session_note: 'the session this turn was in has been removed' };
  }

  /** The last name of the removed session `id` when learned and known; undefined otherwise (then its turns' name is all there is). */
  removedName(id: string): string | undefined {
    return this.removedNames.get(id);
  }

  /** The last names of removed sessions, as their removals noted them, read once. */
  removed(): Promise<Map<string, string>> {
    this.removals ??= removedNames(this.dir);
    return this.removals;
  }

  /** The record as `argo sessions` shows it (shownRecord), its parent found by id from the name it has in the link. */
  async shown(record: SessionRecord): Promise<ShownRecord> {
    const link = record.parent;
    if (!link) return record;
    await this.learn(link.session_id, link.name);
    const name = this.nameOf(link.session_id);
    return { ...record, parent: name !== undefined ? { ...link, name } : { ...link, removed: true } };
  }
}

/** What changes when a file in the folder is created, removed or renamed (a record saved is renamed into place). */
async function folderStamp(dir: string): Promise<string> {
  const found = await lstat(dir, { bigint: true }).catch(() => null);
  return found === null ? 'none' : `${found.ino}:${found.mtimeNs}`;
}

/** The name forks' links give the session `id` (links follow a rename, so it is the last one it had). */
export function linkedName(records: readonly SessionRecord[], id: string): string | undefined {
  for (const record of records) {
    for (let link = record.parent; link !== undefined; link = link.parent) if (link.session_id === id) return link.name;
  }
  return undefined;
}

/** A fork's parent as shown: `removed` once no session has its id (the name may be another's now). */
export interface ShownParent extends ParentLink {
  removed?: true;
}

export type ShownRecord = SessionRecord & { parent?: ShownParent | undefined };

/**
 * The record as `argo sessions` shows it: its parent found by id among `records`, under its current
 * name, or marked removed under the name it had. A session that took the name since is not the parent.
 */
export function shownRecord(record: SessionRecord, records: readonly SessionRecord[]): ShownRecord {
  const link = record.parent;
  if (!link) return record;
  const parent = records.find((other) => other.id === link.session_id);
  return { ...record, parent: parent ? { ...link, name: parent.name } : { ...link, removed: true } };
}

/**
 * A removed session, by the id its turns carry: a turn planned on it is logged under that id alone
 * (recordTurn finds no record to update), so the name, which another session may have now, gains nothing.
 */
export function removedSession(id: string, name: string, at: string): SessionRecord {
  return { name, id, title: '', turns: 0, created_at: at, last_used_at: at, last_model: null };
}

/**
 * The session's record, created on first use under `id`; concurrent creators agree on one id (the
 * winner's, which may not be `id`).
 */
export async function openSession(dir: string, name: string, now: string, id: string = randomUUID()): Promise<SessionRecord> {
  const existing = await readSession(dir, name);
  if (existing) return existing;
  const record: SessionRecord = { name, id, title: '', turns: 0, created_at: now, last_used_at: now, last_model: null };
  // The record appears complete or not at all, and if another process created it first, that one wins.
  if (await createSession(dir, record)) return record;
  const winner = await winnersRecord(dir, name);
  if (!winner) throw new RuntimeError(`session "${name}" vanished while being created; try again`);
  return winner;
}

/**
 * The record another process has just created. Where the file system has no hard links it was
 * created in place (createFileExclusive), so it may still be part-written: read again a few times
 * before calling it damaged and advising its removal.
 */
async function winnersRecord(dir: string, name: string): Promise<SessionRecord | null> {
  for (let attempt = 1; ; attempt++) {
    const found = await inspectSession(dir, name);
    if (!(found instanceof DamagedRecord)) return found;
    if (attempt === WINNER_READS) return readSession(dir, name);
    await new Promise((resolve) => setTimeout(resolve, 10 * attempt));
  }
}

const WINNER_READS = 5;

/** Replaces the record in one rename, so readers never see half a file. */
export async function saveSession(dir: string, record: SessionRecord): Promise<void> {
  const path = recordPath(dir, record.name);
  await writeFileAtomic(path, encodeRecord(record)).catch((error: unknown) => {
    throw saidOfRecord(error, path);
  });
}

/** Writes a new record; false when a session of that name already exists. */
export async function createSession(dir: string, record: SessionRecord): Promise<boolean> {
  const path = recordPath(dir, record.name);
  return createFileExclusive(path, encodeRecord(record)).catch((error: unknown) => {
    throw saidOfRecord(error, path);
  });
}

/**
 * A failed write of the record at `path`, its message naming the record rather than the temporary
 * file written first (".NAME.json.PID-TAG.tmp", a name the user never made and cannot find).
 */
export function saidOfRecord(error: unknown, path: string): unknown {
  if (!(error instanceof Error)) return error;
  const start = `'${join(dirname(path), `.${basename(path)}.`)}`;
  const at = error.message.indexOf(start);
  const end = at === -1 ? -1 : error.message.indexOf("'", at + start.length);
  if (end !== -1 && TEMPORARY_TAIL.test(error.message.slice(at + start.length, end))) {
    error.message = `${error.message.slice(0, at)}'${path}'${error.message.slice(end + 1)}`;
  }
  return error;
}

/** What temporaryPath adds after the file's name: the writer's pid and a random tag. */
const TEMPORARY_TAIL = /^\d+-[0-9a-f]{8}\.tmp$/;

/** Removes the record and its index (either may already be gone; a folder with files in it where the index goes is left). */
export async function deleteSession(dir: string, name: string): Promise<void> {
  try {
    await rm(indexPath(dir, name), { force: true });
  } catch (error) {
    // rm without recursive refuses a folder: an empty one goes, one with files in it is the user's.
    if (errnoOf(error) !== 'ERR_FS_EISDIR') throw error;
    await removeEmptyFolder(indexPath(dir, name));
  }
  await rm(recordPath(dir, name), { force: true });
}

/** The record with its newest-turn marker set to `id`, or without one. */
export function withLastTurn(record: SessionRecord, id: string | undefined): SessionRecord {
  const copy: SessionRecord = { ...record };
  if (id === undefined) delete copy.last_turn_id;
  else copy.last_turn_id = id;
  return copy;
}

/**
 * Every readable session record, and the damaged ones apart. `everyFile` also reads records whose
 * file name is not a valid session name (a hidden ".x.json" made before names were checked), for
 * the checks that must see every fork. `earlierNames` adds the records named by an earlier version's
 * rule (".notes"), for finding a fork's parent by id.
 */
export async function scanSessions(dir: string, options: { everyFile?: boolean; earlierNames?: boolean } = {}): Promise<{ records: SessionRecord[]; damaged: DamagedRecord[] }> {
  const everyFile = options.everyFile === true;
  const earlierNames = options.earlierNames === true;
  // A sessions/ that is no folder is said (NotAFolderError), never listed as no sessions.
  const names = await recordNames(dir, everyFile || earlierNames).catch((error: unknown) => {
    if (error instanceof NotAFolderError) throw error;
    return [];
  });
  const records: SessionRecord[] = [];
  const damaged: DamagedRecord[] = [];
  for (const name of names) {
    if (!everyFile && !isSessionName(name) && !(earlierNames && isEarlierSessionName(name))) continue;
    // A file that cannot be read at all (permissions) is left out.
    // Every file's history is just as real, whatever its record calls itself.
    const found = await inspectSession(dir, name, everyFile).catch(() => null);
    if (found === null) continue;
    if (isDamaged(found)) damaged.push(found);
    else records.push(found);
  }
  return { records: withoutRenamedSources(records), damaged };
}

/**
 * The records without the old name of a rename cut short (argo killed mid-rename): the record under
 * the new name, marked `renamed_from` the old one with the same id, is the session (finishRename in
 * manage.ts completes the move), so it is never listed twice.
 */
export function withoutRenamedSources(records: SessionRecord[]): SessionRecord[] {
  const moving = records.filter((record) => record.renamed_from !== undefined);
  if (moving.length === 0) return records;
  return records.filter((record) => !moving.some((target) => target.id === record.id && target.renamed_from === record.name));
}

/**
 * The names of the sessions that have a record file, from one listing of the folder: no
 * record is read (a shell asks at every Tab, and years of sessions are thousands of files). A
 * damaged record's name is among them, as "argo sessions" lists it too.
 */
export async function sessionNames(dir: string): Promise<string[]> {
  return (await recordNames(dir, false)).filter((name) => isSessionName(name));
}

/** Throws NotAFolderError when `dir` is there but no folder (a file, a link to nothing); returns when it is simply missing. */
async function refuseNonFolder(dir: string, cause: unknown): Promise<void> {
  const trouble = await folderTrouble(dir);
  if (trouble !== null) throw new NotAFolderError(dir, trouble, { cause });
}

/**
 * The names of the record files (`NAME.json`, regular files) in `dir`, in the order of the files'
 * names; `dot`: hidden ones too. None when the folder is missing. One readdir: no glob library.
 */
async function recordNames(dir: string, dot: boolean): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (!isMissing(error) && errnoOf(error) !== 'ENOTDIR') throw error;
    await refuseNonFolder(dir, error);
    return [];
  }
  const files = entries.flatMap((entry) => (entry.isFile() && entry.name.endsWith('.json') && (dot || !entry.name.startsWith('.')) ? [entry.name] : []));
  return files.sort(byCodeUnits).map((file) => file.slice(0, -'.json'.length));
}

/** Every readable session record; damaged ones are left out (scanSessions lists them). */
export async function listSessions(dir: string): Promise<SessionRecord[]> {
  return (await scanSessions(dir)).records;
}
