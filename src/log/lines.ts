import { constants } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import { openLogFile } from './fs.js';
import { needleFinder } from './needle.js';
import type { Needle } from './needle.js';

export interface RawLine {
  text: string;
  /** Byte offset of the line's first byte in its file. */
  offset: number;
  /** Byte length without the newline. */
  length: number;
  /** 1-based line number (plain forward reads only; 0 otherwise). */
  number: number;
  /** False for a last line that has no newline yet (a writer may still be writing it). */
  complete: boolean;
}

export interface ReadOptions {
  /** First byte to read (forward) — must be the start of a line. */
  start?: number;
  /** Stop at this byte instead of the file's current end. */
  end?: number;
  /**
   * Only lines holding the needle are decoded and yielded: it is searched in the raw bytes of each
   * read, so lines without it cost no decoding at all. Line numbers are not counted then.
   */
  needle?: Needle;
  /** Bytes per read (512 KiB); tests make it tiny to put every boundary in play. */
  chunkSize?: number;
  /** Longer lines are not decoded (isTooLong; default MAX_LINE_BYTES); tests make it tiny. */
  maxLineBytes?: number;
  /** Read through this open handle (left open) instead of opening `path`: the file it was, even if replaced since. */
  handle?: FileHandle;
  /** Stops the reading between reads (throws its reason): a search a tool call makes ends with the call. */
  signal?: AbortSignal;
}

const CHUNK = 1 << 19;
const NEWLINE = 10;

/** Lines longer than this are not made into text: the longest string Node can make (about 512 MiB). */
export const MAX_LINE_BYTES = constants.MAX_STRING_LENGTH;

/**
 * A line's text; '' for one too long to be a string at all, which isTooLong then tells from an
 * empty line by its length (any byte decodes to at least one character).
 */
export function lineText(bytes: Buffer, from: number, to: number, encoding: BufferEncoding = 'utf8', most = MAX_LINE_BYTES): string {
  return to - from > most ? '' : bytes.toString(encoding, from, to);
}

/** A line too long to read as text: unreadable, never a crash. */
export function isTooLong(line: Pick<RawLine, 'text' | 'length'>): boolean {
  return line.text === '' && line.length > 0;
}

function decoderFor(options: ReadOptions): (bytes: Buffer, from?: number, to?: number) => string {
  const most = options.maxLineBytes ?? MAX_LINE_BYTES;
  return (bytes, from = 0, to = bytes.length) => lineText(bytes, from, to, 'utf8', most);
}

/** Whole lines of a file, as raw bytes: valid only until the reader moves on. */
export interface LineBlock {
  /** Lines, each ending with a newline, except when `unfinished`: then the last one has none. */
  bytes: Buffer;
  /** Byte offset of bytes[0] in the file. */
  offset: number;
  /** True for the file's last bytes when they end without a newline (a writer may still be writing). */
  unfinished: boolean;
}

/**
 * Streams a file as blocks of whole lines with constant memory and no copy of what is read: two
 * buffers take turns, each read lands after room kept at the buffer's start, and only the unfinished
 * line (usually a few hundred bytes) is moved into that room, in front of the next read's bytes.
 * The next read is under way while a block is used. Only lines longer than a chunk make a buffer grow.
 */
