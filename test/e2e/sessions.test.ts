// `argo sessions` end to end: turns produced by `argo` itself against the Ollama stand-in.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/log/entry.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { ARGO_BIN, logLines, runArgo, scrubbedEnv, tempHome } from '../support/run-argo.js';
import { defined } from '../support/defined.js';

const ollama = await fakeOllamaPerFile();

const ENV = { TZ: 'UTC' };
const argo = (home: string, args: string[]) => runArgo(args, { home, host: ollama.url, env: ENV });
const record = (home: string, name: string): SessionRecord => JSON.parse(readFileSync(join(home, 'sessions', `${name}.json`), 'utf8')) as SessionRecord;
const indexFile = (home: string, name: string): string => join(home, 'sessions', `${name}.idx`);

interface Explain {
  replayed_ids: string[];
  turns: { id: string }[];
}
async function explain(home: string, session: string, replay: string): Promise<Explain> {
  const result = await argo(home, ['--session', session, '--replay', replay, '--explain', '--json', 'Explain more']);
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as Explain;
}

/** work: three turns, play: one, all made by argo itself. */
async function conversation(): Promise<{ home: string; work: string[]; play: string[] }> {
  const home = tempHome();
  for (const prompt of ['Explain closures in JavaScript', 'Write a counter with a closure', 'Actually, use a class instead']) {
    expect((await argo(home, ['--session', 'work', prompt])).code).toBe(0);
  }
  expect((await argo(home, ['--session', 'play', 'Why is the sky blue?'])).code).toBe(0);
  const lines = logLines(home);
  const ids = (name: string): string[] => lines.filter((line) => line.session === name).map((line) => line.id as string);
  return { home, work: ids('work'), play: ids('play') };
}

let shared: { home: string; work: string[]; play: string[] };
beforeAll(async () => {
  shared = await conversation();
});

