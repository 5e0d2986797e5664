// `argo logs --json` with no filter: every turn's line exactly as stored, as raw bytes. Lines are
// checked as every reader checks them (JSON, then the entry's fields), and runs of good lines go out
// as slices of the read buffer, never decoded again or re-encoded. Files the verified record vouches
// for are copied without looking at a line (see verified.ts).
import { isUtf8 } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import { isMissing, openLogFile } from './fs.js';
import { lineText, readBlocks } from './lines.js';
import type { RawLine } from './lines.js';
import { checkLine, describeBadLine } from './scan.js';
import type { ScanStats } from './scan.js';
import { nowNs, statLog } from './verified.js';
import type { VerifiedLogs } from './verified.js';

/** Takes bytes that are valid only during the call (copy them or finish with them before returning). */
export type ByteWriter = (bytes: Buffer) => Promise<void>;

export interface CopyOptions {
  /** The record of files known to hold only turns; without it every line is checked. */
  verified?: VerifiedLogs;
  /** True once the reader of the output went away: stop reading. */
  stopped?: () => boolean;
  chunkSize?: number;
  /** Longer lines are unreadable, not decoded (MAX_LINE_BYTES by default); tests make it tiny. */
  maxLineBytes?: number;
  /** The current time in nanoseconds (file times' clock); the system's by default. */
  now?: () => bigint;
}

export interface CopyResult {
  /** Lines checked and written. */
  checked: number;
  /** Bytes written from verified files without reading a line. */
  trusted: number;
}

const NEWLINE = 10;
const NEWLINE_BYTES = Buffer.from('\n');

/** Writes every turn of `files`, in order, as stored; bad lines are counted in `stats` and skipped. */
export async function copyTurnLines(files: readonly string[], stats: ScanStats, write: ByteWriter, options: CopyOptions = {}): Promise<CopyResult> {
  const result: CopyResult = { checked: 0, trusted: 0 };
  for (const file of files) {
    if (options.stopped?.()) break;
    const startedNs = (options.now ?? nowNs)();
    let handle: FileHandle;
    try {
      handle = await openLogFile(file);
    } catch (error) {
      // Listed a moment ago and gone now (pruned meanwhile): nothing to read.
      if (isMissing(error)) continue;
      throw error;
    }
    try {
      // One open file for the check and every read: what is trusted is what is read.
      const before = await handle.stat({ bigint: true });
      const trusted = (await options.verified?.trusted(file, handle, before)) ?? 0;
      const read = { handle, ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }) };
      if (trusted > 0) {
        for await (const block of readBlocks(file, { ...read, end: trusted })) {
          await write(block.bytes);
          result.trusted += block.bytes.length;
          if (options.stopped?.()) return result;
        }
      }
      const checked = await copyChecked(file, trusted, stats, write, { ...options, ...read });
      result.checked += checked.lines;
      if (trusted === 0 && checked.clean && options.verified) {
        await options.verified.verified(file, handle, before, await statLog(file), checked.bytes, startedNs);
      }
    } finally {
      await handle.close();
    }
  }
  return result;
}

interface Checked {
  /** Lines written. */
  lines: number;
  /** Bytes read from `start` to the end of the file. */
  bytes: number;
  /** Every line was a turn, UTF-8, ending with a newline, none blank: the file's bytes are its output. */
  clean: boolean;
}

async function copyChecked(file: string, start: number, stats: ScanStats, write: ByteWriter, options: CopyOptions & { handle: FileHandle }): Promise<Checked> {
  let lines = 0;
  let bytes = 0;
  let clean = true;
  // Line numbers are known only when reading from the file's start (0: unknown, as RawLine has it).
  let number = 0;
  const counting = start === 0;
  const read = { start, handle: options.handle, ...(options.chunkSize === undefined ? {} : { chunkSize: options.chunkSize }) };
  for await (const block of readBlocks(file, read)) {
    const data = block.bytes;
    bytes += data.length;
    const utf8 = isUtf8(data);
    // data[run, lineStart) are good lines not written yet.
    let run = 0;
    for (let lineStart = 0; lineStart < data.length; ) {
      let newline = block.unfinished ? -1 : data.indexOf(NEWLINE, lineStart);
      if (newline === -1) newline = data.length;
      if (counting) number++;
      const next = newline + 1;
      // Checked as Latin-1 (checkLine); decoded as UTF-8 only where the words are shown: a skipped
      // line's reason, a line that is not UTF-8.
      const verdict = checkLine(data, lineStart, newline, options.maxLineBytes);
      const text = (): string => lineText(data, lineStart, newline, 'utf8', options.maxLineBytes);
      if (verdict.blank) {
        clean = false;
        await flush(data, run, lineStart, write);
        run = next;
      } else if (verdict.entry === null) {
        clean = false;
        await flush(data, run, lineStart, write);
        run = next;
        const line: RawLine = { text: text(), offset: block.offset + lineStart, length: newline - lineStart, number, complete: !block.unfinished };
        stats.skip(file, line, await describeBadLine(line));
      } else {
        lines++;
        if (block.unfinished) {
          // A last line with no newline that still holds a whole turn: printed, with its newline.
          clean = false;
          await flush(data, run, data.length, write);
          await write(NEWLINE_BYTES);
          run = data.length;
        } else if (!utf8 && !isUtf8(data.subarray(lineStart, newline))) {
          // Bytes that are not UTF-8 inside a string: printed as decoded, as other readers see them.
          clean = false;
          await flush(data, run, lineStart, write);
          await write(Buffer.from(`${text()}\n`, 'utf8'));
          run = next;
        }
      }
      lineStart = next;
      if (options.stopped?.()) return { lines, bytes, clean: false };
    }
    await flush(data, run, data.length, write);
    if (block.unfinished) clean = false;
  }
  return { lines, bytes, clean };
}

async function flush(data: Buffer, from: number, to: number, write: ByteWriter): Promise<void> {
  if (to > from) await write(data.subarray(from, to));
}
