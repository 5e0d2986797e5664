// `argo logs` end to end: the built binary against data directories written with the real writer.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { format } from 'date-fns';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/log/entry.js';
import type { DataPaths } from '../../src/log/writer.js';
import { indexPath, readSession } from '../../src/sessions/store.js';
import { appendRaw, makeEntry, policy, recordTurns, tempData } from '../query/helpers.js';
import { ARGO_BIN, runArgo, scrubbedEnv } from '../support/run-argo.js';
import { at, defined } from '../support/defined.js';
import { waitFor } from '../support/wait.js';
import { fakeOllamaPerTest } from '../support/fake-ollama-hooks.js';

const ENV = { TZ: 'UTC' };
const startOllama = fakeOllamaPerTest();
const argo = (home: string, args: string[], extra: { env?: Record<string, string> } = {}) =>
  runArgo(args, { home, env: { ...ENV, ...extra.env } });
const ids = (stdout: string): string[] =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as LogEntry).id);

interface Fixture {
  home: string;
  paths: DataPaths;
  all: LogEntry[];
  byId: Map<string, LogEntry>;
}

/**
 * Eight turns over two days in two sessions, one of each interesting shape; then a third session
 * whose turns are recent (relative to now) for the duration filters.
 */
async function fixture(): Promise<Fixture> {
  const { home, paths } = tempData();
  const shapes: Partial<LogEntry>[] = [
    { entry_type: 'question', user_prompt: 'Why is the sky blue?', model_response: 'Rayleigh scattering.' },
    { entry_type: 'instruction', user_prompt: 'Explain closures', model: 'llama3:8b', replay_policy: policy({ context_strength: 'strong', chars_used: 400 }) },
    { entry_type: 'correction', user_prompt: 'Actually, I meant Python', status: 'error', error: 'boom', replay_policy: policy({ context_strength: 'weak', reason: 'clarification', trimmed: true, chars_used: 5500 }) },
    { entry_type: 'meta', user_prompt: 'What did you say about the CAFÉ?', model_response: 'Nothing about the café.', status: 'interrupted' },
  ];
  const work = await recordTurns(paths, 'work', 4, { date: '2025-01-01', start: '2025-01-01T10:00:00Z', shape: (i) => shapes[i] ?? {} });
  const play = await recordTurns(paths, 'play', 4, {
    date: '2025-01-02',
    start: '2025-01-02T10:00:00Z',
    shape: (i) => ({ ...shapes[(i + 1) % 4], replay_policy: i === 3 ? policy({ context_strength: 'moderate', reason: 'session', chars_used: 100 }) : (shapes[(i + 1) % 4]?.replay_policy ?? null) }),
  });
  const now = Date.now();
  const recent: LogEntry[] = [];
  for (const [i, ago] of [3 * 86_400_000, 3 * 3_600_000, 20 * 60_000].entries()) {
    const at = new Date(now - ago);
    recent.push(...(await recordTurns(paths, 'recent', 1, { date: format(at, 'yyyy-MM-dd'), start: at.toISOString(), shape: () => ({ user_prompt: `recent ${i}` }) })).entries);
  }
  const all = [...work.entries, ...play.entries, ...recent];
  return { home, paths, all, byId: new Map(all.map((entry) => [entry.id, entry])) };
}

let fx: Fixture;
beforeAll(async () => {
  fx = await fixture();
});

