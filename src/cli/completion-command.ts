// `argo completion bash|zsh|fish`, and the hidden `argo __complete sessions|models` the scripts call
// for names that change (so a script never needs regenerating).
import type { Command } from 'commander';
import { Argument } from 'commander';
import { SHELLS, completionScript } from '../cli/completion.js';
import type { CompletionSpec, Shell } from '../cli/completion.js';
import { listSessions } from '../sessions/store.js';
import { newTransport } from './ask.js';
import { settingsOf } from './common.js';
import type { Io } from './io.js';
import type { ReportOutcome } from './outcome.js';

export function registerCompletion(program: Command, io: Io, setOutcome: ReportOutcome): void {
  program
    .command('completion')
    .description('print a shell completion script (with session and model names): source <(argo completion bash)')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: Shell) => {
      io.stdout.write(completionScript(shell, specOf(program)));
      setOutcome('ok');
    });
}

function flagsOf(command: Command): string[] {
  return command.options.filter((option) => !option.hidden).flatMap((option) => [option.short, option.long].filter((flag): flag is string => flag !== undefined));
}

function specOf(program: Command): CompletionSpec {
  return {
    options: flagsOf(program),
    commands: program.commands
      .filter((command) => !command.name().startsWith('_'))
      .map((command) => ({
        name: command.name(),
        description: command.description(),
        options: flagsOf(command),
        words: command.commands.map((sub) => sub.name()).concat(command.registeredArguments.flatMap((argument) => argument.argChoices ?? [])),
      })),
  };
}

export function registerCompleteHelper(program: Command, io: Io, setOutcome: ReportOutcome): void {
  program
    .command('__complete', { hidden: true })
    .argument('<what>', 'sessions or models')
    .option('--home <dir>', 'data directory')
    .action(async (what: string, _flags: unknown, command: Command) => {
      const settings = settingsOf(command);
      // Completion must never print an error into the shell: nothing is printed when a source fails.
      const names =
        what === 'sessions'
          ? (await listSessions(settings.paths.sessions).catch(() => [])).map((record) => record.name)
          : what === 'models'
            ? await newTransport({ ...settings, retries: { attempts: 1, initialDelayMs: 0 } }).installedModels().catch(() => [])
            : [];
      io.stdout.write(names.map((name) => `${name}\n`).join(''));
      setOutcome('ok');
    });
}
