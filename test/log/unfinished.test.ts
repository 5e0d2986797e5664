import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogEntrySchema } from '../../src/log/entry-schema.js';
import type { LogEntry } from '../../src/log/entry.js';
import { SymlinkRefusedError, processState } from '../../src/log/fs.js';
import {
  bootId,
  machineId,
  processStartTime,
  checkUnfinished,
  claimUnfinished,
  ownerState,
  pidNamespace,
  readJournalName,
  readUnfinished,
  removeUnfinished,
  unfinishedDir,
  writeUnfinished,
} from '../../src/log/unfinished.js';
import type { OwnerState, TurnOwner, UnfinishedTurn } from '../../src/log/unfinished.js';
import { makeDraft } from '../query/helpers.js';

const HERE: TurnOwner = { pid: 100, host: 'box', boot: 'aaaa-1111' };
const M1 = '11111111111111111111111111111111';
const M2 = '22222222222222222222222222222222';

/** A kill(pid, 0) that answers as the system would: nothing (it runs) or an errno. */
const answering =
  (code: 'ESRCH' | 'EPERM' | null) =>
  (): void => {
    if (code !== null) throw Object.assign(new Error(code), { code });
  };

describe('ownerState: whether the argo that wrote a journal file may still log its turn', () => {
  // Owners without machine or start are the files of earlier versions (and systems without them).
  it.each<[string, TurnOwner, 'ESRCH' | 'EPERM' | null, OwnerState]>([
    ['same host and boot, the pid runs', { pid: 200, host: 'box', boot: 'aaaa-1111' }, null, 'alive'],
    ['same host and boot, no such pid', { pid: 200, host: 'box', boot: 'aaaa-1111' }, 'ESRCH', 'dead'],
    ["same host and boot, another user's process has the pid", { pid: 200, host: 'box', boot: 'aaaa-1111' }, 'EPERM', 'alive'],
    ['same host, another boot: gone, whatever runs under its pid now', { pid: 200, host: 'box', boot: 'bbbb-2222' }, null, 'dead'],
    ['another host, its pid unknown here', { pid: 200, host: 'other', boot: 'aaaa-1111' }, 'ESRCH', 'elsewhere'],
    ['another host, a pid that runs here means nothing', { pid: 200, host: 'other', boot: 'bbbb-2222' }, null, 'elsewhere'],
    ['no boot id on its side: the pid is asked', { pid: 200, host: 'box', boot: null }, 'ESRCH', 'dead'],
    ['no boot id on its side, the pid runs', { pid: 200, host: 'box', boot: null }, null, 'alive'],
    ['this very process', { pid: 100, host: 'box', boot: 'aaaa-1111' }, 'ESRCH', 'alive'],
  ])('%s → %s', (_case, owner, answer, state) => {
    expect(ownerState(owner, HERE, { kill: answering(answer) })).toBe(state);
  });

  // Where /proc tells: a zombie (killed, not yet reaped by its parent) still answers signal 0, but writes nothing more.
  it.each<[string, 'ESRCH' | 'EPERM' | null, string | null, OwnerState]>([
    ['its pid runs, a zombie', null, 'Z', 'dead'],
    ["another user's process, a zombie", 'EPERM', 'Z', 'dead'],
    ['its pid runs, asleep', null, 'S', 'alive'],
    ['its pid runs, no /proc to ask (not Linux)', null, null, 'alive'],
  ])('%s (signal 0: %s, state %s) → %s', (_case, answer, procState, state) => {
    expect(ownerState({ pid: 200, host: 'box', boot: 'aaaa-1111' }, HERE, { kill: answering(answer), state: () => procState })).toBe(state);
  });

  it('without a boot id here, only the pid tells', () => {
    expect(ownerState({ pid: 200, host: 'box', boot: 'bbbb-2222' }, { ...HERE, boot: null }, { kill: answering(null) })).toBe('alive');
    expect(ownerState({ pid: 200, host: 'box', boot: 'bbbb-2222' }, { ...HERE, boot: null }, { kill: answering('ESRCH') })).toBe('dead');
  });

  // Two machines may share a host name (ubuntu, raspberrypi) and a data home: their pids and boots say nothing of each other.
  it.each<[string, Partial<TurnOwner>, Partial<TurnOwner>, OwnerState]>([
    ['same host name, another machine id, another boot: left to that machine', { machine: M2, boot: 'bbbb-2222' }, { machine: M1 }, 'elsewhere'],
    ['same host name, another machine id, its pid gone here: left to that machine', { machine: M2 }, { machine: M1 }, 'elsewhere'],
    ['same machine id, another boot: gone', { machine: M1, boot: 'bbbb-2222' }, { machine: M1 }, 'dead'],
    ['same machine id, its pid gone: gone', { machine: M1 }, { machine: M1 }, 'dead'],
    ['no machine id on its side (an earlier version): by host name, as before', { boot: 'bbbb-2222' }, { machine: M1 }, 'dead'],
    ['no machine id here: by host name', { machine: M2, boot: 'bbbb-2222' }, { machine: null }, 'dead'],
    ['same machine id, another host name: left to it (a copied image, a container)', { machine: M1, host: 'other' }, { machine: M1 }, 'elsewhere'],
  ])('%s', (_case, owner, here, state) => {
    expect(ownerState({ pid: 200, host: 'box', boot: 'aaaa-1111', ...owner }, { ...HERE, ...here }, { kill: answering('ESRCH') })).toBe(state);
  });

  // Containers on one kernel share its boot (and with --network host its host name), and each may run argo as pid 1.
  it.each<[string, Partial<TurnOwner>, Partial<TurnOwner>, OwnerState]>([
    ['another pid namespace, same pid, another start: left to that container', { pid: 100, start: 5, pidns: 'pid:[4026532001]' }, { pidns: 'pid:[4026531836]' }, 'elsewhere'],
    ['another pid namespace, its pid gone here: left to that container', { pidns: 'pid:[4026532001]' }, { pidns: 'pid:[4026531836]' }, 'elsewhere'],
    ['another pid namespace, another boot: gone', { pidns: 'pid:[4026532001]', boot: 'bbbb-2222' }, { pidns: 'pid:[4026531836]' }, 'dead'],
    ['the same pid namespace: the pid tells', { pidns: 'pid:[4026531836]' }, { pidns: 'pid:[4026531836]' }, 'dead'],
    // A clone of a running machine (a VM restored from a snapshot) shares its boot id and its init pid
    // namespace: only the host name tells them apart, so another one is left alone.
    ['another host name, same boot and pid namespace: left to that host', { host: 'clone', pidns: 'pid:[4026531836]' }, { pidns: 'pid:[4026531836]' }, 'elsewhere'],
    ['no namespace on its side (an earlier version): the pid tells, as before', {}, { pidns: 'pid:[4026531836]' }, 'dead'],
  ])('%s', (_case, owner, here, state) => {
    expect(ownerState({ pid: 200, host: 'box', boot: 'aaaa-1111', ...owner }, { ...HERE, ...here }, { kill: answering('ESRCH') })).toBe(state);
  });

  it.each([
    ['pid:[4026531836]', 'pid:[4026531836]'],
    ['mnt:[4026531840]', null],
    ['garbage', null],
  ])('pidNamespace reads %j as %j', (link, expected) => {
    expect(pidNamespace(() => link)).toBe(expected);
  });

  it('pidNamespace is null where there is no /proc', () => {
    expect(
      pidNamespace(() => {
        throw new Error('ENOENT');
      }),
    ).toBeNull();
  });

  // Where /proc tells when a process started, a pid that runs but started at another time is another process's.
  it.each<[string, Partial<TurnOwner>, number | null, OwnerState]>([
    ['its pid runs, started when it did', { start: 700 }, 700, 'alive'],
    ['its pid runs, started later: reused by another process', { start: 700 }, 900, 'dead'],
    ["its pid runs, its start unreadable (another user's, hidepid)", { start: 700 }, null, 'alive'],
    ['no start time on its side (no /proc, an earlier version): the pid tells', {}, 900, 'alive'],
    ['this very pid, but an earlier process of it', { pid: 100, start: 400 }, null, 'dead'],
    ['this very process', { pid: 100, start: 500 }, null, 'alive'],
  ])('%s → %s', (_case, owner, startNow, state) => {
    const probe = { kill: answering(null), startTime: () => startNow };
    expect(ownerState({ pid: 200, host: 'box', boot: 'aaaa-1111', ...owner }, { ...HERE, start: 500 }, probe)).toBe(state);
  });
});

