// What a line must hold for a reader to decode it, searched in the raw bytes of a log file.

/**
 * A literal a line must hold, as callers know it: no pattern syntax, nothing to parse.
 * - `text`: the UTF-8 bytes of `text`; with `caseless`, ASCII letters match in either case and every
 *   other byte only itself (so only the ASCII part of a text is searched without case).
 * - `json-string`: any one of `values` written as a whole JSON string, quotes included (how the log
 *   stores an id: `"session_id":"<id>"`).
 * A needle never spans lines: each text is not empty and holds no newline, and a `json-string`
 * needle has at least one value (needleFinder throws otherwise: the caller is wrong).
 */
export type Needle =
  | { readonly kind: 'text'; readonly text: string; readonly caseless: boolean }
  | { readonly kind: 'json-string'; readonly values: readonly string[] };

/** Finds a needle in raw bytes; stateless between calls, so one finder serves every file and reader. */
export interface NeedleFinder {
  /** The start of the needle's first occurrence lying wholly in data[from, to), or -1. */
  find(data: Buffer, from: number, to: number): number;
  /**
   * The [start, end) ranges (without the newline) of the lines of data[from, to) that hold the
   * needle, as if the bytes around were not there: `from` starts a line and `to` ends one.
   */
  lines(data: Buffer, from: number, to: number): [number, number][];
}

/** The finder for a needle (kept, as the same needle is searched file after file). */
export function needleFinder(needle: Needle): NeedleFinder {
  let finder = finders.get(needle);
  if (!finder) {
    finder = newFinder(needle);
    finders.set(needle, finder);
  }
  return finder;
}

/** Whether one line (its bytes, without the newline) holds the needle. */
export function lineHolds(needle: Needle, line: Buffer): boolean {
  return needleFinder(needle).find(line, 0, line.length) !== -1;
}

const finders = new WeakMap<Needle, NeedleFinder>();
const NEWLINE = 10;

function newFinder(needle: Needle): NeedleFinder {
  const strings = needle.kind === 'text' ? [needle.text] : needle.values.map((value) => JSON.stringify(value));
  const caseless = needle.kind === 'text' && needle.caseless;
  const bytes = [...new Set(strings)].map((text) => Buffer.from(caseless ? asciiLower(text) : text, 'utf8'));
  const [first, ...others] = bytes;
  if (!first || bytes.some((each) => each.length === 0 || each.includes(NEWLINE))) {
    throw new Error(`a needle needs text without newlines, got ${JSON.stringify(strings)}`);
  }
  if (others.length > 0) return new SetHorspool(bytes, false);
  if (!caseless) return new ExactFinder(first);
  // Skipping through the raw bytes beats folding them all first, for long needles only.
  return first.length >= CASELESS_SKIP_FROM ? new SetHorspool([first], true) : new FoldedFinder(first);
}

/** The shortest needle searched without case by skipping (shorter ones skip too little to beat FoldedFinder). */
const CASELESS_SKIP_FROM = 7;

function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

abstract class Finder implements NeedleFinder {
  /** The first occurrence in view[from, to), where view is what `view` gave for the range. */
  protected abstract first(view: Buffer, from: number, to: number): number;

  /** The bytes to search for data[from, to): data itself, or a transformed copy at the same positions. */
  protected view(data: Buffer, _from: number, _to: number): Buffer {
    return data;
  }

  find(data: Buffer, from: number, to: number): number {
    return this.first(this.view(data, from, to), from, to);
  }

  /**
   * Starts of occurrences in view[from, to), in order: at least the first one of each line holding
   * the needle (more are allowed). This one moves to the next line after each.
   */
  protected starts(view: Buffer, from: number, to: number): number[] {
    const found: number[] = [];
    for (let at = this.first(view, from, to); at !== -1; ) {
      found.push(at);
      const end = view.indexOf(NEWLINE, at);
      at = end !== -1 && end + 1 < to ? this.first(view, end + 1, to) : -1;
    }
    return found;
  }

  lines(data: Buffer, from: number, to: number): [number, number][] {
    const view = this.view(data, from, to);
    const found: [number, number][] = [];
    let lineEnd = -1;
    for (const at of this.starts(view, from, to)) {
      // Another occurrence on the line just taken.
      if (at < lineEnd) continue;
      // Needles hold no newline, so view[at] is not one.
      const start = Math.max(from, view.lastIndexOf(NEWLINE, at) + 1);
      let end = view.indexOf(NEWLINE, at);
      if (end === -1 || end > to) end = to;
      found.push([start, end]);
      lineEnd = end;
    }
    return found;
  }
}

