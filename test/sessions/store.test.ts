import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DamagedRecord, SessionLookup, byLastUsed, deleteSession, inspectSession, openSession, readSession, saidOfRecord, saveSession, scanSessions, sessionNames, shownRecord } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';

describe('openSession', () => {
  it('many concurrent first uses agree on one complete record, and no reader sees half of it', async () => {
    for (let round = 0; round < 5; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
      const opens = Array.from({ length: 40 }, (_, i) => openSession(dir, 'race', `2026-01-0${(i % 9) + 1}T00:00:00Z`));
      const reads = Array.from({ length: 40 }, () => readSession(dir, 'race'));
      // Reads that start once one creator is done, while the others may still be at work: each must find the record.
      const lateReads = opens[0]?.then(() => Promise.all(Array.from({ length: 40 }, () => readSession(dir, 'race'))));
      const [records, seen, late] = await Promise.all([Promise.all(opens), Promise.all(reads), lateReads]);
      expect(new Set(records.map((record) => record.id)).size).toBe(1);
      // A read racing the creation finds nothing or the whole record (half a file would have thrown).
      for (const record of seen) expect([null, records[0]]).toContainEqual(record);
      expect(late).toEqual(Array.from({ length: 40 }, () => records[0]));
      expect((JSON.parse(readFileSync(join(dir, 'race.json'), 'utf8')) as { id: string }).id).toBe(records[0]?.id);
      expect(readdirSync(dir)).toEqual(['race.json']);
    }
  });
});

describe('a record that cannot be read', () => {
  it('says which session, why, and what to do: a folder where the file goes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    mkdirSync(join(dir, 'work.json'));
    await expect(readSession(dir, 'work')).rejects.toThrow(`cannot read session "work": ${join(dir, 'work.json')} is not a file (a folder); move it out of the way`);
  });

  it('a link says its own fix, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    symlinkSync(join(dir, 'elsewhere.json'), join(dir, 'work.json'));
    await expect(readSession(dir, 'work')).rejects.toThrow(/is a symbolic link; Argo does not follow links in its data home \(remove the link and try again\)$/);
  });
});

describe('the session record codec', () => {
  const good = { name: 'work', id: '7f1c2d9e-1111-4222-8333-444455556666', title: 't', turns: 1, created_at: 'x', last_used_at: 'x', last_model: null };

  it.each([
    ['title', 5, /field "title"/],
    ['turns', 'many', /field "turns"/],
    ['last_model', 7, /field "last_model"/],
    ['parent', { session_id: 1, name: 'p', turn_id: 't' }, /field "parent\.session_id"/],
  ])('a record with a wrong %s is refused where it is read, naming the file and the field', async (field, value, problem) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    writeFileSync(join(dir, 'work.json'), JSON.stringify({ ...good, [field]: value }));
    await expect(readSession(dir, 'work')).rejects.toThrow(problem);
    await expect(readSession(dir, 'work')).rejects.toThrow(join(dir, 'work.json'));
    const found = await inspectSession(dir, 'work');
    expect(found instanceof DamagedRecord && found.problem).toMatch(problem);
  });

  it('a record others may write is refused in its own words, with no second fix after them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'work.json'), JSON.stringify(good));
    chmodSync(join(dir, 'work.json'), 0o666);
    const refused = await inspectSession(dir, 'work').then(() => null, (error: unknown) => error);
    expect((refused as Error).message).toBe(
      `cannot read session "work": ${join(dir, 'work.json')} can be written by other users (mode 666), and Argo reads only files others cannot change in its data home (they decide what it sends and runs): run "chmod go-w ${join(dir, 'work.json')}"`,
    );
  });

  it('keeps fields a newer version wrote when it saves the record again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    writeFileSync(join(dir, 'work.json'), JSON.stringify({ ...good, pinned: true }));
    const record = await readSession(dir, 'work');
    expect(record).toMatchObject({ ...good, pinned: true });
    await saveSession(dir, { ...good, ...record, title: 'renamed' });
    expect(JSON.parse(readFileSync(join(dir, 'work.json'), 'utf8'))).toMatchObject({ title: 'renamed', pinned: true });
  });

  it('never writes through a symlink where a record belongs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    const outside = join(mkdtempSync(join(tmpdir(), 'argo-outside-')), 'target.json');
    writeFileSync(outside, 'precious');
    symlinkSync(outside, join(dir, 'work.json'));
    await expect(saveSession(dir, good)).rejects.toThrow(/symbolic link/);
    expect(readFileSync(outside, 'utf8')).toBe('precious');
  });

  it('never reads a record through a symlink either (a planted record would steer replay)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-store-'));
    const outside = join(mkdtempSync(join(tmpdir(), 'argo-outside-')), 'target.json');
    writeFileSync(outside, JSON.stringify(good));
    symlinkSync(outside, join(dir, 'work.json'));
    await expect(readSession(dir, 'work')).rejects.toThrow(/work\.json is a symbolic link/);
  });
});

