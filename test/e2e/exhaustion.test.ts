// Argo when the machine runs short: a full disk, a file system that takes no more, an output nobody
// can write to. /dev/full (Linux) stands for a full disk wherever a path can be given: every write to it
// fails with ENOSPC, as one to a full file system does.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama } from '../support/fake-ollama.js';
import type { FakeOllama } from '../support/fake-ollama.js';
import { runArgo, tempHome } from '../support/run-argo.js';
import type { RunOptions } from '../support/run-argo.js';

const FULL = '/dev/full';
const hasFull = existsSync(FULL);

let ollama: FakeOllama;
beforeAll(async () => {
  ollama = await startFakeOllama();
});
afterAll(async () => {
  await ollama.close();
});

const argo = (home: string, args: string[], extra: Partial<RunOptions> = {}) => runArgo(args, { home, host: ollama.url, env: { TZ: 'UTC' }, ...extra });

describe.runIf(hasFull)('a full disk where a path is given (/dev/full)', () => {
  it('export -o onto it: one line saying the disk is full and what to do, exit 1, never "unexpected failure"', async () => {
    const home = tempHome();
    expect((await argo(home, ['a question to export'])).code).toBe(0);
    const result = await argo(home, ['export', '--format', 'sharegpt', '--all', '-o', FULL]);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(`argo: cannot use ${FULL}: no space left on the device; free some space on its disk (df -h shows which) and try again\n`);
  });
});
