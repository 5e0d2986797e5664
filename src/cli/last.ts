// `argo last [N]`: the last answer (or the last N turns) of a session, for `argo last | pbcopy`.
import type { Command } from 'commander';
import type { Settings } from '../config/settings.js';
import { UsageError } from '../errors.js';
import { serializeEntry } from '../log/entry.js';
import type { LogEntry } from '../log/entry.js';
import { fullBlock } from '../query/format.js';
import { quotedName, untrustedTextFor } from '../output/terminal-text.js';
import { SessionLookup, readSession } from '../sessions/store.js';
import type { SessionRecord } from '../sessions/store.js';
import type { DataPaths } from '../log/writer.js';
import { latestSession } from './ask-flags.js';
import { colorsFor, jsonFor, parseCount, settingsOf, untrustedFor, widthOf } from './common.js';
import type { OutputFlags } from './output-flags.js';
import type { Io } from './io.js';
import type { ReportOutcome } from './outcome.js';
import { recoverUnfinishedTurns } from './recovery.js';

interface LastFlags extends OutputFlags {
  session?: string;
  json?: boolean;
  full?: boolean;
}

export function registerLast(program: Command, io: Io, setOutcome: ReportOutcome): void {
  program
    .command('last')
    .description("print a session's last answer, or its last N turns (default: ARGO_SESSION, config's session, else the most recently used)")
    .argument('[n]', 'how many turns (default 1)', parseCount)
    .option('-s, --session <name>', 'the session (default: ARGO_SESSION, config, else the most recently used)')
    .option('--json', 'the turns as logged, one JSON object per line')
    .option('--full', 'prompts with the answers, and who answered when')
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (count: number | undefined, flags: LastFlags, command: Command) => {
      if (flags.json && flags.full) throw new UsageError('--json prints turns as logged and --full prints them for reading: choose one');
      // -s names the session: ARGO_SESSION and config's "session" are then not read.
      const settings = settingsOf(command, flags.session === undefined ? ['session'] : []);
      await recoverUnfinishedTurns(settings, io);
      const { text, failed } = await lastText(settings, await sessionToRead(settings, flags.session), count ?? 1, io, flags);
      io.stdout.write(text);
      // A turn that did not end ok, partial text or none, is a failure, so `argo last > answer.txt && publish` stops.
      setOutcome(failed ? 'failed' : 'ok');
    });
}

/**
 * The session `argo last` reads: the one named (-s, ARGO_SESSION, config's "session"), as a
 * question would use it; with none named, the most recently used one rather than "default".
 */
async function sessionToRead(settings: Settings, flag: string | undefined): Promise<{ name: string; from: string | null }> {
  if (flag !== undefined) {
    const { checkSessionNameAt } = await import('../sessions/names.js');
    return { name: checkSessionNameAt(settings.paths.sessions, flag, '--session'), from: null };
  }
  if (settings.sessionSource === 'env') return { name: settings.session, from: 'ARGO_SESSION' };
  if (settings.sessionSource === 'config') return { name: settings.session, from: `${settings.paths.config}: "session"` };
  return { name: await latestSession(settings.paths.sessions, 'last'), from: null };
}

/** What a turn that did not end ok left: an answer cut off, the words before an agent stopped, or nothing. */
export function whatIsLeft(entry: Pick<LogEntry, 'status' | 'model_response'>): string {
  if (entry.model_response === '') return 'it has no answer';
  return entry.status === 'interrupted' || entry.status === 'stopped' || entry.status === 'error' ? 'its answer is partial' : 'it stopped before answering';
}

/** ` ("get_time", "search")`: the tools a turn's client calls named, each quoted as one line of logged text. */
function clientToolNames(entry: LogEntry): string {
  const names = [...new Set((entry.client_tool_calls ?? []).map((call) => call.name))];
  return names.length === 0 ? '' : ` (${names.map((name) => quotedName(name)).join(', ')})`;
}

/** What `argo last` prints, and whether an answer it prints is not whole: a turn that did not end ok (said on stderr). */
interface TurnsText {
  text: string;
  failed: boolean;
}

