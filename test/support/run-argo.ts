import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ARGO_BIN = resolve(import.meta.dirname, '../../bin/argo');

export interface ArgoResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  home: string;
  host?: string;
  /** Bytes as given (a Buffer), or a string written as UTF-8. */
  stdin?: string | Buffer;
  /** Leave stdin open (a pipe that never ends) instead of closing it after `stdin`. */
  keepStdinOpen?: boolean;
  env?: Record<string, string>;
  /** Where argo is started from (default: the test's own working directory). */
  cwd?: string;
  onSpawn?: (child: ChildProcess) => void;
  /** Called with the child once it has printed something on stdout. */
  onStdout?: (child: ChildProcess, text: string) => void;
  /** Called with the child and all of stderr so far, whenever more arrives (to act on a line). */
  onStderr?: (child: ChildProcess, text: string) => void;
  /** Run as this user and group (only root may): root writes whatever a folder's mode says. */
  user?: { uid: number; gid: number };
}

/** A fresh data directory, optionally with a config.json. */
export function tempHome(config?: unknown): string {
  const home = mkdtempSync(join(tmpdir(), 'argo-e2e-'));
  if (config !== undefined) writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  return home;
}

/** The only environment a spawned argo sees: its data home, the stand-in's address, no colour. */
export function scrubbedEnv(options: { home: string; host?: string | undefined; env?: Record<string, string> | undefined }): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: options.home,
    ARGO_HOME: options.home,
    NO_COLOR: '1',
    // The run's temporary folder (test/support/global-setup.ts), so what argo leaves there goes with it.
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ...(options.host ? { OLLAMA_HOST: options.host } : {}),
    ...options.env,
  };
}

/** Spawns the built bin/argo with a scrubbed environment. */
export function runArgo(args: string[], options: RunOptions): Promise<ArgoResult> {
  const env = scrubbedEnv(options);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [ARGO_BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'], ...(options.cwd !== undefined ? { cwd: options.cwd } : {}), ...options.user });
    options.onSpawn?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      options.onStdout?.(child, stdout);
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      options.onStderr?.(child, stderr);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
    if (options.keepStdinOpen) child.stdin.write(options.stdin ?? '');
    else child.stdin.end(options.stdin ?? '');
  });
}

export function logLines(home: string): Record<string, unknown>[] {
  const dir = join(home, 'logs');
  let files: string[];
  try {
    files = readdirSync(dir).filter((name) => name.endsWith('.log')).sort();
  } catch {
    return [];
  }
  return files.flatMap((name) =>
    readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>),
  );
}