/** One needle, exact bytes: Node's native search. */
class ExactFinder extends Finder {
  constructor(private readonly needle: Buffer) {
    super();
  }

  protected first(view: Buffer, from: number, to: number): number {
    return view.subarray(0, to).indexOf(this.needle, from);
  }
}

/**
 * One short needle (lower-cased), ignoring ASCII case: the bytes are lower-cased into a scratch copy,
 * a word at a time, then searched natively. The copy keeps the positions, and the alignment, the
 * bytes have in their ArrayBuffer, so both sides are 4-byte aligned at the same places.
 */
class FoldedFinder extends ExactFinder {
  private scratch: Buffer = Buffer.alloc(0);
  private source: Uint32Array = new Uint32Array(0);
  private folded: Uint32Array = new Uint32Array(0);

  protected override view(data: Buffer, from: number, to: number): Buffer {
    const base = data.byteOffset;
    const size = data.buffer.byteLength;
    if (this.scratch.buffer.byteLength < size) this.scratch = Buffer.allocUnsafeSlow(size);
    if (this.source.buffer !== data.buffer) this.source = new Uint32Array(data.buffer, 0, size >>> 2);
    if (this.folded.buffer !== this.scratch.buffer) this.folded = new Uint32Array(this.scratch.buffer, 0, this.scratch.buffer.byteLength >>> 2);
    const view = Buffer.from(this.scratch.buffer, base, data.length);
    foldAscii(data, this.source, view, this.folded, from, to, base);
    return view;
  }
}

/**
 * Several exact needles at once, or one long needle ignoring ASCII case (Wu-Manber with two-byte
 * blocks): a window as long as the shortest needle moves by how far its last two bytes lie from the
 * end of any needle's start of that length, so mostly by nearly its length, however many needles; at
 * 0, the needles ending there are compared. Without case, every case of a block's letters is entered
 * in the tables (the needle is lower-cased), so the raw bytes are never folded to be looked up.
 * Needles of several values are JSON strings, so every one is at least two bytes long.
 */
class SetHorspool extends Finder {
  /** The shortest needle's length: the window's. */
  private readonly width: number;
  /** By the window's last two bytes (b1 << 8 | b2); at most 255, a shorter move being safe. */
  private readonly skip = new Uint8Array(65536);
  /** By the window's last two bytes: the needles that may start at the window's start. */
  private readonly ending = new Map<number, Buffer[]>();

  constructor(
    needles: readonly Buffer[],
    private readonly caseless: boolean,
  ) {
    super();
    const width = Math.min(...needles.map((needle) => needle.length));
    this.width = width;
    this.skip.fill(Math.min(width - 1, 255));
    const cases = (byte: number): number[] => (caseless && byte >= 0x61 && byte <= 0x7a ? [byte, byte - 0x20] : [byte]);
    for (const needle of needles) {
      for (let q = 0; q + 1 < width; q++) {
        const distance = width - 2 - q;
        for (const high of cases(needle[q] ?? 0)) {
          for (const low of cases(needle[q + 1] ?? 0)) {
            const block = (high << 8) | low;
            this.skip[block] = Math.min(this.skip[block] ?? distance, distance);
            if (distance > 0) continue;
            const list = this.ending.get(block) ?? [];
            list.push(needle);
            this.ending.set(block, list);
          }
        }
      }
    }
  }

  protected first(data: Buffer, from: number, to: number): number {
    const { width, skip } = this;
    for (let i = from + width - 1; i < to; ) {
      const block = ((data[i - 1] ?? 0) << 8) | (data[i] ?? 0);
      const step = skip[block] ?? 1;
      if (step !== 0) {
        i += step;
        continue;
      }
      const start = i - width + 1;
      if (this.startsAt(data, start, to, block)) return start;
      i++;
    }
    return -1;
  }