describe('argo sessions: list and show', () => {
  it('--json is an array of records, most recently used first', async () => {
    const result = await argo(shared.home, ['sessions', '--json']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const records = JSON.parse(result.stdout) as SessionRecord[];
    expect(records.map((r) => [r.name, r.turns, r.title, r.last_model])).toEqual([
      ['play', 1, 'Why is the sky blue?', 'argo'],
      ['work', 3, 'Explain closures in JavaScript', 'argo'],
    ]);
    expect(records[1]).toMatchObject({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown, last_turn_id: shared.work[2] });
    expect((await argo(shared.home, ['sessions', 'list', '--json'])).stdout).toBe(result.stdout);
  });

  it('prints a table, its header only on a terminal (as argo logs)', async () => {
    const result = await argo(shared.home, ['sessions']);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(/^play {6}1 {2}\d{4}-\d\d-\d\d \d\d:\d\d {2}argo {12}Why is the sky blue\?$/);
    expect(lines[1]).toMatch(/^work {6}3 {2}.* {2}Explain closures in JavaScript$/);
    expect(lines).toHaveLength(3);
  });

  it('show prints the transcript; --json the record and every turn as logged; --limit the newest', async () => {
    const text = await argo(shared.home, ['sessions', 'show', 'work']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^work [0-9a-f-]{36} · 3 turns\ncreated .* · last used .* · model argo\n\n── /);
    expect(text.stdout).toContain('User: Explain closures in JavaScript\nAssistant: You said: Explain closures in JavaScript\n');
    expect(text.stdout.indexOf('Write a counter')).toBeLessThan(text.stdout.indexOf('Actually, use a class'));

    const json = JSON.parse((await argo(shared.home, ['sessions', 'show', 'work', '--json'])).stdout) as { session: SessionRecord; turns: LogEntry[] };
    expect(json.session).toEqual(record(shared.home, 'work'));
    expect(json.turns).toEqual(logLines(shared.home).filter((line) => line.session === 'work'));

    const last = JSON.parse((await argo(shared.home, ['sessions', 'show', 'work', '--json', '--limit', '1'])).stdout) as { turns: LogEntry[] };
    expect(last.turns.map((turn) => turn.id)).toEqual([shared.work[2]]);
  });

  it.each<[string[], string]>([
    [['sessions', 'show', 'nope'], 'argo: sessions show: no session named "nope"; known sessions: play, work\n'],
    [['sessions', 'show', '../etc'], 'argo: sessions show: invalid session name "../etc": use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot\n'],
    [['sessions', 'rename', 'nope', 'x'], 'argo: sessions rename: no session named "nope"; known sessions: play, work\n'],
    [['sessions', 'rename', 'work', 'play'], 'argo: a session named "play" already exists; choose another name or remove it with "argo sessions rm play"\n'],
    [['sessions', 'fork', 'work@zzzzzz', 'x'], 'argo: session "work" has no turn "zzzzzz"; list its turn ids with "argo sessions show work"\n'],
    [['sessions', 'fork', 'work', 'play'], 'argo: a session named "play" already exists; choose another name or remove it with "argo sessions rm play"\n'],
    [['sessions', 'rm', 'work'], 'argo: sessions rm deletes history: pass --yes to confirm (there is no terminal to ask on)\n'],
    [['sessions', 'reindex', 'nope'], 'argo: sessions reindex: no session named "nope"; known sessions: play, work\n'],
  ])('%j is a usage error', async (args, stderr) => {
    const result = await argo(shared.home, args);
    expect(result).toMatchObject({ code: 2, stdout: '', stderr });
  });

  it('a command suggested for a session whose name starts with a dash runs as printed', async () => {
    const home = tempHome();
    await argo(home, ['-s', 'work', 'hello']);
    await argo(home, ['-s', '-dash', 'hello']);
    const taken = await argo(home, ['sessions', 'fork', 'work', '--', '-dash']);
    expect(taken).toMatchObject({ code: 2, stderr: 'argo: a session named "-dash" already exists; choose another name or remove it with "argo sessions rm -- -dash"\n' });
    const noTurn = await argo(home, ['sessions', 'fork', '--', '-dash@zzzzzz', 'x']);
    expect(noTurn).toMatchObject({ code: 2, stderr: 'argo: session "-dash" has no turn "zzzzzz"; list its turn ids with "argo sessions show -- -dash"\n' });
    expect(await argo(home, ['sessions', 'show', '--', '-dash'])).toMatchObject({ code: 0 });
    writeFileSync(join(home, 'sessions', '-dash.json'), 'null\n');
    expect((await argo(home, ['sessions'])).stdout).toContain('-dash  (damaged record: run argo sessions rm -- -dash)\n');
    expect(await argo(home, ['sessions', 'rm', '--yes', '--', '-dash'])).toMatchObject({ code: 0 });
  });

  it('an empty data directory has no sessions', async () => {
    const home = tempHome();
    expect((await argo(home, ['sessions', '--json'])).stdout).toBe('[]\n');
    expect((await argo(home, ['sessions'])).stdout).toBe('no sessions yet; start one with: argo --session NAME "your question"\n');
  });
});

describe('argo sessions: fork, rename, rm, reindex', () => {
  it('fork replays the parent’s turns up to the fork point, then its own, without copying log lines', async () => {
    const { home, work } = await conversation();
    const linesBefore = logLines(home).length;
    const result = await argo(home, ['sessions', 'fork', `work@${work[1]?.slice(0, 8)}`, 'branch']);
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: `forked "work" at turn ${work[1]} into "branch" (2 turns inherited)\n` });
    expect(logLines(home)).toHaveLength(linesBefore);
    expect(record(home, 'branch')).toMatchObject({ turns: 0, last_model: 'argo', parent: { session_id: record(home, 'work').id, name: 'work', turn_id: work[1] } });

    expect((await explain(home, 'branch', 'session')).turns.map((turn) => turn.id)).toEqual(work.slice(0, 2));
    expect((await argo(home, ['--session', 'branch', 'Add a reset method'])).code).toBe(0);
    const own = logLines(home).at(-1)?.id as string;
    expect((await explain(home, 'branch', 'last:2')).turns.map((turn) => turn.id)).toEqual([work[1], own]);
    // The parent is untouched.
    expect((await explain(home, 'work', 'last:5')).turns.map((turn) => turn.id)).toEqual(work);

    const show = await argo(home, ['sessions', 'show', 'branch']);
    expect(show.stdout).toMatch(new RegExp(`^branch [0-9a-f-]{36} · 3 turns \\(2 inherited\\) · forked from work@${work[1]}\\n`));

    // A fork at the newest turn by default.
    expect((await argo(home, ['sessions', 'fork', 'work', 'latest'])).stdout).toBe(`forked "work" at turn ${work[2]} into "latest" (3 turns inherited)\n`);
  });

  it('rename keeps the id and the turns: replay and `argo logs --session NEW` find the old turns', async () => {
    const { home, work } = await conversation();
    await argo(home, ['sessions', 'fork', 'work', 'branch']);
    const id = record(home, 'work').id;
    expect(await argo(home, ['sessions', 'rename', 'work', 'work'])).toMatchObject({ code: 0, stdout: 'session "work" already has that name; nothing renamed\n' });
    const result = await argo(home, ['sessions', 'rename', 'work', 'job']);
    expect(result).toMatchObject({ code: 0, stdout: 'renamed session "work" to "job"\n' });
    expect(existsSync(join(home, 'sessions', 'work.json'))).toBe(false);
    expect(record(home, 'job')).toMatchObject({ name: 'job', id, turns: 3 });
    expect(record(home, 'branch').parent?.name).toBe('job');

    const logs = await argo(home, ['logs', '--session', 'job', '--json']);
    expect(logs.stdout.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as LogEntry).id)).toEqual(work);
    const table = await argo(home, ['logs', '--session', 'job']);
    expect(table.stdout.split('\n').filter(Boolean).every((line) => line.slice(32, 46).trimEnd() === 'job')).toBe(true);
    expect((await explain(home, 'job', 'session')).turns.map((turn) => turn.id)).toEqual(work);
    expect((await argo(home, ['--session', 'job', 'One more thing'])).code).toBe(0);
    expect(record(home, 'job').turns).toBe(4);
  });

  it('the index is rebuilt transparently when deleted, truncated or pointing past the end of the log', async () => {
    const { home, work } = await conversation();
    let pristine = readFileSync(indexFile(home, 'work'), 'utf8');
    const harms: (() => void)[] = [
      () => rmSync(indexFile(home, 'work')),
      () => writeFileSync(indexFile(home, 'work'), pristine.split('\n').slice(0, 1).join('\n') + '\n'),
      () => writeFileSync(indexFile(home, 'work'), pristine.replace(/"offset":\d+/g, '"offset":123456789')),
    ];
    const atIndex = (): string | null => (existsSync(indexFile(home, 'work')) ? readFileSync(indexFile(home, 'work'), 'utf8') : null);
    for (const harm of harms) {
      harm();
      const harmed = atIndex();
      expect((await explain(home, 'work', 'last:2')).turns.map((turn) => turn.id)).toEqual(work.slice(-2));
      // --explain writes nothing: the next turn rebuilds the index, and appends its own line.
      expect(atIndex()).toBe(harmed);
      expect((await argo(home, ['--session', 'work', '--replay', 'last:2', 'Explain more'])).code).toBe(0);
      work.push(logLines(home).at(-1)?.id as string);
      const rebuilt = atIndex() ?? '';
      expect(rebuilt.slice(0, pristine.length)).toBe(pristine);
      expect(rebuilt.slice(pristine.length)).toMatch(new RegExp(`^\\{"id":"${work.at(-1) ?? ''}"[^\\n]*\\n$`));
      pristine = rebuilt;
    }
  });

  it('an index sessions show rebuilt from a damaged one is rebuilt with its rules by the next replay (every replay classified its turns again)', async () => {
    const { home } = await conversation();
    const pristine = readFileSync(indexFile(home, 'work'), 'utf8');
    expect(pristine).toMatch(/"rules":/);
    writeFileSync(indexFile(home, 'work'), pristine.replace(/"length":\d+/, '"length":1000000000000'));
    expect((await argo(home, ['sessions', 'show', 'work'])).code).toBe(0);
    // A reader has no classification rules to hand: the lines it writes carry the logged types alone.
    expect(readFileSync(indexFile(home, 'work'), 'utf8')).not.toMatch(/"rules":/);
    expect((await argo(home, ['--session', 'work', '--replay', 'session', 'And then?'])).code).toBe(0);
    const lines = readFileSync(indexFile(home, 'work'), 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines.join('\n')).toBe(`${pristine.trimEnd()}\n${lines.at(-1) ?? ''}`);
  });

  it('an index that is a symbolic link is refused, never read, and the link is left for the user to remove', async () => {
    const { home } = await conversation();
    const elsewhere = join(home, 'elsewhere.idx');
    writeFileSync(elsewhere, readFileSync(indexFile(home, 'work')));
    rmSync(indexFile(home, 'work'));
    symlinkSync(elsewhere, indexFile(home, 'work'));
    const result = await argo(home, ['--session', 'work', '--replay', 'session', '--explain', 'again']);
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: `argo: ${indexFile(home, 'work')} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)\n` });
    expect(lstatSync(indexFile(home, 'work')).isSymbolicLink()).toBe(true);
  });

  it('rm removes record and index and keeps the log lines; --purge deletes them; forks protect their parent’s lines', async () => {
    const { home, work, play } = await conversation();
    const playId = record(home, 'play').id;
    const result = await argo(home, ['sessions', 'rm', 'play', '--yes']);
    expect(result).toMatchObject({ code: 0, stdout: `removed session "play"; its log lines remain (argo logs --session ${playId})\n` });
    expect(existsSync(join(home, 'sessions', 'play.json'))).toBe(false);
    expect(existsSync(indexFile(home, 'play'))).toBe(false);
    const kept = await argo(home, ['logs', '--session', playId, '--json']);
    expect(kept.stdout.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as LogEntry).id)).toEqual(play);

    await argo(home, ['sessions', 'fork', 'work', 'branch']);
    const refused = await argo(home, ['sessions', 'rm', 'work', '--purge', '--yes']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^argo: session "work" has forks that replay its turns \(branch\); remove them first/);

    expect((await argo(home, ['sessions', 'rm', 'branch', '-y'])).code).toBe(0);
    const purged = await argo(home, ['sessions', 'rm', 'work', '--purge', '--yes']);
    expect(purged).toMatchObject({ code: 0, stdout: 'removed session "work" and 3 log lines from 1 file\n' });
    expect(logLines(home).map((line) => line.id)).toEqual(play);
    expect(work).toHaveLength(3);
  });

  it('rm of a fork with no turns of its own names no command to find its lines: it has none', async () => {
    const { home } = await conversation();
    expect((await argo(home, ['sessions', 'fork', 'work', 'idle'])).code).toBe(0);
    expect(await argo(home, ['sessions', 'rm', 'idle', '--yes'])).toMatchObject({ code: 0, stderr: '', stdout: 'removed session "idle" (it had no turns of its own)\n' });
    expect((await argo(home, ['sessions', 'fork', 'work', 'asked'])).code).toBe(0);
    expect((await argo(home, ['--session', 'asked', 'One of its own'])).code).toBe(0);
    const id = record(home, 'asked').id;
    expect(await argo(home, ['sessions', 'rm', 'asked', '--yes'])).toMatchObject({ code: 0, stdout: `removed session "asked"; its log lines remain (argo logs --session ${id})\n` });
    const kept = await argo(home, ['logs', '--session', id, '--json']);
    expect(kept.stdout.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as LogEntry).user_prompt)).toEqual(['One of its own']);
  });

  it('a damaged record is listed as damaged, left out of --json with a warning, and removed by rm (not by rm --purge nor logs rm)', async () => {
    const { home } = await conversation();
    const linesBefore = logLines(home);
    writeFileSync(join(home, 'sessions', 'work.json'), '{"name": "work", "id": "trunc');

    const table = await argo(home, ['sessions']);
    expect(table).toMatchObject({ code: 0, stderr: '' });
    const rows = table.stdout.split('\n');
    expect(rows[0]).toMatch(/^play {6}1 {2}.* {2}Why is the sky blue\?$/);
    expect(rows.slice(1)).toEqual(['work  (damaged record: run argo sessions rm work)', '']);

    const json = await argo(home, ['sessions', '--json']);
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as SessionRecord[]).map((r) => r.name)).toEqual(['play']);
    expect(json.stderr).toBe(`argo: left out damaged session record work (${join(home, 'sessions', 'work.json')} is not valid JSON); remove it with "argo sessions rm work"\n`);

    const purge = await argo(home, ['sessions', 'rm', 'work', '--purge', '--yes']);
    expect(purge).toMatchObject({ code: 2, stdout: '' });
    expect(purge.stderr).toMatch(/^argo: sessions rm --purge: the record of session "work" is damaged, so its id and log lines are unknown; /);
    // logs rm by name deletes the same lines: refused the same way, rather than leaving the record behind.
    const logsRm = await argo(home, ['logs', 'rm', '-s', 'work', '--yes']);
    expect(logsRm).toMatchObject({ code: 2, stdout: '', stderr: purge.stderr.replace('sessions rm --purge:', 'logs rm:') });
    expect(logLines(home)).toEqual(linesBefore);
    // Its turns are shown as a damaged record's, not a removed session's.
    const shown = await argo(home, ['logs', '-s', 'work']);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    const shownRows = shown.stdout.split('\n').filter(Boolean);
    expect(shownRows).toHaveLength(3);
    for (const row of shownRows) expect(row).toContain('  work (damaged record)  ');
    const unconfirmed = await argo(home, ['sessions', 'rm', 'work']);
    expect(unconfirmed).toMatchObject({ code: 2, stderr: 'argo: sessions rm deletes history: pass --yes to confirm (there is no terminal to ask on)\n' });
    expect(existsSync(join(home, 'sessions', 'work.json'))).toBe(true);
    expect(existsSync(indexFile(home, 'work'))).toBe(true);

    const removed = await argo(home, ['sessions', 'rm', 'work', '--yes']);
    expect(removed).toMatchObject({ code: 0, stderr: '', stdout: 'removed session "work" (its record was damaged); its log lines remain (argo logs --json shows them with "session":"work")\n' });
    expect(existsSync(join(home, 'sessions', 'work.json'))).toBe(false);
    expect(existsSync(indexFile(home, 'work'))).toBe(false);
    expect(logLines(home)).toEqual(linesBefore);
    expect(await argo(home, ['sessions', '--json'])).toMatchObject({ code: 0, stderr: '' });
    // Once the record is gone, its turns are a removed session's, found by the name they carry.
    expect((await argo(home, ['logs', '-s', 'work'])).stdout).toContain('  work (removed)  ');

    // Valid JSON that is not a session record is damaged too; with no good record left, only its row.
    writeFileSync(join(home, 'sessions', 'play.json'), 'null\n');
    expect((await argo(home, ['sessions'])).stdout).toBe('play  (damaged record: run argo sessions rm play)\n');
    expect((await argo(home, ['sessions', '--json'])).stderr).toBe(`argo: left out damaged session record play (${join(home, 'sessions', 'play.json')} is not a session record); remove it with "argo sessions rm play"\n`);
    expect((await argo(home, ['sessions', 'rm', 'play', '-y'])).code).toBe(0);
    expect((await argo(home, ['sessions'])).stdout).toBe('no sessions yet; start one with: argo --session NAME "your question"\n');
  });

  it('reindex rebuilds one index or all of them', async () => {
    const { home } = await conversation();
    const before = { work: readFileSync(indexFile(home, 'work'), 'utf8'), play: readFileSync(indexFile(home, 'play'), 'utf8') };
    writeFileSync(indexFile(home, 'work'), 'garbage\n');
    rmSync(indexFile(home, 'play'));
    expect((await argo(home, ['sessions', 'reindex', 'work'])).stdout).toBe('reindexed session "work": 3 turns\n');
    expect(readFileSync(indexFile(home, 'work'), 'utf8')).toBe(before.work);
    // What a kill -9 during a logs rm or a reindex leaves: copies whose writer is gone.
    const orphans = [join(home, 'logs', '.2025-01-01.log.5000000-0a1b2c3d.tmp'), join(home, 'sessions', '.reindex-x.5000000-0a1b2c3d.tmp')];
    for (const orphan of orphans) writeFileSync(orphan, 'a copy');
    const all = await argo(home, ['sessions', 'reindex']);
    expect(all).toMatchObject({ code: 0, stderr: '', stdout: 'reindexed 2 sessions: 4 turns\n' });
    expect(readFileSync(indexFile(home, 'play'), 'utf8')).toBe(before.play);
    expect(orphans.filter((orphan) => existsSync(orphan))).toEqual([]);
  });
});

