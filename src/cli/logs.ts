import type { Command } from 'commander';
import type { Settings } from '../config/settings.js';
import { RuntimeError, UsageError } from '../errors.js';
import { parseEntry } from '../log/entry.js';
import type { LogEntry } from '../log/entry.js';
import type { DataPaths } from '../log/writer.js';
import { listLogFiles, unwritableLogNames } from '../log/files.js';
import { ScanStats, TurnPlaces, checkLogFile, describeBadLine, isBlank, scanEntries } from '../log/scan.js';
import type { RenderOptions } from '../query/format.js';
import {
  EMPTY_QUERY,
  REASON_FILTERS,
  STATUS_CHOICES,
  STRENGTH_FILTERS,
  TYPE_CHOICES,
  firstDayFrom,
  grepMatcher,
  isUnfiltered,
  matchesQuery,
  parseChoices,
  parseWhen,
  splitList,
} from '../query/query.js';
import type { Query } from '../query/query.js';
import { ByteSink } from '../query/byte-sink.js';
import { copyAllTurns, countableFromLatin1, searchTurns, turnsToCount } from '../query/search.js';
import { Sink } from '../output/sink.js';
import { isSessionName } from '../sessions/names.js';
import { SessionLookup } from '../sessions/store.js';
import type { SessionRecord } from '../sessions/store.js';
import type { OutputFlags } from './output-flags.js';
import { collect } from './parse.js';
import { plural } from '../output/count.js';
import { recoverUnfinishedTurns } from './recovery.js';
import { SINCE_HELP, UNTIL_HELP, colorsFor, jsonFor, untrustedFor, rejectStrayWords, confirm, formatBytes, inheritProgramSettings, parseCount, settingsOf, widthOf } from './common.js';
import type { Io } from './io.js';
import { STOP_LINES, STOP_SIGNALS } from './outcome.js';
import type { Outcome, ReportOutcome, Stop, StopSignal } from './outcome.js';

interface LogsFlags extends OutputFlags {
  session?: string[];
  since?: string;
  until?: string;
  type?: string[];
  strength?: string[];
  reason?: string[];
  status?: string[];
  tool?: string[];
  model?: string[];
  grep?: string;
  limit?: number;
  all?: boolean;
  truncated?: boolean;
  json?: boolean;
  full?: boolean;
  stats?: boolean;
  path?: boolean;
  follow?: boolean;
}

