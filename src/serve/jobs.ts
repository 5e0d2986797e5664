// Background jobs: the record codec, the store in `jobs/` (one file per job, replaced atomically so
// a crash never leaves a torn file), and a live job's fan-out to the clients following it.
import { lstat, readdir, rm, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, join } from 'node:path';
import lockfile from 'proper-lockfile';
import * as z from 'zod';
import { RuntimeError } from '../errors.js';
import { ensurePrivateDir, isMissing, readDataFile, removeOrphanedTemporaries, writeFileAtomic } from '../log/fs.js';
import { privateLockFs } from '../log/lock.js';
import { byCodeUnits } from '../text/order.js';
import type { FinishReason, NumberedToolCalls, OpenAiToolCallOut } from './openai.js';
import type { ToolEvent } from './types.js';

export const JOB_STATES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Pending and running jobs are their server's; the rest have ended. */
export function isUnfinished(record: JobRecord): boolean {
  return record.state === 'pending' || record.state === 'running';
}

const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const jobRecord = z.object({
  id: z.string().min(1),
  state: z.enum(JOB_STATES),
  created_at: z.iso.datetime({ offset: true }),
  updated_at: z.iso.datetime({ offset: true }),
  session: z.string(),
  /** The model asked for; files written before it was kept lack it. */
  model: z.string().optional(),
  output: z.string(),
  error: z.string().nullable(),
  turn_id: z.string().nullable(),
  /** The model's calls of the client's tools, as `message.tool_calls`; files written before they were kept lack them. */
  tool_calls: z.array(toolCall).optional(),
  /** How the answer ended, as its last chunk says; null until it has, and for good when it never did (a failed job). Older files lack it. */
  finish_reason: z.enum(['stop', 'length', 'tool_calls']).nullable().optional(),
});
export type JobRecord = z.infer<typeof jobRecord>;

/** The file format: pretty JSON text ↔ a validated record. */
export const jobFile = z.codec(z.string(), jobRecord, {
  decode: (text, context) => {
    try {
      return JSON.parse(text) as JobRecord;
    } catch {
      context.issues.push({ code: 'invalid_format', format: 'json', input: text, message: 'not valid JSON' });
      return z.NEVER;
    }
  },
  encode: (record) => `${JSON.stringify(record, null, 2)}\n`,
});

/** Job ids are ours (nanoid's alphabet); anything else in a URL is not a job, and never a path. */
export const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function parseJob(text: string, path: string): JobRecord {
  const result = jobFile.safeDecode(text);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? `field "${issue.path.join('.')}"` : 'content';
  throw new RuntimeError(`job file ${path} has an invalid ${field} (${issue?.message ?? 'invalid'}); remove the file`);
}

/**
 * A running job's file is locked (proper-lockfile: a `.lock` directory its server touches every
 * second), so a second server sharing the data home leaves it alone, and a job whose server died
 * shows a lock gone stale within this long.
 */
export const JOB_LOCK_STALE_MS = 5000;

/** Jobs failed because their server was gone, by the state it left them in. */
export interface OrphanCount {
  running: number;
  pending: number;
}

export class JobStore {
  /** Each running job's file as this store last wrote it: a file still so was ended by nobody else. */
  private readonly ownWrites = new Map<string, string>();

  constructor(readonly dir: string) {}

  /**
   * Locks a job's file for this process (before the file is first written, so no server ever sees
   * a pending job unlocked); returns the release.
   */
  async lock(id: string, onLost: (error: Error) => void): Promise<() => Promise<void>> {
    await ensurePrivateDir(this.dir);
    return lockfile.lock(this.pathOf(id), { stale: JOB_LOCK_STALE_MS, update: 1000, realpath: false, lockfilePath: this.lockPathOf(id), fs: privateLockFs, onCompromised: onLost });
  }

