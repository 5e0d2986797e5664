// The `edit` toolset: create, overwrite, append to and edit files under the root. Both tools have
// side effects, so their preview (a unified diff) is what a confirmation shows. What the model is
// told of each tool is in builtins.ts; this code loads with a run's first call or preview.
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { isMissing } from '../log/fs.js';
import { KeyedQueue } from '../log/keyed-queue.js';
import { groupThousands } from '../text/decimal.js';
import { EDIT_FILE, WRITE_FILE } from './builtins.js';
import type { WRITE_MODES } from './builtins.js';
import { diffPreview, unreadPreview } from './diff-preview.js';
import { BYTE_ORDER_MARK, bomLength } from '../text/utf8.js';
import { isBinary } from './fs.js';
import { confinementOf, fileFailure, nulInPath, refuseFolderPath, refuseNul, resolveInRoot, rootOnly, shownPath } from './root.js';
import type { Confinement, PathUse } from './root.js';
import { HeldFolder, READ_FLAGS, hardLink, notRegular, openInRoot, writeInFolder } from './root-files.js';
import { quoting } from './foreign-line.js';
import { ToolError, stringArg } from './types.js';
import type { Tool, ToolContext } from './types.js';

/** The most bytes of a file the edit tools change in place (edit_file, an append): its text is read whole. */
export const EDIT_MOST_BYTES = 64 * 1024 * 1024;
/** The most bytes of a file an overwrite reads to show what it replaces; a larger one is told by its size. */
const PREVIEW_READ_BYTES = 1024 * 1024;

/**
 * The file as it is now, read only from a regular file inside the root: null when there is none,
 * else its size and, as `read` asks, none of its bytes, all of them (up to EDIT_MOST_BYTES) or all
 * of a file small enough to preview.
 */
