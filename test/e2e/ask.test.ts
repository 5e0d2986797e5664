import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { BUSY_MESSAGE } from '../support/fake-ollama.js';
import type { FakeOllama, RecordedRequest } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { waitFor } from '../support/wait.js';

const ollama = await fakeOllamaPerFile();
const fastRetries = { retries: { attempts: 3, initialDelayMs: 20 } };

beforeEach(() => {
  ollama.setScenario(undefined);
  ollama.options.reply = undefined;
  ollama.options.tokens = undefined;
  ollama.requests.length = 0;
});

function ask(args: string[], home: string, extra: { stdin?: string; env?: Record<string, string> } = {}) {
  return runArgo(args, { home, host: ollama.url, ...extra });
}

function lastBody(): Record<string, unknown> {
  const request = ollama.requests.filter((r) => r.path === '/api/chat' || r.path === '/api/generate').at(-1);
  if (!request) throw new Error('no model request was made');
  return JSON.parse(request.body) as Record<string, unknown>;
}

describe('argo: the happy path', () => {
  it('streams a chat answer, logs one complete line, creates the session', async () => {
    const home = tempHome();
    const result = await ask(['--session', 'work', 'Explain closures in JavaScript'], home);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe('You said: Explain closures in JavaScript\n');

    const body = lastBody();
    expect(body.model).toBe('argo');
    expect(body.stream).toBe(true);
    expect(body.messages).toEqual([
      { role: 'system', content: expect.stringContaining('neutral') as unknown },
      { role: 'user', content: 'Explain closures in JavaScript' },
    ]);

    const [entry, ...rest] = logLines(home);
    expect(rest).toEqual([]);
    const session = JSON.parse(readFileSync(join(home, 'sessions', 'work.json'), 'utf8')) as Record<string, unknown>;
    expect(entry).toMatchObject({
      session: 'work',
      session_id: session.id,
      status: 'ok',
      entry_type: 'instruction',
      model: 'argo',
      endpoint: 'chat',
      active_mode: null,
      persona: 'neutral',
      verbosity: 'long',
      replay: { enabled: false, count: null, session: false },
      user_prompt: 'Explain closures in JavaScript',
      model_response: 'You said: Explain closures in JavaScript',
      replay_policy: null,
      replayed_ids: [],
      done_reason: 'stop',
      error: null,
    });
    expect(entry?.id).toMatch(/^[\w-]{12}$/);
    expect(entry?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/);
    const timings = entry?.timings as Record<string, number>;
    expect(timings.first_token_ms).toBeGreaterThanOrEqual(0);
    expect(timings.eval_count).toBeGreaterThan(0);
    expect(Number.isInteger(timings.eval_duration_ns)).toBe(true);

    expect(session).toMatchObject({ name: 'work', title: 'Explain closures in JavaScript', turns: 1, last_model: 'argo' });
    expect(session.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(statSync(join(home, 'logs')).mode & 0o777).toBe(0o700);
    expect(statSync(join(home, 'sessions')).mode & 0o777).toBe(0o700);
    const logFile = readdirSync(join(home, 'logs'))[0] ?? '';
    expect(logFile).toMatch(/^\d{4}-\d\d-\d\d\.log$/);
    expect(statSync(join(home, 'logs', logFile)).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'sessions', 'work.json')).mode & 0o777).toBe(0o600);
  });

  it('uses /api/generate with a prompt string and a system field', async () => {
    const home = tempHome();
    const result = await ask(['--api', 'generate', '--mode', 'shell', 'list files by size'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'You said: list files by size\n' });
    const request = ollama.requests.at(-1);
    expect(request?.path).toBe('/api/generate');
    const body = lastBody();
    expect(body.prompt).toBe('list files by size');
    expect(body.system).toMatch(/^You help with shell commands/);
    expect(logLines(home)[0]).toMatchObject({ endpoint: 'generate', active_mode: 'shell', status: 'ok' });
  });

  it('keeps text carried by the final chunk', async () => {
    const home = tempHome();
    ollama.options.textInDone = true;
    try {
      const result = await ask(['hello there'], home);
      expect(result.stdout).toBe('You said: hello there\n');
      expect(logLines(home)[0]?.model_response).toBe('You said: hello there');
    } finally {
      ollama.options.textInDone = false;
    }
  });

  it('--no-stream asks for one response', async () => {
    const home = tempHome();
    const result = await ask(['--no-stream', 'what is 2+2?'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'You said: what is 2+2?\n' });
    expect(lastBody().stream).toBe(false);
    expect(logLines(home)[0]).toMatchObject({ status: 'ok', entry_type: 'question' });
  });

  it('--json prints one object with the answer and its diagnostics', async () => {
    const home = tempHome();
    const result = await ask(['--json', '--replay', 'last:2', 'why is the sky blue?'], home);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(printed)).toEqual(['id', 'session', 'model', 'response', 'status', 'replay_policy', 'timings', 'error', 'error_code', 'stats', 'request_sha256', 'num_ctx', 'prompt_tokens_estimate', 'truncation_suspected', 'done_reason']);
    expect(printed).toMatchObject({ session: 'default', model: 'argo', response: 'You said: why is the sky blue?', status: 'ok', error: null, error_code: null });
    expect(printed.replay_policy).toMatchObject({ entries_available: 0, entries_used: 0, context_strength: 'weak' });
    expect(printed.id).toBe(logLines(home)[0]?.id);
  });

  it('an answer cut at num_predict says so on stderr, exits 0, and --json carries done_reason', async () => {
    const home = tempHome();
    ollama.options.tokens = ['one', ' two', ' three', ' four'];
    const cut = await ask(['-o', 'num_predict=2', 'count'], home);
    expect(cut).toMatchObject({ code: 0, stdout: 'one two\n', stderr: 'argo: the answer was cut at the token limit (num_predict); raise it with -o num_predict=N\n' });
    const json = await ask(['--json', '-o', 'num_predict=2', 'count'], home);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ response: 'one two', status: 'ok', done_reason: 'length' });
    const whole = await ask(['--json', 'count'], home);
    expect([whole.stderr, JSON.parse(whole.stdout)]).toMatchObject(['', { response: 'one two three four', done_reason: 'stop' }]);
  });

  it('--no-log writes nothing', async () => {
    const home = tempHome();
    const result = await ask(['--no-log', 'hi'], home);
    expect(result.code).toBe(0);
    expect(logLines(home)).toEqual([]);
    expect(() => readdirSync(join(home, 'sessions'))).toThrow();
  });

  it('passes model options and keep_alive through', async () => {
    const home = tempHome();
    await ask(['--temperature', '0.2', '--seed', '7', '--num-ctx', '4096', '--keep-alive', '10m', 'hi'], home);
    const body = lastBody();
    expect(body.options).toEqual({ temperature: 0.2, seed: 7, num_ctx: 4096 });
    expect(body.keep_alive).toBe('10m');
  });

  it('refuses keep_alive seconds past what Ollama reads, from the flag or config.json, before asking Ollama', async () => {
    const flag = await ask(['--keep-alive', '99999999999', 'hi'], tempHome());
    expect([flag.code, flag.stderr]).toEqual([2, 'argo: --keep-alive "99999999999" is longer than Ollama takes (9223372036 seconds at most); use -1 to keep the model loaded\n']);
    const config = await ask(['hi'], tempHome({ options: { keep_alive: 99999999999 } }));
    expect(config.code).toBe(2);
    expect(config.stderr).toMatch(/"options\.keep_alive" 99999999999 is longer than Ollama takes \(9223372036 seconds at most\); use -1 to keep the model loaded\n$/);
    expect(ollama.requests.filter((r) => r.path === '/api/chat')).toEqual([]);
  });
});

