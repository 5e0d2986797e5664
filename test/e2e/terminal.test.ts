import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama } from '../support/fake-ollama.js';
import type { FakeOllama } from '../support/fake-ollama.js';
import { ARGO_BIN, logLines, runArgo, tempHome } from '../support/run-argo.js';

let ollama: FakeOllama;
beforeAll(async () => {
  // Every answer waits after its headers until the test releases it: the time before the first token.
  ollama = await startFakeOllama({ scenario: { holdAfter: 0 } });
});
afterAll(async () => {
  await ollama.close();
});

/** Lets the answer go on as soon as it is held, for tests that only need the wait to have happened. */
function releaseWhenHeld(): void {
  void ollama.waitForHold().then(() => {
    ollama.release();
  });
}

/** Runs argo under a pseudo-terminal (util-linux `script`), so stdin, stdout and stderr are TTYs. */
function runInTerminal(
  args: string[], home: string, onOutput: (output: string) => void = () => undefined,
): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, ARGO_BIN, ...args].map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', HOME: home, ARGO_HOME: home, OLLAMA_HOST: ollama.url, TERM: 'xterm' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      output += text;
      onOutput(output);
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('argo on a terminal', () => {
  it('shows a spinner on stderr while waiting for the first token, then erases it', async () => {
    const home = tempHome();
    let spinnerSeen = false;
    const { code, output } = await runInTerminal(['hello'], home, (sofar) => {
      if (spinnerSeen || !sofar.includes('asking argo')) return;
      spinnerSeen = true;
      releaseWhenHeld(); // the first token comes only after the spinner was on screen
    });
    expect(code).toBe(0);
    expect(output).toMatch(/⠋ asking argo…/);
    expect(output).toContain('\r\x1b[K');
    expect(output.endsWith('You said: hello\r\n')).toBe(true);
  });

  it('shows no spinner with --json', async () => {
    const home = tempHome();
    releaseWhenHeld();
    const { code, output } = await runInTerminal(['--json', 'hello'], home);
    expect(code).toBe(0);
    expect(output).not.toMatch(/asking argo/);
    expect(JSON.parse(output.trim())).toMatchObject({ response: 'You said: hello', status: 'ok' });
  });

  it('shows no spinner when stderr is not a terminal', async () => {
    const home = tempHome();
    releaseWhenHeld();
    const result = await runArgo(['hello'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: 'You said: hello\n' });
  });

  it('Ctrl-C before the request (still reading piped input) exits 130 at once, writing nothing', async () => {
    const home = tempHome();
    const started = Date.now();
    const result = await runArgo(['summarise this'], {
      home,
      host: ollama.url,
      // More than a pipe holds: 'drain' means argo is reading it, so its Ctrl-C handler is in place.
      stdin: 'partial input… '.repeat(20_000),
      keepStdinOpen: true,
      onSpawn: (child) => child.stdin?.once('drain', () => child.kill('SIGINT')),
    });
    expect(result.code).toBe(130);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(logLines(home)).toEqual([]);
  });
});
