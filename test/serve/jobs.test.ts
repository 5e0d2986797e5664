import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { RuntimeError } from '../../src/errors.js';
import { JobStore, LiveJob, endedAs, followSaved, jobFile, parseJob, savedSince, orphanError } from '../../src/serve/jobs.js';
import type { JobEvent, JobRecord } from '../../src/serve/jobs.js';
import { earlierHome } from '../support/earlier-homes.js';
import { waitFor } from '../support/wait.js';

const record = (fields: Partial<JobRecord> = {}): JobRecord => ({
  id: 'job1',
  state: 'running',
  created_at: '2026-11-20T10:00:00.000Z',
  updated_at: '2026-11-20T10:00:00.000Z',
  session: 'work',
  output: 'so far',
  error: null,
  turn_id: 'turn1',
  ...fields,
});

describe('job file codec', () => {
  it.each([[record()], [record({ model: 'qwen3:8b' })]])('round-trips %j (files from before the model was kept lack it)', (job) => {
    expect(jobFile.decode(jobFile.encode(job))).toEqual(job);
  });

  it.each([
    ['{', 'content'],
    [JSON.stringify({ ...record(), state: 'paused' }), 'field "state"'],
    [JSON.stringify({ ...record(), output: 5 }), 'field "output"'],
    [JSON.stringify({ ...record(), created_at: 'yesterday' }), 'field "created_at"'],
    [JSON.stringify({ ...record(), id: undefined }), 'field "id"'],
  ])('refuses %s naming the file and %s', (text, what) => {
    expect(() => parseJob(text, '/data/jobs/x.json')).toThrow(RuntimeError);
    expect(() => parseJob(text, '/data/jobs/x.json')).toThrow(`job file /data/jobs/x.json has an invalid ${what}`);
  });
});

// Written by 5be5160's argo serve (test/fixtures/earlier-versions): no model, tool_calls or finish_reason yet.
describe('job files of an earlier version', () => {
  const dir = join(earlierHome('5be5160-agent-serve'), 'jobs');
  it.each([
    ['ewhuD36jASUK', 'completed', 'You said: Write a long story', 'stop'],
    ['g_3HAAwlCwSY', 'running', 'w0 w1 w2 w3 w4 w5 ', 'stop'],
    ['glwMhbzu7f30', 'cancelled', 'w0 w1 w2 ', 'stop'],
    ['lfnmEYl5eG6i', 'failed', '', null],
  ])('%s reads as %s with its output, its answer ended as %s (a failed one never ended)', (id, state, output, finish) => {
    const path = join(dir, `${id}.json`);
    const job = parseJob(readFileSync(path, 'utf8'), path);
    expect([job.state, job.output, job.model, job.tool_calls, endedAs(job)]).toEqual([state, output, undefined, undefined, finish]);
  });
});