describe('byLastUsed', () => {
  const record = (name: string, lastUsed: string): SessionRecord => ({ name, id: name, title: '', turns: 1, created_at: lastUsed, last_used_at: lastUsed, last_model: null });

  it.each<[string, SessionRecord[], string[]]>([
    ['by instant, not by text: 22:35+09:00 is 13:35 UTC, before 13:36+00:00', [record('tokyo', '2026-11-26T22:35:00.000+09:00'), record('utc', '2026-11-26T13:36:00.000+00:00')], ['utc', 'tokyo']],
    ['across a daylight-saving change', [record('summer', '2026-10-25T02:30:00.000+02:00'), record('winter', '2026-10-25T02:10:00.000+01:00')], ['winter', 'summer']],
    ['the same instant: by name', [record('b', '2026-11-26T10:00:00.000+00:00'), record('a', '2026-11-26T11:00:00.000+01:00')], ['a', 'b']],
    // localeCompare would put "ia" first in English and "Ib" first in Turkish: which session `argo -c` continues must not depend on LANG.
    ['the same instant: by code unit, not by locale', [record('ia', '2026-11-26T10:00:00.000+00:00'), record('Ib', '2026-11-26T10:00:00.000+00:00')], ['Ib', 'ia']],
    ['an unreadable time last', [record('odd', 'yesterday'), record('ok', '2020-01-01T00:00:00.000+00:00')], ['ok', 'odd']],
  ])('%s', (_, records, names) => {
    expect([...records].sort(byLastUsed).map((r) => r.name)).toEqual(names);
  });
});

describe('a record found under another name', () => {
  it('is damaged, naming both: a copy of evil.json as mis.json is not a second session "evil"', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-misnamed-'));
    const record = await openSession(dir, 'evil', '2026-11-26T10:00:00.000+00:00');
    writeFileSync(join(dir, 'mis.json'), JSON.stringify(record));
    const found = await inspectSession(dir, 'mis');
    expect(found).toBeInstanceOf(DamagedRecord);
    expect(found instanceof DamagedRecord ? found.problem : '').toBe('a record whose "name" ("evil") is not its file\'s');
    await expect(readSession(dir, 'mis')).rejects.toThrow(/session file .*mis\.json is a record whose "name" \("evil"\) is not its file's; fix it or remove it with "argo sessions rm mis"/);
    expect(await readSession(dir, 'evil')).toEqual(record);
  });
});

describe('a record whose name differs from the asked one only in case', () => {
  // On a file system that ignores case (macOS, Windows) "Work.json" opens "work.json"; a hard link stands in for that here.
  it('is refused as the same file, never called damaged (which would have `sessions rm Work` delete session "work")', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-case-'));
    const record = await openSession(dir, 'work', '2026-11-26T10:00:00.000+00:00');
    linkSync(join(dir, 'work.json'), join(dir, 'Work.json'));
    const sameFile = /^session "Work" and session "work" are the same file here \(this file system ignores case\); use "work" or a name that differs in more than case$/;
    await expect(inspectSession(dir, 'Work')).rejects.toThrow(sameFile);
    await expect(readSession(dir, 'Work')).rejects.toThrow(sameFile);
    await expect(openSession(dir, 'Work', '2026-11-26T11:00:00.000+00:00')).rejects.toThrow(sameFile);
    expect(await readSession(dir, 'work')).toEqual(record);
  });

  it('where the file system keeps case, a copy made by hand under another case is damaged, as any misnamed copy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-case-'));
    const record = await openSession(dir, 'work', '2026-11-26T10:00:00.000+00:00');
    writeFileSync(join(dir, 'Work.json'), readFileSync(join(dir, 'work.json')));
    const found = await inspectSession(dir, 'Work');
    expect(found).toBeInstanceOf(DamagedRecord);
    expect(found instanceof DamagedRecord ? found.problem : '').toBe('a record whose "name" ("work") is not its file\'s');
    expect(await readSession(dir, 'work')).toEqual(record);
  });
});

