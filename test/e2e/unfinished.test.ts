// A turn never vanishes because argo was killed: the built bin/argo, killed with SIGKILL mid-answer,
// leaves its turn in the journal, and the next argo logs it (docs/logs.md, "Unfinished turns").
import type { ChildProcess } from 'node:child_process';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { processStartTime } from '../../src/log/unfinished.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { ARGO_BIN, logLines, runArgo, scrubbedEnv, tempHome } from '../support/run-argo.js';
import type { ArgoResult } from '../support/run-argo.js';
import { startServe } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';

const ollama = await fakeOllamaPerFile({ reply: 'a long answer that never ends', models: [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }] });
beforeEach(() => {
  ollama.setScenario(undefined);
  ollama.requests.length = 0;
});

const NOTE = 'argo: logged 1 turn an earlier argo left unfinished (killed or crashed): argo logs --status interrupted\n';
const journal = (home: string): string[] => (existsSync(join(home, 'unfinished')) ? readdirSync(join(home, 'unfinished')) : []);
/** Another user to run argo as: root writes whatever a folder's mode says. */
interface User {
  uid: number;
  gid: number;
}
const argo = (args: string[], home: string, onSpawn?: (child: ChildProcess) => void, stdin?: string, user?: User): Promise<ArgoResult> =>
  runArgo(args, { home, host: ollama.url, ...(onSpawn ? { onSpawn } : {}), ...(stdin !== undefined ? { stdin, keepStdinOpen: true } : {}), ...(user ? { user } : {}) });

/** Runs `argo args…` (`stdin` typed into a chat) until its answer has begun and its turn is in the journal, then kills it with SIGKILL. */
async function killedMidAnswer(args: string[], home: string, stdin?: string, user?: User): Promise<void> {
  ollama.setScenario({ holdAfter: 1 });
  let kill = Promise.resolve();
  const result = await argo(args, home, (child) => {
    kill = (async () => {
      const held = await ollama.waitForHold();
      await waitFor(() => expect(journal(home).filter((name) => name.endsWith('.json'))).toHaveLength(1));
      child.kill('SIGKILL');
      await held.settled;
    })();
  }, stdin, user);
  await kill;
  expect(result.signal).toBe('SIGKILL');
  ollama.setScenario(undefined);
}

const lost = (home: string) => logLines(home).filter((line) => line.user_prompt === 'the lost question');

describe('argo killed mid-answer', () => {
  it.each<[string, string[], unknown]>([
    ['a question', [], undefined],
    // Still an agent run in the log (its tools), so argo rerun refuses to send it as one request.
    ['an agent run', ['-T', 'fs'], expect.arrayContaining(['read_file'])],
    ['a chat', ['chat'], undefined],
  ])('%s: argo logs logs the lost turn once, interrupted with its prompt, says so once, and a second run finds nothing', async (_case, args, tools) => {
    const home = tempHome();
    await killedMidAnswer(args[0] === 'chat' ? args : [...args, 'the lost question'], home, args[0] === 'chat' ? 'the lost question\n' : undefined);
    expect(logLines(home)).toEqual([]);

    const first = await argo(['logs', '--json'], home);
    expect(first).toMatchObject({ code: 0, stderr: NOTE });
    const printed = first.stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(printed).toEqual([expect.objectContaining({ user_prompt: 'the lost question', status: 'interrupted', model_response: '' })]);
    expect(printed[0]?.error).toMatch(/^argo ended before this turn was logged/);
    expect(printed[0]?.tools).toEqual(tools);
    expect(lost(home)).toHaveLength(1);
    expect(journal(home)).toEqual([]);

    const second = await argo(['logs', '--json'], home);
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toBe(first.stdout);
    expect(lost(home)).toHaveLength(1);
  });

  it('the next question logs it first, never replays it, and says so once', async () => {
    const home = tempHome();
    expect(await argo(['-s', 'work', 'the first question'], home)).toMatchObject({ code: 0 });
    await killedMidAnswer(['-s', 'work', 'the lost question'], home);

    ollama.requests.length = 0;
    const next = await argo(['-s', 'work', '-r', 'session', 'next'], home);
    expect(next).toMatchObject({ code: 0, stderr: NOTE });
    const lines = logLines(home);
    expect(lines.map((line) => [line.user_prompt, line.status])).toEqual([
      ['the first question', 'ok'],
      ['the lost question', 'interrupted'],
      ['next', 'ok'],
    ]);
    // Only ok turns are replayed: the lost one is in the log, not in the request.
    expect(lines[2]?.replayed_ids).toEqual([lines[0]?.id]);
    const sent = ollama.requests.filter((request) => request.path === '/api/chat').map((request) => request.body);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toContain('the first question');
    expect(sent[0]).not.toContain('the lost question');

    const again = await argo(['-s', 'work', 'again'], home);
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(lost(home)).toHaveLength(1);
  });
});

