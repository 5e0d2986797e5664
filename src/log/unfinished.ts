// The journal of unfinished turns: <home>/unfinished/<turn-id>.json, one per turn being answered,
// written as the answer starts and removed once the turn is logged. A file left behind is a turn
// whose argo ended first (killed, crashed, the machine stopped); src/turn/recover.ts logs it. No zod
// here: a question that logs a turn writes the journal, and the schema loads only to read one back.
import { lstatSync, mkdirSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { rename, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import type { LogEntry } from './entry.js';
import { wellFormedJson } from './entry.js';
import { jsonFaultPlace } from '../text/json-syntax.js';
import { PRIVATE_DIR, SymlinkRefusedError, createFileExclusive, ensureHomeFolder, removeFile, errnoOf, writeFileAtomic, writeFileAtomicNow, isMissing, procStatFields, processAlive, readDataText, readRegularText, readSmallText } from './fs.js';
import type { SignalSender } from './fs.js';

export const UNFINISHED_FOLDER = 'unfinished';

/** What a recovered turn's `error` says: its answer was never written anywhere. */
export const UNFINISHED_ERROR = 'argo ended before this turn was logged (it was killed or crashed, the machine stopped, or neither the log nor rescued/ could take it), so its answer was lost';

/** What a queued turn's draft says (src/turn/turn.ts queuedDraft), logged as it is if its argo ends before its turn comes. */
export const QUEUED_ERROR = 'argo serve ended while this turn waited in its session\'s queue (it was killed or crashed, or the machine stopped), so the model was never asked';

/** The process a journal file belongs to: its pid means something only on its machine, in its boot. */
export interface TurnOwner {
  pid: number;
  host: string;
  /** Linux's boot id; null where the system has none. */
  boot: string | null;
  /** The machine's id (/etc/machine-id): two machines may share a host name. Null where there is none; absent in files of earlier versions. */
  machine?: string | null;
  /** When the process started, in clock ticks after boot (Linux's /proc/<pid>/stat): a pid reused by another process is told apart. Null where there is no /proc; absent in files of earlier versions. */
  start?: number | null;
  /**
   * Its pid namespace (Linux's /proc/self/ns/pid, `pid:[4026531836]`): containers on one kernel share
   * its host name (--network host) and boot, and may each run argo as pid 1. Null where there is none
   * to read; absent in files of earlier versions.
   */
  pidns?: string | null;
}

/** One journal file: the turn's log line as it stood before the answer, and where it goes. */
export interface UnfinishedTurn {
  owner: TurnOwner;
  /** The daily log file's date (yyyy-MM-dd) the turn is written to. */
  day: string;
  /** The session as planned: no id when the turn was to create it. */
  session: { id: string | null; name: string };
  /** The classification rules' fingerprint `entry.entry_type` was made under (the session's index keeps it). */
  rules?: string;
  entry: LogEntry;
}

// Turn ids are argo's own (12 characters of [A-Za-z0-9_-]); anything else would not name a file safely.
const TURN_ID = /^[A-Za-z0-9_-]{1,64}$/;
const JOURNAL_NAME = /^([A-Za-z0-9_-]{1,64})\.json$/;
const CLAIMED_NAME = /^([A-Za-z0-9_-]{1,64})\.json\.claimed-(\d{1,10})-([0-9a-f-]{1,64}|unknown)(?:-t(\d{1,20}))?(?:-n(\d{1,20}))?$/;
const BOOT_ID = /^[0-9a-f-]{1,64}$/;
const MACHINE_ID = /^[0-9a-f]{32}$/;
const CLOCK_TICKS = /^\d{1,20}$/;
const PID_NAMESPACE = /^pid:\[(\d{1,20})\]$/;

export function unfinishedDir(home: string): string {
  return join(home, UNFINISHED_FOLDER);
}

/** Where turn `id`'s journal file is. */
export function unfinishedPath(home: string, id: string): string {
  return join(unfinishedDir(home), `${id}.json`);
}

/** This machine's boot id (changes at every boot), or null where there is none to read. */
export function bootId(read: (path: string) => string = readRegularText): string | null {
  try {
    const id = read('/proc/sys/kernel/random/boot_id').trim();
    return BOOT_ID.test(id) ? id : null;
  } catch {
    return null;
  }
}

/**
 * This machine's id, or null where there is none to read (not Linux, or a container without one).
 * systemd's file first, then D-Bus's older one; an empty or "uninitialized" file is no id.
 */
export function machineId(read: (path: string) => string = readSmallText): string | null {
  for (const path of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      const id = read(path).trim();
      if (MACHINE_ID.test(id)) return id;
    } catch {
      // Not there: the next, or none.
    }
  }
  return null;
}

/** When process `pid` started, in clock ticks after boot: field 22 of /proc/<pid>/stat. Null where there is no /proc, or no such process. */
export function processStartTime(pid: number, read: (path: string) => string = readSmallText): number | null {
  // The fields start at field 3 (the state): field 22 is the 20th.
  const ticks = procStatFields(pid, read)?.[19];
  if (ticks === undefined || !CLOCK_TICKS.test(ticks)) return null;
  const start = Number(ticks);
  return Number.isSafeInteger(start) ? start : null;
}

/** This process's pid namespace, or null where there is none to read. */
export function pidNamespace(read: (path: string) => string = (path) => readlinkSync(path)): string | null {
  try {
    const namespace = read('/proc/self/ns/pid');
    return PID_NAMESPACE.test(namespace) ? namespace : null;
  } catch {
    return null;
  }
}

let self: TurnOwner | undefined;

/** This process as an owner (read once). */
export function thisProcess(): TurnOwner {
  self ??= { pid: process.pid, host: hostname(), boot: bootId(), machine: machineId(), start: processStartTime(process.pid), pidns: pidNamespace() };
  return self;
}

/** Whether an owner may still write its turn: it runs (`alive`), it cannot (`dead`), or it is another machine's to judge (`elsewhere`). */
export type OwnerState = 'alive' | 'dead' | 'elsewhere';

/** How a process is asked about on this machine (tests say what the system answered). */
export interface ProcessProbe {
  kill?: SignalSender;
  /** The process's state letter from /proc (`Z`: a zombie), null where it does not tell. */
  state?: (pid: number) => string | null;
  startTime?: (pid: number) => number | null;
}

/**
 * Where the process that wrote (or claimed) a journal file stands, seen from `here`. Only a process
 * on its own machine can tell: a pid names nothing across machines, and two machines may share a
 * host name (ubuntu, raspberrypi), so their machine ids must agree too where both have one. A
 * different boot means every process of the old one is gone, whatever runs under that pid now; in
 * this boot the pid is asked (signal 0: no such process is dead, one of another user's is alive),
 * and where start times are known, a process started at another time has only reused the pid.
 */
export function ownerState(owner: TurnOwner, here: TurnOwner, probe: ProcessProbe = {}): OwnerState {
  if (owner.host !== here.host) return 'elsewhere';
  if (typeof owner.machine === 'string' && typeof here.machine === 'string' && owner.machine !== here.machine) return 'elsewhere';
  if (owner.boot !== null && here.boot !== null && owner.boot !== here.boot) return 'dead';
  // Another container on this kernel: its pids, and their start times, are its own.
  if (typeof owner.pidns === 'string' && typeof here.pidns === 'string' && owner.pidns !== here.pidns) return 'elsewhere';
  if (owner.pid !== here.pid && !processAlive(owner.pid, probe.kill, probe.state)) return 'dead';
  const start = owner.start ?? null;
  if (start === null) return 'alive';
  // Its pid is this process's, or asked of /proc: null when it cannot be read (another user's process
  // under hidepid), and then alive, as the signal said.
  const now = owner.pid === here.pid ? (here.start ?? null) : (probe.startTime ?? processStartTime)(owner.pid);
  return now === null || now === start ? 'alive' : 'dead';
}

/**
 * Who a journal file is judged by: its owner, or once claimed its claimer (a recoverer that died
 * part-way leaves it to the next), on the owner's machine.
 */
export function judgedOwner(journal: JournalName, owner: TurnOwner): TurnOwner {
  return journal.claim === null ? owner : { ...journal.claim, host: owner.host, machine: owner.machine ?? null };
}

/**
 * What tells another machine's argo from this one's when the host name is the same: its machine id,
 * or, on this very machine, its pid namespace (another container).
 */
export function elsewhereOn(owner: TurnOwner, me: TurnOwner): { machine?: string; container?: string } {
  if (owner.host !== me.host) return {};
  const sameMachine = typeof owner.machine !== 'string' || typeof me.machine !== 'string' || owner.machine === me.machine;
  if (sameMachine && typeof owner.pidns === 'string' && owner.pidns !== me.pidns) return { container: owner.pidns };
  return typeof owner.machine === 'string' ? { machine: owner.machine } : {};
}

/** Where an argo another machine or container must judge runs, as argo says it: `on HOST`, with its machine id or container when the host name is this one's. */
export function whereElsewhere(place: { host: string; machine?: string; container?: string }): string {
  if (place.container !== undefined) return `in another container on this machine (${place.container})`;
  return `on ${hostNamed(place)}`;
}

/** A host as argo names it: a machine sharing this one's host name is told by its id. */
export function hostNamed(place: { host: string; machine?: string }): string {
  return place.machine === undefined ? place.host : `${place.host} (machine id ${place.machine.slice(0, 8)}…)`;
}

/**
 * Writes the turn's journal file: created whole or not at all, 0600, in a private folder that is no
 * link. Throws when it cannot (the caller decides what that costs the turn).
 */
export async function writeUnfinished(home: string, turn: UnfinishedTurn): Promise<void> {
  const id = turn.entry.id;
  if (!TURN_ID.test(id)) throw new RuntimeError(`turn id ${JSON.stringify(id)} cannot name a file in ${unfinishedDir(home)}`);
  await ensureHomeFolder(home, UNFINISHED_FOLDER);
  const path = unfinishedPath(home, id);
  if (!(await createFileExclusive(path, `${wellFormedJson(turn)}\n`, { flush: false }))) throw new RuntimeError(`${path} already exists: another turn has the id ${id}`);
}

/**
 * Puts a turn's draft in place of the one its queue kept (written whole to a temporary file, then
 * renamed over it): at every moment one of the two is there. Throws when it cannot.
 */
export async function replaceUnfinished(home: string, turn: UnfinishedTurn): Promise<void> {
  const id = turn.entry.id;
  if (!TURN_ID.test(id)) throw new RuntimeError(`turn id ${JSON.stringify(id)} cannot name a file in ${unfinishedDir(home)}`);
  await ensureHomeFolder(home, UNFINISHED_FOLDER);
  await writeFileAtomic(unfinishedPath(home, id), `${wellFormedJson(turn)}\n`, { flush: false });
}

/**
 * writeUnfinished and replaceUnfinished for a process about to quit (a second Ctrl-C): synchronous,
 * no flush. `replacing`: this process's draft of the turn is there, or being written, and this one
 * takes its place; otherwise the file is created only if nothing is there. The journal's folder is
 * made if missing and must be a private folder of this user's, no link, as ensureHomeFolder makes
 * it. Throws when it cannot; false when a file of another turn's is there.
 */
export function writeUnfinishedNow(home: string, turn: UnfinishedTurn, replacing: boolean): boolean {
  const id = turn.entry.id;
  if (!TURN_ID.test(id)) throw new RuntimeError(`turn id ${JSON.stringify(id)} cannot name a file in ${unfinishedDir(home)}`);
  const dir = unfinishedDir(home);
  let stats = lstatSync(dir, { throwIfNoEntry: false });
  if (stats === undefined) {
    mkdirSync(dir, { mode: PRIVATE_DIR });
    stats = lstatSync(dir);
  }
  if (stats.isSymbolicLink()) throw new SymlinkRefusedError(dir);
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid) || (stats.mode & 0o077) !== 0) throw new RuntimeError(`${dir} is not a private folder of this user's`);
  return writeFileAtomicNow(unfinishedPath(home, id), `${wellFormedJson(turn)}\n`, { exclusive: !replacing });
}

