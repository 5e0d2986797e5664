import { jsonFault } from '../text/json-syntax.js';
import { entryProblem, parseEntry } from './entry.js';
import type { LogEntry } from './entry.js';
import { MAX_LINE_BYTES, isTooLong, lineText, readBlocks, readLines, readLinesBackward } from './lines.js';
import type { RawLine, ReadOptions } from './lines.js';
import type { Needle } from './needle.js';

export interface ScanProblem {
  file: string;
  line: number;
  reason: string;
}

/**
 * Counts what readers skipped, each line once however many scans passed it (argo rerun reads the
 * log twice); `problems` is filled only when asked for (argo logs check).
 */
export class ScanStats {
  unreadable = 0;
  /** Days of the log that are links to no file (listLogFiles): their turns were not read. */
  readonly missedDays: string[] = [];
  readonly problems: ScanProblem[] = [];
  private readonly seen = new Set<string>();
  constructor(readonly keepProblems = false) {}

  /** Counts a skipped line; returns it as a problem (kept in `problems` only when asked for). */
  skip(file: string, line: RawLine, reason: string): ScanProblem {
    const problem = { file, line: line.number, reason };
    const place = `${line.offset}:${file}`;
    if (this.seen.has(place)) return problem;
    this.seen.add(place);
    this.unreadable++;
    if (this.keepProblems) this.problems.push(problem);
    return problem;
  }

  missDay(path: string): void {
    if (!this.missedDays.includes(path)) this.missedDays.push(path);
  }

  /** The stderr line readers print after skipping, or null when nothing was skipped. */
  notice(): string | null {
    const skipped = [
      ...(this.unreadable === 0 ? [] : [this.unreadable === 1 ? '1 unreadable log line' : `${this.unreadable} unreadable log lines`]),
      ...(this.missedDays.length === 0 ? [] : [this.missedDays.length === 1 ? "1 day's log file out of reach (a link to no file)" : `${this.missedDays.length} days' log files out of reach (links to no file)`]),
    ];
    return skipped.length === 0 ? null : `argo: skipped ${skipped.join(' and ')}; run "argo logs check" to list them\n`;
  }
}

export interface ScannedEntry {
  entry: LogEntry;
  file: string;
  line: RawLine;
}

export interface ScanOptions {
  /** Cheap test on the raw line text; lines it rejects are neither parsed nor counted. */
  prefilter?: (text: string) => boolean;
  /** Only lines holding this are decoded (see ReadOptions.needle): much faster than `prefilter` on big files. */
  needle?: Needle;
  backward?: boolean;
  /** Per file: where to stop reading (byte offset), e.g. a size snapshot taken before following. */
  endOf?: (file: string) => number | undefined;
  /** Called with each line skipped as unreadable (after it is counted), e.g. to find where it stood. */
  onUnreadable?: (file: string, line: RawLine) => void;
  /** Ends the scan between reads (throws its reason). */
  signal?: AbortSignal;
}

/** Every readable turn of `files` in order (or newest first with `backward`); bad lines are counted and skipped. */
export async function* scanEntries(files: readonly string[], stats: ScanStats, options: ScanOptions = {}): AsyncGenerator<ScannedEntry> {
  const ordered = options.backward ? [...files].reverse() : files;
  for (const file of ordered) {
    const end = options.endOf?.(file);
    const read = { ...(end !== undefined ? { end } : {}), ...(options.needle ? { needle: options.needle } : {}), ...(options.signal ? { signal: options.signal } : {}) };
    const lines = options.backward ? readLinesBackward(file, read) : readLines(file, read);
    for await (const line of lines) {
      if (isBlank(line)) continue;
      if (options.prefilter && !options.prefilter(line.text)) continue;
      const entry = parseEntry(line.text);
      if (entry === null) {
        stats.skip(file, line, await describeBadLine(line));
        options.onUnreadable?.(file, line);
        continue;
      }
      yield { entry, file, line };
    }
  }
}

