import { basename } from 'node:path';
import { RuntimeError } from '../errors.js';
import { canWrite, errnoOf, openDataFile } from '../log/fs.js';
import { classifyEntry, rulesFingerprint, typedPart } from '../replay/classify.js';
import type { ReplayPolicy } from '../replay/policy.js';
import type { HistoryTurn, ReplaySpec, TurnText, TurnWords } from '../replay/types.js';
import { indexPath, listSessions, readSession, saveSession, withLastTurn } from './store.js';
import type { ParentLink, SessionRecord } from './store.js';
import { indexLine, parseIndexLine, readIndex, readIndexTail, writeIndexIfChanged } from './turn-index.js';
import type { IndexFolder, IndexLine } from './turn-index.js';
import { parseEntry } from '../log/entry.js';
import type { LogEntry } from '../log/entry.js';
import type { RawLine } from '../log/lines.js';
import type { Needle } from '../log/needle.js';
import { listLogFiles, requireDaysInReach } from '../log/files.js';
import { PlacedLines } from '../log/placed-lines.js';
import { ScanStats, scanEntries } from '../log/scan.js';
import type { DataPaths } from '../log/writer.js';

type ClassifyRules = ReplayPolicy['classify'];

/** Which of a session's indexed turns to read. */
export type TurnPick = { kind: 'all'; okOnly?: boolean } | { kind: 'last'; count: number; okOnly: boolean };

/** The ok turns a replay spec asks for, oldest first, with their words read. */
export async function loadHistory(paths: DataPaths, session: SessionRecord, spec: ReplaySpec): Promise<({ id: string } & TurnText)[]> {
  if (spec.kind === 'none') return [];
  const entries = await loadTurns(paths, session, replayPick(spec));
  return entries.map((entry) => ({ id: entry.id, prompt: entry.user_prompt, response: entry.model_response }));
}

/**
 * The ok turns a replay spec asks for, as the session's index describes them (ids, and types cached
 * under the same classification rules), with a reader for their words. Every read checks that the
 * line is the turn the index names; `read` answers null when it is not (the index is stale): then
 * open the source again with `rebuild` set.
 */
export interface ReplaySource {
  turns: HistoryTurn[];
  read(ids: readonly string[]): Map<string, TurnWords> | null;
  close(): void;
  /** The unreadable log lines a rebuild of the index skipped opening it, for the reader's notice. */
  skipped: ScanStats;
}

export async function openReplaySource(
  paths: DataPaths,
  session: SessionRecord,
  spec: ReplaySpec,
  classify: ClassifyRules,
  rebuild: boolean,
  options: Pick<RebuildOptions, 'save'> = {},
): Promise<ReplaySource> {
  const skipped = new ScanStats();
  if (spec.kind === 'none') return { turns: [], read: () => new Map(), close: () => undefined, skipped };
  const rules = rulesFingerprint(classify);
  const pick = replayPick(spec);
  const picked = rebuild ? null : await readPicked(paths.sessions, session, pick);
  const read = picked !== null && startsWithOwnTurn(paths.logs, session, picked) ? picked : null;
  // A line whose types are not cached under the rules in force (a reader's rebuild had none to hand,
  // config's replay.classify changed, or an earlier version classified otherwise) is rebuilt with
  // them once, so its type is cached again rather than the turn classified anew at every replay.
  // Where no index can be saved (a read-only data home) a rebuild would be repeated at every replay:
  // there the turns replay reaches are classified anew instead. A read that may write nothing
  // (--explain) rebuilds in memory wherever the turn it shows would rebuild: both plan from one history.
  const stale = read?.chosen.some((line) => line.rules !== rules) === true;
  const known = stale && (await canWrite(paths.sessions)) ? null : read;
  const { chosen, inherited } = known ?? choose(session, await rebuildIndex(paths, session, { classify, stats: skipped, ...options }), pick, true);
  const reader = new TurnReader(paths.logs, session, inherited);
  return {
    skipped,
    turns: chosen.map((line) => (line.rules === rules ? { id: line.id, entry_type: line.type } : { id: line.id })),
    read: (ids) => {
      // A few ids a round, looked up in one pass, newest first (where the budget walk reads): no map
      // of every turn held for them. The newest line of an id wins, as it would in such a map.
      const wanted = new Set(ids);
      const texts = new Map<string, TurnWords>();
      for (let i = chosen.length - 1; i >= 0 && texts.size < wanted.size; i--) {
        const line = chosen[i];
        if (line === undefined || !wanted.has(line.id) || texts.has(line.id)) continue;
        const entry = reader.entry(line);
        if (!entry) return null;
        texts.set(line.id, { prompt: entry.user_prompt, response: entry.model_response, typedChars: entry.typed_chars });
      }
      return texts.size === wanted.size ? texts : null;
    },
    close: () => reader.close(),
  };
}

