// The `fs` toolset: read, list and search files under the root. Nothing here writes. What the model
// is told of each tool is in builtins.ts; this code loads with a run's first call.
import { readdir } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { errnoOf, isMissing } from '../log/fs.js';
import { allows, confinementOf, fileFailure, isInside, nulInListing, nulInPath, nulInSearch, refuseFolderPath, refuseNul, resolveInRoot, shownPath } from './root.js';
import type { Confinement } from './root.js';
import { READ_FLAGS, openInRoot } from './root-files.js';
import { ToolError, isOverBudget, largestFitting, numberArg, stringArg } from './types.js';
import type { Tool, ToolResult } from './types.js';
import { clipText, headOf } from '../output/cut.js';
import { groupThousands } from '../text/decimal.js';
import { BYTE_ORDER_MARK } from '../text/utf8.js';
import { braceExpansionCount } from './brace-count.js';
import { QuotingMessage, clipped, quoting } from './foreign-line.js';
import { LIST_FILES, READ_FILE, SEARCH_FILES } from './builtins.js';
import { PatternTooSlowError, matchLines } from './line-search.js';
import type { LineMatch } from './line-search.js';

export const READ_CAP_BYTES = 50 * 1024;
const LIST_CAP = 1000;
const MATCH_CAP = 200;
const MATCH_TEXT_CHARS = 200;
const SEARCH_FILE_BYTES = 1024 * 1024;
/**
 * Bytes of files searched at once, each batch one hand-over to the search worker: small at first, so
 * a search that soon finds its 200 matches reads little, then doubling up to the most.
 */
const FIRST_BATCH_BYTES = 64 * 1024;
const MOST_BATCH_BYTES = 2 * 1024 * 1024;
/** How long a pattern may run on one batch; an ordinary one takes milliseconds. */
export const SEARCH_PATTERN_MS = 5000;
const IGNORED = ['**/node_modules/**', '**/.git/**'];
/** Patterns a glob's braces may expand to: `*.{ts,tsx,js,jsx}` in `src/{a,b,c}` is 12. */
export const GLOB_PATTERNS_MOST = 100;

export const readFileTool: Tool = {
  ...READ_FILE,
  refuse: nulInPath,
  run: async (args, context) => {
    const path = stringArg(args, 'path') ?? '';
    refuseNul(path, 'path');
    refuseFolderPath(path);
    const { file, handle, size } = await existingFile(await confinementOf(context), path);
    let read: LinesRead;
    try {
      read = await readLines(handle, size, path, numberArg(args, 'offset') ?? 1, numberArg(args, 'limit'));
    } catch (error) {
      throw fileFailure(error, path, 'read');
    } finally {
      await handle.close();
    }
    return fittedRead(read, shownPath(context.root, file), context.resultBudget);
  },
};

/** A NUL byte marks a binary file, which the file tools neither show nor edit. */
export function isBinary(bytes: Uint8Array): boolean {
  return bytes.includes(0);
}

const BINARY_SNIFF_BYTES = 8192;
const READ_CHUNK_BYTES = 64 * 1024;
const NEWLINE = 10;
const CARRIAGE_RETURN = 13;
/** A line's trailing CR, dropped from what the model sees (the byte counts already leave it out). */
const LINE_END_CR = /\r(?=\n|$)/g;
export { BYTE_ORDER_MARK } from '../text/utf8.js';

/** Lines read from a file: `count` lines from `offset`, and why the read stopped short, if it did. */
interface LinesRead {
  offset: number;
  count: number;
  content: string;
  /** `cap`: at the 50 KB cap; `long line`: its only line was cut at the cap; `budget`, `long line for budget`: the same, to fit the result's budget. */
  cut: 'cap' | 'long line' | 'budget' | 'long line for budget' | null;
  /** The file's lines, when `offset` is past them (no line was read). */
  pastEnd?: number;
  /** Whether the content's last line is the file's last: true, false, or null when not known (a line too long to look past). */
  lastLine: boolean | null;
}

