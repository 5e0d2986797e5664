import { closeSync, fstatSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { openRegularSync } from './fs.js';
import { MAX_LINE_BYTES, lineText } from './lines.js';

const NEWLINE = 10;

/** Lines up to this long (with the bytes around them) are read into one buffer kept between reads. */
const KEPT_BYTES = 64 * 1024;

interface OpenDay {
  fd: number;
  /** The file's size when last asked: a place past it asks again once (the log grows). */
  size: number;
}

/**
 * Whole lines read at the places a session index names: a day of the log by name, a byte offset, a
 * length. The index is a hint that may no longer hold: a day gone, a folder, a named pipe or a device
 * where it was, a place past the file's end or a length no line has read as null, never as a crash,
 * a wait or an allocation the file could not fill. A day that is a link to a file is read through
 * it, as every reader of the log does (listLogFiles). Files stay open until close(). Synchronous:
 * many small reads with nothing else to do meanwhile, where the promise API's cost per call would
 * dominate. `argo rerun`'s index lookup and the session readers (sessions show, replay) share it.
 */
export class PlacedLines {
  private readonly days = new Map<string, OpenDay | null>();
  private readonly kept = Buffer.allocUnsafe(KEPT_BYTES);

  constructor(private readonly logsDir: string) {}

  /**
   * The text of the line of `length` bytes at `offset` of the day's file when a whole line is there:
   * the file's start or a newline before it, a newline or the file's end after it, none inside.
   * Null otherwise.
   */
  line(day: string, offset: number, length: number): string | null {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length <= 0 || length > MAX_LINE_BYTES) return null;
    const file = this.open(day);
    if (file === null || !reaches(file, offset + length)) return null;
    const before = offset > 0 ? 1 : 0;
    const size = before + length + 1;
    const bytes = size <= this.kept.length ? this.kept : Buffer.allocUnsafe(size);
    let read: number;
    try {
      read = readSync(file.fd, bytes, 0, size, offset - before);
    } catch {
      return null;
    }
    if (read < before + length || (before === 1 && bytes[0] !== NEWLINE)) return null;
    if (read === size && bytes[size - 1] !== NEWLINE) return null;
    // Two lines or more are not the one the index names.
    if (bytes.subarray(before, before + length).includes(NEWLINE)) return null;
    return lineText(bytes, before, before + length);
  }

  close(): void {
    for (const file of this.days.values()) if (file !== null) closeSync(file.fd);
    this.days.clear();
  }

  private open(day: string): OpenDay | null {
    let file = this.days.get(day);
    if (file === undefined) {
      const opened = openRegularSync(join(this.logsDir, day), { followLink: true });
      file = opened === null ? null : { fd: opened.fd, size: opened.stats.size };
      this.days.set(day, file);
    }
    return file;
  }
}

/** Whether the file holds `end` bytes, its size asked again when it seemed too short. */
function reaches(file: OpenDay, end: number): boolean {
  if (end <= file.size) return true;
  try {
    file.size = fstatSync(file.fd).size;
  } catch {
    return false;
  }
  return end <= file.size;
}