/** Turns a table or --full shows when neither --limit nor --all is given: a screenful, not the whole history. */
export const DEFAULT_SHOWN = 20;
/** Lines printed before following when --limit is not given (as tail -f). */
const FOLLOW_BACKLOG = 10;
const FOLLOW_POLL_MS = 150;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function registerLogs(program: Command, io: Io, setOutcome: ReportOutcome): void {
  const logs = program
    .command('logs')
    .description('query the log of turns: filter, show, count, follow (see docs/history.md)')
    .option('-s, --session <names>', 'only these sessions, by name or id (comma-separated or repeated)', collect)
    .option('--since <when>', SINCE_HELP)
    .option('--until <when>', UNTIL_HELP)
    .option('-t, --type <types>', `entry types: ${TYPE_CHOICES.join(', ')}`, collect)
    .option('--strength <levels>', `replay strength: ${STRENGTH_FILTERS.join(', ')}`, collect)
    .option('--reason <reasons>', `replay reason: ${REASON_FILTERS.join(', ')}`, collect)
    .option('--status <statuses>', `turn status: ${STATUS_CHOICES.join(', ')}`, collect)
    .option('--tool <names>', 'agent turns that called these tools (comma-separated or repeated)', collect)
    .option('-m, --model <models>', 'models (a name without a tag matches every tag)', collect)
    .option('-q, --grep <text>', 'case-insensitive text in the prompt or the response')
    .option('-n, --limit <n>', `only the newest N matching turns (the table and --full show the newest ${DEFAULT_SHOWN} unless told)`, parseCount)
    .option('--all', 'every matching turn, however many')
    .option('--truncated', 'only turns whose prompt was probably cut to the context window (see docs/troubleshooting.md)')
    .option('--json', 'NDJSON: each matching line exactly as stored')
    .option('--full', 'whole prompts and responses instead of the table')
    .option('--stats', 'counts and rates instead of turns (with --json: one JSON object)')
    .option('--path', 'print the logs directory and exit')
    .option('-f, --follow', `print new turns as they are written (after the newest ${FOLLOW_BACKLOG}, --limit or --all); Ctrl-C stops with exit 0`)
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (flags: LogsFlags, command: Command) => {
      rejectStrayWords(command);
      setOutcome(await showLogs(settingsOf(command), flags, io));
    });

  logs
    .command('check')
    .description('list every unreadable log line, and every turn logged twice, with file and line number; exit 1 if there is any')
    .option('--json', 'NDJSON: one {file, line, reason} object per problem')
    .option('--home <dir>', 'data directory')
    .action(async (flags: { json?: boolean } & OutputFlags, command: Command) => setOutcome(await checkLogs(settingsOf(command), flags, io)));

  logs
    .command('prune')
    .description('delete the daily log files every turn of which is older than the cutoff, whatever time zone wrote it')
    .requiredOption('--older-than <when>', 'cutoff: a duration ago (30d, 12w) or a date (2025-01-01)')
    .option('--dry-run', 'list the files that would be deleted')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--home <dir>', 'data directory')
    .action(async (flags: { olderThan: string; dryRun?: boolean; yes?: boolean }, command: Command) =>
      setOutcome(await pruneLogs(settingsOf(command), flags, io)),
    );

  logs
    .command('rm')
    .description("delete every log line of a session (by name or id), with the session's record and index")
    .requiredOption('-s, --session <name>', 'the session, by name or id')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--home <dir>', 'data directory')
    .action(async (flags: { session: string; yes?: boolean }, command: Command) => setOutcome(await removeLogs(settingsOf(command), flags, io)));

  inheritProgramSettings(program, logs);
}