/** The note on a read from past the end, naming the lines there are: an empty content alone does not say why. */
function pastEndNote(offset: number, lines: number): string {
  // From the first line (the model may have given no offset), an empty file is simply empty.
  if (lines === 0) return offset === 1 ? 'the file is empty' : `offset ${offset} is past the end: the file is empty`;
  return `offset ${offset} is past the end: the file has ${groupThousands(lines)} line${lines === 1 ? '' : 's'}`;
}

/**
 * Where to go after a line cut short: on to the next line, or, when it was the file's last, to a
 * tool that reads inside a line (read_file reads whole lines, and its offset would be past the end).
 */
function afterCutLine(line: number, lastLine: boolean | null): string {
  if (lastLine === true) return "it is the file's last line: read_file shows no more of it (run_command, if offered, can: head -c or tail -c)";
  if (lastLine === false) return `the next line is ${line + 1} (read on with offset ${line + 1})`;
  return `any next line is ${line + 1} (read on with offset ${line + 1}; past the end, it is the file's last line)`;
}

/** The result of a read: what it says of where it stopped comes before the content, so a result cut to its head still says it. */
function readResult(shown: string, { offset, count, content, cut, pastEnd, lastLine }: LinesRead): ToolResult {
  const to = offset + count - 1;
  const note = {
    cap: `stopped at the 50 KB cap; read on with offset ${to + 1}`,
    'long line': `line ${offset} is longer than the 50 KB cap and was cut there; ${afterCutLine(offset, lastLine)}`,
    budget: `stopped at line ${to}, as much as one result holds; read on with offset ${to + 1}`,
    'long line for budget': `line ${offset} is longer than one result holds and was cut; ${afterCutLine(offset, lastLine)}`,
  };
  if (pastEnd !== undefined) return { path: shown, from_line: offset, to_line: null, note: pastEndNote(offset, pastEnd), content };
  return { path: shown, from_line: offset, to_line: count === 0 ? null : to, ...(cut !== null ? { truncated: true, note: note[cut] } : {}), content };
}

/**
 * What a cut line keeps when the result holds not one character of it (a path nearly as long as the
 * budget): that result cannot fit, and the loop cuts it and saves it whole, as any result past its budget.
 */
const LEAST_LINE_CHARS = 500;

/**
 * The read as a result that fits `budget` (the tool's result budget), so the loop never cuts it
 * into a head whose `to_line` names lines it does not hold: as many whole lines as fit, then a note
 * to read on; a first line that alone does not fit is cut, the note leading past it.
 */
function fittedRead(read: LinesRead, shown: string, budget: number | undefined): ToolResult {
  const whole = readResult(shown, read);
  if (budget === undefined || read.count === 0) return whole;
  // Serialized, text only grows (quotes, escapes): content longer than the budget cannot fit.
  if (read.content.length <= budget && !isOverBudget(JSON.stringify(whole), budget)) return whole;
  const ends: number[] = [];
  for (let at = read.content.indexOf('\n'); at !== -1 && ends.length < read.count - 1; at = read.content.indexOf('\n', at + 1)) ends.push(at);
  ends.push(read.content.length);
  const withLines = (lines: number): ToolResult => readResult(shown, { ...read, count: lines, content: read.content.slice(0, ends[lines - 1]), cut: 'budget', lastLine: false });
  // The fewest lines whose text alone is over the budget bound the search, so it serializes only
  // results near the budget's size, not halves of a 50 KB read.
  let overLines = read.count;
  for (let low = 1, high = read.count; low <= high; ) {
    const middle = Math.floor((low + high) / 2);
    if ((ends[middle - 1] ?? 0) > budget) {
      overLines = middle;
      high = middle - 1;
    } else {
      low = middle + 1;
    }
  }
  const lines = largestFitting(overLines, budget, withLines);
  if (lines > 0) return withLines(lines);
  const line = read.content.slice(0, ends[0]);
  // The line cut is the file's last only if the read held no line after it.
  const lastLine = read.count === 1 ? read.lastLine : false;
  const withChars = (chars: number): ToolResult => readResult(shown, { ...read, count: 1, content: headOf(line, chars), cut: 'long line for budget', lastLine });
  const fits = largestFitting(line.length, budget, withChars);
  return withChars(fits > 0 ? fits : Math.min(LEAST_LINE_CHARS, line.length));
}