/**
 * Whether the oldest picked line is a turn of the session's (or one it inherits). Replay reads only
 * the words it needs and takes the other turns' types from the index, so a leftover index of an
 * earlier session of the same name, whose turns come first, would pass them as this one's: one
 * line read tells.
 */
function startsWithOwnTurn(logsDir: string, session: SessionRecord, { chosen, inherited }: Chosen): boolean {
  const [first] = chosen;
  if (first === undefined) return true;
  const reader = new TurnReader(logsDir, session, inherited);
  try {
    return reader.entry(first) !== null;
  } finally {
    reader.close();
  }
}

function replayPick(spec: Exclude<ReplaySpec, { kind: 'none' }>): TurnPick {
  return spec.kind === 'last' ? { kind: 'last', count: spec.count, okOnly: true } : { kind: 'all', okOnly: true };
}

/** Every turn of the session (or the newest `last`), with a fork's inherited turns first. */
export async function loadSessionEntries(paths: DataPaths, session: SessionRecord, last?: number, stats?: ScanStats): Promise<LogEntry[]> {
  return loadTurns(paths, session, last === undefined ? { kind: 'all' } : { kind: 'last', count: last, okOnly: false }, stats);
}

/**
 * Reads the picked turns through the index. The index is only a hint: it is rebuilt from the log
 * when it is missing, damaged, lacks the session's newest turn, or any line it points at is not
 * the turn it names. Cost: the lines read, whatever the size of the log.
 */
export async function loadTurns(paths: DataPaths, session: SessionRecord, pick: TurnPick, stats?: ScanStats): Promise<LogEntry[]> {
  return (await loadIndexed(paths, session, pick, stats)).entries;
}

/**
 * Like loadTurns, with the index lines that were verified against the log. A rebuild counts the
 * unreadable lines it skipped in `stats`, for the caller's notice.
 */
export async function loadIndexed(paths: DataPaths, session: SessionRecord, pick: TurnPick, stats?: ScanStats): Promise<{ entries: LogEntry[]; lines: IndexLine[] }> {
  let entries: LogEntry[] = [];
  const { chosen } = await readVerified(paths, session, pick, stats, () => {
    entries = [];
    return (entry) => entries.push(entry);
  });
  return { entries, lines: chosen };
}

/** The picked index lines, each checked against the log (the index rebuilt if stale); no turn is held. */
export async function verifiedLines(paths: DataPaths, session: SessionRecord, pick: TurnPick, stats?: ScanStats): Promise<IndexLine[]> {
  return (await readVerified(paths, session, pick, stats, () => () => undefined)).chosen;
}

/**
 * A session's picked turns, counted, to be handed on one at a time: what `sessions show` prints.
 * Turns whose lines total at most HOLD_BYTES are held from the first read; a longer history (years
 * of a session) is read twice, once to check and count it, once to hand each turn on, so it is
 * never held whole.
 */
export interface SessionTurns {
  count: number;
  /** How many are a fork's inherited turns (another session's lines). */
  inherited: number;
  /**
   * Hands each turn on, oldest first, until `visit` answers false; true when every turn was handed
   * on. Throws when the log changed since the turns were counted.
   */
  each(visit: (entry: LogEntry) => Promise<boolean>): Promise<boolean>;
}

/** The most a session's picked lines may total to be held at once (bytes of the log). */
export const HOLD_BYTES = 16 << 20;