describe('argo sessions show and --replay session over a damaged index', () => {
  // Where the index names a place that does not hold, both read the log instead and give what the
  // pristine index gave (a length of 10^12 was allocated, a folder crashed with EISDIR, a named
  // pipe held argo past Ctrl-C), and so they do around a folder where the index itself goes; a link
  // there is named in one line.
  const COMMANDS = [
    ['sessions', 'show', 'work', '--json'],
    ['--session', 'work', '--replay', 'session', '--explain', '--json', 'Explain more'],
  ];
  const ELSEWHERE = '2000-01-01.log';
  const everyLine = (home: string, change: (line: { file: string; length: number }) => object): void => {
    const lines = readFileSync(indexFile(home, 'work'), 'utf8').trimEnd().split('\n');
    writeFileSync(indexFile(home, 'work'), lines.map((text) => `${JSON.stringify(change(JSON.parse(text) as { file: string; length: number }))}\n`).join(''));
  };
  const elsewhere = (make: (path: string) => void) => (home: string) => {
    everyLine(home, (line) => ({ ...line, file: ELSEWHERE }));
    make(join(home, 'logs', ELSEWHERE));
  };
  const mkfifo = (path: string): void => void execFileSync('mkfifo', [path]);
  const outside = (): string => mkdtempSync(join(tmpdir(), 'argo-outside-'));

  let base: string;
  let pristine: string[];
  const copy = (): string => {
    const home = mkdtempSync(join(tmpdir(), 'argo-damaged-'));
    cpSync(base, home, { recursive: true });
    return home;
  };
  beforeAll(async () => {
    base = (await conversation()).home;
    pristine = [];
    for (const args of COMMANDS) pristine.push((await argo(base, args)).stdout);
  });

  it.each<[string, (home: string) => void]>([
    ['every length 10^12', (home) => everyLine(home, (line) => ({ ...line, length: 1e12 }))],
    ['a folder where the day’s log should be', elsewhere((path) => mkdirSync(path))],
    ['a named pipe where the day’s log should be', elsewhere(mkfifo)],
    ['a link to a named pipe where the day’s log should be', elsewhere((path) => {
      const pipe = join(outside(), 'pipe');
      mkfifo(pipe);
      symlinkSync(pipe, path);
    })],
    ['a named pipe where the index should be', (home) => {
      rmSync(indexFile(home, 'work'));
      mkfifo(indexFile(home, 'work'));
    }],
    ['a folder where the index should be', (home) => {
      rmSync(indexFile(home, 'work'));
      mkdirSync(indexFile(home, 'work'));
    }],
  ])('%s: the same output as the index it should be', async (_case, damage) => {
    const home = copy();
    damage(home);
    for (const [i, args] of COMMANDS.entries()) expect(await argo(home, args)).toMatchObject({ code: 0, stderr: '', stdout: pristine[i] });
  });

  it.each<[string, (home: string) => void, (home: string) => string]>([
    ['a link where the index should be', (home) => {
      const copied = join(outside(), 'work.idx');
      writeFileSync(copied, readFileSync(indexFile(home, 'work')));
      rmSync(indexFile(home, 'work'));
      symlinkSync(copied, indexFile(home, 'work'));
    }, (home) => `argo: ${indexFile(home, 'work')} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)\n`],
  ])('%s: one line naming it, exit 1', async (_case, damage, said) => {
    const home = copy();
    damage(home);
    for (const args of [...COMMANDS, ['sessions', 'show', 'work', '-n', '1']]) expect(await argo(home, args)).toMatchObject({ code: 1, stdout: '', stderr: said(home) });
  });
});

