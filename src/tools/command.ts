// Command-backed tools from config.json: an argv template filled from the arguments and run
// without a shell (so an argument can never become a second command).
import { maskSecrets } from '../text/secrets.js';
import { commandResult, findCommand, nulInCommand, runProcess, tooLongToPass } from './process.js';
import { clipped, quoting } from './foreign-line.js';
import { ToolError } from './types.js';
import { errnoOf } from '../log/fs.js';
import { ARGV_PLACEHOLDER } from '../config/settings.js';
import { quotedName } from '../output/terminal-text.js';
import type { CommandToolSettings } from '../config/settings.js';
import type { ParametersSchema, Tool } from './types.js';

export type CommandToolConfig = CommandToolSettings;

const PLACEHOLDER = new RegExp(ARGV_PLACEHOLDER.source, 'g');
const WHOLE = new RegExp(`^${ARGV_PLACEHOLDER.source}$`);
const DEFAULT_TIMEOUT_MS = 30_000;
const ONLY_DASHES = /^-*$/;

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The argument a placeholder names: the model's own, never one every object inherits (a parameter
 * named "constructor" or "toString" the model left out is absent, not Object's function).
 */
function argument(args: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(args, name) ? args[name] : undefined;
}

/** A value as it goes into an element: an absent one is empty. */
function valueText(value: unknown): string {
  return value === undefined || value === null ? '' : asText(value);
}

/**
 * The argv for these arguments. An element that is a single placeholder of an absent argument is
 * left out; a placeholder inside a longer element becomes the empty string.
 */
export function fillArgv(template: readonly string[], args: Record<string, unknown>): string[] {
  const argv: string[] = [];
  for (const part of template) {
    const whole = WHOLE.exec(part);
    if (whole) {
      const value = argument(args, whole[1] ?? '');
      if (value !== undefined && value !== null) argv.push(asText(value));
      continue;
    }
    argv.push(part.replace(PLACEHOLDER, (_match, name: string) => valueText(argument(args, name))));
  }
  return argv;
}

/**
 * Why these arguments would reach the command as options, or null: a value that starts with "-"
 * at the start of an argv element — a whole element (`git log {ref}` with ref `--output=/tmp/x`),
 * its start (`{ref}..HEAD`; `{a}{b}` with a empty) or right after the template's dashes only
 * (`-{flags}` made `--output=…`) — unless a literal `--` comes before it. A value after other
 * text (`--ref={ref}`, `x{pattern}`) is that option's value, or part of a word.
 */
export function optionLikeArgument(template: readonly string[], args: Record<string, unknown>): string | null {
  const endOfOptions = template.indexOf('--');
  for (const [index, part] of template.entries()) {
    if (endOfOptions !== -1 && index > endOfOptions) break;
    const name = leadingValue(part, args);
    if (name === null) continue;
    return `"${name}" starts with "-", which the command would read as an option; give it without the leading "-"`;
  }
  return null;
}

/**
 * The argument whose value starts `part` once filled (after nothing, or only the template's dashes:
 * `-{flags}`), when that value starts with "-"; null when none does.
 */
function leadingValue(part: string, args: Record<string, unknown>): string | null {
  for (const match of part.matchAll(PLACEHOLDER)) {
    // Other text comes first: the element starts as the template wrote it (`--ref={ref}`, `x{a}`).
    if (!ONLY_DASHES.test(part.slice(0, match.index).replace(PLACEHOLDER, (_whole, name: string) => valueText(argument(args, name))))) return null;
    const name = match[1] ?? '';
    const value = valueText(argument(args, name));
    if (value === '') continue;
    return value.startsWith('-') ? name : null;
  }
  return null;
}

/** Why these arguments cannot reach the command, or null: a value its argv takes holds a NUL byte, which no argument can. */
export function nulArgument(template: readonly string[], args: Record<string, unknown>): string | null {
  for (const part of template) {
    for (const match of part.matchAll(PLACEHOLDER)) {
      const name = match[1] ?? '';
      if (valueText(argument(args, name)).includes('\u0000')) return nulInCommand(name);
    }
  }
  return null;
}

/**
 * A spawn that failed (the program, or the interpreter its #! line names, is not there or cannot be
 * run) as a failure naming the program: asking again runs the same argv[0], so it is permanent.
 */
function didNotStart(tool: string, file: string, error: unknown): ToolError | null {
  const code = errnoOf(error);
  if (!(error instanceof Error) || !('syscall' in error) || typeof error.syscall !== 'string' || !error.syscall.startsWith('spawn') || code === undefined) return null;
  const fix =
    code === 'ENOENT'
      ? `it is not there, or the interpreter its #! line names is not; fix commandTools."${tool}".argv in config.json`
      : code === 'EACCES'
        ? 'it is not a program you may run (chmod +x it)'
        : `fix commandTools."${tool}".argv in config.json`;
  return new ToolError(quoting`the command "${clipped(file, 200)}" did not start (spawn ${code}): ${fix}`, false);
}

export function commandTool(name: string, config: CommandToolConfig): Tool {
  const requires = config.requires ?? (config.argv[0] !== undefined ? [config.argv[0]] : []);
  return {
    name,
    description: config.description,
    parameters: (config.parameters as ParametersSchema | undefined) ?? { type: 'object', properties: {} },
    sideEffects: config.sideEffects ?? true,
    timeoutMs: config.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    refuse: (args) => optionLikeArgument(config.argv, args) ?? nulArgument(config.argv, args),
    // As the run finds it: a relative path ("./tool.sh") from the root, where the command runs.
    check: async (root) => {
      for (const binary of requires) {
        const found = await findCommand(binary, root);
        // Quoted as JSON: a control in the name from config is shown as an escape, not dropped;
        // masked first, so an unclosed quote in it cannot take the closing one.
        const name = quotedName(maskSecrets(binary), 200);
        // The catalog does not mask a reason again: what it quotes is masked here.
        if (found === 'not-executable') return quoting`${name} is not executable (chmod +x it)`.text;
        if (found === 'folder') return (binary.startsWith('/') ? quoting`${name} is a folder, not a program` : quoting`${name} is a folder, not a program (a relative path is from the root, ${root})`).text;
        if (found === 'missing') return (binary.includes('/') ? quoting`${name} does not exist (a relative path is from the root, ${root})` : quoting`${name} is not on PATH`).text;
      }
      return null;
    },
    preview: (args) => Promise.resolve(`$ ${fillArgv(config.argv, args).map((word) => (/^[\w./=:-]+$/.test(word) ? word : JSON.stringify(word))).join(' ')}`),
    run: async (args, context) => {
      const [file, ...rest] = fillArgv(config.argv, args);
      if (file === undefined || file === '') throw new ToolError(quoting`the tool "${name}" has an empty command in config.json`, false);
      // The loop's timer ends it (the tool's timeoutMs, or toolTimeouts over it) by aborting the signal.
      const result = await runProcess({ file, args: rest, cwd: context.root, signal: context.signal, ...(context.env ? { env: context.env } : {}) }).catch((error: unknown) => {
        throw tooLongToPass(error, 'an argument (or all of them together)') ?? didNotStart(name, file, error) ?? error;
      });
      if (result.aborted) throw new ToolError(quoting`"${name}" was interrupted`, false);
      // Its arguments are all the model can change: no advice on narrowing the output.
      return commandResult(result, context.resultBudget);
    },
  };
}