export async function openSessionTurns(paths: DataPaths, session: SessionRecord, pick: TurnPick, stats?: ScanStats, holdBytes = HOLD_BYTES): Promise<SessionTurns> {
  // An object, so the narrowing of a `let` does not hide what the visitor sets.
  const read: { held: LogEntry[] | null; bytes: number; inherited: number } = { held: [], bytes: 0, inherited: 0 };
  const checked = await readVerified(paths, session, pick, stats, () => {
    Object.assign(read, { held: [], bytes: 0, inherited: 0 });
    return (entry, length) => {
      if (entry.session_id !== session.id) read.inherited++;
      read.bytes += length;
      if (read.bytes > holdBytes) read.held = null;
      read.held?.push(entry);
    };
  });
  const { held, inherited } = read;
  return {
    count: checked.chosen.length,
    inherited,
    each: async (visit) => {
      if (held !== null) {
        for (const entry of held) if (!(await visit(entry))) return false;
        return true;
      }
      const reader = new TurnReader(paths.logs, session, checked.inherited);
      try {
        for (const line of checked.chosen) {
          const entry = reader.entry(line);
          if (entry === null) throw changedWhileReading(session);
          if (!(await visit(entry))) return false;
        }
        return true;
      } finally {
        reader.close();
      }
    },
  };
}

function changedWhileReading(session: SessionRecord): RuntimeError {
  return new RuntimeError(`the log changed while reading session "${session.name}"; try again`);
}

/**
 * Reads the picked turns through the index, each handed to the visitor `start` makes for the
 * attempt (an attempt that finds a stale line is dropped whole). The index is only a hint: missing,
 * damaged or stale (a line is not the turn it names), it is rebuilt once.
 */
async function readVerified(
  paths: DataPaths,
  session: SessionRecord,
  pick: TurnPick,
  stats: ScanStats | undefined,
  start: () => (entry: LogEntry, length: number) => void,
): Promise<Chosen> {
  const read = ({ chosen, inherited }: Chosen): boolean => {
    const visit = start();
    const reader = new TurnReader(paths.logs, session, inherited);
    try {
      for (const line of chosen) {
        const entry = reader.entry(line);
        if (entry === null) return false;
        visit(entry, line.length);
      }
      return true;
    } finally {
      reader.close();
    }
  };
  const known = await readPicked(paths.sessions, session, pick);
  if (known && read(known)) return known;
  const rebuilt = choose(session, await rebuildIndex(paths, session, stats ? { stats } : {}), pick, true);
  if (read(rebuilt)) return rebuilt;
  throw changedWhileReading(session);
}

interface Chosen {
  chosen: IndexLine[];
  inherited: Inherited;
}

/** The lines a fork may read that belong to another session: by line id, or by the ancestor's session id. */
interface Inherited {
  ids: ReadonlySet<string>;
  sessions: ReadonlySet<string>;
}

async function readPicked(dir: string, session: SessionRecord, pick: TurnPick): Promise<Chosen | null> {
  let lines: IndexLine[] | null;
  if (pick.kind === 'all') {
    lines = await readIndex(dir, session.name);
  } else {
    let seenLast = session.last_turn_id === undefined;
    let wanted = 0;
    lines = await readIndexTail(dir, session.name, (newestFirst) => {
      const line = newestFirst.at(-1);
      if (line === undefined) return false;
      if (line.id === session.last_turn_id) seenLast = true;
      if (!pick.okOnly || line.status === 'ok') wanted++;
      return seenLast && wanted >= pick.count;
    });
  }
  if (!lines) return null;
  // Writers append the index line before saving the record: an index without the record's newest turn is stale.
  if (session.last_turn_id !== undefined && !lines.some((line) => line.id === session.last_turn_id)) return null;
  // A turn listed twice (an earlier version's rebuild of a log with a line appended back) is one turn: rebuilt so.
  if (turnCount(lines) !== lines.length) return null;
  // A line after the record's newest turn is a turn being logged now, or one listed twice whose first
  // listing lies before the tail read: only the whole index tells.
  if (pick.kind !== 'all' && session.last_turn_id !== undefined && lines.at(-1)?.id !== session.last_turn_id) {
    const whole = (await readIndex(dir, session.name)) ?? [];
    if (whole.length === 0 || turnCount(whole) !== whole.length) return null;
  }
  return choose(session, lines, pick);
}

/**
 * `rebuilt`: the lines come from the log just now, every one of the lineage. Otherwise the lines up
 * to the fork point are inherited; when the fork point is not among them (its log line is damaged,
 * and the rebuild kept the turns before it), any line of an ancestor the record links to is.
 */