describe('sessionNames', () => {
  // Each row makes what it names in an empty sessions folder.
  it.each<[string, (dir: string) => void, string[]]>([
    ['records, as their files sort', (dir) => ['work', 'Notes', 'a.b', '_x', 'a', 'a-2'].forEach((name) => writeFileSync(join(dir, `${name}.json`), '{}')), ['Notes', '_x', 'a-2', 'a.b', 'a', 'work']],
    ['a damaged record is still a name', (dir) => writeFileSync(join(dir, 'broken.json'), 'not json'), ['broken']],
    ['an index without a record is not', (dir) => writeFileSync(join(dir, 'orphan.idx'), ''), []],
    ['hidden and invalid names are not', (dir) => ['.hidden', 'two words', 'x'.repeat(65)].forEach((name) => writeFileSync(join(dir, `${name}.json`), '{}')), []],
    ['a folder named like a record is not', (dir) => mkdirSync(join(dir, 'folder.json')), []],
    ['a record being written (its temporary file) is not', (dir) => writeFileSync(join(dir, '.work.json.123-0a1b2c3d.tmp'), '{}'), []],
  ])('%s', async (_name, make, expected) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-names-'));
    make(dir);
    expect(await sessionNames(dir)).toEqual(expected);
  });

  it('no folder: no names', async () => {
    expect(await sessionNames(join(mkdtempSync(join(tmpdir(), 'argo-names-')), 'sessions'))).toEqual([]);
  });
});

describe('SessionLookup', () => {
  const record = (name: string, id: string, parent?: SessionRecord['parent']): SessionRecord => ({
    name,
    id,
    title: '',
    turns: 1,
    created_at: '2025-01-02T10:00:00.000Z',
    last_used_at: '2025-01-02T10:00:00.000Z',
    last_model: null,
    ...(parent ? { parent } : {}),
  });
  // work (id w); notes, renamed from "old-notes" (id n); "reused" now names id r2, its first session (r1) removed;
  // a fork whose link still names its parent by the name it had before a rename (an older Argo's).
  const dir = mkdtempSync(join(tmpdir(), 'argo-lookup-'));
  const saved = [
    record('work', 'w'),
    record('notes', 'n'),
    record('reused', 'r2'),
    record('fork', 'f', { session_id: 'n', name: 'old-notes', turn_id: 't1' }),
    record('orphan', 'o', { session_id: 'r1', name: 'reused', turn_id: 't2' }),
    record('child', 'c', { session_id: 'w', name: 'work', turn_id: 't3' }),
  ];
  beforeAll(async () => {
    for (const one of saved) await saveSession(dir, one);
    writeFileSync(join(dir, 'broken.json'), 'not json');
  });

  it.each<[string, string, string, string | undefined]>([
    ['logged under its current name', 'w', 'work', 'work'],
    ['renamed since', 'n', 'old-notes', 'notes'],
    ['removed, its name taken by another session', 'r1', 'reused', undefined],
    ['a damaged record’s name', 'x', 'broken', undefined],
    ['an invalid logged name', 'n', 'not a name!', 'notes'],
  ])('learn: %s', async (_name, id, logged, expected) => {
    const lookup = new SessionLookup(dir);
    await lookup.learn(id, logged);
    expect(lookup.nameOf(id)).toBe(expected);
  });

  it.each<[string, string | null]>([
    ['work', 'w'],
    ['broken', null],
    ['nobody', null],
    ['../work', null],
  ])('byName(%j) → id %j', async (name, id) => {
    expect((await new SessionLookup(dir).byName(name))?.id ?? null).toBe(id);
  });

  it.each(['work', 'fork', 'orphan', 'child'])('shown(%s) is what shownRecord makes of every record', async (name) => {
    const one = saved.find((each) => each.name === name);
    if (one === undefined) throw new Error(name);
    expect(await new SessionLookup(dir).shown(one)).toEqual(shownRecord(one, saved));
  });
});