/**
 * Lines `offset`… of a file, at most `limit`, stopping before the 50 KB cap. Read in chunks; lines
 * are found by index and each chunk's kept lines decoded in one piece, so a call allocates per
 * chunk, not per line, and parallel calls overlap on I/O rather than queue on the CPU. `size`
 * (from the stat) spares the read that would only find the end. A NUL byte in the first 8 KB
 * means a binary file, refused.
 */
async function readLines(handle: FileHandle, size: number, path: string, offset: number, limit: number | undefined): Promise<LinesRead> {
  const parts: string[] = [];
  let bytes = 0;
  let number = 0;
  let count = 0;
  let truncated = false;
  let done = false;
  // Whether the last kept line's own newline is in `parts` (the content has none after its last line).
  let endsWithNewline = false;
  // Set when the first line asked for is itself longer than the cap: its head is all that is shown,
  // and the file is looked at from `endFrom` (where its end may be) to say whether it is the last line.
  const first = { cut: false, endFrom: 0 };
  // Where `data` (the chunk with what was carried over) starts in the file.
  let dataAt = 0;
  const keepHead = (data: Buffer, from: number, endFrom: number): void => {
    parts.push(data.toString('utf8', from, characterStart(data, from + READ_CAP_BYTES)));
    count = 1;
    first.cut = true;
    first.endFrom = dataAt + endFrom;
  };
  // Line [from, to) of `data`: counted, kept unless it is before the offset; false when reading should stop.
  const take = (data: Buffer, from: number, to: number): boolean => {
    number++;
    if (number < offset) return true;
    if (limit !== undefined && count >= limit) return false;
    // The content's bytes: this line, and the newline joining it to the one before.
    const added = to - from - (to > from && data[to - 1] === CARRIAGE_RETURN ? 1 : 0) + (count > 0 ? 1 : 0);
    if (bytes + added > READ_CAP_BYTES) {
      truncated = true;
      if (count === 0) keepHead(data, from, to);
      return false;
    }
    bytes += added;
    count++;
    return true;
  };
  // Sized to the file when it is small (one more byte shows it did not grow); a size of 0 may be a special file, read in chunks.
  const chunk = Buffer.allocUnsafe(size > 0 && size < READ_CHUNK_BYTES ? size + 1 : READ_CHUNK_BYTES);
  let carry = Buffer.alloc(0);
  let position = 0;
  let atEnd = false;
  while (!done && !atEnd) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    if (position === 0 && isBinary(chunk.subarray(0, Math.min(bytesRead, BINARY_SNIFF_BYTES)))) throw new ToolError(quoting`"${path}" is a binary file`);
    position += bytesRead;
    atEnd = size > 0 && position >= size && bytesRead < chunk.length;
    const data = carry.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([carry, chunk.subarray(0, bytesRead)]);
    dataAt = position - data.length;
    let start = 0;
    let keptFrom = -1;
    for (let newline = data.indexOf(NEWLINE); newline !== -1; newline = data.indexOf(NEWLINE, start)) {
      const before = count;
      if (!take(data, start, newline)) {
        done = true;
        break;
      }
      if (keptFrom === -1 && count > before) keptFrom = start;
      start = newline + 1;
    }
    // The kept lines are consecutive: one piece, each line with its newline.
    if (keptFrom !== -1) {
      parts.push(data.toString('utf8', keptFrom, start));
      endsWithNewline = true;
    }
    // A line longer than the cap cannot be shown; one before the offset only needs counting.
    if (!done && data.length - start > READ_CAP_BYTES && number + 1 >= offset) {
      truncated = true;
      done = true;
      if (count === 0) {
        number++;
        keepHead(data, start, data.length);
      }
    }
    // Copied: `chunk` is read into again.
    carry = done ? Buffer.alloc(0) : Buffer.from(data.subarray(start, data.length - start > READ_CAP_BYTES ? start : data.length));
  }
  const before = count;
  dataAt = position - carry.length;
  if (!done && carry.length > 0) {
    // Refused (past the limit), the line is still there: the read stopped before it.
    if (!take(carry, 0, carry.length)) done = true;
    else if (count > before) {
      parts.push(carry.toString('utf8'));
      endsWithNewline = false;
    }
  }
  let content = parts.join('');
  if (endsWithNewline) content = content.slice(0, -1);
  if (content.includes('\r')) content = content.replace(LINE_END_CR, '');
  // A byte order mark is no text of line 1's, as a CRLF line's CR is none of its.
  if (offset <= 1 && content.startsWith(BYTE_ORDER_MARK)) content = content.slice(1);
  // Not stopped, the read went to the end; stopped at a whole line, there is one after it.
  const lastLine = first.cut ? await endsFile(handle, first.endFrom) : !done;
  // Nothing taken and not stopped: every line was counted, and all were before the offset.
  return { offset, count, content, cut: first.cut ? 'long line' : truncated ? 'cap' : null, ...(count === 0 && !done ? { pastEnd: number } : {}), lastLine };
}