function choose(session: SessionRecord, lines: readonly IndexLine[], pick: TurnPick, rebuilt = false): Chosen {
  const forkPoint = session.parent ? lines.findIndex((line) => line.id === session.parent?.turn_id) : -1;
  const inherited: Inherited = {
    ids: new Set((rebuilt ? lines : lines.slice(0, forkPoint + 1)).map((line) => line.id)),
    sessions: new Set(session.parent && forkPoint === -1 && !rebuilt ? lineageOf(session, []).slice(1).map((level) => level.id) : []),
  };
  if (pick.kind === 'all') return { chosen: pick.okOnly ? lines.filter((line) => line.status === 'ok') : [...lines], inherited };
  const chosen: IndexLine[] = [];
  for (let i = lines.length - 1; i >= 0 && chosen.length < pick.count; i--) {
    const line = lines[i];
    if (line && (!pick.okOnly || line.status === 'ok')) chosen.push(line);
  }
  return { chosen: chosen.reverse(), inherited };
}

/** Reads single turns at the places the index names, checking each is the turn it should be. */
class TurnReader {
  private readonly lines: PlacedLines;

  constructor(
    logsDir: string,
    private readonly session: SessionRecord,
    private readonly inherited: Inherited,
  ) {
    this.lines = new PlacedLines(logsDir);
  }

  /** The turn at the place the index names, or null when that line is not the turn (a stale index). */
  entry(line: IndexLine): LogEntry | null {
    const text = this.lines.line(line.file, line.offset, line.length);
    const entry = text === null ? null : parseEntry(text);
    if (entry?.id !== line.id || entry.status !== line.status) return null;
    // A leftover index of an older session of the same name must not leak its turns in.
    const own = entry.session_id === this.session.id;
    if (!own && !this.inherited.ids.has(line.id) && !this.inherited.sessions.has(entry.session_id)) return null;
    return entry;
  }

  close(): void {
    this.lines.close();
  }
}

/** How a rebuild classifies, counts what it skips, and what it may write. */
export interface RebuildOptions {
  /** The rules to cache each line's type under; without, the type the turn was logged with. */
  classify?: ClassifyRules;
  /** Counts the unreadable lines skipped, for the caller's notice. */
  stats?: ScanStats;
  folder?: IndexFolder;
  /** false: nothing is written, the history is only returned (--explain writes nothing). */
  save?: boolean;
  /** A rebuild the user asked for (argo sessions reindex): what the log holds now is the history, even none. */
  asked?: boolean;
}

/**
 * Recreates the session's index from the log itself: its own turns, and for a fork the history of
 * its parent (recursively) up to the fork point. One pass over the log for the whole lineage. The
 * turns the index being replaced lists keep its order (composeHistory): the same history, however
 * stale the index was, whether or not the rebuild is saved.
 *
 * The index and the record's counters are saved only when every line of the lineage could be read.
 * A line that cannot is not a removed turn: an index without it would pass for the whole history,
 * and a record counting without it would agree, so the turn would stay out once the line is
 * repaired. Left as they were, the next reader rebuilds again and sees the repair. The same holds
 * for a log with no files (an unmounted disk's empty folder), unless the rebuild is `asked` for (a
 * reindex); a logs/ that is no folder at all (a file, a link to nothing) is refused (NotAFolderError),
 * and so is a day linked to no file (its turns out of reach, counted in `stats`); asked, that is refused.
 */
export async function rebuildIndex(paths: DataPaths, session: SessionRecord, options: RebuildOptions = {}): Promise<IndexLine[]> {
  const { classify, stats = new ScanStats(), folder = 'keep', save = true, asked = false } = options;
  const tagging = classify && rulesTagging(classify);
  const lineage = lineageOf(session, session.parent ? await listSessions(paths.sessions) : []);
  const own = new Map<string, IndexLine[]>(lineage.map((level) => [level.id, []]));
  const damaged = new DamagedForkPoints(lineage);
  let unreadable = 0;
  const onUnreadable = (file: string, line: RawLine): void => {
    unreadable++;
    damaged.see(file, line);
  };
  const missedDays: string[] = [];
  const files = await listLogFiles(paths.logs, {
    missDay: (path) => {
      missedDays.push(path);
      stats.missDay(path);
    },
  });
  const missedDay = missedDays.length > 0;
  const order = await indexedOrder(paths.sessions, session.name);
  for await (const { entry, file, line } of scanEntries(files, stats, { needle: lineageNeedle(lineage), onUnreadable })) {
    own.get(entry.session_id)?.push(indexLineOf(entry, file, line, tagging));
  }
  const history = composeHistory(lineage, (id) => own.get(id) ?? [], damaged.places, order);
  if (missedDay && asked && save) await requireDaysInReach(paths.logs, 'nothing reindexed');
  // A log with no file at all is as likely a logs/ out of reach (an empty mount point, a folder
  // moved) as a history removed by hand: only a reindex asked for empties an index then. A day
  // linked to no file is out of reach too: saved without its turns, the index would hide them.
  if (!save || unreadable > 0 || missedDay || (files.length === 0 && !asked)) return history;
  try {
    await writeIndexIfChanged(paths.sessions, session.name, history, folder);
    await syncCounters(paths.sessions, session, history, turnCount(own.get(session.id) ?? []));
  } catch (error) {
    // The index is a cache: on a data home that cannot be written (read-only, full) the history is
    // still right, only rebuilt again next time. Anything else is a real fault.
    if (!CACHE_WRITE_FAILURES.has(errnoOf(error) ?? '')) throw error;
  }
  return history;
}

