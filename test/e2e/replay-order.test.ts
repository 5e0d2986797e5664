// A session's replay after a clock was once set days ahead: the index written at the time, a rebuild
// of it, and --explain all give the turns in the order they were asked.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile();

const ENV = { TZ: 'UTC' };
const argo = (home: string, args: string[]) => runArgo(args, { home, host: ollama.url, env: ENV });

/** `day` (a log file's name) moved `days` on. */
const later = (file: string, days: number): string => `${new Date(Date.parse(file.slice(0, 10)) + days * 86_400_000).toISOString().slice(0, 10)}.log`;

describe('replay after a clock was set days ahead', () => {
  it('last:1 is the turn asked last, whether the index was written at the time or rebuilt, and --explain agrees with the run', async () => {
    const home = tempHome();
    expect((await argo(home, ['-s', 'ck', 'Explain A'])).code).toBe(0);
    // As if the clock had been 12 days ahead for that turn: its day's file and its index line say so.
    const [today] = logLines(home).map((line) => String(line.timestamp).slice(0, 10) + '.log');
    if (today === undefined) throw new Error('no turn logged');
    const ahead = later(today, 12);
    renameSync(join(home, 'logs', today), join(home, 'logs', ahead));
    const index = join(home, 'sessions', 'ck.idx');
    writeFileSync(index, readFileSync(index, 'utf8').replaceAll(today, ahead));
    for (const prompt of ['Explain B', 'Explain C']) expect((await argo(home, ['-s', 'ck', prompt])).code).toBe(0);
    const newest = logLines(home).find((line) => line.user_prompt === 'Explain C')?.id;

    // The cached types go stale: the next replay rebuilds the index.
    writeFileSync(join(home, 'config.json'), JSON.stringify({ replay: { classify: { politePrefixes: ['please', 'kindly'] } } }));
    const explained = await argo(home, ['-s', 'ck', '-r', 'last:1', '--explain', '--json', 'Add']);
    expect(explained).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(explained.stdout) as { replayed_ids: string[] }).replayed_ids).toEqual([newest]);

    expect((await argo(home, ['-s', 'ck', '-r', 'last:1', 'Add'])).code).toBe(0);
    expect(logLines(home).find((line) => line.user_prompt === 'Add')?.replayed_ids).toEqual([newest]);
  });
});