describe('argo: thinking models', () => {
  it('a thinking model\'s reasoning is not the answer; --think is sent, logged and rerun; config sets it too', async () => {
    ollama.options.models = [{ name: 'argo:latest' }, { name: 'qwen3:8b', capabilities: ['completion', 'thinking'] }];
    ollama.options.thinking = 'First, the user wants a greeting.';
    try {
      const home = tempHome();
      // Ollama 0.12.4+ thinks by default: the reasoning streams first, in its own field.
      const plain = await ask(['-m', 'qwen3:8b', 'hi'], home);
      expect(plain).toMatchObject({ code: 0, stdout: 'You said: hi\n', stderr: '' });
      expect(lastBody()).not.toHaveProperty('think');
      // Logged beside the answer, never replayed into a later request.
      expect(logLines(home)[0]).toMatchObject({ model_response: 'You said: hi', thinking: 'First, the user wants a greeting.' });
      expect(logLines(home)[0]).not.toHaveProperty('think');
      expect((await ask(['-m', 'qwen3:8b', '--replay', 'last:1', 'again'], home)).code).toBe(0);
      expect(JSON.stringify(lastBody())).not.toContain('First, the user wants');
      const whole = await ask(['-m', 'qwen3:8b', '--no-stream', 'hi'], home);
      expect(whole.code).toBe(0);
      expect(logLines(home).at(-1)).toMatchObject({ thinking: 'First, the user wants a greeting.' });
      const off = await ask(['-m', 'qwen3:8b', '--think', 'off', 'hi'], home);
      expect(off.stdout).toBe('You said: hi\n');
      expect(lastBody()).toMatchObject({ think: false });
      const logged = logLines(home).at(-1);
      expect(logged).toMatchObject({ think: false });
      expect(logged).not.toHaveProperty('thinking');
      expect((await ask(['rerun', String(logged?.id)], home)).code).toBe(0);
      expect(lastBody()).toMatchObject({ think: false });
      const explained = JSON.parse((await ask(['-m', 'qwen3:8b', '--explain', '--json', 'hi'], tempHome({ think: 'high' }))).stdout) as { request: { body: Record<string, unknown> } };
      expect(explained.request.body.think).toBe('high');
      // num_predict counts the reasoning too: spent on it, the answer is empty, and argo says why.
      const spent = await ask(['-m', 'qwen3:8b', '-o', 'num_predict=3', 'hi'], home);
      expect(spent).toMatchObject({
        code: 0,
        stdout: '',
        stderr: 'argo: the model gave an empty answer: it reached its token limit before answering (a thinking model reasons first); raise it with -o num_predict=N\n',
      });
      expect(logLines(home).at(-1)).toMatchObject({ status: 'ok', model_response: '', done_reason: 'length' });
      // A model without the capability refuses it, as Ollama does.
      const refused = await ask(['-m', 'argo', '--think', 'on', 'hi'], home);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('"argo" does not support thinking');
      // config.json's think is a default for every model: one that cannot think is not sent it, and
      // --explain shows the request as it goes; a thinking model still gets it.
      const configured = tempHome({ think: 'high' });
      expect(await ask(['-m', 'argo', 'hi'], configured)).toMatchObject({ code: 0, stdout: 'You said: hi\n' });
      expect(lastBody()).not.toHaveProperty('think');
      expect(logLines(configured).at(-1)).not.toHaveProperty('think');
      expect((JSON.parse((await ask(['-m', 'argo', '--explain', '--json', 'hi'], configured)).stdout) as { request: { body: Record<string, unknown> } }).request.body).not.toHaveProperty('think');
      expect((await ask(['-m', 'qwen3:8b', 'hi'], configured)).code).toBe(0);
      expect(lastBody()).toMatchObject({ think: 'high' });
    } finally {
      ollama.options.models = undefined;
      ollama.options.thinking = undefined;
    }
  });
});