export async function* readBlocks(path: string, options: Omit<ReadOptions, 'needle'> = {}): AsyncGenerator<LineBlock> {
  // A handle the caller opened stays open: it reads the same file again (see copy.ts).
  const handle = options.handle ?? (await openLogFile(path));
  const chunk = options.chunkSize ?? CHUNK;
  const end = options.end ?? Infinity;
  let current = takeBuffer(2 * chunk);
  let next = takeBuffer(2 * chunk);
  let pending: Promise<number> | null = null;
  // The read lands in buffer[buffer.length - chunk, …); the bytes before it are room for the kept line.
  const startRead = (into: Buffer, position: number): Promise<number> => {
    const length = Math.min(chunk, end - position);
    const read = length > 0 ? handle.read(into, into.length - chunk, length, position).then((result) => result.bytesRead) : Promise.resolve(0);
    // Awaited below; a read left behind when the caller stops early must not be an unhandled rejection.
    read.catch(() => undefined);
    return read;
  };
  try {
    // current[dataStart, readAt) is the start of a line whose end is not read yet; dataStart is at `offset` in the file.
    let offset = options.start ?? 0;
    let position = offset;
    let kept = 0;
    pending = startRead(current, position);
    for (;;) {
      const bytesRead = await pending;
      pending = null;
      options.signal?.throwIfAborted();
      const readAt = current.length - chunk;
      if (bytesRead === 0) {
        if (kept > 0) yield { bytes: current.subarray(readAt - kept, readAt), offset, unfinished: true };
        break;
      }
      position += bytesRead;
      pending = startRead(next, position);
      const data = current.subarray(readAt - kept, readAt + bytesRead);
      // The kept bytes hold no newline: look only in the new ones.
      const last = data.lastIndexOf(NEWLINE);
      const whole = last >= kept ? last + 1 : 0;
      if (whole > 0) yield { bytes: data.subarray(0, whole), offset, unfinished: false };
      offset += whole;
      kept = data.length - whole;
      const nextReadAt = next.length - chunk;
      if (kept > nextReadAt) {
        // A line longer than the room: wait for the read under way, then move both into a bigger buffer.
        const nextRead = await pending;
        const bigger = grown(next, kept + 2 * chunk, 0, 0, 0);
        data.copy(bigger, bigger.length - chunk - kept, whole);
        next.copy(bigger, bigger.length - chunk, nextReadAt, nextReadAt + nextRead);
        giveBack(next);
        next = bigger;
        pending = Promise.resolve(nextRead);
      } else if (kept > 0) {
        data.copy(next, nextReadAt - kept, whole);
      }
      [current, next] = [next, current];
    }
  } finally {
    if (pending) await pending.catch(() => undefined);
    giveBack(current);
    giveBack(next);
    if (options.handle === undefined) await handle.close();
  }
}

/**
 * Streams the lines of a file with constant memory (see readBlocks). With a needle, only the lines
 * holding it are decoded.
 */
export async function* readLines(path: string, options: ReadOptions = {}): AsyncGenerator<RawLine> {
  const finder = options.needle ? needleFinder(options.needle) : null;
  const decoded = decoderFor(options);
  let number = 0;
  for await (const { bytes, offset, unfinished } of readBlocks(path, options)) {
    if (unfinished) {
      // Without a needle every line is wanted (the optional call gives undefined).
      if (finder?.find(bytes, 0, bytes.length) !== -1) {
        yield { text: decoded(bytes), offset, length: bytes.length, number: finder ? 0 : number + 1, complete: false };
      }
      continue;
    }
    if (finder) {
      for (const [from, to] of finder.lines(bytes, 0, bytes.length - 1)) {
        yield { text: decoded(bytes, from, to), offset: offset + from, length: to - from, number: 0, complete: true };
      }
      continue;
    }
    for (let lineStart = 0, newline = bytes.indexOf(NEWLINE); newline !== -1; lineStart = newline + 1, newline = bytes.indexOf(NEWLINE, lineStart)) {
      number++;
      yield { text: decoded(bytes, lineStart, newline), offset: offset + lineStart, length: newline - lineStart, number, complete: true };
    }
  }
}

/**
 * Streams the lines of a file from its end towards its start (from `end` when given). Like
 * readLines, with the unfinished line kept at the end of the buffer and each chunk put before it.
 */