async function showLogs(settings: Settings, flags: LogsFlags, io: Io): Promise<Outcome> {
  if (flags.path) {
    io.stdout.write(`${settings.paths.logs}\n`);
    return 'ok';
  }
  if (flags.json && flags.full) throw new UsageError('--json prints lines as stored and --full prints them for reading: choose one');
  if (flags.stats && flags.follow) throw new UsageError('--stats counts what is there; it cannot --follow');
  if (flags.stats && flags.full) throw new UsageError('--stats prints counts, not turns: leave out --full');
  if (flags.all && flags.limit !== undefined) throw new UsageError('--all and --limit disagree: choose one');
  await recoverUnfinishedTurns(settings, io);

  // Records are read as names must be resolved or shown: a file per name, not one per session.
  const sessions = new SessionLookup(settings.paths.sessions);
  // Followed, a session that does not exist yet is waited for: a script may start the tail before the job.
  const notYet: WaitedName[] = [];
  const query = await buildQuery(flags, io.now(), sessions, settings.paths, flags.follow === true ? notYet : undefined);
  // A turn written from now on started after an --until in the past: the follow would wait forever.
  if (flags.follow && query.until !== null && query.until < io.now().getTime()) {
    throw new UsageError(`--follow waits for new turns and --until ${flags.until} is in the past: nothing new can match; leave out --follow to list the turns up to then`);
  }
  const stats = new ScanStats();
  const sink = new Sink(io.stdout);
  const damaged = new DamagedRecords(sessions);
  const render: RenderOptions = {
    color: colorsFor(io, flags),
    width: widthOf(io),
    // Learned as each turn is printed.
    currentName: (id) => sessions.nameOf(id),
    removedName: (id) => sessions.removedName(id),
    damagedRecord: (id) => damaged.has(id),
    untrusted: untrustedFor(io, flags),
  };
  // What the table, --full and --stats need to draw text is loaded only for them: --json prints lines as stored.
  const view = flags.json ? null : await import('../query/format.js');
  const json = jsonFor(io, flags);
  // Following, sessions are created, renamed and removed while it runs: each row is named as it is then.
  let following = false;
  const print = async (entry: LogEntry, raw: string): Promise<string> => {
    if (view === null) return `${json(raw)}\n`;
    await (following ? sessions.relearn(entry.session_id, entry.session) : sessions.learn(entry.session_id, entry.session));
    if (sessions.nameOf(entry.session_id) === undefined) await damaged.learn(entry.session_id, entry.session);
    return flags.full ? view.fullBlock(entry, render) : view.tableRow(entry, render);
  };

  // The signal that ended a follow, said last.
  let stopped: Stop | null = null;
  try {
    if (flags.stats) {
      const { StatsAccumulator } = await import('../query/stats.js');
      const totals = new StatsAccumulator();
      // Every matching turn is counted, but only a few of its fields: read for those where the query allows.
      if (flags.limit === undefined && countableFromLatin1(query)) {
        for await (const turn of turnsToCount(settings.paths.logs, query, stats)) totals.add(turn);
      } else {
        for await (const { entry } of searchTurns(settings.paths.logs, query, stats, limitOf(flags.limit))) totals.add(entry);
      }
      const result = totals.result();
      await sink.write(view === null ? `${json(JSON.stringify({ ...result, unreadable: stats.unreadable }))}\n` : view.statsText(result, render));
      return 'ok';
    }
    const table = !flags.json && !flags.full;
    if (table && io.stdout.isTTY && view !== null) await sink.write(view.tableHeader(render));
    if (!flags.follow) {
      // --json is for programs and keeps every line; people reading get the newest screenful.
      const shown = flags.limit ?? (flags.json || flags.all ? undefined : DEFAULT_SHOWN);
      // On a terminal each line is printed through `print`, which escapes what a terminal would obey.
      if (shown === undefined && flags.json && isUnfiltered(query) && io.stdout.isTTY !== true) {
        // Every line as stored: copied as bytes, not parsed and printed again.
        const bytes = new ByteSink(io.stdout);
        try {
          await copyAllTurns(settings.paths.logs, stats, bytes);
        } finally {
          await bytes.flush();
        }
        return 'ok';
      }
      if (shown === flags.limit || shown === undefined) {
        let printed = 0;
        for await (const { entry, line } of searchTurns(settings.paths.logs, query, stats, limitOf(shown))) {
          await sink.write(await print(entry, line.text));
          printed++;
          if (sink.closed) break;
        }
        // -n 0 asked for nothing: no note that nothing was found.
        if (printed === 0 && !flags.json && shown !== 0) io.stderr.write(nothingFound(query));
        return 'ok';
      }
      // One more than shown, to know whether to say there is more.
      const found = [];
      for await (const turn of searchTurns(settings.paths.logs, query, stats, { limit: shown + 1 })) found.push(turn);
      const more = found.length > shown;
      for (const { entry, line } of more ? found.slice(1) : found) {
        await sink.write(await print(entry, line.text));
        if (sink.closed) break;
      }
      if (found.length === 0) io.stderr.write(nothingFound(query));
      if (more) io.stderr.write(`(the newest ${shown} shown; see more with -n 200 or --all, or narrow with --session, --since or -q)\n`);
      return 'ok';
    }
    // Follow: snapshot where each file ends, print the backlog up to there, then everything after.
    const { followLines, followStart } = await import('../query/follow.js');
    const start = await followStart(settings.paths.logs);
    const ends = new Map(start.positions);
    // A session waited for may have been created since the query was built, its first turn already
    // in the backlog: its record, written before any of its turns, gives its id now.
    for (const { name, removed } of notYet) {
      const created = await sessions.byName(name);
      if (created !== null) query.sessionIds = new Set([...(query.sessionIds ?? []), created.id]);
      else if (!removed) io.stderr.write(`no session named "${name}" yet; following, its turns are shown as they are written\n`);
    }
    const backlog = searchTurns(settings.paths.logs, query, stats, { ...(flags.all ? {} : { limit: flags.limit ?? FOLLOW_BACKLOG }), endOf: (file) => ends.get(file) });
    for await (const { entry, line } of backlog) await sink.write(await print(entry, line.text));
    await sink.flush();
    const grep = grepMatcher(query.grep);
    following = true;
    const controller = new AbortController();
    const stop: { by: StopSignal | null } = { by: null };
    const stopListening = io.onInterrupt((signal) => {
      stop.by ??= signal;
      controller.abort();
    });
    try {
      await followLines({
        logsDir: settings.paths.logs,
        start,
        pollMs: FOLLOW_POLL_MS,
        signal: controller.signal,
        stopped: () => sink.closed,
        onLine: async (line, file) => {
          if (isBlank(line)) return;
          const entry = parseEntry(line.text);
          if (entry === null) {
            stats.skip(file, line, await describeBadLine(line));
            return;
          }
          // The first turn of a session waited for gives its id (kept if the session is renamed later).
          if (notYet.some(({ name }) => name === entry.session) && query.sessionIds?.has(entry.session_id) === false) query.sessionIds = new Set([...query.sessionIds, entry.session_id]);
          if (!matchesQuery(entry, query, grep)) return;
          // Read for each new row: rows after a resize of the terminal are sized to its new width.
          render.width = widthOf(io);
          await sink.write(await print(entry, line.text));
        },
        onIdle: () => sink.flush(),
      });
    } finally {
      stopListening();
    }
    // Ctrl-C is how a follow ends, not a failure: exit 0. SIGTERM and SIGHUP end it as they end any command.
    if (stop.by === null || stop.by === 'SIGINT') return 'ok';
    stopped = STOP_SIGNALS[stop.by];
    return stopped;
  } finally {
    await sink.flush();
    const notice = stats.notice();
    if (notice) io.stderr.write(notice);
    if (stopped !== null) io.stderr.write(`argo: ${STOP_LINES[stopped]}\n`);
  }
}

