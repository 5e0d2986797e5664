// Ollama's answers at the edges of its protocol, end to end: a whole answer that is a proxy's page,
// a stream a buffering proxy holds open after its final chunk, an empty answer whose counts Ollama
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
const chatRequests = () => ollama.requests.filter((request) => request.path === '/api/chat');

describe('--no-stream: a whole answer that is not Ollama\'s JSON', () => {
  const NOT_JSON = 'Ollama sent a line that is not JSON (<html><body>Login required</body></html>); the answer is incomplete';

  it('a login page answered with 200 is bad server output (ollama_malformed), not a dropped connection', async () => {
    ollama.setScenario({ proxyPage: { status: 200, body: '<html><body>Login required</body></html>\n' } });
    const home = tempHome();
    const result = await ask(['--no-stream', 'hi'], home);
    expect(result).toMatchObject({ code: 1, stdout: '', stderr: `argo: ${NOT_JSON} (logged as error)\n` });
    expect(logLines(home)).toMatchObject([{ status: 'error', error: NOT_JSON, model_response: '' }]);
    const json = await ask(['--no-stream', '--json', 'hi'], home);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'error', error: NOT_JSON, error_code: 'ollama_malformed' });
    // Bad output is not retried: asking again would get the same page.
    expect(chatRequests()).toHaveLength(2);
  });
});

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