export async function* readLinesBackward(path: string, options: Omit<ReadOptions, 'start'> = {}): AsyncGenerator<RawLine> {
  const handle = options.handle ?? (await openLogFile(path));
  const chunk = options.chunkSize ?? CHUNK;
  const ahead = new ReadAhead(handle, chunk);
  let bytes = takeBuffer(2 * chunk);
  try {
    const size = (await handle.stat()).size;
    const end = Math.min(options.end ?? size, size);
    const finder = options.needle ? needleFinder(options.needle) : null;
    const decoded = decoderFor(options);
    // A last line without its newline is unfinished only when it ends the file.
    let tailComplete = end < size;
    if (end > 0 && !tailComplete) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, end - 1);
      tailComplete = last[0] === NEWLINE;
    }
    // The last `kept` bytes of the buffer end a line whose start is not read yet; the bytes
    // from the buffer's `dataStart` on begin at `position` in the file.
    let kept = 0;
    let position = end;
    let first = true;
    const readBefore = (at: number): void => {
      ahead.start(at - Math.min(chunk, at), Math.min(chunk, at));
    };
    readBefore(position);
    while (position > 0) {
      const length = Math.min(chunk, position);
      const bytesRead = await ahead.result();
      options.signal?.throwIfAborted();
      // A file cut short under us reads as NULs (an unreadable line), not as stale bytes.
      if (bytesRead < length) ahead.buffer.fill(0, bytesRead, length);
      if (kept + length > bytes.length) bytes = grown(bytes, kept + length, bytes.length - kept, bytes.length, 'end');
      position -= length;
      const dataStart = bytes.length - kept - length;
      ahead.buffer.copy(bytes, dataStart, 0, length);
      readBefore(position);
      const data = bytes.subarray(dataStart);
      const firstNewline = data.indexOf(NEWLINE);
      if (firstNewline === -1) {
        kept = data.length;
        continue;
      }
      // [firstNewline + 1, data.length) holds whole lines; the part before continues in the previous chunk.
      const isComplete = (to: number): boolean => !(first && to === data.length && !tailComplete);
      if (finder) {
        for (const [from, to] of finder.lines(data, firstNewline + 1, data.length).reverse()) {
          yield { text: decoded(data, from, to), offset: position + from, length: to - from, number: 0, complete: isComplete(to) };
        }
      } else {
        for (let to = data.length; to > firstNewline; ) {
          const newline = data.lastIndexOf(NEWLINE, to - 1);
          if (to > newline + 1) {
            yield { text: decoded(data, newline + 1, to), offset: position + newline + 1, length: to - newline - 1, number: 0, complete: isComplete(to) };
          }
          to = newline;
        }
      }
      first = false;
      kept = firstNewline;
      if (kept > 0) bytes.copyWithin(bytes.length - kept, dataStart, dataStart + kept);
    }
    const from = bytes.length - kept;
    if (kept > 0 && finder?.find(bytes, from, bytes.length) !== -1) {
      yield { text: decoded(bytes, from), offset: 0, length: kept, number: 0, complete: !first || tailComplete };
    }
  } finally {
    await ahead.finish();
    giveBack(bytes);
    if (options.handle === undefined) await handle.close();
  }
}

/** Reads into one buffer, each started before the bytes of the last one are used (they overlap the scan). */
class ReadAhead {
  readonly buffer: Buffer;
  private pending: Promise<number> | null = null;

  constructor(
    private readonly handle: FileHandle,
    size: number,
  ) {
    this.buffer = takeBuffer(size);
  }

  /** Starts reading `length` bytes at `position` (none when length <= 0). */
  start(position: number, length: number): void {
    const pending = length > 0 ? this.handle.read(this.buffer, 0, length, position).then((read) => read.bytesRead) : Promise.resolve(0);
    // Awaited by result(); a read left behind when the caller stops early must not be an unhandled rejection.
    pending.catch(() => undefined);
    this.pending = pending;
  }

  /** How many bytes the read started last put at the buffer's start. */
  async result(): Promise<number> {
    const pending = this.pending;
    this.pending = null;
    return pending ? await pending : 0;
  }

  /** Waits for a read still under way (it writes into the buffer), then frees the buffer. */
  async finish(): Promise<void> {
    if (this.pending) await this.pending.catch(() => undefined);
    this.pending = null;
    giveBack(this.buffer);
  }
}

/**
 * Buffers of the standard sizes left by finished reads: reading file after file allocates no new
 * one (each would be garbage until a full collection). Only yielded strings leave a reader, so a
 * buffer is free again as soon as its read ends.
 */
const spare: Buffer[] = [];

function takeBuffer(size: number): Buffer {
  const at = spare.findIndex((buffer) => buffer.length === size);
  const [reused] = at === -1 ? [] : spare.splice(at, 1);
  return reused ?? Buffer.allocUnsafeSlow(size);
}

function giveBack(bytes: Buffer): void {
  if ((bytes.length === CHUNK || bytes.length === 2 * CHUNK) && spare.length < 4) spare.push(bytes);
}

/** A buffer of at least `size` bytes (doubling) holding bytes[from, to), at its start or at its end. */
function grown(bytes: Buffer, size: number, from: number, to: number, at: 0 | 'end'): Buffer {
  let length = bytes.length * 2;
  while (length < size) length *= 2;
  const bigger = Buffer.allocUnsafeSlow(length);
  bytes.copy(bigger, at === 0 ? 0 : length - (to - from), from, to);
  return bigger;
}
