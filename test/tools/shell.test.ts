import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { commandTool, fillArgv, nulArgument, optionLikeArgument } from '../../src/tools/command.js';
import { validateArguments } from '../../src/tools/validate.js';
import { BACKGROUND_NOTE, DETACHED_NOTE, LastOutput, UNREAD_CAP_CHARS, UnreadOutput, commandEnvironment, commandResult, killGroup, lineTailOf, onPath, spawnGroup, tailsWithin } from '../../src/tools/process.js';
import { groupThousands } from '../../src/text/decimal.js';
import { looksSecret } from '../../src/text/secrets.js';
import { commandSeconds, outputResult, processTool, runCommand, runCommandTool } from '../../src/tools/shell.js';
import { loadToolbox } from '../../src/tools/catalog.js';
import { defined } from '../support/defined.js';
import { ToolError } from '../../src/tools/types.js';
import { classifyThrown } from '../../src/agent/taxonomy.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { alive } from '../support/alive.js';
import { waitFor } from '../support/wait.js';

const hasSetsid = spawnSync('setsid', ['--version']).status === 0;
const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-shell-')));
mkdirSync(join(root, 'sub'));
const context = (signal = new AbortController().signal): ToolContext => ({ root, home: root, signal });

describe('run_command', () => {
  it('runs through /bin/sh in the root and returns exit code and both streams', async () => {
    const result = await runCommandTool.run({ command: 'pwd; echo oops >&2; exit 3' }, context());
    expect(result).toEqual({ exit_code: 3, stdout: `${root}\n`, stderr: 'oops\n' });
  });

  it('runs in a directory under the root and refuses one outside', async () => {
    expect((await runCommandTool.run({ command: 'pwd', cwd: 'sub' }, context())).stdout).toBe(`${join(root, 'sub')}\n`);
    await expect(runCommandTool.run({ command: 'pwd', cwd: '..' }, context())).rejects.toThrow('outside the root');
  });

  it('keeps the last 51,200 characters of each stream (where errors are) and says how much there was', async () => {
    const result = await runCommandTool.run({ command: 'head -c 100000 /dev/zero | tr "\\0" a; echo end' }, context());
    expect(String(result.stdout)).toHaveLength(UNREAD_CAP_CHARS);
    expect(String(result.stdout).endsWith('aaend\n')).toBe(true);
    expect(result.stdout_truncated).toBe('showing the last 51,200 characters of 100,004 bytes; narrow the output (grep, head, sed -n) to see other parts');
  });

  it('a result past its budget keeps the exit code, stderr and the end of stdout, within the budget', async () => {
    const result = await runCommandTool.run({ command: "seq 1 3000; echo 'error TS2304: Cannot find name foo' >&2; exit 2" }, { ...context(), resultBudget: 4000 });
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(4000);
    expect(result).toMatchObject({ exit_code: 2, stderr: 'error TS2304: Cannot find name foo\n' });
    expect(String(result.stdout).endsWith('2999\n3000\n')).toBe(true);
    expect(result.stdout_truncated).toBe(`showing the last ${groupThousands(String(result.stdout).length)} characters of 13,893 bytes; narrow the output (grep, head, sed -n) to see other parts`);
    expect(Object.keys(result)).toEqual(['exit_code', 'stdout_truncated', 'stdout', 'stderr']);
  });

  it('a command that ends within its timeout is not cut (0.3 s of work, timeout 1 s)', async () => {
    expect(await runCommandTool.run({ command: 'sleep 0.3; echo done', timeout: 1 }, context())).toEqual({ exit_code: 0, stdout: 'done\n', stderr: '' });
  });

  it.each<[number, string | null]>([
    // timeout in seconds, what is wrong with it
    [0, '"timeout" must be >= 1'],
    [1, null],
    [600, null],
    [601, '"timeout" must be <= 600'],
  ])('a timeout of %i s is valid unless: %s', (timeout, problem) => {
    const args = { command: 'true', timeout };
    expect(validateArguments(runCommandTool, args)).toEqual(problem === null ? { kind: 'ok', args } : { kind: 'invalid', reason: expect.stringContaining(problem) as unknown });
  });

  it.each<[number | undefined, number | undefined, number]>([
    // the model's timeout, toolTimeouts.run_command in seconds → how long the command may run
    [undefined, undefined, 30],
    [5, undefined, 5],
    [600, undefined, 600],
    // The user's setting is the default, and may lengthen it past 30 s (or past 600)…
    [undefined, 120, 120],
    [undefined, 3600, 3600],
    [undefined, 1.5, 1.5],
    // …and the most the model may ask for: a shorter timeout applies, a longer one does not.
    [10, 120, 10],
    [300, 120, 120],
  ])('timeout %j with toolTimeouts.run_command %j s: the command may run %j s', (asked, limitS, seconds) => {
    expect(commandSeconds(asked, limitS)).toBe(seconds);
  });

  it.each<[number | undefined, Record<string, unknown>, string]>([
    // toolTimeouts.run_command in seconds, arguments → the failure
    [undefined, { command: 'sleep 5', timeout: 1 }, 'the command timed out after 1 s and was killed'],
    [0.5, { command: 'sleep 5' }, 'the command timed out after 0.5 s and was killed; to allow longer, set "toolTimeouts": {"run_command": 1000} in config.json'],
    [0.5, { command: 'sleep 5', timeout: 20 }, 'the command timed out after 0.5 s and was killed; to allow longer, set "toolTimeouts": {"run_command": 1000} in config.json'],
  ])('toolTimeouts.run_command %j s, %j: %s', async (limitS, args, message) => {
    await expect(runCommand(args, context(), limitS)).rejects.toMatchObject({ message, retryable: true });
  });

  it.each<[number, number, string, number]>([
    // toolTimeouts.run_command in ms → the timeout's maximum, words of the description, the loop's timer
    [120_000, 120, 'Times out after 120 s, or sooner when timeout asks.', 125_000],
    [1500, 1, 'Times out after 1.5 s, or sooner when timeout asks.', 6500],
    [3_600_000, 3600, 'Times out after 3600 s, or sooner when timeout asks.', 3_605_000],
    [2_147_483_647, 2_147_483, 'Times out after 2147483.647 s, or sooner when timeout asks.', 2_147_483_647],
  ])('toolTimeouts.run_command %i: the model is told it, and the loop waits for the command to be killed', async (ms, maximum, words, timer) => {
    const box = await loadToolbox(['run_command'], { toolTimeouts: { run_command: ms } });
    const tool = defined(box.tools[0]);
    expect(tool.description).toContain(words);
    expect(tool.parameters.properties.timeout).toMatchObject({ maximum });
    expect(tool.timeoutMs).toBe(timer);
    expect(validateArguments(tool, { command: 'true', timeout: maximum + 1 })).toMatchObject({ kind: 'invalid' });
    await box.close();
  });

  it('toolTimeouts.run_command times the command the offered tool runs', async () => {
    const box = await loadToolbox(['run_command'], { toolTimeouts: { run_command: 500 }, toolBudgets: { run_command: 9000 } });
    const tool = defined(box.tools[0]);
    expect(tool.resultBudget).toBe(9000);
    await expect(tool.run({ command: 'sleep 5' }, context())).rejects.toThrow('the command timed out after 0.5 s and was killed');
    await box.close();
  });

  const NUL = (name: string) => `"${name}" contains a NUL byte, which no command can hold; give it without one`;
  it.each<[string, () => Tool, Record<string, unknown>, string | null]>([
    // tool, arguments → why the call is invalid (the model is asked again), or null
    ['run_command', () => runCommandTool, { command: 'echo a\u0000b' }, NUL('command')],
    ['run_command', () => runCommandTool, { command: 'pwd', cwd: 'sub\u0000' }, NUL('cwd')],
    ['run_command', () => runCommandTool, { command: 'echo "a\\0b"' }, null],
    ['process', () => processTool(), { operation: 'start', command: 'sleep 1\u0000' }, NUL('command')],
    ['process', () => processTool(), { operation: 'start', command: 'true', cwd: '\u0000' }, NUL('cwd')],
    ['process', () => processTool(), { operation: 'status', handle: 'proc_1' }, null],
  ])('%s %j: invalid because %j', (_name, made, args, reason) => {
    expect(validateArguments(made(), args)).toEqual(reason === null ? { kind: 'ok', args } : { kind: 'invalid', reason });
  });

  it('kills the whole process group on timeout', async () => {
    const pidFile = join(root, 'child.pid');
    const error = await runCommandTool.run({ command: `sleep 30 & echo $! > ${pidFile}; wait`, timeout: 1 }, context()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message).toBe('the command timed out after 1 s and was killed');
    const child = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => expect(alive(child)).toBe(false));
  });

  it.each([
    ['holding the pipes', 'sleep 25 & echo $!'],
    ['with its output elsewhere', 'sleep 40 >/dev/null 2>&1 & echo $!'],
  ])('stops what the command leaves running in the background (%s) and says so', async (_, command) => {
    const result = await runCommandTool.run({ command, timeout: 20 }, context());
    expect(result).toMatchObject({ exit_code: 0, stderr: '', background: BACKGROUND_NOTE });
    const child = Number(result.stdout);
    await waitFor(() => expect(alive(child)).toBe(false));
  });

  it('SIGKILLs a grandchild that ignores SIGTERM, though the shell that started it is gone', async () => {
    const pidFile = join(root, 'stubborn.pid');
    const command = `sh -c 'trap "" TERM; exec sleep 30' & echo $! > ${pidFile}; wait`;
    await expect(runCommandTool.run({ command, timeout: 1 }, context())).rejects.toThrow('timed out after 1 s');
    const child = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => expect(alive(child)).toBe(false));
  });

  it('a group still within its grace is SIGKILLed when Argo exits', async () => {
    const module = JSON.stringify(join(import.meta.dirname, '../../src/tools/process.ts'));
    // The child prints its pid, is sent SIGTERM (which it ignores), and Argo exits at once.
    const script = `import { killGroup, spawnGroup } from ${module};
      const child = spawnGroup('/bin/sh', ['-c', "trap '' TERM; echo $$; exec sleep 30"], process.cwd());
      child.stdout.once('data', (pid) => { process.stdout.write(String(pid)); killGroup(child); process.exit(0); });`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
    // Well within the 2 s grace: only the kill on exit can have ended it.
    await waitFor(() => expect(alive(Number(stdout))).toBe(false));
  });

  it('kills it on abort (Ctrl-C) as a permanent failure', async () => {
    const controller = new AbortController();
    const running = runCommandTool.run({ command: 'sleep 30' }, context(controller.signal));
    setImmediate(() => controller.abort());
    await expect(running).rejects.toMatchObject({ message: 'the command was interrupted', retryable: false });
  });
});