/**
 * Sessions no record has because their record is damaged, not because they were removed: the name
 * their turns are shown under is a damaged record's, and no removal was noted for their id.
 */
class DamagedRecords {
  private readonly known = new Map<string, boolean>();

  constructor(private readonly lookup: SessionLookup) {}

  async learn(id: string, loggedName: string): Promise<void> {
    if (this.known.has(id)) return;
    const { hasDamagedRecord } = await import('../sessions/manage.js');
    const removed = (await this.lookup.removed()).has(id);
    this.known.set(id, !removed && (await hasDamagedRecord(this.lookup.dir, this.lookup.removedName(id) ?? loggedName)));
  }

  has(id: string): boolean {
    return this.known.get(id) === true;
  }
}

function nothingFound(query: Query): string {
  const filtered = Object.entries(query).some(([key, value]) => value !== EMPTY_QUERY[key as keyof Query]);
  return filtered ? 'no turns match these filters\n' : 'no turns logged yet: ask something with argo "…"\n';
}

function limitOf(limit: number | undefined): { limit?: number } {
  return limit === undefined ? {} : { limit };
}

/** A filter's names; one given with no name in it (`-s ''`, `-s ,`) is refused, not read as "all". */
function namesOf(values: readonly string[] | undefined, flag: string): string[] {
  const names = splitList(values ?? []);
  if (values !== undefined && names.length === 0) throw new UsageError(`${flag} needs a name (an empty one would match everything)`);
  return names;
}

/** A `-s` name no session has now, which `--follow` waits for; `removed`: removed sessions' turns in the log have it. */
export interface WaitedName {
  name: string;
  removed: boolean;
}

/**
 * The query of `argo logs` (and `argo export`). Given `notYet`, a session name no session has now
 * is put there rather than refused (when nothing in the log has it either): `--follow` shows the
 * turns of the session that takes it. A session id is never waited for: it matched, or is refused.
 */
