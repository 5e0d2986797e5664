// Ollama's answers at the edges of its protocol, end to end: a stream a buffering proxy holds open
// after its final chunk, an empty answer whose counts Ollama leaves out.
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
const chatRequests = () => ollama.requests.filter((request) => request.path === '/api/chat');

describe('the final chunk ends the answer', () => {
  it('a stream held open after it (a buffering proxy) is given up: exit 0, the answer printed and logged ok', async () => {
    ollama.setScenario({ openAfterDone: true });
    ollama.options.tokens = ['All', ' done.'];
    const home = tempHome();
    const result = await ask(['hi'], home);
    expect(result).toMatchObject({ code: 0, signal: null, stdout: 'All done.\n', stderr: '' });
    expect(logLines(home)).toMatchObject([{ status: 'ok', model_response: 'All done.', done_reason: 'stop', error: null }]);
    const [request] = chatRequests();
    await request?.settled;
    expect(request).toMatchObject({ clientAborted: true, linesWritten: 3 });
  });
});

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
