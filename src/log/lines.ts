import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
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
}

const CHUNK = 1 << 19;
const NEWLINE = 10;

/**
 * Streams the lines of a file with constant memory: the unfinished line stays at the start of one
 * reusable buffer and each chunk read is appended to it, while the next chunk is already being read
 * into a second buffer. Only lines longer than a chunk make the first buffer grow.
 */
export async function* readLines(path: string, options: ReadOptions = {}): AsyncGenerator<RawLine> {
  const handle = await open(path, 'r');
  const chunk = options.chunkSize ?? CHUNK;
  const ahead = new ReadAhead(handle, chunk);
  let bytes = takeBuffer(2 * chunk);
  try {
    const end = options.end ?? Infinity;
    const finder = options.needle ? needleFinder(options.needle) : null;
    // bytes[0, kept) is the start of a line whose end is not read yet; bytes[0] is at keptOffset in the file.
    let kept = 0;
    let keptOffset = options.start ?? 0;
    let position = keptOffset;
    let number = 0;
    ahead.start(position, Math.min(chunk, end - position));
    for (;;) {
      const bytesRead = await ahead.result();
      if (bytesRead === 0) break;
      if (kept + bytesRead > bytes.length) bytes = grown(bytes, kept + bytesRead, 0, kept, 0);
      ahead.buffer.copy(bytes, kept, 0, bytesRead);
      position += bytesRead;
      ahead.start(position, Math.min(chunk, end - position));
      const data = bytes.subarray(0, kept + bytesRead);
      let lineStart = 0;
      if (finder) {
        const last = data.lastIndexOf(NEWLINE);
        if (last !== -1) {
          for (const [from, to] of finder.lines(data, 0, last)) {
            yield { text: data.toString('utf8', from, to), offset: keptOffset + from, length: to - from, number: 0, complete: true };
          }
          lineStart = last + 1;
        }
      } else {
        // The kept bytes hold no newline: look from where the new ones start.
        for (let newline = data.indexOf(NEWLINE, kept); newline !== -1; newline = data.indexOf(NEWLINE, lineStart)) {
          number++;
          yield { text: data.toString('utf8', lineStart, newline), offset: keptOffset + lineStart, length: newline - lineStart, number, complete: true };
          lineStart = newline + 1;
        }
      }
      keptOffset += lineStart;
      kept = data.length - lineStart;
      if (lineStart > 0 && kept > 0) bytes.copyWithin(0, lineStart, data.length);
    }
    // Without a needle every line is wanted (the optional call gives undefined).
    if (kept > 0 && finder?.find(bytes, 0, kept) !== -1) {
      yield { text: bytes.toString('utf8', 0, kept), offset: keptOffset, length: kept, number: finder ? 0 : number + 1, complete: false };
    }
  } finally {
    await ahead.finish();
    giveBack(bytes);
    await handle.close();
  }
}

/**
 * Streams the lines of a file from its end towards its start (from `end` when given). Like
 * readLines, with the unfinished line kept at the end of the buffer and each chunk put before it.
 */
export async function* readLinesBackward(path: string, options: Omit<ReadOptions, 'start'> = {}): AsyncGenerator<RawLine> {
  const handle = await open(path, 'r');
  const chunk = options.chunkSize ?? CHUNK;
  const ahead = new ReadAhead(handle, chunk);
  let bytes = takeBuffer(2 * chunk);
  try {
    const size = (await handle.stat()).size;
    const end = Math.min(options.end ?? size, size);
    const finder = options.needle ? needleFinder(options.needle) : null;
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
          yield { text: data.toString('utf8', from, to), offset: position + from, length: to - from, number: 0, complete: isComplete(to) };
        }
      } else {
        for (let to = data.length; to > firstNewline; ) {
          const newline = data.lastIndexOf(NEWLINE, to - 1);
          if (to > newline + 1) {
            yield { text: data.toString('utf8', newline + 1, to), offset: position + newline + 1, length: to - newline - 1, number: 0, complete: isComplete(to) };
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
      yield { text: bytes.toString('utf8', from), offset: 0, length: kept, number: 0, complete: !first || tailComplete };
    }
  } finally {
    await ahead.finish();
    giveBack(bytes);
    await handle.close();
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