describe.concurrent('argo logs: output', () => {
  it('prints a table, oldest first: time, session, type, strength, one-line prompt preview', async () => {
    const result = await argo(fx.home, ['logs', '--session', 'work,play']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const id = (i: number): string => fx.all[i]?.id.padEnd(12) ?? '';
    expect(result.stdout.split('\n').slice(0, 4)).toEqual([
      `2025-01-01 10:00  ${id(0)}  work            question     -         Why is the sky blue?`,
      `2025-01-01 10:01  ${id(1)}  work            instruction  strong    Explain closures`,
      `2025-01-01 10:02  ${id(2)}  work            correction   weak      [error] Actually, I meant Python`,
      `2025-01-01 10:03  ${id(3)}  work            meta         -         [interrupted] What did you say about the CAFÉ?`,
    ]);
    expect(result.stdout.split('\n')).toHaveLength(9);
  });

  it('the table shows the newest 20 and says how to see more; --all and -n show more; --json keeps every line', async () => {
    const { home, paths } = tempData();
    const many = await recordTurns(paths, 'long', 25, { date: '2025-03-01', start: '2025-03-01T08:00:00Z', shape: (i) => ({ user_prompt: `question ${i}` }) });
    const table = await argo(home, ['logs']);
    expect(table.code).toBe(0);
    const rows = table.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(20);
    expect(rows[0]).toContain(`${many.entries[5]?.id}  long`);
    expect(rows[19]).toContain('question 24');
    expect(table.stderr).toBe('(the newest 20 shown; see more with -n 200 or --all, or narrow with --session, --since or -q)\n');
    expect((await argo(home, ['logs', '--all'])).stdout.trimEnd().split('\n')).toHaveLength(25);
    expect((await argo(home, ['logs', '--full'])).stdout.match(/^── /gm)).toHaveLength(20);
    const limited = await argo(home, ['logs', '-n', '22']);
    expect(limited.stdout.trimEnd().split('\n')).toHaveLength(22);
    expect(limited.stderr).toBe('');
    // -n 0 asks for nothing, and gets it without a note that the log is empty.
    expect(await argo(home, ['logs', '-n', '0'])).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(ids((await argo(home, ['logs', '--json'])).stdout)).toHaveLength(25);
    expect((await argo(home, ['logs', '--all', '-n', '3'])).stderr).toBe('argo: --all and --limit disagree: choose one\n');
  });

  it('says so when nothing is logged or nothing matches', async () => {
    const { home } = tempData();
    expect(await argo(home, ['logs'])).toMatchObject({ code: 0, stdout: '', stderr: 'no turns logged yet: ask something with argo "…"\n' });
    expect(await argo(fx.home, ['logs', '-q', 'no such words anywhere'])).toMatchObject({ code: 0, stdout: '', stderr: 'no turns match these filters\n' });
    expect(await argo(fx.home, ['logs', '--json', '-q', 'no such words anywhere'])).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('--json prints the lines exactly as stored', async () => {
    const result = await argo(fx.home, ['logs', '--json']);
    expect(result.code).toBe(0);
    const stored = readdirSync(fx.paths.logs)
      .sort()
      .map((name) => readFileSync(join(fx.paths.logs, name), 'utf8'))
      .join('');
    expect(result.stdout).toBe(stored);
  });

  it('--full prints whole prompts and responses', async () => {
    const result = await argo(fx.home, ['logs', '--full', '--type', 'correction', '--session', 'work']);
    const entry = at(fx.all, 2);
    expect(result.stdout).toBe(
      `── 2025-01-01 10:02:00 · work · correction · weak (clarification, 2 turns, 5500 chars, trimmed) · error · argo · id ${entry.id}\n` +
        'User: Actually, I meant Python\nAssistant: work answer 3\n(boom)\n\n',
    );
  });

  it('--path prints the logs directory, whatever the other flags', async () => {
    expect((await argo(fx.home, ['logs', '--path', '--type', 'meta'])).stdout).toBe(`${fx.paths.logs}\n`);
  });

  it('takes --home after the subcommand name', async () => {
    const result = await runArgo(['logs', '--home', fx.home, '--path'], { home: '/nonexistent', env: ENV });
    expect(result.stdout).toBe(`${fx.paths.logs}\n`);
  });
});

// Each case is one read-only spawn of the binary: run them side by side.
describe.concurrent('argo logs: filters', () => {
  const w = (i: number): string => at(fx.all, i).id;
  const cases: [string, string[], () => string[]][] = [
    ['--session work', ['--session', 'work'], () => [0, 1, 2, 3].map(w)],
    ['--session by id', ['--session', 'ID:work'], () => [0, 1, 2, 3].map(w)],
    ['--type question,meta', ['--type', 'question,meta', '--session', 'work,play'], () => [0, 3, 6, 7].map(w)],
    ['--type repeated', ['--type', 'question', '--type', 'meta', '--session', 'work,play'], () => [0, 3, 6, 7].map(w)],
    ['--status error', ['--status', 'error'], () => [2, 5].map(w)],
    ['--status interrupted,error', ['--status', 'interrupted,error'], () => [2, 3, 5, 6].map(w)],
    ['--strength strong', ['--strength', 'strong'], () => [1, 4].map(w)],
    ['--strength none', ['--strength', 'none', '--session', 'work,play'], () => [0, 3, 6].map(w)],
    ['--reason clarification', ['--reason', 'clarification'], () => [2, 5].map(w)],
    ['--reason session', ['--reason', 'session'], () => [7].map(w)],
    ['--model llama3', ['--model', 'llama3'], () => [1, 4].map(w)],
    ['--model llama3:70b', ['--model', 'llama3:70b'], () => []],
    // Spelled as Ollama also takes them: library/ and registry.ollama.ai/ filled in, any case.
    ['--model library/llama3:8b', ['--model', 'library/llama3:8b'], () => [1, 4].map(w)],
    ['--model LLAMA3', ['--model', 'LLAMA3'], () => [1, 4].map(w)],
    ['--model registry.ollama.ai/library/argo', ['--model', 'registry.ollama.ai/library/argo', '--session', 'work,play'], () => [0, 2, 3, 5, 6, 7].map(w)],
    ['-q case-insensitive, prompt or response', ['-q', 'café'], () => [3, 6].map(w)],
    ['-q with quotes and a session', ['-q', 'SKY', '--session', 'play'], () => [7].map(w)],
    ['--since/--until dates (whole days)', ['--since', '2025-01-02', '--until', '2025-01-02'], () => [4, 5, 6, 7].map(w)],
    ['--until a date and time', ['--until', '2025-01-01T10:01:30Z'], () => [0, 1].map(w)],
    ['--since 1d (duration)', ['--since', '1d'], () => [9, 10].map(w)],
    ['--since 1h', ['--since', '1h'], () => [10].map(w)],
    ['--since 4d --until 1h', ['--since', '4d', '--until', '1h'], () => [8, 9].map(w)],
    // Before the year 1: every turn, as 1000000d finds them.
    ['--since 1500000d', ['--since', '1500000d'], () => fx.all.map((entry) => entry.id)],
    ['--until 1500000d', ['--until', '1500000d'], () => []],
    ['--limit 3: the newest 3, oldest first', ['--limit', '3'], () => [8, 9, 10].map(w)],
    ['--limit with filters', ['--limit', '2', '--session', 'work'], () => [2, 3].map(w)],
    ['--limit 0', ['--limit', '0'], () => []],
    ['everything combined', ['--session', 'work,play', '--type', 'correction', '--status', 'error', '--strength', 'weak', '--reason', 'clarification', '-q', 'python', '--since', '2025-01-01', '--limit', '1'], () => [5].map(w)],
  ];

  it.each(cases)('%s', async (_name, args, expected) => {
    const work = await readSession(fx.paths.sessions, 'work');
    const resolved = args.map((arg) => (arg === 'ID:work' ? defined(work, 'session work').id : arg));
    const result = await argo(fx.home, ['logs', '--json', ...resolved]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(ids(result.stdout)).toEqual(expected());
  });

  it.each<[string[], RegExp]>([
    [['--type', 'questions'], /^argo: --type: unknown value "questions"; use question, instruction, correction, meta, other/],
    [['--status', 'done'], /^argo: --status: unknown value "done"; use ok, interrupted, error/],
    [['--strength', 'high'], /^argo: --strength: unknown value "high"; use strong, moderate, weak, none/],
    [['--reason', 'why'], /^argo: --reason: unknown value "why"; use continuation, clarification, session, none/],
    [['--since', 'last tuesday'], /^argo: --since: cannot read "last tuesday" as a time/],
    [['--since', '1d', '--until', '2d'], /^argo: --since 1d is after --until 2d: nothing can match/],
    [['--session', 'nobody'], /^argo: --session: no session named "nobody"; known sessions: play, recent, work \(a session id also works\)/],
    [['--session', '../etc'], /^argo: --session: invalid session name/],
    [['--limit', '-1'], /^argo: .*--limit/],
    [['--json', '--full'], /^argo: --json prints lines as stored and --full prints them for reading: choose one/],
    [['--stats', '--follow'], /^argo: --stats counts what is there; it cannot --follow/],
    // No turn written from now on can have started before a past --until: the follow would never end.
    [['--follow', '--until', '1h'], /^argo: --follow waits for new turns and --until 1h is in the past: nothing new can match; leave out --follow to list the turns up to then\n$/],
    [['-f', '--until', '2025-01-01'], /^argo: --follow waits for new turns and --until 2025-01-01 is in the past/],
    [['-q', ''], /^argo: --grep needs some text/],
    // Given, but no name in it: not a filter that matches everything.
    [['-s', ''], /^argo: --session needs a name \(an empty one would match everything\)\n$/],
    [['-s', ' , '], /^argo: --session needs a name/],
    [['--model', ''], /^argo: --model needs a name/],
    [['--tool', ','], /^argo: --tool needs a name/],
    [['--bogus'], /^argo: unknown option '--bogus'/],
    [['--since', '2026-11-27T11:30+99:00'], /^argo: --since: "2026-11-27T11:30\+99:00" is \+99:00 from UTC, and no time zone is more than 14:00 from it; give an offset such as \+02:00, -05:00 or Z\n$/],
  ])('%j is a usage error (exit 2, one line naming the fix)', async (args, message) => {
    const result = await argo(fx.home, ['logs', ...args]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

describe.concurrent('argo logs --stats', () => {
  it('--json: one object with counts, trimmed rate, chars_used spread and tokens per second', async () => {
    const result = await argo(fx.home, ['logs', '--stats', '--json', '--session', 'work,play']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      turns: 8,
      first: fx.all[0]?.timestamp,
      last: fx.all[7]?.timestamp,
      by_type: { question: 2, instruction: 2, correction: 2, meta: 2, other: 0 },
      by_status: { ok: 4, interrupted: 2, error: 2 },
      by_strength: { strong: 2, moderate: 1, weak: 2, none: 3 },
      by_reason: { continuation: 2, clarification: 2, session: 1, none: 3 },
      by_model: { argo: 6, 'llama3:8b': 2 },
      replayed: 5,
      trimmed: 2,
      trimmed_rate: 0.4,
      chars_used: { mean: 2380, p95: 5500 },
      first_token_ms: { mean: 100, p95: 100 },
      tokens_per_second: 50,
      eval_tokens: 400,
      unreadable: 0,
    });
  });

  it('as text, one line per measure', async () => {
    const result = await argo(fx.home, ['logs', '--stats', '--session', 'work']);
    expect(result.stdout).toBe(
      [
        'turns       4  2025-01-01 10:00 → 2025-01-01 10:03',
        'type        question 1 · instruction 1 · correction 1 · meta 1 · other 0',
        'status      ok 2 · interrupted 1 · error 1',
        'strength    strong 1 · moderate 0 · weak 1 · none 2',
        'reason      continuation 1 · clarification 1 · session 0 · none 2',
        'model       argo 3 · llama3:8b 1',
        'trimmed     1 of 2 replayed turns (50.0%)',
        'chars_used  mean 2950 · p95 5500',
        'first token mean 100 ms · p95 100 ms',
        'speed       50 tokens/s (200 tokens)',
        '',
      ].join('\n'),
    );
  });
});

describe('a turn filed in a later day than its own', () => {
  it('--since/--until its own date find it: a file may hold turns that started up to two days before its name', async () => {
    const { home, paths } = tempData();
    // One instant, 2025-01-02 11:58–11:59 UTC: 01:58 on 2025-01-03 at UTC+14, 23:59 on 2025-01-01 at UTC−12.
    const east = await recordTurns(paths, 'east', 1, { date: '2025-01-03', start: '2025-01-03T01:58:00+14:00' });
    const west = await recordTurns(paths, 'west', 1, { date: '2025-01-01', start: '2025-01-01T23:59:00-12:00' });
    expect(readdirSync(paths.logs).filter((name) => name.endsWith('.log'))).toEqual(['2025-01-03.log']);
    const both = [...east.entries, ...west.entries].map((entry) => entry.id);
    const inWest = { env: { TZ: 'Etc/GMT+12' } };
    expect(ids((await argo(home, ['logs', '--json', '--since', '2025-01-01', '--until', '2025-01-01'], inWest)).stdout)).toEqual(both);
    expect(ids((await argo(home, ['logs', '--json', '--until', '2025-01-01'], inWest)).stdout)).toEqual(both);
    expect(ids((await argo(home, ['logs', '--json', '--since', '2025-01-02'], inWest)).stdout)).toEqual([]);
    // Newest first is write order, whatever the zones: the west turn was written last.
    expect(ids((await argo(home, ['logs', '--json', '-n', '1'])).stdout)).toEqual(both.slice(1));
  });
});

describe('-q and a line another writer stored with \\u escapes', () => {
  it('finds non-ASCII text stored as Python writes it ("caf\\u00e9"), alone and with a session', async () => {
    const { home, paths } = tempData();
    const turn = makeEntry({ id: 'escaped00001', user_prompt: 'un café au lait' });
    appendRaw(paths, '2025-01-01', `${JSON.stringify(turn).replace('é', '\\u00e9')}\n`);
    for (const args of [['-q', 'café'], ['-q', 'CAFÉ'], ['-q', 'lait'], ['-q', 'café', '-s', 'work']]) {
      expect(ids((await argo(home, ['logs', '--json', ...args])).stdout)).toEqual(['escaped00001']);
    }
    expect((await argo(home, ['logs', '--json', '-q', 'thé'])).stdout).toBe('');
  });
});

describe('unreadable lines', () => {
  it('readers skip and count them (one stderr line); check lists each with file:line and exits 1', async () => {
    const { home, paths } = tempData();
    const { entries } = await recordTurns(paths, 'work', 2, { date: '2025-01-01' });
    const file1 = appendRaw(paths, '2025-01-01', '{"id":"truncated","sess\n\u0000\u0001\n');
    await recordTurns(paths, 'work', 1, { date: '2025-01-01' });
    writeFileSync(join(paths.logs, '2025-01-02.log'), '');
    const file3 = appendRaw(paths, '2025-01-03', `${JSON.stringify(makeEntry({ id: 'last-ok', session_id: 'x' }))}\n{"id":"cut`);
    appendFileSync(file1, Buffer.from([0xff, 0xfe, 0x0a]));
    // UTF-8, though not JSON: an escape sequence, and a U+FFFD written as such.
    appendFileSync(file1, '\x1b]0;X\x07garbage\nnot \ufffd json\n');

    const shown = await argo(home, ['logs', '--json']);
    expect(shown.code).toBe(0);
    expect(ids(shown.stdout)).toEqual([...entries.map((entry) => entry.id), expect.any(String), 'last-ok']);
    expect(shown.stderr).toBe('argo: skipped 6 unreadable log lines; run "argo logs check" to list them\n');

    const check = await argo(home, ['logs', 'check']);
    expect(check.code).toBe(1);
    expect(check.stdout.split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^${file1}:3: truncated JSON`)),
      `${file1}:4: binary data (NUL bytes)`,
      `${file1}:6: binary data (not UTF-8 text)`,
      // Where the line stops being JSON, none of its text quoted (a prompt's secret could be in it).
      `${file1}:7: not JSON: it holds control characters (at column 1: expected a value)`,
      `${file1}:8: not JSON (at column 1: expected a value (text goes in "double quotes"))`,
      expect.stringMatching(new RegExp(`^${file3}:2: truncated JSON .*; it is the last line and has no newline \\(a write cut short\\)$`)),
      '',
    ]);
    expect(check.stderr).toBe('argo: 6 unreadable lines in 2 of 3 log files; readers skip them. Fix or delete those lines by hand if you want them gone\n');

    const json = await argo(home, ['logs', 'check', '--json']);
    expect(json.stdout.split('\n').filter(Boolean).map((line): unknown => JSON.parse(line))).toEqual([
      { file: file1, line: 3, reason: expect.stringMatching(/^truncated JSON/) as unknown },
      { file: file1, line: 4, reason: 'binary data (NUL bytes)' },
      { file: file1, line: 6, reason: 'binary data (not UTF-8 text)' },
      { file: file1, line: 7, reason: expect.stringMatching(/^not JSON: it holds control characters/) as unknown },
      { file: file1, line: 8, reason: expect.stringMatching(/^not JSON \(/) as unknown },
      { file: file3, line: 2, reason: expect.stringMatching(/^truncated JSON/) as unknown },
    ]);
  });

  it('check names a day taken by a folder, a link or a named pipe: no turn of that day could be written', async () => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'w', 1, { date: '2025-01-01' });
    mkdirSync(join(paths.logs, '2025-01-02.log'));
    symlinkSync(join(paths.logs, '2025-01-01.log'), join(paths.logs, '2025-01-03.log'));
    execFileSync('mkfifo', [join(paths.logs, '2025-01-05.log')]);
    const check = await argo(home, ['logs', 'check']);
    expect(check).toMatchObject({
      code: 1,
      stdout:
        `${join(paths.logs, '2025-01-02.log')}: a folder, not a log file: Argo cannot write that day's turns there, nor rewrite it; move it away\n` +
        `${join(paths.logs, '2025-01-03.log')}: a symbolic link, not a log file: Argo cannot write that day's turns there, nor rewrite it; replace the link with the real file\n` +
        `${join(paths.logs, '2025-01-05.log')}: a named pipe, not a log file: Argo cannot write that day's turns there, nor rewrite it; move it away\n`,
      stderr: 'argo: 3 days of the log cannot be written (listed above)\n',
    });
    const json = await argo(home, ['logs', 'check', '--json']);
    expect(json.stdout.split('\n').filter(Boolean).map((line): unknown => JSON.parse(line))).toEqual([
      { file: join(paths.logs, '2025-01-02.log'), line: null, reason: expect.stringMatching(/^a folder, not a log file/) as unknown },
      { file: join(paths.logs, '2025-01-03.log'), line: null, reason: expect.stringMatching(/^a symbolic link, not a log file/) as unknown },
      { file: join(paths.logs, '2025-01-05.log'), line: null, reason: expect.stringMatching(/^a named pipe, not a log file/) as unknown },
    ]);
    // A day blocked and a line unreadable: still one line on stderr. The link leads to a day already
    // read (2025-01-01), so it is not read again: two log files, not three.
    appendRaw(paths, '2025-01-04', '{"id":"cut\n');
    const both = await argo(home, ['logs', 'check']);
    expect(both.code).toBe(1);
    expect(both.stderr).toBe(
      'argo: 3 days of the log cannot be written (listed above), and 1 unreadable line in 1 of 2 log files; readers skip them. Fix or delete those lines by hand if you want them gone\n',
    );
  });

  it('check names a turn logged twice (a backup appended back) with where it was first, and exits 1', async () => {
    const { home, paths } = tempData();
    const { entries } = await recordTurns(paths, 'work', 2, { date: '2025-01-01' });
    const first = join(paths.logs, '2025-01-01.log');
    const copy = appendRaw(paths, '2025-01-02', readFileSync(first, 'utf8'));
    const check = await argo(home, ['logs', 'check']);
    const [a, b] = entries.map((entry) => entry.id);
    expect(check).toMatchObject({
      code: 1,
      stdout: `${copy}:1: turn id "${a}" also at ${first}:1\n${copy}:2: turn id "${b}" also at ${first}:2\n`,
      stderr: 'argo: 2 lines repeat a turn logged earlier (listed above); argo logs shows such a turn twice and --stats counts it twice. Delete the later copy by hand\n',
    });
    expect(ids((await argo(home, ['logs', '--json'])).stdout)).toEqual([a, b, a, b]);
    const json = await argo(home, ['logs', 'check', '--json']);
    expect(json.stdout.split('\n').filter(Boolean).map((line): unknown => JSON.parse(line))).toEqual([
      { file: copy, line: 1, reason: `turn id "${a}" also at ${first}:1` },
      { file: copy, line: 2, reason: `turn id "${b}" also at ${first}:2` },
    ]);
  });

  it('check on a clean log exits 0', async () => {
    const result = await argo(fx.home, ['logs', 'check']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^ok: \d+ log files, 11 turns, no unreadable lines\n$/);
  });
});

describe('argo logs prune and rm', () => {
  it('prune refuses without --yes off a terminal, lists with --dry-run, deletes whole days with --yes, keeps the two days before the cutoff’s', async () => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'old', 2, { date: '2025-01-01' });
    await recordTurns(paths, 'work', 2, { date: '2025-01-01' });
    const kept = await recordTurns(paths, 'work', 2, { date: '2025-01-03' });

    const refused = await argo(home, ['logs', 'prune', '--older-than', '2025-01-04']);
    expect(refused).toMatchObject({ code: 2, stdout: '', stderr: 'argo: logs prune deletes history: pass --yes to confirm (there is no terminal to ask on)\n' });

    const dry = await argo(home, ['logs', 'prune', '--older-than', '2025-01-04', '--dry-run']);
    expect(dry.stdout).toMatch(new RegExp(`^would delete 1 log file \\(2025-01-01.log, [\\d.]+ KB\\):\\n  ${join(paths.logs, '2025-01-01.log')}\\n$`));
    expect(existsSync(join(paths.logs, '2025-01-01.log'))).toBe(true);

    const done = await argo(home, ['logs', 'prune', '--older-than', '2025-01-04', '--yes']);
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/^deleted 1 log file \(2025-01-01.log, [\d.]+ KB\); updated 1 session index; removed 1 session left without turns \(old\)\n$/);
    expect(readdirSync(paths.logs)).toEqual(['2025-01-03.log']);
    expect(await readSession(paths.sessions, 'work')).toMatchObject({ turns: 2 });

    const show = await argo(home, ['sessions', 'show', 'work', '--json']);
    expect((JSON.parse(show.stdout) as { turns: LogEntry[] }).turns.map((entry) => entry.id)).toEqual(kept.entries.map((entry) => entry.id));

    // 2025-01-03.log may hold turns after 2025-01-05 00:00 here, written in a zone further west.
    const nothing = await argo(home, ['logs', 'prune', '--older-than', '2025-01-05', '--yes']);
    expect(nothing).toMatchObject({
      code: 0,
      stdout: "nothing to prune: no log file is named before 2025-01-03 (two days before the cutoff's: a later day's file may hold newer turns, written in another time zone)\n",
    });
    // A cutoff before the year 1 is older than every file: none goes (its era year, 2081, would have taken them all).
    const ancient = await argo(home, ['logs', 'prune', '--older-than', '1500000d', '--yes']);
    expect(ancient).toMatchObject({ code: 0, stdout: expect.stringMatching(/^nothing to prune: no log file is named before -\d{4}-\d\d-\d\d \(/) as unknown });
    expect(readdirSync(paths.logs)).toEqual(['2025-01-03.log']);
    expect((await argo(home, ['logs', 'prune', '--older-than', 'never', '--yes'])).code).toBe(2);
  });

  it('prune in another time zone than the writer keeps every turn --since lists: written at UTC−12, pruned at UTC+14', async () => {
    const ollama = await startOllama();
    const { home, paths } = tempData();
    // The two zones' days are one or two apart at any instant: the writer's file is always named before the pruner's today.
    const asked = await runArgo(['-s', 'srv', 'written far west'], { home, host: ollama.url, env: { TZ: 'Etc/GMT+12' } });
    expect(asked.code).toBe(0);
    const east = { env: { TZ: 'Etc/GMT-14' } };
    const listed = async (): Promise<string[]> => ids((await argo(home, ['logs', '--since', 'today', '--json'], east)).stdout);
    const [turn] = await listed();
    expect(turn).toBeDefined();

    const dry = await argo(home, ['logs', 'prune', '--older-than', 'today', '--dry-run'], east);
    expect(dry).toMatchObject({ code: 0, stdout: expect.stringMatching(/^nothing to prune: no log file is named before / ) as unknown });
    for (const when of ['today', '1m']) {
      expect(await argo(home, ['logs', 'prune', '--older-than', when, '--yes'], east)).toMatchObject({ code: 0, stdout: dry.stdout });
    }
    expect(await listed()).toEqual([turn]);
    expect(readdirSync(paths.logs)).toHaveLength(1);
    expect(await readSession(paths.sessions, 'srv')).toMatchObject({ turns: 1 });
  });

  it('rm --session deletes the session’s lines and record; other sessions stay readable through their index', async () => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'work', 2, { date: '2025-01-01' });
    const play = await recordTurns(paths, 'play', 2, { date: '2025-01-01' });
    await recordTurns(paths, 'work', 2, { date: '2025-01-01' });
    const playIndex = () => readFileSync(indexPath(paths.sessions, 'play'), 'utf8');

    expect((await argo(home, ['logs', 'rm', '--session', 'work'])).code).toBe(2);
    const result = await argo(home, ['logs', 'rm', '--session', 'work', '--yes']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^deleted 4 lines \([\d.]+ KB\) of session "work" from 1 log file, and its record and index\n$/);
    expect(await readSession(paths.sessions, 'work')).toBeNull();
    expect(existsSync(indexPath(paths.sessions, 'work'))).toBe(false);
    expect(ids((await argo(home, ['logs', '--json'])).stdout)).toEqual(play.entries.map((entry) => entry.id));

    const before = playIndex();
    const show = await argo(home, ['sessions', 'show', 'play', '--json']);
    expect((JSON.parse(show.stdout) as { turns: LogEntry[] }).turns.map((entry) => entry.id)).toEqual(play.entries.map((entry) => entry.id));
    expect(playIndex()).toBe(before); // read through the shifted offsets: no rebuild needed

    const unknown = await argo(home, ['logs', 'rm', '--session', 'work', '--yes']);
    expect(unknown).toMatchObject({ code: 2, stderr: 'argo: --session: no session named "work"; known sessions: play (a session id also works)\n' });
    const typo = await argo(home, ['logs', 'rm', '--session', '00000000-0000-4000-8000-00000000dead', '--yes']);
    expect(typo).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'argo: --session: no session with id 00000000-0000-4000-8000-00000000dead (no record, no log lines); known sessions: play; argo sessions --json shows their ids\n',
    });
  });
});

describe('--session with the name of a removed session', () => {
  it('finds the turns it left while no session has the name; a new session of that name wins; logs rm never guesses between several', async () => {
    const { home, paths } = tempData();
    const first = await recordTurns(paths, 'work', 2, { date: '2025-01-01' });
    await recordTurns(paths, 'play', 1, { date: '2025-01-01' });
    expect((await argo(home, ['sessions', 'rm', 'work', '--yes'])).code).toBe(0);
    expect(ids((await argo(home, ['logs', '--json', '-s', 'work'])).stdout)).toEqual(first.entries.map((entry) => entry.id));
    const exported = await argo(home, ['export', '--format', 'sharegpt', '--all', '-s', 'work']);
    expect(exported.code).toBe(0);
    expect(exported.stdout.trim().split('\n')).toHaveLength(2);

    const second = await recordTurns(paths, 'work', 1, { date: '2025-01-02' });
    expect(ids((await argo(home, ['logs', '--json', '-s', 'work'])).stdout)).toEqual(second.entries.map((entry) => entry.id));
    expect((await argo(home, ['sessions', 'rm', 'work', '--yes'])).code).toBe(0);
    expect(ids((await argo(home, ['logs', '--json', '-s', 'work'])).stdout)).toEqual([...first.entries, ...second.entries].map((entry) => entry.id));

    const refused = await argo(home, ['logs', 'rm', '-s', 'work', '--yes']);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(/^argo: --session: "work" was the name of 2 removed sessions \([0-9a-f-]{36}, [0-9a-f-]{36}\); give the id of the one to delete\n$/);
    expect(ids((await argo(home, ['logs', '--json', '-s', 'work'])).stdout)).toHaveLength(3);
  });
});

describe('--session with the last name of a session renamed, then removed', () => {
  it('finds its turns by the name it had when removed, shows them under it, and logs rm and export find it too', async () => {
    const { home, paths } = tempData();
    const b = await recordTurns(paths, 'A', 1, { date: '2025-01-01' });
    expect((await argo(home, ['sessions', 'rename', 'A', 'B'])).code).toBe(0);
    const c = await recordTurns(paths, 'A', 1, { date: '2025-01-01', start: '2025-01-01T11:00:00Z' });
    expect((await argo(home, ['sessions', 'rename', 'A', 'C'])).code).toBe(0);
    const a = await recordTurns(paths, 'A', 1, { date: '2025-01-01', start: '2025-01-01T12:00:00Z' });
    expect((await argo(home, ['sessions', 'rm', 'B', '--yes'])).code).toBe(0);
    // The note of its last name is private, as every file of the data home.
    expect(statSync(join(paths.sessions, '.removed-sessions.jsonl')).mode & 0o777).toBe(0o600);

    expect(ids((await argo(home, ['logs', '--json', '-s', 'B'])).stdout)).toEqual(b.entries.map((entry) => entry.id));
    expect(ids((await argo(home, ['logs', '--json', '-s', 'A'])).stdout)).toEqual(a.entries.map((entry) => entry.id));
    expect(ids((await argo(home, ['logs', '--json', '-s', 'C'])).stdout)).toEqual(c.entries.map((entry) => entry.id));
    const table = (await argo(home, ['logs'])).stdout.split('\n');
    expect(table[0]).toContain(' B (removed) ');
    expect(table[1]).toContain(' C ');
    expect(table[2]).toContain(' A ');
    const exported = await argo(home, ['export', '--format', 'sharegpt', '--all', '-s', 'B']);
    expect(exported).toMatchObject({ code: 0 });
    expect(exported.stdout.trim().split('\n')).toHaveLength(1);
    expect(await argo(home, ['logs', 'rm', '-s', 'B', '--yes'])).toMatchObject({ code: 0 });
    expect(ids((await argo(home, ['logs', '--json'])).stdout)).toEqual([...c.entries, ...a.entries].map((entry) => entry.id));
  });

  it("a fork's inherited turns are shown under its removed parent's last name, as its header names it", async () => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'work', 2, { date: '2025-01-01' });
    expect((await argo(home, ['sessions', 'fork', 'work', 'work-a'])).code).toBe(0);
    expect((await argo(home, ['sessions', 'rename', 'work', 'work-renamed'])).code).toBe(0);
    // Removed without a note of its last name, as an earlier version removed it: the fork's link still names it.
    const { rm } = await import('node:fs/promises');
    await rm(join(paths.sessions, 'work-renamed.json'));
    await rm(join(paths.sessions, 'work-renamed.idx'), { force: true });
    const shown = (await argo(home, ['sessions', 'show', 'work-a'])).stdout;
    expect(shown).toMatch(/forked from work-renamed@\S+ \(removed\)/);
    expect(shown).toContain('work-renamed (removed)');
    expect(shown).not.toContain(' work (removed)');
    expect(ids((await argo(home, ['logs', '--json', '-s', 'work-renamed'])).stdout)).toHaveLength(2);
  });
});

