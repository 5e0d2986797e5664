// Agent mode's commands: `argo tools`, `argo stop`, `argo memo`, `argo export`. Loaded only when
// the command line names one of them.
import { plural } from '../output/count.js';
import { constants } from 'node:fs';
import { join } from 'node:path';
import { lstat, open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { isatty } from 'node:tty';
import type { Command } from 'commander';
import { Option } from 'commander';
import { checkGivenPath } from '../config/settings.js';
import { RuntimeError, UsageError, shownPath } from '../errors.js';
import { errnoOf, isFolder, landsInside, saidOf, temporaryPath, trackTemporary, untrackTemporary } from '../log/fs.js';
import { toolDefinitions } from '../agent/request.js';
import { definitionsPath, readDefinitions } from '../agent/definitions.js';
import { renderTrajectory } from '../agent/sharegpt.js';
import { clearLeaves, clearStop, fullFolderAtStop, setStop, stopPath, stopState } from '../agent/stop.js';
import { ScanStats } from '../log/scan.js';
import { Sink } from '../output/sink.js';
import type { ToolDefinition } from '../ollama/transport.js';
import { searchTurns } from '../query/search.js';
import { SessionLookup } from '../sessions/store.js';
import { buildCatalog, builtinTools, listAllTools, unusableToolsets } from '../tools/catalog.js';
import { MemoLimitError, deleteMemo, readMemo, setMemo } from '../tools/memo.js';
import { toolsConfigOf } from '../agent/answer.js';
import { jsonTextFor, untrustedTextFor } from '../output/terminal-text.js';
import { descriptorOf } from './descriptor-path.js';
import { namedFileError } from './file-failure.js';
import { SINCE_HELP, UNTIL_HELP, inheritProgramSettings, jsonFor, rejectStrayWords, settingsOf, untrustedFor } from './common.js';
import { collect } from './parse.js';
import type { Io } from './io.js';
import type { OutputFlags } from './output-flags.js';
import type { Outcome, ReportOutcome } from './outcome.js';
import { buildQuery } from './logs.js';
import { recoverUnfinishedTurns } from './recovery.js';


// ---------------------------------------------------------------------------------------------
// argo tools

export function registerTools(program: Command, io: Io, setOutcome: ReportOutcome): void {
  const command = program
    .command('tools')
    .description('list every toolset and tool, available or not and why (see docs/agent.md)')
    .option('--json', 'one JSON object: {toolsets, tools}')
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (flags: { json?: boolean } & OutputFlags, self: Command) => {
      rejectStrayWords(self);
      const settings = settingsOf(self);
      const listing = await listAllTools(toolsConfigOf(settings.agent));
      if (flags.json) {
        io.stdout.write(jsonFor(io, flags)(`${JSON.stringify(listing)}\n`));
      } else {
        const lines = ['toolsets'];
        for (const set of listing.toolsets) {
          const parts = [...set.tools, ...set.includes.map((name) => `+${name}`)];
          // An MCP server's toolset is empty only when the server did not start (its row below says why) or lists nothing.
          lines.push(`  ${set.name.padEnd(14)} ${parts.join(', ') || '(none)'}${set.builtin ? '' : '  (config)'}${set.problem === null ? '' : `  unusable: ${set.problem}`}`);
        }
        lines.push('tools');
        for (const tool of listing.tools) {
          const state = tool.available ? (tool.asks ? 'available, asks first' : tool.side_effects ? "available, changes only Argo's own data" : 'available') : `unavailable: ${tool.reason ?? ''}`;
          lines.push(`  ${tool.name.padEnd(16)} ${state}`);
        }
        // MCP servers name their tools, and reasons quote what failed: shown, not obeyed, on a terminal.
        io.stdout.write(untrustedFor(io, flags)(`${lines.join('\n')}\n`));
      }
      // Listed first, so the user sees the rest; a broken toolset is still a config error (exit 2).
      const broken = unusableToolsets(listing);
      if (broken !== null) throw new UsageError(broken);
      setOutcome('ok');
    });
  inheritProgramSettings(program, command);
}