/** Bytes past a cut line's head looked through for its end; a longer line is not known to be the last. */
const LINE_END_LOOK_BYTES = 64 * 1024 * 1024;

/**
 * Whether the line running on at `from` is the file's last: no newline after it, or one that ends
 * the file. Null when its end is more than LINE_END_LOOK_BYTES away.
 */
async function endsFile(handle: FileHandle, from: number): Promise<boolean | null> {
  const chunk = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  for (let position = from; position - from <= LINE_END_LOOK_BYTES; ) {
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) return true;
    const newline = chunk.subarray(0, bytesRead).indexOf(NEWLINE);
    if (newline !== -1) {
      if (newline + 1 < bytesRead) return false;
      return (await handle.read(chunk, 0, 1, position + bytesRead)).bytesRead === 0;
    }
    position += bytesRead;
  }
  return null;
}

/** `end`, or the start of the UTF-8 character it falls inside, so a cut never splits one. */
function characterStart(data: Buffer, end: number): number {
  let at = Math.min(end, data.length);
  while (at > 0 && at < data.length && ((data[at] ?? 0) & 0xc0) === 0x80) at--;
  return at;
}

/** The model's `path` opened for reading: a regular file where the tools may go (checked once open too). */
async function existingFile(confinement: Confinement, path: string): Promise<{ file: string; handle: FileHandle; size: number }> {
  const file = await resolveInRoot(confinement, path, 'existing file');
  let handle: FileHandle;
  try {
    handle = await openInRoot(confinement, file, READ_FLAGS, path);
  } catch (error) {
    if (isMissing(error)) throw new ToolError(quoting`file "${path}" does not exist`);
    throw fileFailure(error, path, 'open');
  }
  const stats = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (stats.isFile()) return { file, handle, size: stats.size };
  await handle.close();
  throw new ToolError(quoting`"${path}" is not a file`);
}

async function directoryIn(confinement: Confinement, path: string | undefined): Promise<string> {
  const dir = await resolveInRoot(confinement, path ?? '.', 'existing directory');
  try {
    if (!(await stat(dir)).isDirectory()) throw new ToolError(quoting`"${path ?? '.'}" is not a directory`);
  } catch (error) {
    if (isMissing(error)) throw new ToolError(quoting`directory "${path ?? '.'}" does not exist`);
    throw fileFailure(error, path ?? '.', 'open');
  }
  return dir;
}

/** What a glob found: its files, and how many folders it could not read (their files are not among them). */
interface Globbed {
  files: string[];
  unreadableFolders: number;
}

/**
 * fast-glob's readdir, each folder it fails to read (not one gone meanwhile) added to `unreadable`:
 * fast-glob goes on past it, and the model is told files may be missing. Once `signal` aborts, no
 * folder is read: each fails at once, so the walk ends within the reads already under way (fast-glob
 * has no signal of its own, and a walk of `/` would go on for many seconds, holding the process).
 */