const CACHE_WRITE_FAILURES = new Set(['EROFS', 'EACCES', 'EPERM', 'ENOSPC', 'EDQUOT']);

/**
 * The index line for a turn found in the log; with `classify`, its type under those rules (and
 * their fingerprint), as the writer records it; without, the type stored in the line.
 */
export function indexLineOf(entry: LogEntry, file: string, line: RawLine, tagging?: RulesTagging): IndexLine {
  const type = tagging ? classifyEntry(typedPart(entry.user_prompt, entry.typed_chars), tagging.rules) : entry.entry_type;
  return indexLine(entry.id, file, line.offset, line.length, entry.status, type, tagging?.fingerprint);
}

/** Classification rules and their fingerprint, for index lines that cache a type. */
export interface RulesTagging {
  rules: ClassifyRules;
  fingerprint: string;
}

export function rulesTagging(rules: ClassifyRules): RulesTagging {
  return { rules, fingerprint: rulesFingerprint(rules) };
}

/**
 * What a line of the lineage holds, as a JSON string: a session's id, or a fork point's (a damaged
 * fork point may have lost its session id but kept its own). The log lines a rebuild reads, and the
 * unreadable ones it counts as the lineage's.
 */
export function lineageNeedle(lineage: readonly Lineage[]): Extract<Needle, { kind: 'json-string' }> {
  const forkPoints = lineage.flatMap((level) => (level.forkedAt === undefined ? [] : [level.forkedAt]));
  return { kind: 'json-string', values: [...lineage.map((level) => level.id), ...forkPoints] };
}

export interface Lineage {
  id: string;
  /** The parent turn this level was forked at; undefined for a session that is not a fork. */
  forkedAt?: string;
}

/**
 * The session, its parent, its parent's parent…, newest first. Links stored in the record win;
 * records fill in older forks that did not store their whole lineage. A removed ancestor is still
 * followed by id: its log lines outlive its record.
 */
export function lineageOf(session: SessionRecord, records: readonly SessionRecord[]): Lineage[] {
  const lineage: Lineage[] = [];
  const seen = new Set<string>();
  let id = session.id;
  let link: ParentLink | undefined = session.parent;
  while (!seen.has(id)) {
    seen.add(id);
    lineage.push(link ? { id, forkedAt: link.turn_id } : { id });
    if (!link) break;
    const parentId: string = link.session_id;
    id = parentId;
    link = link.parent ?? records.find((record) => record.id === parentId)?.parent;
  }
  return lineage;
}

/** Where a line is in the log: its file's name (they sort by day, and in the order written: appendDay) and its byte offset there. */
export interface LogPlace {
  file: string;
  offset: number;
}

/** Whether a line comes before a place in the log (the order the log was written in). */
export function isBefore(line: LogPlace, place: LogPlace): boolean {
  return line.file < place.file || (line.file === place.file && line.offset < place.offset);
}

/**
 * From the oldest ancestor down, each fork keeps its parent's history up to the fork point, then its
 * own lines. A fork point whose line is unreadable but found in `damaged` (its place in the log)
 * keeps the lines before that place; one found nowhere keeps nothing (no guess that could add turns
 * the fork never had).
 *
 * One turn per id: a line met again (a backup appended back to the log) is the same turn, kept at its
 * first line, as the index written when the turn was logged points there. `order` is the index being
 * replaced (indexedOrder): the turns it lists keep its order, which is the order they were appended
 * in, where the log's own order may not be (a file named for a day ahead by a clock set wrong).
 */