describe('argo sessions reindex over a folder where an index goes', () => {
  it('replaces an empty one, and refuses one with files in it, naming it and where to move it from, exit 1', async () => {
    const { home } = await conversation();
    const pristine = readFileSync(indexFile(home, 'work'), 'utf8');
    rmSync(indexFile(home, 'work'));
    mkdirSync(indexFile(home, 'work'));
    expect(await argo(home, ['sessions', 'reindex', 'work'])).toMatchObject({ code: 0, stderr: '', stdout: 'reindexed session "work": 3 turns\n' });
    expect(readFileSync(indexFile(home, 'work'), 'utf8')).toBe(pristine);

    rmSync(indexFile(home, 'work'));
    mkdirSync(indexFile(home, 'work'));
    writeFileSync(join(indexFile(home, 'work'), 'notes.txt'), 'mine');
    const said = `argo: ${indexFile(home, 'work')} is a folder with files in it where the index of session "work" goes; move it out of ${join(home, 'sessions')}, then reindex again\n`;
    for (const args of [['sessions', 'reindex', 'work'], ['sessions', 'reindex']]) expect(await argo(home, args)).toMatchObject({ code: 1, stdout: '', stderr: said });
    expect(readdirSync(indexFile(home, 'work'))).toEqual(['notes.txt']);
    // Everything else reads around it.
    expect(await argo(home, ['sessions', 'show', 'work', '-n', '1'])).toMatchObject({ code: 0, stderr: '' });
  });
});