function countingReaddir(unreadable: Set<string>, signal: AbortSignal): typeof readdir {
  const counting = (path: string, ...rest: unknown[]): void => {
    const done = rest.pop() as (error: NodeJS.ErrnoException | null, entries: unknown) => void;
    if (signal.aborted) {
      process.nextTick(done, Object.assign(new Error('the call was stopped'), { code: 'ABORT_ERR' }), undefined);
      return;
    }
    (readdir as (...args: unknown[]) => void)(path, ...rest, (error: NodeJS.ErrnoException | null, entries: unknown) => {
      if (error !== null && !isMissing(error) && errnoOf(error) !== 'ENOTDIR') unreadable.add(path);
      done(error, entries);
    });
  };
  return counting as typeof readdir;
}

/**
 * A `..` step in a glob: a whole part between slashes, or a whole alternative of braces, which
 * braces may leave unexpanded (`{..,sub}/*`) for fast-glob to read its own way. `{1..3}` is a range.
 */
const CLIMB = /(?:^|[/{,])\.\.(?:$|[/},])/;

/** Whether a glob (or one of its brace expansions) steps above where it starts, or starts at `/`. */
function climbsOut(glob: string): boolean {
  return CLIMB.test(glob) || glob.startsWith('/');
}

/**
 * fast-glob with links not followed, and every match re-checked against the root where it really is:
 * fast-glob still enters a linked directory a pattern names outright (`out/**`, `{out,src}/*`).
 * Matches are files, never links, so their folder's real path is enough (one realpath per folder).
 * The data home, when it lies in the root, is not walked, and nothing in it is kept. When `signal`
 * aborts, the walk stops and this throws its reason.
 */
async function globIn(confinement: Confinement, dir: string, pattern: string, argument: 'pattern' | 'glob', signal: AbortSignal): Promise<Globbed> {
  if (pattern.trim() === '') throw new ToolError(`the ${argument} is empty; give a glob such as "**/*.ts", or "**/*" for every file`);
  refuseNul(pattern, argument);
  // Named as the model gave it: list_files' `pattern`, search_files' `glob` (whose `pattern` is a regular expression).
  const mustStayInside = (): ToolError => new ToolError(new QuotingMessage([`${argument} "`, '" must stay inside the root (no "..", no leading "/")'], [pattern]));
  if (climbsOut(pattern)) throw mustStayInside();
  if ((await braceExpansionCount(pattern, GLOB_PATTERNS_MOST)) > GLOB_PATTERNS_MOST) {
    const words = [`${argument} "`, `" expands to more than ${GLOB_PATTERNS_MOST} patterns (each {…,…} multiplies them); use fewer brace alternatives`];
    throw new ToolError(new QuotingMessage(words, [clipped(pattern, 100)]));
  }
  // Counted first, so the expansion is small.
  const { default: braces } = await import('braces');
  if (braces(pattern, { expand: true }).some(climbsOut)) throw mustStayInside();
  const { default: fg } = await import('fast-glob');
  signal.throwIfAborted();
  const home = confinement.home !== null && isInside(dir, confinement.home) ? [`${fg.escapePath(relative(dir, confinement.home).split(sep).join('/'))}/**`] : [];
  const unreadable = new Set<string>();
  const found = await fg(pattern, {
    cwd: dir,
    onlyFiles: true,
    dot: false,
    followSymbolicLinks: false,
    absolute: true,
    ignore: [...IGNORED, ...home],
    suppressErrors: true,
    fs: { readdir: countingReaddir(unreadable, signal) },
  });
  signal.throwIfAborted();
  const real = await realFolders(found.map((file) => dirname(file)), signal);
  const inside = found.filter((file) => {
    const folder = real.get(dirname(file));
    return folder !== undefined && folder !== null && allows(confinement, join(folder, basename(file)));
  });
  return { files: inside.sort(), unreadableFolders: unreadable.size };
}