// ---------------------------------------------------------------------------------------------
// argo stop

export function registerStop(program: Command, io: Io, setOutcome: ReportOutcome): void {
  const command = program
    .command('stop')
    .description('set the STOP signal: every running agent loop stops within one chunk (see docs/agent.md)')
    .option('--clear', 'remove the STOP signal so agent runs may go on')
    .option('--status', 'tell whether the STOP signal is set')
    .option('--json', 'print the state (after setting or clearing it) as one JSON object: {stop, since, path}')
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (flags: { clear?: boolean; status?: boolean; json?: boolean } & OutputFlags, self: Command) => {
      rejectStrayWords(self);
      if (flags.clear && flags.status) throw new UsageError('--clear and --status: choose one');
      const home = settingsOf(self).home;
      // As a message shows it: a line break in --home cannot split the line.
      const path = shownPath(stopPath(home));
      // Text says what this call did; --json, for scripts, what STOP is now. The path may hold a
      // control or a bidi override (shownPath quotes only C0 and C1): shown, not obeyed, as every message's.
      const shown = untrustedFor(io, flags);
      const say = (line: string): void => {
        if (!flags.json) io.stdout.write(shown(line));
      };
      if (flags.status) {
        const state = stopState(home);
        if (state.kind === 'set') say(`STOP is set (${path}, since ${state.since.toISOString()}); agent runs stop at once. Clear it with "argo stop --clear"\n`);
        else if (state.kind === 'unset') say('STOP is not set\n');
        // --clear is offered only for what it removes: a folder with files in it is the user's to move.
        else if (clearLeaves(home, state)) say(`STOP is not set: ${fullFolderAtStop(path)}\n`);
        else say(`STOP is not set: ${path} is ${state.what}, and only a regular file counts; "argo stop --clear" removes it\n`);
      } else if (flags.clear) {
        const was = await clearStop(home);
        if (was.kind === 'set') say('STOP cleared; agent runs may go on\n');
        else if (was.kind === 'unset') say('STOP was not set\n');
        else say(`STOP was not set; removed ${path} (${was.what}, which does not count)\n`);
      } else {
        const result = await setStop(home, io.now());
        // Something else named STOP blocks the signal: saying "set" would be a lie the loops disprove.
        if (result.kind === 'other') throw new RuntimeError(`${path} is ${result.what}, not a file, so STOP is not set; remove it, then run "argo stop" again`);
        if (result.kind === 'now') say(`STOP set (${path}): running agent loops stop now; "argo stop --clear" lets them run again\n`);
        else say(`STOP was already set (${path}, since ${result.since.toISOString()}); "argo stop --clear" lets agent runs go on\n`);
      }
      if (flags.json) io.stdout.write(jsonFor(io, flags)(`${JSON.stringify(stopJson(home))}\n`));
      setOutcome('ok');
    });
  inheritProgramSettings(program, command);
}

/** `argo stop --json`: what GET /api/stop answers, and where the file is (the CLI's user may see the path). */
function stopJson(home: string): { stop: boolean; since: string | null; path: string } {
  const state = stopState(home);
  return { stop: state.kind === 'set', since: state.kind === 'set' ? state.since.toISOString() : null, path: stopPath(home) };
}

// ---------------------------------------------------------------------------------------------
// argo memo