describe('JobStore', () => {
  const store = (): JobStore => new JobStore(join(mkdtempSync(join(tmpdir(), 'argo-jobs-')), 'jobs'));

  it('writes 0600 files atomically and reads them back; ids that are not ours are not found', async () => {
    const jobs = store();
    await jobs.write(record());
    expect(statSync(jobs.pathOf('job1')).mode & 0o777).toBe(0o600);
    expect(await jobs.read('job1')).toEqual(record());
    expect(await jobs.read('missing')).toBeNull();
    expect(await jobs.read('../etc/passwd')).toBeNull();
    expect(readdirSync(jobs.dir)).toEqual(['job1.json']);
  });

  it('lists newest first, reporting damaged files apart', async () => {
    const jobs = store();
    await jobs.write(record({ id: 'old', created_at: '2026-11-01T00:00:00.000Z' }));
    await jobs.write(record({ id: 'new', created_at: '2026-11-21T00:00:00.000Z' }));
    writeFileSync(join(jobs.dir, 'torn.json'), '{"id":');
    const damaged: string[] = [];
    expect((await jobs.list((path) => damaged.push(path))).map((job) => job.id)).toEqual(['new', 'old']);
    expect(damaged).toEqual([join(jobs.dir, 'torn.json')]);
  });

  it('at start fails jobs left running or pending (output kept) and removes expired ones', async () => {
    const jobs = store();
    const now = new Date('2026-11-23T12:00:00.000Z');
    await jobs.write(record({ id: 'running' }));
    await jobs.write(record({ id: 'pending', state: 'pending', output: '' }));
    await jobs.write(record({ id: 'done', state: 'completed' }));
    await jobs.write(record({ id: 'expired', state: 'completed', updated_at: '2026-10-01T00:00:00.000Z' }));
    expect(await jobs.recover(now, 30)).toEqual({ failed: { running: 1, pending: 1 }, removed: 1, elsewhere: 0 });
    expect(await jobs.read('running')).toMatchObject({ state: 'failed', output: 'so far', error: expect.stringContaining('server stopped') as string, updated_at: now.toISOString() });
    expect(await jobs.read('pending')).toMatchObject({ state: 'failed', error: 'the server stopped while the job was pending, before its turn began, so nothing was answered (turn turn1, logged interrupted with its prompt by the next argo to start)' });
    expect(await jobs.read('done')).toEqual(record({ id: 'done', state: 'completed' }));
    expect(await jobs.read('expired')).toBeNull();
  });

  it('removes a damaged job file untouched for the retention (by its modification time) and reports a newer one', async () => {
    const jobs = store();
    const now = new Date('2026-11-23T12:00:00.000Z');
    await jobs.write(record({ id: 'done', state: 'completed', updated_at: now.toISOString() }));
    for (const [id, days] of [['tornOld', 31], ['tornNew', 29]] as const) {
      writeFileSync(jobs.pathOf(id), '{"id":');
      const modified = new Date(now.getTime() - days * 86_400_000);
      utimesSync(jobs.pathOf(id), modified, modified);
    }
    mkdirSync(`${jobs.pathOf('tornOld')}.lock`);
    // A folder named as a job file is no file to remove: told, left as it is.
    mkdirSync(jobs.pathOf('folder'));
    const long = new Date(now.getTime() - 40 * 86_400_000);
    utimesSync(jobs.pathOf('folder'), long, long);
    const reported: string[] = [];
    expect(await jobs.recover(now, 30, (path) => reported.push(path))).toEqual({ failed: { running: 0, pending: 0 }, removed: 1, elsewhere: 0 });
    expect(reported.sort()).toEqual([jobs.pathOf('folder'), jobs.pathOf('tornNew')].sort());
    expect(readdirSync(jobs.dir).sort()).toEqual(['done.json', 'folder.json', 'tornNew.json']);
  });

  it('removes the stale lock a dead server left beside the jobs it fails or expires', async () => {
    const jobs = store();
    const now = new Date();
    await jobs.write(record({ id: 'dead' }));
    await jobs.write(record({ id: 'expired', updated_at: '2026-01-01T00:00:00.000Z' }));
    const past = new Date(now.getTime() - 60_000);
    for (const id of ['dead', 'expired']) {
      mkdirSync(`${jobs.pathOf(id)}.lock`);
      utimesSync(`${jobs.pathOf(id)}.lock`, past, past);
    }
    expect(await jobs.recover(now, 30)).toEqual({ failed: { running: 1, pending: 0 }, removed: 1, elsewhere: 0 });
    expect(readdirSync(jobs.dir)).toEqual(['dead.json']);
  });

  it('removes the half-written temporary files of saves whose server was killed, not those of live processes', async () => {
    const jobs = store();
    await jobs.write(record());
    // 5000000 is above Linux's highest pid: no process has it.
    const names = { dead: '.job1.json.5000000-0a1b2c3d.tmp', live: `.job1.json.${process.ppid}-deadbeef.tmp`, own: `.job1.json.${process.pid}-0a1b2c3d.tmp`, other: 'notes.tmp' };
    for (const name of Object.values(names)) writeFileSync(join(jobs.dir, name), '{"id":"job1","state":"runn');
    expect(await jobs.recover(new Date(), 30)).toEqual({ failed: { running: 1, pending: 0 }, removed: 0, elsewhere: 0 });
    expect(readdirSync(jobs.dir).sort()).toEqual([names.live, names.own, 'job1.json', names.other].sort());
  });

  it('leaves alone a job another live server holds the lock on, and fails it once the lock is released', async () => {
    const jobs = store();
    await jobs.write(record({ id: 'theirs' }));
    const release = await jobs.lock('theirs', (error) => {
      throw error;
    });
    expect(await jobs.isLocked('theirs')).toBe(true);
    // The lock is private, as the rest of the data home, whatever the umask.
    expect(statSync(join(jobs.dir, 'theirs.json.lock')).mode & 0o777).toBe(0o700);
    expect(await jobs.recover(new Date(), 30)).toEqual({ failed: { running: 0, pending: 0 }, removed: 0, elsewhere: 1 });
    expect(await jobs.read('theirs')).toMatchObject({ state: 'running' });
    await release();
    expect(await jobs.recover(new Date(), 30)).toEqual({ failed: { running: 1, pending: 0 }, removed: 0, elsewhere: 0 });
    expect(readdirSync(jobs.dir)).toEqual(['theirs.json']);
  });
});