/** Folders resolved this many at a time, the signal looked at between: a walk of `/` finds folders by the hundred thousand. */
const REALPATH_BATCH = 256;

/** The real path of each of `folders` (null for one gone), until `signal` aborts (then it throws). */
async function realFolders(folders: readonly string[], signal: AbortSignal): Promise<Map<string, string | null>> {
  const unique = [...new Set(folders)];
  const real = new Map<string, string | null>();
  for (let from = 0; from < unique.length; from += REALPATH_BATCH) {
    signal.throwIfAborted();
    const batch = unique.slice(from, from + REALPATH_BATCH);
    const resolved = await Promise.all(batch.map((folder) => realpath(folder).catch(() => null)));
    batch.forEach((folder, index) => real.set(folder, resolved[index] ?? null));
  }
  return real;
}

/** The result's `skipped` entry for folders a glob could not read, when there were any. */
function unreadableFoldersOf({ unreadableFolders }: Globbed): { unreadable_folders?: number } {
  return unreadableFolders > 0 ? { unreadable_folders: unreadableFolders } : {};
}

export const listFilesTool: Tool = {
  ...LIST_FILES,
  refuse: nulInListing,
  run: async (args, context) => {
    const confinement = await confinementOf(context);
    const dir = await directoryIn(confinement, stringArg(args, 'path'));
    const globbed = await globIn(confinement, dir, stringArg(args, 'pattern') ?? '*', 'pattern', context.signal);
    const { files } = globbed;
    const skipped = unreadableFoldersOf(globbed);
    // The count and the notes before the list: a result cut to its head still says them.
    return {
      count: files.length,
      ...(files.length > LIST_CAP ? { truncated: true, note: `first ${LIST_CAP} of ${files.length}; narrow the pattern` } : {}),
      ...(Object.keys(skipped).length > 0 ? { skipped } : {}),
      files: files.slice(0, LIST_CAP).map((file) => shownPath(context.root, file)),
    };
  },
};

export const searchFilesTool: Tool = {
  ...SEARCH_FILES,
  refuse: nulInSearch,
  run: async (args, context) => {
    const source = stringArg(args, 'pattern') ?? '';
    // Compiled here only to name a bad pattern; it runs in the worker.
    try {
      new RegExp(source);
    } catch {
      throw new ToolError(quoting`"${source}" is not a valid regular expression`);
    }
    const confinement = await confinementOf(context);
    const dir = await directoryIn(confinement, stringArg(args, 'path'));
    // An empty glob is none: models fill optional arguments with "".
    const glob = stringArg(args, 'glob') ?? '';
    const globbed = await globIn(confinement, dir, glob === '' ? '**/*' : glob, 'glob', context.signal);
    const { files } = globbed;
    const matches: { file: string; line: number; text: string }[] = [];
    let truncated = false;
    // Files read and not searched yet: searched a batch at a time, the pattern in a worker (line-search.ts).
    let batch: { file: string; bytes: Uint8Array<ArrayBuffer> }[] = [];
    let batchBytes = 0;
    let batchCap = FIRST_BATCH_BYTES;
    /** Searches the batch into `matches`; true when there were more matches than room for them. */
    const searchBatch = async (): Promise<boolean> => {
      const taken = batch;
      batch = [];
      batchBytes = 0;
      batchCap = Math.min(batchCap * 2, MOST_BATCH_BYTES);
      let found: LineMatch[];
      try {
        // One more than there is room for shows there were more.
        found = await matchLines(source, taken.map(({ bytes }) => bytes), MATCH_CAP - matches.length + 1, SEARCH_PATTERN_MS, context.signal);
      } catch (error) {
        // Cut (Ctrl-C, the tool's timeout): what was found so far, as a search cut between files gives.
        if (context.signal.aborted) return false;
        if (error instanceof PatternTooSlowError) throw new ToolError(quoting`the pattern "${clipped(source, 100)}" took over ${SEARCH_PATTERN_MS / 1000} s and was stopped: it backtracks too much (nested repetition such as (a+)+ or (.*)*); simplify it or narrow the glob`);
        throw error;
      }
      for (const match of found) {
        if (matches.length >= MATCH_CAP) return true;
        matches.push({ file: shownPath(context.root, taken[match.file]?.file ?? ''), line: match.line, text: clipText(match.text, MATCH_TEXT_CHARS) });
      }
      return false;
    };
    // One batch is searched while the next is read; the next is sent once the one before has answered.
    let searching: Promise<boolean> | null = null;
    const skipped: Partial<Record<Skipped | 'unreadable_folders', number>> = unreadableFoldersOf(globbed);
    for (const { file, bytes: reading } of readAhead(confinement, files)) {
      if (context.signal.aborted) break;
      const bytes = await reading;
      if (!(bytes instanceof Uint8Array)) {
        if (bytes !== 'special') skipped[bytes] = (skipped[bytes] ?? 0) + 1;
        continue;
      }
      batch.push({ file, bytes });
      batchBytes += bytes.byteLength;
      if (batchBytes < batchCap) continue;
      if (searching !== null && (await searching)) {
        truncated = true;
        break;
      }
      searching = searchBatch();
      // Awaited at the next batch or at the end; a failure meanwhile is not unhandled.
      searching.catch(() => undefined);
    }
    if (searching !== null && !truncated) truncated = await searching;
    if (!truncated && batch.length > 0 && !context.signal.aborted) truncated = await searchBatch();
    // What was not searched, and the note, before the matches: a result cut to its head still says them.
    return {
      ...(truncated ? { truncated: true, note: `first ${MATCH_CAP} matches; narrow the pattern or the glob` } : {}),
      ...(Object.keys(skipped).length > 0 ? { skipped } : {}),
      matches,
    };
  },
};

