import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import type { Settings } from '../../src/config/settings.js';
import type { LogEntry } from '../../src/log/entry.js';
import { UNFINISHED_ERROR, unfinishedDir, writeUnfinished } from '../../src/log/unfinished.js';
import type { TurnOwner, UnfinishedTurn } from '../../src/log/unfinished.js';
import type { StreamOutcome } from '../../src/ollama/transport.js';
import { withSessionLock } from '../../src/log/lock.js';
import { readSession } from '../../src/sessions/store.js';
import { loadSessionEntries } from '../../src/sessions/turns.js';
import { defined } from '../support/defined.js';
import { byAskedAt, holdsNoRescue, recoverOnce, recoverUnfinished, recoveryLines } from '../../src/turn/recover.js';
import type { Recovery } from '../../src/turn/recover.js';
import { prepareTurn, runTurn } from '../../src/turn/turn.js';
import type { Transport, TurnPorts } from '../../src/turn/turn.js';
import { makeDraft, recordTurns, tempData } from '../query/helpers.js';

const ME: TurnOwner = { pid: 100, host: 'box', boot: 'aaaa-1111' };
const DEAD = 200;
const ALIVE = 300;
const OTHER_USER = 400;

/** kill(pid, 0) as the system answers it here: DEAD is gone, OTHER_USER is another user's, the rest run. */
const kill = (pid: number): void => {
  if (pid === DEAD) throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
  if (pid === OTHER_USER) throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' });
};

const settingsIn = (home: string): Settings => loadSettings({ home, session: 'work' }, {});
const recover = (settings: Settings, me: TurnOwner = ME): Promise<Recovery> => recoverUnfinished(settings, { me, kill });

const draft = (id: string, timestamp?: string, prompt?: string): LogEntry => makeDraft(id, { ...(timestamp !== undefined ? { timestamp } : {}), ...(prompt !== undefined ? { user_prompt: prompt } : {}) });

function unfinished(id: string, owner: Partial<TurnOwner> = {}, extra: Partial<UnfinishedTurn> = {}): UnfinishedTurn {
  return { owner: { ...ME, pid: DEAD, ...owner }, day: '2025-03-04', session: { id: null, name: 'work' }, entry: draft(id), ...extra };
}

