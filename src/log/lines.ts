import { open } from 'node:fs/promises';

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
   * Only lines holding a match are decoded and yielded. The pattern runs over the latin1 view of
   * each chunk, so match positions are byte positions and nothing is decoded twice; it must carry
   * the `g` flag. Latin1 keeps every ASCII byte as itself, so an ASCII pattern (optionally with `i`)
   * matches exactly where it would in the UTF-8 text. Line numbers are not counted in this mode.
   */
  pattern?: RegExp;
}

const CHUNK = 1 << 20;
const NEWLINE = 10;

/** Streams the lines of a file with constant memory (plus the longest line). */
export async function* readLines(path: string, options: ReadOptions = {}): AsyncGenerator<RawLine> {
  const handle = await open(path, 'r');
  try {
    const end = options.end ?? Infinity;
    const buffer = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer = Buffer.alloc(0);
    let carryOffset = options.start ?? 0;
    let position = carryOffset;
    let number = 0;
    const pattern = options.pattern;
    for (;;) {
      const want = Math.min(CHUNK, end - position);
      const { bytesRead } = want > 0 ? await handle.read(buffer, 0, want, position) : { bytesRead: 0 };
      if (bytesRead === 0) break;
      position += bytesRead;
      const data = carry.length === 0 ? buffer.subarray(0, bytesRead) : Buffer.concat([carry, buffer.subarray(0, bytesRead)]);
      let lineStart = 0;
      if (pattern) {
        const last = data.lastIndexOf(NEWLINE);
        if (last !== -1) {
          for (const [from, to] of matchingLines(data, last, pattern)) {
            yield { text: data.toString('utf8', from, to), offset: carryOffset + from, length: to - from, number: 0, complete: true };
          }
          lineStart = last + 1;
        }
      } else {
        for (let newline = data.indexOf(NEWLINE); newline !== -1; newline = data.indexOf(NEWLINE, lineStart)) {
          number++;
          yield { text: data.toString('utf8', lineStart, newline), offset: carryOffset + lineStart, length: newline - lineStart, number, complete: true };
          lineStart = newline + 1;
        }
      }
      carryOffset += lineStart;
      // Copy: the read buffer is reused on the next iteration.
      carry = Buffer.from(data.subarray(lineStart));
    }
    if (carry.length > 0 && (!pattern || testLine(carry, pattern))) {
      number++;
      yield { text: carry.toString('utf8'), offset: carryOffset, length: carry.length, number: pattern ? 0 : number, complete: false };
    }
  } finally {
    await handle.close();
  }
}

/** Streams the lines of a file from its end towards its start (from `end` when given). */
export async function* readLinesBackward(path: string, options: Omit<ReadOptions, 'start'> = {}): AsyncGenerator<RawLine> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const end = Math.min(options.end ?? size, size);
    const pattern = options.pattern;
    let position = end;
    let carry: Buffer = Buffer.alloc(0);
    // A last line without its newline is unfinished only when it ends the file.
    let tailComplete = end < size;
    if (end > 0 && !tailComplete) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, end - 1);
      tailComplete = last[0] === NEWLINE;
    }
    let first = true;
    while (position > 0) {
      const length = Math.min(CHUNK, position);
      position -= length;
      const chunk = Buffer.allocUnsafe(length);
      await handle.read(chunk, 0, length, position);
      const data = carry.length === 0 ? chunk : Buffer.concat([chunk, carry]);
      const firstNewline = data.indexOf(NEWLINE);
      if (firstNewline === -1) {
        carry = data;
        continue;
      }
      // [firstNewline + 1, data.length) holds whole lines; the part before continues in the previous chunk.
      const ranges: Array<[number, number]> = [];
      if (pattern) {
        ranges.push(...matchingLines(data, data.length, pattern, firstNewline + 1));
      } else {
        let lineStart = firstNewline + 1;
        for (let newline = data.indexOf(NEWLINE, lineStart); newline !== -1; newline = data.indexOf(NEWLINE, lineStart)) {
          ranges.push([lineStart, newline]);
          lineStart = newline + 1;
        }
        if (lineStart < data.length) ranges.push([lineStart, data.length]);
      }
      for (let i = ranges.length - 1; i >= 0; i--) {
        const [from, to] = ranges[i] as [number, number];
        if (to === from) continue;
        const complete = !(first && to === data.length && !tailComplete);
        yield { text: data.toString('utf8', from, to), offset: position + from, length: to - from, number: 0, complete };
      }
      first = false;
      carry = Buffer.from(data.subarray(0, firstNewline));
    }
    if (carry.length > 0 && (!pattern || testLine(carry, pattern))) {
      yield { text: carry.toString('utf8'), offset: 0, length: carry.length, number: 0, complete: !first || tailComplete };
    }
  } finally {
    await handle.close();
  }
}

/**
 * The [start, end) byte ranges of the lines in data[from, limit) that hold a match, without the
 * newline. `limit` is the end of the last whole line (a newline position, or the data's end).
 */
function matchingLines(data: Buffer, limit: number, pattern: RegExp, from = 0): Array<[number, number]> {
  const text = data.toString('latin1', from, limit);
  const ranges: Array<[number, number]> = [];
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const start = text.lastIndexOf('\n', match.index) + 1;
    let end = text.indexOf('\n', match.index);
    if (end === -1) end = text.length;
    ranges.push([from + start, from + end]);
    if (end >= text.length) break;
    pattern.lastIndex = end + 1;
  }
  return ranges;
}

function testLine(line: Buffer, pattern: RegExp): boolean {
  pattern.lastIndex = 0;
  const found = pattern.test(line.toString('latin1'));
  pattern.lastIndex = 0;
  return found;
}

/** Reads `length` bytes at `offset`; null when the file is shorter than that. */
export async function readSlice(path: string, offset: number, length: number): Promise<string | null> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(length);
    const { bytesRead } = await handle.read(buffer, 0, length, offset);
    return bytesRead === length ? buffer.toString('utf8') : null;
  } finally {
    await handle.close();
  }
}