describe('a command line too long for the system (E2BIG)', () => {
  // One argument over 128 KiB is refused by Linux's execve: the model can put the text in a file.
  const LONG = `echo ${'x'.repeat(200_000)}`;
  const echo = commandTool('echo_it', { description: 'echo', argv: ['echo', '{text}'], parameters: { type: 'object', properties: { text: { type: 'string' } } } });
  it.each<[string, () => Promise<unknown>, string]>([
    ['run_command', () => runCommandTool.run({ command: LONG }, context()), 'the command'],
    ['process start', () => processTool().run({ operation: 'start', command: LONG }, context()), 'the command'],
    ['a command-backed tool', () => echo.run({ text: LONG }, context()), 'an argument (or all of them together)'],
  ])('%s: a failure the model can mend, naming what is too long', async (_tool, call, what) => {
    const error = await call().then(() => null, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message).toBe(`${what} is too long for the system to pass to a program (E2BIG); put long text in a file and have the command read it`);
    expect((error as ToolError).retryable).toBe(true);
  });

  it('process start leaves no handle for a command that never started', async () => {
    const tool = processTool();
    await expect(tool.run({ operation: 'start', command: LONG }, context())).rejects.toThrow('E2BIG');
    expect(await tool.run({ operation: 'list' }, context())).toEqual({ processes: [] });
    tool.close();
  });
});

