// The built bin/argo over data homes that earlier versions of Argo left (test/fixtures/earlier-versions):
// everything in them is read, replayed as it was, and written on (docs/logs.md, "Files written by
// earlier versions").
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../../src/sessions/store.js';
import { copyEarlierHome } from '../support/earlier-homes.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo } from '../support/run-argo.js';
import { ssePayloads, startServe } from '../support/run-serve.js';

const ollama = await fakeOllamaPerFile();

const argo = (home: string, args: string[]) => runArgo(args, { home, host: ollama.url, env: { TZ: 'UTC' } });

describe('the CLI over a data home an earlier version left', () => {
  it.each([
    // home, a session, the turns a session replay sends (as that version's own build sends them), lines logged, journal files to log
    ['caf6b5f-first', 'work', ['eeYvI49wMinq', 'AXWECa_LkHa0', 'bWm3RMKm0rYe'], 6, 0],
    ['92c02f1-forks', 'alt2', ['-0JcYheOO9JI', 'cI7X0zIxyLmE', '9Sma8tDRluJ3', 'Uq2adNjl03kL'], 9, 0],
    ['5be5160-agent-serve', 'agent', ['sfOJZJutJO1E', 's9zKs8wsIjwr'], 13, 0],
    ['c24b503-journal', 'work', ['VclAOGDlOd2v', 'gCOt9TFpFNL7'], 2, 2],
    ['f09f18a-journal-owner', 'work', ['k2Y7NjIHz1uw', 'yBcNOgUuRsuL'], 2, 2],
  ])('%s: every line reads, session %s replays %j, and a new turn goes on from it', async (name, session, replayed, turns, recovered) => {
    const home = copyEarlierHome(name);
    const listed = await argo(home, ['logs', '--json']);
    expect(listed.stderr).toBe(recovered === 0 ? '' : `argo: logged ${recovered} turns an earlier argo left unfinished (killed or crashed): argo logs --status interrupted\n`);
    expect(listed.stdout.split('\n').filter((line) => line !== '')).toHaveLength(turns + recovered);
    expect(logLines(home).filter((line) => line.status === 'interrupted' && String(line.error).startsWith('argo ended before'))).toHaveLength(recovered);
    expect(await argo(home, ['logs', 'check'])).toMatchObject({ code: 0, stdout: `ok: 1 log file, ${turns + recovered} turns, no unreadable lines\n` });

    const explain = await argo(home, ['--session', session, '--replay', 'session', '--explain', '--json', 'Go on with it']);
    expect(explain.stderr).toBe('');
    expect((JSON.parse(explain.stdout) as { replayed_ids: string[] }).replayed_ids).toEqual(replayed);
    // The index rebuilt from the log replays the same.
    expect((await argo(home, ['sessions', 'reindex'])).code).toBe(0);
    const again = await argo(home, ['--session', session, '--replay', 'session', '--explain', '--json', 'Go on with it']);
    expect((JSON.parse(again.stdout) as { replayed_ids: string[] }).replayed_ids).toEqual(replayed);

    const turn = await argo(home, ['--session', session, '--model', 'argo', '--replay', 'session', 'Go on with it']);
    expect(turn).toMatchObject({ code: 0, stdout: 'You said: Go on with it\n' });
    expect(logLines(home).at(-1)).toMatchObject({ session, replayed_ids: replayed, status: 'ok' });
    // The new turn goes to today's file: the earlier version's own, or a second one on any later day.
    const files = readdirSync(join(home, 'logs')).filter((file) => /^\d{4}-\d{2}-\d{2}\.log$/.test(file)).length;
    expect([1, 2]).toContain(files);
    expect((await argo(home, ['logs', 'check'])).stdout).toBe(`ok: ${files === 1 ? '1 log file' : '2 log files'}, ${turns + recovered + 1} turns, no unreadable lines\n`);
  });

  it('92c02f1: a session named ".notes" (names could start with a dot then) is its fork\'s parent, and works again once renamed', async () => {
    const home = copyEarlierHome('92c02f1-forks');
    expect((await argo(home, ['sessions'])).stdout).toContain('(fork of .notes@2aYrA9y5buYE) Remember the milk');
    // Nothing but the rename takes the old name: not a turn, not logs -s, nor logs rm -s, which would
    // delete it. The session is there, so every refusal names the rename.
    const hint = (where: string): string =>
      `argo: ${where}: invalid session name ".notes": names no longer start with a dot (the session an earlier version made under it works again once renamed: argo sessions rename .notes notes)\n`;
    for (const [args, where] of [
      [['--session', '.notes', 'more'], '--session'],
      [['logs', '-s', '.notes'], '--session'],
      [['logs', 'rm', '-s', '.notes', '--yes'], '--session'],
      [['sessions', 'show', '.notes'], 'sessions show'],
      [['sessions', 'fork', '.notes', 'copy'], 'sessions fork'],
      [['last', '-s', '.notes'], '--session'],
    ] as const) {
      expect(await argo(home, [...args])).toMatchObject({ code: 2, stdout: '', stderr: hint(where) });
    }
    expect(await argo(home, ['sessions', 'rename', '.notes', 'notes'])).toMatchObject({ code: 0, stdout: 'renamed session ".notes" to "notes"\n' });
    const records = JSON.parse((await argo(home, ['sessions', '--json'])).stdout) as SessionRecord[];
    expect(records.find((record) => record.name === 'shop')?.parent?.name).toBe('notes');
    const explain = await argo(home, ['--session', 'notes', '--replay', 'session', '--explain', '--json', 'and butter']);
    expect((JSON.parse(explain.stdout) as { replayed_ids: string[] }).replayed_ids).toEqual(['RaD25ESPlSx2', '2aYrA9y5buYE']);
  });

  it('5be5160: a config.json with toolBudgets of 200 (the floor was 100 then) works, at 500, and doctor says so', async () => {
    const home = copyEarlierHome('5be5160-agent-serve');
    expect(await argo(home, ['--session', 'work', 'Hello again'])).toMatchObject({ code: 0, stdout: 'You said: Hello again\n', stderr: '' });
    const doctor = await argo(home, ['doctor']);
    expect(doctor.stdout).toContain(`ok    config     ${home}/config.json (or defaults); toolBudgets under 500, which earlier versions took, count as 500 ("read_file")\n`);
    expect((await argo(home, ['memo', 'list'])).stdout).toBe('editor\t"vim"\nlang\t"TypeScript"\n');
  });
});

