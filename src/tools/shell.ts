// The `shell` toolset: run_command runs a command line through /bin/sh under the root and waits;
// `process` starts long-running commands and manages them by handle (never by PID). What the model
// is told of each, their availability check and previews are in builtins.ts; this code loads with a
// run's first call.
import type { ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { TIMER_MAX_MS } from '../config/settings.js';
import { isMissing } from '../log/fs.js';
import { groupThousands } from '../text/decimal.js';
import { DEFAULT_COMMAND_TIMEOUT_S, PROCESS, RUN_COMMAND, SHELL } from './builtins.js';
import { UNREAD_CAP_CHARS, UnreadOutput, commandResult, killGroup, runProcess, spawnGroup, tailsWithin, tooLongToPass } from './process.js';
import type { Taken } from './process.js';
import { resolveInRoot, rootOnly } from './root.js';
import { quoting } from './foreign-line.js';
import { ToolError, numberArg, stringArg } from './types.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

async function workingDirectory(context: ToolContext, cwd: string | undefined): Promise<string> {
  const dir = await resolveInRoot(rootOnly(context.root), cwd ?? '.', 'existing directory');
  try {
    if (!(await stat(dir)).isDirectory()) throw new ToolError(quoting`"${cwd ?? '.'}" is not a directory`);
  } catch (error) {
    if (isMissing(error)) throw new ToolError(quoting`directory "${cwd ?? '.'}" does not exist`);
    throw error;
  }
  return dir;
}

/** How the model sees other parts of a stream run_command did not show whole. */
const NARROW_HINT = 'narrow the output (grep, head, sed -n) to see other parts';

/**
 * How long a command may run, in seconds: `limitS` (toolTimeouts.run_command) unless the model's
 * `timeout` asks for less — the user's setting wins over the model's; without it, 30 unless `timeout`
 * says otherwise.
 */
export function commandSeconds(asked: number | undefined, limitS: number | undefined): number {
  return limitS === undefined ? (asked ?? DEFAULT_COMMAND_TIMEOUT_S) : Math.min(asked ?? limitS, limitS);
}

/** Runs one run_command call, its command timed by commandSeconds. */
export async function runCommand(args: Record<string, unknown>, context: ToolContext, limitS?: number): Promise<ToolResult> {
  const command = stringArg(args, 'command') ?? '';
  const asked = numberArg(args, 'timeout');
  const seconds = commandSeconds(asked, limitS);
  const cwd = await workingDirectory(context, stringArg(args, 'cwd'));
  const result = await runProcess({ file: SHELL, args: ['-c', command], cwd, timeoutMs: seconds * 1000, signal: context.signal, ...(context.env ? { env: context.env } : {}) }).catch((error: unknown) => {
    throw tooLongToPass(error, 'the command') ?? error;
  });
  if (result.timed_out) {
    // Only the user's setting can allow more than the model asked for.
    const longer = asked === seconds ? '' : `; to allow longer, set "toolTimeouts": {"run_command": ${Math.min(seconds * 2000, TIMER_MAX_MS)}} in config.json`;
    throw new ToolError(`the command timed out after ${seconds} s and was killed${longer}`);
  }
  if (result.aborted) throw new ToolError('the command was interrupted', false);
  return commandResult(result, context.resultBudget, NARROW_HINT);
}

export const runCommandTool: Tool = { ...RUN_COMMAND, run: (args, context) => runCommand(args, context) };

interface Managed {
  command: string;
  child: ChildProcess;
  stdout: UnreadOutput;
  stderr: UnreadOutput;
}

/**
 * read_output's fields for one stream: the end of its new text `shown` holds, after a note saying how
 * much older output is gone (past the unread cap, or not fitting this result).
 */
function unreadResult(name: string, taken: Taken, shown: string): Record<string, unknown> {
  const unshown = taken.text.length - shown.length;
  if (unshown === 0 && taken.dropped === 0) return { [name]: shown };
  const note =
    unshown === 0
      ? `${groupThousands(taken.dropped)} characters of older output, never read (only the last ${groupThousands(UNREAD_CAP_CHARS)} unread are kept)`
      : `${groupThousands(taken.dropped + unshown)} characters of older output, not shown and not readable again: a read shows the newest output that fits its result; to keep all of it, send the command's output to a file (> out.log 2>&1)`;
  return { [`${name}_dropped`]: note, [name]: shown };
}

/** read_output's result: the process's status, then what each stream said since the last read, fitted to `budget` (its newest part). */
export function outputResult(status: ToolResult, stdout: Taken, stderr: Taken, budget: number | undefined): ToolResult {
  return tailsWithin([stdout.text, stderr.text], budget, ([stdoutShown = '', stderrShown = '']) => ({
    ...status,
    ...unreadResult('stdout', stdout, stdoutShown),
    ...unreadResult('stderr', stderr, stderrShown),
  }));
}

/**
 * The child `spawn` gives once it has started; a failed start (a command line too long, no /bin/sh,
 * no free process slot) rejects rather than leaving a handle "running" that never ran.
 */
async function started(spawn: () => ChildProcess): Promise<ChildProcess> {
  let child: ChildProcess;
  try {
    child = spawn();
  } catch (error) {
    throw tooLongToPass(error, 'the command') ?? error;
  }
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) => reject(tooLongToPass(error, 'the command') ?? error));
  });
  return child;
}