describe('shell completion of session names', () => {
  it('bash asks the built argo for the sessions of the --home on the line, after a subcommand that takes one', async () => {
    const other = tempHome();
    expect((await argo(other, ['--session', 'elsewhere', 'Hello'])).code).toBe(0);
    const script = (await argo(shared.home, ['completion', 'bash'])).stdout;
    const bin = mkdtempSync(join(tmpdir(), 'argo-bin-'));
    symlinkSync(ARGO_BIN, join(bin, 'argo'));
    const complete = (words: string[]): string =>
      execFileSync('bash', ['-c', `${script}\nCOMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _argo; printf '%s\\n' "\${COMPREPLY[@]}"`, 'bash', ...words], {
        encoding: 'utf8',
        // ARGO_HOME is the shared home: without --home, its sessions.
        env: { ...scrubbedEnv({ home: shared.home }), PATH: `${bin}:${process.env.PATH ?? ''}` },
      });
    expect(complete(['argo', 'sessions', 'show', ''])).toBe('play\nwork\n');
    expect(complete(['argo', 'sessions', 'rename', 'w'])).toBe('work\n');
    expect(complete(['argo', '--home', other, 'sessions', 'fork', ''])).toBe('elsewhere\n');
    expect(complete(['argo', 'sessions', 'rm', '--home', other, ''])).toBe('elsewhere\n');
    expect(complete(['argo', '--home', other, '-s', ''])).toBe('elsewhere\n');
  });
});

