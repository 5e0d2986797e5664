import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

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
   * literal text and `(?:a|b)` alternatives (what escapeRegExp and idPattern make) is searched in
   * the raw bytes, with nothing allocated per chunk (see lineFinder); any other pattern runs over a
   * latin1 string of each chunk. Line numbers are not counted in this mode.
   */
  pattern?: RegExp;
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
    const finder = options.pattern ? lineFinder(options.pattern) : null;
    const ranges: number[] = [];
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
    const finder = options.pattern ? lineFinder(options.pattern) : null;
    const ranges: number[] = [];
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
    const readBefore = (at: number): void => ahead.start(at - Math.min(chunk, at), Math.min(chunk, at));
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
  return at === -1 ? Buffer.allocUnsafeSlow(size) : spare.splice(at, 1)[0]!;
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

/** Finds the lines of some bytes that hold a match of a pattern. */
interface LineFinder {
  /**
   * Appends to `out` the [start, end) byte ranges (without the newline) of the lines in
   * data[from, to) that hold a match, as if the bytes around were not there (callers pass a
   * line's start and a line's end).
   */
  find(data: Buffer, from: number, to: number, out: number[]): void;
  /** Whether data[from, to) (one line) holds a match; `scratch` is emptied and reused. */
  matches(data: Buffer, from: number, to: number, scratch: number[]): boolean;
}

/** The finder for a pattern: the fastest that can take it (kept, as the same pattern is used file after file). */
export function lineFinder(pattern: RegExp): LineFinder {
  let finder = finders.get(pattern);
  if (!finder) {
    finder = newFinder(pattern);
    finders.set(pattern, finder);
  }
  return finder;
}

/** Finders are stateless between calls of find (each runs synchronously), so readers can share them. */
const finders = new WeakMap<RegExp, LineFinder>();

function newFinder(pattern: RegExp): LineFinder {
  const literals = literalNeedles(pattern);
  if (!literals) return new RegExpFinder(pattern);
  const { needles, ignoreCase } = literals;
  const shortest = Math.min(...needles.map((needle) => needle.length));
  if (needles.length === 1) {
    // Ignoring case, skipping through the raw bytes beats folding them all first, for long needles.
    return ignoreCase && shortest >= CASELESS_SKIP_FROM ? new CaselessHorspool(needles[0]!) : new IndexOfFinder(needles, ignoreCase);
  }
  if (shortest >= 2) return new BlockHorspool(needles, ignoreCase);
  // A pass per needle: few, or the regular expression's one pass is faster.
  return needles.length <= 4 ? new IndexOfFinder(needles, ignoreCase) : new RegExpFinder(pattern);
}

/** The shortest needle CaselessHorspool takes (shorter ones skip too little to beat folding). */
const CASELESS_SKIP_FROM = 7;

/**
 * Appends the range of the line of data[from, to) that holds data[at] (a match: no newline in it),
 * shifted by `base`; returns the line's end.
 */
function pushLine(data: Buffer, from: number, to: number, at: number, out: number[], base = 0): number {
  const start = at === from ? from : Math.max(from, data.lastIndexOf(NEWLINE, at - 1) + 1);
  let end = data.indexOf(NEWLINE, at);
  if (end === -1 || end > to) end = to;
  out.push(base + start, base + end);
  return end;
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
 * themselves once read as latin1 characters). The copy goes into a reusable buffer.
 */