/** Removes the turn's journal file (gone already is fine). */
export async function removeUnfinished(home: string, id: string): Promise<void> {
  await removeFile(unfinishedPath(home, id));
}

/** The names in the journal folder: one readdir, none when it is missing. */
export async function listUnfinished(home: string): Promise<string[]> {
  try {
    return await readdir(unfinishedDir(home));
  } catch (error) {
    if (isMissing(error) || errnoOf(error) === 'ENOTDIR') return [];
    throw error;
  }
}

/** A journal file's name read: the turn's id, and who claimed it to log it (null: nobody yet). */
export interface JournalName {
  id: string;
  /** The claimer's pid, boot, start time and pid namespace (null in names of earlier versions, or without /proc). */
  claim: { pid: number; boot: string | null; start: number | null; pidns: string | null } | null;
}

/** What a name in the folder is; null for anything else (a temporary file being written, a stranger). */
export function readJournalName(name: string): JournalName | null {
  const journal = JOURNAL_NAME.exec(name);
  if (journal?.[1] !== undefined) return { id: journal[1], claim: null };
  const claimed = CLAIMED_NAME.exec(name);
  if (claimed?.[1] === undefined) return null;
  const start = claimed[4] === undefined ? null : Number(claimed[4]);
  return {
    id: claimed[1],
    claim: {
      pid: Number(claimed[2]),
      boot: claimed[3] === 'unknown' || claimed[3] === undefined ? null : claimed[3],
      start: start !== null && Number.isSafeInteger(start) ? start : null,
      pidns: claimed[5] === undefined ? null : `pid:[${claimed[5]}]`,
    },
  };
}