describe('argo: prompt from stdin', () => {
  it('joins piped text after the arguments', async () => {
    const home = tempHome();
    const result = await ask(['review this'], home, { stdin: 'diff --git a/x b/x\n+added line\n' });
    expect(result.code).toBe(0);
    expect(logLines(home)[0]?.user_prompt).toBe('review this\n\ndiff --git a/x b/x\n+added line');
  });

  it('takes the whole prompt from stdin', async () => {
    const home = tempHome();
    const result = await ask([], home, { stdin: 'what is a monad?\n' });
    expect(result).toMatchObject({ code: 0, stdout: 'You said: what is a monad?\n' });
  });

  it('refuses a blank prompt with exit 2 and one line, no usage', async () => {
    const home = tempHome();
    const result = await ask([], home, { stdin: '  \n' });
    expect(result).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'argo: no prompt: standard input had only whitespace; pass the question as arguments (argo "why is the sky blue?"), pipe it on stdin, or run argo chat\n',
    });
    expect(ollama.requests).toHaveLength(0);
  });

  it('with --no-stdin and no words, the one line says standard input was left unread', async () => {
    const result = await ask(['--no-stdin'], tempHome(), { stdin: 'not read\n' });
    expect(result).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'argo: no prompt: --no-stdin leaves standard input unread; pass the question as arguments (argo --no-stdin "why is the sky blue?"), or run argo chat\n',
    });
    expect(ollama.requests).toHaveLength(0);
  });
});