describe('killGroup', () => {
  // process.kill stands in for the system: for a group found empty it answers as if the id led a group
  // again (another process's, given the id since), so only Argo's own note of the emptied group spares it.
  it.each<[string, string, boolean, NodeJS.Signals[]]>([
    // name, command, wait for it to exit first, signals sent to its group
    ['a running group is sent SIGTERM', 'sleep 30', false, ['SIGTERM']],
    ['a group found empty when its leader exited is never signalled, though its id may lead another group now', 'true', true, []],
  ])('%s', async (_name, command, exitFirst, signals) => {
    const child = spawnGroup('/bin/sh', ['-c', command], root);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    if (exitFirst) await exited;
    const realKill = process.kill.bind(process);
    const kill = vi.spyOn(process, 'kill').mockImplementation((pid, signal) => (exitFirst ? true : realKill(pid, signal)));
    try {
      killGroup(child);
      expect(kill.mock.calls).toEqual(signals.map((signal) => [-(child.pid ?? 0), signal]));
    } finally {
      kill.mockRestore();
    }
    await exited;
  });
});

// setsid puts a process in a session and group of its own: the group's kill cannot reach it. What
// Argo can do is stop waiting on the output it holds, and say so.
describe.runIf(hasSetsid)('a process that leaves the command\'s group (setsid)', () => {
  const escapedPid = (name: string): number => Number(readFileSync(join(root, name), 'utf8'));

  it('run_command answers once the rest has ended, saying it could not stop that process', async () => {
    const started = Date.now();
    const result = await runCommandTool.run({ command: "setsid sh -c 'echo $$ > escaped-1.pid; exec sleep 60' & echo started" }, context());
    const pid = escapedPid('escaped-1.pid');
    try {
      expect(result).toEqual({ exit_code: 0, stdout: 'started\n', stderr: '', detached: DETACHED_NOTE });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(alive(pid)).toBe(true);
    } finally {
      process.kill(pid, 'SIGKILL');
    }
  });
});

describe('process handles', () => {
  it('start, read_output, status, kill and list by handle, never a PID', async () => {
    const tool = processTool();
    const started = await tool.run({ operation: 'start', command: 'echo ready; sleep 30' }, context());
    expect(started).toMatchObject({ handle: 'proc_1', running: true });
    expect(started).not.toHaveProperty('pid');
    await waitFor(async () => expect((await tool.run({ operation: 'read_output', handle: 'proc_1' }, context())).stdout).toBe('ready\n'));
    expect((await tool.run({ operation: 'read_output', handle: 'proc_1' }, context())).stdout).toBe('');
    await tool.run({ operation: 'kill', handle: 'proc_1' }, context());
    await waitFor(async () => expect((await tool.run({ operation: 'status', handle: 'proc_1' }, context())).running).toBe(false));
    expect((await tool.run({ operation: 'list' }, context())).processes).toHaveLength(1);
    await expect(tool.run({ operation: 'status', handle: 'proc_9' }, context())).rejects.toThrow('no process with handle "proc_9"');
    tool.close();
  });

  // A missing handle is a missing parameter, as start's missing command is: the run asks for it (needs_input).
  it.each(['status', 'read_output', 'kill'])('%s without a handle: handle is required, which the taxonomy asks for', async (operation) => {
    const tool = processTool();
    const thrown = await tool.run({ operation }, context()).then(() => null, (error: unknown) => error);
    expect(thrown).toEqual(new ToolError(`handle is required for ${operation}`));
    expect(classifyThrown(thrown, Object.keys(tool.parameters.properties))).toMatchObject({ kind: 'needs_input', parameter: 'handle' });
    tool.close();
  });

  it.each<[string, string, boolean, Record<string, unknown>]>([
    // case, command, wait for its shell to exit first, what kill answers
    ['running: killed', 'sleep 30', false, { handle: 'proc_1', killed: true }],
    ['exited: not killed, and how it ended', 'exit 3', true, { handle: 'proc_1', killed: false, exit_code: 3, note: 'it had already exited' }],
    ['exited, leaving a process in its group: that is killed', 'sleep 30 & echo $! > left.pid', true,
      { handle: 'proc_1', killed: true, exit_code: 0, note: 'its command had already exited; what it left running is being killed' }],
  ])('kill, %s', async (_case, command, exitFirst, answer) => {
    const tool = processTool();
    await tool.run({ operation: 'start', command }, context());
    if (exitFirst) await waitFor(async () => expect((await tool.run({ operation: 'status', handle: 'proc_1' }, context())).running).toBe(false));
    expect(await tool.run({ operation: 'kill', handle: 'proc_1' }, context())).toEqual(answer);
    await waitFor(async () => expect((await tool.run({ operation: 'status', handle: 'proc_1' }, context())).running).toBe(false));
    if (command.includes('left.pid')) await waitFor(() => expect(alive(Number(readFileSync(join(root, 'left.pid'), 'utf8')))).toBe(false));
    tool.close();
  });

  it('read_output keeps the newest unread output and says how much older output was dropped', async () => {
    const tool = processTool();
    await tool.run({ operation: 'start', command: `head -c 100000 /dev/zero | tr '\\0' a; echo; echo end` }, context());
    await waitFor(async () => expect((await tool.run({ operation: 'status', handle: 'proc_1' }, context())).running).toBe(false));
    const read = await tool.run({ operation: 'read_output', handle: 'proc_1' }, context());
    expect(String(read.stdout)).toHaveLength(UNREAD_CAP_CHARS);
    expect(String(read.stdout).endsWith('a\nend\n')).toBe(true);
    expect(read.stdout_dropped).toBe(`${groupThousands(100_005 - UNREAD_CAP_CHARS)} characters of older output, never read (only the last ${groupThousands(UNREAD_CAP_CHARS)} unread are kept)`);
    expect(await tool.run({ operation: 'read_output', handle: 'proc_1' }, context())).toMatchObject({ stdout: '', stderr: '' });
    tool.close();
  });
});

