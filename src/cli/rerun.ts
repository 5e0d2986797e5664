// `argo rerun ID`: send a logged turn's exact request again (see docs/rerun.md).
import type { Command } from 'commander';
import { RuntimeError, UsageError } from '../errors.js';
import type { LogEntry } from '../log/entry.js';
import { parseOptionAssignments } from '../ollama/options.js';
import { diffSummary, wordDiff } from '../output/word-diff.js';
import type { ReplaySpec } from '../replay/types.js';
import type { Settings } from '../config/settings.js';
import { linkedName, listSessions, readSession, removedSession } from '../sessions/store.js';
import { removedNames } from '../sessions/removed.js';
import { jsonTextFor, untrustedTextFor } from '../output/terminal-text.js';
import { findTurns, rebuildTurn, unreadableLines } from '../turn/rerun.js';
import { ScanStats } from '../log/scan.js';
import { ask } from './ask.js';
import { colorsFor } from './common.js';
import type { OutputFlags } from './output-flags.js';
import { collect } from './parse.js';
import type { Io } from './io.js';
import type { ReportOutcome } from './outcome.js';
import { settingsFor } from './settings.js';
import { recoverUnfinishedTurns } from './recovery.js';

interface RerunFlags extends OutputFlags {
  model?: string;
  option?: string[];
  diff?: boolean;
  explain?: boolean;
  json?: boolean;
  log: boolean;
  host?: string;
  home?: string;
  /** --hide-thinking (true) or --no-hide-thinking (false). */
  hideThinking?: boolean;
}

export function registerRerun(program: Command, io: Io, setOutcome: ReportOutcome): void {
  program
    .command('rerun')
    .description("send a logged turn's exact request again, proved by its hash; optionally to another model or with other options (docs/rerun.md)")
    .argument('<id>', 'the turn (argo logs shows ids)')
    .option('-m, --model <name>', 'send it to this model instead')
    .option('-o, --option <key=value>', 'change or add an Ollama option (repeatable), e.g. -o seed=7', collect)
    .option('--diff', 'after the new answer, a word diff of the old and new answers')
    .option('--explain', 'print the proof and the request that would be sent; send nothing, write nothing')
    .option('--json', 'print one JSON object instead of streamed text')
    .option('--no-log', 'do not write the new turn')
    .option('--hide-thinking', 'a thinking model\'s reasoning is not shown as it streams on the terminal, only a spinner (config "hideThinking")')
    .option('--no-hide-thinking', 'show the reasoning even when config.json hides it')
    .option('--host <url>', 'Ollama address (OLLAMA_HOST, config, default 127.0.0.1:11434)')
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (id: string, flags: RerunFlags) => setOutcome(await rerun(id, flags, io)));
}