describe('a day of the log that is a named pipe', () => {
  it('the lost turn is not logged into it: its file is kept and named, and logged once the pipe is moved away', async () => {
    const home = tempHome();
    await killedMidAnswer(['the lost question'], home);
    const [name] = journal(home);
    const file = join(home, 'unfinished', name ?? '');
    const { day } = JSON.parse(readFileSync(file, 'utf8')) as { day: string };
    const pipe = join(home, 'logs', `${day}.log`);
    mkdirSync(join(home, 'logs'), { mode: 0o700 });
    execFileSync('mkfifo', ['-m', '600', pipe]);

    const refused = await argo(['logs', '--json'], home);
    expect(refused).toMatchObject({
      code: 0,
      stdout: '',
      stderr: `argo: 1 unfinished turn could not be logged (${file}: cannot be logged (cannot append to ${pipe}: ${pipe} is not a file (a named pipe); move it out of the way))\n`,
    });
    expect(journal(home)).toEqual([name]);
    expect(readdirSync(join(home, 'logs'))).toEqual([`${day}.log`]);

    rmSync(pipe);
    expect(await argo(['logs', '--json'], home)).toMatchObject({ code: 0, stderr: NOTE });
    expect(lost(home)).toEqual([expect.objectContaining({ status: 'interrupted' })]);
    expect(journal(home)).toEqual([]);
  });
});

describe('argo logs check', () => {
  it('logs a turn an earlier argo left unfinished first, as every reader does, and checks it with the rest', async () => {
    const home = tempHome();
    await killedMidAnswer(['the lost question'], home);
    expect(logLines(home)).toEqual([]);
    const check = await argo(['logs', 'check'], home);
    expect(check).toMatchObject({ code: 0, stderr: NOTE, stdout: 'ok: 1 log file, 1 turn, no unreadable lines\n' });
    expect(lost(home)).toEqual([expect.objectContaining({ status: 'interrupted' })]);
    expect(journal(home)).toEqual([]);
    expect(await argo(['logs', 'check'], home)).toMatchObject({ code: 0, stderr: '', stdout: check.stdout });
  });
});

