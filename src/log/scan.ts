import { parseEntry } from './entry.js';
import type { LogEntry } from './entry.js';
import { readLines, readLinesBackward } from './lines.js';
import type { RawLine } from './lines.js';

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
}

export interface ScannedEntry {
  entry: LogEntry;
  file: string;
  line: RawLine;
}

export interface ScanOptions {
  /** Cheap test on the raw line; lines it rejects are neither parsed nor counted. */
  prefilter?: (text: string) => boolean;
  backward?: boolean;
}

/** Every readable turn of `files` in order (or newest first with `backward`); bad lines are counted and skipped. */
export async function* scanEntries(files: readonly string[], stats: ScanStats, options: ScanOptions = {}): AsyncGenerator<ScannedEntry> {
  const ordered = options.backward ? [...files].reverse() : files;
  for (const file of ordered) {
    const lines = options.backward ? readLinesBackward(file) : readLines(file);
    for await (const line of lines) {
      if (line.text.trim() === '') continue;
      if (options.prefilter && !options.prefilter(line.text)) continue;
      const entry = parseEntry(line.text);
      if (entry === null) {
        stats.skip(file, line, describeBadLine(line.text));
        continue;
      }
      yield { entry, file, line };
    }
  }
}

function describeBadLine(text: string): string {
  try {
    JSON.parse(text);
    return 'valid JSON but not a turn (missing id, session_id, timestamp, prompt, response or status)';
  } catch (error) {
    return `not JSON (${(error as Error).message})`;
  }
}
