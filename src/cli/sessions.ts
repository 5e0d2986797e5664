import type { Command } from 'commander';
import { format } from 'date-fns/format';
import { TIMESTAMP_PATTERN } from '../log/entry.js';
import type { Settings } from '../config/settings.js';
import { RuntimeError } from '../errors.js';
import { fullBlock, sessionHeader, sessionsTable } from '../query/format.js';
import type { RenderOptions } from '../query/format.js';
import { withSessionLock } from '../log/lock.js';
import { refuseWithForks, removeSessionLines } from '../maintenance/maintain.js';
import { ScanStats } from '../log/scan.js';
import { Sink } from '../output/sink.js';
import { openSessionTurns, rebuildIndex, rulesTagging } from '../sessions/turns.js';
import type { TurnPick } from '../sessions/turns.js';
import { sessionJson } from '../query/session-json.js';
import { recordRemoval } from '../sessions/removed.js';
import {
  damagedRecordPurgeError,
  forkSession,
  parseForkSource,
  reindexAll,
  renameSession,
  requireFree,
  requireSession,
  requireSessionFile,
  resumeRename,
} from '../sessions/manage.js';
import { checkSessionName, checkSessionNameAt, commandWithNames, isEarlierSessionName, isSessionName } from '../sessions/names.js';
import { SessionLookup, byLastUsed, deleteSession, isDamaged, scanSessions, shownRecord } from '../sessions/store.js';
import type { DamagedRecord } from '../sessions/store.js';
import type { OutputFlags } from './output-flags.js';
import { plural } from '../output/count.js';
import { colorsFor, jsonFor, untrustedFor, confirm, rejectStrayWords, inheritProgramSettings, parseCount, settingsOf, widthOf } from './common.js';
import type { Io } from './io.js';
import { untrustedTextFor } from '../output/terminal-text.js';
import { recoverUnfinishedTurns } from './recovery.js';

export function registerSessions(program: Command, io: Io): void {
  // Options after a subcommand's name belong to it (`argo sessions --json`), not to the prompt command.
  const sessions = program
    .command('sessions')
    .description('list sessions, most recently used first (see docs/history.md)')
    .option('--json', 'print a JSON array of session records')
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (flags: { json?: boolean } & OutputFlags, command: Command) => {
      rejectStrayWords(command);
      await listCommand(settingsOf(command), flags, io);
    });

  sessions
    .command('list')
    .alias('ls')
    .description('list sessions (the same as "argo sessions")')
    .option('--json', 'print a JSON array of session records')
    .option('--home <dir>', 'data directory')
    .action(async (flags: { json?: boolean } & OutputFlags, command: Command) => listCommand(settingsOf(command), flags, io));

  sessions
    .command('show')
    .description("print a session's transcript, a fork's inherited turns first")
    .argument('<name>', 'session name')
    .option('-n, --limit <n>', 'only the newest N turns', parseCount)
    .option('--json', 'one JSON object: {"session": record, "turns": [log lines]}')
    .option('--home <dir>', 'data directory')
    .action(async (name: string, flags: { json?: boolean; limit?: number } & OutputFlags, command: Command) => showCommand(settingsOf(command), name, flags, io));

  sessions
    .command('rename')
    .description('rename a session; its turns, id and forks follow')
    .argument('<old>', 'current name')
    .argument('<new>', 'new name')
    .option('--home <dir>', 'data directory')
    .action(async (from: string, to: string, _flags: object, command: Command) => {
      const settings = settingsOf(command);
      const dir = settings.paths.sessions;
      // A session an earlier version named with a leading dot is renamed from that name.
      if (!isEarlierSessionName(from)) checkSessionName(from, 'sessions rename');
      checkSessionNameAt(dir, to, 'sessions rename');
      // A turn an earlier argo left unfinished is logged first, under the name it was asked in: a
      // session whose only turn it is then exists to be renamed.
      await recoverUnfinishedTurns(settings, io);
      // This very rename, killed part-way before: run again, it is finished.
      if (from !== to && (await resumeRename(dir, from, to))) {
        io.stdout.write(`renamed session "${from}" to "${to}" (an earlier argo had begun it)\n`);
        return;
      }
      const record = await requireSession(dir, from, 'sessions rename');
      if (from === to) {
        io.stdout.write(`session "${from}" already has that name; nothing renamed\n`);
        return;
      }
      await requireFree(dir, to);
      await renameSession(dir, record, to);
      io.stdout.write(`renamed session "${from}" to "${to}"\n`);
    });

  sessions
    .command('rm')
    .description("remove a session's record and index; its log lines stay unless --purge")
    .argument('<name>', 'session name')
    .option('--purge', "also delete the session's lines from the log")
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--home <dir>', 'data directory')
    .action(async (name: string, flags: { purge?: boolean; yes?: boolean }, command: Command) => removeCommand(settingsOf(command), name, flags, io));

  sessions
    .command('fork')
    .description("start a new session from another's history, up to a turn (default: its newest)")
    .argument('<source>', 'NAME or NAME@TURN_ID (a unique prefix of the id is enough)')
    .argument('<new>', 'name of the new session')
    .option('--home <dir>', 'data directory')
    .action(async (source: string, name: string, _flags: object, command: Command) => {
      const settings = settingsOf(command);
      const from = parseForkSource(source);
      checkSessionNameAt(settings.paths.sessions, from.name, 'sessions fork');
      checkSessionNameAt(settings.paths.sessions, name, 'sessions fork');
      // A turn an earlier argo left unfinished is logged first: the fork inherits it, and NAME@ID finds it.
      await recoverUnfinishedTurns(settings, io);
      const parent = await requireSession(settings.paths.sessions, from.name, 'sessions fork');
      const { record, inherited } = await forkSession(settings.paths, parent, from.turn, name, format(io.now(), TIMESTAMP_PATTERN));
      // The turn id is a log line's: a hand-edited one is shown, never obeyed, on a terminal.
      io.stdout.write(untrustedTextFor(io.stdout)(`forked "${parent.name}" at turn ${record.parent?.turn_id} into "${name}" (${plural(inherited, 'turn')} inherited)\n`));
    });

  sessions
    .command('reindex')
    .description("rebuild a session's index from the log (every session's without a name)")
    .argument('[name]', 'session name')
    .option('--home <dir>', 'data directory')
    .action(async (name: string | undefined, _flags: object, command: Command) => {
      const settings = settingsOf(command);
      if (name !== undefined) checkSessionNameAt(settings.paths.sessions, name, 'sessions reindex');
      // The turns an earlier argo left unfinished are logged first: the rebuilt indexes hold them too.
      await recoverUnfinishedTurns(settings, io);
      if (name !== undefined) {
        const record = await requireSession(settings.paths.sessions, name, 'sessions reindex');
        const stats = new ScanStats();
        const lines = await rebuildIndex(settings.paths, record, { classify: settings.replay.classify, stats, folder: 'replace', asked: true });
        // A rebuild that skipped a line of the session saves nothing (rebuildIndex says why).
        if (stats.unreadable > 0) io.stdout.write(`left session "${name}" as it was (${LEFT_WHY.one}); skipped ${plural(stats.unreadable, 'unreadable line')} (argo logs check)\n`);
        else io.stdout.write(`reindexed session "${name}": ${plural(lines.length, 'turn')}\n`);
        return;
      }
      const result = await reindexAll(settings.paths, rulesTagging(settings.replay.classify));
      const skipped = result.unreadable > 0 ? `; skipped ${plural(result.unreadable, 'unreadable line')} (argo logs check)` : '';
      const left = result.left > 0 ? `; left ${plural(result.left, 'session')} as ${result.left === 1 ? `it was (${LEFT_WHY.one})` : `they were (${LEFT_WHY.many})`}` : '';
      io.stdout.write(`reindexed ${plural(result.sessions, 'session')}: ${plural(result.turns, 'turn')}${skipped}${left}\n`);
    });

  inheritProgramSettings(program, sessions);
}