describe('--session with an id', () => {
  const DEAD = '00000000-0000-4000-8000-00000000dead';

  it('an id with no record and no logged turn is refused by logs, logs rm and export alike (exit 2, one line)', async () => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'work', 1, { date: '2025-01-01' });
    const line = `argo: --session: no session with id ${DEAD} (no record, no log lines); known sessions: work; argo sessions --json shows their ids\n`;
    for (const args of [['logs', '-s', DEAD], ['logs', '--json', '-s', DEAD.toUpperCase()], ['logs', '--stats', '-s', `work,${DEAD}`], ['logs', 'rm', '-s', DEAD, '--yes'], ['export', '--format', 'sharegpt', '-s', DEAD]]) {
      expect(await argo(home, args)).toMatchObject({ code: 2, stdout: '', stderr: line });
    }
    // With no session at all, there are no ids to look up.
    const empty = tempData();
    expect(await argo(empty.home, ['logs', '-s', DEAD])).toMatchObject({ code: 2, stderr: `argo: --session: no session with id ${DEAD} (no record, no log lines); there are no sessions yet\n` });
  });

  it("a removed session's id still lists the turns it left in the log; an existing session's id lists its own", async () => {
    const { home, paths } = tempData();
    const gone = await recordTurns(paths, 'gone', 2, { date: '2025-01-01' });
    const kept = await recordTurns(paths, 'kept', 1, { date: '2025-01-01' });
    const goneId = defined(await readSession(paths.sessions, 'gone'), 'session gone').id;
    const keptId = defined(await readSession(paths.sessions, 'kept'), 'session kept').id;
    expect((await argo(home, ['sessions', 'rm', 'gone', '--yes'])).code).toBe(0);
    const listed = await argo(home, ['logs', '--json', '-s', goneId]);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(ids(listed.stdout)).toEqual(gone.entries.map((entry) => entry.id));
    expect(ids((await argo(home, ['logs', '--json', '-s', keptId])).stdout)).toEqual(kept.entries.map((entry) => entry.id));
  });
});

