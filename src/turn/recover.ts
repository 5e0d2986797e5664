// Logging the turns an earlier argo left unfinished (killed, crashed, the machine stopped): the
// journal (log/unfinished.ts) holds each as it stood before its answer. Run once per process by the
// commands that read or write the log, and by argo serve as it starts. An empty or missing journal
// costs one readdir; what logging a turn needs is loaded only when there is one.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Settings } from '../config/settings.js';
import type { LogEntry } from '../log/entry.js';
import { RESCUED_FOLDER, errnoOf, isMissing, removeOrphanedTemporaries } from '../log/fs.js';
import { checkUnfinished, claimUnfinished, dropUnfinished, elsewhereOn, judgedOwner, listUnfinished, ownerState, readJournalName, readUnfinished, thisProcess, unclaimUnfinished, unfinishedDir } from '../log/unfinished.js';
import type { ProcessProbe, TurnOwner, UnfinishedTurn } from '../log/unfinished.js';
import { plural } from '../output/count.js';
import { isSessionName } from '../sessions/names.js';
import { byCodeUnits } from '../text/order.js';

/** What a look at the journal found and did. */
export interface Recovery {
  /** Turns logged now (status interrupted), by id. */
  recovered: string[];
  /** Turns logged now whose answer was whole (an argo that quit at once while it waited to log it), by id. */
  answered: string[];
  /**
   * Turns whose line was in the log already (argo was killed just after writing it): their
   * sessions' indexes rebuilt (the index line or the record's update may not have been written), their files removed.
   */
  alreadyLogged: string[];
  /**
   * Turns the log could not take that were saved to `rescued/` (argo was killed just after saving
   * one, before it could say where): their journal files removed, the saved file named.
   */
  rescued: { id: string; file: string }[];
  /** Turns a live argo on this machine is answering now. */
  inProgress: { id: string; pid: number }[];
  /**
   * Turns of an argo on another machine, which only that machine can judge: left alone. `machine`
   * is its id when its host name is this machine's too (the only way to tell them apart).
   */
  elsewhere: { id: string; host: string; machine?: string; container?: string }[];
  /** Files left in place that cannot be read or logged, and why; `folder`: the journal's folder itself cannot be read. */
  problems: { file: string; problem: string; folder?: true }[];
}

export type RecoverySettings = Pick<Settings, 'home' | 'paths' | 'timeouts'>;

/** How owners' pids are asked whether they run (tests say what the system answered). */
export interface RecoverOptions extends ProcessProbe {
  /** This process as an owner (tests play several). */
  me?: TurnOwner;
}

const nothing = (): Recovery => ({ recovered: [], answered: [], alreadyLogged: [], rescued: [], inProgress: [], elsewhere: [], problems: [] });

/** A file whose owner is gone: to be claimed and logged. */
interface Orphan {
  name: string;
  turn: UnfinishedTurn;
}

/**
 * Logs every turn of the journal whose owner is gone, oldest first, and removes its file. Never
 * throws: what cannot be read or logged is left in place and reported.
 */
export async function recoverUnfinished(settings: RecoverySettings, options: RecoverOptions = {}): Promise<Recovery> {
  const found = nothing();
  const { home } = settings;
  try {
    const names = await listUnfinished(home);
    if (names.length > 0) await recoverNamed(settings, names, options, found);
  } catch (error) {
    found.problems.push({ file: unfinishedDir(home), problem: `cannot be read (${messageOf(error)})`, folder: true });
  }
  return found;
}

async function recoverNamed(settings: RecoverySettings, names: string[], options: RecoverOptions, found: Recovery): Promise<void> {
  const { home } = settings;
  const me = options.me ?? thisProcess();
  // A kill while a draft was being written leaves its temporary file.
  await removeOrphanedTemporaries(unfinishedDir(home)).catch(() => 0);
  const orphans: Orphan[] = [];
  for (const name of names.sort()) {
    const journal = readJournalName(name);
    if (journal === null) continue;
    const file = join(unfinishedDir(home), name);
    const read = readUnfinished(home, name);
    if (read === null) continue;
    if ('problem' in read) {
      found.problems.push({ file, problem: read.problem });
      continue;
    }
    const { owner } = read;
    const judged = judgedOwner(journal, owner);
    const state = ownerState(judged, me, options);
    if (state === 'elsewhere') {
      found.elsewhere.push({ id: journal.id, host: owner.host, ...elsewhereOn(judged, me) });
      continue;
    }
    if (state === 'alive') {
      if (journal.claim === null) found.inProgress.push({ id: journal.id, pid: owner.pid });
      continue;
    }
    // Only a turn to be logged is checked whole (the schema loads here).
    const checked = await checkUnfinished(read.value);
    const problem = 'problem' in checked ? checked.problem : turnProblem(checked.turn, journal.id);
    if (problem !== null) found.problems.push({ file, problem });
    else if ('turn' in checked) orphans.push({ name, turn: checked.turn });
  }
  // In the order they were asked, so a session's turns stay in order in the log: by instant, as
  // timestamps carry their writers' UTC offsets, then by id so the order is the same for every recoverer.
  orphans.sort((a, b) => byAskedAt(a.turn.entry, b.turn.entry));
  for (const orphan of orphans) await logOrphan(settings, orphan, me, found);
}

