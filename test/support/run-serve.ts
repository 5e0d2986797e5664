// Starts the built `bin/argo serve --port 0` and waits for the line with its URL.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { ARGO_BIN, scrubbedEnv } from './run-argo.js';


export interface ServeProcess {
  url: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then waits for the exit. */
  stop: () => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ServeOptions {
  home: string;
  host?: string;
  args?: string[];
  env?: Record<string, string>;
}

export function startServe(options: ServeOptions): Promise<ServeProcess> {
  const env = scrubbedEnv(options);
  const child = spawn(process.execPath, [ARGO_BIN, 'serve', '--port', '0', ...(options.args ?? [])], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (url) {
        resolve({
          url,
          child,
          stdout: () => stdout,
          stderr: () => stderr,
          exited,
          stop: () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
    void exited.then(({ code }) => reject(new Error(`argo serve exited with ${code}: ${stderr}`)));
  });
}

/** An SSE body split into its `data:` payloads. */
export function ssePayloads(body: string): string[] {
  return body
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      if (!block.startsWith('data: ')) throw new Error(`not an SSE data block: ${JSON.stringify(block)}`);
      return block.slice('data: '.length);
    });
}
