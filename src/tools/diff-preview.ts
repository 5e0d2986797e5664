// What a write or an edit would change, as `git diff` shows it, for the question asked before it
// runs. The diff runs on the main thread, where Ctrl-C and a STOP wait for it, and its cost grows
// with the square of what changed (a 15,000-line rewrite took 46 s). So the lines both sides share
// at either end are set aside first, what is left is diffed within a bound of time and edits (past
// it, or past a size, a summary is shown instead), and the diff shown is cut to its first lines,
// each said.
import { headOf, tailOf } from '../output/cut.js';
import { groupThousands } from '../text/decimal.js';

/** Unchanged lines shown around each change, as git shows them. */
const CONTEXT_LINES = 3;
/** The most characters of each side that are diffed, once the lines both share at either end are set aside. */
export const DIFF_MOST_CHARS = 1024 * 1024;
/** How long the diff may run: Ctrl-C waits at most about this long. */
const DIFF_MOST_MS = 250;
/** Line edits the diff may take beyond the two sides' difference in lines (all of it for a new file). */
const DIFF_MOST_EXTRA_EDITS = 2000;
/** The most of a diff shown: its first lines, then a line saying how much more there was. */
export const PREVIEW_MOST_LINES = 500;
const PREVIEW_MOST_CHARS = 50_000;
/**
 * A diff line longer than this (minified JSON or JS, a one-line file) shows this much of itself, from
 * a little before where it differs from its counterpart: whole, it would fill the preview, or not fit at all.
 */
export const LINE_MOST_CHARS = 1000;
/** Characters shown before a long line's first difference, to say where it is. */
const LINE_LEAD_CHARS = 200;

/** "1 line", "15,000 lines". */
function linesSaid(count: number): string {
  return `${groupThousands(count)} ${count === 1 ? 'line' : 'lines'}`;
}

/** Lines of `text`: a last line without a newline counts. */
export function lineCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return text === '' || text.endsWith('\n') ? count : count + 1;
}

/** Where the line holding `at` starts: `at` itself when it starts a line. */
function lineStart(text: string, at: number): number {
  return at === 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
}

/** How many characters `a` and `b` share at their start. */
function sharedHead(a: string, b: string): number {
  const shorter = Math.min(a.length, b.length);
  let same = 0;
  while (same < shorter && a.charCodeAt(same) === b.charCodeAt(same)) same++;
  return same;
}

/**
 * The part of `before` and `after` that differs, in whole lines, with CONTEXT_LINES lines of what
 * both share on each side: what the diff needs to give the hunks of the whole (`skipped`, the lines
 * before the part, moves their line numbers).
 */
export function changedPart(before: string, after: string): { skipped: number; before: string; after: string } {
  const shorter = Math.min(before.length, after.length);
  let start = lineStart(before, sharedHead(before, after));
  for (let line = 0; line < CONTEXT_LINES && start > 0; line++) start = lineStart(before, start - 1);
  // The shared tail: never into the shared head, so both parts are whole lines.
  let tail = 0;
  while (tail < shorter - start && before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)) tail++;
  // From the first line that starts inside the shared tail.
  const newline = before.indexOf('\n', before.length - tail);
  let end = tail === 0 || newline === -1 ? before.length : newline + 1;
  for (let line = 0; line < CONTEXT_LINES && end < before.length; line++) {
    const next = before.indexOf('\n', end);
    end = next === -1 ? before.length : next + 1;
  }
  return { skipped: lineCount(before.slice(0, start)), before: before.slice(start, end), after: after.slice(start, end + after.length - before.length) };
}

/** The file names as `git diff` shows them. */
function headerOf(shown: string, created: boolean): string {
  return `${created ? '--- /dev/null' : `--- a/${shown}`}\n+++ b/${shown}\n`;
}

/**
 * The diff from `before` (null: no file) to `after` of the file shown as `shown`, as `git diff`
 * shows it (no underline, no tab after a name): the hunks, at most PREVIEW_MOST_LINES lines of them;
 * a summary instead when the change is too large or too different to diff in time.
 */
export async function diffPreview(shown: string, before: string | null, after: string): Promise<string> {
  const { FILE_HEADERS_ONLY, formatPatch, structuredPatch } = await import('diff');
  const part = changedPart(before ?? '', after);
  const oldLines = lineCount(part.before);
  const newLines = lineCount(part.after);
  const summary = (why: string): string => `${headerOf(shown, before === null)}[${before === null ? '' : `old: ${linesSaid(lineCount(before))}, `}new: ${linesSaid(lineCount(after))}; ${why}]\n`;
  if (part.before.length > DIFF_MOST_CHARS || part.after.length > DIFF_MOST_CHARS) return summary('too large to show line by line');
  const patch = structuredPatch(before === null ? '/dev/null' : `a/${shown}`, `b/${shown}`, part.before, part.after, undefined, undefined, {
    context: CONTEXT_LINES,
    timeout: DIFF_MOST_MS,
    maxEditLength: Math.abs(oldLines - newLines) + DIFF_MOST_EXTRA_EDITS,
  });
  if (patch === undefined) return summary('too different to show line by line');
  for (const hunk of patch.hunks) {
    hunk.oldStart += part.skipped;
    hunk.newStart += part.skipped;
  }
  return shownHead(formatPatch(patch, FILE_HEADERS_ONLY));
}