/** A line with nothing on it (readers pass over it); one too long to decode is not blank. */
export function isBlank(line: Pick<RawLine, 'text' | 'length'>): boolean {
  return (line.text.length === 0 || line.text.trim() === '') && !isTooLong(line);
}

/** Why a line is not a turn, in words a user can act on. */
export async function describeBadLine(line: Pick<RawLine, 'text' | 'length'>): Promise<string> {
  if (isTooLong(line)) return `longer than ${MAX_LINE_BYTES} bytes, more than Node can read as text`;
  const text = line.text;
  if (!wasUtf8(line)) return 'binary data (not UTF-8 text)';
  // A file system that lost a write after a crash may leave its block as zeros.
  if (text.includes('\u0000')) return 'binary data (NUL bytes)';
  // An editor that saved the file may have put one before its first line; JSON.parse names it as an invisible token.
  if (text.startsWith('\uFEFF')) return 'starts with a byte order mark (U+FEFF); remove it (an editor saved the file with one)';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not V8's message: it quotes the text around the fault, a prompt's secret with it.
    const fault = jsonFault(text);
    const where = fault === null ? 'unreadable' : `at column ${fault.column}: ${fault.problem}`;
    // Raw, these never stand in JSON text (JSON writes them as \u001b): an escape sequence, say.
    if (RAW_CONTROL.test(text)) return `not JSON: it holds control characters (${where})`;
    return fault?.problem.endsWith('found the end of the file') === true ? `truncated JSON (${where})` : `not JSON (${where})`;
  }
  return (await entryProblem(value)) ?? 'a turn';
}

// C0 controls but tab, LF and CR, which JSON takes as white space between its tokens.
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0001-\u0008\u000b\u000c\u000e-\u001f]/;

/**
 * Whether the line's bytes were UTF-8, told from its text: a byte that was not reads as U+FFFD,
 * three bytes when written again where it took one or two, while a U+FFFD written as such is UTF-8
 * like any character. (Only a 4-byte character cut after its third byte reads as long as it was:
 * such a line is then described by what else is wrong with it.)
 */
function wasUtf8(line: Pick<RawLine, 'text' | 'length'>): boolean {
  return !line.text.includes('\ufffd') || Buffer.byteLength(line.text) === line.length;
}

const OPEN_BRACE = 0x7b;
const NEWLINE = 10;

/** The readers' verdict on one line (see checkLine). */
export interface LineVerdict {
  /** The turn, or null: the line is blank or unreadable. Its strings are Latin-1 when `latin1`. */
  entry: LogEntry | null;
  /** A line with nothing on it, which readers pass over (isBlank). */
  blank: boolean;
  /** The line was checked as Latin-1 text: every byte one character, so non-ASCII text is not what it says. */
  latin1: boolean;
}

/**
 * Whether data[from, to) (a line without its newline) is a turn, as parseEntry on its UTF-8 text
 * decides, but cheaper: a line opening with `{` is decoded as Latin-1, several times faster than
 * UTF-8, and JSON.parse reads one-byte strings faster. JSON's structure is ASCII, a byte from 0x80 up
 * is a string character either way, and every name and value the check compares is ASCII, so both
 * decodings get the same verdict (test/log/check-lines.test.ts compares them on odd lines). A line
 * that does not open with `{` (blank, or white space first) is decoded as UTF-8, as readers do.
 */
export function checkLine(data: Buffer, from: number, to: number, maxLineBytes?: number): LineVerdict {
  const latin1 = data[from] === OPEN_BRACE;
  const text = lineText(data, from, to, latin1 ? 'latin1' : 'utf8', maxLineBytes);
  if (!latin1 && isBlank({ text, length: to - from })) return { entry: null, blank: true, latin1 };
  return { entry: parseEntry(text), blank: false, latin1 };
}