  /**
   * Every occurrence, walking four windows at once, one through each quarter of the range. Each
   * window's next move depends on the bytes it just read, so one walk mostly waits on its own
   * loads; four independent walks keep the processor busy (about 2.5× as fast as one).
   */
  protected override starts(data: Buffer, from: number, to: number): number[] {
    const { width, skip } = this;
    const first = from + width - 1;
    // Walk k takes the windows ending in [ends[k], ends[k + 1]).
    const quarter = (k: number): number => Math.min(to, Math.max(first, from + Math.floor(((to - from) * k) / 4)));
    const [e1, e2, e3] = [quarter(1), quarter(2), quarter(3)];
    const found: [number[], number[], number[], number[]] = [[], [], [], []];
    let a = first;
    let b = e1;
    let c = e2;
    let d = e3;
    while (a < e1 && b < e2 && c < e3 && d < to) {
      const stepA = skip[((data[a - 1] ?? 0) << 8) | (data[a] ?? 0)] ?? 1;
      const stepB = skip[((data[b - 1] ?? 0) << 8) | (data[b] ?? 0)] ?? 1;
      const stepC = skip[((data[c - 1] ?? 0) << 8) | (data[c] ?? 0)] ?? 1;
      const stepD = skip[((data[d - 1] ?? 0) << 8) | (data[d] ?? 0)] ?? 1;
      a = stepA !== 0 ? a + stepA : this.check(data, a, to, found[0]);
      b = stepB !== 0 ? b + stepB : this.check(data, b, to, found[1]);
      c = stepC !== 0 ? c + stepC : this.check(data, c, to, found[2]);
      d = stepD !== 0 ? d + stepD : this.check(data, d, to, found[3]);
    }
    this.walk(data, a, e1, to, found[0]);
    this.walk(data, b, e2, to, found[1]);
    this.walk(data, c, e3, to, found[2]);
    this.walk(data, d, to, to, found[3]);
    return found[0].concat(found[1], found[2], found[3]);
  }

  /** One walk on its own: the windows ending in [end, stop), matches lying within [.., to). */
  private walk(data: Buffer, end: number, stop: number, to: number, found: number[]): void {
    for (let i = end; i < stop; ) {
      const step = this.skip[((data[i - 1] ?? 0) << 8) | (data[i] ?? 0)] ?? 1;
      i = step !== 0 ? i + step : this.check(data, i, to, found);
    }
  }

  /** Compares the needles at the window ending at `end`, noting a match in `found`; the next window's end. */
  private check(data: Buffer, end: number, to: number, found: number[]): number {
    const start = end - this.width + 1;
    if (this.startsAt(data, start, to, ((data[end - 1] ?? 0) << 8) | (data[end] ?? 0))) found.push(start);
    return end + 1;
  }

  /** Whether one of the needles whose start ends with `block` lies at data[start] and ends by `to`. */
  private startsAt(data: Buffer, start: number, to: number, block: number): boolean {
    for (const needle of this.ending.get(block) ?? []) {
      if (start + needle.length > to) continue;
      let j = 0;
      if (this.caseless) while (j < needle.length && FOLD[data[start + j] ?? 0] === needle[j]) j++;
      else while (j < needle.length && data[start + j] === needle[j]) j++;
      if (j === needle.length) return true;
    }
    return false;
  }
}

/** Each byte's ASCII lower case. */
const FOLD = Uint8Array.from({ length: 256 }, (_, byte) => (byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte));

/**
 * dst[i] = the ASCII lower case of src[i] for i in [from, to), four bytes at a time in between;
 * src32 and dst32 view the memory of src and dst from `base` bytes before their start.
 */
export function foldAscii(src: Uint8Array, src32: Uint32Array, dst: Uint8Array, dst32: Uint32Array, from: number, to: number, base = 0): void {
  const end = base + to;
  let i = base + from;
  const head = Math.min(end, (i + 3) & ~3);
  for (; i < head; i++) dst[i - base] = FOLD[src[i - base] ?? 0] ?? 0;
  const words = end >>> 2;
  for (let w = i >>> 2; w < words; w++) {
    const x = src32[w] ?? 0;
    const low = x & 0x7f7f7f7f;
    // Per byte, bit 7 of low + 0x3f is set from 'A' (0x41) up, of low + 0x25 from '[' (0x5b) up, and
    // no byte carries into the next. Bytes of 0x80 and up (bit 7 of x) are left alone.
    const upper = (low + 0x3f3f3f3f) & ~(low + 0x25252525) & ~x & 0x80808080;
    dst32[w] = x | (upper >>> 2);
  }
  for (i = Math.max(i, words << 2); i < end; i++) dst[i - base] = FOLD[src[i - base] ?? 0] ?? 0;
}