describe('SessionLookup.relearn: names as they are now, while sessions change (argo logs -f)', () => {
  const record = (name: string, id: string): SessionRecord => ({ name, id, title: '', turns: 1, created_at: '', last_used_at: '', last_model: null });
  const rename = async (dir: string, from: string, to: string, id: string): Promise<void> => {
    await saveSession(dir, record(to, id));
    await deleteSession(dir, from);
  };
  type Step = (dir: string) => Promise<void>;
  // Before: what exists when the lookup first reads every record; then: what changes; the row's id and logged name; the name expected before and after.
  it.each<[string, Step, Step, string, string, string | undefined, string | undefined]>([
    ['a session created after every record was read', () => Promise.resolve(), (dir) => saveSession(dir, record('nightly', 'n1')), 'n1', 'nightly', undefined, 'nightly'],
    ['a session renamed', (dir) => saveSession(dir, record('alpha', 'a1')), (dir) => rename(dir, 'alpha', 'beta', 'a1'), 'a1', 'beta', 'alpha', 'beta'],
    [
      'a session renamed, its old name taken by a new one',
      (dir) => saveSession(dir, record('alpha', 'a1')),
      async (dir) => {
        await rename(dir, 'alpha', 'beta', 'a1');
        await saveSession(dir, record('alpha', 'a2'));
      },
      'a1',
      'alpha',
      'alpha',
      'beta',
    ],
    ['a session removed', (dir) => saveSession(dir, record('gone', 'g1')), (dir) => deleteSession(dir, 'gone'), 'g1', 'gone', 'gone', undefined],
    ['nothing changed', (dir) => saveSession(dir, record('same', 's1')), () => Promise.resolve(), 's1', 'same', 'same', 'same'],
  ])('%s', async (_name, before, then, id, logged, first, after) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-relearn-'));
    await before(dir);
    const lookup = new SessionLookup(dir);
    // As buildQuery does for -s: every record read before the first row.
    await lookup.all();
    await lookup.relearn(id, logged);
    expect(lookup.nameOf(id)).toBe(first);
    await then(dir);
    await lookup.relearn(id, logged);
    expect(lookup.nameOf(id)).toBe(after);
    // learn alone keeps what it learned: a listing reads records once.
    const once = new SessionLookup(dir);
    await once.learn(id, logged);
    expect(once.nameOf(id)).toBe(after);
  });
});

describe('scanSessions', () => {
  const write = (dir: string, name: string): void => writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ name, id: `id-${name}`, title: '', turns: 0, created_at: '', last_used_at: '', last_model: null })}\n`);
  it.each<[string, (dir: string) => void, boolean, string[], string[]]>([
    ['records in file order', (dir) => ['b', 'a-2', 'a'].forEach((name) => write(dir, name)), false, ['a-2', 'a', 'b'], []],
    ['a damaged record apart', (dir) => writeFileSync(join(dir, 'broken.json'), '{'), false, [], ['broken']],
    ['a link to a record is not read', (dir) => {
      write(dir, 'real');
      symlinkSync(join(dir, 'real.json'), join(dir, 'alias.json'));
    }, false, ['real'], []],
    ['a hidden record, only for every file', (dir) => writeFileSync(join(dir, '.x.json'), `${JSON.stringify({ name: 'other', id: 'h', title: '', turns: 0, created_at: '', last_used_at: '', last_model: null })}\n`), true, ['other'], []],
    ['a hidden record, left out otherwise', (dir) => write(dir, '.x'), false, [], []],
    ['a folder named like a record', (dir) => mkdirSync(join(dir, 'folder.json')), false, [], []],
  ])('%s', async (_name, make, everyFile, records, damaged) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-scan-'));
    make(dir);
    const found = await scanSessions(dir, { everyFile });
    expect({ records: found.records.map((record) => record.name), damaged: found.damaged.map((record) => record.name) }).toEqual({ records, damaged });
  });
});

describe('saidOfRecord: a failed write of a record names the record, not the temporary file written first', () => {
  const path = '/h/sessions/g.json';
  it.each<[string, string, string]>([
    ['an open of its temporary file', "EACCES: permission denied, open '/h/sessions/.g.json.19389-c7fd8613.tmp'", "EACCES: permission denied, open '/h/sessions/g.json'"],
    ['a link of it into place', "ENOSPC: no space left on device, link '/h/sessions/.g.json.7-0000abcd.tmp' -> '/h/sessions/g.json'", "ENOSPC: no space left on device, link '/h/sessions/g.json' -> '/h/sessions/g.json'"],
    ['the record itself named already', "EACCES: permission denied, open '/h/sessions/g.json'", "EACCES: permission denied, open '/h/sessions/g.json'"],
    ["another record's temporary file", "EACCES: permission denied, open '/h/sessions/.gg.json.1-c7fd8613.tmp'", "EACCES: permission denied, open '/h/sessions/.gg.json.1-c7fd8613.tmp'"],
    ['a name that only looks like one (no tag)', "EIO: i/o error, open '/h/sessions/.g.json.1.tmp'", "EIO: i/o error, open '/h/sessions/.g.json.1.tmp'"],
    ['no path at all', 'EIO: i/o error, write', 'EIO: i/o error, write'],
  ])('%s', (_case, message, said) => {
    expect((saidOfRecord(new Error(message), path) as Error).message).toBe(said);
  });

  it('what is not an Error is passed on as it is', () => {
    expect(saidOfRecord('text', path)).toBe('text');
  });
});