describe('orphanError: why a job whose server is gone failed, saying only what it had', () => {
  it.each([
    [{ state: 'running', output: 'so far' }, 'the server stopped while the job was running; its output so far is kept'],
    [{ state: 'running', output: '', tool_calls: [{ id: 'c', type: 'function' as const, function: { name: 'f', arguments: '{}' } }] }, 'the server stopped while the job was running; its output so far is kept'],
    [{ state: 'running', output: '' }, 'the server stopped while the job was running; it had no output yet'],
    [{ state: 'pending', output: '' }, 'the server stopped while the job was pending, before its turn began, so nothing was answered (turn turn1, logged interrupted with its prompt by the next argo to start)'],
    // Files of earlier versions named no turn while pending.
    [{ state: 'pending', output: '', turn_id: null }, 'the server stopped while the job was pending, before its turn began, so nothing was answered'],
  ] as const)('%j: %s', (fields, error) => {
    expect(orphanError(record(fields as Partial<JobRecord>))).toBe(error);
  });
});

describe('JobStore.writeUnlessEnded: an ended record is final', () => {
  const store = (): JobStore => new JobStore(join(mkdtempSync(join(tmpdir(), 'argo-jobs-')), 'jobs'));
  const failedOver = record({ state: 'failed', error: 'the server stopped while the job was running; its output so far is kept' });
  it.each<[string, JobRecord | 'damaged' | null, JobRecord, JobRecord | null]>([
    ['no file yet: written', null, record(), null],
    ['pending on disk: written', record({ state: 'pending', output: '' }), record(), null],
    ['running on disk: written', record({ output: 'so' }), record(), null],
    ['a damaged file: written over', 'damaged', record(), null],
    ['failed over by another server: kept, the running record not written', failedOver, record({ output: 'so far, and more' }), failedOver],
    ['completed: kept, even against another end', record({ state: 'completed' }), record({ state: 'failed', error: 'late' }), record({ state: 'completed' })],
    ['cancelled: kept', record({ state: 'cancelled', error: 'stop signal' }), record(), record({ state: 'cancelled', error: 'stop signal' })],
  ])('%s', async (_case, onDisk, written, kept) => {
    const jobs = store();
    if (onDisk === 'damaged') {
      mkdirSync(jobs.dir, { recursive: true });
      writeFileSync(jobs.pathOf(written.id), '{"id":');
    } else if (onDisk !== null) {
      await jobs.write(onDisk);
    }
    expect(await jobs.writeUnlessEnded(written)).toEqual(kept);
    expect(await jobs.read(written.id)).toEqual(kept ?? written);
  });

  it('reads the file back only when another hand wrote it since its own last save', async () => {
    const jobs = store();
    const reads = vi.spyOn(jobs, 'read');
    expect(await jobs.writeUnlessEnded(record({ output: 'a' }))).toBeNull();
    reads.mockClear();
    expect(await jobs.writeUnlessEnded(record({ output: 'ab' }))).toBeNull();
    expect(await jobs.writeUnlessEnded(record({ output: 'abc' }))).toBeNull();
    expect(reads).not.toHaveBeenCalled();
    // Another server fails it over: the next save sees a file it did not write, reads it, and keeps it.
    await new JobStore(jobs.dir).write(failedOver);
    expect(await jobs.writeUnlessEnded(record({ output: 'abcd' }))).toEqual(failedOver);
    expect(reads).toHaveBeenCalledTimes(1);
  });
});

