import { Command, CommanderError, Option } from 'commander';
import type { FlagOverrides } from '../config/settings.js';
import { ArgoError, UsageError, messageLine } from '../errors.js';
import { discardTemporaryFiles, errnoOf, runLastSaves } from '../log/fs.js';
import { whenLockWaitIsLong } from '../log/lock.js';
import { untrustedTextFor } from '../output/terminal-text.js';
import { REPLAY_REASONS } from '../replay/types.js';
import type { ReplayReason, ReplaySpec } from '../replay/types.js';
import { ask } from './ask.js';
import { STDIN_SILENCE_MS, STDIN_WAITING_LINE, signalQuits, processIo, readAll } from './io.js';
import { pointHelpAt, usageErrorOutput } from './usage-output.js';
import type { Io } from './io.js';
import { EXIT_CODES, STOP_LINES, STOP_SIGNALS } from './outcome.js';
import { endOpenRow } from './open-row.js';
import { fileFailureLine, fileProblem } from './file-failure.js';
import { addOutputOptions, checkOutputFlags } from './output-flags.js';
import type { OutputFlags } from './output-flags.js';
import type { ReportOutcome, StopSignal } from './outcome.js';
import { parseBudget, parseInteger, parseNumber, parsePositiveInteger, parseReplaySpec } from './parse.js';
import { addCompanionOptions, agentFlags, checkAgentFlags, checkReason, companionSettings, promptFrom, routeWords } from './ask-flags.js';
import type { PromptText } from './ask-flags.js';
import type { CompanionFlags } from './ask-flags.js';
import { packageVersion } from './version.js';
import { parseToolList } from '../tools/toolsets.js';
import { DOCTOR_OPTIONS } from './doctor-options.js';
import { HELP_LAYOUT, HELP_WIDTHS } from './help.js';
import { endsOptions } from './typos.js';

interface AskFlags extends Omit<FlagOverrides, 'budget' | 'options' | 'system'>, CompanionFlags, OutputFlags {
  root?: string;
  yes?: boolean;
  ephemeralSystem?: string;
  replay?: ReplaySpec;
  reason?: ReplayReason;
  budget?: number;
  explain?: boolean;
  json?: boolean;
  stream: boolean;
  log: boolean;
}

/**
 * The commands are loaded only when the command line names them (or asks for help), so a plain
 * question does not pay for modules it never runs. Help lists them in this order.
 */
const LAZY_COMMANDS: Record<string, (program: Command, io: Io, setOutcome: ReportOutcome) => Promise<void>> = {
  sessions: async (program, io) => (await import('./sessions.js')).registerSessions(program, io),
  logs: async (program, io, setOutcome) => (await import('./logs.js')).registerLogs(program, io, setOutcome),
  chat: async (program, io, setOutcome) => (await import('./chat.js')).registerChat(program, io, setOutcome),
  last: async (program, io, setOutcome) => (await import('./last.js')).registerLast(program, io, setOutcome),
  rerun: async (program, io, setOutcome) => (await import('./rerun.js')).registerRerun(program, io, setOutcome),
  completion: async (program, io, setOutcome) => (await import('./completion-command.js')).registerCompletion(program, io, setOutcome),
  __complete: async (program, io, setOutcome) => (await import('./completion-command.js')).registerCompleteHelper(program, io, setOutcome),
  serve: async (program, io, setOutcome) => (await import('./serve.js')).registerServe(program, io, setOutcome),
  tools: async (program, io, setOutcome) => (await import('./agent-commands.js')).registerTools(program, io, setOutcome),
  stop: async (program, io, setOutcome) => (await import('./agent-commands.js')).registerStop(program, io, setOutcome),
  memo: async (program, io, setOutcome) => (await import('./agent-commands.js')).registerMemo(program, io, setOutcome),
  export: async (program, io, setOutcome) => (await import('./agent-commands.js')).registerExport(program, io, setOutcome),
  doctor: (program, io, setOutcome) => {
    program
      .command('doctor')
      .description('check Ollama, the model, the data directory and the config')
      .option('--home <dir>', 'data directory')
      .option('--host <url>', 'Ollama address')
      .option('-m, --model <name>', 'model to check')
      .addOption(new Option('--api <endpoint>', 'the endpoint to check the model on (config, default chat)').choices(['chat', 'generate']))
      .option('--json', 'one JSON object: {ok, checks: [{check, ok, detail}]}')
      .action(async (flags: FlagOverrides & { json?: boolean }, command: Command) => setOutcome(await (await import('./doctor.js')).doctor(flags, io, command)));
    return Promise.resolve();
  },
};
const HELP_WORDS = new Set(['-h', '--help', 'help']);

