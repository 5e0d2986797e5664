// `argo memo` end to end: its limits as the user meets them; the memo tool cut while it waits.
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const { ollama, play } = await scriptedOllamaPerFile();

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

describe('the memo tool waiting for a lock another process holds', () => {
  it.each([
    // how the user ends the run → exit, the run's status
    ['Ctrl-C', 130, 'interrupted'],
    ['argo stop', 1, 'stopped'],
  ] as const)('%s ends the run at once: the call is logged cut, and the memo is never written', async (how, code, status) => {
    const home = tempHome();
    // The directory proper-lockfile makes, fresh: taken over as stale only after 10 s.
    mkdirSync(join(home, 'locks', 'memo.lock'), { recursive: true });
    play.rounds = [{ calls: [{ function: { name: 'memo', arguments: { operation: 'set', key: 'k', value: 'v' } } }] }, { reply: 'never' }];
    const started = Date.now();
    let cut = false;
    const result = await runArgo(['-T', 'memo', 'remember k'], {
      home,
      host: ollama.url,
      onStderr: (child, stderr) => {
        if (cut || !stderr.includes('argo: waiting for the memo')) return;
        cut = true;
        if (how === 'Ctrl-C') child.kill('SIGINT');
        else writeFileSync(join(home, 'STOP'), '');
      },
    });
    expect(result.code).toBe(code);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(existsSync(join(home, 'memo.json'))).toBe(false);
    expect(logLines(home)[0]).toMatchObject({ status, tool_calls: [{ name: 'memo', outcome: 'failure', error: 'the call was interrupted' }] });
  });
});