/** The preview of an overwrite of a file too large to read for it (`bytes` long): its size, and the lines that would replace it. */
export function unreadPreview(shown: string, bytes: number, after: string): string {
  return `${headerOf(shown, false)}[old: ${groupThousands(bytes)} bytes, too large to show; new: ${linesSaid(lineCount(after))}]\n`;
}

/**
 * A diff line (its mark, then its text) cut to LINE_MOST_CHARS of its text when longer: from
 * LINE_LEAD_CHARS before where it first differs from `counterpart` (the line it replaces or is
 * replaced by; null: none, its start), or its last LINE_MOST_CHARS when that is near its end; what
 * is left out on either side is counted.
 */
export function shownLine(line: string, counterpart: string | null): string {
  const text = line.slice(1);
  if (text.length <= LINE_MOST_CHARS) return line;
  const differs = counterpart === null ? 0 : sharedHead(text, counterpart.slice(1));
  const from = Math.min(Math.max(0, differs - LINE_LEAD_CHARS), text.length - LINE_MOST_CHARS);
  // Never half of a surrogate pair at either cut.
  const rest = tailOf(text, text.length - from);
  const shown = headOf(rest, LINE_MOST_CHARS);
  const before = text.length - rest.length;
  const after = rest.length - shown.length;
  return `${line.slice(0, 1)}${before > 0 ? `[… ${groupThousands(before)} characters not shown …]` : ''}${shown}${after > 0 ? `[… ${groupThousands(after)} more characters not shown …]` : ''}`;
}

/**
 * The hunk lines of `lines` (past the two file names) as shownLine shows them: in a run of removed
 * lines and the run of added lines after it, the first of each pairs with the first of the other,
 * and so on; a note (`\ No newline at end of file`) belongs to neither run.
 */
function shownLines(lines: readonly string[]): string[] {
  const shown = [...lines];
  const marked = (at: number, mark: string): boolean => lines[at]?.startsWith(mark) === true;
  const runOf = (from: number, mark: string): { at: number[]; end: number } => {
    const at: number[] = [];
    let end = from;
    for (; marked(end, mark) || marked(end, '\\'); end++) if (marked(end, mark)) at.push(end);
    return { at, end };
  };
  for (let index = 2; index < lines.length; ) {
    if (!marked(index, '-')) {
      shown[index] = shownLine(lines[index] ?? '', null);
      index++;
      continue;
    }
    const removed = runOf(index, '-');
    const added = runOf(removed.end, '+');
    const pair = (at: readonly number[], other: readonly number[]): void => {
      at.forEach((line, nth) => {
        const counterpart = other[nth];
        shown[line] = shownLine(lines[line] ?? '', counterpart === undefined ? null : (lines[counterpart] ?? null));
      });
    };
    pair(removed.at, added.at);
    pair(added.at, removed.at);
    index = added.end;
  }
  return shown;
}

/**
 * The diff's first PREVIEW_MOST_LINES lines (and PREVIEW_MOST_CHARS characters), each long line cut
 * around its change (shownLine), then how much more there was.
 */
function shownHead(diff: string): string {
  const whole = diff.split('\n');
  // The text ends in a newline: its last piece is empty.
  whole.pop();
  const lines = shownLines(whole);
  const cut = lines.some((line, index) => line !== whole[index]);
  let kept = 0;
  let chars = 0;
  while (kept < lines.length && kept < PREVIEW_MOST_LINES && chars + (lines[kept]?.length ?? 0) + 1 <= PREVIEW_MOST_CHARS) chars += (lines[kept++]?.length ?? 0) + 1;
  const head = `${lines.slice(0, kept).join('\n')}\n`;
  if (kept === lines.length) return cut ? head : diff;
  let removed = 0;
  let added = 0;
  // The file names are the first two lines; hunk lines start with their mark.
  for (const line of lines.slice(2)) {
    if (line.startsWith('-')) removed++;
    else if (line.startsWith('+')) added++;
  }
  return `${kept > 0 ? head : ''}[… ${groupThousands(lines.length - kept)} more lines of the diff not shown: ${groupThousands(removed)} removed and ${groupThousands(added)} added in all]\n`;
}