describe('argo sessions: -n 0, damaged fork points, removed parents', () => {
  it('show -n 0 prints the header and says no turns were asked for (as logs -n 0 and last 0 accept 0)', async () => {
    const result = await argo(shared.home, ['sessions', 'show', 'work', '-n', '0']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^work [0-9a-f-]{36} · newest 0 turns\ncreated .*\n\nno turns shown \(-n 0 asks for none\)\n$/);
    expect(JSON.parse((await argo(shared.home, ['sessions', 'show', 'work', '-n', '0', '--json'])).stdout)).toMatchObject({ turns: [] });
  });

  it('a fork whose fork point’s log line is damaged keeps the inherited turns before it, and says a line was skipped', async () => {
    const { home, work } = await conversation();
    expect((await argo(home, ['sessions', 'fork', `work@${work[1]}`, 'branch'])).code).toBe(0);
    expect((await argo(home, ['--session', 'branch', 'Add a reset method'])).code).toBe(0);
    const own = logLines(home).at(-1)?.id as string;
    // Cut the fork point's line short, as a write interrupted mid-line would.
    const [file] = readdirSync(join(home, 'logs'));
    const path = join(home, 'logs', defined(file, 'a log file'));
    const lines = readFileSync(path, 'utf8').split('\n');
    const at = lines.findIndex((text) => text.includes(`"id":"${work[1]}"`));
    lines[at] = defined(lines[at], 'the fork point').slice(0, 120);
    writeFileSync(path, lines.join('\n'));

    const show = await argo(home, ['sessions', 'show', 'branch']);
    expect(show).toMatchObject({ code: 0, stderr: 'argo: skipped 1 unreadable log line; run "argo logs check" to list them\n' });
    expect(show.stdout).toMatch(/^branch [0-9a-f-]{36} · 2 turns \(1 inherited\)/);
    // The same state gives the same turns, shown or replayed, before and after a reindex of everything,
    // and each read says the line was skipped: no index is saved without it (it may be repaired).
    const replayed = async (): Promise<string[]> => {
      const result = await argo(home, ['--session', 'branch', '--replay', 'session', '--explain', '--json', 'Explain more']);
      expect(result.stderr).toBe(show.stderr);
      return (JSON.parse(result.stdout) as Explain).turns.map((turn) => turn.id);
    };
    expect(await replayed()).toEqual([work[0], own]);
    // The line was cut before its session id: only the fork, by the fork point's id, knows it for its own.
    expect((await argo(home, ['sessions', 'reindex'])).stdout).toBe(
      'reindexed 2 sessions: 3 turns; skipped 1 unreadable line (argo logs check); left 1 session as it was (an unreadable line may be one of its turns)\n',
    );
    expect(await replayed()).toEqual([work[0], own]);
    expect((await argo(home, ['logs', 'check'])).stdout).toMatch(new RegExp(`${file}:${at + 1}: truncated JSON`));
  });

  it('a turn whose log line is damaged is skipped and said by replay, changes no record, and is back once repaired, without a reindex', async () => {
    const home = tempHome();
    for (const prompt of ['Explain A', 'Explain B', 'Explain C']) expect((await argo(home, ['-s', 's', prompt])).code).toBe(0);
    const [a, b, c] = logLines(home).map((line) => line.id as string);
    const saved = (): string => readFileSync(join(home, 'sessions', 's.json'), 'utf8') + readFileSync(indexFile(home, 's'), 'utf8');
    const before = saved();
    // The third turn's status made a number, the line's length kept: no reader can take it as a turn.
    const [file] = readdirSync(join(home, 'logs'));
    const path = join(home, 'logs', defined(file, 'a log file'));
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n');
    lines[2] = defined(lines[2], 'the third line').replace('"status":"ok"', '"status":1234');
    writeFileSync(path, lines.join('\n'));
    expect(readFileSync(path, 'utf8').length).toBe(text.length);
    const notice = 'argo: skipped 1 unreadable log line; run "argo logs check" to list them\n';
    const replayed = async (stderr: string): Promise<string[]> => {
      const result = await argo(home, ['-s', 's', '--replay', 'session', '--explain', '--json', 'Write it']);
      expect(result).toMatchObject({ code: 0, stderr });
      return (JSON.parse(result.stdout) as Explain).turns.map((turn) => turn.id);
    };

    expect(await replayed(notice)).toEqual([a, b]);
    // --explain writes nothing; and a damaged line is not a removed turn, so nothing is saved without it.
    expect(saved()).toBe(before);
    const turn = await argo(home, ['-s', 's', '--replay', 'session', 'Write it']);
    expect(turn).toMatchObject({ code: 0, stderr: notice });
    const d = logLines(home).at(-1)?.id as string;
    expect(logLines(home).at(-1)).toMatchObject({ replayed_ids: [a, b] });
    expect(record(home, 's')).toMatchObject({ turns: 4, last_turn_id: d });

    writeFileSync(path, readFileSync(path, 'utf8').replace('"status":1234', '"status":"ok"'));
    expect((await argo(home, ['logs', 'check'])).stdout).toBe('ok: 1 log file, 4 turns, no unreadable lines\n');
    expect(await replayed('')).toEqual([a, b, c, d]);
    expect((await argo(home, ['sessions', 'show', 's'])).stdout).toMatch(/^s [0-9a-f-]{36} · 4 turns\n/);
  });

  it('a removed parent is shown as removed, never as the new session that took its name, whose turns are never replayed', async () => {
    const { home, work } = await conversation();
    expect((await argo(home, ['sessions', 'fork', `work@${work[1]}`, 'branch'])).code).toBe(0);
    expect((await argo(home, ['sessions', 'rm', 'work', '-y'])).code).toBe(0);
    expect((await argo(home, ['--session', 'work', 'A new session under an old name'])).code).toBe(0);

    const show = await argo(home, ['sessions', 'show', 'branch']);
    expect(show.stdout).toMatch(new RegExp(`^branch [0-9a-f-]{36} · 2 turns \\(2 inherited\\) · forked from work@${work[1]} \\(removed\\)\\n`));
    expect(show.stdout).toContain(' · work (removed) · ');
    expect(show.stdout).not.toContain('A new session');
    // Every listing of turns says it alike: argo logs (table and --full) and argo last --full.
    const rows = (await argo(home, ['logs', '-q', 'closure'])).stdout.split('\n').filter(Boolean);
    expect(rows.map((row) => row.split(/ {2,}/)[2])).toEqual(['work (removed)', 'work (removed)']);
    const newer = (await argo(home, ['logs', '--full', '-q', 'old name'])).stdout;
    expect(newer).toContain(' · work · ');
    expect((await argo(home, ['logs', '--full', '-q', 'closure'])).stdout.match(/ · work \(removed\) · /g)).toHaveLength(2);
    expect((await argo(home, ['last', '-s', 'branch', '2', '--full'])).stdout.match(/ · work \(removed\) · /g)).toHaveLength(2);
    const table = await argo(home, ['sessions']);
    expect(table.stdout).toContain(`(fork of work@${work[1]}, removed) Explain closures`);
    const listed = JSON.parse((await argo(home, ['sessions', '--json'])).stdout) as SessionRecord[];
    expect(listed.find((one) => one.name === 'branch')?.parent).toMatchObject({ name: 'work', removed: true });
    const json = JSON.parse((await argo(home, ['sessions', 'show', 'branch', '--json'])).stdout) as { session: SessionRecord };
    expect(json.session.parent).toMatchObject({ name: 'work', removed: true });
    expect((await explain(home, 'branch', 'session')).turns.map((turn) => turn.id)).toEqual(work.slice(0, 2));
    // A parent that is only renamed is shown under its new name.
    expect((await argo(home, ['sessions', 'fork', 'work', 'second'])).code).toBe(0);
    expect((await argo(home, ['sessions', 'rename', 'work', 'renamed'])).code).toBe(0);
    expect((await argo(home, ['sessions', 'show', 'second'])).stdout).toMatch(/· forked from renamed@\S+\n/);
    expect((await argo(home, ['last', '-s', 'second', '--full'])).stdout).toContain(' · renamed · ');
  });
});