describe('the commands that delete, rebuild, rename or fork history log unfinished turns first', () => {
  /** work and play, one turn each, and a turn of play whose argo was killed before logging it. */
  async function withLostTurn(): Promise<string> {
    const home = tempHome();
    expect(await argo(['-s', 'work', 'the first question'], home)).toMatchObject({ code: 0 });
    expect(await argo(['-s', 'play', 'a question at play'], home)).toMatchObject({ code: 0 });
    await killedMidAnswer(['-s', 'play', 'the lost question'], home);
    return home;
  }

  // What each deletes must stay deleted: a lost turn logged by a later argo would bring play back.
  it.each<[string, string[], string, string[]]>([
    ['logs rm', ['logs', 'rm', '-s', 'play', '--yes'], 'deleted 2 lines', ['the first question']],
    ['sessions rm --purge', ['sessions', 'rm', 'play', '--purge', '--yes'], 'removed session "play" and 2 log lines', ['the first question']],
    ['logs prune', ['logs', 'prune', '--older-than', '2999-01-01', '--yes'], 'deleted 1 log file', []],
  ])('%s deletes it with the rest, and no later argo logs it', async (_case, args, said, kept) => {
    const home = await withLostTurn();
    const removed = await argo(args, home);
    expect(removed).toMatchObject({ code: 0, stderr: NOTE });
    expect(removed.stdout).toContain(said);
    expect(journal(home)).toEqual([]);
    const later = await argo(['logs', '--json'], home);
    expect(later).toMatchObject({ code: 0, stderr: '' });
    expect(later.stdout.split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { user_prompt: string }).user_prompt)).toEqual(kept);
  });

  it.each<[string, string[], string]>([
    ['sessions reindex', ['sessions', 'reindex'], 'reindexed 2 sessions: 3 turns\n'],
    ['sessions reindex play', ['sessions', 'reindex', 'play'], 'reindexed session "play": 2 turns\n'],
  ])('%s counts it in the index it rebuilds', async (_case, args, said) => {
    const home = await withLostTurn();
    expect(await argo(args, home)).toMatchObject({ code: 0, stderr: NOTE, stdout: said });
    const index = readFileSync(join(home, 'sessions', 'play.idx'), 'utf8').trimEnd().split('\n');
    expect(index.map((line) => (JSON.parse(line) as { status: string }).status)).toEqual(['ok', 'interrupted']);
    expect(await argo(['logs', '--json'], home)).toMatchObject({ code: 0, stderr: '' });
    expect(lost(home)).toHaveLength(1);
  });

  /** The session's turns as `argo sessions show NAME --json` prints them: prompt and status. */
  async function shownTurns(home: string, name: string): Promise<[string, string][]> {
    const shown = await argo(['sessions', 'show', name, '--json'], home);
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    return (JSON.parse(shown.stdout) as { turns: { user_prompt: string; status: string }[] }).turns.map((turn) => [turn.user_prompt, turn.status]);
  }
  const lostId = (home: string): string => (journal(home)[0] ?? '').replace(/\.json$/, '');

  it('sessions rename logs it first, under the session it was asked in: the renamed session holds it', async () => {
    const home = await withLostTurn();
    const renamed = await argo(['sessions', 'rename', 'play', 'games'], home);
    expect(renamed).toMatchObject({ code: 0, stderr: NOTE, stdout: 'renamed session "play" to "games"\n' });
    expect(journal(home)).toEqual([]);
    expect(await shownTurns(home, 'games')).toEqual([
      ['a question at play', 'ok'],
      ['the lost question', 'interrupted'],
    ]);
    expect(lost(home)).toHaveLength(1);
  });

  it("sessions rename finds a session whose only turn was lost: logging it made the session", async () => {
    const home = tempHome();
    await killedMidAnswer(['-s', 'fresh', 'the lost question'], home);
    const renamed = await argo(['sessions', 'rename', 'fresh', 'kept'], home);
    expect(renamed).toMatchObject({ code: 0, stderr: NOTE, stdout: 'renamed session "fresh" to "kept"\n' });
    expect(await shownTurns(home, 'kept')).toEqual([['the lost question', 'interrupted']]);
  });

  it.each([['sessions'], ['sessions', '--json']])('%j lists a session whose only turn was lost, counted: logging it made the session', async (...args) => {
    const home = tempHome();
    await killedMidAnswer(['-s', 'fresh', 'the lost question'], home);
    const listed = await argo(args, home);
    expect(listed).toMatchObject({ code: 0, stderr: NOTE });
    if (args.includes('--json')) expect(JSON.parse(listed.stdout)).toMatchObject([{ name: 'fresh', turns: 1 }]);
    else expect(listed.stdout).toMatch(/^fresh +1 /m);
    expect(journal(home)).toEqual([]);
  });

  it.each<[string, (id: string) => string]>([
    ['at its newest turn', () => 'play'],
    ['at the lost turn by id', (id) => `play@${id}`],
  ])('sessions fork logs it first, and the fork inherits it (%s)', async (_case, source) => {
    const home = await withLostTurn();
    const id = lostId(home);
    const forked = await argo(['sessions', 'fork', source(id), 'copy'], home);
    expect(forked).toMatchObject({ code: 0, stderr: NOTE, stdout: `forked "play" at turn ${id} into "copy" (2 turns inherited)\n` });
    expect(journal(home)).toEqual([]);
    expect(await shownTurns(home, 'copy')).toEqual([
      ['a question at play', 'ok'],
      ['the lost question', 'interrupted'],
    ]);
    expect(lost(home)).toHaveLength(1);
  });

  it('sessions rm logs it first, then removes the session; its lines stay, the lost one with them', async () => {
    const home = await withLostTurn();
    const removed = await argo(['sessions', 'rm', 'play', '--yes'], home);
    expect(removed).toMatchObject({ code: 0, stderr: NOTE });
    expect(existsSync(join(home, 'sessions', 'play.json'))).toBe(false);
    expect(await argo(['logs', '--json'], home)).toMatchObject({ code: 0, stderr: '' });
    expect(lost(home)).toHaveLength(1);
  });
});