describe('JobStore.settle: a job read as pending or running, not run by this server', () => {
  const store = (): JobStore => new JobStore(join(mkdtempSync(join(tmpdir(), 'argo-jobs-')), 'jobs'));
  const now = new Date('2026-11-23T12:00:00.000Z');
  const reason = (state: string): string => orphanError(record({ state: state as JobRecord['state'] }));
  it.each([
    ['running, its server gone (no lock)', record(), 'none', { record: record({ state: 'failed', error: reason('running'), updated_at: now.toISOString() }), elsewhere: false, failedNow: true }],
    ['pending, its server gone (a stale lock)', record({ state: 'pending', output: '' }), 'stale', { record: record({ state: 'failed', output: '', error: reason('pending'), updated_at: now.toISOString() }), elsewhere: false, failedNow: true }],
    ['running on a live server', record(), 'live', { record: record(), elsewhere: true, failedNow: false }],
    ['ended since it was read: as it ended, not failed over', record(), 'none', { record: record({ state: 'completed', finish_reason: 'stop' }), elsewhere: false, failedNow: false }, record({ state: 'completed', finish_reason: 'stop' })],
    ['its file removed since it was read', record(), 'none', null, null],
  ] as const)('%s', async (_case, read, lock, expected, onDisk: JobRecord | null = read) => {
    const jobs = store();
    if (onDisk) await jobs.write(onDisk);
    else mkdirSync(jobs.dir, { recursive: true });
    const lockPath = `${jobs.pathOf(read.id)}.lock`;
    let release: (() => Promise<void>) | null = null;
    if (lock === 'live') release = await jobs.lock(read.id, () => undefined);
    if (lock === 'stale') {
      mkdirSync(lockPath);
      const past = new Date(Date.now() - 60_000);
      utimesSync(lockPath, past, past);
    }
    try {
      expect(await jobs.settle(read, now)).toEqual(expected);
      if (onDisk) expect(await jobs.read(read.id)).toEqual(expected?.record ?? onDisk);
      // A failed job's stale lock goes with it; a live one stays.
      expect(readdirSync(jobs.dir).sort()).toEqual([...(onDisk ? [`${read.id}.json`] : []), ...(lock === 'live' ? [`${read.id}.json.lock`] : [])]);
    } finally {
      await release?.();
    }
  });

  it('a job is locked before its file is first written (the jobs folder made private if need be)', async () => {
    const jobs = store();
    const release = await jobs.lock('fresh', () => undefined);
    expect(await jobs.isLocked('fresh')).toBe(true);
    expect(statSync(jobs.dir).mode & 0o777).toBe(0o700);
    await release();
  });
});

describe('savedSince: what a follower of another server\'s job has not seen yet', () => {
  const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } });
  it.each<[string, Partial<JobRecord>, Partial<JobRecord>, JobEvent[]]>([
    ['nothing new', {}, {}, []],
    ['more text', { output: 'so' }, { output: 'so far' }, [{ type: 'text', text: ' far' }]],
    ['a first call', {}, { tool_calls: [call('a')] }, [{ type: 'tool_calls', calls: [call('a')], first: 0 }]],
    ['text, then the calls after those seen', { output: 'a', tool_calls: [call('a')] }, { output: 'ab', tool_calls: [call('a'), call('b'), call('c')] }, [{ type: 'text', text: 'b' }, { type: 'tool_calls', calls: [call('b'), call('c')], first: 1 }]],
    ['a file from before calls were kept', { tool_calls: undefined }, { tool_calls: undefined, output: 'so far!' }, [{ type: 'text', text: '!' }]],
    ['output that is not a continuation gives no text', { output: 'abc' }, { output: 'xyz and more' }, []],
    ['shorter output gives no text', { output: 'so far' }, { output: 'so' }, []],
  ])('%s', (_, seen, now, events) => {
    expect(savedSince(record(seen), record(now))).toEqual(events);
  });
});

