import { open } from 'node:fs/promises';

export interface RawLine {
  text: string;
  /** Byte offset of the line's first byte in its file. */
  offset: number;
  /** Byte length without the newline. */
  length: number;
  /** 1-based line number (forward reads only; 0 when read backwards). */
  number: number;
}

const CHUNK = 1 << 20;

/** Streams the lines of a file with constant memory (plus the longest line). */
export async function* readLines(path: string, start = 0): AsyncGenerator<RawLine> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer = Buffer.alloc(0);
    let carryOffset = start;
    let position = start;
    let number = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const data = carry.length === 0 ? buffer.subarray(0, bytesRead) : Buffer.concat([carry, buffer.subarray(0, bytesRead)]);
      let lineStart = 0;
      for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10, lineStart)) {
        number++;
        yield { text: data.toString('utf8', lineStart, newline), offset: carryOffset + lineStart, length: newline - lineStart, number };
        lineStart = newline + 1;
      }
      carryOffset += lineStart;
      // Copy: the read buffer is reused on the next iteration.
      carry = Buffer.from(data.subarray(lineStart));
    }
    if (carry.length > 0) {
      number++;
      yield { text: carry.toString('utf8'), offset: carryOffset, length: carry.length, number };
    }
  } finally {
    await handle.close();
  }
}

/** Streams the lines of a file from its end towards its start. */
export async function* readLinesBackward(path: string): AsyncGenerator<RawLine> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    let position = size;
    let carry: Buffer = Buffer.alloc(0);
    while (position > 0) {
      const length = Math.min(CHUNK, position);
      position -= length;
      const chunk = Buffer.allocUnsafe(length);
      await handle.read(chunk, 0, length, position);
      const data = carry.length === 0 ? chunk : Buffer.concat([chunk, carry]);
      let lineEnd = data.length;
      for (let newline = data.lastIndexOf(10, lineEnd - 1); newline !== -1; newline = lineEnd > 0 ? data.lastIndexOf(10, lineEnd - 1) : -1) {
        if (newline + 1 < lineEnd) {
          yield { text: data.toString('utf8', newline + 1, lineEnd), offset: position + newline + 1, length: lineEnd - newline - 1, number: 0 };
        }
        lineEnd = newline;
      }
      carry = Buffer.from(data.subarray(0, lineEnd));
    }
    if (carry.length > 0) yield { text: carry.toString('utf8'), offset: 0, length: carry.length, number: 0 };
  } finally {
    await handle.close();
  }
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
