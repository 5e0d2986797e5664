// The verified-files record (logs/.verified.json): which daily files a full read found to hold only
// turns, so a later `argo logs --json` can copy them as raw bytes without parsing a line. Like git's
// index, a file is trusted only while its identity and times are exactly as they were when it was
// read; any write changes its ctime (which no user can set back), an append its size, maintenance
// replaces it by rename (a new inode). It is a cache: an unreadable or foreign record is ignored and
// rebuilt, a data home that cannot be written simply keeps none.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import * as z from 'zod';
import { LogEntrySchema } from './entry-schema.js';
import { isMissing, writeFileAtomic } from './fs.js';

export const VERIFIED_RECORD = '.verified.json';
/** Bumped when the line check changes in a way the schema's JSON form does not show. */
const CHECK_VERSION = 1;
/** Bytes at the end of a verified file kept in the record and compared again before trusting it. */
const TAIL = 64;
/**
 * A file changed this recently may change again within the same timestamp tick (coarse on some
 * file systems) without its times moving: such a file is read in full and not recorded (git's
 * "racily clean" rule).
 */
const SETTLED_NS = 2_000_000_000n;

const FileSchema = z.object({
  dev: z.string(),
  ino: z.string(),
  size: z.number().int().nonnegative(),
  mtime_ns: z.string(),
  ctime_ns: z.string(),
  tail: z.string(),
});
const RecordSchema = z.object({ check: z.string(), files: z.record(z.string(), FileSchema) });
type FileStamp = z.infer<typeof FileSchema>;

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
    private readonly check: string,
    private readonly files: Map<string, FileStamp>,
  ) {}

  /** The record of `logsDir`; empty when there is none or it was written for another line check. */
  static async load(logsDir: string): Promise<VerifiedLogs> {
    const check = checkFingerprint();
    const files = new Map<string, FileStamp>();
    try {
      const text = await readNoFollow(join(logsDir, VERIFIED_RECORD));
      const parsed = RecordSchema.safeParse(JSON.parse(text));
      if (parsed.success && parsed.data.check === check) for (const [name, stamp] of Object.entries(parsed.data.files)) files.set(name, stamp);
    } catch {
      // Missing, unreadable or not JSON: start from nothing (the files are read in full).
    }
    return new VerifiedLogs(logsDir, check, files);
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
    const record = { check: this.check, files: Object.fromEntries(this.files) };
    try {
      await writeFileAtomic(join(this.logsDir, VERIFIED_RECORD), `${JSON.stringify(record)}\n`);
    } catch {
      // A cache: failing to keep it costs the next read its speed, never its answer.
    }
  }
}

async function readNoFollow(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

let fingerprint: string | null = null;

/** Names the line check: a record written under another schema (another Argo version) is not trusted. */
function checkFingerprint(): string {
  fingerprint ??= createHash('sha256')
    .update(`${CHECK_VERSION}\n${JSON.stringify(z.toJSONSchema(LogEntrySchema))}`)
    .digest('hex')
    .slice(0, 32);
  return fingerprint;
}

/** The current time in nanoseconds, on the same clock as file times. */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}
