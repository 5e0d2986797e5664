// The flags the everyday companion adds to `argo "question"` and `argo chat`, and how they become
// settings: -o options, --system / --system-file, --stats, -q, -c/--continue, --no-stdin.
import { closeSync, constants, createReadStream, fstat, open } from 'node:fs';
import type { Stats } from 'node:fs';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { checkGivenPath, type FlagOverrides, type Settings } from '../config/settings.js';
import { UsageError, shownPath } from '../errors.js';
import { parseOptionAssignments } from '../ollama/options.js';
import { codePoints } from '../replay/budget.js';
import { reasonConflict } from '../replay/reason.js';
import type { ReplayReason, ReplaySpec } from '../replay/types.js';
import { NO_TOOLS } from '../config/tool-list.js';
import type { AgentFlags } from './agent.js';
import { collect } from './parse.js';
import { STDIN_LIMIT_BYTES, notText, readBytes } from './io.js';
import { isBlankPrompt, typedPrompt } from '../text/prompt.js';
import { decodeUtf8 } from '../text/utf8.js';
import { fileProblem } from './file-failure.js';
import { settingsFor } from './settings.js';
import { judgeWords, optionAmidPrompt, typoMessage } from './typos.js';
import { shellWord } from '../text/shell-word.js';

export interface CompanionFlags {
  option?: string[];
  system?: string;
  systemFile?: string;
  stats?: boolean;
  quiet?: boolean;
  continue?: boolean;
  /** false with --no-stdin. */
  stdin?: boolean;
  replay?: ReplaySpec;
  session?: string;
}

export function addCompanionOptions(command: Command, withStdin: boolean): Command {
  command
    .option('-o, --option <key=value>', 'an Ollama model option, e.g. -o num_predict=200 -o stop=END (repeatable; see docs/cli.md)', collect)
    .option('--system <text>', 'your own system prompt, sent before the mode and persona texts')
    .option('--system-file <file>', 'the system prompt from a file')
    .option('--stats', "after the answer, Ollama's figures on stderr: prompt and answer tokens, tokens/s, load and total time")
    .option('-q, --quiet', 'no replay note or tool trace on stderr')
    .option('-c, --continue', 'continue the most recently used session, replaying it (--replay session)');
  if (withStdin) command.option('--no-stdin', 'do not read standard input (for loops: while read q; do argo --no-stdin "$q"; done < file)');
  return command;
}

/** -o and the system prompt as settings overrides; a bad option or an unreadable file is a usage error. */
export async function companionOverrides(flags: CompanionFlags): Promise<Pick<FlagOverrides, 'options' | 'system'>> {
  if (flags.system !== undefined && flags.systemFile !== undefined) throw new UsageError('--system and --system-file both give the system prompt: choose one');
  let system = flags.system;
  if (flags.systemFile !== undefined) {
    checkGivenPath(flags.systemFile, '--system-file', 'name the file that holds the system prompt, or use --system TEXT');
    const file = shownPath(flags.systemFile);
    let bytes: Buffer;
    try {
      bytes = await readSystemFile(flags.systemFile);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new UsageError(`--system-file: cannot read ${file}: ${fileProblem(error)}`, { cause: error });
    }
    const decoded = decodeUtf8(bytes);
    if (!decoded.ok) throw new UsageError(notText(`--system-file ${file}`, bytes, decoded, (encoding) => `iconv -f ${encoding} -t utf-8 ${file} > system.txt`));
    system = decoded.text;
  }
  const options = parseOptionAssignments(flags.option ?? []);
  return { ...(Object.keys(options).length > 0 ? { options } : {}), ...(system !== undefined ? { system } : {}) };
}

/**
 * A --system-file's bytes, at most STDIN_LIMIT_BYTES of them, as standard input's. A pipe
 * (`--system-file <(cmd)`, a named one whose writer comes later) is opened without waiting and read
 * as the event loop reads a socket: a thread blocked in open(2) or read(2) on it would keep the
 * process from exiting after Ctrl-C. A terminal is refused: it would be read in the same blocking way.
 */