async function currentFile(confinement: Confinement, file: string, path: string, read: 'none' | 'whole' | 'preview'): Promise<{ size: number; names: number; bytes: Buffer | null; bom: boolean } | null> {
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
    if (read === 'none' || (read === 'preview' && stats.size > PREVIEW_READ_BYTES)) {
      const head = Buffer.alloc(3);
      const { bytesRead } = await handle.read(head, 0, head.length, 0);
      return { size: stats.size, names: stats.nlink, bytes: null, bom: bomLength(head.subarray(0, bytesRead)) > 0 };
    }
    if (read === 'whole' && stats.size > EDIT_MOST_BYTES) {
      throw new ToolError(quoting`"${path}" is ${groupThousands(stats.size)} bytes; the edit tools change files of up to ${EDIT_MOST_BYTES / 1024 / 1024} MB in place (write_file can still replace it whole)`, false);
    }
    // Read to the size seen: a file that grows meanwhile is not read without end.
    const bytes = Buffer.alloc(stats.size);
    const { bytesRead } = await handle.read(bytes, 0, stats.size, 0);
    return { size: stats.size, names: stats.nlink, bytes: bytes.subarray(0, bytesRead), bom: bomLength(bytes.subarray(0, bytesRead)) > 0 };
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
// The same calls keyed by the path as written, entered before any await: a call's place in line is
// its place in the round, not whichever call's path resolved first.
const writtenQueue = new KeyedQueue();

/**
 * `task` run once the calls before it on the same file are done, in the order the calls were made:
 * lined up at once by the path as the model wrote it (made absolute, without touching the disk),
 * then by the real path, so two spellings of one file (a link, `./`) never run together either.
 */
function inCallOrder<T>(context: ToolContext, path: string, use: PathUse, task: () => Promise<T>): Promise<T> {
  return writtenQueue.run(resolve(context.root, path), async () =>
    fileQueue.run(await resolveInRoot(rootOnly(context.root), path, use), () => {
      // A call cut (Ctrl-C, a STOP, its timeout) while it waited in line never takes effect.
      refuseIfCut(context.signal);
      return task();
    }),
  );
}

/** A call the run has cut, or that timed out, writes nothing: the loop has logged it as not done. */
function refuseIfCut(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolError('the call was cut before it wrote anything', false);
}

/**
 * The plan written: into its folder held open from the root down (root-files.ts), so a folder
 * swapped for a link meanwhile cannot send it out of the root. An overwrite or an edit replaces
 * the file whole, never half-written, keeping its mode and owner.
 */
async function writePlan(plan: WritePlan, text: string, path: string, signal: AbortSignal): Promise<void> {
  try {
    const folder = await HeldFolder.open(plan.confinement, dirname(plan.file), path);
    try {
      // The last moment a cut can still stop it: the plan was read and the folder opened meanwhile.
      refuseIfCut(signal);
      await writeInFolder(plan.confinement, folder, basename(plan.file), text, plan.mode, path);
    } finally {
      await folder.close();
    }
  } catch (error) {
    throw fileFailure(error, path, 'write');
  }
}

interface WritePlan {
  confinement: Confinement;
  file: string;
  shown: string;
  /** Whether the file is there now, and its size. */
  exists: boolean;
  size: number;
  /** Its text, when it was read: for a preview, an append or an edit. */
  before: string | null;
  after: string;
  /** What the write puts in the file: its whole text, or for an append what is added. */
  written: string;
  mode: (typeof WRITE_MODES)[number];
}

/** What a plan would change, for the question before it runs. */
function previewOf(plan: WritePlan): Promise<string> {
  if (plan.exists && plan.before === null) return Promise.resolve(unreadPreview(plan.shown, plan.size, plan.after));
  return diffPreview(plan.shown, plan.exists ? plan.before : null, plan.after);
}

/** A write's plan; the old content is read only for its preview (`forPreview`) or to append to it. */
async function planWrite(args: Record<string, unknown>, context: ToolContext, forPreview: boolean): Promise<WritePlan> {
  const path = stringArg(args, 'path') ?? '';
  const content = stringArg(args, 'content') ?? '';
  const mode = (stringArg(args, 'mode') ?? 'overwrite') as WritePlan['mode'];
  refuseNul(path, 'path');
  refuseFolderPath(path);
  const confinement = await confinementOf(context);
  const file = await resolveInRoot(confinement, path, 'write');
  const current = await currentFile(confinement, file, path, mode === 'append' ? 'whole' : forPreview && mode === 'overwrite' ? 'preview' : 'none');
  if (mode === 'create' && current !== null) throw new ToolError(quoting`"${path}" already exists; use mode "overwrite" to replace it`);
  // Said before the question too; the write checks again on the file it opens.
  if (mode === 'append' && current !== null && current.names > 1) throw hardLink(path, current.names);
  // Appended to, the file must be text; overwritten, its old content only feeds the preview's diff.
  const bytes = current?.bytes ?? null;
  const before = bytes === null ? null : mode === 'append' ? editableText(bytes, path) : bytes.toString('utf8');
  const written = mode === 'append' ? appended(before, content) : keepingBom(current?.bom === true, content);
  return { confinement, file, shown: shownPath(context.root, file), exists: current !== null, size: current?.size ?? 0, before, after: mode === 'append' ? (before ?? '') + written : written, written, mode };
}

/** What an append adds: its lines end as the file's do, as an edit's new lines do. */
function appended(before: string | null, content: string): string {
  return before === null ? content : inLineEndingsOf(before, content);
}

/**
 * An overwrite's text, starting with the byte order mark the file started with: read_file does not
 * show it, so a file read and written back whole would lose it.
 */
function keepingBom(hadBom: boolean, content: string): string {
  return hadBom && !content.startsWith(BYTE_ORDER_MARK) ? BYTE_ORDER_MARK + content : content;
}

/** write_file's preview: the diff the write would make. */
export async function writePreview(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  return previewOf(await planWrite(args, context, true));
}

export const writeFileTool: Tool = {
  ...WRITE_FILE,
  refuse: nulInPath,
  preview: writePreview,
  run: (args, context) =>
    inCallOrder(context, stringArg(args, 'path') ?? '', 'write', async () => {
      const plan = await planWrite(args, context, false);
      await writePlan(plan, plan.written, stringArg(args, 'path') ?? '', context.signal);
      return { path: plan.shown, mode: plan.mode, bytes_written: Buffer.byteLength(plan.written, 'utf8'), created: !plan.exists };
    }),
};

const BARE_LF = /(?<!\r)\n/g;
const HAS_BARE_LF = /(?<!\r)\n/;

/** `part`'s bare LFs as CRLF. */
function crlf(part: string): string {
  return part.replace(BARE_LF, '\r\n');
}

/** Whether every line of `text` that ends, ends in CRLF (and one does). */
function isAllCrlf(text: string): boolean {
  return text.includes('\r\n') && !HAS_BARE_LF.test(text);
}

/** New text's lines as they end in `text`: CRLF in a file whose lines all end in CRLF, else as given. */
function inLineEndingsOf(text: string, added: string): string {
  return isAllCrlf(text) ? crlf(added) : added;
}

/**
 * `old` and `new` as they apply to this file: read_file shows CRLF lines without their CR. In a
 * file whose lines all end in CRLF, new lines get CRLF too, and `old` is tried in its CRLF form when
 * it is not there as given; in a file with both endings, only `old` is, and `new` follows it.
 */
function matchingForm(text: string, old: string, replacement: string): { from: string; to: string } {
  if (!text.includes('\r\n')) return { from: old, to: replacement };
  const from = text.includes(old) || !old.includes('\n') ? old : crlf(old);
  if (isAllCrlf(text)) return { from, to: crlf(replacement) };
  return from === old ? { from: old, to: replacement } : { from, to: crlf(replacement) };
}

async function planEdit(args: Record<string, unknown>, context: ToolContext): Promise<WritePlan> {
  const path = stringArg(args, 'path') ?? '';
  const old = stringArg(args, 'old') ?? '';
  const replacement = stringArg(args, 'new') ?? '';
  refuseNul(path, 'path');
  refuseFolderPath(path);
  const confinement = await confinementOf(context);
  const file = await resolveInRoot(confinement, path, 'existing file');
  const current = await currentFile(confinement, file, path, 'whole');
  if (current === null) throw new ToolError(quoting`file "${path}" does not exist; create it with write_file`);
  const before = editableText(current.bytes ?? Buffer.alloc(0), path);
  if (old === '') throw new ToolError('"old" must not be empty; use write_file to write a whole file');
  const { from, to } = matchingForm(before, old, replacement);
  const first = before.indexOf(from);
  if (first === -1) throw new ToolError(quoting`the text to replace was not found in "${path}"; read the file and copy it exactly`);
  if (before.includes(from, first + 1)) throw new ToolError(quoting`the text to replace occurs more than once in "${path}"; include more surrounding lines`);
  const after = before.slice(0, first) + to + before.slice(first + from.length);
  return { confinement, file, shown: shownPath(context.root, file), exists: true, size: current.size, before, after, written: after, mode: 'overwrite' };
}

/** edit_file's preview: the diff the edit would make. */
export async function editPreview(args: Record<string, unknown>, context: ToolContext): Promise<string> {
  return previewOf(await planEdit(args, context));
}

export const editFileTool: Tool = {
  ...EDIT_FILE,
  refuse: nulInPath,
  preview: editPreview,
  run: (args, context) =>
    inCallOrder(context, stringArg(args, 'path') ?? '', 'existing file', async () => {
      const plan = await planEdit(args, context);
      await writePlan(plan, plan.written, stringArg(args, 'path') ?? '', context.signal);
      return { path: plan.shown, replaced: 1 };
    }),
};