/** Files read this many at a time: the search waits on the disk less. */
const READ_AHEAD = 8;

/**
 * Why a file was not searched: over SEARCH_FILE_BYTES (`over_1_mb`), `binary`, or `unreadable` (no
 * permission, gone since it was listed, moved out of the root); the result counts each. A `special`
 * file (a named pipe) is passed over unsaid, as list_files leaves it out.
 */
type Skipped = 'over_1_mb' | 'binary' | 'unreadable';

/** Each file with its reading, started up to READ_AHEAD files before it is taken. */
function* readAhead(confinement: Confinement, files: readonly string[]): Generator<{ file: string; bytes: Promise<Uint8Array<ArrayBuffer> | Skipped | 'special'> }> {
  const started: { file: string; bytes: Promise<Uint8Array<ArrayBuffer> | Skipped | 'special'> }[] = [];
  let next = 0;
  for (;;) {
    for (; next < files.length && started.length < READ_AHEAD; next++) {
      const file = files[next] ?? '';
      const bytes = readSearchable(confinement, file);
      // Awaited when taken; one that fails after the search has stopped is not unhandled.
      bytes.catch(() => undefined);
      started.push({ file, bytes });
    }
    const taken = started.shift();
    if (taken === undefined) return;
    yield taken;
  }
}

/**
 * A small text file's bytes, in a buffer of their own (handed to the search worker), or why it is
 * not searched: one file that cannot be read never fails the search.
 */
async function readSearchable(confinement: Confinement, file: string): Promise<Uint8Array<ArrayBuffer> | Skipped | 'special'> {
  let handle: FileHandle;
  try {
    handle = await openInRoot(confinement, file, READ_FLAGS, file);
  } catch (error) {
    if (error instanceof ToolError || errnoOf(error) !== undefined) return 'unreadable';
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return 'special';
    if (stats.size > SEARCH_FILE_BYTES) return 'over_1_mb';
    const bytes = new Uint8Array(stats.size);
    const { bytesRead } = await handle.read(bytes, 0, stats.size, 0);
    const content = bytes.subarray(0, bytesRead);
    return isBinary(content) ? 'binary' : bytesRead === stats.size ? bytes : content.slice();
  } catch (error) {
    if (errnoOf(error) !== undefined) return 'unreadable';
    throw error;
  } finally {
    await handle.close();
  }
}