export function composeHistory(
  lineage: readonly Lineage[],
  ownLines: (id: string) => readonly IndexLine[],
  damaged: ReadonlyMap<string, LogPlace> = new Map(),
  order: ReadonlyMap<string, number> = new Map(),
): IndexLine[] {
  let history: IndexLine[] = [];
  for (const level of [...lineage].reverse()) {
    if (level.forkedAt !== undefined) {
      const cut = history.findIndex((line) => line.id === level.forkedAt);
      const place = damaged.get(level.forkedAt);
      history = cut !== -1 ? history.slice(0, cut + 1) : place ? history.filter((line) => isBefore(line, place)) : [];
    }
    const seen = new Set(history.map((line) => line.id));
    const own = ownLines(level.id).filter((line) => {
      if (seen.has(line.id)) return false;
      seen.add(line.id);
      return true;
    });
    history = [...history, ...inIndexOrder(own, order)];
  }
  return history;
}

/**
 * `lines`, in the log's order, put in the order of `order` (an id's place in an index): a listed turn
 * takes its place there, and one not listed (logged since, or its index line never written) follows
 * the listed turn before it in the log, or leads when none is.
 */
export function inIndexOrder(lines: readonly IndexLine[], order: ReadonlyMap<string, number>): IndexLine[] {
  if (order.size === 0) return [...lines];
  const leading: IndexLine[] = [];
  const listed: { line: IndexLine; place: number; following: IndexLine[] }[] = [];
  for (const line of lines) {
    const place = order.get(line.id);
    if (place !== undefined) listed.push({ line, place, following: [] });
    else (listed.at(-1)?.following ?? leading).push(line);
  }
  listed.sort((a, b) => a.place - b.place);
  return [...leading, ...listed.flatMap(({ line, following }) => [line, ...following])];
}

/** How many turns `lines` hold: one per id (composeHistory). */
export function turnCount(lines: readonly IndexLine[]): number {
  return new Set(lines.map((line) => line.id)).size;
}

/**
 * Each turn's place in the session's index as it is now, for a rebuild to keep (composeHistory).
 * A hint like the index itself: a line that cannot be read (one cut short, garbage) is passed over,
 * and an index that cannot be read (missing, a folder, a link, which is never followed) gives none.
 */
export async function indexedOrder(dir: string, name: string): Promise<Map<string, number>> {
  const order = new Map<string, number>();
  let bytes: Buffer | null = null;
  try {
    const handle = await openDataFile(indexPath(dir, name));
    if (handle !== null) {
      try {
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
    }
  } catch {
    // Unreadable (a link, no permission): the log's order, as for no index.
  }
  if (bytes === null) return order;
  for (let start = 0; start < bytes.length; ) {
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline;
    const line = end > start ? parseIndexLine(bytes.toString('utf8', start, end)) : null;
    if (line !== null && !order.has(line.id)) order.set(line.id, order.size);
    start = end + 1;
  }
  return order;
}

const NEWLINE = 10;

/**
 * The places of the lineage's fork points whose log lines cannot be read, told by the turn id a
 * damaged line still holds ("id":"…", as the log writes it). The first such line wins, as the first
 * readable line of an id does in composeHistory.
 */
export class DamagedForkPoints {
  readonly places = new Map<string, LogPlace>();
  private readonly needles: [string, string][];

  constructor(lineage: readonly Lineage[]) {
    this.needles = lineage.flatMap((level) => (level.forkedAt === undefined ? [] : [[level.forkedAt, `"id":${JSON.stringify(level.forkedAt)}`]]));
  }

  see(file: string, line: Pick<RawLine, 'text' | 'offset'>): void {
    for (const [id, needle] of this.needles) {
      if (!this.places.has(id) && line.text.includes(needle)) this.places.set(id, { file: basename(file), offset: line.offset });
    }
  }
}

/** Keeps the record's newest-turn marker and own-turn count in line with a rebuilt index. */
async function syncCounters(dir: string, session: SessionRecord, history: readonly IndexLine[], ownTurns: number): Promise<void> {
  const record = await readSession(dir, session.name);
  if (record?.id !== session.id) return;
  const lastId = history[history.length - 1]?.id;
  const markerOk = record.last_turn_id === undefined ? lastId === undefined : history.some((line) => line.id === record.last_turn_id);
  if (markerOk && record.turns === ownTurns) return;
  await saveSession(dir, withLastTurn({ ...record, turns: ownTurns }, lastId));
}
