// The `fs` toolset: read, list and search files under the root. Nothing here writes.
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { isMissing } from '../log/fs.js';
import { isInside, resolveInRoot, shownPath } from './root.js';
import { ToolError, numberArg, stringArg } from './types.js';
import type { Tool, ToolContext } from './types.js';

export const READ_CAP_BYTES = 50 * 1024;
const LIST_CAP = 1000;
const MATCH_CAP = 200;
const MATCH_TEXT_CHARS = 200;
const SEARCH_FILE_BYTES = 1024 * 1024;
const IGNORED = ['**/node_modules/**', '**/.git/**'];

export const readFileTool: Tool = {
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
  run: async (args, context) => {
    const path = stringArg(args, 'path') ?? '';
    const file = await existingFile(context, path);
    await refuseBinary(file, path);
    return readLines(file, shownPath(context.root, file), numberArg(args, 'offset') ?? 1, numberArg(args, 'limit'));
  },
};

async function readLines(file: string, shown: string, offset: number, limit: number | undefined): Promise<Record<string, unknown>> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  const kept: string[] = [];
  let bytes = 0;
  let number = 0;
  let truncated = false;
  try {
    for await (const line of lines) {
      number++;
      if (number < offset) continue;
      if (limit !== undefined && kept.length >= limit) break;
      const size = Buffer.byteLength(line, 'utf8') + 1;
      if (bytes + size > READ_CAP_BYTES) {
        truncated = true;
        break;
      }
      bytes += size;
      kept.push(line);
    }
  } finally {
    lines.close();
  }
  const to = offset + kept.length - 1;
  return {
    path: shown,
    from_line: offset,
    to_line: kept.length === 0 ? null : to,
    content: kept.join('\n'),
    ...(truncated ? { truncated: true, note: `stopped at the 50 KB cap; read on with offset ${to + 1}` } : {}),
  };
}

async function existingFile(context: ToolContext, path: string): Promise<string> {
  const file = await resolveInRoot(context.root, path);
  try {
    if (!(await stat(file)).isFile()) throw new ToolError(`"${path}" is not a file`);
  } catch (error) {
    if (isMissing(error)) throw new ToolError(`file "${path}" does not exist`);
    throw error;
  }
  return file;
}

async function refuseBinary(file: string, path: string): Promise<void> {
  const handle = await open(file, 'r');
  try {
    const head = Buffer.alloc(8192);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    if (head.subarray(0, bytesRead).includes(0)) throw new ToolError(`"${path}" is a binary file`);
  } finally {
    await handle.close();
  }
}

async function directoryIn(context: ToolContext, path: string | undefined): Promise<string> {
  const dir = await resolveInRoot(context.root, path ?? '.');
  try {
    if (!(await stat(dir)).isDirectory()) throw new ToolError(`"${path ?? '.'}" is not a directory`);
  } catch (error) {
    if (isMissing(error)) throw new ToolError(`directory "${path ?? '.'}" does not exist`);
    throw error;
  }
  return dir;
}

/** fast-glob with links not followed and every match re-checked against the root. */
async function globIn(context: ToolContext, dir: string, pattern: string): Promise<string[]> {
  if (pattern.split('/').includes('..') || pattern.startsWith('/')) throw new ToolError(`pattern "${pattern}" must stay inside the root (no "..", no leading "/")`);
  const { default: fg } = await import('fast-glob');
  const found = await fg(pattern, { cwd: dir, onlyFiles: true, dot: false, followSymbolicLinks: false, absolute: true, ignore: IGNORED, suppressErrors: true });
  return found.filter((file) => isInside(context.root, file)).sort();
}

export const listFilesTool: Tool = {
  name: 'list_files',
  description: 'List files under the root matching a glob pattern (for example "**/*.ts"), sorted by path.',
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
  run: async (args, context) => {
    const dir = await directoryIn(context, stringArg(args, 'path'));
    const files = await globIn(context, dir, stringArg(args, 'pattern') ?? '*');
    return {
      files: files.slice(0, LIST_CAP).map((file) => shownPath(context.root, file)),
      count: files.length,
      ...(files.length > LIST_CAP ? { truncated: true, note: `first ${LIST_CAP} of ${files.length}; narrow the pattern` } : {}),
    };
  },
};

export const searchFilesTool: Tool = {
  name: 'search_files',
  description: 'Search text files under the root for a regular expression; returns matching lines with their file and line number.',
  parameters: {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'JavaScript regular expression' },
      path: { type: 'string', description: 'directory to search, relative to the root (default the root)' },
      glob: { type: 'string', description: 'only files matching this glob (default "**/*")' },
    },
    required: ['pattern'],
    additionalProperties: false,
  },
  sideEffects: false,
  run: async (args, context) => {
    const source = stringArg(args, 'pattern') ?? '';
    let regex: RegExp;
    try {
      regex = new RegExp(source);
    } catch {
      throw new ToolError(`"${source}" is not a valid regular expression`);
    }
    const dir = await directoryIn(context, stringArg(args, 'path'));
    const files = await globIn(context, dir, stringArg(args, 'glob') ?? '**/*');
    const matches: { file: string; line: number; text: string }[] = [];
    let truncated = false;
    for (const file of files) {
      if (context.signal.aborted) break;
      const text = await readSearchable(file);
      if (text === null) continue;
      const lines = text.split('\n');
      for (const [index, line] of lines.entries()) {
        if (!regex.test(line)) continue;
        if (matches.length >= MATCH_CAP) {
          truncated = true;
          break;
        }
        matches.push({ file: shownPath(context.root, file), line: index + 1, text: line.length > MATCH_TEXT_CHARS ? `${line.slice(0, MATCH_TEXT_CHARS)}…` : line });
      }
      if (truncated) break;
    }
    return { matches, ...(truncated ? { truncated: true, note: `first ${MATCH_CAP} matches; narrow the pattern or the glob` } : {}) };
  },
};

/** A small text file's content; null for big or binary files, which search skips. */
async function readSearchable(file: string): Promise<string | null> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size > SEARCH_FILE_BYTES) return null;
    const bytes = Buffer.alloc(size);
    const { bytesRead } = await handle.read(bytes, 0, size, 0);
    const content = bytes.subarray(0, bytesRead);
    return content.includes(0) ? null : content.toString('utf8');
  } finally {
    await handle.close();
  }
}