describe('tailsWithin', () => {
  it.each<[string, number, string]>([
    // text, max, its tail
    ['one\ntwo\nthree\n', 100, 'one\ntwo\nthree\n'],
    ['one\ntwo\nthree\n', 10, 'two\nthree\n'],
    ['one\ntwo\nthree\n', 9, 'three\n'],
    ['one\ntwo\nthree\n', 6, 'three\n'],
    ['one\ntwo\nthree\n', 4, 'ree\n'],
    ['a single long line', 4, 'line'],
    ['one\ntwo', 5, 'two'],
  ])('lineTailOf(%j, %i) is %j: from a line start when it holds one', (text, max, tail) => {
    expect(lineTailOf(text, max)).toBe(tail);
  });

  const resultOf = ([out = '', err = '']: readonly string[]): Record<string, unknown> => ({ exit_code: 1, out, err });
  it.each<[string, [string, string], number | undefined]>([
    // case, texts, budget
    ['no budget: whole', ['a'.repeat(9000), 'b'], undefined],
    ['within the budget: whole', ['abc', 'def'], 4000],
    ['one long text, one short: the short whole, the long its end', [Array.from({ length: 3000 }, (_, i) => `${i + 1}`).join('\n'), 'error: it broke'], 4000],
    ['two long texts: the same share of each', ['a'.repeat(9000), 'b'.repeat(9000)], 4000],
    ['text JSON lengthens (quotes, line breaks)', ['"\n'.repeat(5000), 'x'], 1000],
    ['emoji, never cut in half', ['😀'.repeat(5000), ''], 1001],
  ])('%s', (_case, texts, budget) => {
    const result = tailsWithin(texts, budget, resultOf);
    const shown = [String(result.out), String(result.err)];
    if (budget === undefined) {
      expect(shown).toEqual(texts);
      return;
    }
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(budget);
    const longest = Math.max(...shown.map((tail) => tail.length));
    for (const [index, text] of texts.entries()) {
      const tail = shown[index] ?? '';
      expect(text.endsWith(tail)).toBe(true);
      expect(/^[\uDC00-\uDFFF]/.test(tail)).toBe(false);
      if (tail === text) continue;
      // Cut: nearly full (less than a line of each is left over; these lines are short), from a
      // line's start when it has several, and the same share as the others, give or take a line.
      expect(JSON.stringify(result).length).toBeGreaterThan(budget - 50);
      if (text.includes('\n')) expect(text.at(-tail.length - 1)).toBe('\n');
      expect(longest - tail.length).toBeLessThan(10);
    }
  });

  it('a budget too small for even the fields gives no text, to be cut later as any result', () => {
    expect(tailsWithin(['abc', 'def'], 10, resultOf)).toEqual({ exit_code: 1, out: '', err: '' });
  });
});