describe('followSaved: another server\'s job, through reads of its file', () => {
  /** Reads answered in order from `script` (the last one repeats); an Error is a failed read. `unreadForMs`: how long failing reads are borne. */
  const follow = (script: (JobRecord | null | Error)[], unreadForMs = 60_000) => {
    const timing = { everyMs: 2, unreadForMs };
    const events: JobEvent[] = [];
    let reads = 0;
    const read = () => {
      const next = script[Math.min(reads++, script.length - 1)];
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next ?? null);
    };
    const unfollow = followSaved(record({ output: 'a' }), read, (event) => events.push(event), timing);
    return { events, unfollow, reads: () => reads };
  };
  const ended = (events: JobEvent[]) => events.find((event) => event.type === 'end');

  it('sends what each read adds, then the end the file says', async () => {
    const { events } = follow([record({ output: 'ab' }), record({ output: 'abc' }), record({ output: 'abc!', state: 'completed' })]);
    await waitFor(() => expect(ended(events)).toBeDefined());
    expect(events).toEqual([
      { type: 'text', text: 'b' },
      { type: 'text', text: 'c' },
      { type: 'text', text: '!' },
      { type: 'end', record: record({ output: 'abc!', state: 'completed' }), finishReason: 'stop' },
    ]);
  });

  it('a read that fails now and then is tried again: the stream goes on to the real end', async () => {
    const { events } = follow([new Error('EMFILE'), record({ output: 'ab' }), new Error('EMFILE'), new Error('EMFILE'), record({ output: 'ab', state: 'completed' })]);
    await waitFor(() => expect(ended(events)).toBeDefined());
    expect(events).toEqual([{ type: 'text', text: 'b' }, { type: 'end', record: record({ output: 'ab', state: 'completed' }), finishReason: 'stop' }]);
  });

  it('reads that keep failing end the stream with the job as last seen, saying so, never a made-up state', async () => {
    const { events } = follow([record({ output: 'ab' }), new Error('EACCES: permission denied')], 10);
    await waitFor(() => expect(ended(events)).toBeDefined());
    expect(ended(events)).toEqual({
      type: 'end',
      record: record({ output: 'ab', error: "this server could not read the job's file for 0.01 s (EACCES: permission denied); GET /api/jobs/job1 shows where it stands" }),
      finishReason: null,
    });
  });

  it('a file that has gone ends the stream failed; unfollowing stops the reads', async () => {
    const gone = follow([null]);
    await waitFor(() => expect(ended(gone.events)).toMatchObject({ record: { state: 'failed', error: "the job's file was removed while it ran" } }));
    const running = follow([record({ output: 'a' })]);
    await waitFor(() => expect(running.reads()).toBeGreaterThan(1));
    running.unfollow();
    const reads = running.reads();
    // Another follower's reads show the timers going on meanwhile.
    const clock = follow([record({ output: 'a' })]);
    await waitFor(() => expect(clock.reads()).toBeGreaterThan(5));
    clock.unfollow();
    expect(running.reads()).toBe(reads);
  });
});

