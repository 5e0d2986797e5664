import { messageLine } from '../errors.js';
import { entryProblem, parseEntry } from './entry.js';
import type { LogEntry } from './entry.js';
import { MAX_LINE_BYTES, isTooLong, readLines, readLinesBackward } from './lines.js';
import type { RawLine } from './lines.js';
import type { Needle } from './needle.js';

export interface ScanProblem {
  file: string;
  line: number;
  reason: string;
}

/** Counts what readers skipped; `problems` is filled only when asked for (argo logs check). */
export class ScanStats {
  unreadable = 0;
  readonly problems: ScanProblem[] = [];
  constructor(readonly keepProblems = false) {}

  skip(file: string, line: RawLine, reason: string): void {
    this.unreadable++;
    if (this.keepProblems) this.problems.push({ file, line: line.number, reason });
  }

  /** The one stderr line readers print after skipping, or null when nothing was skipped. */
  notice(): string | null {
    if (this.unreadable === 0) return null;
    const lines = this.unreadable === 1 ? '1 unreadable log line' : `${this.unreadable} unreadable log lines`;
    return `argo: skipped ${lines}; run "argo logs check" to list them\n`;
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
}

/** Every readable turn of `files` in order (or newest first with `backward`); bad lines are counted and skipped. */
export async function* scanEntries(files: readonly string[], stats: ScanStats, options: ScanOptions = {}): AsyncGenerator<ScannedEntry> {
  const ordered = options.backward ? [...files].reverse() : files;
  for (const file of ordered) {
    const end = options.endOf?.(file);
    const read = { ...(end !== undefined ? { end } : {}), ...(options.needle ? { needle: options.needle } : {}) };
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
  // U+FFFD marks bytes that were not UTF-8; NUL and other controls never appear in JSON text.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000e-\u001f\ufffd]/.test(text)) return 'binary data (not UTF-8 text)';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const message = messageLine(error);
    return /Unexpected end|Unterminated/.test(message) ? `truncated JSON (${message})` : `not JSON (${message})`;
  }
  return (await entryProblem(value)) ?? 'a turn';
}