async function rerun(id: string, flags: RerunFlags, io: Io) {
  if (flags.diff === true && flags.json === true) throw new UsageError('--diff shows a word diff for reading, --json one object for scripts: leave one of them out');
  const options = parseOptionAssignments(flags.option ?? []);
  // The logged turn gives the session, the model (unless --model) and the replay: ARGO_SESSION,
  // ARGO_MODEL and ARGO_REPLAY are not read.
  const base = settingsFor(
    {
      ...(flags.home !== undefined ? { home: flags.home } : {}),
      ...(flags.host !== undefined ? { host: flags.host } : {}),
      ...(flags.hideThinking !== undefined ? { hideThinking: flags.hideThinking } : {}),
    },
    [],
  );
  await recoverUnfinishedTurns(base, io);
  const stats = new ScanStats();
  const entry = (await findTurns(base.paths, [id], { stats })).get(id);
  if (entry === undefined) {
    sayNotice(stats, io);
    throw new UsageError(`no turn with id ${JSON.stringify(id)} in ${base.paths.logs} (argo logs shows ids)${stats.unreadable > 0 ? `; it may be ${unreadableLines(stats.unreadable)}` : ''}`);
  }
  // The replayed turns are in the history of the turn's session: its index is searched first.
  const replayed = await findTurns(base.paths, entry.replayed_ids, { session: entry.session, stats });
  sayNotice(stats, io);
  const rebuilt = rebuildTurn(entry, replayed, base, { ...(flags.model !== undefined ? { model: flags.model } : {}), options }, stats.unreadable);
  if (!rebuilt.ok) throw new RuntimeError(`cannot rerun: ${rebuilt.reason}`);

  // The new turn goes to the session the old one is in now (it may have been renamed since). One
  // removed since keeps its id: its old name may belong to another session now, which must not
  // gain this turn (and replay it), so the turn is logged under the old id alone.
  const records = await listSessions(base.paths.sessions);
  const current = records.find((record) => record.id === entry.session_id);
  // A removed session is named as it was last (sessions rm notes it, or a fork's link to it), as the
  // listings name it, not as when this turn was asked.
  const lastName = entry.session_id === '' ? undefined : ((await removedNames(base.paths.sessions)).get(entry.session_id) ?? linkedName(records, entry.session_id));
  const name = current?.name ?? lastName ?? entry.session;
  const removed = current === undefined && entry.session_id !== '' ? removedSession(entry.session_id, name, entry.timestamp) : null;
  const model = flags.model ?? entry.model;
  const replay: ReplaySpec = entry.replay.session ? { kind: 'session' } : entry.replay.count !== null ? { kind: 'last', count: entry.replay.count } : { kind: 'none' };
  const settings: Settings = {
    ...base,
    session: name,
    sessionSource: 'flag',
    api: entry.endpoint,
    model,
    modelFromFlag: true,
    modelSource: 'flag',
    defaultReplay: replay,
    defaultReplaySource: 'flag',
    system: entry.system === undefined || entry.system === '' ? null : entry.system,
    // Logged as the old turn had them: its request was built with them.
    mode: entry.active_mode,
    persona: entry.persona,
    numCtxSource: typeof rebuilt.options.num_ctx === 'number' ? ('flag' as const) : null,
  };

  if (flags.explain) {
    const proof = { rerun_of: entry.id, proved_sha256: rebuilt.sha256, replayed_ids: entry.replayed_ids, request: rebuilt.request };
    // The request holds logged prompts and answers: on a terminal their controls are escaped, as JSON allows.
    const json = jsonTextFor(io.stdout, flags);
    io.stdout.write(
      flags.json
        ? `${json(JSON.stringify(proof))}\n`
        : `${untrustedTextFor(io.stdout, flags)(`rerun of  ${entry.id} (${entry.timestamp}, session ${name}${removed !== null ? ' (removed)' : ''})`)}\nproved    the rebuilt request has the logged sha256 ${rebuilt.sha256}\nreplayed  ${entry.replayed_ids.join(', ') || 'none'}\nrequest   POST ${settings.host}${rebuilt.request.endpoint}\n${json(JSON.stringify(rebuilt.request.body, null, 2))}\n`,
    );
    return 'ok' as const;
  }

  if (removed !== null && flags.log) {
    io.stderr.write(untrustedTextFor(io.stderr)(`argo: the session of turn ${entry.id} ("${name}") was removed; the rerun is logged under its old id (argo logs --session ${entry.session_id})\n`));
  }
  const seen: { entry?: LogEntry } = {};
  const outcome = await ask(
    settings,
    {
      prompt: entry.user_prompt,
      ...(entry.typed_chars !== undefined ? { typedChars: entry.typed_chars } : {}),
      replay,
      explain: false,
      json: flags.json === true,
      ollamaStream: entry.ollama_stream ?? true,
      log: flags.log,
      quiet: true,
      // The answer and a thinking model's reasoning as every command's output: --raw, --color.
      raw: flags.raw === true,
      color: flags.color,
      rerunOf: entry.id,
      prepared: { session: removed ?? (await readSession(base.paths.sessions, name)), model, modelSource: 'flag', plan: rebuilt.plan },
    },
    io,
    { onEntry: (logged) => (seen.entry = logged) },
  );
  const answered = seen.entry;
  // A failed or cut turn has no answer to set against the old one: a diff would show it all removed.
  if (flags.diff && answered !== undefined && answered.status !== 'ok') {
    io.stderr.write(`argo: no word diff: the new turn ended ${answered.status}, with no whole answer to compare with the old one\n`);
  } else if (flags.diff && answered !== undefined) {
    const color = colorsFor(io, flags);
    const shown = untrustedTextFor(io.stdout, flags);
    const diff = wordDiff(entry.model_response, answered.model_response, color);
    io.stdout.write(`${color.dim(`── word diff: ${entry.id} (${shown(entry.model)}) → ${flags.log ? answered.id : 'new answer'} (${shown(model)}) · ${diffSummary(diff)}`)}\n${diff.text}\n`);
  }
  return outcome;
}

/** The line every reader prints after skipping unreadable lines, before anything else is said. */
function sayNotice(stats: ScanStats, io: Io): void {
  const notice = stats.notice();
  if (notice !== null) io.stderr.write(notice);
}
