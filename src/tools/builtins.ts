// What the model is told of the built-in tools that work on files, commands and the web (name,
// description, schema), and the checks and previews that need none of their code. The code that
// runs a call (fs.ts, edit.ts, shell.ts, web.ts) makes each tool from its definition here, and the
// catalog (builtinTools) offers the tools with that code loaded by their first call, so a run the
// model answers in words never loads it: one definition, whichever way a tool is reached.
import { TIMER_MAX_MS } from '../config/settings.js';
import { groupThousands } from '../text/decimal.js';
import { nulByteIn, onPath } from './process.js';
import { stringArg } from './types.js';
import type { Tool } from './types.js';

/** A tool without the code that runs a call. */
export type ToolDefinition = Omit<Tool, 'run'>;

export const READ_FILE: ToolDefinition = {
  name: 'read_file',
  description: 'Read a text file under the root. Lines are numbered from 1; use offset and limit to read part of a long file (at most 50 KB per call).',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'file path relative to the root' },
      offset: { type: 'integer', minimum: 1, description: 'first line to read (1-based, default 1)' },
      limit: { type: 'integer', minimum: 1, description: 'number of lines to read (default: to the end or the 50 KB cap)' },
    },
    required: ['path'],
    additionalProperties: false,
  },
  sideEffects: false,
};

export const LIST_FILES: ToolDefinition = {
  name: 'list_files',
  description: 'List files under the root matching a glob pattern (for example "**/*.ts"), sorted by path. A wildcard skips names that start with a dot: name the dot to list them (".github/**", "**/.env"). .git and node_modules are never listed; folders that cannot be read are counted in "skipped".',
  parameters: {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'glob pattern, e.g. "src/**/*.ts" or "*"' },
      path: { type: 'string', description: 'directory to search from, relative to the root (default the root)' },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  sideEffects: false,
};

export const SEARCH_FILES: ToolDefinition = {
  name: 'search_files',
  description: 'Search text files under the root for a regular expression; returns matching lines with their file and line number. Files over 1 MB, binary files and files or folders that cannot be read are not searched, and counted in "skipped".',
  parameters: {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'JavaScript regular expression' },
      path: { type: 'string', description: 'directory to search, relative to the root (default the root)' },
      glob: { type: 'string', description: 'only files matching this glob, as list_files takes it (default "**/*"; ".github/**" to search there)' },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  sideEffects: false,
};

export const WRITE_MODES = ['overwrite', 'append', 'create'] as const;

export const WRITE_FILE: ToolDefinition = {
  name: 'write_file',
  description: 'Write a text file under the root: overwrite it (default), append to it, or create it only if it does not exist. Parent directories are created.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'file path relative to the root' },
      content: { type: 'string', description: 'the text to write' },
      mode: { type: 'string', enum: [...WRITE_MODES], description: 'overwrite (default), append or create' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  sideEffects: true,
};

export const EDIT_FILE: ToolDefinition = {
  name: 'edit_file',
  description: 'Replace one exact occurrence of "old" with "new" in a file under the root. "old" must occur exactly once.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'file path relative to the root' },
      old: { type: 'string', description: 'the exact text to replace (must occur once)' },
      new: { type: 'string', description: 'the replacement text' },
    },
    required: ['path', 'old', 'new'],
    additionalProperties: false,
  },
  sideEffects: true,
};

export const DEFAULT_COMMAND_TIMEOUT_S = 30;
export const MAX_COMMAND_TIMEOUT_S = 600;
export const SHELL = '/bin/sh';
/** How much longer than its command's timeout the loop waits for run_command: it kills the group and says so itself. */
const COMMAND_KILL_MARGIN_MS = 5000;

const shellCheck = async (): Promise<string | null> => ((await onPath(SHELL)) ? null : `${SHELL} is not available`);

/**
 * run_command as the model is told of it. `limitS`, from toolTimeouts.run_command: its commands'
 * default timeout and the longest its `timeout` may ask for; without it, 30 s by default, 600 at most.
 */