describe('argo: replay end to end', () => {
  it('replays the last ok turns, in order, and logs which ones', async () => {
    const home = tempHome();
    await ask(['--session', 'work', 'Write a function that validates emails'], home);
    await ask(['--session', 'work', 'Add a test for it'], home);
    const result = await ask(['--session', 'work', '--replay', 'last:2', 'Now make it case-insensitive'], home);
    expect(result.code).toBe(0);
    const [first, second, third] = logLines(home);
    expect(lastBody().messages).toEqual([
      { role: 'system', content: expect.stringContaining('answer directly and confidently') as unknown },
      { role: 'user', content: 'Write a function that validates emails' },
      { role: 'assistant', content: 'You said: Write a function that validates emails' },
      { role: 'user', content: 'Add a test for it' },
      { role: 'assistant', content: 'You said: Add a test for it' },
      { role: 'user', content: 'Now make it case-insensitive' },
    ]);
    expect(third).toMatchObject({
      replay: { enabled: true, count: 2, session: false },
      replayed_ids: [first?.id, second?.id],
      replay_policy: {
        entries_available: 2,
        entries_filtered: 0,
        filtered_types: [],
        entries_used: 2,
        trimmed: false,
        reason: 'continuation',
        context_strength: 'strong',
        budget: 5500,
      },
    });
  });

  it('resumes a named session with --replay session and keeps sessions apart', async () => {
    const home = tempHome();
    await ask(['--session', 'work', 'Build a parser for CSV files'], home);
    await ask(['--session', 'play', 'Write a poem about the sea'], home);
    await ask(['--session', 'work', 'What is a lexer?'], home);
    await ask(['--session', 'work', 'Actually, use a streaming parser'], home);
    await ask(['--session', 'work', '--replay', 'session', 'Add quoting support'], home, { env: { ARGO_SESSION: 'play' } });
    const entries = logLines(home);
    const last = entries.at(-1);
    const work = entries.filter((e) => e.session === 'work');
    expect(last?.replayed_ids).toEqual([work[0]?.id, work[1]?.id, work[2]?.id]);
    expect(last?.replay_policy).toMatchObject({ reason: 'session', entries_available: 3, entries_used: 3 });
    const contents = (lastBody().messages as { content: string }[]).map((m) => m.content);
    expect(contents.join('\n')).not.toContain('poem');
  });

  it('never replays interrupted or failed turns', async () => {
    const home = tempHome(fastRetries);
    await ask(['Write a haiku'], home);
    ollama.setScenario({ errorMidStream: 1, times: 1 });
    expect((await ask(['Explain TCP'], home)).code).toBe(1);
    const result = await ask(['--replay', 'last:5', 'Shorter please'], home);
    expect(result.code).toBe(0);
    const [ok, failed, last] = logLines(home);
    expect(failed?.status).toBe('error');
    expect(last?.replayed_ids).toEqual([ok?.id]);
  });

  it('uses the session\'s last model unless --model is given', async () => {
    const home = tempHome();
    ollama.options.models = [{ name: 'argo:latest' }, { name: 'other:7b' }];
    try {
      await ask(['--session', 's', '--model', 'other:7b', 'hi'], home);
      await ask(['--session', 's', 'again'], home, { env: { ARGO_MODEL: 'argo' } });
      expect(lastBody().model).toBe('other:7b');
      await ask(['--session', 's', '--model', 'argo', 'third'], home);
      expect(lastBody().model).toBe('argo');
    } finally {
      ollama.options.models = undefined;
    }
  });
});

describe('argo --explain', () => {
  it('prints the exact request body a real call sends, calls no model, writes no log', async () => {
    const home = tempHome();
    await ask(['--session', 'w', 'Write a README'], home);
    await ask(['--session', 'w', 'What about a license?'], home);
    const before = logLines(home).length;
    ollama.requests.length = 0;
    const explained = await ask(['--session', 'w', '--replay', 'last:2', '--explain', '--json', 'Add badges'], home);
    expect(explained.code).toBe(0);
    // Only the model's window is asked for (/api/show, and side by side Ollama's version, whose default counts when the model sets none); no model is called.
    expect(ollama.requests.map((request) => request.path).sort()).toEqual(['/api/show', '/api/version']);
    expect(logLines(home)).toHaveLength(before);
    const plan = JSON.parse(explained.stdout) as { request: { endpoint: string; body: unknown }; replayed_ids: string[]; turns: unknown[]; replay_policy: unknown };
    expect(Object.keys(plan)).toEqual(['model', 'model_source', 'context', 'request_sha256', 'replay_policy', 'replayed_ids', 'turns', 'request']);
    expect(plan.request.endpoint).toBe('/api/chat');
    expect(plan.turns).toHaveLength(2);

    await ask(['--session', 'w', '--replay', 'last:2', 'Add badges'], home);
    expect(ollama.requests.at(-1)?.body).toBe(JSON.stringify(plan.request.body));
  });

  it('prints a readable decision without --json', async () => {
    const home = tempHome();
    await ask(['Explain recursion'], home);
    const result = await ask(['--replay', 'last:1', '--explain', 'what do you mean by base case?'], home);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/reason clarification/);
    expect(result.stdout).toMatch(/strength +moderate/);
    expect(result.stdout).toMatch(/POST http:\/\/127\.0\.0\.1:\d+\/api\/chat/);
  });
});