  /** True while a live server (this one or another) runs the job. */
  isLocked(id: string): Promise<boolean> {
    return lockfile.check(this.pathOf(id), { stale: JOB_LOCK_STALE_MS, realpath: false, lockfilePath: this.lockPathOf(id), fs: privateLockFs });
  }

  pathOf(id: string): string {
    return join(this.dir, `${id}.json`);
  }

  /** proper-lockfile's directory beside the job file. */
  private lockPathOf(id: string): string {
    return `${this.pathOf(id)}.lock`;
  }

  /** Removes a job's file and the lock a dead server left beside it. */
  private async remove(id: string): Promise<void> {
    await rm(this.pathOf(id), { force: true });
    await this.removeStaleLock(id);
  }

  private async removeStaleLock(id: string): Promise<void> {
    await rm(this.lockPathOf(id), { recursive: true, force: true });
  }

  async write(record: JobRecord): Promise<void> {
    await writeFileAtomic(this.pathOf(record.id), jobFile.encode(record));
  }

  /**
   * Writes a job's record unless its file says the job has ended: an ended record is final, so a
   * server that lost its job to another (which failed it over while the first was paused) never
   * brings it back. Returns the ended record that stays, or null once written. A file that cannot be
   * read is written over, as before. Another server's write between this read and this write is not
   * excluded; the lock's loss ends the job on this server within a second all the same.
   */
  async writeUnlessEnded(record: JobRecord): Promise<JobRecord | null> {
    const path = this.pathOf(record.id);
    // Read only when someone else may have written it: a save every 200 ms of a growing output
    // would otherwise read the whole file back each time.
    const onDisk = await stat(path).catch(() => null);
    if (onDisk === null || this.ownWrites.get(record.id) !== fileIdentity(onDisk)) {
      const current = await this.read(record.id).catch(() => null);
      if (current !== null && !isUnfinished(current)) return current;
    }
    await this.write(record);
    const written = isUnfinished(record) ? await stat(path).catch(() => null) : null;
    if (written === null) this.ownWrites.delete(record.id);
    else this.ownWrites.set(record.id, fileIdentity(written));
    return null;
  }