describe('argo doctor', () => {
  it('lists a turn a live argo is answering as in progress, and logs one whose argo was killed', async () => {
    const home = tempHome();
    await killedMidAnswer(['the lost question'], home);
    // A copy of the lost turn's file under another id, owned by a process that runs: this test's.
    const [name] = journal(home);
    const copy = JSON.parse(readFileSync(join(home, 'unfinished', name ?? ''), 'utf8')) as { owner: { pid: number; host: string }; entry: { id: string } };
    const owner = { ...copy.owner, pid: process.pid, host: hostname(), start: processStartTime(process.pid) };
    writeFileSync(join(home, 'unfinished', 'running0001.json'), JSON.stringify({ ...copy, owner, entry: { ...copy.entry, id: 'running0001' } }));

    const result = await argo(['doctor'], home);
    expect(result.stdout).toContain(
      `ok    unfinished 1 turn in progress (argo pid ${process.pid}); logged 1 turn an earlier argo left unfinished (killed or crashed) now: argo logs --status interrupted\n`,
    );
    expect(lost(home)).toHaveLength(1);
    expect(journal(home)).toEqual(['running0001.json']);
  });

  it('fails on a damaged file, naming it, and leaves it in place', async () => {
    const home = tempHome();
    await killedMidAnswer(['the lost question'], home);
    writeFileSync(join(home, 'unfinished', 'damaged0001.json'), '{"owner": ');
    const result = await argo(['doctor'], home);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^FAIL {2}unfinished .*\/unfinished\/damaged0001\.json: not JSON at line 1, column \d+: [^;]*; move such a file out of .*\/unfinished once you have kept what you need from it$/m);
    expect(lost(home)).toHaveLength(1);
    expect(journal(home)).toEqual(['damaged0001.json']);
    // Every command that looks says so, on one line, and goes on.
    const logs = await argo(['logs', '--json'], home);
    expect(logs).toMatchObject({ code: 0 });
    expect(logs.stderr).toMatch(/^argo: 1 unfinished turn could not be logged \(.*\/unfinished\/damaged0001\.json: not JSON at line 1, column \d+: [^)]*\)\n$/);
  });

  it.each([
    [3, 'argo doctor'],
    [23, 'argo doctor --json'],
  ])('with %i damaged files, lists each on a line of its own (20 at most), and --json lists them all', async (count, lister) => {
    const home = tempHome();
    mkdirSync(join(home, 'unfinished'), { mode: 0o700 });
    const names = Array.from({ length: count }, (_, index) => `damaged${String(index).padStart(4, '0')}.json`);
    for (const name of names) writeFileSync(join(home, 'unfinished', name), '{"owner": ');
    const dir = join(home, 'unfinished');
    // What a turn says points at the doctor that lists them all.
    const logs = await argo(['logs', '--json'], home);
    expect(logs.stderr).toMatch(new RegExp(`^argo: ${count} unfinished turns could not be logged \\(.*/damaged0000\\.json: not JSON at line 1, column \\d+: [^;]*; ${lister} lists them all\\)\n$`));

    const result = await argo(['doctor'], home);
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    const at = lines.findIndex((line) => line.startsWith('FAIL  unfinished '));
    expect(lines[at]).toBe(`FAIL  unfinished ${count} files in ${dir} cannot be logged; move such a file out of ${dir} once you have kept what you need from it`);
    const listed = names.slice(0, 20);
    expect(lines.slice(at + 1, at + 1 + listed.length)).toEqual(listed.map((name) => expect.stringMatching(new RegExp(`^ {17}${dir}/${name}: not JSON at line 1, column \\d+: `)) as unknown));
    const after = lines[at + 1 + listed.length];
    if (count > 20) expect(after).toBe(`${' '.repeat(17)}… and ${count - 20} more: argo doctor --json lists them all`);
    else expect(after).toMatch(/^ok {4}ollama /);

    const json = JSON.parse((await argo(['doctor', '--json'], home)).stdout) as { checks: { check: string; files?: { file: string; problem: string }[] }[] };
    expect(json.checks.find(({ check }) => check === 'unfinished')?.files).toEqual(names.map((name) => ({ file: join(dir, name), problem: expect.stringMatching(/^not JSON at line 1, column \d+: /) as unknown })));
    expect(journal(home).sort()).toEqual(names);
  });
});