export async function buildProgram(io: Io, setOutcome: ReportOutcome, args: readonly string[]): Promise<Command> {
  // Set before any subcommand is created, so every command inherits them: usage errors are one
  // line, prefixed, with the help hint inline, and end in an exception main() maps to exit 2.
  const program = new Command('argo')
    .exitOverride()
    .configureHelp(HELP_LAYOUT)
    .configureOutput({
      ...HELP_WIDTHS,
      // Commander puts its "(Did you mean …?)" on a line of its own: one line, as every error, its suggestion worded as ours.
      outputError: usageErrorOutput('argo', process.stderr, true),
    })
    .description('Ask a local Ollama model from the shell, with deterministic replay of earlier turns.')
    .version(packageVersion(), '-v, --version', 'print the version (-V too)')
    .argument('[prompt...]', 'the question; text piped on stdin is appended after it')
    .option('-m, --model <name>', 'model (default: the session\'s last model, then ARGO_MODEL, config, "argo")')
    .option('-s, --session <name>', 'session name (ARGO_SESSION, config, default "default")')
    .option('-r, --replay <spec>', 'none | last:N | session (default: ARGO_REPLAY, config "defaultReplay", else none)', parseReplaySpec)
    .addOption(new Option('--reason <reason>', 'replay reason (default: inferred)').choices(REPLAY_REASONS))
    .option('--budget <chars>', 'replay cap in characters (config "replay.budget", default 5500)', parseBudget)
    .option('--persona <name>', 'persona (config, default "neutral")')
    .addOption(new Option('--verbosity <level>', 'answer length (config, default auto)').choices(['auto', 'short', 'long']))
    .option('--mode <name>', 'named system prompt: code, review, shell, writing, or one from config (config "mode", default none)')
    .addOption(new Option('--api <endpoint>', 'Ollama endpoint (config, default chat)').choices(['chat', 'generate']))
    .option('--explain', 'print the replay decision and the exact request; call no model, write no log')
    .option('--json', 'print one JSON object instead of streamed text')
    .option('--no-stream', 'ask Ollama for a single response')
    .option('--no-log', 'do not write this turn')
    .option('--host <url>', 'Ollama address (OLLAMA_HOST, config, default 127.0.0.1:11434)')
    .option('--temperature <n>', 'sampling temperature', parseNumber)
    .option('--seed <n>', 'sampling seed', parseInteger)
    .option('--num-ctx <n>', 'context window in tokens', parsePositiveInteger)
    .option('--keep-alive <duration>', 'how long Ollama keeps the model loaded (e.g. 10m, -1)')
    .option('--think <level>', 'thinking models: on, off, low, medium, high or max (config "think"; default: the model\'s own, on since Ollama 0.12.4)')
    .option('--hide-thinking', 'a thinking model\'s reasoning is not shown as it streams on the terminal, only a spinner (config "hideThinking")')
    .option('--no-hide-thinking', 'show the reasoning even when config.json hides it')
    .option('--home <dir>', 'data directory (ARGO_HOME, default ~/.argo)')
    // Parsed here, not in the action, so `argo chat` (which copies these options) gets a list too.
    .option('-T, --tools <list>', 'agent mode: toolsets and tools, comma-separated, repeatable (fs, edit, shell, web, memo, history, dev, mcp:NAME; "none" turns config\'s off)', addToolNames)
    .option('--root <dir>', 'the directory file tools may use (default: the working directory)')
    .option('--yes', 'run side-effecting tool calls without asking')
    .option('--max-iterations <n>', 'most tool rounds before stopping (config "maxIterations", default 10)', parsePositiveInteger)
    .option('--ephemeral-system <text>', 'extra guidance for this run: logged, never exported')
    .action(async (words: string[], flags: AskFlags) => {
      const route = routeWords(program, words, args, io, commandNames(program));
      if (route === 'help-shown') return;
      // Bare `argo` on a terminal: a chat with the same flags.
      if (route === 'chat') {
        setOutcome(await (await import('./chat.js')).chat(flags, io));
        return;
      }
      const { settings, replay, replaySource } = await companionSettings(flags);
      checkReason(flags.reason, replay, replaySource, settings.paths.config);
      checkAgentFlags(flags, settings);
      const prompt = await readPrompt(words, io, flags.stdin !== false);
      setOutcome(
        await ask(
          settings,
          {
            ...prompt,
            replay,
            ...(flags.reason ? { reason: flags.reason } : {}),
            explain: flags.explain === true,
            json: flags.json === true,
            ollamaStream: flags.stream,
            log: flags.log,
            stats: flags.stats === true,
            quiet: flags.quiet === true,
            agent: agentFlags(flags),
            raw: flags.raw === true,
            color: flags.color,
          },
          io,
        ),
      );
    });
  addCompanionOptions(program, true);

  addOutputOptions(program);
  // Options after a subcommand's name belong to it (`argo logs --home X`), not to the prompt command.
  program.enablePositionalOptions();
  // After a `--` that ends argo's options every word is the prompt (`argo -- stop`): no command is
  // registered then, since commander would run one named there.
  if (!endsOptions(args, program.options)) {
    const help = args.some((word) => HELP_WORDS.has(word));
    // A completion script names every command, so it needs them all, as help does.
    if (help || args.includes('completion')) await registerAll(program, io, setOutcome);
    else for (const name of Object.keys(LAZY_COMMANDS)) if (args.includes(name)) await register(name, program, io, setOutcome);
  }
  // The commands' own (the program has its own by now).
  addOutputOptions(program);
  // The same between a command and its own subcommands (`argo logs --json check`).
  for (const parent of [program, ...program.commands.filter((command) => command.commands.length > 0)]) {
    parent.hook('preSubcommand', (_parent, sub) => carryOver(parent, sub));
  }
  program.hook('preAction', (_program, action) => checkOutputFlags(action.opts<OutputFlags>()));
  for (const command of program.commands) pointHelpAt(command);
  return program;
}


