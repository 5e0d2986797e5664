// The `edit` toolset: create, overwrite, append to and edit files under the root. Both tools have
// side effects, so their preview (a unified diff) is what a confirmation shows.
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoOf, isMissing } from '../log/fs.js';
import { resolveInRoot, shownPath } from './root.js';
import { ToolError, stringArg } from './types.js';
import type { Tool, ToolContext } from './types.js';

const WRITE_MODES = ['overwrite', 'append', 'create'] as const;

async function currentText(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if (isMissing(error)) return null;
    if (errnoOf(error) === 'EISDIR') throw new ToolError('the path is a directory, not a file');
    throw error;
  }
}

async function diffOf(shown: string, before: string | null, after: string): Promise<string> {
  const { createTwoFilesPatch } = await import('diff');
  return createTwoFilesPatch(before === null ? '/dev/null' : `a/${shown}`, `b/${shown}`, before ?? '', after, '', '', { context: 3 });
}

interface WritePlan {
  file: string;
  shown: string;
  before: string | null;
  after: string;
  mode: (typeof WRITE_MODES)[number];
}

async function planWrite(args: Record<string, unknown>, context: ToolContext): Promise<WritePlan> {
  const path = stringArg(args, 'path') ?? '';
  const content = stringArg(args, 'content') ?? '';
  const mode = (stringArg(args, 'mode') ?? 'overwrite') as WritePlan['mode'];
  const file = await resolveInRoot(context.root, path);
  const before = await currentText(file);
  if (mode === 'create' && before !== null) throw new ToolError(`"${path}" already exists; use mode "overwrite" to replace it`);
  return { file, shown: shownPath(context.root, file), before, after: mode === 'append' ? (before ?? '') + content : content, mode };
}

export const writeFileTool: Tool = {
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
  preview: async (args, context) => {
    const plan = await planWrite(args, context);
    return diffOf(plan.shown, plan.before, plan.after);
  },
  run: async (args, context) => {
    const plan = await planWrite(args, context);
    const content = stringArg(args, 'content') ?? '';
    await mkdir(dirname(plan.file), { recursive: true });
    if (plan.mode === 'append') await appendFile(plan.file, content, 'utf8');
    else await writeFile(plan.file, content, { encoding: 'utf8', flag: plan.mode === 'create' ? 'wx' : 'w' });
    return { path: plan.shown, mode: plan.mode, bytes_written: Buffer.byteLength(content, 'utf8'), created: plan.before === null };
  },
};

async function planEdit(args: Record<string, unknown>, context: ToolContext): Promise<WritePlan> {
  const path = stringArg(args, 'path') ?? '';
  const old = stringArg(args, 'old') ?? '';
  const replacement = stringArg(args, 'new') ?? '';
  const file = await resolveInRoot(context.root, path);
  const before = await currentText(file);
  if (before === null) throw new ToolError(`file "${path}" does not exist; create it with write_file`);
  if (old === '') throw new ToolError('"old" must not be empty; use write_file to write a whole file');
  const first = before.indexOf(old);
  if (first === -1) throw new ToolError(`the text to replace was not found in "${path}"; read the file and copy it exactly`);
  if (before.includes(old, first + 1)) throw new ToolError(`the text to replace occurs more than once in "${path}"; include more surrounding lines`);
  const after = before.slice(0, first) + replacement + before.slice(first + old.length);
  return { file, shown: shownPath(context.root, file), before, after, mode: 'overwrite' };
}

export const editFileTool: Tool = {
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
  preview: async (args, context) => {
    const plan = await planEdit(args, context);
    return diffOf(plan.shown, plan.before, plan.after);
  },
  run: async (args, context) => {
    const plan = await planEdit(args, context);
    await writeFile(plan.file, plan.after, 'utf8');
    return { path: plan.shown, replaced: 1 };
  },
};