/** Why a reindex leaves a session as it was (rebuildIndex): an index without the line would hide its turn once repaired. */
const LEFT_WHY = { one: 'an unreadable line may be one of its turns', many: 'an unreadable line may be one of their turns' } as const;

/** `nameOf`: a session's current name by id, undefined once it is removed; `removedName`: a removed one's last name, when known. */
function renderOptions(io: Io, nameOf: (id: string) => string | undefined, flags: OutputFlags, removedName?: (id: string) => string | undefined): RenderOptions {
  return {
    color: colorsFor(io, flags),
    width: widthOf(io),
    currentName: nameOf,
    ...(removedName ? { removedName } : {}),
    untrusted: untrustedFor(io, flags),
  };
}

async function listCommand(settings: Settings, flags: { json?: boolean } & OutputFlags, io: Io): Promise<void> {
  // A killed argo's first turn of a session makes its record once logged: listed, not missing.
  await recoverUnfinishedTurns(settings, io);
  // A parent an earlier version named ".notes" is found too, but listed only as the fork's parent.
  const { records: every, damaged } = await scanSessions(settings.paths.sessions, { earlierNames: true });
  const records = every.filter((record) => isSessionName(record.name)).sort(byLastUsed);
  if (flags.json) {
    // The array holds records only; a damaged one is named on stderr so it is not missed.
    for (const record of damaged.filter((found) => isSessionName(found.name))) {
      io.stderr.write(untrustedTextFor(io.stderr)(`argo: left out damaged session record ${record.name} (${record.path} is ${record.problem}); remove it with "${commandWithNames('argo sessions rm', record.name)}"\n`));
    }
    io.stdout.write(jsonFor(io, flags)(`${JSON.stringify(records.map((record) => shownRecord(record, every)))}\n`));
    return;
  }
  const shownDamaged = damaged.filter((found) => isSessionName(found.name)).map((record) => record.name);
  if (records.length === 0 && shownDamaged.length === 0) {
    io.stdout.write('no sessions yet; start one with: argo --session NAME "your question"\n');
    return;
  }
  const shown = records.map((record) => shownRecord(record, every));
  const names = new Map(every.map((record) => [record.id, record.name]));
  // The header on a terminal only, as argo logs draws it: piped, every line is a session.
  io.stdout.write(sessionsTable(shown, renderOptions(io, (id) => names.get(id), flags), shownDamaged, { header: io.stdout.isTTY === true }));
}