/**
 * Oldest first by instant, one instant by id; a timestamp no date can be read from goes last, by its text.
 * A total order whatever the files hold, so every recoverer logs them in one order.
 */
export function byAskedAt(a: { timestamp: string; id: string }, b: { timestamp: string; id: string }): number {
  const instant = (timestamp: string): number => {
    const time = Date.parse(timestamp);
    return Number.isNaN(time) ? Number.POSITIVE_INFINITY : time;
  };
  const [first, second] = [instant(a.timestamp), instant(b.timestamp)];
  if (first !== second) return first < second ? -1 : 1;
  return (first === Number.POSITIVE_INFINITY ? byCodeUnits(a.timestamp, b.timestamp) : 0) || byCodeUnits(a.id, b.id);
}

/** Why a well-formed journal file still cannot be logged, or null. */
function turnProblem(turn: UnfinishedTurn, id: string): string | null {
  if (turn.entry.id !== id) return `it holds turn ${JSON.stringify(turn.entry.id)}, not the ${id} its name says`;
  if (!isSessionName(turn.session.name)) return `its session name ${JSON.stringify(turn.session.name)} is not a valid session name`;
  return null;
}

/** Claims the file, then logs its turn through the session (index and counters too) unless the log has it already. */
async function logOrphan(settings: RecoverySettings, { name, turn }: Orphan, me: TurnOwner, found: Recovery): Promise<void> {
  const { home, paths } = settings;
  const id = turn.entry.id;
  const file = join(unfinishedDir(home), name);
  let claimed: string | null;
  try {
    claimed = await claimUnfinished(home, name, id, me);
  } catch (error) {
    found.problems.push({ file, problem: `cannot be claimed to log it (${messageOf(error)})` });
    return;
  }
  // Another argo took it first: it logs the turn.
  if (claimed === null) return;
  let logged: LogEntry | null = null;
  try {
    // Loaded inside: a load that fails (too many open files) gives the turn back, and is no unreadable folder.
    const [{ recordTurn, settleLoggedTurn, SessionUpdateError }, { openSession, removedSession }] = await Promise.all([import('../sessions/record-turn.js'), import('../sessions/store.js')]);
    logged = await inLog(paths.logs, turn.day, id);
    if (logged !== null) {
      // Killed after its log line, perhaps before its index line or record: the session is told now.
      try {
        await settleLoggedTurn(paths, { id: logged.session_id, name: turn.session.name }, { lockWaitMs: settings.timeouts.lockWaitMs });
      } catch (error) {
        // Its index is marked stale, so its next reader rebuilds it: the file has done its work.
        if (!(error instanceof SessionUpdateError)) throw error;
      }
      // A record update cut short leaves its temporary file.
      await removeOrphanedTemporaries(paths.sessions).catch(() => 0);
      await dropUnfinished(home, claimed);
      found.alreadyLogged.push(id);
      return;
    }
    const saved = await inRescued(home, id);
    if (saved !== null) {
      await dropUnfinished(home, claimed);
      found.rescued.push({ id, file: saved });
      return;
    }
    const { entry, session: planned } = turn;
    // A session planned by id is found by id (renamed or removed meanwhile, as a turn's own write does); a new one is made now.
    const session = planned.id === null ? await openSession(paths.sessions, planned.name, entry.timestamp) : removedSession(planned.id, planned.name, entry.timestamp);
    try {
      await recordTurn(paths, session, { ...entry, session_id: session.id }, turn.day, turn.rules, { lockWaitMs: settings.timeouts.lockWaitMs });
    } catch (error) {
      // In the log, only the session's bookkeeping failed (rebuilt on next use): logging it again would duplicate it.
      if (!(error instanceof SessionUpdateError)) throw error;
    }
    (entry.status === 'interrupted' ? found.recovered : found.answered).push(id);
    await dropUnfinished(home, claimed);
  } catch (error) {
    // Given back under its own name: a later argo tries again.
    await unclaimUnfinished(home, claimed, id).catch(() => undefined);
    const problem = logged === null ? `cannot be logged (${messageOf(error)})` : `is in the log, but its session cannot be found to rebuild its index (${messageOf(error)})`;
    found.problems.push({ file, problem });
  }
}

/**
 * The log's line of turn `id`, which started on `day`, or null: in any file it could have been
 * appended to, its day's or a later one's (appendDay). Only lines holding the id are decoded.
 */