/**
 * Options written before a command's name (`argo --no-log chat`) are parsed as the question's. One
 * is carried to the command when it is the same option there (chat copies the question's; a list
 * given on both sides adds up, a single value after the name wins); `--home` names the data home
 * for every command; doctor reads the question's own. Any other is refused, saying where to write
 * it: a flag is never dropped in silence, nor read with another command's meaning (serve's --host
 * is the address it binds, not Ollama's). Run before the command parses, so a carried value counts
 * for its required options.
 */
function carryOver(parent: Command, sub: Command): void {
  const done = new Set<string>();
  for (const option of parent.options) {
    const key = option.attributeName();
    if (done.has(key) || parent.getOptionValueSource(key) !== 'cli') continue;
    done.add(key);
    if (parent.parent === null && sub.name() === 'doctor' && (DOCTOR_OPTIONS as readonly string[]).includes(key)) continue;
    const value: unknown = parent.getOptionValue(key);
    if (key === 'home') {
      if (sub.options.some((own) => own.attributeName() === 'home')) sub.setOptionValueWithSource('home', value, 'cli');
      continue;
    }
    if (sub.options.includes(option)) {
      sub.setOptionValueWithSource(key, value, 'cli');
      continue;
    }
    // --color and --no-color share a value: name the one typed (--no-color sets false).
    const typed = parent.options.find((one) => one.attributeName() === key && one.negate === (value === false)) ?? option;
    const flag = typed.long ?? typed.flags;
    const name = commandPath(sub);
    const owner = parent.parent === null ? 'the question' : `"${commandPath(parent)}"`;
    throw new UsageError(
      // A hidden option is one the command knows only to refuse (chat's --json): not to be pointed at.
      sub.options.some((own) => own.long === typed.long && !own.hidden)
        ? `write ${flag} after the command's name (argo ${name} ${flag} …): before it, ${flag} is an option of ${owner}`
        : `"${name}" does not take ${flag} (argo ${name} --help lists what it takes)`,
    );
  }
}

/** "logs rm" for `argo logs rm`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at = command; at.parent !== null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** "fs, edit" → ["fs", "edit"], added to what earlier -T gave (`-T fs -T edit`). */
function addToolNames(value: string, previous: string[] = []): string[] {
  return [...previous, ...parseToolList(value, '--tools')];
}

const registered = new WeakMap<Command, Set<string>>();

/** Registers every command but the completion helper, in help's order. */
async function registerAll(program: Command, io: Io, setOutcome: ReportOutcome): Promise<void> {
  for (const name of Object.keys(LAZY_COMMANDS)) if (name !== '__complete') await register(name, program, io, setOutcome);
}

/** Registers a lazily loaded command once. */
async function register(name: string, program: Command, io: Io, setOutcome: ReportOutcome): Promise<void> {
  const done = registered.get(program) ?? new Set<string>();
  registered.set(program, done);
  const add = LAZY_COMMANDS[name];
  if (add === undefined || done.has(name)) return;
  done.add(name);
  await add(program, io, setOutcome);
}

/** The commands a lone word is checked against for typos: those registered, and those loaded only when named. */
function commandNames(program: Command): string[] {
  const names = [...Object.keys(LAZY_COMMANDS), ...program.commands.map((command) => command.name())];
  return [...new Set(names)].filter((name) => !name.startsWith('_'));
}

