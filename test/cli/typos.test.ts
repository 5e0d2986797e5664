import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { endsOptions, judgeWords, optionAmidPrompt, typoMessage } from '../../src/cli/typos.js';

const COMMANDS = ['chat', 'last', 'rerun', 'completion', 'sessions', 'logs', 'doctor'];
const SUBCOMMANDS: Record<string, string[]> = { sessions: ['list', 'show', 'rename', 'rm', 'fork', 'reindex'], logs: ['check', 'rm', 'prune'] };

describe('judgeWords', () => {
  it.each([
    [['sesions'], false, { kind: 'typo', word: 'sesions', suggestions: ['sessions'] }],
    [['doctr'], false, { kind: 'typo', word: 'doctr', suggestions: ['doctor'] }],
    [['lgos'], false, { kind: 'typo', word: 'lgos', suggestions: ['logs'] }],
    [['hlep'], false, { kind: 'typo', word: 'hlep', suggestions: ['help'] }],
    [['rerum'], false, { kind: 'typo', word: 'rerum', suggestions: ['rerun'] }],
    [['sesions'], true, { kind: 'prompt' }],
    [['help'], false, { kind: 'help', command: null }],
    [['help', 'logs'], false, { kind: 'help', command: 'logs' }],
    [['help', 'me', 'write', 'a', 'poem'], false, { kind: 'prompt' }],
    [['help', 'me'], false, { kind: 'prompt' }],
    [['help', 'sessions', 'show'], false, { kind: 'help', command: 'sessions show' }],
    [['help', 'logs', 'check'], false, { kind: 'help', command: 'logs check' }],
    [['help', 'sessions', 'please'], false, { kind: 'prompt' }],
    [['help', 'sessions', 'show', 'work'], false, { kind: 'prompt' }],
    [['help', 'doctor', 'show'], false, { kind: 'prompt' }],
    [['help'], true, { kind: 'prompt' }],
    [['why', 'is', 'the', 'sky', 'blue?'], false, { kind: 'prompt' }],
    [['hello'], false, { kind: 'prompt' }],
    [['sessions', 'please'], false, { kind: 'prompt' }],
    [['photosynthesis'], false, { kind: 'prompt' }],
    // A word that opens a question is one, however close to a command ("what" is one edit from "chat").
    [['what'], false, { kind: 'prompt' }],
    [['What'], false, { kind: 'prompt' }],
    [['WHAT'], false, { kind: 'prompt' }],
    [['why'], false, { kind: 'prompt' }],
    [['how'], false, { kind: 'prompt' }],
    // Other words a small edit from a command are still typos, with the way to send them anyway.
    [['docker'], false, { kind: 'typo', word: 'docker', suggestions: ['doctor'] }],
    [['cat'], false, { kind: 'typo', word: 'cat', suggestions: ['chat'] }],
    [['chats'], false, { kind: 'typo', word: 'chats', suggestions: ['chat'] }],
    [[], false, { kind: 'prompt' }],
  ])('%j (after --: %s) → %j', (words, afterDash, verdict) => {
    expect(judgeWords(words, afterDash, COMMANDS, (command) => SUBCOMMANDS[command] ?? [])).toEqual(verdict);
  });
});

describe('typoMessage', () => {
  it('names the command and the way to send the word anyway', () => {
    expect(typoMessage({ word: 'doctr', suggestions: ['doctor'] })).toBe('unknown command "doctr" (did you mean "doctor"?); to ask the model, run: argo -- doctr');
    expect(typoMessage({ word: 'lst', suggestions: ['last', 'logs'] })).toBe('unknown command "lst" (did you mean "last" or "logs"?); to ask the model, run: argo -- lst');
  });
});