describe('commandResult and outputResult fit their budget, keeping the end of each stream', () => {
  const captured = (text: string, bytes = Buffer.byteLength(text), truncated = false) => ({ text, bytes, truncated });
  const lines = (count: number): string => Array.from({ length: count }, (_, i) => `line ${i + 1}\n`).join('');
  const ran = { exit_code: 2, signal: null, background: false, detached: false };

  it.each<[string, Parameters<typeof commandResult>[0], number | undefined, Record<string, unknown>]>([
    ['short output: as it is', { ...ran, stdout: captured('ok\n'), stderr: captured('') }, 4000, { exit_code: 2, stdout: 'ok\n', stderr: '' }],
    ['kept past the capture cap, within the budget', { ...ran, stdout: captured('tail\n', 100_005, true), stderr: captured('') }, 4000,
      { exit_code: 2, stdout_truncated: 'showing the last 5 characters of 100,005 bytes; narrow the output (grep, head, sed -n) to see other parts', stdout: 'tail\n', stderr: '' }],
    ['past the budget: stderr whole, the end of stdout', { ...ran, stdout: captured(lines(2000)), stderr: captured('FATAL: build failed\n') }, 4000,
      { exit_code: 2, stdout_truncated: expect.stringMatching(/^showing the last [\d,]+ characters of 18,893 bytes;/) as unknown, stdout: expect.stringMatching(/\nline 2000\n$/) as unknown, stderr: 'FATAL: build failed\n' }],
    ['the notes of a command that left processes stay', { ...ran, background: true, detached: true, stdout: captured(lines(2000)), stderr: captured('') }, 4000,
      { exit_code: 2, stdout: expect.stringMatching(/\nline 2000\n$/) as unknown, background: BACKGROUND_NOTE, detached: DETACHED_NOTE }],
  ])('run_command, %s', (_case, result, budget, expected) => {
    const fitted = commandResult(result, budget, 'narrow the output (grep, head, sed -n) to see other parts');
    expect(fitted).toMatchObject(expected);
    if (budget !== undefined) expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(budget);
  });

  it.each<[string, Parameters<typeof commandResult>[0], number | undefined, Record<string, unknown>]>([
    ['short output: as it is', { ...ran, stdout: captured('ok\n'), stderr: captured('') }, 4000, { exit_code: 2, stdout: 'ok\n', stderr: '' }],
    ['no budget: as it is', { ...ran, stdout: captured(lines(2000)), stderr: captured('') }, undefined, { exit_code: 2, stdout: lines(2000), stderr: '' }],
    ['kept past the capture cap: the note says so, with no advice the model cannot follow', { ...ran, stdout: captured('tail\n', 100_005, true), stderr: captured('') }, 4000,
      { exit_code: 2, stdout_truncated: 'showing the last 5 characters of 100,005 bytes', stdout: 'tail\n', stderr: '' }],
    ['past the budget: stderr whole, the end of stdout', { ...ran, stdout: captured(lines(2000)), stderr: captured('FATAL: build failed\n') }, 4000,
      { exit_code: 2, stdout_truncated: expect.stringMatching(/^showing the last [\d,]+ characters of 18,893 bytes$/) as unknown, stdout: expect.stringMatching(/\nline 2000\n$/) as unknown, stderr: 'FATAL: build failed\n' }],
    ['both streams past the budget: the end of each, each with its note', { ...ran, stdout: captured(lines(2000)), stderr: captured(lines(1000)) }, 4000,
      { exit_code: 2, stdout_truncated: expect.stringMatching(/^showing the last/) as unknown, stdout: expect.stringMatching(/\nline 2000\n$/) as unknown,
        stderr_truncated: expect.stringMatching(/^showing the last [\d,]+ characters of 8,893 bytes$/) as unknown, stderr: expect.stringMatching(/\nline 1000\n$/) as unknown }],
    ['killed by a signal: the signal stays', { ...ran, exit_code: null, signal: 'SIGSEGV', stdout: captured(lines(2000)), stderr: captured('') }, 4000,
      { exit_code: null, signal: 'SIGSEGV', stdout: expect.stringMatching(/\nline 2000\n$/) as unknown }],
  ])('a command tool (no advice on narrowing), %s', (_case, result, budget, expected) => {
    const fitted = commandResult(result, budget);
    expect(fitted).toMatchObject(expected);
    if (budget !== undefined) expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(budget);
  });

  const status = { handle: 'proc_1', command: 'build', running: false, exit_code: 2 };
  it.each<[string, Parameters<typeof outputResult>[1], Parameters<typeof outputResult>[2], Record<string, unknown>]>([
    ['short output: as it is', { text: 'ok\n', dropped: 0 }, { text: '', dropped: 0 }, { ...status, stdout: 'ok\n', stderr: '' }],
    ['older output dropped past the unread cap, the rest within the budget', { text: 'new\n', dropped: 7 }, { text: '', dropped: 0 },
      { ...status, stdout_dropped: `7 characters of older output, never read (only the last ${groupThousands(UNREAD_CAP_CHARS)} unread are kept)`, stdout: 'new\n', stderr: '' }],
    ['past the budget: stderr whole, the newest of stdout, and how much older output is gone', { text: lines(2000), dropped: 100 }, { text: 'FATAL: build failed\n', dropped: 0 },
      {
        ...status,
        stdout_dropped: expect.stringMatching(/^[\d,]+ characters of older output, not shown and not readable again: a read shows the newest output that fits its result; to keep all of it, send the command's output to a file \(> out\.log 2>&1\)$/) as unknown,
        stdout: expect.stringMatching(/\nline 2000\n$/) as unknown,
        stderr: 'FATAL: build failed\n',
      }],
  ])('read_output, %s', (_case, stdout, stderr, expected) => {
    const fitted = outputResult(status, stdout, stderr, 4000);
    expect(fitted).toMatchObject(expected);
    expect(JSON.stringify(fitted).length).toBeLessThanOrEqual(4000);
    // What it says is gone is what it did not show.
    const gone = Number((/^([\d,]+) characters/.exec(String(fitted.stdout_dropped))?.[1] ?? '0').replace(/,/g, ''));
    expect(gone + String(fitted.stdout).length).toBe(stdout.text.length + stdout.dropped);
  });
});

describe('UnreadOutput', () => {
  const bytes = (...values: number[]): Buffer => Buffer.from(values);
  it.each([
    ['keeps what fits', 8, [Buffer.from('abc'), Buffer.from('def')], { text: 'abcdef', dropped: 0 }],
    ['drops the oldest past the cap', 4, [Buffer.from('abc'), Buffer.from('def')], { text: 'cdef', dropped: 2 }],
    ['joins a character split across chunks', 8, [bytes(0x63, 0x61, 0x66, 0xc3), bytes(0xa9)], { text: 'café', dropped: 0 }],
    ['never keeps half of a surrogate pair', 3, [Buffer.from('😀😀')], { text: '😀', dropped: 2 }],
  ])('%s', (_, cap, chunks, expected) => {
    const output = new UnreadOutput(cap);
    for (const chunk of chunks) output.push(chunk);
    expect(output.take()).toEqual(expected);
    expect(output.take()).toEqual({ text: '', dropped: 0 });
  });

  it('an incomplete character at the end comes out as U+FFFD', () => {
    const output = new UnreadOutput();
    output.push(bytes(0x61, 0xc3));
    output.end();
    expect(output.take()).toEqual({ text: 'a\ufffd', dropped: 0 });
  });

  it('LastOutput keeps the last characters of a finished stream and counts its bytes', () => {
    const output = new LastOutput();
    output.push(Buffer.from('x'.repeat(UNREAD_CAP_CHARS)));
    output.push(Buffer.from('café'));
    expect(output.result()).toEqual({ text: `${'x'.repeat(UNREAD_CAP_CHARS - 4)}café`, bytes: UNREAD_CAP_CHARS + 5, truncated: true });
  });
});

describe('command-backed tools', () => {
  it.each([
    [['git', 'log', '-n', '{count}'], { count: 3 }, ['git', 'log', '-n', '3']],
    [['git', 'log', '{path}'], {}, ['git', 'log']],
    [['grep', '--max-count={n}', '{pattern}'], { pattern: 'a b; rm -rf /' }, ['grep', '--max-count=', 'a b; rm -rf /']],
    [['echo', '{obj}'], { obj: { a: 1 } }, ['echo', '{"a":1}']],
  ])('fillArgv(%j, %j)', (template, args, argv) => {
    expect(fillArgv(template, args)).toEqual(argv);
  });

  const REFUSED = (name: string) => `"${name}" starts with "-", which the command would read as an option; give it without the leading "-"`;
  it.each([
    [['git', 'log', '--oneline', '-n', '1', '{ref}'], { ref: '--output=/tmp/x' }, REFUSED('ref')],
    [['git', 'log', '{ref}'], { ref: '-p' }, REFUSED('ref')],
    [['git', 'log', '-n', '{count}'], { count: -5 }, REFUSED('count')],
    [['git', 'log', '{ref}'], { ref: 'main' }, null],
    [['git', 'log', '{ref}'], { ref: 'a-b' }, null],
    [['git', 'log', '{ref}'], {}, null],
    [['git', 'log', '--oneline', '--', '{path}'], { path: '--output=/tmp/x' }, null],
    [['git', 'log', '{ref}', '--', '{path}'], { ref: '-p', path: 'x' }, REFUSED('ref')],
    [['git', 'log', '--ref={ref}'], { ref: '--output=/tmp/x' }, null],
    [['grep', '-e', 'x{pattern}'], { pattern: '-v' }, null],
    // A value at the start of a longer element is at the start of what the command reads.
    [['git', 'log', '--oneline', '{ref}..HEAD'], { ref: '--output=/tmp/x' }, REFUSED('ref')],
    [['git', 'log', '--oneline', '{ref}..HEAD'], { ref: 'main' }, null],
    [['git', 'log', '--oneline', '{ref}..HEAD'], {}, null],
    [['git', 'log', '{from}..{to}'], { from: 'a', to: '-p' }, null],
    // An empty value before it leaves the next one first.
    [['git', 'log', '{a}{b}'], { b: '--output=x' }, REFUSED('b')],
    [['git', 'log', '{a}{b}'], { a: '', b: '-p' }, REFUSED('b')],
    [['git', 'log', '{a}{b}'], { a: 'x', b: '-p' }, null],
    [['git', 'log', '{n}x'], { n: -1 }, REFUSED('n')],
    // The template's own option: what fills it is its value.
    [['git', 'log', '--format={fmt}'], { fmt: '-x' }, null],
    // After the template's dashes only, a value names the option: its own "-" would make another one.
    [['ls', '-{flags}'], { flags: 'la' }, null],
    [['ls', '-{flags}'], { flags: '-output=/tmp/x' }, REFUSED('flags')],
    [['git', '--{option}'], { option: '-x' }, REFUSED('option')],
    [['git', 'log', '--', '{ref}..HEAD'], { ref: '--output=/tmp/x' }, null],
  ])('optionLikeArgument(%j, %j) → %j', (template, args, reason) => {
    expect(optionLikeArgument(template, args)).toBe(reason);
  });

  it('a value that would be read as an option makes the call invalid before anything runs (the model is asked again)', () => {
    const tool = commandTool('g', { description: 'g', argv: ['git', 'log', '{ref}'], parameters: { type: 'object', properties: { ref: { type: 'string' } } } });
    expect(validateArguments(tool, { ref: '--output=/tmp/x' })).toEqual({ kind: 'invalid', reason: REFUSED('ref') });
    expect(validateArguments(tool, { ref: 'HEAD~1' })).toEqual({ kind: 'ok', args: { ref: 'HEAD~1' } });
  });

  it('runs without a shell in the root; unavailable when a required binary is missing', async () => {
    const tool = commandTool('say', { description: 'say', argv: ['printf', '%s|', '{word}'], parameters: { type: 'object', properties: { word: { type: 'string' } } } });
    expect(await tool.check?.('/')).toBeNull();
    expect(await tool.run({ word: '$(whoami); x' }, context())).toEqual({ exit_code: 0, stdout: '$(whoami); x|', stderr: '' });
    expect(tool.sideEffects).toBe(true);
    expect(await tool.preview?.({ word: 'a b' }, context())).toBe('$ printf "%s|" "a b"');
    const missing = commandTool('ghost', { description: 'x', argv: ['ghost'], requires: ['sh', 'argo-missing-binary'] });
    expect(await missing.check?.('/')).toBe('"argo-missing-binary" is not on PATH');
  });

  const script = (body: string) => commandTool('build', { description: 'build', argv: ['sh', '-c', body] });
  it.each<[string, string, number | undefined, Record<string, unknown>, string[]]>([
    // case, the command, the call's budget, what the result holds, its keys in order
    ['a failing command past its budget: the exit code, stderr whole and the end of stdout', "seq 1 3000; echo 'error TS2304: Cannot find name foo' >&2; exit 2", 4000,
      { exit_code: 2, stdout_truncated: expect.stringMatching(/^showing the last [\d,]+ characters of 13,893 bytes$/) as unknown, stdout: expect.stringMatching(/\n2999\n3000\n$/) as unknown, stderr: 'error TS2304: Cannot find name foo\n' },
      ['exit_code', 'stdout_truncated', 'stdout', 'stderr']],
    ['past the capture cap: its last 51,200 characters, no budget', 'head -c 100000 /dev/zero | tr "\\0" a; echo end', undefined,
      { exit_code: 0, stdout_truncated: 'showing the last 51,200 characters of 100,004 bytes', stdout: `${'a'.repeat(UNREAD_CAP_CHARS - 4)}end\n`, stderr: '' },
      ['exit_code', 'stdout_truncated', 'stdout', 'stderr']],
    ['within its budget: as it is', 'echo ok; echo warn >&2; exit 1', 4000, { exit_code: 1, stdout: 'ok\n', stderr: 'warn\n' }, ['exit_code', 'stdout', 'stderr']],
  ])('a command tool keeps the end of each stream: %s', async (_case, body, resultBudget, expected, keys) => {
    const result = await script(body).run({}, { ...context(), ...(resultBudget !== undefined ? { resultBudget } : {}) });
    expect(result).toEqual(expected);
    expect(Object.keys(result)).toEqual(keys);
    if (resultBudget !== undefined) expect(JSON.stringify(result).length).toBeLessThanOrEqual(resultBudget);
  });

  it('a relative argv[0] is looked for in the root, where it runs; one without the x bit is "not executable"', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-cmd-root-')));
    writeFileSync(join(root, 'tool.sh'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
    writeFileSync(join(root, 'plain.sh'), '#!/bin/sh\necho ran\n', { mode: 0o644 });
    mkdirSync(join(root, 'sub'));
    const checked = async (argv0: string, where: string) => commandTool('t', { description: 't', argv: [argv0] }).check?.(where);
    const cases: [string, string, string | null][] = [
      ['./tool.sh', root, null],
      ['./tool.sh', tmpdir(), `"./tool.sh" does not exist (a relative path is from the root, ${tmpdir()})`],
      ['./plain.sh', root, '"./plain.sh" is not executable (chmod +x it)'],
      [join(root, 'plain.sh'), '/', `"${join(root, 'plain.sh')}" is not executable (chmod +x it)`],
      [root, '/', `"${root}" is a folder, not a program`],
      ['./sub', root, `"./sub" is a folder, not a program (a relative path is from the root, ${root})`],
      ['./sub/', root, `"./sub/" is a folder, not a program (a relative path is from the root, ${root})`],
      // On PATH, a folder of that name is passed over.
      ['sub', root, '"sub" is not on PATH'],
    ];
    for (const [argv0, where, reason] of cases) expect([argv0, where, await checked(argv0, where)]).toEqual([argv0, where, reason]);
    expect(await commandTool('t', { description: 't', argv: ['./tool.sh'] }).run({}, { ...context(), root })).toMatchObject({ exit_code: 0, stdout: 'ran\n' });
  });

  it.each<[string, string[], Record<string, unknown>, string]>([
    // case, argv, arguments → the failure: permanent, naming the program (asking again runs the same one)
    ['a program not there (requires: [] skipped the check)', ['argo-no-such-binary-q'], {}, 'the command "argo-no-such-binary-q" did not start (spawn ENOENT): it is not there, or the interpreter its #! line names is not; fix commandTools."t".argv in config.json'],
    ['a script whose interpreter is not there', ['./bad-interpreter.sh'], {}, 'the command "./bad-interpreter.sh" did not start (spawn ENOENT): it is not there, or the interpreter its #! line names is not; fix commandTools."t".argv in config.json'],
    ['a file without the x bit', ['./plain.sh'], {}, 'the command "./plain.sh" did not start (spawn EACCES): it is not a program you may run (chmod +x it)'],
    ['a folder', ['./sub'], {}, 'the command "./sub" did not start (spawn EACCES): it is not a program you may run (chmod +x it)'],
  ])('a command that does not start: %s', async (_case, argv, args, message) => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-cmd-spawn-')));
    writeFileSync(join(root, 'bad-interpreter.sh'), '#!/nonexistent/interpreter\n', { mode: 0o755 });
    writeFileSync(join(root, 'plain.sh'), '#!/bin/sh\necho ran\n', { mode: 0o644 });
    mkdirSync(join(root, 'sub'));
    const tool = commandTool('t', { description: 't', argv, requires: [] });
    await expect(tool.run(args, { ...context(), root })).rejects.toMatchObject({ message, retryable: false });
  });

  it.each<[string[], Record<string, unknown>, string | null]>([
    // argv, arguments → why the call is invalid (the model is asked again), or null
    [['echo', '{word}'], { word: 'a\u0000b' }, '"word" contains a NUL byte, which no command can hold; give it without one'],
    [['echo', '--name={word}'], { word: '\u0000' }, '"word" contains a NUL byte, which no command can hold; give it without one'],
    [['echo', '{word}'], { word: 'ab' }, null],
    // Not in the argv: it reaches no command.
    [['echo', 'x'], { word: 'a\u0000b' }, null],
    // JSON writes it as an escape.
    [['echo', '{obj}'], { obj: { a: 'a\u0000b' } }, null],
  ])('nulArgument(%j, %j) → %j', (argv, args, reason) => {
    expect(nulArgument(argv, args)).toBe(reason);
    const tool = commandTool('t', { description: 't', argv, parameters: { type: 'object', properties: { word: {}, obj: {} } } });
    expect(validateArguments(tool, args)).toEqual(reason === null ? { kind: 'ok', args } : { kind: 'invalid', reason });
  });

  it.each([
    ['GITHUB_TOKEN', false],
    ['OPENAI_API_KEY', false],
    ['AWS_SECRET_ACCESS_KEY', false],
    ['PGPASSWORD', false],
    ['DB_PASSWD', false],
    ['GOOGLE_APPLICATION_CREDENTIALS', false],
    ['SSH_PRIVATE_KEY', false],
    ['apikey', false],
    ['ARGO_API_KEY', false],
    // Passwords, keys and auth by other words.
    ['DB_PASS', false],
    ['SMTP_PASS', false],
    ['MYSQL_PWD', false],
    ['DB_CREDS', false],
    ['DEPLOY_CREDS_PSW', false],
    ['DEPLOY_CREDS_USR', true],
    ['OPENAI_KEY', false],
    ['AZURE_OPENAI_KEY', false],
    ['NPM_CONFIG__AUTH', false],
    ['npm_config_//registry.npmjs.org/:_authToken', false],
    ['AUTHORIZATION', false],
    ['HF_AUTH', false],
    ['HF_TOKEN', false],
    ['SENTRY_DSN', false],
    ['REDIS_PASSWORD', false],
    ['GPG_PASSPHRASE', false],
    ['clientSecret', false],
    ['STRIPE_SECRETKEY', false],
    ['KEY', false],
    ['PATH', true],
    ['HOME', true],
    ['EDITOR', true],
    ['OLLAMA_HOST', true],
    ['LANG', true],
    ['TERM', true],
    // The shell's directories, and words that only contain a secret's word.
    ['PWD', true],
    ['OLDPWD', true],
    ['KEYTIMEOUT', true],
    ['KEYBOARD_LAYOUT', true],
    ['XKB_KEYMAP', true],
    ['GIT_AUTHOR_NAME', true],
    ['SUDO_ASKPASS', true],
    ['NO_PROXY_BYPASS', true],
    ['TOKENIZERS_PARALLELISM', true],
    // A number of tokens or keys, a kind of key: settings.
    ['MAX_TOKENS', true],
    ['OPENAI_MAX_TOKENS', true],
    ['SORT_KEYS', true],
    ['TOKEN_COUNT', true],
    // Where a secret is, or about it, not the secret: the value is still checked.
    ['PASSWD_FILE', true],
    ['POSTGRES_PASSWORD_FILE', true],
    ['SSH_AUTH_SOCK', true],
    ['OAUTH_TOKEN_URL', true],
    ['AWS_ACCESS_KEY_ID', true],
    ['SECRET_NAME', true],
  ])('commandEnvironment keeps %s: %s', (name, kept) => {
    expect(Object.hasOwn(commandEnvironment({ [name]: 'v' }), name)).toBe(kept);
  });

  // Built at run time, so no scanner takes the test's made-up tokens for real ones.
  const token = (prefix: string, length: number): string => prefix + 'a1B2'.repeat(20).slice(0, length);
  it.each([
    ['postgres://user:pw@db.example:5432/app', true],
    ['mysql://root:s3cret@localhost/db', true],
    ['redis://:pw@cache:6379/0', true],
    ['amqp://guest:guest@mq', true],
    ['HTTPS://user:pw@proxy.example:3128', true],
    ['primary=postgres://u:p@a/db,replica=postgres://b/db', true],
    ['https://hooks.slack.com/services/T000/B000/XXXX', true],
    ['https://discord.com/api/webhooks/1/abc', true],
    [token('ghp_', 36), true],
    [token('github_pat_', 40), true],
    [token('glpat-', 20), true],
    [token('xoxb-', 24), true],
    [['AKIA', 'ABCDEFGHIJKLMNOP'].join(''), true],
    [token('npm_', 36), true],
    [token('sk_live_', 24), true],
    [token('sk-proj-', 40), true],
    [token('sk-ant-', 40), true],
    [token('AIza', 35), true],
    [token('hf_', 34), true],
    [token('ya29.', 40), true],
    [token('pypi-', 60), true],
    [`Bearer ${token('', 40)}`, true],
    [`Basic ${Buffer.from('user:pw').toString('base64')}`, true],
    [[token('eyJ', 20), token('eyJ', 30), token('', 20)].join('.'), true],
    [['-----BEGIN OPENSSH', 'PRIVATE KEY-----\nb3Blbn…'].join(' '), true],
    // A key as a URL's user (Sentry's DSN); a plain user name is not one.
    [`https://${'0123456789abcdef'.repeat(2)}@o1.ingest.sentry.io/2`, true],
    ['https://git@example.com/repo', false],
    ['Basic authentication is off', false],
    ['hf_short', false],
    ['postgres://db.example:5432/app', false],
    ['postgres://user@db.example/app', false],
    ['ssh://git@github.com/org/repo', false],
    ['http://localhost:8080/a@b', false],
    ['git@github.com:org/repo.git', false],
    ['http://127.0.0.1:11434', false],
    ['/usr/local/bin:/usr/bin:/bin', false],
    ['en_US.UTF-8', false],
    ['xterm-256color', false],
    ['https://hooks.example.com/services/x', false],
    ['desk-organizer-with-a-long-name', false],
    ['ghp_short', false],
    ['', false],
  ])('a variable whose value is %j looks secret: %s', (value, secret) => {
    expect(looksSecret('SOME_URL', value)).toBe(secret);
    expect(Object.hasOwn(commandEnvironment({ SOME_URL: value }), 'SOME_URL')).toBe(!secret);
  });

  it('a value that looks secret is passed when config names its variable', () => {
    const env = { DATABASE_URL: 'postgres://u:pw@h/db', SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/X', EDITOR: 'vi' };
    expect(commandEnvironment(env)).toEqual({ EDITOR: 'vi' });
    expect(commandEnvironment(env, ['DATABASE_URL'])).toEqual({ DATABASE_URL: 'postgres://u:pw@h/db', EDITOR: 'vi' });
  });

  it('commandEnvironment passes the secrets config names, never the server key', () => {
    expect(commandEnvironment({ GITHUB_TOKEN: 'g', NPM_TOKEN: 'n', ARGO_API_KEY: 'k' }, ['GITHUB_TOKEN', 'ARGO_API_KEY'])).toEqual({ GITHUB_TOKEN: 'g' });
  });

  it('onPath', async () => {
    expect(await onPath('sh')).toBe(true);
    expect(await onPath('argo-missing-binary')).toBe(false);
  });
});