export function registerMemo(program: Command, io: Io, setOutcome: ReportOutcome): void {
  const memo = program
    .command('memo')
    .description('the memo agent runs see in their system prompt: list, get, set, rm (see docs/agent.md)')
    .option('--json', 'print JSON')
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (flags: { json?: boolean } & OutputFlags, self: Command) => {
      rejectStrayWords(self);
      await listMemo(settingsOf(self).home, flags, io);
      setOutcome('ok');
    });
  memo
    .command('list')
    .alias('ls')
    .description('every entry (the same as "argo memo")')
    .option('--json', 'one JSON object {key: value}')
    .option('--home <dir>', 'data directory')
    .action(async (flags: { json?: boolean } & OutputFlags, self: Command) => {
      await listMemo(settingsOf(self).home, flags, io);
      setOutcome('ok');
    });
  memo
    .command('get')
    .description("one entry's value; exit 1 when there is none")
    .argument('<key>')
    .option('--json', 'one JSON object {key, value}')
    .option('--home <dir>', 'data directory')
    .action(async (key: string, flags: { json?: boolean } & OutputFlags, self: Command) => {
      const entries = await readMemo(settingsOf(self).home);
      const value = Object.hasOwn(entries, key) ? (entries[key] ?? null) : null;
      // The model writes memo entries: shown, not obeyed, on a terminal.
      if (flags.json) io.stdout.write(jsonFor(io, flags)(`${JSON.stringify({ key, value })}\n`));
      else if (value !== null) io.stdout.write(`${untrustedFor(io, flags)(value)}\n`);
      if (value === null) io.stderr.write(`argo: no memo entry ${untrustedTextFor(io.stderr)(JSON.stringify(key))} (argo memo lists them)\n`);
      setOutcome(value === null ? 'failed' : 'ok');
    });
  memo
    .command('set')
    .description(`set an entry (values up to 1,000 characters, at most 100 entries)`)
    .argument('<key>')
    .argument('<value>')
    .option('--home <dir>', 'data directory')
    .action(async (key: string, value: string, _flags: unknown, self: Command) => {
      try {
        await setMemo(settingsOf(self).home, key, value);
      } catch (error) {
        if (error instanceof MemoLimitError) throw new UsageError(error.message, { cause: error });
        throw error;
      }
      setOutcome('ok');
    });
  memo
    .command('rm')
    .description('remove an entry; exit 1 when there was none')
    .argument('<key>')
    .option('--home <dir>', 'data directory')
    .action(async (key: string, _flags: unknown, self: Command) => {
      const removed = await deleteMemo(settingsOf(self).home, key);
      if (!removed) io.stderr.write(`argo: no memo entry ${untrustedTextFor(io.stderr)(JSON.stringify(key))} (argo memo lists them)\n`);
      setOutcome(removed ? 'ok' : 'failed');
    });
  inheritProgramSettings(program, memo);
}

async function listMemo(home: string, flags: { json?: boolean } & OutputFlags, io: Io): Promise<void> {
  const entries = await readMemo(home);
  if (flags.json === true) {
    io.stdout.write(jsonFor(io, flags)(`${JSON.stringify(entries)}\n`));
    return;
  }
  const keys = Object.keys(entries).sort();
  if (keys.length === 0) io.stderr.write('argo: the memo is empty (argo memo set KEY VALUE adds an entry)\n');
  const shown = untrustedFor(io, flags);
  for (const key of keys) io.stdout.write(shown(`${key}\t${JSON.stringify(entries[key])}\n`));
}

// ---------------------------------------------------------------------------------------------
// argo export

interface ExportFlags extends OutputFlags {
  format: 'sharegpt';
  session?: string[];
  since?: string;
  until?: string;
  output?: string;
  all?: boolean;
  /** False with --no-thinking. */
  thinking: boolean;
}

export function registerExport(program: Command, io: Io, setOutcome: ReportOutcome): void {
  const command = program
    .command('export')
    .description('write logged agent runs as training trajectories, one JSON object per line (see docs/agent.md)')
    .addOption(new Option('--format <format>', 'trajectory format').choices(['sharegpt']).makeOptionMandatory())
    .option('-s, --session <names>', 'only these sessions (comma-separated or repeated)', collect)
    .option('--since <when>', SINCE_HELP)
    .option('--until <when>', UNTIL_HELP)
    .option('--all', 'also turns asked without tools')
    .option('--no-thinking', "leave out a thinking model's reasoning (<think>…</think>)")
    .option('-o, --output <file>', 'write to this file instead of stdout (- is stdout)')
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    .action(async (flags: ExportFlags, self: Command) => {
      rejectStrayWords(self);
      setOutcome(await exportTrajectories(self, flags, io));
    });
  inheritProgramSettings(program, command);
}