const logLines = (home: string): Record<string, unknown>[] => {
  const dir = join(home, 'logs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((file) =>
    readFileSync(join(dir, file), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  );
};
const journal = (home: string): string[] => (existsSync(unfinishedDir(home)) ? readdirSync(unfinishedDir(home)).sort() : []);
const fresh = (): string => mkdtempSync(join(tmpdir(), 'argo-recover-'));

describe('recoverUnfinished', () => {
  it('nothing to do when the folder is missing or empty', async () => {
    const home = fresh();
    expect(await recover(settingsIn(home))).toEqual({ recovered: [], answered: [], alreadyLogged: [], rescued: [], inProgress: [], elsewhere: [], problems: [] });
    mkdirSync(unfinishedDir(home));
    expect((await recover(settingsIn(home))).recovered).toEqual([]);
  });

  it("a dead owner's turn is logged once as it stood (interrupted, its prompt), through its session, and its file removed", async () => {
    const home = fresh();
    await writeUnfinished(home, unfinished('t1', {}, { rules: 'r1' }));
    const settings = settingsIn(home);
    expect(await recover(settings)).toMatchObject({ recovered: ['t1'], problems: [] });
    const session = await readSession(settings.paths.sessions, 'work');
    const [line, ...more] = logLines(home);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ id: 't1', status: 'interrupted', user_prompt: 'prompt of t1', model_response: '', error: UNFINISHED_ERROR, session: 'work', session_id: session?.id });
    // The session's counters and index know it, as for any logged turn.
    expect(session).toMatchObject({ turns: 1, last_turn_id: 't1', title: 'prompt of t1' });
    expect(readFileSync(join(settings.paths.sessions, 'work.idx'), 'utf8')).toContain('"id":"t1"');
    expect(journal(home)).toEqual([]);
    // Once logged, a second look finds nothing.
    expect((await recover(settings)).recovered).toEqual([]);
    expect(logLines(home)).toHaveLength(1);
  });

  it.each<[string, [string, string][], string[]]>([
    ['by time, whatever their names', [['aaa', '2025-03-04T05:06:09.000+00:00'], ['zzz', '2025-03-04T05:06:08.000+00:00']], ['zzz', 'aaa']],
    // 10:00 at +14:00 is 20:00 UTC the day before: asked first, though its text sorts last.
    ['by the instant, whatever their zones', [['aaa', '2025-03-04T05:00:00.000+00:00'], ['zzz', '2025-03-04T10:00:00.000+14:00']], ['zzz', 'aaa']],
    ['the same instant in two zones: by id', [['zzz', '2025-03-04T05:00:00.000+00:00'], ['aaa', '2025-03-04T06:00:00.000+01:00']], ['aaa', 'zzz']],
  ])('several are logged in the order they were asked: %s', async (_case, turns, order) => {
    const home = fresh();
    for (const [id, timestamp] of turns) await writeUnfinished(home, { ...unfinished(id), entry: draft(id, timestamp) });
    expect((await recover(settingsIn(home))).recovered).toEqual(order);
    expect(logLines(home).map((line) => line.id)).toEqual(order);
  });

  it.each<[string, Partial<TurnOwner>, keyof Recovery, unknown]>([
    ['a live argo on this host: in progress', { pid: ALIVE }, 'inProgress', [{ id: 't1', pid: ALIVE }]],
    ["a live argo of another user's (EPERM): in progress", { pid: OTHER_USER }, 'inProgress', [{ id: 't1', pid: OTHER_USER }]],
    ["another host's argo: left to that host", { host: 'far' }, 'elsewhere', [{ id: 't1', host: 'far' }]],
  ])('%s, left in place', async (_case, owner, where, listed) => {
    const home = fresh();
    await writeUnfinished(home, unfinished('t1', owner));
    const recovery = await recover(settingsIn(home));
    expect(recovery[where]).toEqual(listed);
    expect(recovery.recovered).toEqual([]);
    expect(logLines(home)).toEqual([]);
    expect(journal(home)).toEqual(['t1.json']);
  });

  it("a live argo's file is judged by its owner alone: the rest is checked only when it is to be logged", async () => {
    const home = fresh();
    mkdirSync(unfinishedDir(home));
    writeFileSync(join(unfinishedDir(home), 't1.json'), JSON.stringify({ owner: { ...ME, pid: ALIVE }, written: 'by a newer argo' }));
    expect(await recover(settingsIn(home))).toMatchObject({ inProgress: [{ id: 't1', pid: ALIVE }], problems: [] });
  });

  it("another machine with this host name (both have a machine id): its turn is left to it, named by its machine id", async () => {
    const home = fresh();
    await writeUnfinished(home, unfinished('t1', { boot: 'bbbb-2222', machine: '22222222222222222222222222222222' }));
    const recovery = await recover(settingsIn(home), { ...ME, machine: '11111111111111111111111111111111' });
    expect(recovery).toMatchObject({ recovered: [], elsewhere: [{ id: 't1', host: 'box', machine: '22222222222222222222222222222222' }] });
    expect(journal(home)).toEqual(['t1.json']);
  });

  it('argo in another container on this machine (same host name and boot, another pid namespace): its turn is left to it, named by its namespace', async () => {
    const home = fresh();
    await writeUnfinished(home, unfinished('t1', { pidns: 'pid:[4026532001]' }));
    const recovery = await recover(settingsIn(home), { ...ME, pidns: 'pid:[4026531836]' });
    expect(recovery).toMatchObject({ recovered: [], elsewhere: [{ id: 't1', host: 'box', container: 'pid:[4026532001]' }] });
    expect(journal(home)).toEqual(['t1.json']);
  });

  it("an owner whose pid another process has taken since (it started later) is gone; one whose start is the owner's runs", async () => {
    const home = fresh();
    await writeUnfinished(home, unfinished('reused', { pid: ALIVE, start: 700 }));
    await writeUnfinished(home, unfinished('running', { pid: ALIVE + 1, start: 800 }));
    const recovery = await recoverUnfinished(settingsIn(home), { me: ME, kill, startTime: (pid) => (pid === ALIVE ? 900 : 800) });
    expect(recovery).toMatchObject({ recovered: ['reused'], inProgress: [{ id: 'running', pid: ALIVE + 1 }] });
  });

  it('an argo of an earlier boot is gone, whatever runs under its pid now', async () => {
    const home = fresh();
    await writeUnfinished(home, unfinished('t1', { pid: ALIVE, boot: 'bbbb-2222' }));
    expect((await recover(settingsIn(home))).recovered).toEqual(['t1']);
  });

  // A turn goes to a later day's file when one exists (appendDay), up to two days after its own.
  it.each([
    ['its own day', '2025-03-04'],
    ['the day after', '2025-03-05'],
    ['two days after', '2025-03-06'],
  ])('a turn whose line is in the log already (killed after writing it), in the file of %s, is not logged again: its file is dropped', async (_case, day) => {
    const home = fresh();
    const settings = settingsIn(home);
    mkdirSync(settings.paths.logs, { recursive: true });
    writeFileSync(join(settings.paths.logs, '2025-03-04.log'), `${JSON.stringify({ ...draft('other'), status: 'ok' })}\n`);
    writeFileSync(join(settings.paths.logs, `${day}.log`), `${JSON.stringify({ ...draft('t1'), status: 'ok', model_response: 'the answer' })}\n`, { flag: 'a' });
    await writeUnfinished(home, unfinished('t1'));
    expect(await recover(settings)).toMatchObject({ recovered: [], alreadyLogged: ['t1'] });
    expect(logLines(home).filter((line) => line.id === 't1')).toMatchObject([{ id: 't1', status: 'ok' }]);
    expect(journal(home)).toEqual([]);
  });

  it('a turn saved to rescued/ (killed after the rescue, before its journal file went) is not logged again: the rescue is named', async () => {
    const home = fresh();
    const rescued = join(home, 'rescued');
    mkdirSync(rescued, { recursive: true });
    const file = join(rescued, 'unlogged-2025-03-04T10-00-00-000Z-9-abcdef.ndjson');
    writeFileSync(join(rescued, 'unlogged-2025-03-04T09-00-00-000Z-9-000000.ndjson'), `${JSON.stringify({ ...draft('other'), status: 'ok' })}\n`);
    writeFileSync(file, `${JSON.stringify({ ...draft('t1'), status: 'ok', model_response: 'the answer' })}\n`);
    await writeUnfinished(home, unfinished('t1'));
    await writeUnfinished(home, unfinished('t2'));
    expect(await recover(settingsIn(home))).toMatchObject({ recovered: ['t2'], alreadyLogged: [], rescued: [{ id: 't1', file }] });
    expect(logLines(home).map((line) => line.id)).toEqual(['t2']);
    expect(journal(home)).toEqual([]);
  });

  it.each([
    ['a file, not a folder', (path: string) => writeFileSync(path, 'not a folder'), ['t1'], []],
    ['a folder with a file argo cannot read', (path: string) => mkdirSync(join(path, 'unlogged-x.ndjson'), { recursive: true }), [], ['t1.json']],
    // Run as root, the folder is read (and empty); as anyone else, it cannot be: no rescue of theirs is there either way.
    ['a folder this user may not read', (path: string) => mkdirSync(path, { mode: 0o000 }), ['t1'], []],
  ])('rescued/ is %s: the turn is logged when nothing can have been saved there, else kept for later', async (_case, make, recovered, kept) => {
    const home = fresh();
    make(join(home, 'rescued'));
    await writeUnfinished(home, unfinished('t1'));
    const recovery = await recover(settingsIn(home));
    expect(recovery.recovered).toEqual(recovered);
    expect(recovery.problems).toHaveLength(kept.length);
    expect(journal(home)).toEqual(kept);
  });

  it.each<[string, unknown, boolean]>([
    ['missing (ENOENT)', { code: 'ENOENT' }, true],
    ['under a file (ENOTDIR)', { code: 'ENOTDIR' }, true],
    ["another user's (EACCES)", { code: 'EACCES' }, true],
    ['refused by the system (EPERM)', { code: 'EPERM' }, true],
    ['a failing disk (EIO)', { code: 'EIO' }, false],
    ['out of file descriptors (EMFILE)', { code: 'EMFILE' }, false],
    ['no errno at all', new Error('odd'), false],
  ])('rescued/ %s holds no rescue of ours: %s', (_case, failure, none) => {
    expect(holdsNoRescue(Object.assign(new Error('readdir'), failure))).toBe(none);
  });

  it('a damaged file is reported and left in place; the others are still logged', async () => {
    const home = fresh();
    await writeUnfinished(home, unfinished('good'));
    writeFileSync(join(unfinishedDir(home), 'bad.json'), '{"owner": {"pid": 2');
    writeFileSync(join(unfinishedDir(home), 'other.json'), JSON.stringify(unfinished('not-other')));
    writeFileSync(join(unfinishedDir(home), 'badname.json'), JSON.stringify(unfinished('badname', {}, { session: { id: null, name: '../x' } })));
    const recovery = await recover(settingsIn(home));
    expect(recovery.recovered).toEqual(['good']);
    expect(recovery.problems).toEqual([
      { file: join(unfinishedDir(home), 'bad.json'), problem: expect.stringMatching(/^not JSON/) as unknown },
      { file: join(unfinishedDir(home), 'badname.json'), problem: 'its session name "../x" is not a valid session name' },
      { file: join(unfinishedDir(home), 'other.json'), problem: 'it holds turn "not-other", not the other its name says' },
    ]);
    expect(journal(home)).toEqual(['bad.json', 'badname.json', 'other.json']);
  });

  it('two recoverers at once: the turn is logged once', async () => {
    const home = fresh();
    const settings = settingsIn(home);
    await writeUnfinished(home, unfinished('t1'));
    await writeUnfinished(home, { ...unfinished('t2'), entry: draft('t2', '2025-03-04T05:06:08.000+00:00') });
    const [a, b] = await Promise.all([recover(settings, { ...ME, pid: 101 }), recover(settings, { ...ME, pid: 102 })]);
    expect([...a.recovered, ...b.recovered].sort()).toEqual(['t1', 't2']);
    expect(logLines(home).map((line) => line.id).sort()).toEqual(['t1', 't2']);
    expect(journal(home)).toEqual([]);
  });

  it("a claim whose recoverer died part-way is taken over (its pid gone, or taken by a later process); a live recoverer's is left to it", async () => {
    const home = fresh();
    await writeUnfinished(home, unfinished('t1'));
    await writeUnfinished(home, unfinished('t2'));
    await writeUnfinished(home, unfinished('t3'));
    renameSync(join(unfinishedDir(home), 't1.json'), join(unfinishedDir(home), `t1.json.claimed-${DEAD}-aaaa-1111`));
    renameSync(join(unfinishedDir(home), 't2.json'), join(unfinishedDir(home), `t2.json.claimed-${ALIVE}-aaaa-1111-t800`));
    renameSync(join(unfinishedDir(home), 't3.json'), join(unfinishedDir(home), `t3.json.claimed-${ALIVE}-aaaa-1111-t700`));
    const recovery = await recoverUnfinished(settingsIn(home), { me: ME, kill, startTime: () => 800 });
    expect(recovery).toMatchObject({ recovered: ['t1', 't3'], inProgress: [] });
    expect(journal(home)).toEqual([`t2.json.claimed-${ALIVE}-aaaa-1111-t800`]);
  });

  it("a claim by a recoverer in another container (its pid namespace) is left to it, though a pid of this container's is gone", async () => {
    const home = fresh();
    const pidns = 'pid:[4026531836]';
    const here: TurnOwner = { ...ME, pidns };
    await writeUnfinished(home, unfinished('t1', { pidns }));
    await writeUnfinished(home, unfinished('t2', { pidns }));
    renameSync(join(unfinishedDir(home), 't1.json'), join(unfinishedDir(home), `t1.json.claimed-${DEAD}-aaaa-1111-n4026532001`));
    renameSync(join(unfinishedDir(home), 't2.json'), join(unfinishedDir(home), `t2.json.claimed-${DEAD}-aaaa-1111-n4026531836`));
    const recovery = await recoverUnfinished(settingsIn(home), { me: here, kill });
    expect(recovery).toMatchObject({ recovered: ['t2'], elsewhere: [{ id: 't1', host: 'box', container: 'pid:[4026532001]' }] });
    expect(journal(home)).toEqual([`t1.json.claimed-${DEAD}-aaaa-1111-n4026532001`]);
  });

  it('a turn that cannot be logged gets its name back, for a later argo to try again', async () => {
    const home = fresh();
    const settings = settingsIn(home);
    await writeUnfinished(home, unfinished('t1'));
    // A folder where the day's log goes: the append fails.
    mkdirSync(join(settings.paths.logs, '2025-03-04.log'), { recursive: true });
    const recovery = await recover(settings);
    expect(recovery.recovered).toEqual([]);
    expect(recovery.problems).toEqual([{ file: join(unfinishedDir(home), 't1.json'), problem: expect.stringMatching(/^cannot be logged/) as unknown }]);
    expect(journal(home)).toEqual(['t1.json']);
  });

  it('a turn planned on a session is logged under its id, even when the session was renamed meanwhile', async () => {
    const home = fresh();
    const settings = settingsIn(home);
    const first = await runTurn(settings, { prompt: 'first', replay: { kind: 'none' }, log: true, ollamaStream: true }, ports(['one']));
    const id = first.entry.session_id;
    renameSync(join(settings.paths.sessions, 'work.json'), join(settings.paths.sessions, 'renamed.json'));
    const record = JSON.parse(readFileSync(join(settings.paths.sessions, 'renamed.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(settings.paths.sessions, 'renamed.json'), JSON.stringify({ ...record, name: 'renamed' }));
    renameSync(join(settings.paths.sessions, 'work.idx'), join(settings.paths.sessions, 'renamed.idx'));
    await writeUnfinished(home, unfinished('t2', {}, { session: { id, name: 'work' } }));
    expect((await recover(settings)).recovered).toEqual(['t2']);
    expect(logLines(home).find((line) => line.id === 't2')).toMatchObject({ session: 'work', session_id: id });
    expect(await readSession(settings.paths.sessions, 'renamed')).toMatchObject({ turns: 2, last_turn_id: 't2' });
    expect(await readSession(settings.paths.sessions, 'work')).toBeNull();
  });

  it('a turn recovered days late is filed by its own day, before turns written earlier: a rebuilt index replays exactly as the live one', async () => {
    const { home, paths } = tempData();
    const settings = settingsIn(home);
    const { session, entries: [early] } = await recordTurns(paths, 'work', 1, { date: '2025-03-01' });
    // Asked on 03-01, its argo killed; the next argo runs only on 03-05, after two more turns.
    await writeUnfinished(home, { ...unfinished('late', {}, { day: '2025-03-01', session: { id: session.id, name: 'work' } }), entry: draft('late', '2025-03-01T10:05:00.000+00:00') });
    const { entries: later } = await recordTurns(paths, 'work', 2, { date: '2025-03-05' });
    expect((await recover(settings)).recovered).toEqual(['late']);
    expect(readFileSync(join(paths.logs, '2025-03-01.log'), 'utf8')).toContain('"id":"late"');
    const ids = [early, ...later].map((entry) => entry?.id);

    const index = join(paths.sessions, 'work.idx');
    const indexIds = (): string[] => readFileSync(index, 'utf8').split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { id: string }).id);
    const plans = async (): Promise<unknown[]> =>
      Promise.all(
        (['session', 'last'] as const).map(async (kind) => {
          const { plan } = await prepareTurn(settings, { prompt: 'next', replay: kind === 'session' ? { kind } : { kind, count: 2 }, log: true, ollamaStream: true });
          return { replayed: plan.replayedIds, request: plan.request };
        }),
      );
    expect(indexIds()).toEqual([...ids, 'late']);
    const live = await plans();
    rmSync(index);
    const rebuilt = await plans();
    // The rebuilt index has the late turn where its file puts it; only ok turns are replayed, so nothing else moved.
    expect(indexIds()).toEqual([ids[0], 'late', ...ids.slice(1)]);
    expect(rebuilt).toEqual(live);
    // Something to compare: the later turns are replayed by both.
    expect(live).toMatchObject([{ replayed: expect.arrayContaining(ids.slice(1)) as unknown }, { replayed: ids.slice(1) }]);
  });

  it('a recovered turn is never replayed: only ok turns are', async () => {
    const home = fresh();
    const settings = settingsIn(home);
    const first = await runTurn(settings, { prompt: 'first', replay: { kind: 'none' }, log: true, ollamaStream: true }, ports(['one']));
    await writeUnfinished(home, { ...unfinished('lost', {}, { session: { id: first.entry.session_id, name: 'work' } }), entry: draft('lost', '2099-01-01T00:00:00.000+00:00', 'the lost question') });
    expect((await recover(settings)).recovered).toEqual(['lost']);
    const next = await runTurn(settings, { prompt: 'next', replay: { kind: 'session' }, log: true, ollamaStream: true }, ports(['two'], 'next'));
    expect(next.entry.replayed_ids).toEqual([first.entry.id]);
    expect(JSON.stringify(next.plan.request.body)).not.toContain('the lost question');
  });
});

