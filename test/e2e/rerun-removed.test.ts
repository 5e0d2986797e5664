// `argo rerun ID --explain` says what the rerun itself says of a turn whose session was removed.
import { describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile({ models: [{ name: 'argo:latest' }] });
const argo = (args: string[], home: string) => runArgo(args, { home, host: ollama.url });

describe('argo rerun --explain and a removed session', () => {
  // Steps after the turn is asked in "dup"; the session --explain's first line names.
  it.each<[string, string[][], string]>([
    ['the session is there', [], 'session dup)'],
    ['renamed', [['sessions', 'rename', 'dup', 'kept']], 'session kept)'],
    ['removed', [['sessions', 'rm', 'dup', '--yes']], 'session dup (removed))'],
    ['renamed, then removed, its old name taken', [['sessions', 'rename', 'dup', 'old'], ['-s', 'dup', 'another'], ['sessions', 'rm', 'old', '--yes']], 'session old (removed))'],
  ])('%s', async (_name, steps, said) => {
    const home = tempHome();
    expect((await argo(['-s', 'dup', 'Write a function'], home)).code).toBe(0);
    const id = String(logLines(home)[0]?.id);
    for (const step of steps) expect((await argo(step, home)).code).toBe(0);
    const explained = await argo(['rerun', id, '--explain'], home);
    expect(explained).toMatchObject({ code: 0, stderr: '' });
    expect(explained.stdout.split('\n')[0]).toMatch(new RegExp(`^rerun of  ${id} \\(\\S+, ${said.replace(/[()]/g, '\\$&')}$`));
  });
});