  async read(id: string): Promise<JobRecord | null> {
    if (!JOB_ID.test(id)) return null;
    const path = this.pathOf(id);
    try {
      return parseJob((await readDataFile(path)).toString('utf8'), path);
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** Every readable job, newest first; damaged files are passed to `onDamaged` and left out. */
  async list(onDamaged: (path: string, error: unknown) => void = () => undefined): Promise<JobRecord[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const records: JobRecord[] = [];
    for (const name of names) {
      if (!name.endsWith('.json') || !JOB_ID.test(name.slice(0, -5))) continue;
      const path = join(this.dir, name);
      try {
        records.push(parseJob((await readDataFile(path)).toString('utf8'), path));
      } catch (error) {
        if (!isMissing(error)) onDamaged(path, error);
      }
    }
    return records.sort((a, b) => byCodeUnits(b.created_at, a.created_at) || byCodeUnits(a.id, b.id));
  }

  /**
   * Jobs left `pending` or `running` by a server that is gone (no live lock) become `failed`, their
   * output kept; jobs untouched for longer than the retention are removed (a damaged file by its
   * modification time, others are passed to `onDamaged`), and so are the temporary
   * files of saves a killed server left half-written. `elsewhere` counts jobs a live server still
   * runs (or whose lock has not gone stale yet).
   */
  async recover(
    now: Date,
    retentionDays: number,
    onDamaged?: (path: string, error: unknown) => void,
  ): Promise<{ failed: OrphanCount; removed: number; elsewhere: number }> {
    const oldest = now.getTime() - retentionDays * 86_400_000;
    const failed: OrphanCount = { running: 0, pending: 0 };
    let removed = 0;
    let elsewhere = 0;
    // Only those of processes that are gone: a live server's save may be under way.
    await removeOrphanedTemporaries(this.dir).catch(() => 0);
    const damaged: [string, unknown][] = [];
    const records = await this.list((path, error) => damaged.push([path, error]));
    // A damaged file has no `updated_at` to go by: its modification time stands in. Only a file is
    // removed so (a folder by that name is left, and told); one that cannot be removed is told too.
    for (const [path, error] of damaged) {
      const stats = await lstat(path).catch(() => null);
      if (stats === null) continue;
      if (stats.isFile() && stats.mtimeMs < oldest) {
        const gone = await rm(path, { force: true }).then(
          () => true,
          () => false,
        );
        if (gone) {
          await this.removeStaleLock(basename(path, '.json'));
          removed++;
          continue;
        }
      }
      onDamaged?.(path, error);
    }
    for (const record of records) {
      const unfinished = isUnfinished(record);
      if (unfinished && (await this.isLocked(record.id))) {
        elsewhere++;
      } else if (Date.parse(record.updated_at) < oldest) {
        await this.remove(record.id);
        removed++;
      } else if (unfinished && (await this.failOrphan(record.id, now))?.failedNow === true) {
        failed[record.state === 'pending' ? 'pending' : 'running']++;
      }
    }
    return { failed, removed, elsewhere };
  }

  /**
   * Where a job read as pending or running stands: a live server (this one or another) holds its
   * lock (`elsewhere`), or its server is gone and it is failed now (`failedNow`), its output kept;
   * null if its file has gone meanwhile.
   */
  async settle(record: JobRecord, now: Date): Promise<{ record: JobRecord; elsewhere: boolean; failedNow: boolean } | null> {
    if (await this.isLocked(record.id)) return { record, elsewhere: true, failedNow: false };
    const settled = await this.failOrphan(record.id, now);
    return settled && { ...settled, elsewhere: false };
  }

  /**
   * Fails a job left pending or running by a server that is gone, once its lock is seen free;
   * returns the record as it now stands (`failedNow` if this call failed it). The file is read again
   * after the lock check: a server writes a job's last state before it lets go of the lock, so a job
   * that has just ended is seen ended, not failed over.
   */
  private async failOrphan(id: string, now: Date): Promise<{ record: JobRecord; failedNow: boolean } | null> {
    const record = await this.read(id);
    if (record === null) return null;
    if (!isUnfinished(record)) return { record, failedNow: false };
    const failed: JobRecord = { ...record, state: 'failed', error: orphanError(record), updated_at: now.toISOString() };
    await this.write(failed);
    // The dead server's lock is stale (checked above); nothing will release it.
    await this.removeStaleLock(id);
    return { record: failed, failedNow: true };
  }
}

/** Why a job whose server is gone failed: what it had, said only when it had it. */
export function orphanError(record: JobRecord): string {
  if (record.state === 'pending') {
    const turn = record.turn_id === null ? '' : ` (turn ${record.turn_id}, logged interrupted with its prompt by the next argo to start)`;
    return `the server stopped while the job was pending, before its turn began, so nothing was answered${turn}`;
  }
  return `the server stopped while the job was running; ${record.output === '' && (record.tool_calls ?? []).length === 0 ? 'it had no output yet' : 'its output so far is kept'}`;
}

/** What a job's followers get: its text, client tool calls and tool progress as they happen (progress is not kept), then its end. */
export type JobEvent =
  | { type: 'text'; text: string }
  | ({ type: 'tool_calls' } & NumberedToolCalls)
  | { type: 'tool_event'; event: ToolEvent }
  | { type: 'end'; record: JobRecord; finishReason: FinishReason | null };

/**
 * What a follower of a saved job has not seen yet: the output and client tool calls its file gained
 * since `seen` (a record only ever grows while its job runs).
 */
export function savedSince(seen: JobRecord, now: JobRecord): JobEvent[] {
  const events: JobEvent[] = [];
  if (now.output.length > seen.output.length && now.output.startsWith(seen.output)) events.push({ type: 'text', text: now.output.slice(seen.output.length) });
  const before = seen.tool_calls ?? [];
  const after = now.tool_calls ?? [];
  if (after.length > before.length) events.push({ type: 'tool_calls', calls: after.slice(before.length), first: before.length });
  return events;
}

/**
 * How an ended job's answer ended; null when it never did (the job failed before its answer was
 * whole). Files written before it was kept say only whether the job failed or called tools.
 */
export function endedAs(record: JobRecord): FinishReason | null {
  if (record.finish_reason !== undefined) return record.finish_reason;
  if (record.state === 'failed') return null;
  return (record.tool_calls ?? []).length > 0 ? 'tool_calls' : 'stop';
}

/**
 * Follows a job another server runs through `read` (its file as that server saves it, failed once
 * that server is gone; null when the file has gone), looking every `everyMs`, until it ends there;
 * returns the unfollow. Tool progress is not saved, so only text and client tool calls come this way.
 * A read that fails (too many open files, a permission changed) says nothing of the job: it is
 * tried again, and only after `unreadForMs` of failures does the stream end, with the job's state as
 * last seen.
 */
export function followSaved(
  first: JobRecord,
  read: () => Promise<JobRecord | null>,
  push: (event: JobEvent) => void,
  timing = { everyMs: OUTPUT_SAVE_MS, unreadForMs: JOB_LOCK_STALE_MS },
): () => void {
  let seen = first;
  let timer: NodeJS.Timeout | undefined;
  let following = true;
  // When the reads began to fail (performance.now()), null while they succeed.
  let failingSince: number | null = null;
  const end = (record: JobRecord, finishReason: FinishReason | null): void => push({ type: 'end', record, finishReason });
  const lookAgain = (): void => {
    timer = setTimeout(() => void look(), timing.everyMs);
  };
  const look = async (): Promise<void> => {
    let now: JobRecord | null;
    try {
      now = await read();
      failingSince = null;
    } catch (error) {
      if (!following) return;
      failingSince ??= performance.now();
      if (performance.now() - failingSince < timing.unreadForMs) {
        lookAgain();
        return;
      }
      const why = error instanceof Error ? error.message : String(error);
      end({ ...seen, error: `this server could not read the job's file for ${timing.unreadForMs / 1000} s (${why}); GET /api/jobs/${first.id} shows where it stands` }, null);
      return;
    }
    if (!following) return;
    if (now === null) {
      end({ ...seen, state: 'failed', error: "the job's file was removed while it ran" }, null);
      return;
    }
    for (const event of savedSince(seen, now)) push(event);
    seen = now;
    if (isUnfinished(now)) lookAgain();
    else end(now, endedAs(now));
  };
  lookAgain();
  return () => {
    following = false;
    clearTimeout(timer);
  };
}

/** A file as one write left it: each atomic replace is a new inode. */
function fileIdentity(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}`;
}

/** How often a running job's growing output is saved; state changes are saved at once. */
export const OUTPUT_SAVE_MS = 200;

/** What a live job's owner hears of its saves. */
export interface LiveJobHooks {
  /** The first of saves that fail in a row. */
  onSaveError: (error: unknown) => void;
  /** The save that ends them. */
  onSavedAgain?: () => void;
  /** A save found the job's file ended while it runs here (another server failed it over); said once. */
  onEndedElsewhere?: (ended: JobRecord) => void;
}

/**
 * A job this process is running: its record in memory, saved as it changes (output at most every
 * OUTPUT_SAVE_MS, in order), and every event handed to the clients following it.
 */
export class LiveJob {
  readonly controller = new AbortController();
  private readonly listeners = new Set<(event: JobEvent) => void>();
  private saving: Promise<boolean> = Promise.resolve(true);
  private timer: NodeJS.Timeout | undefined;
  private finished: JobEvent | null = null;
  /** Set as `finish` begins: its followers hear the end only once it is saved. */
  private ending = false;
  private failing = false;
  private endedElsewhere = false;
  /** A save found the job's file ended by another server (failed over): that record is the job's now. */
  private verdictElsewhere = false;

  constructor(
    public record: JobRecord,
    private readonly store: JobStore,
    private readonly now: () => Date,
    private readonly hooks: LiveJobHooks,
  ) {}

  get done(): boolean {
    return this.ending;
  }

  /** Whether the job's end is another server's verdict, which its file keeps, rather than this server's. */
  get endedByAnother(): boolean {
    return this.verdictElsewhere;
  }

  /** Once the saves asked for so far have run: whether the last one is on disk (else the record is in memory only). */
  whenSaved(): Promise<boolean> {
    return this.saving;
  }

  /** Follows the job; an ended job calls back at once with its end. */
  subscribe(listener: (event: JobEvent) => void): () => void {
    if (this.finished) {
      listener(this.finished);
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  start(turnId: string): Promise<boolean> {
    this.record = { ...this.record, state: 'running', turn_id: turnId, updated_at: this.now().toISOString() };
    return this.save();
  }

  append(text: string): void {
    this.record.output += text;
    for (const listener of this.listeners) listener({ type: 'text', text });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.save();
    }, OUTPUT_SAVE_MS);
  }

  /** The model's calls of the client's tools: kept in the record (saved at once) and sent to followers. */
  addToolCalls(calls: readonly OpenAiToolCallOut[]): void {
    const kept = this.record.tool_calls ?? [];
    const event: JobEvent = { type: 'tool_calls', calls: [...calls], first: kept.length };
    this.record = { ...this.record, tool_calls: [...kept, ...calls] };
    for (const listener of this.listeners) listener(event);
    void this.save();
  }

  /** Tool progress goes to the clients following now; the record keeps only the text. */
  toolEvent(event: ToolEvent): void {
    for (const listener of this.listeners) listener({ type: 'tool_event', event });
  }

  /**
   * Ends the job: saved first, then told to its followers as it stands, which is another server's
   * verdict if the save found the file ended so (a job failed over while this server was paused).
   * `turnId`: the turn a job cut while queued is logged as, once its turn comes; `finishReason` null
   * for an answer that never ended.
   */
  async finish(state: Exclude<JobState, 'pending' | 'running'>, error: string | null, finishReason: FinishReason | null, turnId = this.record.turn_id): Promise<boolean> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.ending = true;
    this.record = { ...this.record, state, error, turn_id: turnId, finish_reason: finishReason, updated_at: this.now().toISOString() };
    const saved = await this.save();
    this.finished = { type: 'end', record: this.record, finishReason: endedAs(this.record) };
    for (const listener of this.listeners) listener(this.finished);
    this.listeners.clear();
    return saved;
  }

  /**
   * Saves run one after another, each with the record as it is when its turn comes; true once it is
   * on disk, or once the file holds an ended record, which no save replaces (its own last state saved
   * before, or another server's verdict, which this record then takes).
   */
  save(): Promise<boolean> {
    const saved = this.saving.then(async () => {
      try {
        this.record = { ...this.record, updated_at: this.now().toISOString() };
        const ended = await this.store.writeUnlessEnded(this.record);
        if (ended !== null) this.foundEnded(ended);
        if (this.failing) {
          this.failing = false;
          this.hooks.onSavedAgain?.();
        }
        return true;
      } catch (error) {
        if (!this.failing) {
          this.failing = true;
          this.hooks.onSaveError(error);
        }
        return false;
      }
    });
    this.saving = saved;
    return saved;
  }

  private foundEnded(ended: JobRecord): void {
    this.verdictElsewhere = true;
    if (!isUnfinished(this.record)) {
      this.record = ended;
      if (this.finished !== null) this.finished = { type: 'end', record: ended, finishReason: endedAs(ended) };
    } else if (!this.endedElsewhere) {
      this.endedElsewhere = true;
      this.hooks.onEndedElsewhere?.(ended);
    }
  }
}