async function inLog(logsDir: string, day: string, id: string): Promise<LogEntry | null> {
  const { lastFilingDay, listLogFiles, logFileDate } = await import('../log/files.js');
  const last = lastFilingDay(day);
  const files = (await listLogFiles(logsDir)).filter((file) => logFileDate(file) >= day && logFileDate(file) <= last);
  return (await lineHolding(files, id))?.entry ?? null;
}

/**
 * The first of `files` with a line of turn `id`, and that line, or null. Only lines holding the id
 * are decoded; a file removed meanwhile (`logs prune`, a rescued file added back) holds nothing.
 */
async function lineHolding(files: readonly string[], id: string): Promise<{ file: string; entry: LogEntry } | null> {
  const { ScanStats, scanEntries } = await import('../log/scan.js');
  for (const file of files) {
    try {
      for await (const { entry } of scanEntries([file], new ScanStats(), { needle: { kind: 'json-string', values: [id] } })) {
        if (entry.id === id) return { file, entry };
      }
    } catch (error) {
      if (!isMissing(error)) throw error;
    }
  }
  return null;
}

/**
 * The file of `home`/rescued holding turn `id`, or null: a turn the log could not take is saved
 * there whole, and logging its draft as well would give the user two lines of one id to add back.
 * (A rescue to the system's temporary folder, when the data home took nothing, is not looked for.)
 */
async function inRescued(home: string, id: string): Promise<string | null> {
  const files = await rescuedFiles(home);
  return files.length === 0 ? null : ((await lineHolding(files, id))?.file ?? null);
}

/** Where turns the log could not take are saved, in the data home `home`. */
export function rescuedDir(home: string): string {
  return join(home, RESCUED_FOLDER);
}

/**
 * Whether readdir's failure on rescued/ means nothing of this user's can be there: no folder, or
 * one this user may not read (another user's, made by root), which no rescue of theirs could write.
 */
export function holdsNoRescue(error: unknown): boolean {
  return isMissing(error) || NO_RESCUED_FOLDER.has(errnoOf(error) ?? '');
}

const NO_RESCUED_FOLDER = new Set(['ENOTDIR', 'EACCES', 'EPERM']);

/** The files of `home`/rescued, each holding turns the log could not take, in name order (oldest first). */
export async function rescuedFiles(home: string): Promise<string[]> {
  const dir = rescuedDir(home);
  try {
    return (await readdir(dir))
      .filter((name) => name.endsWith('.ndjson'))
      .sort()
      .map((name) => join(dir, name));
  } catch (error) {
    // Nothing of ours was ever saved there (a rescue would have gone to the system's temporary folder).
    if (holdsNoRescue(error)) return [];
    throw error;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const looked = new Set<string>();

/**
 * recoverUnfinished, once per data home in this process (a chat looks as it starts, not at every
 * turn); null when this process has looked already.
 */
export function recoverOnce(settings: RecoverySettings): Promise<Recovery> | null {
  if (looked.has(settings.home)) return null;
  looked.add(settings.home);
  return recoverUnfinished(settings);
}

/** What to do about a journal folder that cannot be read. */
export const FOLDER_FIX = 'check its permissions (the data home is ARGO_HOME or --home)';

/** The most files argo doctor names one line each; its --json names every one. */
export const LISTED_PROBLEMS = 20;

/** The stderr lines (without "argo: ") for what recovery did that the user should hear of: none when nothing. */
export function recoveryLines(recovery: Recovery): string[] {
  const lines: string[] = [];
  const logged = recovery.recovered.length;
  if (logged > 0) lines.push(`logged ${plural(logged, 'turn')} an earlier argo left unfinished (killed or crashed): argo logs --status interrupted`);
  const answered = recovery.answered;
  if (answered.length > 0) lines.push(`logged ${plural(answered.length, 'turn')} an earlier argo had answered but quit before it could log (${answered.join(', ')}): in argo logs as answered`);
  for (const { id, file } of recovery.rescued) lines.push(`turn ${id}, which an earlier argo could not log before it ended, is saved in ${file}: add it back as docs/troubleshooting.md says`);
  // A folder that cannot be read (a data home of another user's) holds no number of turns to count.
  const folder = recovery.problems.find((one) => one.folder === true);
  if (folder !== undefined) lines.push(`${folder.file} ${folder.problem}, so no turn an earlier argo left unfinished there can be logged; ${FOLDER_FIX}`);
  const files = recovery.problems.filter((one) => one.folder !== true);
  const stuck = files.length;
  if (stuck > 0) {
    const [first] = files;
    const lister = stuck > LISTED_PROBLEMS ? 'argo doctor --json' : 'argo doctor';
    const which = first === undefined ? '' : ` (${first.file}: ${first.problem}${stuck > 1 ? `; ${lister} lists them all` : ''})`;
    lines.push(`${plural(stuck, 'unfinished turn')} could not be logged${which}`);
  }
  return lines;
}