describe('argo serve killed mid-stream', () => {
  it('the restarted server logs the turn once', async () => {
    const home = tempHome();
    const first = await startServe({ home, host: ollama.url });
    ollama.setScenario({ holdAfter: 1 });
    const response = await fetch(`${first.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'argo', stream: true, messages: [{ role: 'user', content: 'the lost question' }] }),
    });
    const turnId = response.headers.get('x-argo-turn-id');
    const held = await ollama.waitForHold();
    await waitFor(() => expect(journal(home)).toEqual([`${turnId}.json`]));
    first.child.kill('SIGKILL');
    expect(await first.exited).toMatchObject({ signal: 'SIGKILL' });
    await held.settled;
    await response.body?.cancel().catch(() => undefined);
    ollama.setScenario(undefined);
    expect(logLines(home)).toEqual([]);

    const second = await startServe({ home, host: ollama.url });
    try {
      expect(lost(home)).toEqual([expect.objectContaining({ id: turnId, status: 'interrupted' })]);
      expect(second.stderr()).toContain('argo serve: logged 1 turn an earlier argo left unfinished (killed or crashed): argo logs --status interrupted\n');
      expect(journal(home)).toEqual([]);
    } finally {
      await second.stop();
    }
    // And no later argo logs it again.
    expect(await argo(['logs', '--json'], home)).toMatchObject({ code: 0, stderr: '' });
    expect(lost(home)).toHaveLength(1);
  });
});

describe('argo serve without a journal', () => {
  it('says once on its log that it cannot keep turns while they are answered, and logs them as usual', async () => {
    const home = tempHome();
    // A file where the folder goes.
    writeFileSync(join(home, 'unfinished'), 'not a folder');
    const server = await startServe({ home, host: ollama.url });
    try {
      for (const question of ['first', 'second']) {
        const response = await fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: question }] }),
        });
        expect(response.status).toBe(200);
        await response.json();
      }
      // A server ends its response before the line is written: wait for both lines.
      await waitFor(() => expect(logLines(home).map((line) => line.user_prompt).sort()).toEqual(['first', 'second']));
      const notes = server.stderr().split('\n').filter((line) => line.includes('cannot keep this turn'));
      expect(notes).toEqual([
        `argo serve: cannot keep this turn in ${join(home, 'unfinished')} while it is answered (${join(home, 'unfinished')} is not a folder; remove it, and Argo makes the folder again); it is logged as usual when it ends, but would be lost if argo were killed first (argo doctor checks the data home)`,
      ]);
    } finally {
      await server.stop();
    }
  });
});

describe('a turn killed after its log line, before its index line and record update', () => {
  it("is in its session once the next argo looks: replayed, counted, shown", async () => {
    const home = tempHome();
    for (const question of ['q1', 'q2']) expect(await argo(['-s', 's', question], home)).toMatchObject({ code: 0 });
    await killedMidAnswer(['-s', 's', 'the lost question'], home);
    // The line its argo wrote just before it was killed, as it would have written it.
    const [name] = journal(home);
    const { day, entry } = JSON.parse(readFileSync(join(home, 'unfinished', name ?? ''), 'utf8')) as { day: string; entry: Record<string, unknown> };
    const { id } = JSON.parse(readFileSync(join(home, 'sessions', 's.json'), 'utf8')) as { id: string };
    writeFileSync(join(home, 'logs', `${day}.log`), `${JSON.stringify({ ...entry, session_id: id, status: 'ok', error: null, model_response: 'its answer' })}\n`, { flag: 'a' });

    expect(await argo(['logs'], home)).toMatchObject({ code: 0, stderr: '' });
    expect(journal(home)).toEqual([]);
    expect((await argo(['sessions'], home)).stdout).toMatch(/^s +3 /);
    ollama.requests.length = 0;
    expect(await argo(['-s', 's', '-r', 'session', 'q4'], home)).toMatchObject({ code: 0, stderr: '' });
    const sent = ollama.requests.filter((request) => request.path === '/api/chat').map((request) => request.body);
    expect(sent[0]).toContain('the lost question');
    expect((await argo(['sessions', 'show', 's'], home)).stdout.match(/^User: .*$/gm)).toEqual(['User: q1', 'User: q2', 'User: the lost question', 'User: q4']);
  });
});

describe('a rescued/ this user may not read', () => {
  it.runIf(process.platform === 'linux')("holds none of their rescues: the turn killed mid-answer is logged from its journal", async () => {
    const root = process.getuid?.() === 0;
    const user: User | undefined = root ? { uid: 65534, gid: 65534 } : undefined;
    const home = tempHome();
    if (user !== undefined) {
      // The run's temporary folder is root's: nobody may pass through it, not list it.
      chmodSync(dirname(home), statSync(dirname(home)).mode | 0o001);
      chownSync(home, user.uid, user.gid);
    }
    // Root's folder in the user's home (made by a sudo argo), or one the user closed to itself.
    mkdirSync(join(home, 'rescued'), { mode: root ? 0o700 : 0o000 });
    await killedMidAnswer(['the lost question'], home, undefined, user);
    const recovered = await argo(['logs', '--json'], home, undefined, undefined, user);
    expect(recovered).toMatchObject({ code: 0, stderr: NOTE });
    expect(lost(home)).toEqual([expect.objectContaining({ status: 'interrupted' })]);
    expect(journal(home)).toEqual([]);
  });
});

describe("the name of a session whose first question is being answered", () => {
  it('is refused to a rename and a fork; the question stays its own session', async () => {
    const home = tempHome();
    expect(await argo(['-s', 'a', 'a question in a'], home)).toMatchObject({ code: 0 });
    ollama.setScenario({ holdAfter: 1 });
    const asked = argo(['-s', 'newx', 'slow new'], home);
    await ollama.waitForHold();
    await waitFor(() => expect(journal(home).filter((name) => name.endsWith('.json'))).toHaveLength(1));
    const refusal = /^argo: session "newx" is being started by a question still being answered \(.*\/unfinished\/[\w-]+\.json\); wait until it is logged, then choose another name\n$/;
    const renamed = await argo(['sessions', 'rename', 'a', 'newx'], home);
    const forked = await argo(['sessions', 'fork', 'a', 'newx'], home);
    ollama.release();
    expect(await asked).toMatchObject({ code: 0 });
    ollama.setScenario(undefined);
    expect(renamed).toMatchObject({ code: 2, stdout: '' });
    expect(renamed.stderr).toMatch(refusal);
    expect(forked).toMatchObject({ code: 2, stdout: '' });
    expect(forked.stderr).toMatch(refusal);
    const sessions = (await argo(['sessions', '--json'], home)).stdout;
    const byName = new Map((JSON.parse(sessions) as { name: string; id: string; turns: number }[]).map((one) => [one.name, one]));
    expect([byName.get('a')?.turns, byName.get('newx')?.turns]).toEqual([1, 1]);
    const lines = logLines(home);
    expect(lines.find((line) => line.user_prompt === 'slow new')?.session_id).toBe(byName.get('newx')?.id);
  });
});

describe.runIf(existsSync('/usr/bin/strace') || existsSync('/bin/strace'))('killed by the system at a chosen step (strace fault injection)', () => {
  /** `argo args…` under strace, killed at the first `syscall` (on `path` only, when given). */
  // Not execFileSync: the stand-in answering it runs in this process.
  const killedAt = (home: string, syscall: string, args: string[], path?: string): Promise<number | null> =>
    new Promise((resolve) => {
      const strace = ['-f', '-qq', '-o', '/dev/null', ...(path ? ['-P', path] : []), '-e', `trace=${syscall}`, '-e', `inject=${syscall}:signal=KILL`, process.execPath, ARGO_BIN, ...args];
      const child = execFile('strace', strace, { env: scrubbedEnv({ home, host: ollama.url }) }, (error) => resolve(error === null ? 0 : typeof error.code === 'number' ? error.code : null));
      // No piped text to add to the question: argo reads standard input until it ends.
      child.stdin?.end();
    });

  it('a rename killed as it removes a file: listed once, and finished when asked again', async () => {
    const home = tempHome();
    for (const question of ['q1', 'q2']) expect(await argo(['-s', 'old', question], home)).toMatchObject({ code: 0 });
    expect(await killedAt(home, 'unlink', ['sessions', 'rename', 'old', 'new'])).not.toBe(0);
    expect((await argo(['sessions'], home)).stdout).toMatch(/^new +2 [^\n]*\n$/);
    expect(await argo(['sessions', 'rename', 'old', 'new'], home)).toMatchObject({ code: 0, stdout: 'renamed session "old" to "new" (an earlier argo had begun it)\n' });
    expect(readdirSync(join(home, 'sessions')).filter((file) => !file.startsWith('.')).sort()).toEqual(['new.idx', 'new.json']);
    expect((await argo(['sessions', 'show', 'new'], home)).stdout.match(/^User: .*$/gm)).toEqual(['User: q1', 'User: q2']);
  }, 60_000);

  it.each<[string, string, (home: string) => string | undefined]>([
    ['opens its index', 'openat', (home) => join(home, 'sessions', 's.idx')],
    ['renames its record into place', 'rename', () => undefined],
  ])('a turn killed as it %s: in its session once the next argo looks', async (_case, syscall, path) => {
    const home = tempHome();
    for (const question of ['q1', 'q2']) expect(await argo(['-s', 's', question], home)).toMatchObject({ code: 0 });
    expect(await killedAt(home, syscall, ['-s', 's', 'q3'], path(home))).not.toBe(0);
    expect(await argo(['logs'], home)).toMatchObject({ code: 0 });
    expect((await argo(['sessions'], home)).stdout).toMatch(/^s +3 /);
    expect(readdirSync(join(home, 'sessions')).sort()).toEqual(['s.idx', 's.json']);
    // The killed argo's session lock is taken over once stale (10 s).
  }, 60_000);
});