async function readSystemFile(path: string): Promise<Buffer> {
  // Loaded only here: a run without --system-file (an agent run off a terminal) loads no tty or net.
  const [{ isatty }, { Socket }] = await Promise.all([import('node:tty'), import('node:net')]);
  const fd = await promisify(open)(path, constants.O_RDONLY | constants.O_NONBLOCK);
  let stats: Stats;
  try {
    stats = await promisify(fstat)(fd);
    if (isatty(fd)) throw new UsageError(`--system-file ${shownPath(path)} is a terminal: put the system prompt in a file, or use --system TEXT`);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  const stream = stats.isFIFO() || stats.isSocket() ? new Socket({ fd, readable: true, writable: false }) : createReadStream('', { fd });
  const limit = STDIN_LIMIT_BYTES;
  return readBytes(stream, {
    limit,
    tooLarge: () => new UsageError(`--system-file ${shownPath(path)} is larger than ${limit / 1024 / 1024} MiB, the most argo takes as a system prompt; give a shorter one`),
  });
}

/**
 * Where a turn's replay came from, for messages: --replay, -c, the command's own (a chat's
 * `session`), ARGO_REPLAY, config "defaultReplay", or none given.
 */
export type ReplaySource = 'flag' | 'continue' | 'command' | 'env' | 'config' | 'default';

/**
 * Settings and the replay spec for a turn: flags over environment and config, with -c choosing
 * the most recently used session and `--replay session`. Without --replay, the default replay
 * (ARGO_REPLAY, config "defaultReplay") applies.
 */
export async function companionSettings(
  flags: CompanionFlags & FlagOverrides,
  fallbackReplay?: ReplaySpec,
): Promise<{ settings: Settings; replay: ReplaySpec; replaySource: ReplaySource }> {
  // -c replays the session it picks unless --replay says otherwise.
  const replay = flags.replay ?? fallbackReplay ?? (flags.continue === true ? { kind: 'session' as const } : undefined);
  const overrides = { ...flags, ...(await companionOverrides(flags)), ...(replay !== undefined ? { replay } : {}) };
  const settings = settingsFor(overrides);
  const source = settings.defaultReplaySource;
  const replaySource: ReplaySource = flags.replay !== undefined ? 'flag' : fallbackReplay !== undefined ? 'command' : flags.continue === true ? 'continue' : source === 'flag' ? 'default' : source;
  if (flags.continue !== true) return { settings, replay: settings.defaultReplay, replaySource };
  if (flags.session !== undefined) throw new UsageError('--continue picks the most recently used session; leave out --session (or use --session NAME --replay session)');
  const latest = await latestSession(settings.paths.sessions, '--continue');
  return { settings: settingsFor({ ...overrides, session: latest }), replay: settings.defaultReplay, replaySource };
}

/**
 * The most recently used session's name (for -c and `argo last`). None readable is a usage error
 * that names the damaged records, if that is why, rather than saying there is no session.
 */
export async function latestSession(dir: string, where: string): Promise<string> {
  // Loaded only here: reading session records needs their codec, which a plain question does not.
  const { byLastUsed, scanSessions } = await import('../sessions/store.js');
  const { records, damaged } = await scanSessions(dir);
  const [latest] = records.sort(byLastUsed);
  if (latest !== undefined) return latest.name;
  const [first] = damaged;
  if (first !== undefined) {
    const { commandWithNames } = await import('../sessions/names.js');
    throw new UsageError(`${where}: no session can be read: ${damaged.map((record) => record.path).join(', ')} ${damaged.length === 1 ? 'is' : 'are'} damaged (${first.problem}); ${commandWithNames('argo sessions rm', first.name)} removes it, argo -s NAME starts another`);
  }
  throw new UsageError(`${where}: there is no session yet; ask something first (argo "…")`);
}

/** Tools were asked for (`none` turns config's default off). */
export function usesTools(settings: Settings): boolean {
  const tools = settings.agent.tools;
  return tools.length > 0 && !(tools.length === 1 && tools[0] === NO_TOOLS);
}

/** Agent mode's flags mean nothing without tools: refused rather than dropped in silence. */
export function checkAgentFlags(flags: { root?: string; yes?: boolean; ephemeralSystem?: string; maxIterations?: number }, settings: Settings): void {
  if (usesTools(settings)) return;
  const given = [flags.root !== undefined && '--root', flags.yes === true && '--yes', flags.ephemeralSystem !== undefined && '--ephemeral-system', flags.maxIterations !== undefined && '--max-iterations'].find((flag) => flag !== false);
  if (given === undefined) return;
  if (settings.agent.tools.includes(NO_TOOLS)) throw new UsageError(`${given} is for agent mode, and --tools ${NO_TOOLS} turns the tools off: drop one of them`);
  throw new UsageError(`${given} is for agent mode: add --tools (e.g. --tools fs), or "tools" in config.json`);
}

/** Agent mode's own flags, as a one-liner and a chat pass them to a turn. */
export function agentFlags(flags: { root?: string; yes?: boolean; ephemeralSystem?: string }): AgentFlags {
  return { yes: flags.yes === true, ...(flags.root !== undefined ? { root: flags.root } : {}), ...(flags.ephemeralSystem !== undefined ? { ephemeralSystem: flags.ephemeralSystem } : {}) };
}

/**
 * --reason needs a replay, and a session replay always replays for reason "session" (docs/replay.md):
 * the message names where that replay came from, which the user may never have typed.
 */
export function checkReason(reason: ReplayReason | undefined, replay: ReplaySpec, source: ReplaySource, configPath: string): void {
  if (reason === undefined) return;
  switch (reasonConflict(reason, replay)) {
    case 'no_replay':
      throw new UsageError('--reason needs --replay last:N or --replay session');
    case 'session_only':
      throw new UsageError(sessionOnlyMessage(reason, source, configPath));
    case null:
      return;
  }
}

function sessionOnlyMessage(reason: ReplayReason, source: ReplaySource, configPath: string): string {
  const fix = `--replay last:N with --reason ${reason}`;
  const whole = (who: string, what: string): string => `${who} replays the whole session, which always uses reason "session"; ${what}`;
  switch (source) {
    case 'continue':
      return whole('-c', `add ${fix} (argo -c -r last:3 --reason ${reason} "…")`);
    case 'command':
      return whole('argo chat (by default)', `give ${fix} (argo chat -r last:3 --reason ${reason})`);
    case 'env':
      return whole('ARGO_REPLAY=session', `give ${fix} (a flag wins over ARGO_REPLAY), or set ARGO_REPLAY=last:N`);
    case 'config':
      return whole(`"defaultReplay": "session" in ${configPath}`, `give ${fix} (a flag wins over "defaultReplay")`);
    case 'flag':
    case 'default':
      return `--replay session always uses reason "session"; use ${fix}`;
  }
}

/** The question's flags `argo chat` does not take (a chat has no one answer to print as JSON or explain). */
export const NOT_IN_CHAT: ReadonlySet<string> = new Set(['--version', '--explain', '--json', '--no-stdin']);

/**
 * What `argo` with no words does: on a terminal, a chat; piped, the piped text is the question.
 * `given`: the flags written (long names). One a chat does not take is never dropped: --no-stdin
 * leaves the question without text (promptFrom says so), and --explain or --json need a question.
 */
export function wordlessRoute(terminal: boolean, given: readonly string[]): 'prompt' | 'chat' {
  // --no-stdin first: with it, "pipe it on stdin" would be no advice.
  if (!terminal || given.includes('--no-stdin')) return 'prompt';
  const refused = given.find((flag) => NOT_IN_CHAT.has(flag));
  if (refused === undefined) return 'chat';
  throw new UsageError(`no prompt: ${refused} is for one question, not a chat; pass the question as arguments (argo ${refused} "why is the sky blue?") or pipe it on stdin`);
}

/**
 * What the words of `argo …` are before they become a prompt: `help [command]` shows help, a lone
 * word close to a command name is a typo (usage error), and no words with a terminal on stdin
 * starts a chat (wordlessRoute).
 */
export function routeWords(program: Command, words: readonly string[], args: readonly string[], io: { stdin: { isTTY?: boolean }; stdout: { write(text: string): unknown } }, commands: readonly string[]): 'prompt' | 'help-shown' | 'chat' {
  if (words.length === 0) {
    const given = program.options.filter((option) => program.getOptionValueSource(option.attributeName()) === 'cli').map((option) => option.long ?? option.flags);
    return wordlessRoute(io.stdin.isTTY === true, given);
  }
  const find = (parent: Command, name: string): Command | undefined => parent.commands.find((command) => command.name() === name);
  const subcommandsOf = (name: string): string[] => find(program, name)?.commands.map((command) => command.name()) ?? [];
  const verdict = judgeWords(words, args.includes('--'), commands, subcommandsOf);
  if (verdict.kind === 'typo') throw new UsageError(typoMessage(verdict));
  if (verdict.kind === 'prompt') {
    checkNoOptionAmidPrompt(args, program);
    return 'prompt';
  }
  let target: Command | undefined = program;
  for (const name of verdict.command?.split(' ') ?? []) target = target === undefined ? undefined : find(target, name);
  io.stdout.write((target ?? program).helpInformation());
  return 'help-shown';
}

/**
 * An option between the prompt's words (`argo what does -s mean in ls`) is refused rather than taken
 * out of the prompt in silence; the fix shows the line with the prompt after `--`.
 */
function checkNoOptionAmidPrompt(args: readonly string[], program: Command): void {
  const amid = optionAmidPrompt(args, program.options);
  if (amid === null) return;
  const line = ['argo', ...[...amid.options, '--', ...amid.prompt].map(shellWord)].join(' ');
  throw new UsageError(`argo reads ${amid.option} among the prompt's words as its own option; to ask with it in the prompt, quote the prompt or put the prompt after -- (${line}); to give the option, write it before the prompt`);
}

/** Standard input as a prompt sees it: the text piped, or why none was read (a terminal, or --no-stdin). */
export type StdinText = { piped: string } | 'terminal' | 'unread';

/** A question's text, and when piped text follows typed words, how many code points the words take. */
export interface PromptText {
  prompt: string;
  typedChars?: number;
}

/**
 * The prompt: the words, then piped text after a blank line. None at all is a usage error, one line
 * saying how to give one; no help before it, since the line is what a script's log shows. The typed
 * words are what its type and replay reason are read from (docs/replay.md); without them the piped
 * text is the question.
 */
export function promptFrom(words: readonly string[], stdin: StdinText): PromptText {
  const piped = typeof stdin === 'object' ? stdin.piped : '';
  const typed = typedPrompt(words.join(' '));
  const parts = [typed, piped].filter((part) => !isBlankPrompt(part));
  const prompt = parts.join('\n\n');
  if (parts.length === 2) return { prompt, typedChars: codePoints(typed) };
  if (prompt !== '') return { prompt };
  if (stdin === 'unread') throw new UsageError('no prompt: --no-stdin leaves standard input unread; pass the question as arguments (argo --no-stdin "why is the sky blue?"), or run argo chat');
  const why = stdin === 'terminal' ? '' : stdin.piped === '' ? 'standard input was empty; ' : 'standard input had only whitespace; ';
  throw new UsageError(`no prompt: ${why}pass the question as arguments (argo "why is the sky blue?"), pipe it on stdin, or run argo chat`);
}