const METRICS: StreamOutcome['metrics'] = { total_duration: 5, load_duration: 1, prompt_eval_count: 3, prompt_eval_duration: 2, eval_count: 2, eval_duration: 2, done_reason: 'stop' };

function ports(words: string[], idPrefix = 'turn'): TurnPorts {
  const transport: Transport = {
    stream: (_request, hooks) => {
      for (const word of words) hooks.onText(word);
      return Promise.resolve({ status: 'ok', failure: null, metrics: METRICS, attempts: 1 });
    },
    installedModels: () => Promise.resolve(['argo:latest']),
  };
  let tick = 0;
  return {
    transport,
    now: () => new Date(),
    clock: () => (tick += 10),
    newId: () => `${idPrefix}${String(++tick).padStart(6, '0')}`,
    rescue: () => Promise.reject(new Error('no rescue expected')),
  };
}

describe('a turn whose argo was killed after its log line (before its index line, or its record)', () => {
  const indexIds = (sessions: string, name: string): string[] =>
    readFileSync(join(sessions, `${name}.idx`), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as { id: string }).id);
  // A pid no system gives (above pid_max): the writer of the leftover is gone.
  const leftover = '.work.json.99999999-0123abcd.tmp';

  it.each<[string, { index: boolean; record: boolean }]>([
    ['the log line alone', { index: false, record: false }],
    ['the log and index lines, not the record', { index: true, record: false }],
    ['everything (killed before its journal file went)', { index: true, record: true }],
  ])('%s written: its session holds it once the next argo looks, and a leftover record copy goes', async (_case, written) => {
    const home = fresh();
    const settings = settingsIn(home);
    const { sessions } = settings.paths;
    const { session } = await recordTurns(settings.paths, 'work', 2, { date: '2025-03-04', start: '2025-03-04T05:00:00.000Z' });
    const before = { index: readFileSync(join(sessions, 'work.idx')), record: readFileSync(join(sessions, 'work.json')) };
    const [third] = (await recordTurns(settings.paths, 'work', 1, { date: '2025-03-04', start: '2025-03-04T05:06:07.000Z' })).entries;
    if (!written.index) writeFileSync(join(sessions, 'work.idx'), before.index);
    if (!written.record) writeFileSync(join(sessions, 'work.json'), before.record);
    writeFileSync(join(sessions, leftover), '{"half": ');
    const id = third?.id ?? '';
    await writeUnfinished(home, { ...unfinished(id), session: { id: session.id, name: 'work' }, entry: draft(id) });

    expect(await recover(settings)).toMatchObject({ recovered: [], alreadyLogged: [id], problems: [] });
    expect(logLines(home).filter((line) => line.id === id)).toHaveLength(1);
    expect(await readSession(sessions, 'work')).toMatchObject({ turns: 3, last_turn_id: id });
    expect(indexIds(sessions, 'work')).toHaveLength(3);
    expect(indexIds(sessions, 'work').at(-1)).toBe(id);
    expect(readdirSync(sessions).sort()).toEqual(['work.idx', 'work.json']);
    expect(journal(home)).toEqual([]);
  });

  it("the first turn of a new session, killed after its record was made and its line logged: the session counts it", async () => {
    const home = fresh();
    const settings = settingsIn(home);
    const { sessions } = settings.paths;
    const { session, entries } = await recordTurns(settings.paths, 'work', 1, { date: '2025-03-04', start: '2025-03-04T05:06:07.000Z' });
    const id = entries[0]?.id ?? '';
    // As openSession left it, before the index line and the record update.
    rmSync(join(sessions, 'work.idx'));
    writeFileSync(join(sessions, 'work.json'), JSON.stringify({ ...session, title: '', turns: 0, last_turn_id: undefined }));
    await writeUnfinished(home, { ...unfinished(id), session: { id: null, name: 'work' }, entry: draft(id) });

    expect(await recover(settings)).toMatchObject({ alreadyLogged: [id], problems: [] });
    expect(await readSession(sessions, 'work')).toMatchObject({ id: session.id, turns: 1, last_turn_id: id });
    expect(indexIds(sessions, 'work')).toEqual([id]);
  });

  it("the session's lock held past the wait (argo serve answering in it): the file goes all the same, and the next reader rebuilds the index", async () => {
    const home = fresh();
    const settings = { ...settingsIn(home), timeouts: { idleMs: 1000, lockWaitMs: 20 } };
    const { sessions } = settings.paths;
    const { session } = await recordTurns(settings.paths, 'work', 1, { date: '2025-03-04', start: '2025-03-04T05:00:00.000Z' });
    const before = { index: readFileSync(join(sessions, 'work.idx')), record: readFileSync(join(sessions, 'work.json')) };
    const [second] = (await recordTurns(settings.paths, 'work', 1, { date: '2025-03-04', start: '2025-03-04T05:06:07.000Z' })).entries;
    writeFileSync(join(sessions, 'work.idx'), before.index);
    writeFileSync(join(sessions, 'work.json'), before.record);
    const id = second?.id ?? '';
    await writeUnfinished(home, { ...unfinished(id), session: { id: session.id, name: 'work' }, entry: draft(id) });
    let release = (): void => undefined;
    const held = withSessionLock(settings.paths.logs, session.id, () => new Promise<void>((resolve) => (release = resolve)));
    try {
      expect(await recover(settings)).toMatchObject({ recovered: [], alreadyLogged: [id], problems: [] });
    } finally {
      release();
      await held;
    }
    expect(journal(home)).toEqual([]);
    const record = defined(await readSession(sessions, 'work'), 'work');
    expect((await loadSessionEntries(settings.paths, record)).map((entry) => entry.id).at(-1)).toBe(id);
    expect(await readSession(sessions, 'work')).toMatchObject({ turns: 2, last_turn_id: id });
  });

  it('the sessions folder cannot be read: the file stays, and what is said knows the turn is in the log', async () => {
    const home = fresh();
    const settings = settingsIn(home);
    const { session, entries } = await recordTurns(settings.paths, 'work', 1, { date: '2025-03-04', start: '2025-03-04T05:06:07.000Z' });
    const id = entries[0]?.id ?? '';
    rmSync(settings.paths.sessions, { recursive: true });
    writeFileSync(settings.paths.sessions, 'not a folder');
    await writeUnfinished(home, { ...unfinished(id), session: { id: session.id, name: 'work' }, entry: draft(id) });
    const found = await recover(settings);
    expect(found).toMatchObject({ alreadyLogged: [], problems: [{ file: join(unfinishedDir(home), `${id}.json`) }] });
    expect(found.problems[0]?.problem).toMatch(/^is in the log, but its session cannot be found to rebuild its index \(/);
    expect(journal(home)).toEqual([`${id}.json`]);
  });

  it('a session removed since: nothing is made again under its name', async () => {
    const home = fresh();
    const settings = settingsIn(home);
    const { session, entries } = await recordTurns(settings.paths, 'work', 1, { date: '2025-03-04', start: '2025-03-04T05:06:07.000Z' });
    const id = entries[0]?.id ?? '';
    rmSync(join(settings.paths.sessions, 'work.idx'));
    rmSync(join(settings.paths.sessions, 'work.json'));
    await writeUnfinished(home, { ...unfinished(id), session: { id: session.id, name: 'work' }, entry: draft(id) });
    expect(await recover(settings)).toMatchObject({ alreadyLogged: [id], problems: [] });
    expect(readdirSync(settings.paths.sessions)).toEqual([]);
  });
});

