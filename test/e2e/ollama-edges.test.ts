// Ollama's answers at the edges of its protocol, end to end: an empty answer whose counts Ollama
// leaves out.
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile();

beforeEach(() => {
  ollama.setScenario(undefined);
  ollama.options.tokens = undefined;
  ollama.requests.length = 0;
});

const ask = (args: string[], home: string) => runArgo(args, { home, host: ollama.url });

describe('figures Ollama leaves out of its final chunk (api.Metrics is omitempty)', () => {
  it('an empty answer sends no eval_count: 0 answer tokens, not "no final chunk"', async () => {
    ollama.options.tokens = [];
    const home = tempHome();
    const stats = await ask(['--stats', 'hi'], home);
    expect(stats.code).toBe(0);
    const [figures, ...rest] = stats.stderr.split('\n');
    expect(figures).toMatch(/^prompt \d+ tokens · answer 0 tokens · 0\.00 tokens\/s · load [\d.]+s · total [\d.]+s$/);
    expect(rest).toEqual(['argo: the model gave an empty answer', '']);
    const json = await ask(['--json', 'hi'], home);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'ok', stats: { answer_tokens: 0, prompt_tokens: expect.any(Number) as unknown, tokens_per_second: 0 } });
    expect(logLines(home).map((line) => line.timings)).toMatchObject([{ eval_count: 0 }, { eval_count: 0 }]);
  });
});
