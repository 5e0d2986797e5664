// `argo completion bash|zsh|fish`, and the hidden `argo __complete sessions|models` the scripts call
// for names that change (so a script never needs regenerating).
import type { Command, Option } from 'commander';
import { Argument } from 'commander';
import { SHELLS, completionScript } from '../cli/completion.js';
import type { CompletionCommand, CompletionSpec, FlagValue, NameSource, Shell, ValueFlag } from '../cli/completion.js';
import { COLOR_MODES } from '../output/color.js';
import { REASON_FILTERS, STATUS_CHOICES, STRENGTH_FILTERS, TYPE_CHOICES } from '../query/query.js';
import { THINK_LEVELS } from '../replay/prompt.js';
import { sessionNames } from '../sessions/store.js';
import { newTransport } from './ask.js';
import { settingsFor } from './settings.js';
import type { Io } from './io.js';
import type { ReportOutcome } from './outcome.js';

export function registerCompletion(program: Command, io: Io, setOutcome: ReportOutcome): void {
  program
    .command('completion')
    .description('print a shell completion script (with session and model names): eval "$(argo completion bash)"')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: Shell) => {
      io.stdout.write(completionScript(shell, specOf(program)));
      setOutcome('ok');
    });
}

function flagsOf(command: Command): string[] {
  return command.options.filter((option) => !option.hidden).flatMap(spellingsOf);
}

function spellingsOf(option: Option): string[] {
  return [option.short, option.long].filter((flag): flag is string => flag !== undefined);
}

/** Flags whose value is a name from Argo's data, by long flag: commander cannot say that. */
const NAME_FLAGS: Readonly<Record<string, NameSource>> = { '--session': 'sessions', '--model': 'models' };

/**
 * The words of flags whose parser checks them rather than commander (which knows argChoices), from
 * the parsers' own lists; --replay's last:N is offered as three examples. logs' filters take
 * comma-separated lists, which commander's choices would refuse whole; a flag with commander's
 * choices (a question's --reason) keeps them.
 */
const PARSED_CHOICES: Readonly<Record<string, readonly string[]>> = {
  '--think': ['on', 'off', ...THINK_LEVELS],
  '--color': COLOR_MODES,
  '--replay': ['none', 'session', 'last:1', 'last:3', 'last:5'],
  '--type': TYPE_CHOICES,
  '--status': STATUS_CHOICES,
  '--strength': STRENGTH_FILTERS,
  '--reason': REASON_FILTERS,
};

/** A value's placeholder that names a path, as help shows it: --home <dir>, --system-file <file>. */
const PATH_PLACEHOLDERS: Readonly<Record<string, FlagValue>> = { '<dir>': 'folders', '<file>': 'files' };

function valueOf(option: Option): FlagValue {
  const long = option.long ?? '';
  const names = NAME_FLAGS[long];
  if (names !== undefined) return { names };
  const choices = option.argChoices ?? PARSED_CHOICES[long];
  if (choices !== undefined) return { choices };
  const placeholder = /<[^>]*>|\[[^\]]*\]/.exec(option.flags)?.[0] ?? '';
  return PATH_PLACEHOLDERS[placeholder] ?? 'text';
}

/** The flags of `command` that take a value, and what each value is completed from. */
function valuesOf(command: Command): ValueFlag[] {
  return command.options.filter((option) => !option.hidden && (option.required || option.optional)).map((option) => ({ flags: spellingsOf(option), value: valueOf(option) }));
}

/**
 * Flags that take a value in every command that has them (-q is --quiet for a question, --grep TEXT
 * for logs: a word after it may be a command, so it is not one).
 */
function valueFlagsOf(program: Command): string[] {
  const options = allCommands(program).flatMap((command) => command.options);
  const flags = (taking: boolean): string[] =>
    options.filter((option) => (option.required || option.optional) === taking).flatMap(spellingsOf);
  const boolean = new Set(flags(false));
  return [...new Set(flags(true))].filter((flag) => !boolean.has(flag));
}

/**
 * Positional arguments completed from Argo's data, by command path: commander cannot say that an
 * argument is a session name. Only the first argument of these is one (rename's and fork's second
 * is a new name).
 */
const NAME_ARGUMENTS: Readonly<Record<string, readonly (NameSource | null)[]>> = {
  'sessions show': ['sessions'],
  'sessions rm': ['sessions'],
  'sessions rename': ['sessions', null],
  'sessions fork': ['sessions', null],
  'sessions reindex': ['sessions'],
};

function commandOf(command: Command, parents: string): CompletionCommand {
  const path = `${parents}${command.name()}`;
  const subcommands = command.commands.filter((sub) => !sub.name().startsWith('_')).map((sub) => commandOf(sub, `${path} `));
  const args = NAME_ARGUMENTS[path];
  return {
    name: command.name(),
    ...(command.aliases().length > 0 ? { aliases: command.aliases() } : {}),
    description: command.description(),
    options: flagsOf(command),
    values: valuesOf(command),
    words: command.registeredArguments.flatMap((argument) => argument.argChoices ?? []),
    ...(args !== undefined ? { args: [...args] } : {}),
    ...(subcommands.length > 0 ? { subcommands } : {}),
  };
}

function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

export function specOf(program: Command): CompletionSpec {
  return {
    options: flagsOf(program),
    values: valuesOf(program),
    valueFlags: valueFlagsOf(program),
    commands: program.commands.filter((command) => !command.name().startsWith('_')).map((command) => commandOf(command, '')),
  };
}

export function registerCompleteHelper(program: Command, io: Io, setOutcome: ReportOutcome): void {
  program
    .command('__complete', { hidden: true })
    .argument('<what>', 'sessions or models')
    .option('--home <dir>', 'data directory')
    .option('--host <url>', 'Ollama address')
    .action(async (what: string, _flags: unknown, command: Command) => {
      // The --home and --host of the line being completed: names come from where that command will look.
      // Completion must never print an error into the shell: nothing is printed when a source fails.
      const names = await namesOf(what, command.optsWithGlobals<{ home?: string; host?: string }>()).catch(() => []);
      io.stdout.write(names.map((name) => `${name}\n`).join(''));
      setOutcome('ok');
    });
}

/**
 * The longest a Tab waits for Ollama's model names, connecting included: the shell is frozen
 * meanwhile, so an Ollama that does not answer gets no names rather than timeouts.idleMs.
 */
export const MODEL_NAMES_MS = 1500;

async function namesOf(what: string, flags: { home?: string; host?: string }): Promise<string[]> {
  // Completion reads none of the turn's settings: a bad ARGO_SESSION, ARGO_REPLAY or ARGO_MODEL must not cost the Tab its names.
  const settings = settingsFor({ ...(flags.home !== undefined ? { home: flags.home } : {}), ...(flags.host !== undefined ? { host: flags.host } : {}) }, []);
  if (what === 'sessions') return sessionNames(settings.paths.sessions);
  if (what === 'models') {
    const bounded = { ...settings, retries: { attempts: 1, initialDelayMs: 0 }, timeouts: { ...settings.timeouts, idleMs: MODEL_NAMES_MS } };
    return newTransport(bounded).installedModels();
  }
  return [];
}