/** A writer process: the real recordTurn (from the source, through tsx), `count` turns, some into a later day's file. */
function writer(home: string, name: string, count: number, dates: string[]): Promise<number> {
  const script = `
    const { recordTurn } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src/sessions/record-turn.ts')).href)});
    const { openSession } = await import(${JSON.stringify(pathToFileURL(join(import.meta.dirname, '../../src/sessions/store.ts')).href)});
    const home = ${JSON.stringify(home)};
    const paths = { logs: home + '/logs', sessions: home + '/sessions' };
    const dates = ${JSON.stringify(dates)};
    const session = await openSession(paths.sessions, ${JSON.stringify(name)}, new Date().toISOString());
    for (let i = 0; i < ${count}; i++) {
      const date = dates[Math.floor((i * dates.length) / ${count})];
      const entry = ${JSON.stringify(makeEntry())};
      Object.assign(entry, { id: ${JSON.stringify(name)} + '-' + i, session: ${JSON.stringify(name)}, session_id: session.id,
        timestamp: date + 'T12:00:00.000Z', user_prompt: 'turn ' + i + ' ' + 'x'.repeat(i * 97) });
      await recordTurn(paths, session, entry, date);
      if (i % 5 === 0) await new Promise((resolve) => setImmediate(resolve)); // let the other writers in
    }`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
}