export function runCommandDefinition(limitS?: number): ToolDefinition {
  const maxS = limitS === undefined ? MAX_COMMAND_TIMEOUT_S : Math.max(1, Math.floor(limitS));
  const timing = limitS === undefined ? `Times out after ${DEFAULT_COMMAND_TIMEOUT_S} s unless timeout says otherwise` : `Times out after ${limitS} s, or sooner when timeout asks`;
  const timeoutWords = limitS === undefined ? `default ${DEFAULT_COMMAND_TIMEOUT_S}` : `default and most ${limitS}`;
  return {
    name: 'run_command',
    description: `Run a shell command (/bin/sh -c) in the root directory or a directory under it and return its exit code, stdout and stderr (the end of each when it is long). ${timing}.`,
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'the command line' },
        timeout: { type: 'integer', minimum: 1, maximum: maxS, description: `seconds before the command is killed (${timeoutWords})` },
        cwd: { type: 'string', description: 'working directory relative to the root (default the root)' },
      },
      required: ['command'],
      additionalProperties: false,
    },
    sideEffects: true,
    // Its own timeout governs; the loop must not cut it short.
    timeoutMs: Math.min((limitS ?? MAX_COMMAND_TIMEOUT_S) * 1000 + COMMAND_KILL_MARGIN_MS, TIMER_MAX_MS),
    refuse: (args) => nulByteIn(args, ['command', 'cwd']),
    check: shellCheck,
    preview: (args) => Promise.resolve(`$ ${stringArg(args, 'command') ?? ''}${inFolder(args)}`),
  };
}

/** Where a command runs, for the question that asks to run it: said unless it is the root. */
function inFolder(args: Record<string, unknown>): string {
  const cwd = stringArg(args, 'cwd')?.trim() ?? '';
  return cwd === '' || cwd === '.' || cwd === './' ? '' : `   (in ${cwd})`;
}

export const RUN_COMMAND: ToolDefinition = runCommandDefinition();

const OPERATIONS = ['start', 'status', 'read_output', 'kill', 'list'] as const;
/** What only looks at the run's own processes: asked of nobody. */
const LOOKING_OPERATIONS: ReadonlySet<string> = new Set<(typeof OPERATIONS)[number]>(['status', 'read_output', 'list']);

export const PROCESS: ToolDefinition = {
  name: 'process',
  description: 'Manage long-running shell commands by handle: start (returns a handle), status, read_output (new output since the last read, its newest part when it is long), kill, list.',
  parameters: {
    type: 'object',
    properties: {
      operation: { type: 'string', enum: [...OPERATIONS] },
      command: { type: 'string', description: 'for start: the command line' },
      handle: { type: 'string', description: 'for status, read_output and kill: the handle start returned' },
      cwd: { type: 'string', description: 'for start: working directory relative to the root' },
    },
    required: ['operation'],
    additionalProperties: false,
  },
  sideEffects: true,
  readsOnly: (args) => LOOKING_OPERATIONS.has(stringArg(args, 'operation') ?? ''),
  refuse: (args) => nulByteIn(args, ['command', 'cwd']),
  check: shellCheck,
  preview: (args) => Promise.resolve(`${`process ${stringArg(args, 'operation') ?? ''} ${stringArg(args, 'command') ?? stringArg(args, 'handle') ?? ''}`.trimEnd()}${stringArg(args, 'operation') === 'start' ? inFolder(args) : ''}`),
};

/** Characters of text the model gets from one fetch_url call; `offset` reads on. */
export const FETCH_TEXT_CAP = 100_000;

export const FETCH_URL: ToolDefinition = {
  name: 'fetch_url',
  description: `Fetch a web page or text resource over http(s) and return its text (HTML reduced to its words, the title apart), one piece per call; a longer text says so and names the offset to read on from (limit asks for a piece of up to ${groupThousands(FETCH_TEXT_CAP)} characters).`,
  parameters: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'an http:// or https:// URL' },
      offset: { type: 'integer', minimum: 0, description: "characters of the page's text to skip (default 0): the offset a cut result names, to read on" },
      limit: { type: 'integer', minimum: 1, maximum: FETCH_TEXT_CAP, description: `characters of text to return (at most ${FETCH_TEXT_CAP}; default: what fits one result)` },
    },
    required: ['url'],
    additionalProperties: false,
  },
  sideEffects: false,
  timeoutMs: 30_000,
};