/**
 * Runs `produce` with a writer to `output` (a file, private if new, as the log is) or to stdout
 * (JSON made safe for a terminal); the writer answers false once stdout's reader has gone.
 */
async function writeLines<T>(output: string | undefined, io: Io, flags: OutputFlags, produce: (write: (line: string) => Promise<boolean>) => Promise<T>): Promise<T> {
  // /dev/stdout and /dev/stderr: the streams the shell set up, `>>` and all (descriptor-path.ts),
  // JSON made safe when one is a terminal.
  const fd = output === undefined ? 1 : await descriptorOf(output);
  // Appending to it would write the export into the file the shell reads from (`< input.jsonl`).
  if (fd === 0) throw new UsageError(`--output ${shownPath(output ?? '')} names standard input: give a file to write, or leave it out to write to standard output`);
  if (output === undefined || fd === 1 || fd === 2) {
    const stream = fd === 2 ? io.stderr : io.stdout;
    const sink = new Sink(stream);
    const shown = jsonTextFor(stream, { raw: flags.raw === true });
    const result = await produce(async (line) => {
      await sink.write(shown(line));
      return !sink.closed;
    });
    await sink.flush();
    return result;
  }
  // A regular file (or none yet) is written beside and renamed over at the end, so an export that
  // fails part-way (Ctrl-C, a full disk) leaves the earlier file whole. A pipe, a device, a link (the
  // file it points to is written, as before), or a file in a folder where no other file can be made
  // is written to as it is; another descriptor (/dev/fd/3) is appended to, never truncated, since
  // its file is the one the shell opened (`3>>log`), not a new one to replace.
  const found = fd === null ? await lstat(output).catch(() => null) : null;
  const beside = fd === null && (found === null || found.isFile()) ? await openBeside(output) : null;
  const target = beside?.path ?? output;
  const handle = beside?.handle ?? (await open(output, fd === null ? 'w' : constants.O_WRONLY | constants.O_APPEND, 0o600));
  if (beside !== null) {
    trackTemporary(beside.path);
    // It takes the place of the earlier file: with its permissions, as writing into it kept them.
    if (found !== null) await handle.chmod(found.mode & 0o777);
  }
  // On disk before it replaces anything: a power cut then leaves the earlier file or the whole new one.
  const stream = handle.createWriteStream({ flush: beside !== null });
  // An object, so the narrowing of a `let` does not hide what the listener sets.
  const failed: { error: Error | null } = { error: null };
  // Node names no path for a failed write (a full disk): said of the file asked for, as openBeside does.
  stream.on('error', (error) => (failed.error ??= errnoOf(error) === undefined ? error : Object.assign(error, { path: output })));
  const sink = new Sink(stream);
  // What was opened is asked, not the name: a descriptor the shell opened on a terminal (3>/dev/tty)
  // and a terminal opened by its path (-o /dev/tty) get their JSON made safe, as stdout does.
  const shown = jsonTextFor({ isTTY: isatty(handle.fd) }, { raw: flags.raw === true });
  let produced: { result: T } | null = null;
  try {
    produced = {
      result: await produce(async (line) => {
        await sink.write(shown(line));
        return failed.error === null;
      }),
    };
    await sink.flush();
  } catch (error) {
    failed.error ??= error instanceof Error ? error : new Error(String(error));
  } finally {
    // Ends the stream and closes the file, whatever happened.
    const closed = stream.closed ? Promise.resolve() : new Promise<void>((resolve) => stream.once('close', () => resolve()));
    stream.end();
    await closed;
  }
  try {
    // A write that failed (a full disk), or a read, fails the export; the earlier file stays.
    if (failed.error !== null || produced === null) throw failed.error ?? new RuntimeError(`the export to ${shownPath(output)} did not finish`);
    if (beside !== null) await rename(target, output);
    return produced.result;
  } catch (error) {
    // Nothing of the export is left beside the file asked for, which the error names.
    if (beside !== null) await rm(target, { force: true }).catch(() => undefined);
    throw saidOf(error, output, target);
  } finally {
    if (beside !== null) untrackTemporary(target);
  }
}