/** A line as checkLines gives it: the verdict, and the line as the other readers read it. */
export interface CheckedLine extends LineVerdict {
  /** The line decoded as UTF-8, numbered; only until the next line is asked for (its bytes are reused). */
  raw(): RawLine;
}

/**
 * Every line of a file with its verdict (checkLine), in order, blank ones included; a line is
 * decoded as UTF-8 only when raw() is asked for. For readers that need every line's verdict but few
 * lines' words: `argo logs check`, and --stats' counting.
 */
export async function* checkLines(file: string, options: Pick<ReadOptions, 'chunkSize' | 'maxLineBytes'> = {}): AsyncGenerator<CheckedLine> {
  let number = 0;
  for await (const { bytes, offset, unfinished } of readBlocks(file, options)) {
    // A block is whole lines ending in newlines, or (unfinished) one line without its newline.
    for (let from = 0; from < bytes.length; ) {
      const newline = unfinished ? -1 : bytes.indexOf(NEWLINE, from);
      const to = newline === -1 ? bytes.length : newline;
      number++;
      const { entry, blank, latin1 } = checkLine(bytes, from, to, options.maxLineBytes);
      const start = from;
      const at = number;
      const raw = (): RawLine => ({ text: lineText(bytes, start, to, 'utf8', options.maxLineBytes), offset: offset + start, length: to - start, number: at, complete: !unfinished });
      // One object a line, built whole (a spread of the verdict cost a fifth of the check).
      yield { entry, blank, latin1, raw };
      from = to + 1;
    }
  }
}

/** The reason `argo logs check` adds for a last line without its newline. */
const CUT_SHORT = '; it is the last line and has no newline (a write cut short)';

/**
 * `argo logs check` on one file: every line checked (checkLine), each unreadable one counted in
 * `stats` and handed to `onProblem` as it is found, with its number and why (a last line without
 * its newline says so). Returns how many turns the file holds.
 */
export async function checkLogFile(
  file: string,
  stats: ScanStats,
  onProblem: (problem: ScanProblem) => Promise<void>,
  options: Pick<ReadOptions, 'chunkSize' | 'maxLineBytes'> & { ids?: TurnPlaces } = {},
): Promise<number> {
  let turns = 0;
  let number = 0;
  for await (const checked of checkLines(file, options)) {
    number++;
    if (checked.entry !== null) {
      turns++;
      const first = options.ids?.meet(checked.entry.id, file, number);
      if (first !== undefined) await onProblem({ file, line: number, reason: `turn id ${JSON.stringify(checked.entry.id)} also at ${first.file}:${first.line}` });
    } else if (!checked.blank) {
      const line = checked.raw();
      const reason = (await describeBadLine(line)) + (line.complete ? '' : CUT_SHORT);
      await onProblem(stats.skip(file, line, reason));
    }
  }
  return turns;
}

/**
 * Where each turn id was first met, across files (`argo logs check`): a turn's line appended twice
 * (a backup added back) is shown twice by every listing and counted twice by --stats.
 */
export class TurnPlaces {
  // One number per turn (the file's place in `files` × 2^32 + the line), not an object: a log of
  // years holds millions of ids, all kept while it is checked.
  private readonly first = new Map<string, number>();
  private readonly files: string[] = [];
  /** Lines whose id an earlier line has. */
  repeated = 0;

  /** The place the id was met first, or undefined when this is the first (then it is noted). */
  meet(id: string, file: string, line: number): { file: string; line: number } | undefined {
    const first = this.first.get(id);
    if (first !== undefined) {
      this.repeated++;
      return { file: this.files[Math.floor(first / LINES_PER_FILE)] ?? '', line: first % LINES_PER_FILE };
    }
    if (this.files.at(-1) !== file) this.files.push(file);
    this.first.set(id, (this.files.length - 1) * LINES_PER_FILE + line);
    return undefined;
  }
}

const LINES_PER_FILE = 2 ** 32;
