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
   * Only lines holding a match are decoded and yielded. The pattern matches as it would over the
   * latin1 view of the bytes, so match positions are byte positions and nothing is decoded twice;
   * it must carry the `g` flag. Latin1 keeps every ASCII byte as itself, so an ASCII pattern
   * (optionally with `i`) matches exactly where it would in the UTF-8 text. A pattern made only of
   * literal text and `(?:a|b)` alternatives is searched in the raw bytes (Buffer.indexOf) with no
   * copy and no string per chunk; any other pattern runs over a latin1 string of each chunk. Line
   * numbers are not counted in this mode.
   */
  pattern?: RegExp;
  /** Bytes per read (1 MiB); tests make it tiny to put every boundary in play. */
  chunkSize?: number;
}

const CHUNK = 1 << 20;
const NEWLINE = 10;

/**
 * Streams the lines of a file with constant memory: one read buffer, reused for every chunk, that
 * keeps the unfinished line at its start and doubles only when that line fills half of it.
 */
export async function* readLines(path: string, options: ReadOptions = {}): AsyncGenerator<RawLine> {
  const handle = await open(path, 'r');
  try {
    const end = options.end ?? Infinity;
    const finder = options.pattern ? lineFinder(options.pattern) : null;
    const ranges: number[] = [];
    let bytes = Buffer.allocUnsafeSlow(options.chunkSize ?? CHUNK);
    // bytes[0, kept) is the start of a line whose end is not read yet; bytes[0] is at keptOffset in the file.
    let kept = 0;
    let keptOffset = options.start ?? 0;
    let position = keptOffset;
    let number = 0;
    for (;;) {
      // Every read fills at least half the buffer, however long the unfinished line.
      if (kept > bytes.length / 2) bytes = grown(bytes, 0, kept, 0);
      const want = Math.min(bytes.length - kept, end - position);
      const { bytesRead } = want > 0 ? await handle.read(bytes, kept, want, position) : { bytesRead: 0 };
      if (bytesRead === 0) break;
      position += bytesRead;
      const data = bytes.subarray(0, kept + bytesRead);
      let lineStart = 0;
      if (finder) {
        const last = data.lastIndexOf(NEWLINE);
        if (last !== -1) {
          ranges.length = 0;
          finder.find(data, 0, last, ranges);
          for (let i = 0; i < ranges.length; i += 2) {
            const from = ranges[i]!;
            const to = ranges[i + 1]!;
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
    if (kept > 0 && (!finder || finder.matches(bytes, 0, kept, ranges))) {
      number++;
      yield { text: bytes.toString('utf8', 0, kept), offset: keptOffset, length: kept, number: finder ? 0 : number, complete: false };
    }
  } finally {
    await handle.close();
  }
}

/**
 * Streams the lines of a file from its end towards its start (from `end` when given). Like
 * readLines, one buffer serves every read; the unfinished line is kept at its end.
 */
export async function* readLinesBackward(path: string, options: Omit<ReadOptions, 'start'> = {}): AsyncGenerator<RawLine> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const end = Math.min(options.end ?? size, size);
    const finder = options.pattern ? lineFinder(options.pattern) : null;
    const ranges: number[] = [];
    // A last line without its newline is unfinished only when it ends the file.
    let tailComplete = end < size;
    if (end > 0 && !tailComplete) {
      const last = Buffer.alloc(1);
      await handle.read(last, 0, 1, end - 1);
      tailComplete = last[0] === NEWLINE;
    }
    let bytes = Buffer.allocUnsafeSlow(options.chunkSize ?? CHUNK);
    // The last `kept` bytes of the buffer end a line whose start is not read yet; they begin at `position` in the file.
    let kept = 0;
    let position = end;
    let first = true;
    while (position > 0) {
      if (kept > bytes.length / 2) bytes = grown(bytes, bytes.length - kept, bytes.length, 'end');
      const length = Math.min(bytes.length - kept, position);
      position -= length;
      const dataStart = bytes.length - kept - length;
      await handle.read(bytes, dataStart, length, position);
      const data = bytes.subarray(dataStart);
      const firstNewline = data.indexOf(NEWLINE);
      if (firstNewline === -1) {
        kept = data.length;
        continue;
      }
      // [firstNewline + 1, data.length) holds whole lines; the part before continues in the previous chunk.
      if (finder) {
        ranges.length = 0;
        finder.find(data, firstNewline + 1, data.length, ranges);
        for (let i = ranges.length - 2; i >= 0; i -= 2) {
          const from = ranges[i]!;
          const to = ranges[i + 1]!;
          const complete = !(first && to === data.length && !tailComplete);
          yield { text: data.toString('utf8', from, to), offset: position + from, length: to - from, number: 0, complete };
        }
      } else {
        for (let to = data.length; to > firstNewline; ) {
          const newline = data.lastIndexOf(NEWLINE, to - 1);
          if (to > newline + 1) {
            const complete = !(first && to === data.length && !tailComplete);
            yield { text: data.toString('utf8', newline + 1, to), offset: position + newline + 1, length: to - newline - 1, number: 0, complete };
          }
          to = newline;
        }
      }
      first = false;
      kept = firstNewline;
      if (kept > 0) bytes.copyWithin(bytes.length - kept, dataStart, dataStart + kept);
    }
    const from = bytes.length - kept;
    if (kept > 0 && (!finder || finder.matches(bytes, from, bytes.length, ranges))) {
      yield { text: bytes.toString('utf8', from), offset: 0, length: kept, number: 0, complete: !first || tailComplete };
    }
  } finally {
    await handle.close();
  }
}

/** A buffer twice as big holding bytes[from, to), at its start or at its end. */
function grown(bytes: Buffer, from: number, to: number, at: 0 | 'end'): Buffer {
  const bigger = Buffer.allocUnsafeSlow(bytes.length * 2);
  bytes.copy(bigger, at === 0 ? 0 : bigger.length - (to - from), from, to);
  return bigger;
}

/** Finds the lines of some bytes that hold a match of a pattern. */
interface LineFinder {
  /**
   * Appends to `out` the [start, end) byte ranges (without the newline) of the lines in
   * data[from, to) that hold a match. `from` is a line's start and `to` a line's end.
   */
  find(data: Buffer, from: number, to: number, out: number[]): void;
  /** Whether data[from, to) (one line) holds a match; `scratch` is emptied and reused. */
  matches(data: Buffer, from: number, to: number, scratch: number[]): boolean;
}

export function lineFinder(pattern: RegExp): LineFinder {
  const literals = literalNeedles(pattern);
  return literals ? new LiteralFinder(literals.needles, literals.ignoreCase) : new RegExpFinder(pattern);
}

abstract class BaseFinder implements LineFinder {
  abstract find(data: Buffer, from: number, to: number, out: number[]): void;

  matches(data: Buffer, from: number, to: number, scratch: number[]): boolean {
    scratch.length = 0;
    this.find(data, from, to, scratch);
    return scratch.length > 0;
  }
}

/** Any pattern: runs it over the latin1 view of the bytes (one string per call). */
class RegExpFinder extends BaseFinder {
  constructor(private readonly pattern: RegExp) {
    super();
  }

  find(data: Buffer, from: number, to: number, out: number[]): void {
    const pattern = this.pattern;
    const text = data.toString('latin1', from, to);
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const start = text.lastIndexOf('\n', match.index) + 1;
      let end = text.indexOf('\n', match.index);
      if (end === -1) end = text.length;
      out.push(from + start, from + end);
      if (end >= text.length) break;
      pattern.lastIndex = end + 1;
    }
    pattern.lastIndex = 0;
  }
}

/**
 * Literal needles searched with Buffer.indexOf in the raw bytes. Ignoring case, the needles are
 * ASCII and lower-cased, and the bytes are searched in a lower-cased copy (ASCII letters only: under
 * the `i` flag without `u`, ASCII letters match only ASCII letters, and bytes of 0x80 and up only
 * themselves once read as latin1 characters). The copy goes into one reusable buffer.
 */
class LiteralFinder extends BaseFinder {
  private folded: Buffer = Buffer.alloc(0);
  private folded32 = new Uint32Array(0);
  private source: Buffer | null = null;
  private source32: Uint32Array | null = null;
  private readonly next: number[];

  constructor(
    private readonly needles: readonly Buffer[],
    private readonly ignoreCase: boolean,
  ) {
    super();
    this.next = needles.map(() => -1);
  }

  find(data: Buffer, from: number, to: number, out: number[]): void {
    if (to <= from) return;
    const view = (this.ignoreCase ? this.fold(data, from, to) : data).subarray(from, to);
    const { needles, next } = this;
    for (let i = 0; i < needles.length; i++) next[i] = view.indexOf(needles[i]!);
    for (;;) {
      let hit = -1;
      for (const at of next) if (at !== -1 && (hit === -1 || at < hit)) hit = at;
      if (hit === -1) return;
      // No needle holds a newline: the match lies within one line.
      const start = hit === 0 ? 0 : view.lastIndexOf(NEWLINE, hit - 1) + 1;
      let end = view.indexOf(NEWLINE, hit);
      if (end === -1) end = view.length;
      out.push(from + start, from + end);
      const after = end + 1;
      if (after >= view.length) return;
      for (let i = 0; i < needles.length; i++) if (next[i]! !== -1 && next[i]! < after) next[i] = view.indexOf(needles[i]!, after);
    }
  }

  /** A copy of `data` whose [from, to) bytes hold their ASCII lower case, at the same positions. */
  private fold(data: Buffer, from: number, to: number): Buffer {
    if (this.folded.length < data.length) {
      this.folded = Buffer.allocUnsafeSlow(Math.max(data.length, this.folded.length * 2));
      this.folded32 = new Uint32Array(this.folded.buffer, this.folded.byteOffset, this.folded.length >>> 2);
    }
    if (this.source?.buffer !== data.buffer || this.source.byteOffset !== data.byteOffset) {
      this.source = data;
      // Word-at-a-time needs both buffers 4-byte aligned at the same index.
      this.source32 = data.byteOffset % 4 === 0 ? new Uint32Array(data.buffer, data.byteOffset, data.buffer.byteLength - data.byteOffset >>> 2) : null;
    }
    foldAscii(data, this.source32, this.folded, this.folded32, from, to);
    return this.folded;
  }
}

/** dst[i] = ASCII lower case of src[i] for i in [from, to), four bytes at a time where aligned. */
export function foldAscii(src: Uint8Array, src32: Uint32Array | null, dst: Uint8Array, dst32: Uint32Array | null, from: number, to: number): void {
  let i = from;
  if (src32 && dst32) {
    const head = Math.min(to, (from + 3) & ~3);
    for (; i < head; i++) dst[i] = foldByte(src[i]!);
    const words = to >>> 2;
    for (let w = i >>> 2; w < words; w++) {
      const x = src32[w]!;
      const low = x & 0x7f7f7f7f;
      // Per byte, bit 7 of (low + 0x3f) is set from 'A' (0x41) up, of (low + 0x25) from '[' (0x5b) up;
      // no byte carries into the next. Bytes of 0x80 and up (bit 7 of x) are left alone.
      const upper = (low + 0x3f3f3f3f) & ~(low + 0x25252525) & ~x & 0x80808080;
      dst32[w] = x | (upper >>> 2);
    }
    i = Math.max(i, words << 2);
  }
  for (; i < to; i++) dst[i] = foldByte(src[i]!);
}

function foldByte(byte: number): number {
  return byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
}

/** Beyond this many needles one pass of the regular expression beats a pass per needle. */
const MAX_NEEDLES = 16;
const SYNTAX = new Set('^$\\.*+?()[]{}|/-');

/**
 * The needles of a pattern that is nothing but literal text and non-capturing alternatives (what
 * escapeRegExp and `"(?:a|b)"` make), as latin1 bytes (lower-cased ASCII when ignoring case); null
 * for anything else, which is then run as a regular expression.
 */
export function literalNeedles(pattern: RegExp): { needles: Buffer[]; ignoreCase: boolean } | null {
  if (/[uvy]/.test(pattern.flags)) return null;
  const ignoreCase = pattern.flags.includes('i');
  const source = pattern.source;
  let at = 0;
  let failed = false;

  const alternatives = (): string[] => {
    const found = new Set<string>();
    for (;;) {
      for (const text of sequence()) found.add(text);
      if (failed || source[at] !== '|') return [...found];
      at++;
    }
  };
  const sequence = (): string[] => {
    let texts = [''];
    while (!failed && at < source.length && source[at] !== '|' && source[at] !== ')') {
      const atom = item();
      if (atom === null || texts.length * atom.length > MAX_NEEDLES) {
        failed = true;
        break;
      }
      texts = texts.flatMap((text) => atom.map((tail) => text + tail));
    }
    return texts;
  };
  const item = (): string[] | null => {
    const char = source[at]!;
    if (char === '\\') {
      const escaped = source[at + 1];
      at += 2;
      return escaped !== undefined && SYNTAX.has(escaped) ? [escaped] : null;
    }
    if (char === '(') {
      if (!source.startsWith('(?:', at)) return null;
      at += 3;
      const inner = alternatives();
      if (failed || source[at] !== ')') return null;
      at++;
      return inner;
    }
    at++;
    return SYNTAX.has(char) && char !== '-' && char !== '/' ? null : [char];
  };

  const texts = alternatives();
  if (failed || at !== source.length || texts.length === 0 || texts.length > MAX_NEEDLES) return null;
  const limit = ignoreCase ? 0x7f : 0xff;
  const needles: Buffer[] = [];
  for (const text of texts) {
    if (text === '' || [...text].some((char) => char.codePointAt(0)! > limit || char === '\n')) return null;
    needles.push(Buffer.from(ignoreCase ? text.replace(/[A-Z]/g, (letter) => letter.toLowerCase()) : text, 'latin1'));
  }
  return { needles, ignoreCase };
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