describe('argo: determinism', () => {
  it('same data, config, flags and input give byte-identical request bodies', async () => {
    const home = tempHome({ replay: { budget: 400 } });
    for (const prompt of ['Write a tokenizer', 'Actually, make it handle unicode', 'How fast is it?']) await ask(['--session', 'd', prompt], home);
    const args = ['--session', 'd', '--replay', 'session', '--seed', '1', 'Add benchmarks'];
    ollama.requests.length = 0;
    await ask(['--no-log', ...args], home);
    await ask(['--no-log', ...args], home);
    const bodies = ollama.requests.filter((r) => r.path === '/api/chat' || r.path === '/api/generate').map((r) => r.body);
    expect(bodies).toHaveLength(2);
    const [a, b] = bodies;
    expect(a).toBe(b);
    const explained = await ask([...args, '--explain', '--json'], home);
    expect(JSON.stringify((JSON.parse(explained.stdout) as { request: { body: unknown } }).request.body)).toBe(a);
  });
});

describe('argo: failures', () => {
  it('daemon down: names the address, suggests ollama serve, retries, exit 1, logs the prompt', async () => {
    const home = tempHome(fastRetries);
    // Port 2: nothing listens there, no server on port 0 can get it, and fetch does not refuse it as a "bad port".
    const result = await runArgo(['--session', 'x', 'are you there?'], { home, host: '127.0.0.1:2' });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/cannot reach Ollama at http:\/\/127\.0\.0\.1:2; retrying in 0\.02s \(attempt 2 of 3\)/);
    expect(lines[2]).toMatch(/^argo: cannot reach Ollama at http:\/\/127\.0\.0\.1:2 \(connection refused\); start it with "ollama serve"/);
    expect(logLines(home)[0]).toMatchObject({ status: 'error', user_prompt: 'are you there?', model_response: '' });
  });

  it('model missing: names it, lists installed models, suggests ollama pull or --model', async () => {
    const home = tempHome();
    const result = await ask(['--model', 'llama9', 'hi'], home);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `argo: model "llama9" not found on Ollama at ${ollama.url}; installed: argo:latest. Pull it with "ollama pull llama9", or use an installed one (--model argo:latest) (logged as error)\n`,
    );
    expect(logLines(home)[0]).toMatchObject({ status: 'error', model: 'llama9' });
  });

  it('503 busy is retried with backoff, on one kept-alive connection', async () => {
    const home = tempHome(fastRetries);
    ollama.setScenario({ busy: 2 });
    const connectionsBefore = ollama.connections;
    const result = await ask(['hi'], home);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('You said: hi\n');
    expect(result.stderr.match(/is busy; retrying/g)).toHaveLength(2);
    expect(ollama.requests.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(ollama.connections - connectionsBefore).toBe(1);
  });

  it.each<[string, string[], Parameters<FakeOllama['setScenario']>[0], string | null, string]>([
    ['answered', [], undefined, null, 'ok'],
    ['busy beyond the retries', [], { busy: 5 }, 'ollama_busy', 'error'],
    ['rate-limited beyond the retries', [], { busy: 5, busyAsRateLimit: true }, 'rate_limit_exceeded', 'error'],
    ['a model not installed', ['-m', 'llama9'], undefined, 'model_not_found', 'error'],
    ['a runner error', [], { runnerError: true }, 'ollama_error', 'error'],
    ['a stream cut short', [], { truncate: 2 }, 'ollama_truncated', 'error'],
  ])('--json error_code, %s: %j', async (_case, args, scenario, code, status) => {
    const home = tempHome({ retries: { attempts: 2, initialDelayMs: 10 } });
    ollama.setScenario(scenario);
    const result = await ask(['--json', ...args, 'hi'], home);
    expect(result.code).toBe(code === null ? 0 : 1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status, error_code: code });
  });

  it('--json error_code when Ollama is down: ollama_unreachable, for a script to retry later', async () => {
    const result = await runArgo(['--json', 'hi'], { home: tempHome(fastRetries), host: '127.0.0.1:2' });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'error', error_code: 'ollama_unreachable' });
  });

  it('503 busy beyond the attempts fails with exit 1', async () => {
    const home = tempHome({ retries: { attempts: 2, initialDelayMs: 10 } });
    ollama.setScenario({ busy: 5 });
    const result = await ask(['hi'], home);
    expect(result.code).toBe(1);
    expect(ollama.requests).toHaveLength(2);
    expect(result.stderr).toContain(BUSY_MESSAGE);
  });

  it('a runner failure before the first chunk is reported, not retried', async () => {
    const home = tempHome(fastRetries);
    ollama.setScenario({ runnerError: true });
    const result = await ask(['hi'], home);
    expect(result.code).toBe(1);
    expect(ollama.requests).toHaveLength(1);
    expect(result.stderr).toMatch(/answered HTTP 500: an error was encountered while running the model/);
  });

  it.each([
    ['an error line mid-stream', { errorMidStream: 3 }, /Ollama reported an error mid-answer: an error was encountered while running the model/],
    ['a dropped connection', { dropAfter: 3, delayMs: 20 }, /connection to Ollama at .* dropped mid-answer/],
    ['a stream without its final chunk', { truncate: 3 }, /ended without its final chunk/],
    ['a line that is not JSON', { malformedAfter: 3 }, /Ollama sent a line that is not JSON/],
    // A proxy's error shapes: an object with a message, nothing at all.
    ['an error object mid-stream', { malformedAfter: { afterChunks: 3, line: '{"error":{"message":"rate limit","type":"x"}}', then: 'end' as const } }, /Ollama reported an error mid-answer: rate limit( \(logged as error\))?$/],
    ['an empty error mid-stream', { malformedAfter: { afterChunks: 3, line: '{"error":null}', then: 'end' as const } }, /Ollama reported an error mid-answer: an empty error( \(logged as error\))?$/],
  ])('%s: keeps the text shown, logs status error with the partial answer, exit 1', async (_name, scenario, message) => {
    const home = tempHome(fastRetries);
    ollama.options.tokens = ['one', ' two', ' three', ' four', ' five'];
    ollama.setScenario(scenario);
    const result = await ask(['count to five'], home);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('one two three\n');
    const stderrLines = result.stderr.trim().split('\n');
    expect(stderrLines).toHaveLength(1);
    expect(stderrLines[0]).toMatch(message);
    expect(ollama.requests).toHaveLength(1);
    expect(logLines(home)[0]).toMatchObject({ status: 'error', model_response: 'one two three', error: expect.stringMatching(message) as unknown });
  });

  it('an idle stream is aborted after timeouts.idleMs', async () => {
    const home = tempHome({ timeouts: { idleMs: 300 } });
    ollama.options.tokens = ['slow', ' start'];
    ollama.setScenario({ hang: 1 });
    const result = await ask(['hi'], home);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('slow\n');
    expect(result.stderr).toMatch(/no data from Ollama at .* for 0\.3s/);
    expect(logLines(home)[0]).toMatchObject({ status: 'error', model_response: 'slow' });
    await ollama.requests[0]?.settled;
    expect(ollama.requests[0]?.clientAborted).toBe(true);
  });

  it('a slow stream shows text before it ends', async () => {
    const home = tempHome();
    ollama.options.tokens = ['a', 'b', 'c', 'd', 'e', 'f'];
    ollama.setScenario({ holdAfter: 1 });
    let shown = '';
    const running = runArgo(['hi'], { home, host: ollama.url, onStdout: (_child, text) => (shown = text) });
    const held = await ollama.waitForHold();
    // The stand-in has sent only 'a' and waits: argo prints it now, not when the answer ends.
    await waitFor(() => expect(shown).toBe('a'));
    expect(held.held).toBe(true);
    ollama.release();
    const result = await running;
    expect(result).toMatchObject({ code: 0, stdout: 'abcdef\n' });
  });

  it('Ctrl-C aborts the request, keeps the partial answer, logs interrupted, exit 130', async () => {
    const home = tempHome();
    ollama.options.tokens = ['partial', ' answer', ' never'];
    ollama.setScenario({ hang: 2 });
    let sent = false;
    const result = await runArgo(['tell me a long story'], {
      home,
      host: ollama.url,
      onStdout: (child, text) => {
        if (!sent && text.includes('answer')) {
          sent = true;
          child.kill('SIGINT');
        }
      },
    });
    expect(result.code).toBe(130);
    expect(result.stdout).toBe('partial answer\n');
    expect(result.stderr).toBe('argo: interrupted (logged as interrupted)\n');
    expect(logLines(home)[0]).toMatchObject({ status: 'interrupted', model_response: 'partial answer' });
    await ollama.requests[0]?.settled;
    expect(ollama.requests[0]?.clientAborted).toBe(true);
  });

  it('Ctrl-C while waiting for the first token also aborts', async () => {
    const home = tempHome();
    ollama.setScenario({ hang: 'beforeHeaders' });
    const result = await runArgo(['hi'], {
      home,
      host: ollama.url,
      onSpawn: (child) => void ollama.waitForRequest(isTurnRequest).then(() => child.kill('SIGINT')),
    });
    expect(result.code).toBe(130);
    expect(result.stdout).toBe('');
    expect(logLines(home)[0]).toMatchObject({ status: 'interrupted', model_response: '', user_prompt: 'hi' });
    await ollama.requests[0]?.settled;
    expect(ollama.requests[0]?.clientAborted).toBe(true);
  });
});