describe('endsOptions', () => {
  // Options shaped as argo's are: values required, booleans, a negation; and one optional value.
  const { options } = new Command()
    .option('-m, --model <name>')
    .option('-s, --session <name>')
    .option('-q, --quiet')
    .option('-T, --tools <list>')
    .option('--no-stream')
    .option('--system <text>')
    .option('--extra [value]');
  it.each([
    [['--', 'stop'], true],
    [['--', 'help'], true],
    [['--', 'chat', '--json'], true],
    [['--'], true],
    [['-s', 'x', '--', 'stop'], true],
    [['-m', 'x', '--', '-x is a flag?'], true],
    [['-s', 'stop', '--', 'stop'], true],
    [['--session=work', '--', 'last'], true],
    [['-q', '--no-stream', '--', 'tools'], true],
    [['-qT', 'fs', '--', 'serve'], true],
    [['-qmllama3', '--', 'serve'], true],
    [['-sq', '--', 'stop'], true],
    [['--system', '--', 'stop'], false],
    [['--system', '-x', '--', 'stop'], true],
    [['--extra', '--', 'stop'], true],
    [['--extra', 'v', '--', 'stop'], true],
    [['stop', '--', 'x'], false],
    [['rerun', '--', '-xY3abcdefgh'], false],
    [['why', 'not', '--', 'stop'], false],
    [['-s', 'x', 'last', '--', '3'], false],
    [['--bogus', '--', 'stop'], false],
    [['-z', '--', 'stop'], false],
    [['-qz', '--', 'stop'], false],
    [['--quiet=yes', '--', 'stop'], false],
    [['-h', '--', 'stop'], false],
    [['stop'], false],
    [[], false],
  ])('%j → %s', (words, verdict) => {
    expect(endsOptions(words, options)).toBe(verdict);
  });
});

describe('optionAmidPrompt: an option between two words of the prompt', () => {
  const { options } = new Command()
    .option('-m, --model <name>')
    .option('-s, --session <name>')
    .option('-q, --quiet')
    .option('--json')
    .option('--extra [value]');
  const found = (option: string, options: string[], prompt: string[]) => ({ option, options, prompt });
  it.each<[string[], ReturnType<typeof found> | null]>([
    [['what', 'does', '-s', 'mean', 'in', 'ls'], found('-s', [], ['what', 'does', '-s', 'mean', 'in', 'ls'])],
    [['-m', 'llama3', 'what', 'does', '-q', 'do'], found('-q', ['-m', 'llama3'], ['what', 'does', '-q', 'do'])],
    [['hi', '--json', 'there'], found('--json', [], ['hi', '--json', 'there'])],
    [['hi', '-qs', 'work', 'there'], found('-qs', [], ['hi', '-qs', 'work', 'there'])],
    [['hi', '--session=work', 'there'], found('--session=work', [], ['hi', '--session=work', 'there'])],
    [['hi', '-s', 'work', '--json', 'there'], found('-s', [], ['hi', '-s', 'work', '--json', 'there'])],
    // Options after all of the prompt stay argo's, before the --; a -- typed is not repeated.
    [['what', 'does', '-s', 'mean', 'in', 'ls', '--json'], found('-s', ['--json'], ['what', 'does', '-s', 'mean', 'in', 'ls'])],
    [['what', '-s', 'x', '--', 'y'], found('-s', [], ['what', '-s', 'x', 'y'])],
    [['hi', '--json', '--', 'there'], found('--json', [], ['hi', '--json', 'there'])],
    // A negative number is a prompt word (commander's reading): the scan goes on past it.
    [['what', 'is', '-5', 'plus', '-s', 'x', 'y'], found('-s', [], ['what', 'is', '-5', 'plus', '-s', 'x', 'y'])],
    [['what', 'is', '-5', 'plus', '-2.5'], null],
    // Before the prompt, or after all of it: as written.
    [['-s', 'work', 'hi', 'there'], null],
    [['hi', 'there', '-s', 'work'], null],
    [['hi', 'there', '--json', '-q'], null],
    [['summarize', 'this', '--extra'], null],
    [['summarize', 'this', '--extra', 'v'], null],
    [['--', 'what', '-s', 'x'], null],
    [['-s', 'x', '--', 'what', '-s', 'y'], null],
    [['hi', '--json', '--'], null],
    // A lone "-" is a word; an unknown option is commander's to refuse.
    [['a', '-', 'b'], null],
    [['what', 'is', 'tar', '-xf', 'x'], null],
    [[], null],
  ])('%j → %j', (words, expected) => {
    expect(optionAmidPrompt(words, options)).toEqual(expected);
  });
});
