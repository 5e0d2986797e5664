// --system-file that is no plain file: a pipe (process substitution, a named pipe written later) is
// read without a thread waiting in open(2) or read(2), so Ctrl-C and SIGTERM end the run at once; a
// device that never ends is read no further than the limit.
import { spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ARGO_BIN, runArgo, scrubbedEnv, tempHome } from '../support/run-argo.js';

/** A named pipe in a fresh data home. */
function namedPipe(home: string): string {
  const path = join(home, 'system.fifo');
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
  return path;
}

/** Opens `fifo` for writing once a reader has it open (before that, a non-blocking open fails with ENXIO). */
async function writerOnceRead(fifo: string): Promise<number> {
  return vi.waitFor(() => openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK), { timeout: 10_000, interval: 20 });
}

describe('--system-file a pipe', () => {
  it.each([
    ['SIGINT', 130, 'argo: interrupted\n'],
    ['SIGTERM', 143, 'argo: terminated (SIGTERM)\n'],
  ] as const)('%s while it waits for the pipe: the run ends (exit %i) once it says so', async (signal, code, stderr) => {
    const home = tempHome();
    const fifo = namedPipe(home);
    let child: ChildProcess | undefined;
    const run = runArgo(['-m', 'argo', '--system-file', fifo, 'hi'], { home, host: 'http://127.0.0.1:9', onSpawn: (spawned) => (child = spawned) });
    const writer = await writerOnceRead(fifo);
    try {
      child?.kill(signal);
      expect(await run).toMatchObject({ code, stderr });
    } finally {
      closeSync(writer);
    }
  });

  it('a named pipe written to after argo started: its text is the system prompt', async () => {
    const home = tempHome();
    const fifo = namedPipe(home);
    const run = runArgo(['-m', 'argo', '--system-file', fifo, '--explain', 'hi'], { home, host: 'http://127.0.0.1:9' });
    const writer = await writerOnceRead(fifo);
    writeSync(writer, 'from a late writer');
    closeSync(writer);
    const result = await run;
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('"content": "from a late writer\\n');
  });

  it('process substitution (<(cmd), a /dev/fd path): its output is the system prompt', () => {
    const home = tempHome();
    const result = spawnSync('bash', ['-c', `"${process.execPath}" "${ARGO_BIN}" -m argo --system-file <(printf 'from a command') --explain hi`], {
      encoding: 'utf8',
      env: scrubbedEnv({ home, host: 'http://127.0.0.1:9' }),
    });
    expect(result).toMatchObject({ status: 0, stderr: '' });
    expect(result.stdout).toContain('"content": "from a command\\n');
  });

  it('more than 1 MiB through a pipe: refused once the limit is passed, exit 2', () => {
    const home = tempHome();
    const result = spawnSync('bash', ['-c', `"${process.execPath}" "${ARGO_BIN}" -m argo --system-file <(yes) hi`], { encoding: 'utf8', env: scrubbedEnv({ home, host: 'http://127.0.0.1:9' }) });
    expect(result).toMatchObject({ status: 2, stderr: expect.stringMatching(/^argo: --system-file \/dev\/fd\/\d+ is larger than 1 MiB, the most argo takes as a system prompt; give a shorter one\n$/) as unknown });
  });
});

describe('--system-file a device', () => {
  it.each([
    ['/dev/zero, which never ends: read no further than 1 MiB, exit 2', '/dev/zero', 2, 'argo: --system-file /dev/zero is larger than 1 MiB, the most argo takes as a system prompt; give a shorter one\n'],
    ['/dev/null: empty, so no system prompt', '/dev/null', 0, ''],
  ])('%s', async (_case, path, code, stderr) => {
    const home = tempHome();
    const result = await runArgo(['-m', 'argo', '--system-file', path, '--explain', 'hi'], { home, host: 'http://127.0.0.1:9' });
    expect(result).toMatchObject({ code, stderr });
  });
});

describe('--system-file a socket', () => {
  it('is refused in one line saying what it is, exit 2', async () => {
    const home = tempHome();
    const path = join(home, 'system.sock');
    const server = createServer();
    await new Promise<void>((listening) => server.listen(path, listening));
    try {
      const result = await runArgo(['-m', 'argo', '--system-file', path, '--explain', 'hi'], { home, host: 'http://127.0.0.1:9' });
      expect(result).toMatchObject({ code: 2, stdout: '', stderr: `argo: --system-file: cannot read ${path}: it is a socket, a device with nothing behind it or a pipe nobody reads, not a file\n` });
    } finally {
      server.close();
    }
  });
});