export async function buildQuery(flags: LogsFlags, now: Date, lookup: SessionLookup, paths: DataPaths, notYet?: WaitedName[]): Promise<Query> {
  const query: Query = { ...EMPTY_QUERY };
  const sessions = namesOf(flags.session, '--session');
  if (sessions.length > 0) {
    const resolved = await Promise.all(sessions.map((name) => resolveSessionIds(name, lookup, paths, notYet !== undefined)));
    query.sessionIds = new Set(resolved.flatMap(({ ids }) => ids));
    resolved.forEach(({ matched }, index) => {
      const name = sessions[index] ?? '';
      if (matched === 'removed' || matched === 'none') notYet?.push({ name, removed: matched === 'removed' });
    });
  }
  if (flags.since !== undefined) query.since = parseWhen(flags.since, now, 'start', '--since').getTime();
  if (flags.until !== undefined) query.until = parseWhen(flags.until, now, 'end', '--until').getTime();
  if (query.since !== null && query.until !== null && query.since > query.until) {
    throw new UsageError(`--since ${flags.since} is after --until ${flags.until}: nothing can match`);
  }
  if (flags.type) query.types = parseChoices(flags.type, TYPE_CHOICES, '--type');
  if (flags.strength) query.strengths = parseChoices(flags.strength, STRENGTH_FILTERS, '--strength');
  if (flags.reason) query.reasons = parseChoices(flags.reason, REASON_FILTERS, '--reason');
  if (flags.status) query.statuses = parseChoices(flags.status, STATUS_CHOICES, '--status');
  if (flags.truncated) query.truncated = true;
  const models = namesOf(flags.model, '--model');
  if (models.length > 0) query.models = models;
  const tools = namesOf(flags.tool, '--tool');
  if (tools.length > 0) query.tools = new Set(tools);
  if (flags.grep !== undefined) {
    if (flags.grep === '') throw new UsageError('--grep needs some text to look for');
    query.grep = flags.grep;
  }
  return query;
}

/**
 * A session's id from its current name (renamed sessions keep their id), or an id given as is. An
 * id with neither a record nor a logged turn is a typo, refused as an unknown name is; a removed
 * session's id still finds the turns it left in the log, and so does its name while no session has
 * taken it (every removed session that had it, when several did).
 */
async function resolveSessionIds(value: string, lookup: SessionLookup, paths: DataPaths, mayBeNew = false): Promise<{ ids: string[]; matched: 'name' | 'id' | 'removed' | 'none' }> {
  // A name only an earlier version took (.notes) is refused below with the rename that makes it usable.
  const byName = isSessionName(value) ? await lookup.byName(value) : null;
  if (byName) return { ids: [byName.id], matched: 'name' };
  const records = await lookup.all();
  if (UUID.test(value)) {
    const id = value.toLowerCase();
    if (records.some((record) => record.id === id) || (await hasTurns(paths.logs, id))) return { ids: [id], matched: 'id' };
    const { knownSessions } = await import('../sessions/manage.js');
    const ids = records.length > 0 ? '; argo sessions --json shows their ids' : '';
    throw new UsageError(`--session: no session with id ${id} (no record, no log lines); ${await knownSessions(paths.sessions)}${ids}`);
  }
  const { checkSessionNameAt } = await import('../sessions/names.js');
  checkSessionNameAt(paths.sessions, value, '--session');
  const removed = await removedSessionIds(paths.logs, value, records, await lookup.removed());
  // A name nothing has had yet: refused, unless a session may take it while argo logs -f waits.
  if (removed.length > 0 || mayBeNew) return { ids: removed, matched: removed.length > 0 ? 'removed' : 'none' };
  const { knownSessions } = await import('../sessions/manage.js');
  throw new UsageError(`--session: no session named "${value}"; ${await knownSessions(paths.sessions)} (a session id also works)`);
}

/**
 * The ids of removed sessions (no record has them) with turns in the log that had the name `name`:
 * as their last name (noted at removal, or in a fork's link) or on a turn's line, in the order first met.
 */
async function removedSessionIds(logsDir: string, name: string, records: readonly SessionRecord[], lastNames: ReadonlyMap<string, string>): Promise<string[]> {
  const kept = new Set(records.map((record) => record.id));
  const named = new Set([...lastNames].flatMap(([id, last]) => (last === name ? [id] : [])));
  for (const record of records) {
    for (let link = record.parent; link !== undefined; link = link.parent) if (link.name === name) named.add(link.session_id);
  }
  const found = new Set<string>();
  const files = await listLogFiles(logsDir);
  for await (const { entry } of scanEntries(files, new ScanStats(), { needle: { kind: 'json-string', values: [name, ...named] } })) {
    if ((entry.session === name || named.has(entry.session_id)) && !kept.has(entry.session_id)) found.add(entry.session_id);
  }
  return [...found];
}