describe('byAskedAt: the order recovered turns are logged in', () => {
  const turn = (timestamp: string, id: string) => ({ timestamp, id });
  it.each<[string, { timestamp: string; id: string }[], string[]]>([
    ['by instant across zones: 10:00+14:00 (20:00 UTC the day before) comes before 00:30+00:00', [turn('2026-11-26T00:30:00.000+00:00', 'b'), turn('2026-11-26T10:00:00.000+14:00', 'a')], ['a', 'b']],
    ['the same instant, written in two zones: by id', [turn('2026-11-26T11:00:00.000+01:00', 'b'), turn('2026-11-26T10:00:00.000+00:00', 'a')], ['a', 'b']],
    ['an unreadable timestamp goes last', [turn('not a time', 'a'), turn('2026-11-26T10:00:00.000+00:00', 'b')], ['b', 'a']],
    ['unreadable ones among readable: one order whatever the start', [turn('zz', 'x'), turn('2026-11-27T10:00:00.000+00:00', 'c'), turn('aa', 'y'), turn('2026-11-26T10:00:00.000+00:00', 'd')], ['d', 'c', 'y', 'x']],
  ])('%s', (_case, turns, ids) => {
    expect([...turns].sort(byAskedAt).map((t) => t.id)).toEqual(ids);
    expect([...turns].reverse().sort(byAskedAt).map((t) => t.id)).toEqual(ids);
  });
});