describe('LiveJob', () => {
  it('keeps the client tool calls in its record, numbered across batches, and sends each batch to followers', async () => {
    const jobs = new JobStore(join(mkdtempSync(join(tmpdir(), 'argo-jobs-')), 'jobs'));
    const job = new LiveJob(record({ tool_calls: [], finish_reason: null }), jobs, () => new Date('2026-11-23T00:00:00.000Z'), {
      onSaveError: (error) => {
        throw error;
      },
    });
    const seen: JobEvent[] = [];
    job.subscribe((event) => seen.push(event));
    const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } });
    job.addToolCalls([call('a')]);
    job.addToolCalls([call('b'), call('c')]);
    await job.finish('completed', null, 'tool_calls');
    expect(seen.slice(0, 2)).toEqual([
      { type: 'tool_calls', calls: [call('a')], first: 0 },
      { type: 'tool_calls', calls: [call('b'), call('c')], first: 1 },
    ]);
    expect(await jobs.read('job1')).toMatchObject({ state: 'completed', tool_calls: [call('a'), call('b'), call('c')], finish_reason: 'tool_calls' });
  });

  it('fans out text and the end to followers, saves as it goes, and answers late followers with the end', async () => {
    const jobs = new JobStore(join(mkdtempSync(join(tmpdir(), 'argo-jobs-')), 'jobs'));
    const job = new LiveJob(record({ state: 'pending', output: '', turn_id: null }), jobs, () => new Date('2026-11-23T00:00:00.000Z'), {
      onSaveError: (error) => {
        throw error;
      },
    });
    await job.save();
    const seen: JobEvent[] = [];
    const unsubscribe = job.subscribe((event) => seen.push(event));
    await job.start('t1');
    expect(await jobs.read('job1')).toMatchObject({ state: 'running', turn_id: 't1' });
    job.append('a');
    job.append('b');
    await waitFor(async () => expect((await jobs.read('job1'))?.output).toBe('ab'));
    await job.finish('completed', null, 'stop');
    expect(seen.map((event) => event.type)).toEqual(['text', 'text', 'end']);
    expect(JSON.parse(readFileSync(jobs.pathOf('job1'), 'utf8'))).toMatchObject({ state: 'completed', output: 'ab', error: null });
    unsubscribe();
    const late: JobEvent[] = [];
    job.subscribe((event) => late.push(event));
    expect(late).toEqual([{ type: 'end', record: job.record, finishReason: 'stop' }]);
    expect(job.done).toBe(true);
  });

  it('a job whose file another server failed over: heard of once, never written back to running, nor to its own end', async () => {
    const jobs = new JobStore(join(mkdtempSync(join(tmpdir(), 'argo-jobs-')), 'jobs'));
    const heard: JobRecord[] = [];
    const job = new LiveJob(record({ output: '' }), jobs, () => new Date('2026-11-23T00:00:00.000Z'), {
      onSaveError: (error) => {
        throw error;
      },
      onEndedElsewhere: (ended) => heard.push(ended),
    });
    await job.start('turn1');
    const failedOver = record({ state: 'failed', error: 'the server stopped while the job was running; its output so far is kept', output: '' });
    await jobs.write(failedOver);
    job.append('more');
    expect(await job.save()).toBe(true);
    expect(await job.save()).toBe(true);
    expect(heard).toEqual([failedOver]);
    expect(await jobs.read('job1')).toEqual(failedOver);
    // Its own end is not written over the verdict either: the record takes what the file says, and
    // its followers hear that end, not the one it was asked to save.
    const followers: JobEvent[] = [];
    job.subscribe((event) => followers.push(event));
    const ending = job.finish('failed', 'the server running the job lost its lock on it', null);
    expect(job.done).toBe(true);
    expect(followers).toEqual([]);
    expect(await ending).toBe(true);
    expect(followers).toEqual([{ type: 'end', record: failedOver, finishReason: null }]);
    expect(job.endedByAnother).toBe(true);
    expect(await jobs.read('job1')).toEqual(failedOver);
    expect(job.record).toEqual(failedOver);
    const late: JobEvent[] = [];
    job.subscribe((event) => late.push(event));
    expect(late).toEqual([{ type: 'end', record: failedOver, finishReason: null }]);
  });

  it('says whether each save reached the disk; saves failing in a row are heard of once, and the one that ends them', async () => {
    const jobs = new JobStore(join(mkdtempSync(join(tmpdir(), 'argo-jobs-')), 'jobs'));
    let full = false;
    const write = jobs.write.bind(jobs);
    jobs.write = (record) => (full ? Promise.reject(new Error('ENOSPC: no space left on device')) : write(record));
    const heard: string[] = [];
    const job = new LiveJob(record(), jobs, () => new Date('2026-11-23T00:00:00.000Z'), { onSaveError: (error) => heard.push((error as Error).message), onSavedAgain: () => heard.push('saved again') });
    const steps: [boolean, boolean, string[]][] = [
      [false, true, []],
      [true, false, ['ENOSPC: no space left on device']],
      [true, false, ['ENOSPC: no space left on device']],
      [false, true, ['ENOSPC: no space left on device', 'saved again']],
    ];
    for (const [isFull, saved, said] of steps) {
      full = isFull;
      expect(await job.save()).toBe(saved);
      expect(await job.whenSaved()).toBe(saved);
      expect(heard).toEqual(said);
    }
  });
});
