// `argo memo` end to end: its limits as the user meets them.
import { describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runArgo, tempHome } from '../support/run-argo.js';

describe('argo memo set: the limits count Unicode code points, as the docs say, not UTF-16 units', () => {
  it('a value of 1,000 emoji is kept; one more is refused, counted in code points', async () => {
    const home = tempHome();
    expect(await runArgo(['memo', 'set', 'smile', '😀'.repeat(1000)], { home })).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await runArgo(['memo', 'get', 'smile'], { home })).toMatchObject({ code: 0, stdout: `${'😀'.repeat(1000)}\n` });
    expect(await runArgo(['memo', 'set', 'more', '😀'.repeat(1001)], { home })).toMatchObject({
      code: 2,
      stderr: 'argo: a memo value may have at most 1000 characters, counted in Unicode code points (a flag or a skin-toned emoji is 2), this one has 1001; shorten it\n',
    });
  });

  it('600 flags are 1,200 code points: refused, and the message says how it counted', async () => {
    expect(await runArgo(['memo', 'set', 'flags', '🇫🇷'.repeat(600)], { home: tempHome() })).toMatchObject({
      code: 2,
      stderr: 'argo: a memo value may have at most 1000 characters, counted in Unicode code points (a flag or a skin-toned emoji is 2), this one has 1200; shorten it\n',
    });
  });
});

describe('argo memo: a memo.json that is not a file', () => {
  it('a folder there is one line saying so and what to do, exit 1, not an unexpected failure', async () => {
    const home = tempHome();
    mkdirSync(join(home, 'memo.json'));
    for (const args of [['memo', 'list'], ['memo', 'get', 'k'], ['memo', 'set', 'k', 'v']]) {
      expect(await runArgo(args, { home })).toMatchObject({
        code: 1,
        stdout: '',
        stderr: `argo: ${join(home, 'memo.json')} is not a file (a folder); move it out of the way\n`,
      });
    }
  });
});
