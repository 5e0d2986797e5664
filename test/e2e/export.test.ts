// `argo export -o` end to end: the built bin/argo on a data home written with the real writer, its
// output redirected by a real shell.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordTurns, tempData } from '../query/helpers.js';
import { startProgramInPty } from '../support/pty.js';
import { ARGO_BIN, runArgo, scrubbedEnv } from '../support/run-argo.js';

let home: string;
let lines: string;
beforeAll(async () => {
  const data = tempData();
  home = data.home;
  await recordTurns(data.paths, 'work', 2);
  const all = await runArgo(['export', '--format', 'sharegpt', '--all'], { home });
  expect(all).toMatchObject({ code: 0, stderr: '' });
  lines = all.stdout;
  expect(lines.trim().split('\n')).toHaveLength(2);
});

/** `sh -c script` with $ARGO the built argo and the data home set, in a fresh folder; what it wrote there, by name. */
function inShell(script: string, files: Record<string, string>): { code: number | null; stderr: string; files: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'argo-export-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const result = spawnSync('/bin/sh', ['-c', script], { cwd: dir, encoding: 'utf8', env: { ...scrubbedEnv({ home }), ARGO: `"${process.execPath}" "${ARGO_BIN}"` } });
  return { code: result.status, stderr: result.stderr, files: Object.fromEntries(Object.keys(files).map((name) => [name, readFileSync(join(dir, name), 'utf8')])) };
}

describe('export -o a descriptor the shell opened: appended to as the shell set it up, never truncated', () => {
  it.each([
    ['/dev/stdout >> all.jsonl', 'eval "$ARGO export --format sharegpt --all -o /dev/stdout" >> all.jsonl', 'argo: wrote 2 trajectories to /dev/stdout\n'],
    ['/proc/self/fd/1 >> all.jsonl', 'eval "$ARGO export --format sharegpt --all -o /proc/self/fd/1" >> all.jsonl', 'argo: wrote 2 trajectories to /proc/self/fd/1\n'],
    ['/dev/fd/3 3>> all.jsonl', 'eval "$ARGO export --format sharegpt --all -o /dev/fd/3" 3>> all.jsonl', 'argo: wrote 2 trajectories to /dev/fd/3\n'],
    ['/dev/stderr 2>> all.jsonl', 'eval "$ARGO export --format sharegpt --all -o /dev/stderr" 2>> all.jsonl', ''],
  ])('%s', (_case, script, stderr) => {
    const result = inShell(script, { 'all.jsonl': 'earlier\n' });
    expect(result).toMatchObject({ code: 0, stderr });
    const appended = stderr === '' ? `${lines}argo: wrote 2 trajectories to /dev/stderr\n` : lines;
    expect(result.files['all.jsonl']).toBe(`earlier\n${appended}`);
  });

  it('standard input (/dev/stdin < all.jsonl) is refused, exit 2: appending would write into the file read from', () => {
    const result = inShell('eval "$ARGO export --format sharegpt --all -o /dev/stdin" < all.jsonl', { 'all.jsonl': 'earlier\n' });
    expect(result).toMatchObject({ code: 2, stderr: 'argo: --output /dev/stdin names standard input: give a file to write, or leave it out to write to standard output\n' });
    expect(result.files['all.jsonl']).toBe('earlier\n');
  });

  it('a file the shell truncated (>) holds what was written before the export, then the export', () => {
    const result = inShell('{ echo header; eval "$ARGO export --format sharegpt --all -o /dev/stdout"; eval "$ARGO export --format sharegpt --all -o /dev/fd/4" 4>&1; } > all.jsonl', { 'all.jsonl': 'much longer earlier text, gone\n' });
    expect(result).toMatchObject({ code: 0 });
    expect(result.files['all.jsonl']).toBe(`header\n${lines}${lines}`);
  });
});

describe('export -o a descriptor on a terminal', () => {
  it.each([
    ['3>/dev/tty', '-o /dev/fd/3 3>/dev/tty'],
    ['-o /dev/tty, a terminal opened by its path', '-o /dev/tty'],
  ])('%s: the JSON is made safe as on standard output (C1 and bidi controls shown, not obeyed)', async (_name, redirect) => {
    const data = tempData();
    await recordTurns(data.paths, 'work', 1, { shape: () => ({ user_prompt: 'clear \u009b2J the screen \u202eexe.txt' }) });
    const terminal = startProgramInPty('/bin/sh', ['-c', `"${process.execPath}" "${ARGO_BIN}" export --format sharegpt --all ${redirect}`], { home: data.home });
    expect((await terminal.exited).code).toBe(0);
    expect(terminal.output).toContain('clear \\u009b2J the screen \\u202eexe.txt');
    expect(terminal.output).not.toContain('\u009b');
    expect(terminal.output).not.toContain('\u202e');
  });
});

describe("export: the turn's own system prompt", () => {
  it.each([
    ['--system text, then the tool-calling prompt', { system: 'Answer in French.' }, /^Answer in French\.\n\nYou are a function calling AI model\. /],
    ['no --system: the tool-calling prompt alone', {}, /^You are a function calling AI model\. /],
  ])('%s', async (_name, shape, opening) => {
    const data = tempData();
    await recordTurns(data.paths, 'work', 1, { shape: () => shape });
    const exported = await runArgo(['export', '--format', 'sharegpt', '--all'], { home: data.home });
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    const [system] = (JSON.parse(exported.stdout) as { conversations: { from: string; value: string }[] }).conversations;
    expect(system?.from).toBe('system');
    expect(system?.value).toMatch(opening);
  });
});

