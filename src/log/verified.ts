// The verified-files record (logs/.verified.json): which daily files a full read found to hold only
// turns, so a later `argo logs --json` can copy them as raw bytes without parsing a line. Like git's
// index, a file is trusted only while its identity and times are exactly as they were when it was
// read; any write changes its ctime (which no user can set back), an append its size, maintenance
// replaces it by rename (a new inode). It is a cache: an unreadable or foreign record is ignored and
// rebuilt, a data home that cannot be written simply keeps none.
import type { BigIntStats } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { isPlainObject } from './entry.js';
import { isMissing, readDataText, writeFileAtomic } from './fs.js';

export const VERIFIED_RECORD = '.verified.json';
/**
 * Names the line check a record was written under: a record from another check (another Argo
 * version) is not trusted. It is the first 32 hex digits of the SHA-256 of `1\n` and the log line
 * schema's JSON Schema form (`z.toJSONSchema(LogEntrySchema)`); `test/log/verified.test.ts` fails,
 * naming the new value, when the schema changes. Change the leading `1` when the line check changes
 * in a way the schema does not show. A constant, so reading the record loads no zod.
 */
export const LINE_CHECK = '34467332a71d171c5113c65eec3f322b';
/** Bytes at the end of a verified file kept in the record and compared again before trusting it. */
const TAIL = 64;
/**
 * A file changed this recently may change again within the same timestamp tick (coarse on some
 * file systems) without its times moving: such a file is read in full and not recorded (git's
 * "racily clean" rule).
 */
const SETTLED_NS = 2_000_000_000n;

interface FileStamp {
  dev: string;
  ino: string;
  size: number;
  mtime_ns: string;
  ctime_ns: string;
  tail: string;
}

function isFileStamp(stamp: unknown): stamp is FileStamp {
  return (
    isPlainObject(stamp) &&
    typeof stamp.dev === 'string' &&
    typeof stamp.ino === 'string' &&
    Number.isSafeInteger(stamp.size) &&
    (stamp.size as number) >= 0 &&
    typeof stamp.mtime_ns === 'string' &&
    typeof stamp.ctime_ns === 'string' &&
    typeof stamp.tail === 'string'
  );
}

/** The stamps of a record written under this line check; none for anything else (it is a cache). */
function stampsOf(record: unknown): [string, FileStamp][] {
  if (!isPlainObject(record)) return [];
  const { check, files } = record;
  if (check !== LINE_CHECK || !isPlainObject(files)) return [];
  const entries = Object.entries(files);
  return entries.every(([, stamp]) => isFileStamp(stamp)) ? (entries as [string, FileStamp][]) : [];
}

/** A file's identity and times, as stat gives them (nanoseconds), or null when it is gone. */
export async function statLog(file: string): Promise<BigIntStats | null> {
  try {
    return await stat(file, { bigint: true });
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

function stampOf(stats: BigIntStats, tail: Buffer): FileStamp {
  return {
    dev: String(stats.dev),
    ino: String(stats.ino),
    size: Number(stats.size),
    mtime_ns: String(stats.mtimeNs),
    ctime_ns: String(stats.ctimeNs),
    tail: tail.toString('base64'),
  };
}

function sameFile(stamp: FileStamp, stats: BigIntStats): boolean {
  return (
    stamp.dev === String(stats.dev) &&
    stamp.ino === String(stats.ino) &&
    stamp.size === Number(stats.size) &&
    stamp.mtime_ns === String(stats.mtimeNs) &&
    stamp.ctime_ns === String(stats.ctimeNs)
  );
}

export function sameStats(a: BigIntStats, b: BigIntStats): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** The last bytes of [0, size) of an open file (fewer when it is shorter). */
async function tailOf(handle: FileHandle, size: number): Promise<Buffer | null> {
  try {
    const length = Math.min(TAIL, size);
    const bytes = Buffer.alloc(length);
    const { bytesRead } = await handle.read(bytes, 0, length, size - length);
    return bytesRead === length ? bytes : null;
  } catch {
    return null;
  }
}

/** What the record says about each daily file of one logs directory, and what a read added. */
export class VerifiedLogs {
  private changed = false;

  private constructor(
    private readonly logsDir: string,
    private readonly files: Map<string, FileStamp>,
  ) {}

  /** The record of `logsDir`; empty when there is none, it is damaged, or it was written for another line check. */
  static load(logsDir: string): VerifiedLogs {
    let stamps: [string, FileStamp][] = [];
    try {
      stamps = stampsOf(JSON.parse(readDataText(join(logsDir, VERIFIED_RECORD))));
    } catch {
      // Missing, unreadable or not JSON: start from nothing (the files are read in full).
    }
    return new VerifiedLogs(logsDir, new Map(stamps));
  }

  /**
   * How many bytes from the start of `file` hold only verified turns: its whole size when the file
   * is exactly as recorded (same device, inode, size, times and last bytes), otherwise 0. `handle`
   * is the file open, `stats` its own (fstat): the bytes trusted are those of the file checked,
   * even if another file is renamed to its name meanwhile.
   */
  async trusted(file: string, handle: FileHandle, stats: BigIntStats): Promise<number> {
    const stamp = this.files.get(basename(file));
    if (!stamp || !sameFile(stamp, stats)) return 0;
    const tail = await tailOf(handle, stamp.size);
    return tail !== null && tail.toString('base64') === stamp.tail ? stamp.size : 0;
  }

  /**
   * Notes that a read from the first byte found only turns in `file`, read through `handle`:
   * `before` is that handle's stats before the read, `after` the stats of the path after it (the
   * same file, unchanged, or nothing is noted) and `bytes` how many it read. Kept only when the file
   * was read to its end and had settled before the read began.
   */
  async verified(file: string, handle: FileHandle, before: BigIntStats, after: BigIntStats | null, bytes: number, startedNs: bigint): Promise<void> {
    if (after === null || !sameStats(before, after) || Number(after.size) !== bytes) return;
    if (after.mtimeNs > startedNs - SETTLED_NS || after.ctimeNs > startedNs - SETTLED_NS) return;
    const tail = await tailOf(handle, bytes);
    if (tail === null) return;
    this.files.set(basename(file), stampOf(after, tail));
    this.changed = true;
  }

  /**
   * Writes the record when a read added to it, keeping only files still listed. Best effort: a data
   * home that cannot be written (read-only, full) keeps no record, and the next read is a full one.
   */
  async save(listed: readonly string[]): Promise<void> {
    const names = new Set(listed.map((file) => basename(file)));
    for (const name of this.files.keys()) {
      if (!names.has(name)) {
        this.files.delete(name);
        this.changed = true;
      }
    }
    if (!this.changed) return;
    this.changed = false;
    const record = { check: LINE_CHECK, files: Object.fromEntries(this.files) };
    try {
      await writeFileAtomic(join(this.logsDir, VERIFIED_RECORD), `${JSON.stringify(record)}\n`);
    } catch {
      // A cache: failing to keep it costs the next read its speed, never its answer.
    }
  }
}

/** The current time in nanoseconds, on the same clock as file times. */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}