class IndexOfFinder extends BaseFinder {
  private source: ArrayBufferLike | null = null;
  private source8: Uint8Array = new Uint8Array(0);
  private source32: Uint32Array = new Uint32Array(0);
  /** Scratch for a read buffer grown past the standard size (a line longer than a chunk). */
  private bigFold: Fold | null = null;
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
    const view = this.ignoreCase ? this.fold(data, from, to) : data.subarray(from, to);
    const { needles, next } = this;
    for (let i = 0; i < needles.length; i++) next[i] = view.indexOf(needles[i]!);
    for (;;) {
      let hit = -1;
      for (const at of next) if (at !== -1 && (hit === -1 || at < hit)) hit = at;
      if (hit === -1) return;
      const after = pushLine(view, 0, view.length, hit, out, from) + 1;
      if (after >= view.length) return;
      for (let i = 0; i < needles.length; i++) if (next[i]! !== -1 && next[i]! < after) next[i] = view.indexOf(needles[i]!, after);
    }
  }

  /**
   * data[from, to) lower-cased, in a reusable buffer. Positions are those in data's ArrayBuffer,
   * so that both sides are 4-byte aligned at the same places and folding goes a word at a time.
   */
  private fold(data: Buffer, from: number, to: number): Buffer {
    const buffer = data.buffer;
    if (this.source !== buffer) {
      this.source = buffer;
      this.source8 = new Uint8Array(buffer);
      this.source32 = new Uint32Array(buffer, 0, buffer.byteLength >>> 2);
    }
    let folded: Fold;
    if (buffer.byteLength <= 2 * CHUNK) folded = standardFold ??= newFold(2 * CHUNK);
    else folded = this.bigFold && this.bigFold.bytes.length >= buffer.byteLength ? this.bigFold : (this.bigFold = newFold(buffer.byteLength));
    const base = data.byteOffset;
    foldAscii(this.source8, this.source32, folded.bytes, folded.words, base + from, base + to);
    return Buffer.from(folded.bytes.buffer, base + from, to - from);
  }
}

/**
 * Boyer-Moore-Horspool over the raw bytes for one ASCII needle (lower-cased), ignoring ASCII case:
 * each window is tested from its last byte, and that byte says how far the window may move (0 when
 * it is the needle's last byte: then the rest of the window is compared).
 */
class CaselessHorspool extends BaseFinder {
  private readonly skip = new Int32Array(256);
  /** How far to move after a window that ends like the needle but does not hold it. */
  private readonly skipAfterLast: number;

  constructor(private readonly needle: Buffer) {
    super();
    const m = needle.length;
    const set = (byte: number, skip: number): void => {
      this.skip[byte] = skip;
      if (byte >= 0x61 && byte <= 0x7a) this.skip[byte - 0x20] = skip;
    };
    this.skip.fill(m);
    for (let i = 0; i < m - 1; i++) set(needle[i]!, m - 1 - i);
    this.skipAfterLast = this.skip[needle[m - 1]!]!;
    set(needle[m - 1]!, 0);
  }

  find(data: Buffer, from: number, to: number, out: number[]): void {
    const { needle, skip, skipAfterLast } = this;
    const m = needle.length;
    for (let i = from + m - 1; i < to; ) {
      const step = skip[data[i]!]!;
      if (step !== 0) {
        i += step;
        continue;
      }
      let j = m - 2;
      for (let k = i - 1; j >= 0 && FOLD[data[k]!] === needle[j]; k--) j--;
      if (j >= 0) {
        i += skipAfterLast;
        continue;
      }
      i = pushLine(data, from, to, i - m + 1, out) + m;
    }
  }
}

/**
 * Several needles at once (Wu-Manber with two-byte blocks): a window as long as the shortest needle
 * moves by how far its last two bytes lie from the end of any needle's start of that length, so
 * mostly by nearly its length, however many needles; at 0, the needles ending there are compared.
 */
class BlockHorspool extends BaseFinder {
  /** The shortest needle's length: the window's. */
  private readonly width: number;
  /** By the window's last two bytes (b1 << 8 | b2); at most 255, a shorter move being safe. */
  private readonly skip = new Uint8Array(65536);
  /** By the window's last two bytes: the needles that may start at the window's start. */
  private readonly ending = new Map<number, Buffer[]>();