describe('argo: bad input', () => {
  it.each([
    [['--replay', 'last:0', 'x'], /argument 'last:0' is invalid/],
    [['--replay', 'everything', 'x'], /--replay <spec>.*invalid/],
    [['--budget', '10', 'x'], /--budget <chars>.*at least 200/],
    [['--session', 'a b', 'x'], /invalid session name "a b"/],
    [['--session', '../etc', 'x'], /invalid session name "..\/etc"/],
    [['--api', 'completions', 'x'], /--api <endpoint>.*Allowed choices are chat, generate/],
    [['--verbosity', 'loud', 'x'], /Allowed choices are auto, short, long/],
    [['--reason', 'because', '--replay', 'last:1', 'x'], /Allowed choices are continuation, clarification, session/],
    [['--reason', 'clarification', 'x'], /--reason needs --replay/],
    [['--persona', 'pirate', 'x'], /unknown persona "pirate"/],
    [['--mode', 'nope', 'x'], /unknown mode "nope"/],
    [['--frobnicate', 'x'], /unknown option '--frobnicate'/],
    // An option among the prompt's words would leave the prompt in silence: refused, with the line that asks it.
    [['what', 'does', '-s', 'mean', 'in', 'ls'], /^argo: argo reads -s among the prompt's words as its own option; to ask with it in the prompt, quote the prompt or put the prompt after -- \(argo -- what does -s mean in ls\); to give the option, write it before the prompt\n$/],
    [['what', 'is', 'tar', '-xf'], /^argo: unknown option '-xf'; if it is part of the prompt, quote the prompt or put it after -- \(argo -- "… -xf …"\) \(see argo --help\)\n$/],
    // Commander's did-you-mean is joined onto the same line, worded as Argo's own.
    [['--jsn', 'x'], /^argo: unknown option '--jsn' \(did you mean "--json"\?\) \(see argo --help\)\n$/],
    [['stop', 'extra'], /^argo: "stop" takes no word like "extra" \(argo stop --help\)\n$/],
    // A command's own option refused points at that command's help, which lists what it takes.
    [['tools', '--stats'], /^argo: unknown option '--stats' \(see argo tools --help\)\n$/],
    [['logs', '--bogus'], /^argo: unknown option '--bogus' \(see argo logs --help\)\n$/],
    [['logs', 'check', '--bogus'], /^argo: unknown option '--bogus' \(see argo logs check --help\)\n$/],
    [['sessions', 'show', '--bogus', 'x'], /^argo: unknown option '--bogus' \(see argo sessions show --help\)\n$/],
    [['sessions', 'show'], /^argo: missing required argument 'name' \(see argo sessions show --help\)\n$/],
    [['--temperature', '0x10', 'x'], /--temperature <n>.*invalid/],
    [['rerun', '-xY3abcdefgh'], /unknown option '-xY3abcdefgh'; if it is a turn id, put "--" before it \(argo rerun -- -xY3abcdefgh\)/],
    [['--temperature', 'hot', 'x'], /--temperature <n>.*invalid/],
  ])('%j → exit 2 with one clear message, nothing written', async (args, message) => {
    const home = tempHome();
    const result = await ask(args, home);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^argo: /);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(readdirSync(home)).toEqual([]);
    expect(ollama.requests).toHaveLength(0);
  });

  it('a bad config.json is a usage error naming the key', async () => {
    const home = tempHome({ replay: { budgett: 100 } });
    const result = await ask(['x'], home);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/unknown key "replay.budgett"/);
  });
});