/** A fresh `process` tool with its own handle table; `close` kills whatever is still running. */
export function processTool(): Tool & { close: () => void } {
  const table = new Map<string, Managed>();
  let next = 1;
  const find = (handle: string | undefined, operation: string): Managed => {
    // Said as start's missing command is: a required parameter, which the taxonomy asks the user for.
    if (handle === undefined) throw new ToolError(`handle is required for ${operation}`);
    const found = table.get(handle);
    if (!found) throw new ToolError(quoting`no process with handle "${handle}"; list them with operation "list"`);
    return found;
  };
  const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;
  /** How its command ended: its exit code, or the signal that ended it. */
  const ending = (child: ChildProcess): Record<string, unknown> => ({ exit_code: child.exitCode, ...(child.signalCode !== null ? { signal: child.signalCode } : {}) });
  const status = (handle: string, managed: Managed): Record<string, unknown> => ({ handle, command: managed.command, running: running(managed.child), ...ending(managed.child) });
  return {
    ...PROCESS,
    run: async (args, context) => {
      const operation = stringArg(args, 'operation');
      const handle = stringArg(args, 'handle');
      switch (operation) {
        case 'start': {
          const command = stringArg(args, 'command');
          if (command === undefined) throw new ToolError('command is required for start');
          const cwd = await workingDirectory(context, stringArg(args, 'cwd'));
          const child = await started(() => spawnGroup(SHELL, ['-c', command], cwd, context.env));
          const managed: Managed = { command, child, stdout: new UnreadOutput(), stderr: new UnreadOutput() };
          child.stdout?.on('data', (chunk: Buffer) => managed.stdout.push(chunk));
          child.stderr?.on('data', (chunk: Buffer) => managed.stderr.push(chunk));
          child.stdout?.on('end', () => managed.stdout.end());
          child.stderr?.on('end', () => managed.stderr.end());
          child.on('error', () => undefined);
          const id = `proc_${next++}`;
          table.set(id, managed);
          return status(id, managed);
        }
        case 'status':
          return status(handle ?? '', find(handle, operation));
        case 'read_output': {
          const managed = find(handle, operation);
          return outputResult(status(handle ?? '', managed), managed.stdout.take(), managed.stderr.take(), context.resultBudget);
        }
        case 'kill': {
          const { child } = find(handle, operation);
          const wasRunning = running(child);
          if (!killGroup(child)) return { handle, killed: false, ...ending(child), note: wasRunning ? 'nothing of it was left to kill' : 'it had already exited' };
          // Its shell had ended, leaving processes in its group: those are what is killed.
          return wasRunning ? { handle, killed: true } : { handle, killed: true, ...ending(child), note: 'its command had already exited; what it left running is being killed' };
        }
        default:
          return { processes: [...table].map(([id, managed]) => status(id, managed)) };
      }
    },
    close: () => {
      for (const managed of table.values()) {
        killGroup(managed.child);
        // Nothing reads them now; a process that left the group (setsid) must not keep Argo from exiting.
        managed.child.stdout?.destroy();
        managed.child.stderr?.destroy();
      }
    },
  };
}
