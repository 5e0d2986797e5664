// What the completion scripts are built from, read off the real program: which flags each command
// takes and what each flag's value is completed from (commander's choices, the parsers' own word
// lists, names, paths), so a flag added with choices completes them with no list kept here.
import { describe, expect, it } from 'vitest';
import { specOf } from '../../src/cli/completion-command.js';
import type { CompletionCommand, CompletionSpec, FlagValue } from '../../src/cli/completion.js';
import { processIo } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/main.js';
import { COLOR_MODES } from '../../src/output/color.js';
import { REASON_FILTERS, STATUS_CHOICES, STRENGTH_FILTERS, TYPE_CHOICES } from '../../src/query/query.js';
import { THINK_LEVELS } from '../../src/replay/prompt.js';
import { REPLAY_REASONS } from '../../src/replay/types.js';

const spec: CompletionSpec = specOf(await buildProgram(processIo(), () => undefined, ['completion', 'bash']));

function commandAt(path: string): CompletionCommand | undefined {
  let commands = spec.commands;
  let found: CompletionCommand | undefined;
  for (const name of path.split(' ')) {
    found = commands.find((command) => command.name === name);
    commands = found?.subcommands ?? [];
  }
  return found;
}

/** What `flag` takes in the command at `path` ('' for a question); undefined when it takes no value there. */
function valueOf(path: string, flag: string): FlagValue | undefined {
  const values = path === '' ? spec.values : (commandAt(path)?.values ?? []);
  return values.find((value) => value.flags.includes(flag))?.value;
}

describe('the completion spec of the real program', () => {
  it.each<[string, string, FlagValue | undefined]>([
    // commander's choices
    ['', '--reason', { choices: REPLAY_REASONS }],
    ['chat', '--reason', { choices: REPLAY_REASONS }],
    ['', '--verbosity', { choices: ['auto', 'short', 'long'] }],
    ['', '--api', { choices: ['chat', 'generate'] }],
    ['doctor', '--api', { choices: ['chat', 'generate'] }],
    ['export', '--format', { choices: ['sharegpt'] }],
    // the parsers' word lists
    ['', '--color', { choices: COLOR_MODES }],
    ['sessions show', '--color', { choices: COLOR_MODES }],
    ['', '--think', { choices: ['on', 'off', ...THINK_LEVELS] }],
    ['chat', '-r', { choices: ['none', 'session', 'last:1', 'last:3', 'last:5'] }],
    ['logs', '--status', { choices: STATUS_CHOICES }],
    ['logs', '-t', { choices: TYPE_CHOICES }],
    ['logs', '--strength', { choices: STRENGTH_FILTERS }],
    ['logs', '--reason', { choices: REASON_FILTERS }],
    // names
    ['', '-s', { names: 'sessions' }],
    ['logs', '--session', { names: 'sessions' }],
    ['export', '-s', { names: 'sessions' }],
    ['', '--model', { names: 'models' }],
    ['doctor', '-m', { names: 'models' }],
    // paths, by their placeholder (<dir>, <file>)
    ['', '--home', 'folders'],
    ['serve', '--root', 'folders'],
    ['chat', '--root', 'folders'],
    ['', '--system-file', 'files'],
    ['export', '-o', 'files'],
    // the same flag, another value in another command
    ['', '-o', 'text'],
    ['logs', '-q', 'text'],
    ['', '--temperature', 'text'],
    ['', '--host', 'text'],
    // no value
    ['', '-q', undefined],
    ['', '--no-color', undefined],
    ['doctor', '--session', undefined],
    ['doctor', '--think', undefined],
    ['completion', '--replay', undefined],
    ['stop', '--status', undefined],
  ])('%j %s → %j', (path, flag, expected) => {
    expect(valueOf(path, flag)).toEqual(expected);
  });

  it('lists a flag that takes a value among the command\'s flags, in every spelling', () => {
    for (const command of [{ options: spec.options, values: spec.values }, ...spec.commands]) {
      for (const value of command.values ?? []) for (const flag of value.flags) expect(command.options).toContain(flag);
    }
  });
});