describe('machineId', () => {
  const files =
    (contents: Record<string, string>) =>
    (path: string): string => {
      const text = contents[path];
      if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return text;
    };
  it.each<[string, Record<string, string>, string | null]>([
    ["systemd's file, without its line break", { '/etc/machine-id': `${M1}\n`, '/var/lib/dbus/machine-id': `${M2}\n` }, M1],
    ["only D-Bus's", { '/var/lib/dbus/machine-id': `${M2}\n` }, M2],
    ['an image not yet booted (empty, or "uninitialized"): the next one', { '/etc/machine-id': 'uninitialized\n', '/var/lib/dbus/machine-id': `${M2}\n` }, M2],
    ['empty, and nothing else', { '/etc/machine-id': '' }, null],
    ['none (not Linux)', {}, null],
  ])('%s → %j', (_case, contents, id) => {
    expect(machineId(files(contents))).toBe(id);
  });
});

describe('processState: field 3 of /proc/<pid>/stat', () => {
  it.each<[string, string | null]>([
    ['4242 (argo) Z 1 4242 4242 0 -1 4194564', 'Z'],
    ['4242 (node) S 1 4242 4242 0 -1 4194560', 'S'],
    // The name may hold spaces and parentheses: the state follows the last ")".
    ['4242 (a) Z (b) R 1 4242', 'R'],
    ['garbage', null],
  ])('%j → %j', (stat, state) => {
    expect(processState(4242, () => stat)).toBe(state);
  });

  it('is null where there is no such process (or no /proc)', () => {
    expect(processState(4242, () => { throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' }); })).toBeNull();
  });

  it("reads this process's own as running", () => {
    expect(['R', 'S', null]).toContain(processState(process.pid));
  });
});

describe('processStartTime: field 22 of /proc/<pid>/stat', () => {
  const tail = 'S 1 4242 4242 0 -1 4194560 2000 0 0 0 12 3 0 0 20 0 11 0 4708886 1189044224 12000 18446744073709551615';
  it.each<[string, string, number | null]>([
    ['a plain name', `4242 (node) ${tail}`, 4708886],
    ['a name with spaces and parentheses', `4242 (my (odd) name) x) ${tail}`, 4708886],
    ['cut short', '4242 (node) S 1 4242', null],
    ['no name', `4242 node ${tail}`, null],
    ['not a number where the start goes', `4242 (node) ${tail.replace('4708886', 'x')}`, null],
  ])('%s → %j', (_case, stat, start) => {
    expect(processStartTime(4242, () => stat)).toBe(start);
  });

  it('none for a process that is not there, or without /proc', () => {
    expect(processStartTime(4242, () => { throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' }); })).toBeNull();
  });

  it.runIf(process.platform === 'linux')('this process: the same at every read, and no later than a child started now', async () => {
    const { spawn } = await import('node:child_process');
    const mine = processStartTime(process.pid);
    expect(mine).toEqual(expect.any(Number));
    expect(processStartTime(process.pid)).toBe(mine);
    // Alive until its input closes (killed below): no timer to outlive the test.
    const child = spawn(process.execPath, ['-e', 'process.stdin.resume()'], { stdio: ['pipe', 'ignore', 'ignore'] });
    try {
      expect(processStartTime(child.pid ?? 0)).toBeGreaterThanOrEqual(mine ?? Infinity);
    } finally {
      child.kill();
    }
  });
});

describe('bootId', () => {
  it.each<[string, () => string, string | null]>([
    ['Linux: the id, without its line break', () => '6f1e0b7c-3f7a-4d7e-9a51-0c0e0f1e2d3c\n', '6f1e0b7c-3f7a-4d7e-9a51-0c0e0f1e2d3c'],
    ['no such file (not Linux)', () => { throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' }); }, null],
    ['something that is no boot id', () => 'hello world\n', null],
    ['empty', () => '', null],
  ])('%s → %j', (_case, read, id) => {
    expect(bootId(read)).toBe(id);
  });
});

describe('readJournalName', () => {
  it.each([
    ['abcDEF012_-x.json', { id: 'abcDEF012_-x', claim: null }],
    ['-starts-dash.json', { id: '-starts-dash', claim: null }],
    ['abc.json.claimed-4242-6f1e0b7c-3f7a', { id: 'abc', claim: { pid: 4242, boot: '6f1e0b7c-3f7a', start: null, pidns: null } }],
    ['abc.json.claimed-4242-unknown', { id: 'abc', claim: { pid: 4242, boot: null, start: null, pidns: null } }],
    ['abc.json.claimed-4242-6f1e0b7c-3f7a-t4708886', { id: 'abc', claim: { pid: 4242, boot: '6f1e0b7c-3f7a', start: 4708886, pidns: null } }],
    ['abc.json.claimed-4242-unknown-t12', { id: 'abc', claim: { pid: 4242, boot: null, start: 12, pidns: null } }],
    ['abc.json.claimed-1-6f1e0b7c-3f7a-t4708886-n4026532001', { id: 'abc', claim: { pid: 1, boot: '6f1e0b7c-3f7a', start: 4708886, pidns: 'pid:[4026532001]' } }],
    ['abc.json.claimed-1-unknown-n4026532001', { id: 'abc', claim: { pid: 1, boot: null, start: null, pidns: 'pid:[4026532001]' } }],
    ['abc.json.claimed-4242-unknown-t', null],
    ['abc.json.claimed-4242-unknown-n', null],
    ['abc.json.claimed-4242-unknown-n1-t2', null],
    ['.abc.json.4242-0a1b2c3d.tmp', null],
    ['abc.txt', null],
    ['a b.json', null],
    ['abc.json.claimed-x-unknown', null],
  ])('%s → %j', (name, read) => {
    expect(readJournalName(name)).toEqual(read);
  });
});

const entry = (id: string): LogEntry => makeDraft(id, { user_prompt: 'What is a closure? \u{1F600}' });

const turn = (id: string, owner: TurnOwner = HERE): UnfinishedTurn => ({ owner, day: '2025-03-04', session: { id: null, name: 'work' }, rules: 'r1', entry: entry(id) });
const home = (): string => mkdtempSync(join(tmpdir(), 'argo-unfinished-'));

describe('the journal files', () => {
  it('one private file per turn, in a private folder, read back as written; the draft is a log line', async () => {
    const dir = home();
    await writeUnfinished(dir, turn('turn00000001'));
    const path = join(unfinishedDir(dir), 'turn00000001.json');
    expect(statSync(unfinishedDir(dir)).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(unfinishedDir(dir))).toEqual(['turn00000001.json']);
    const read = readUnfinished(dir, 'turn00000001.json');
    expect(read).toEqual({ owner: HERE, value: turn('turn00000001') });
    expect(await checkUnfinished(read !== null && 'value' in read ? read.value : null)).toEqual({ turn: turn('turn00000001') });
    expect(LogEntrySchema.safeParse((JSON.parse(readFileSync(path, 'utf8')) as UnfinishedTurn).entry).success).toBe(true);
    await removeUnfinished(dir, 'turn00000001');
    expect(readdirSync(unfinishedDir(dir))).toEqual([]);
  });

  it("an owner's machine id and start time are kept; a file of an earlier version, without them, still reads and checks", async () => {
    const dir = home();
    const owner: TurnOwner = { ...HERE, machine: M1, start: 4708886 };
    await writeUnfinished(dir, turn('new', owner));
    expect(readUnfinished(dir, 'new.json')).toMatchObject({ owner });
    mkdirSync(unfinishedDir(dir), { recursive: true });
    writeFileSync(join(unfinishedDir(dir), 'old.json'), JSON.stringify(turn('old', { pid: 100, host: 'box', boot: null })));
    const read = readUnfinished(dir, 'old.json');
    expect(read).toMatchObject({ owner: { pid: 100, host: 'box', boot: null } });
    expect(await checkUnfinished(read !== null && 'value' in read ? read.value : null)).toEqual({ turn: turn('old', { pid: 100, host: 'box', boot: null }) });
  });

  it('a second file for the same id is refused; an id that cannot name a file is refused', async () => {
    const dir = home();
    await writeUnfinished(dir, turn('same'));
    await expect(writeUnfinished(dir, turn('same'))).rejects.toThrow(/already exists/);
    await expect(writeUnfinished(dir, turn('../escape'))).rejects.toThrow(/cannot name a file/);
  });

  it('a link where the folder goes is refused, not written through', async () => {
    const dir = home();
    const elsewhere = mkdtempSync(join(tmpdir(), 'argo-elsewhere-'));
    symlinkSync(elsewhere, unfinishedDir(dir));
    expect(await writeUnfinished(dir, turn('t1')).catch((error: unknown) => error)).toBeInstanceOf(SymlinkRefusedError);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  /** What is wrong with the file: its owner, read first, or the rest, checked before it is logged. */
  async function problemOf(dir: string, name: string): Promise<string | null> {
    const read = readUnfinished(dir, name);
    if (read === null || 'problem' in read) return read?.problem ?? null;
    const checked = await checkUnfinished(read.value);
    return 'problem' in checked ? checked.problem : null;
  }

  it.each<[string, (path: string) => void, RegExp]>([
    ['cut short', (path) => writeFileSync(path, '{"owner":{"pid":1'), /^not JSON/],
    // Where the text stops being JSON, never the text itself (a prompt's secret with it), on one line.
    ['a CR in text that is not JSON', (path) => writeFileSync(path, 'x\r'), /^not JSON at line 1, column 1: expected a value \(text goes in "double quotes"\)$/],
    ['a prompt cut short', (path) => writeFileSync(path, '{"owner":{"pid":1},"entry":{"user_prompt":"GITHUB_TOKEN=ghp_'), /^not JSON at line 1, column 61: expected the closing " of a string, found the end of the file$/],
    ['no owner', (path) => writeFileSync(path, '{"owner":{"pid":-1,"host":"box","boot":null}}'), /^not a journal file \(field "owner"/],
    ['a machine id that is no text', (path) => writeFileSync(path, '{"owner":{"pid":1,"host":"box","boot":null,"machine":5}}'), /^not a journal file \(field "owner"/],
    ['a start time before boot', (path) => writeFileSync(path, '{"owner":{"pid":1,"host":"box","boot":null,"start":-1}}'), /^not a journal file \(field "owner"/],
    ['not a journal file', (path) => writeFileSync(path, '{"owner":{"pid":1,"host":"box","boot":null}}'), /^not a journal file \(field "day"/],
    ['a draft that is no log line', (path) => writeFileSync(path, JSON.stringify({ ...turn('t1'), entry: { ...entry('t1'), timings: null } })), /^not a journal file \(field "entry.timings"/],
    ['a status no version writes', (path) => writeFileSync(path, JSON.stringify({ ...turn('t1'), entry: { ...entry('t1'), status: 'weird' } })), /^not a journal file \(field "entry.status"/],
    // The field is quoted as JSON, so a key with a newline keeps the problem on one line.
    ['an option of a wrong type under a key with a newline', (path) => writeFileSync(path, JSON.stringify({ ...turn('t1'), entry: { ...entry('t1'), options: { 'a\nb': 'x' } } })), /^not a journal file \(field "entry\.options\.a\\nb": [^\n]*\)$/],
    ['a link', (path) => symlinkSync('/etc/hostname', path), /symbolic link/],
    ['a folder', (path) => mkdirSync(path), /^unreadable/],
  ])('a damaged file (%s) says what is wrong with it', async (_case, make, problem) => {
    const dir = home();
    mkdirSync(unfinishedDir(dir), { mode: 0o700 });
    make(join(unfinishedDir(dir), 't1.json'));
    expect(await problemOf(dir, 't1.json')).toMatch(problem);
  });

  it('a file gone meanwhile (another argo logged it) is null, not damaged', () => {
    const dir = home();
    expect(readUnfinished(dir, 'gone.json')).toBeNull();
  });
});

describe('claimUnfinished: of two recoverers, one takes the file', () => {
  it('two claims at once: one gets a name of its own, the other null', async () => {
    const dir = home();
    await writeUnfinished(dir, turn('t1'));
    const claims = await Promise.all([
      claimUnfinished(dir, 't1.json', 't1', { pid: 300, host: 'box', boot: 'aaaa-1111' }),
      claimUnfinished(dir, 't1.json', 't1', { pid: 301, host: 'box', boot: 'aaaa-1111' }),
    ]);
    const won = claims.filter((claim) => claim !== null);
    expect(won).toHaveLength(1);
    expect(['t1.json.claimed-300-aaaa-1111', 't1.json.claimed-301-aaaa-1111']).toContain(won[0]);
    expect(readdirSync(unfinishedDir(dir))).toEqual(won);
    expect(existsSync(join(unfinishedDir(dir), 't1.json'))).toBe(false);
  });

  it('the claimed name reads back as the turn and its claimer', async () => {
    const dir = home();
    await writeUnfinished(dir, turn('t1'));
    const claimed = await claimUnfinished(dir, 't1.json', 't1', { pid: 300, host: 'box', boot: null });
    expect(readJournalName(claimed ?? '')).toEqual({ id: 't1', claim: { pid: 300, boot: null, start: null, pidns: null } });
    const again = await claimUnfinished(dir, claimed ?? '', 't1', { pid: 301, host: 'box', boot: 'aaaa-1111', start: 4708886, pidns: 'pid:[4026531836]' });
    expect(readJournalName(again ?? '')).toEqual({ id: 't1', claim: { pid: 301, boot: 'aaaa-1111', start: 4708886, pidns: 'pid:[4026531836]' } });
  });
});
