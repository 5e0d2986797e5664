// The `edit` toolset: create, overwrite, append to and edit files under the root. Both tools have
// side effects, so their preview (a unified diff) is what a confirmation shows. What the model is
// told of each tool is in builtins.ts; this code loads with a run's first call or preview.
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { isMissing } from '../log/fs.js';
import { KeyedQueue } from '../log/keyed-queue.js';
import { EDIT_FILE, WRITE_FILE } from './builtins.js';
import type { WRITE_MODES } from './builtins.js';
import { isBinary } from './fs.js';
import { confinementOf, fileFailure, refuseFolderPath, resolveInRoot, rootOnly, shownPath } from './root.js';
import type { Confinement } from './root.js';
import { HeldFolder, READ_FLAGS, notRegular, openInRoot, writeInFolder } from './root-files.js';
import { quoting } from './foreign-line.js';
import { ToolError, stringArg } from './types.js';
import type { Tool, ToolContext } from './types.js';

/** The file's bytes, or null when there is none; read only from a regular file inside the root. */
async function currentBytes(confinement: Confinement, file: string, path: string): Promise<Buffer | null> {
  let handle: FileHandle;
  try {
    handle = await openInRoot(confinement, file, READ_FLAGS, path);
  } catch (error) {
    if (isMissing(error)) return null;
    throw fileFailure(error, path, 'open');
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw new ToolError(quoting`"${path}" is a directory, not a file`);
    if (!stats.isFile()) throw notRegular(path);
    return await handle.readFile();
  } catch (error) {
    throw fileFailure(error, path, 'read');
  } finally {
    await handle.close();
  }
}

// ignoreBOM keeps a leading BOM in the text, so an edit writes it back.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The file's text, for changing it in place: refused when it is binary or not UTF-8, which a round trip through text would corrupt. */
function editableText(bytes: Buffer, path: string): string {
  if (isBinary(bytes)) throw new ToolError(quoting`"${path}" is a binary file; it cannot be edited as text`);
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new ToolError(quoting`"${path}" is not valid UTF-8; it cannot be edited as text without corrupting it`);
  }
}

// Read-modify-write of one file runs one call at a time (a round's calls run in parallel; `argo
// serve` runs several runs in this process), so no update is lost.
const fileQueue = new KeyedQueue();

/**
 * The plan written: into its folder held open from the root down (root-files.ts), so a folder
 * swapped for a link meanwhile cannot send it out of the root. An overwrite or an edit replaces
 * the file whole, never half-written, keeping its mode and owner.
 */
async function writePlan(plan: WritePlan, text: string, path: string): Promise<void> {
  try {
    const folder = await HeldFolder.open(plan.confinement, dirname(plan.file), path);
    try {
      await writeInFolder(plan.confinement, folder, basename(plan.file), text, plan.mode, path);
    } finally {
      await folder.close();
    }
  } catch (error) {
    throw fileFailure(error, path, 'write');
  }
}

/** The change as `git diff` shows it: the file names, then the hunks (no underline, no tab after a name). */
async function diffOf(shown: string, before: string | null, after: string): Promise<string> {
  const { FILE_HEADERS_ONLY, createTwoFilesPatch } = await import('diff');
  return createTwoFilesPatch(before === null ? '/dev/null' : `a/${shown}`, `b/${shown}`, before ?? '', after, undefined, undefined, { context: 3, headerOptions: FILE_HEADERS_ONLY });
}

interface WritePlan {
  confinement: Confinement;
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
  refuseFolderPath(path);
  const confinement = await confinementOf(context);
  const file = await resolveInRoot(confinement, path);
  const bytes = await currentBytes(confinement, file, path);
  if (mode === 'create' && bytes !== null) throw new ToolError(quoting`"${path}" already exists; use mode "overwrite" to replace it`);
  // Overwritten, the old content only feeds the preview's diff.
  const before = bytes === null ? null : mode === 'append' ? editableText(bytes, path) : bytes.toString('utf8');
  return { confinement, file, shown: shownPath(context.root, file), before, after: mode === 'append' ? (before ?? '') + content : content, mode };
}

/** write_file's preview: the diff the write would make. */
export async function writePreview(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const plan = await planWrite(args, context);
  return diffOf(plan.shown, plan.before, plan.after);
}

export const writeFileTool: Tool = {
  ...WRITE_FILE,
  preview: writePreview,
  run: async (args, context) => {
    const file = await resolveInRoot(rootOnly(context.root), stringArg(args, 'path') ?? '');
    return fileQueue.run(file, async () => {
      const plan = await planWrite(args, context);
      const content = stringArg(args, 'content') ?? '';
      await writePlan(plan, content, stringArg(args, 'path') ?? '');
      return { path: plan.shown, mode: plan.mode, bytes_written: Buffer.byteLength(content, 'utf8'), created: plan.before === null };
    });
  },
};

const BARE_LF = /(?<!\r)\n/g;
const HAS_BARE_LF = /(?<!\r)\n/;

/**
 * `old` and `new` as they apply to this file: read_file shows CRLF lines without their CR. In a
 * file whose lines all end in CRLF, new lines get CRLF too, and `old` is tried in its CRLF form when
 * it is not there as given; in a file with both endings, only `old` is, and `new` follows it.
 */
function matchingForm(text: string, old: string, replacement: string): { from: string; to: string } {
  const crlf = (part: string): string => part.replace(BARE_LF, '\r\n');
  if (!text.includes('\r\n')) return { from: old, to: replacement };
  const from = text.includes(old) || !old.includes('\n') ? old : crlf(old);
  if (!HAS_BARE_LF.test(text)) return { from, to: crlf(replacement) };
  return from === old ? { from: old, to: replacement } : { from, to: crlf(replacement) };
}

async function planEdit(args: Record<string, unknown>, context: ToolContext): Promise<WritePlan> {
  const path = stringArg(args, 'path') ?? '';
  const old = stringArg(args, 'old') ?? '';
  const replacement = stringArg(args, 'new') ?? '';
  refuseFolderPath(path);
  const confinement = await confinementOf(context);
  const file = await resolveInRoot(confinement, path);
  const bytes = await currentBytes(confinement, file, path);
  if (bytes === null) throw new ToolError(quoting`file "${path}" does not exist; create it with write_file`);
  const before = editableText(bytes, path);
  if (old === '') throw new ToolError('"old" must not be empty; use write_file to write a whole file');
  const { from, to } = matchingForm(before, old, replacement);
  const first = before.indexOf(from);
  if (first === -1) throw new ToolError(quoting`the text to replace was not found in "${path}"; read the file and copy it exactly`);
  if (before.includes(from, first + 1)) throw new ToolError(quoting`the text to replace occurs more than once in "${path}"; include more surrounding lines`);
  const after = before.slice(0, first) + to + before.slice(first + from.length);
  return { confinement, file, shown: shownPath(context.root, file), before, after, mode: 'overwrite' };
}

/** edit_file's preview: the diff the edit would make. */
export async function editPreview(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  const plan = await planEdit(args, context);
  return diffOf(plan.shown, plan.before, plan.after);
}

export const editFileTool: Tool = {
  ...EDIT_FILE,
  preview: editPreview,
  run: async (args, context) => {
    const file = await resolveInRoot(rootOnly(context.root), stringArg(args, 'path') ?? '');
    return fileQueue.run(file, async () => {
      const plan = await planEdit(args, context);
      await writePlan(plan, plan.after, stringArg(args, 'path') ?? '');
      return { path: plan.shown, replaced: 1 };
    });
  },
};
