// What argo reads from a pipe or a file as its prompt or a chat's lines: a line too long is
// refused, a byte order mark is no text.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { ARGO_BIN, logLines, runArgo, scrubbedEnv, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile();

/** `argo ARGS < file`, as a shell runs it: standard input is the file itself, not a pipe. */
function runArgoFrom(file: string, args: string[], home: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', 'file=$1; shift; exec "$@" < "$file"', 'sh', file, process.execPath, ARGO_BIN, ...args], { env: scrubbedEnv({ home, host: ollama.url }), maxBuffer: 64 * 1024 * 1024, timeout: 20_000, killSignal: 'SIGKILL' }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr });
    });
  });
}

const LONG_LINE = /^argo: line (\d+) of standard input is longer than 1 MiB, the most argo takes as one message: shorten it \(or send a part of it, e\.g\. head -c 1000000 big\.log \| argo "what failed\?"\); the lines before it were sent, it and those after were not\n$/;

describe('a piped chat: a line longer than 1 MiB', () => {
  it('argo chat < file: the lines before it are sent and answered, it and those after are not; exit 2, one line naming it', async () => {
    const home = tempHome();
    const file = join(home, 'script.txt');
    writeFileSync(file, `first\n${'a'.repeat(2 * 1024 * 1024)}\nthird\n`);
    const result = await runArgoFrom(file, ['chat', '-s', 'script'], home);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('You said: first\n');
    expect(LONG_LINE.exec(result.stderr)?.[1]).toBe('2');
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['first']);
  });

  it('argo chat < /dev/zero: a line that never ends is read no further than the limit, then refused', async () => {
    const home = tempHome();
    const result = await runArgoFrom('/dev/zero', ['chat', '-s', 'zero'], home);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(LONG_LINE.exec(result.stderr)?.[1]).toBe('1');
    expect(logLines(home)).toEqual([]);
  });
});

describe('a byte order mark at the start of standard input is no text of the prompt', () => {
  it.each([
    ['a one-liner', [] as string[], Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69])],
    ['a piped chat', ['chat'], Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69, 0x0a])],
  ])('%s', async (_case, args, stdin) => {
    const home = tempHome();
    const result = await runArgo(args, { home, host: ollama.url, stdin });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('You said: hi\n');
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['hi']);
  });
});

describe('a piped chat: only answers on standard output', () => {
  it('/help, /stats and /explain print on standard error; /last, an answer again, on standard output', async () => {
    const home = tempHome();
    const result = await runArgo(['chat', '-s', 'tee', '-q'], { home, host: ollama.url, stdin: '/help\nq\n/stats\n/explain why\n/last\n' });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('You said: q\nYou said: q\n');
    expect(result.stderr).toContain('/bye           leave');
    expect(result.stderr).toMatch(/tokens/);
    expect(result.stderr).toContain('"content": "why"');
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['q']);
  });
});