describe('recoverOnce', () => {
  it('looks once per data home in a process', async () => {
    const settings = settingsIn(fresh());
    expect(await recoverOnce(settings)).not.toBeNull();
    expect(recoverOnce(settings)).toBeNull();
  });
});

describe('a journal folder that cannot be read', () => {
  it('is one problem, told as the folder (a count of turns in it is not known)', async () => {
    const home = fresh();
    // A link to itself: reading it fails (ELOOP) as reading another user's folder does (EACCES), whoever runs the test.
    symlinkSync('unfinished', unfinishedDir(home));
    const found = await recoverUnfinished(settingsIn(home));
    expect(found.problems).toEqual([{ file: unfinishedDir(home), problem: expect.stringMatching(/^cannot be read \(ELOOP/) as unknown, folder: true }]);
  });
});

describe('recoveryLines', () => {
  const damaged = (count: number): Recovery['problems'] => Array.from({ length: count }, (_, index) => ({ file: `/h/unfinished/f${index}.json`, problem: 'not JSON' }));
  const none: Recovery = { recovered: [], answered: [], alreadyLogged: [], rescued: [], inProgress: [], elsewhere: [], problems: [] };
  it.each<[string, Partial<Recovery>, string[]]>([
    ['nothing found', {}, []],
    ['only turns in progress, others, or logged already: nothing to say', { inProgress: [{ id: 'a', pid: 1 }], elsewhere: [{ id: 'b', host: 'h' }], alreadyLogged: ['c'] }, []],
    ['one logged', { recovered: ['a'] }, ['logged 1 turn an earlier argo left unfinished (killed or crashed): argo logs --status interrupted']],
    ['three logged', { recovered: ['a', 'b', 'c'] }, ['logged 3 turns an earlier argo left unfinished (killed or crashed): argo logs --status interrupted']],
    // A whole answer an argo quit at once before logging is logged as it was: no interrupted turn to point at.
    ['one answered, quit before logging', { answered: ['turn00000001'] }, ['logged 1 turn an earlier argo had answered but quit before it could log (turn00000001): in argo logs as answered']],
    ['one of each', { recovered: ['a'], answered: ['b', 'c'] }, ['logged 1 turn an earlier argo left unfinished (killed or crashed): argo logs --status interrupted', 'logged 2 turns an earlier argo had answered but quit before it could log (b, c): in argo logs as answered']],
    ['one found rescued', { rescued: [{ id: 't1', file: '/h/rescued/unlogged-x.ndjson' }] }, ['turn t1, which an earlier argo could not log before it ended, is saved in /h/rescued/unlogged-x.ndjson: add it back as docs/troubleshooting.md says']],
    ['one damaged', { problems: [{ file: '/h/unfinished/x.json', problem: 'not JSON (…)' }] }, ['1 unfinished turn could not be logged (/h/unfinished/x.json: not JSON (…))']],
    [
      'the folder cannot be read (a data home of another user): no count of turns',
      { problems: [{ file: '/h/unfinished', problem: "cannot be read (EACCES: permission denied, scandir '/h/unfinished')", folder: true }] },
      ["/h/unfinished cannot be read (EACCES: permission denied, scandir '/h/unfinished'), so no turn an earlier argo left unfinished there can be logged; check its permissions (the data home is ARGO_HOME or --home)"],
    ],
    [
      'logged and damaged',
      { recovered: ['a'], problems: [{ file: '/h/unfinished/x.json', problem: 'p' }, { file: '/h/unfinished/y.json', problem: 'q' }] },
      ['logged 1 turn an earlier argo left unfinished (killed or crashed): argo logs --status interrupted', '2 unfinished turns could not be logged (/h/unfinished/x.json: p; argo doctor lists them all)'],
    ],
    // argo doctor lists 20 files one line each; past that, its --json lists them all.
    ['20 damaged', { problems: damaged(20) }, ['20 unfinished turns could not be logged (/h/unfinished/f0.json: not JSON; argo doctor lists them all)']],
    ['21 damaged', { problems: damaged(21) }, ['21 unfinished turns could not be logged (/h/unfinished/f0.json: not JSON; argo doctor --json lists them all)']],
  ])('%s', (_case, found, lines) => {
    expect(recoveryLines({ ...none, ...found })).toEqual(lines);
  });
});