async function readPrompt(words: string[], io: Io, useStdin: boolean): Promise<PromptText> {
  if (!useStdin) return promptFrom(words, 'unread');
  if (io.stdin.isTTY) return promptFrom(words, 'terminal');
  // Piped text is kept as written (indentation, trailing spaces); only the final line break goes.
  const whenSilent = { afterMs: STDIN_SILENCE_MS, say: () => io.stderr.write(STDIN_WAITING_LINE) };
  return promptFrom(words, { piped: (await readAll(io.stdin, { whenSilent })).replace(/(\r?\n)+$/, '') });
}

/** The one place that turns errors into messages and exit codes. */
export async function main(argv: string[] = process.argv): Promise<void> {
  const io = processIo();
  // Ctrl-C, SIGTERM and SIGHUP quit at once unless a command is handling them (a streaming answer
  // ends cleanly first and is logged); a second Ctrl-C or SIGTERM before it has finished always
  // quits (signalQuits). A turn being answered saves its draft with the answer so far first, for the
  // next argo to log; temporary files being written (a `logs rm` copy) are removed: the originals
  // are untouched until their rename. Like any run that does not succeed, it ends with one line
  // saying why, on a row of its own.
  for (const signal of Object.keys(STOP_SIGNALS) as StopSignal[]) {
    process.on(signal, () => {
      if (!signalQuits(signal)) return;
      // Temporary files first: a draft being created in place (no hard links) is one, and the save puts it back whole.
      discardTemporaryFiles();
      runLastSaves(signal);
      const outcome = STOP_SIGNALS[signal];
      endOpenRow(io.stderr);
      io.stderr.write(`argo: ${STOP_LINES[outcome]}\n`);
      process.exit(EXIT_CODES[outcome]);
    });
  }
  // EPIPE: the reader went away (the command hears of it through onOutputClosed). EIO: the terminal
  // was closed; SIGHUP follows and ends the command, which must still log its turn, not crash. Any
  // other failure (a full disk behind `>`) ends the output too, and the run says so at its end. On
  // standard error nothing more can be said: its failures must only not end a turn unlogged.
  const output: { failure: unknown } = { failure: null };
  process.stdout.on('error', (error) => {
    const code = errnoOf(error);
    if (code !== 'EPIPE' && code !== 'EIO') output.failure ??= error;
  });
  process.stderr.on('error', () => undefined);
  whenLockWaitIsLong((line) => io.stderr.write(`argo: ${untrustedTextFor(io.stderr)(line)}\n`));
  // -V is the same as -v (both are common); commander takes one flag pair.
  const words = argv.slice(2).map((word, index) => (index === 0 && word === '-V' ? '-v' : word));
  const program = await buildProgram(io, (outcome) => (process.exitCode = EXIT_CODES[outcome]), words);
  try {
    await program.parseAsync(words, { from: 'user' });
  } catch (error) {
    process.exitCode = exitCodeFor(error, io);
  }
  // A command that went on as if its output were read (argo logs > a full disk) did not succeed. One
  // that failed, or a turn that stopped for it, has said so already. A failed write is told on the
  // next tick: its last one is heard first.
  await new Promise<void>((resolve) => setImmediate(resolve));
  if (output.failure !== null && (process.exitCode ?? 0) === 0) {
    io.stderr.write(`argo: cannot write standard output (${untrustedTextFor(io.stderr)(fileProblem(output.failure))}); what it got is incomplete\n`);
    process.exitCode = EXIT_CODES.failed;
  }
}

function exitCodeFor(error: unknown, io: Io): number {
  if (error instanceof CommanderError) {
    const shown = error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help';
    return shown ? EXIT_CODES.ok : EXIT_CODES.usage;
  }
  // A message may quote what a server, a file, the model or the user wrote: shown, never obeyed, on a
  // terminal, and one line whatever it quotes (a line break is written as \n).
  const shown = (text: string): string => untrustedTextFor(io.stderr)(messageLine(text));
  if (error instanceof ArgoError) {
    io.stderr.write(`argo: ${shown(error.message)}\n`);
    return error instanceof UsageError ? EXIT_CODES.usage : EXIT_CODES.failed;
  }
  const file = fileFailureLine(error);
  if (file !== null) {
    io.stderr.write(`argo: ${shown(file)}\n`);
    return EXIT_CODES.failed;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`argo: unexpected failure: ${shown(message)} (please report it with the command you ran; ARGO_DEBUG=1 adds details)\n`);
  if (process.env.ARGO_DEBUG && error instanceof Error) io.stderr.write(`${error.stack}\n`);
  return EXIT_CODES.failed;
}
