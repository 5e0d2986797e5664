// A folder of the root swapped for a link out of it, again and again, by another process while the
// file tools run: nothing outside may ever be read or written. The swaps race the tools, so a run may
// hit the window often or rarely; what is asserted is "never", which no timing can make flaky.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editFileTool, writeFileTool } from '../../src/tools/edit.js';
import { readFileTool, searchFilesTool } from '../../src/tools/fs.js';
import type { ToolContext } from '../../src/tools/types.js';
import { waitFor } from '../support/wait.js';

const ATTEMPTS = 400;
const OUTSIDE = 'OUTSIDE-SECRET';

// Swaps root/d (a folder) and root/alt (a link out) in a loop: atomically with renameat2's
// RENAME_EXCHANGE where python3 can call it, else by four renames (d is then missing at times).
const SWAPPER = String.raw`
import ctypes, os, sys
os.chdir(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
open('swapping', 'w').close()
while True:
    libc.renameat2(-100, b'd', -100, b'alt', 2)
`;
const NODE_SWAPPER = `
const { renameSync, writeFileSync } = require('node:fs');
process.chdir(process.argv[1]);
writeFileSync('swapping', '');
const step = (from, to) => { try { renameSync(from, to); } catch {} };
for (;;) { step('d', 't'); step('alt', 'd'); step('d', 'alt'); step('t', 'd'); }
`;

let root: string;
let outside: string;
let context: ToolContext;
let swapper: ChildProcess;

function startSwapper(): ChildProcess {
  const python = spawn('python3', ['-c', SWAPPER, root], { stdio: 'ignore' });
  python.on('error', () => undefined);
  return python;
}

beforeAll(async () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'argo-race-')));
  root = join(base, 'root');
  outside = join(base, 'outside');
  mkdirSync(join(root, 'd'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'd', 'f.txt'), 'inside\n');
  writeFileSync(join(root, 'd', 'e.txt'), 'one\n');
  writeFileSync(join(outside, 'f.txt'), `${OUTSIDE}\n`);
  writeFileSync(join(outside, 'e.txt'), `${OUTSIDE} one\n`);
  symlinkSync(outside, join(root, 'alt'));
  context = { root, home: join(base, 'home'), signal: new AbortController().signal };
  swapper = startSwapper();
  const exited = new Promise<number | null>((resolve) => swapper.once('exit', resolve));
  // python3 missing or without renameat2: the portable loop instead.
  const started = await Promise.race([exited.then(() => false), waitFor(() => readFileSync(join(root, 'swapping'))).then(() => true)]);
  if (!started) {
    swapper = spawn(process.execPath, ['-e', NODE_SWAPPER, root], { stdio: 'ignore' });
    await waitFor(() => readFileSync(join(root, 'swapping')));
  }
});

afterAll(() => {
  swapper.kill('SIGKILL');
});

/** Runs `attempt` ATTEMPTS times; each either fails or gives a result. Returns the results. */
async function attempts<T>(attempt: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let index = 0; index < ATTEMPTS; index++) {
    try {
      results.push(await attempt(index));
    } catch {
      // refused (outside, changed, missing mid-swap): what matters is what was never done
    }
  }
  return results;
}

describe('a folder swapped for a link out of the root while the tools run', () => {
  it('read_file never returns what lies outside', async () => {
    const results = await attempts(() => readFileTool.run({ path: 'd/f.txt' }, context));
    expect(results.map((result) => String(result.content)).filter((content) => content.includes(OUTSIDE))).toEqual([]);
  });

  it('search_files never returns a line from outside', async () => {
    const results = await attempts(() => searchFilesTool.run({ pattern: 'SECRET|inside', path: 'd' }, context));
    expect(results.flatMap((result) => result.matches as { text: string }[]).filter((match) => match.text.includes(OUTSIDE))).toEqual([]);
  });

  it('write_file (overwrite, append, create) and edit_file never write outside', async () => {
    await attempts(() => writeFileTool.run({ path: 'd/f.txt', content: 'inside\n' }, context));
    await attempts((index) => writeFileTool.run({ path: 'd/log.txt', content: `${index}\n`, mode: 'append' }, context));
    await attempts((index) => writeFileTool.run({ path: `d/new-${index}.txt`, content: 'new\n', mode: 'create' }, context));
    await attempts((index) => writeFileTool.run({ path: `d/sub-${index}/deep.txt`, content: 'deep\n' }, context));
    await attempts(() => editFileTool.run({ path: 'd/e.txt', old: 'one', new: 'one' }, context));
    expect(readdirSync(outside).sort()).toEqual(['e.txt', 'f.txt']);
    expect(readFileSync(join(outside, 'f.txt'), 'utf8')).toBe(`${OUTSIDE}\n`);
    expect(readFileSync(join(outside, 'e.txt'), 'utf8')).toBe(`${OUTSIDE} one\n`);
  });
});