  constructor(
    needles: readonly Buffer[],
    private readonly ignoreCase: boolean,
  ) {
    super();
    const width = Math.min(...needles.map((needle) => needle.length));
    this.width = width;
    this.skip.fill(Math.min(width - 1, 255));
    const cases = (byte: number): number[] => (ignoreCase && byte >= 0x61 && byte <= 0x7a ? [byte, byte - 0x20] : [byte]);
    for (const needle of needles) {
      for (let q = 0; q + 1 < width; q++) {
        const distance = width - 2 - q;
        for (const first of cases(needle[q]!)) {
          for (const second of cases(needle[q + 1]!)) {
            const block = (first << 8) | second;
            this.skip[block] = Math.min(this.skip[block]!, distance);
            if (distance > 0) continue;
            const list = this.ending.get(block) ?? [];
            if (!list.includes(needle)) list.push(needle);
            this.ending.set(block, list);
          }
        }
      }
    }
  }

  find(data: Buffer, from: number, to: number, out: number[]): void {
    const { width, skip } = this;
    for (let i = from + width - 1; i < to; ) {
      const block = (data[i - 1]! << 8) | data[i]!;
      const step = skip[block]!;
      if (step !== 0) {
        i += step;
        continue;
      }
      const start = i - width + 1;
      i = this.startsAt(data, start, to, block) ? pushLine(data, from, to, start, out) + width : i + 1;
    }
  }

  /** Whether one of the needles whose start ends with `block` lies at data[start] and ends by `to`. */
  private startsAt(data: Buffer, start: number, to: number, block: number): boolean {
    for (const needle of this.ending.get(block)!) {
      if (start + needle.length > to) continue;
      let j = 0;
      if (this.ignoreCase) while (j < needle.length && FOLD[data[start + j]!] === needle[j]) j++;
      else while (j < needle.length && data[start + j] === needle[j]) j++;
      if (j === needle.length) return true;
    }
    return false;
  }
}

/** Each byte's ASCII lower case. */
const FOLD = Uint8Array.from({ length: 256 }, (_, byte) => foldByte(byte));

interface Fold {
  bytes: Uint8Array;
  /** The same memory, a word at a time. */
  words: Uint32Array;
}

/**
 * The scratch buffer for lower-cased bytes of standard-size reads, shared: a finder folds and
 * searches within one synchronous call, so no two ever use it at once.
 */
let standardFold: Fold | null = null;

function newFold(size: number): Fold {
  const bytes = new Uint8Array(size);
  return { bytes, words: new Uint32Array(bytes.buffer, 0, size >>> 2) };
}

/**
 * dst[i] = the ASCII lower case of src[i] for i in [from, to), four bytes at a time in between;
 * src32 and dst32 view the same memory as src and dst, from its start.
 */
export function foldAscii(src: Uint8Array, src32: Uint32Array, dst: Uint8Array, dst32: Uint32Array, from: number, to: number): void {
  let i = from;
  const head = Math.min(to, (from + 3) & ~3);
  for (; i < head; i++) dst[i] = foldByte(src[i]!);
  const words = to >>> 2;
  for (let w = i >>> 2; w < words; w++) {
    const x = src32[w]!;
    const low = x & 0x7f7f7f7f;
    // Per byte, bit 7 of low + 0x3f is set from 'A' (0x41) up, of low + 0x25 from '[' (0x5b) up, and
    // no byte carries into the next. Bytes of 0x80 and up (bit 7 of x) are left alone.
    const upper = (low + 0x3f3f3f3f) & ~(low + 0x25252525) & ~x & 0x80808080;
    dst32[w] = x | (upper >>> 2);
  }
  for (i = Math.max(i, words << 2); i < to; i++) dst[i] = foldByte(src[i]!);
}

function foldByte(byte: number): number {
  return byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte;
}

/** Beyond this many needles (after expanding alternatives), the pattern runs as a regular expression. */
const MAX_NEEDLES = 256;
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