describe("export: each trajectory's session as it is named now", () => {
  it('a renamed session by its new name, a new session of the old name by its own, a removed one as null with a note', async () => {
    const data = tempData();
    const { session: first } = await recordTurns(data.paths, 'work', 1);
    expect(await runArgo(['sessions', 'rename', 'work', 'job'], { home: data.home })).toMatchObject({ code: 0 });
    const { session: second } = await recordTurns(data.paths, 'work', 1, { start: '2025-01-02T11:00:00.000Z' });
    const { session: third } = await recordTurns(data.paths, 'gone', 1, { start: '2025-01-02T12:00:00.000Z' });
    expect(await runArgo(['sessions', 'rm', 'gone', '--yes'], { home: data.home })).toMatchObject({ code: 0 });
    const exported = await runArgo(['export', '--format', 'sharegpt', '--all'], { home: data.home });
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    const labels = exported.stdout.trim().split('\n').map((line) => {
      const { session, session_note: note, conversations } = JSON.parse(line) as { session: string | null; session_note?: string; conversations: { from: string; value: string }[] };
      return [conversations[1]?.value, session, note];
    });
    expect(labels).toEqual([
      ['work prompt 1', 'job', undefined],
      ['work prompt 1', 'work', undefined],
      ['gone prompt 1', null, 'the session this turn was in has been removed'],
    ]);
    expect([first.id, second.id, third.id]).toHaveLength(new Set([first.id, second.id, third.id]).size);
  });
});

describe('export -o -', () => {
  it.each([
    [['-o', '-'], 'standard output, as without -o'],
    [['--output=-'], 'the same, written out'],
  ])('%j: %s; no file named "-"', async (args) => {
    const cwd = mkdtempSync(join(tmpdir(), 'argo-export-'));
    expect(await runArgo(['export', '--format', 'sharegpt', '--all', ...args], { home, cwd })).toMatchObject({ code: 0, stdout: lines, stderr: '' });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('a file named "-" is ./-', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'argo-export-'));
    expect(await runArgo(['export', '--format', 'sharegpt', '--all', '-o', './-'], { home, cwd })).toMatchObject({ code: 0, stdout: '', stderr: 'argo: wrote 2 trajectories to ./-\n' });
    expect(readFileSync(join(cwd, '-'), 'utf8')).toBe(lines);
  });
});

describe('export -o that cannot name a file: a usage error naming it, nothing written anywhere', () => {
  it.each([
    [['-o', ''], 'argo: --output needs a file name (leave it out to write to standard output)\n'],
    [['--output='], 'argo: --output needs a file name (leave it out to write to standard output)\n'],
    [['-o', 'out/'], 'argo: --output out/ ends in "/", so it names a folder, not a file: give a file\'s name (such as runs.jsonl)\n'],
    [['-o', 'runs.jsonl/'], 'argo: --output runs.jsonl/ ends in "/", so it names a folder, not a file: give a file\'s name (such as runs.jsonl)\n'],
    // A folder that is there is refused up front too, without the "/".
    [['-o', '.'], 'argo: --output . is a folder, not a file: give a file\'s name in it (such as runs.jsonl)\n'],
    [['-o', tmpdir()], `argo: --output ${tmpdir()} is a folder, not a file: give a file's name in it (such as ${join(tmpdir(), 'runs.jsonl')})\n`],
  ])('%j', async (args, stderr) => {
    const cwd = mkdtempSync(join(tmpdir(), 'argo-export-'));
    writeFileSync(join(cwd, 'runs.jsonl'), 'earlier\n');
    expect(await runArgo(['export', '--format', 'sharegpt', '--all', ...args], { home, cwd })).toMatchObject({ code: 2, stdout: '', stderr });
    expect(readdirSync(cwd)).toEqual(['runs.jsonl']);
    expect(readFileSync(join(cwd, 'runs.jsonl'), 'utf8')).toBe('earlier\n');
  });

  it('a missing folder: the file named, its fix not about the data home, nothing left in the working directory', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'argo-export-'));
    const result = await runArgo(['export', '--format', 'sharegpt', '--all', '-o', 'missing/runs.jsonl'], { home, cwd });
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: 'argo: cannot use missing/runs.jsonl: no such file or folder; check the path and its permissions\n' });
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('export -o a file whose name is long', () => {
  it.each([
    ['245 bytes, new', 245, false],
    ['245 bytes, there before', 245, true],
    ['255 bytes, there before', 255, true],
  ])('%s: written, and nothing left beside it', async (_case, length, before) => {
    const cwd = mkdtempSync(join(tmpdir(), 'argo-export-'));
    const name = `${'a'.repeat(length - 6)}.jsonl`;
    if (before) writeFileSync(join(cwd, name), 'earlier\n');
    expect(await runArgo(['export', '--format', 'sharegpt', '--all', '-o', name], { home, cwd })).toMatchObject({ code: 0, stderr: `argo: wrote 2 trajectories to ${name}\n` });
    expect(readdirSync(cwd)).toEqual([name]);
    expect(readFileSync(join(cwd, name), 'utf8')).toBe(lines);
  });
});