/**
 * Appends one turn per id to the day's file, each only after the follower printed the one before
 * (the id doubles as the prompt, so a `-q` filter can match it).
 */
async function sentinels(logsDir: string, day: string, markers: string[], stdout: () => string): Promise<void> {
  for (const id of markers) {
    const entry = makeEntry({ id, user_prompt: id, timestamp: `${day}T12:00:00.000Z` });
    appendFileSync(join(logsDir, `${day}.log`), `${JSON.stringify(entry)}\n`);
    await waitFor(() => {
      expect(ids(stdout())).toContain(id);
    });
  }
}

describe('argo logs --follow', () => {
  it('prints every turn appended by concurrent writers exactly once, a new day included; waits for partial lines; Ctrl-C exits 0', async () => {
    const { home, paths } = tempData();
    const backlog = await recordTurns(paths, 'old', 12, { date: '2025-01-01' });
    const child = spawn(process.execPath, [ARGO_BIN, 'logs', '-f', '--json', '--limit', '3'], { env: scrubbedEnv({ home, env: ENV }) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const until = (count: number): Promise<void> =>
      waitFor(() => {
        expect(ids(stdout), `stderr: ${stderr}`).toHaveLength(count);
      });
    await until(3); // the backlog
    expect(ids(stdout)).toEqual(backlog.entries.slice(-3).map((entry) => entry.id));

    const codes = await Promise.all([
      writer(home, 'w1', 30, ['2025-01-01']),
      writer(home, 'w2', 30, ['2025-01-01', '2025-01-02']),
      writer(home, 'w3', 30, ['2025-01-01', '2025-01-02']),
      writer(home, 'w4', 30, ['2025-01-02']),
    ]);
    expect(codes).toEqual([0, 0, 0, 0]);
    await until(123); // all 120 new turns

    // A line written in two pieces is printed once, when its newline arrives.
    const partial = JSON.stringify(makeEntry({ id: 'partial', timestamp: '2025-01-02T13:00:00Z' }));
    appendFileSync(join(paths.logs, '2025-01-02.log'), partial.slice(0, 50));
    // Two markers one after the other in a later file: the poll that prints the second one began
    // after the first was printed, so it read the half line's file whole before reaching it.
    await sentinels(paths.logs, '2025-01-03', ['marker-1', 'marker-2'], () => stdout);
    expect(ids(stdout)).toHaveLength(125);
    expect(ids(stdout).slice(-2)).toEqual(['marker-1', 'marker-2']);
    appendFileSync(join(paths.logs, '2025-01-02.log'), `${partial.slice(50)}\n`);
    await until(126); // the completed line

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    const seen = ids(stdout);
    expect(new Set(seen).size).toBe(seen.length);
    const expected = [
      ...backlog.entries.slice(-3).map((entry) => entry.id),
      ...['w1', 'w2', 'w3', 'w4'].flatMap((name) => Array.from({ length: 30 }, (_, i) => `${name}-${i}`)),
      'marker-1', 'marker-2', 'partial',
    ];
    expect([...seen].sort()).toEqual([...expected].sort());
    // Each writer's turns come out in the order it wrote them.
    for (const name of ['w1', 'w2', 'w3', 'w4']) {
      const mine = seen.filter((id) => id.startsWith(`${name}-`)).map((id) => Number(id.slice(3)));
      expect(mine).toEqual([...mine].sort((a, b) => a - b));
    }
  });

  it.each([
    ['SIGTERM', 143, 'argo: terminated (SIGTERM)\n'],
    ['SIGHUP', 129, 'argo: hung up (SIGHUP)\n'],
  ] as const)('%s ends it as it ends any command: exit %i, saying so', async (signal, code, line) => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'old', 2, { date: '2025-01-01' });
    const child = spawn(process.execPath, [ARGO_BIN, 'logs', '-f', '--json'], { env: scrubbedEnv({ home, env: ENV }) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // A marker printed as new: the follow is under way.
    await sentinels(paths.logs, '2025-01-02', ['marker'], () => stdout);
    child.kill(signal);
    expect(await exited).toBe(code);
    expect(stderr).toBe(line);
    expect(ids(stdout)).toHaveLength(3);
  });

  it('applies the filters to new turns, and starts on a directory that does not exist yet', async () => {
    const { home } = tempData();
    const empty = join(home, 'fresh');
    const child = spawn(process.execPath, [ARGO_BIN, 'logs', '-f', '--json', '-q', 'turn 7'], { env: scrubbedEnv({ home: empty, env: ENV }) });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // Whether the follower starts before or after the first write, w-7 comes out once: from the
    // backlog or as a new line.
    expect(await writer(empty, 'w', 10, ['2025-01-05'])).toBe(0);
    await waitFor(() => {
      expect(ids(stdout)).toEqual(['w-7']);
    });
    // Matching markers in a later file: once both are out, every earlier line has been judged.
    await sentinels(join(empty, 'logs'), '2025-01-06', ['turn 7 marker-1', 'turn 7 marker-2'], () => stdout);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(ids(stdout)).toEqual(['w-7', 'turn 7 marker-1', 'turn 7 marker-2']);
  });

  it('-s NAME follows a session that does not exist yet, saying so once: its turns come out once it is written to, no other', async () => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'old', 2, { date: '2025-01-01' });
    expect(await argo(home, ['logs', '-s', 'job'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/^argo: --session: no session named "job"; /) as unknown });
    const child = spawn(process.execPath, [ARGO_BIN, 'logs', '-f', '--json', '-s', 'job'], { env: scrubbedEnv({ home, env: ENV }) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const note = 'no session named "job" yet; following, its turns are shown as they are written\n';
    await waitFor(() => {
      expect(stderr).toBe(note);
    });
    // Another session's turn first: once job's are out, it has been judged (and left out).
    expect(await writer(home, 'other', 1, ['2025-01-05'])).toBe(0);
    expect(await writer(home, 'job', 2, ['2025-01-05'])).toBe(0);
    await waitFor(() => {
      expect(ids(stdout)).toEqual(['job-0', 'job-1']);
    });
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toBe(note);
  });

  it('with --all, the backlog is every matching turn, not the newest 10', async () => {
    const { home, paths } = tempData();
    const backlog = await recordTurns(paths, 'old', 12, { date: '2025-01-01' });
    const child = spawn(process.execPath, [ARGO_BIN, 'logs', '-f', '--json', '--all'], { env: scrubbedEnv({ home, env: ENV }) });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // A marker after the backlog: once it is out, the whole backlog is.
    await sentinels(paths.logs, '2025-01-02', ['marker'], () => stdout);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(ids(stdout)).toEqual([...backlog.entries.map((entry) => entry.id), 'marker']);
  });

  it('after logs rm rewrites the file it reads, prints the turn appended next once, and reads no line from its middle', async () => {
    const { home, paths } = tempData();
    const kept = await recordTurns(paths, 'play', 2, { date: '2025-01-01' });
    await recordTurns(paths, 'work', 3, { date: '2025-01-01' });
    const child = spawn(process.execPath, [ARGO_BIN, 'logs', '-f', '--json', '--all'], { env: scrubbedEnv({ home, env: ENV }) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await waitFor(() => {
      expect(ids(stdout)).toHaveLength(5);
    });
    expect((await argo(home, ['logs', 'rm', '--session', 'work', '--yes'])).code).toBe(0);
    // Longer than what rm took out: the new file grows past where the follower was in the old one.
    const after = makeEntry({ id: 'after-rm', user_prompt: 'x'.repeat(5000), timestamp: '2025-01-01T13:00:00.000Z' });
    appendFileSync(join(paths.logs, '2025-01-01.log'), `${JSON.stringify(after)}\n`);
    await sentinels(paths.logs, '2025-01-01', ['marker'], () => stdout);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(ids(stdout).slice(5)).toEqual(['after-rm', 'marker']);
    expect(ids(stdout).slice(0, 5)).toEqual(expect.arrayContaining(kept.entries.map((entry) => entry.id)));
  });

  it('ends by itself (exit 0) once the reader of its output has gone away', async () => {
    const { home } = tempData();
    const child = spawn(process.execPath, [ARGO_BIN, 'logs', '-f', '--json'], { env: scrubbedEnv({ home, env: ENV }) });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const firstLine = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    // Written before or after the follower starts, the turn comes out: from the backlog or as new.
    expect(await writer(home, 'a', 1, ['2025-01-05'])).toBe(0);
    await firstLine;
    child.stdout.destroy(); // like `| head -1`
    expect(await writer(home, 'b', 1, ['2025-01-05'])).toBe(0);
    expect(await exited).toBe(0);
  });
});