describe('turns written across time zones keep their order', () => {
  // Kiritimati (UTC+14) is always a calendar day or two ahead of UTC−12 (Etc/GMT+12 in POSIX's
  // inverted sign), whatever the hour: the second turn starts on an earlier local day than the first.
  const EAST = { TZ: 'Pacific/Kiritimati' };
  const WEST = { TZ: 'Etc/GMT+12' };
  const run = (home: string, env: Record<string, string>, args: string[]) => runArgo(args, { home, host: ollama.url, env });
  const replayed = async (home: string, replay: string): Promise<string[]> => {
    const result = await run(home, WEST, ['-s', 'trip', '--replay', replay, '--explain', '--json', 'more']);
    expect(result.stderr).toBe('');
    return (JSON.parse(result.stdout) as Explain).turns.map((turn) => turn.id);
  };

  it('a later turn that started on an earlier local day goes to the newest day file, so a reindex keeps the write order', async () => {
    const home = tempHome();
    expect((await run(home, EAST, ['-s', 'trip', 'Explain Rust lifetimes'])).code).toBe(0);
    expect((await run(home, WEST, ['-s', 'trip', 'Add tests'])).code).toBe(0);
    const [first, second] = logLines(home);
    const written = [defined(first, 'first turn').id as string, defined(second, 'second turn').id as string];
    const days = readdirSync(join(home, 'logs')).filter((name) => name.endsWith('.log'));
    expect(days).toHaveLength(1);
    const fileDay = defined(days[0], 'the day file').slice(0, 10);
    // Each timestamp is the turn's start in its own zone; the west one's day is before the file's.
    expect(first?.timestamp).toMatch(new RegExp(`^${fileDay}T.*\\+14:00$`));
    expect(second?.timestamp).toMatch(/-12:00$/);
    const westDay = String(second?.timestamp).slice(0, 10);
    expect(westDay < fileDay).toBe(true);

    const keepsOrder = async (): Promise<void> => {
      expect(await replayed(home, 'last:1')).toEqual(written.slice(1));
      expect(await replayed(home, 'session')).toEqual(written);
      expect((await run(home, WEST, ['last', '-s', 'trip'])).stdout).toContain('Add tests');
    };
    await keepsOrder(); // through the index as written
    // Rebuilt by hand, then by a reader that finds the index gone.
    expect((await argo(home, ['sessions', 'reindex', 'trip'])).stdout).toBe('reindexed session "trip": 2 turns\n');
    await keepsOrder();
    rmSync(indexFile(home, 'trip'));
    await keepsOrder();
    // Filed a day or two after its own date, it is still found by that date (both turns started on it, seen from UTC−12).
    const found = await run(home, WEST, ['logs', '--json', '--since', westDay, '--until', westDay]);
    expect(found.stdout.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as LogEntry).id)).toEqual(written);
  });
});
