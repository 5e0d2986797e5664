// Runs the built bin/argo (or a shell) under a pseudo-terminal (node-pty), so stdin, stdout and
// stderr are all TTYs, as for a person at a terminal: spinners, prompts, Ctrl-C, line editing.
import { basename } from 'node:path';
import { spawn } from '@lydell/node-pty';
import type { IPty } from '@lydell/node-pty';
import { ARGO_BIN } from './run-argo.js';

export interface PtyOptions {
  home: string;
  host?: string;
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
}

export interface PtyExit {
  code: number;
  signal: number; // 0 when it exited by itself
}

export interface PtySession {
  /** The process started on the terminal. */
  readonly pid: number;
  /** Everything written to the terminal so far, escapes included (stdout and stderr together). */
  readonly output: string;
  /** Types `text` (use '\r' for Enter, '\x03' for Ctrl-C, '\x04' for Ctrl-D). */
  write(text: string): void;
  /** Resolves with the output once it matches (counting only output after `from`); rejects if the program exits first. */
  waitFor(match: string | RegExp, from?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): void;
  /** Makes the terminal `cols` wide and `rows` high, as dragging its window does (SIGWINCH). */
  resize(cols: number, rows: number): void;
  /** Closes the terminal as its window closing does: the pty goes, then SIGHUP. */
  hangUp(): void;
  readonly exited: Promise<PtyExit>;
}

export function startInPty(args: string[], options: PtyOptions): PtySession {
  return startProgramInPty(process.execPath, [ARGO_BIN, ...args], options, 'argo');
}

/**
 * Runs argo on a pseudo-terminal to its end, with everything it wrote read. node-pty may drop a
 * program's last output when the program exits before the terminal was read to its end (a loaded
 * machine), so argo runs under a shell that prints how it ended, then waits to be let go until that
 * line was read: all before it was too.
 */
export async function runInPtyToEnd(args: string[], options: PtyOptions): Promise<{ code: number; output: string }> {
  const session = startProgramInPty('/bin/sh', ['-c', '"$0" "$@"; printf "\\n[argo exited %s]" "$?"; read _', process.execPath, ARGO_BIN, ...args], options, 'argo');
  const all = await session.waitFor(/\[argo exited \d+\]/);
  session.write('\n');
  await session.exited;
  const end = all.lastIndexOf('[argo exited ');
  return { code: Number(/\[argo exited (\d+)\]/.exec(all.slice(end))?.[1]), output: all.slice(0, end).replace(/\r?\n$/, '') };
}

/**
 * `argo ARGS` typed at an interactive bash on a pseudo-terminal (`bash`: where it is installed), so
 * job control works as at a person's terminal: Ctrl-Z stops argo, `fg` continues it. The shell's
 * prompt is `$ `; resolves once argo has been started.
 */
export async function startArgoInShell(bash: string, args: string[], options: PtyOptions): Promise<PtySession> {
  const shell = startProgramInPty(bash, ['--norc', '--noprofile', '-i'], { ...options, env: { PS1: '$ ', ...options.env } });
  await shell.waitFor('$ ');
  const quoted = [process.execPath, ARGO_BIN, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`);
  shell.write(`${quoted.join(' ')}\r`);
  return shell;
}

/** Any program on a pseudo-terminal (an interactive shell, say), in the environment argo gets there; cwd is `home`. */
export function startProgramInPty(file: string, args: string[], options: PtyOptions, name = basename(file)): PtySession {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: options.home,
    ARGO_HOME: options.home,
    TERM: 'xterm',
    // The run's temporary folder (test/support/global-setup.ts), so what argo leaves there goes with it.
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ...(options.host ? { OLLAMA_HOST: options.host } : {}),
    ...options.env,
  };
  const child = spawn(file, args, {
    // node-pty sets TERM to the terminal's name: a TERM given in env names it.
    name: env.TERM ?? 'xterm', cols: options.cols ?? 100, rows: options.rows ?? 30, cwd: options.home, env,
  });
  let output = '';
  let done = false;
  const watchers = new Set<() => void>();
  const exited = new Promise<PtyExit>((resolve) => {
    child.onExit(({ exitCode, signal }) => {
      done = true;
      resolve({ code: exitCode, signal: signal ?? 0 });
      for (const watcher of [...watchers]) watcher();
    });
  });
  child.onData((data) => {
    output += data;
    for (const watcher of [...watchers]) watcher();
  });
  const matches = (match: string | RegExp, text: string): boolean =>
    typeof match === 'string' ? text.includes(match) : match.test(text);
  return {
    pid: child.pid,
    get output() {
      return output;
    },
    write: (text) => {
      child.write(text);
    },
    waitFor(match, from = 0) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (matches(match, output.slice(from))) {
            watchers.delete(check);
            resolve(output);
          } else if (done) {
            watchers.delete(check);
            reject(new Error(`${name} exited before ${String(match)} appeared; output:\n${output}`));
          }
        };
        watchers.add(check);
        check();
      });
    },
    kill: (signal = 'SIGTERM') => {
      child.kill(signal);
    },
    resize: (cols, rows) => {
      child.resize(cols, rows);
    },
    hangUp: () => {
      // node-pty's Unix terminal has destroy(), though IPty's typings leave it out.
      (child as IPty & { destroy: () => void }).destroy();
    },
    exited,
  };
}