/** A new private file beside `output` to write the export to, or null where its folder takes none (the file itself may still be writable). */
async function openBeside(output: string): Promise<{ path: string; handle: FileHandle } | null> {
  const path = temporaryPath(output);
  try {
    return { path, handle: await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600) };
  } catch (error) {
    if (['EACCES', 'EPERM', 'EROFS'].includes(errnoOf(error) ?? '')) return null;
    throw saidOf(error, output, path);
  }
}

/** Turns whose definitions came from today's config, by why, for the one line export says about them. */
class FallbackNotes {
  private readonly older = new Set<string>();
  private readonly missing = new Map<string, number>();
  private readonly damaged = new Map<string, number>();
  private readonly gone = new Set<string>();

  note(id: string, kind: 'older' | 'missing' | 'damaged', digest: string | undefined, left: readonly string[]): void {
    if (kind === 'older') this.older.add(id);
    else {
      const counts = kind === 'missing' ? this.missing : this.damaged;
      counts.set(digest ?? '', (counts.get(digest ?? '') ?? 0) + 1);
    }
    for (const name of left) this.gone.add(name);
  }

  lines(shown: (text: string) => string): string {
    const turns = (count: number): string => (count === 1 ? "1 turn's" : `${count} turns'`);
    const files = (counts: Map<string, number>): string => {
      const [first, ...rest] = [...counts.keys()].map((digest) => definitionsPath(digest));
      return rest.length === 0 ? (first ?? '') : `${first ?? ''} and ${rest.length} more`;
    };
    const sum = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0);
    const reasons: string[] = [];
    if (this.older.size > 0) reasons.push(`${this.older.size === 1 ? '1 turn was' : `${this.older.size} turns were`} logged before Argo kept each run's tool definitions`);
    if (this.missing.size > 0) reasons.push(`${turns(sum(this.missing))} tool definitions (${files(this.missing)}) are missing from the data home`);
    if (this.damaged.size > 0) reasons.push(`${turns(sum(this.damaged))} tool definitions (${files(this.damaged)}) no longer match their digest`);
    if (reasons.length === 0) return '';
    const count = this.older.size + sum(this.missing) + sum(this.damaged);
    const names = [...this.gone].sort();
    const left = names.length === 0 ? '' : `, leaving out ${plural(names.length, 'tool')} config.json no longer defines (${names.join(', ')})`;
    return shown(`argo: ${reasons.join('; ')}; ${count === 1 ? 'its' : 'their'} system prompt lists the tools as config.json defines them today${left}\n`);
  }
}

/** Refuses an --output that cannot name a file (a folder among them, named or found), before anything is read or written. */
export async function checkOutputName(output: string): Promise<void> {
  if (output === '') throw new UsageError('--output needs a file name (leave it out to write to standard output)');
  checkGivenPath(output, '--output', 'give a file\'s name (such as runs.jsonl), or leave it out to write to standard output');
  if (output.endsWith('/')) throw new UsageError(`--output ${shownPath(output)} ends in "/", so it names a folder, not a file: give a file's name (such as runs.jsonl)`);
  // A link to a folder cannot take the export either.
  if (await isFolder(output)) throw new UsageError(`--output ${shownPath(output)} is a folder, not a file: give a file's name in it (such as ${shownPath(join(output, 'runs.jsonl'))})`);
}