/** The text `argo last` prints: answers only (newest last), --full blocks, or --json lines. */
export async function lastText(settings: Settings, { name, from }: { name: string; from: string | null }, count: number, io: Io, flags: LastFlags = {}): Promise<TurnsText> {
  const session = await readSession(settings.paths.sessions, name);
  if (session === null) throw new UsageError(`no session named "${name}"${from === null ? '' : ` (from ${from})`}; argo sessions lists them`);
  return await textOfTurns(settings.paths, session, count, io, flags);
}

/**
 * A chat's `/last`: the session's last answer, or a line saying there is none yet (a fresh chat's
 * session has no record until its first turn), said rather than failed. The record is read once.
 * `flags`: the chat's own (--raw prints the answer as its turns do).
 */
export async function chatLastText(paths: DataPaths, name: string, io: Io, flags: OutputFlags): Promise<string> {
  const session = await readSession(paths.sessions, name);
  const { text, failed } = session === null ? { text: '', failed: false } : await textOfTurns(paths, session, 1, io, { raw: flags.raw === true });
  return text === '' && !failed ? `no answer yet in session "${name}"\n` : text;
}

async function textOfTurns(paths: DataPaths, session: SessionRecord, count: number, io: Io, flags: LastFlags): Promise<TurnsText> {
  const name = session.name;
  if (count === 0) return { text: '', failed: false };
  const [{ loadSessionEntries }, { ScanStats }] = await Promise.all([import('../sessions/turns.js'), import('../log/scan.js')]);
  const stats = new ScanStats();
  const entries = await loadSessionEntries(paths, session, count, stats);
  // What a rebuild of the index skipped may be the turn asked for: said, as every reader says it.
  const notice = stats.notice();
  if (notice !== null) io.stderr.write(notice);
  if (entries.length === 0) return { text: '', failed: false };
  if (flags.json) return { text: jsonFor(io, flags)(entries.map((entry) => `${serializeEntry(entry)}\n`).join('')), failed: false };
  const safe = untrustedFor(io, flags);
  if (flags.full) {
    // A fork's inherited turns are shown under the session they were asked in, as sessions show does.
    const lookup = new SessionLookup(paths.sessions);
    for (const entry of entries) await lookup.learn(entry.session_id, entry.session);
    // Every field shown is logged text: the model's name and reasoning as much as its answer.
    const render = { color: colorsFor(io, flags), width: widthOf(io), currentName: (id: string) => lookup.nameOf(id), removedName: (id: string) => lookup.removedName(id), untrusted: safe };
    return { text: entries.map((entry) => fullBlock(entry, render)).join(''), failed: false };
  }
  // A turn that did not end ok has a partial answer or none: said on stderr, so a pipe of the answer stays clean.
  const full = `argo last${count > 1 ? ` ${count}` : ''} -s ${name} --full`;
  // A hand-edited line's id or status is logged text too: shown, never obeyed, on a terminal.
  const said = untrustedTextFor(io.stderr);
  for (const entry of entries) {
    if (entry.status === 'ok') continue;
    if (entry.status === 'tool_calls') io.stderr.write(said(`argo: turn ${entry.id} was answered with calls of argo serve's client's own tools${clientToolNames(entry)}, for that client to run\n`));
    else io.stderr.write(said(`argo: turn ${entry.id} ended "${entry.status}", so ${whatIsLeft(entry)} (${full} shows why)\n`));
  }
  // Answers as written, so `argo last | pbcopy` copies exactly the answer. A failed turn that left no
  // text prints nothing, not an empty line; an ok turn's empty answer is the answer.
  const answered = entries.filter((entry) => entry.status === 'ok' || entry.model_response !== '');
  return {
    text: answered.map((entry) => safe(entry.model_response) + (entry.model_response.endsWith('\n') ? '' : '\n')).join('\n'),
    // A turn answered with the client's tool calls is answered, not failed: the calls were its answer.
    failed: entries.some((entry) => entry.status !== 'ok' && entry.status !== 'tool_calls'),
  };
}