describe('argo serve over a data home an earlier version left', () => {
  it("5be5160: its jobs are listed and followed (the one a killed server left running is failed), its sessions replayed", async () => {
    const home = copyEarlierHome('5be5160-agent-serve');
    const serve = await startServe({ home, host: ollama.url });
    try {
      const jobs = (await (await fetch(`${serve.url}/api/jobs`)).json()) as { id: string; state: string }[];
      expect(jobs.map((job) => [job.id, job.state]).sort()).toEqual([
        ['ewhuD36jASUK', 'completed'],
        ['g_3HAAwlCwSY', 'failed'],
        ['glwMhbzu7f30', 'cancelled'],
        ['lfnmEYl5eG6i', 'failed'],
      ]);
      const stream = ssePayloads(await (await fetch(`${serve.url}/api/jobs/ewhuD36jASUK/stream`)).text());
      expect(stream.at(-1)).toBe('[DONE]');
      const [first, last] = stream.slice(0, -1).map((payload) => JSON.parse(payload) as { choices: { delta: { content?: string }; finish_reason: string | null }[] });
      expect([first?.choices[0]?.delta.content, last?.choices[0]?.finish_reason]).toEqual(['You said: Write a long story', 'stop']);

      const response = await fetch(`${serve.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-argo-session': 'srv', 'x-argo-replay': 'session' },
        body: JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: 'more hints' }] }),
      });
      const answer = (await response.json()) as { argo: { replay_policy: { decisions: { id: string }[] } } };
      expect(answer.argo.replay_policy.decisions.map((decision) => decision.id)).toEqual(['F1ogQ293UKht', 'j6hXn_9EEbAK']);
      const agent = (await (await fetch(`${serve.url}/api/sessions/agent`)).json()) as { turns: unknown[] };
      expect(agent.turns).toHaveLength(5);
    } finally {
      await serve.stop();
    }
  });
});