async function checkLogs(settings: Settings, flags: { json?: boolean } & OutputFlags, io: Io): Promise<Outcome> {
  // Turns an earlier argo left unfinished are logged first, as by every reader: the check counts the log they see.
  await recoverUnfinishedTurns(settings, io);
  const files = await listLogFiles(settings.paths.logs);
  const stats = new ScanStats();
  const sink = new Sink(io.stdout);
  // A reason may quote the damaged line: shown, never obeyed, on a terminal.
  const shown = flags.json === true ? jsonFor(io, flags) : untrustedFor(io, flags);
  let turns = 0;
  const damaged = new Set<string>();
  const ids = new TurnPlaces();
  for (const file of files) {
    const unreadable = stats.unreadable;
    turns += await checkLogFile(file, stats, (problem) => sink.write(shown(flags.json ? `${JSON.stringify(problem)}\n` : `${problem.file}:${problem.line}: ${problem.reason}\n`)), { ids });
    if (stats.unreadable > unreadable) damaged.add(file);
  }
  // A day's name taken by a folder or a link: every turn of that day would fail to be written.
  const blocked = await unwritableLogNames(settings.paths.logs);
  for (const { path, what } of blocked) {
    const reason = `${what}, not a log file: Argo cannot write that day's turns there, nor rewrite it; ${what === 'a symbolic link' ? 'replace the link with the real file' : 'move it away'}`;
    await sink.write(shown(flags.json ? `${JSON.stringify({ file: path, line: null, reason })}\n` : `${path}: ${reason}\n`));
  }
  if (stats.unreadable === 0 && blocked.length === 0 && ids.repeated === 0) {
    if (!flags.json) await sink.write(`ok: ${plural(files.length, 'log file')}, ${plural(turns, 'turn')}, no unreadable lines\n`);
    await sink.flush();
    return 'ok';
  }
  await sink.flush();
  throw new RuntimeError(checkFailure({ unreadable: stats.unreadable, damagedFiles: damaged.size, files: files.length, blockedDays: blocked.length, repeated: ids.repeated }));
}

/** The one line a failing `logs check` ends with, whatever it found: days that cannot be written, repeated turns, unreadable lines. */
export function checkFailure(found: { unreadable: number; damagedFiles: number; files: number; blockedDays: number; repeated?: number }): string {
  const parts = [
    ...(found.blockedDays === 0 ? [] : [`${plural(found.blockedDays, 'day')} of the log cannot be written (listed above)`]),
    ...((found.repeated ?? 0) === 0
      ? []
      : [`${plural(found.repeated ?? 0, 'line repeats a turn', 'lines repeat a turn')} logged earlier (listed above); argo logs shows such a turn twice and --stats counts it twice. Delete the later copy by hand`]),
    ...(found.unreadable === 0
      ? []
      : [`${plural(found.unreadable, 'unreadable line')} in ${found.damagedFiles} of ${plural(found.files, 'log file')}; readers skip them. Fix or delete those lines by hand if you want them gone`]),
  ];
  return parts.join(', and ');
}