describe('argo: review regressions', () => {
  it('a failed turn with a mistyped --model does not become the session\'s model', async () => {
    const home = tempHome();
    expect((await ask(['--session', 's', 'first'], home)).code).toBe(0);
    expect((await ask(['--session', 's', '--model', 'nope', 'second'], home)).code).toBe(1);
    const third = await ask(['--session', 's', 'third'], home);
    expect(third.code).toBe(0);
    expect(lastBody().model).toBe('argo');
    const session = JSON.parse(readFileSync(join(home, 'sessions', 's.json'), 'utf8')) as Record<string, unknown>;
    expect(session.last_model).toBe('argo');
  });

  it('an error page that is not JSON (wrong path, proxy) leaves --json output parseable and is not called a missing model', async () => {
    const home = tempHome();
    const result = await runArgo(['--json', 'hi'], { home, host: `${ollama.url}/not-ollama` });
    expect(result.code).toBe(1);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({ status: 'error', error: expect.stringMatching(/HTTP 404: 404 page not found/) as unknown });
    expect(result.stderr).not.toMatch(/not found on Ollama|ollama pull/);
  });

  it('a stream with no headers at all (a model stuck loading) is aborted after timeouts.idleMs too', async () => {
    const home = tempHome({ timeouts: { idleMs: 300 } });
    ollama.setScenario({ hang: 'beforeHeaders' });
    const result = await ask(['hi'], home);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/no data from Ollama at .* for 0\.3s/);
    expect(logLines(home)[0]).toMatchObject({ status: 'error', model_response: '' });
    // Never retried: an idle request may be a model still loading, and asking again would queue another.
    expect(ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(1);
    await ollama.requests[0]?.settled;
    expect(ollama.requests[0]?.clientAborted).toBe(true);
  });

  it('--no-stream is not cut by the idle timeout while the whole answer is prepared', async () => {
    const home = tempHome({ timeouts: { idleMs: 200 } });
    ollama.setScenario({ firstChunkDelayMs: 500 });
    const result = await ask(['--no-stream', 'take your time'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'You said: take your time\n' });
  });

  it('timeouts.idleMs above what Node\'s HTTP client waits is refused', async () => {
    const home = tempHome({ timeouts: { idleMs: 600_000 } });
    const result = await ask(['hi'], home);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/"timeouts.idleMs" must be at most 300000/);
  });

  it('an unknown persona is refused before any file is touched, even a missing index', async () => {
    const home = tempHome();
    await ask(['--session', 'w', 'Write a parser'], home);
    rmSync(join(home, 'sessions', 'w.idx'));
    const result = await ask(['--session', 'w', '--replay', 'session', '--persona', 'pirate', 'next'], home);
    expect(result.code).toBe(2);
    expect(existsSync(join(home, 'sessions', 'w.idx'))).toBe(false);
  });
});

describe('argo: concurrency', () => {
  it('several processes appending at once never interleave or lose a line', async () => {
    const home = tempHome();
    ollama.options.reply = 'x'.repeat(20_000);
    const runs = Array.from({ length: 8 }, (_, i) => ask(['--session', 'shared', `turn number ${i}`], home));
    const results = await Promise.all(runs);
    expect(results.map((r) => r.code)).toEqual(Array(8).fill(0));
    const entries = logLines(home);
    expect(entries).toHaveLength(8);
    expect(new Set(entries.map((e) => e.user_prompt))).toEqual(new Set(Array.from({ length: 8 }, (_, i) => `turn number ${i}`)));
    expect(new Set(entries.map((e) => e.session_id)).size).toBe(1);
    const replay = await ask(['--session', 'shared', '--replay', 'session', '--explain', '--json', 'next'], home);
    expect((JSON.parse(replay.stdout) as { replay_policy: { entries_available: number } }).replay_policy.entries_available).toBe(8);
  });
});

function isTurnRequest(request: RecordedRequest): boolean {
  return request.path === '/api/chat' || request.path === '/api/generate';
}