async function showCommand(settings: Settings, name: string, flags: { json?: boolean; limit?: number } & OutputFlags, io: Io): Promise<void> {
  checkSessionNameAt(settings.paths.sessions, name, 'sessions show');
  await recoverUnfinishedTurns(settings, io);
  const record = await requireSession(settings.paths.sessions, name, 'sessions show');
  const stats = new ScanStats();
  const pick: TurnPick = flags.limit === undefined ? { kind: 'all' } : { kind: 'last', count: flags.limit, okOnly: false };
  const turns = await openSessionTurns(settings.paths, record, pick, stats);
  // Names as the turns need them (a fork's ancestors), not every record.
  const lookup = new SessionLookup(settings.paths.sessions);
  const shown = await lookup.shown(record);
  const sink = new Sink(io.stdout);
  // Written a turn at a time: a session of years is never one string.
  const write = async (text: string): Promise<boolean> => {
    await sink.write(text);
    return !sink.closed;
  };
  if (flags.json) {
    const json = jsonFor(io, flags);
    await sessionJson(shown, turns, (piece) => write(json(piece)));
    await write('\n');
  } else {
    const render = renderOptions(io, (id) => lookup.nameOf(id), flags, (id) => lookup.removedName(id));
    await write(sessionHeader(shown, turns, render, flags.limit !== undefined));
    // -n 0 asks for the header alone, as argo logs -n 0 and argo last 0 ask for nothing.
    if (turns.count === 0) await write(flags.limit === 0 ? 'no turns shown (-n 0 asks for none)\n' : 'no turns yet\n');
    await turns.each(async (entry) => {
      await lookup.learn(entry.session_id, entry.session);
      return write(fullBlock(entry, render));
    });
  }
  await sink.flush();
  const notice = stats.notice();
  if (notice !== null) io.stderr.write(notice);
}

async function removeCommand(settings: Settings, name: string, flags: { purge?: boolean; yes?: boolean }, io: Io): Promise<void> {
  checkSessionNameAt(settings.paths.sessions, name, 'sessions rm');
  // An unfinished turn of the session is logged first: --purge then deletes it with the rest, rather
  // than a later argo logging it under the removed session.
  await recoverUnfinishedTurns(settings, io);
  const dir = settings.paths.sessions;
  const record = await requireSessionFile(dir, name, 'sessions rm');
  if (isDamaged(record)) return removeDamaged(settings, record, flags, io);
  if (flags.purge) await refuseWithForks(dir, record.id, `session "${name}"`);
  const what = flags.purge
    ? `remove session "${name}" (${plural(record.turns, 'turn')}) and delete its lines from the log?`
    : `remove session "${name}" (${plural(record.turns, 'turn')})?${record.turns === 0 ? '' : ' Its log lines stay (--purge deletes them too).'}`;
  if (!(await confirm(io, what, flags.yes, 'sessions rm'))) throw new RuntimeError('nothing removed (not confirmed)');
  // Under the session's lock (with --purge, every session's and the log's), which turn completion
  // takes too: a turn finishing now waits, then finds the session gone and logs its line under the
  // id without recreating the record.
  // Without --purge its turns stay: the name it had last is noted, by which they are found and shown.
  const remove = async (): Promise<void> => {
    if (!flags.purge) await recordRemoval(dir, record, format(io.now(), TIMESTAMP_PATTERN));
    await deleteSession(dir, name);
  };
  const removed = flags.purge ? await removeSessionLines(settings.paths, new Set([record.id]), remove, { logged: record.turns > 0 }) : await withSessionLock(dir, record.id, remove).then(() => null);
  // No turn of its own (a fork never asked in): no log line carries its id, so no command finds any.
  const kept = record.turns === 0 ? ' (it had no turns of its own)' : `; its log lines remain (argo logs --session ${record.id})`;
  io.stdout.write(removed ? `removed session "${name}" and ${plural(removed.lines, 'log line')} from ${plural(removed.files, 'file')}\n` : `removed session "${name}"${kept}\n`);
}

/**
 * A record that cannot be read still has a name: remove it and its index. Its id, which its log
 * lines carry, is unknown, so --purge cannot find them.
 */
async function removeDamaged(settings: Settings, record: DamagedRecord, flags: { purge?: boolean; yes?: boolean }, io: Io): Promise<void> {
  const { name } = record;
  if (flags.purge) throw damagedRecordPurgeError('sessions rm --purge', name);
  const what = `remove session "${name}"? Its record is damaged (${record.problem}); the record and its index go, its log lines stay.`;
  if (!(await confirm(io, what, flags.yes, 'sessions rm'))) throw new RuntimeError('nothing removed (not confirmed)');
  await deleteSession(settings.paths.sessions, name);
  io.stdout.write(`removed session "${name}" (its record was damaged); its log lines remain (argo logs --json shows them with "session":"${name}")\n`);
}