function claimedName(id: string, me: TurnOwner): string {
  const start = me.start ?? null;
  // Only the namespace's number: a file name holds no brackets.
  const namespace = typeof me.pidns === 'string' ? PID_NAMESPACE.exec(me.pidns)?.[1] : undefined;
  return `${id}.json.claimed-${me.pid}-${me.boot ?? 'unknown'}${start === null ? '' : `-t${start}`}${namespace === undefined ? '' : `-n${namespace}`}`;
}

/**
 * Takes the file `name` for this process by renaming it to a name only this process uses: of two
 * recoverers, one rename succeeds and the other finds the file gone. Returns the new name, or null
 * when another process took it first.
 */
export async function claimUnfinished(home: string, name: string, id: string, me: TurnOwner = thisProcess()): Promise<string | null> {
  const dir = unfinishedDir(home);
  const claimed = claimedName(id, me);
  try {
    await rename(join(dir, name), join(dir, claimed));
    return claimed;
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/** Gives a claimed file its first name back (logging it failed: a later argo tries again). */
export async function unclaimUnfinished(home: string, claimed: string, id: string): Promise<void> {
  const dir = unfinishedDir(home);
  await rename(join(dir, claimed), join(dir, `${id}.json`));
}

/** Removes a file of the folder by its name (claimed, or one whose turn is in the log already). */
export async function dropUnfinished(home: string, name: string): Promise<void> {
  await removeFile(join(unfinishedDir(home), name));
}

/** A journal file read back: its owner (enough to judge it) and the rest unchecked, or why it cannot be used. */
export type ReadUnfinished = { owner: TurnOwner; value: unknown } | { problem: string };

function isOwner(value: unknown): value is TurnOwner {
  if (typeof value !== 'object' || value === null) return false;
  const { pid, host, boot, machine, start, pidns } = value as Record<string, unknown>;
  return (
    Number.isSafeInteger(pid) &&
    (pid as number) > 0 &&
    typeof host === 'string' &&
    host !== '' &&
    (boot === null || typeof boot === 'string') &&
    // Earlier versions wrote neither.
    (machine === undefined || machine === null || typeof machine === 'string') &&
    (start === undefined || start === null || (Number.isSafeInteger(start) && (start as number) >= 0)) &&
    (pidns === undefined || pidns === null || typeof pidns === 'string')
  );
}

/**
 * Reads a journal file, never through a link, and checks only its owner: a file whose argo still
 * runs is left alone without loading the schema. Null when it is gone (another argo logged it
 * meanwhile).
 */
export function readUnfinished(home: string, name: string): ReadUnfinished | null {
  const path = join(unfinishedDir(home), name);
  let text: string;
  let value: unknown;
  try {
    text = readDataText(path);
  } catch (error) {
    if (isMissing(error)) return null;
    if (error instanceof SymlinkRefusedError) return { problem: 'a symbolic link, which Argo does not follow in its data home' };
    return { problem: `unreadable (${error instanceof Error ? error.message : String(error)})` };
  }
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Where, not V8's message: it quotes the text, the turn's own words (a secret in a prompt) with it.
    if (error instanceof SyntaxError) return { problem: `not JSON${jsonFaultPlace(text)}` };
    return { problem: `unreadable (${error instanceof Error ? error.message : String(error)})` };
  }
  const owner = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).owner : undefined;
  return isOwner(owner) ? { owner, value } : { problem: 'not a journal file (field "owner": no pid, host and boot)' };
}

/** The whole file checked (the schema loads here): the turn to log, or what is wrong with it. */
export async function checkUnfinished(value: unknown): Promise<{ turn: UnfinishedTurn } | { problem: string }> {
  const { unfinishedProblem } = await import('./unfinished-schema.js');
  const problem = unfinishedProblem(value);
  return problem === null ? { turn: value as UnfinishedTurn } : { problem };
}