async function exportTrajectories(self: Command, given: ExportFlags, io: Io): Promise<Outcome> {
  // `-o -` is standard output, as for most tools; a file named "-" is `-o ./-`.
  const { output: named, ...rest } = given;
  const flags: ExportFlags = named === '-' || named === undefined ? rest : { ...rest, output: named };
  const settings = settingsOf(self);
  if (flags.output !== undefined) await checkOutputName(flags.output);
  // Checked before anything is read: one wrong -o would replace a day of the log with the export.
  if (flags.output !== undefined && (await landsInside(flags.output, settings.home))) {
    throw new UsageError(`--output ${shownPath(flags.output)} is inside Argo's data home (${settings.home}); write the export somewhere else`);
  }
  await recoverUnfinishedTurns(settings, io);
  const sessions = new SessionLookup(settings.paths.sessions);
  // Given but empty is not "all": buildQuery refuses it, as argo logs does.
  const query = await buildQuery(
    { ...(flags.session !== undefined ? { session: flags.session } : {}), ...(flags.since !== undefined ? { since: flags.since } : {}), ...(flags.until !== undefined ? { until: flags.until } : {}), status: ['ok'] },
    io.now(),
    sessions,
    settings.paths,
  );
  // Only lines with the "tools" key are decoded: years of plain turns are passed over as bytes.
  if (flags.all !== true) query.agentRuns = true;
  const { tools } = buildCatalog(toolsConfigOf(settings.agent), builtinTools());
  const kept = new Map<string, ReturnType<typeof readDefinitions>>();
  const notes = new FallbackNotes();
  // What the run sent (tool-definitions/<digest>.json); today's config only for a line without them.
  // A tool today's config does not define (an MCP server's, one removed) is left out, never faked.
  const definitionsOf = (entry: { id: string; tools?: string[] | undefined; tool_definitions_sha256?: string | undefined }): ToolDefinition[] => {
    const digest = entry.tool_definitions_sha256;
    if (digest !== undefined) {
      let found = kept.get(digest);
      if (found === undefined) {
        found = readDefinitions(settings.home, digest);
        kept.set(digest, found);
      }
      if (Array.isArray(found)) return found;
    }
    const names = entry.tools ?? [];
    const today = names.flatMap((name) => {
      const known = tools.get(name);
      return known ? [known] : [];
    });
    if (names.length > 0) {
      const kind = digest === undefined ? 'older' : kept.get(digest) === 'missing' ? 'missing' : 'damaged';
      notes.note(entry.id, kind, digest, names.filter((name) => !tools.has(name)));
    }
    return toolDefinitions(today);
  };
  const stats = new ScanStats();
  // Written as they are made, one at a time: years of agent runs are never held at once.
  const output = flags.output;
  const written = await writeLines(output, io, flags, async (write) => {
    let count = 0;
    for await (const { entry } of searchTurns(settings.paths.logs, query, stats)) {
      // Named as argo logs names it now: a renamed session's new name, never a removed one's name another may have taken.
      const trajectory = { ...renderTrajectory(entry, definitionsOf(entry), { thinking: flags.thinking }), ...(await sessions.namedNow(entry.session_id, entry.session)) };
      if (!(await write(`${JSON.stringify(trajectory)}\n`))) break;
      count++;
    }
    return count;
  }).catch((error: unknown) => {
    // The file -o named is the user's: what to do about it does not point at the data home.
    throw output === undefined ? error : namedFileError(error, output);
  });
  // The path is the user's, but a file name can hold a C1 CSI or a bidi control JSON leaves raw.
  const shown = untrustedTextFor(io.stderr);
  if (flags.output !== undefined) io.stderr.write(`argo: wrote ${plural(written, 'trajectory', 'trajectories')} to ${shown(shownPath(flags.output))}\n`);
  const fallback = notes.lines(shown);
  if (fallback !== '') io.stderr.write(fallback);
  const notice = stats.notice();
  if (notice) io.stderr.write(notice);
  return 'ok';
}