async function pruneLogs(settings: Settings, flags: { olderThan: string; dryRun?: boolean; yes?: boolean }, io: Io): Promise<Outcome> {
  const cutoff = parseWhen(flags.olderThan, io.now(), 'start', '--older-than');
  // A file is named for its writer's day, the cutoff is in this zone: the days just before the
  // cutoff's may hold newer turns written further west (argo serve in UTC, the CLI in Tokyo).
  // Before the year 1 (--older-than 1500000d), no file is older: none is pruned.
  const cutoffDay = firstDayFrom(cutoff);
  // As every reader does: a turn an earlier argo left unfinished is logged now, so a file it lands
  // in before the cutoff is pruned with it (and listed by --dry-run), not written again later.
  await recoverUnfinishedTurns(settings, io);
  const { planPrune, prune } = await import('../maintenance/maintain.js');
  const plan = await planPrune(settings.paths.logs, cutoffDay);
  if (plan.files.length === 0) {
    io.stdout.write(`nothing to prune: no log file is named before ${cutoffDay} (two days before the cutoff's: a later day's file may hold newer turns, written in another time zone)\n`);
    return 'ok';
  }
  const names = plan.files.map((file) => file.slice(settings.paths.logs.length + 1));
  const range = names.length === 1 ? names[0] : `${names[0]} … ${names[names.length - 1]}`;
  const summary = `${plural(plan.files.length, 'log file')} (${range}, ${formatBytes(plan.bytes)})`;
  if (flags.dryRun) {
    io.stdout.write(`would delete ${summary}:\n${plan.files.map((file) => `  ${file}\n`).join('')}`);
    return 'ok';
  }
  if (!(await confirm(io, `delete ${summary}? The turns in them are gone for good.`, flags.yes, 'logs prune'))) {
    throw new RuntimeError('nothing deleted (not confirmed)');
  }
  const repair = await prune(settings.paths, plan);
  const emptied = repair.emptied.length > 0 ? `; removed ${plural(repair.emptied.length, 'session')} left without turns (${repair.emptied.join(', ')})` : '';
  io.stdout.write(`deleted ${summary}; updated ${plural(repair.updated, 'session index', 'session indexes')}${emptied}\n`);
  return 'ok';
}

async function removeLogs(settings: Settings, flags: { session: string; yes?: boolean }, io: Io): Promise<Outcome> {
  // An unfinished turn of the session, logged only after its lines were deleted, would bring it back.
  await recoverUnfinishedTurns(settings, io);
  const { refuseWithForks, removeSessionLines } = await import('../maintenance/maintain.js');
  const { deleteSession } = await import('../sessions/store.js');
  const { damagedRecordPurgeError, hasDamagedRecord } = await import('../sessions/manage.js');
  const lookup = new SessionLookup(settings.paths.sessions);
  // Its lines carry the id in the damaged record: removed by name, they would leave that record behind.
  if (await hasDamagedRecord(settings.paths.sessions, flags.session)) throw damagedRecordPurgeError('logs rm', flags.session);
  // An id with neither a record nor a line is a typo, not a session to delete: refused here, as by argo logs -s.
  const { ids } = await resolveSessionIds(flags.session, lookup, settings.paths);
  // Deleting is never guessed: a name several removed sessions had is given by id.
  if (ids.length > 1) throw new UsageError(`--session: "${flags.session}" was the name of ${ids.length} removed sessions (${ids.join(', ')}); give the id of the one to delete`);
  const [id = flags.session] = ids;
  const record = (await lookup.all()).find((candidate) => candidate.id === id);
  const label = record ? `session "${record.name}"` : `session ${id}`;
  await refuseWithForks(settings.paths.sessions, id, label);
  const turns = record ? ` (${plural(record.turns, 'turn')})` : '';
  if (!(await confirm(io, `delete ${label}${turns}: every one of its log lines, its record and its index?`, flags.yes, 'logs rm'))) {
    throw new RuntimeError('nothing deleted (not confirmed)');
  }
  const removed = await removeSessionLines(settings.paths, new Set([id]), async () => {
    if (record) await deleteSession(settings.paths.sessions, record.name);
  }, { logged: (record?.turns ?? 0) > 0 });
  io.stdout.write(
    `deleted ${plural(removed.lines, 'line')} (${formatBytes(removed.bytes)}) of ${label} from ${plural(removed.files, 'log file')}` +
      `${record ? ', and its record and index' : ''}\n`,
  );
  return 'ok';
}

async function hasTurns(logsDir: string, sessionId: string): Promise<boolean> {
  for await (const _turn of searchTurns(logsDir, { ...EMPTY_QUERY, sessionIds: new Set([sessionId]) }, new ScanStats(), { limit: 1 })) return true;
  return false;
}
