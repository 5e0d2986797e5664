// The built bin/argo against older Ollama releases (the stand-in's release profiles): what an old
// server can do works; what it cannot is one line naming the release found and the one needed.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeOllama } from '../support/fake-ollama.js';
import type { FakeOllama, FakeRound, RequestBody } from '../support/fake-ollama.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { startServe } from '../support/run-serve.js';
import type { ServeProcess } from '../support/run-serve.js';

const running: (FakeOllama | ServeProcess)[] = [];
afterAll(async () => {
  await Promise.all(running.map((server) => ('close' in server ? server.close() : server.stop())));
});

/** Round 1 reads notes.txt; once its result is in, the model answers with it. */
function readNotes(body: RequestBody): FakeRound {
  const last = (body.messages as { role: string; content: string }[]).at(-1);
  if (last?.role !== 'tool') return { toolCalls: [{ function: { name: 'read_file', arguments: { path: 'notes.txt' } } }] };
  return { reply: `The notes say: ${(JSON.parse(last.content) as { content: string }).content}` };
}

async function ollamaAt(version: string): Promise<FakeOllama> {
  const fake = await startFakeOllama({
    version,
    models: [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }, { name: 'qwen3:latest', capabilities: ['completion', 'tools', 'thinking'] }],
    thinking: 'Let me see.',
    rounds: (body) => (Array.isArray(body.tools) ? readNotes(body) : undefined),
  });
  running.push(fake);
  return fake;
}

function notesRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'argo-versions-root-'));
  writeFileSync(join(root, 'notes.txt'), 'buy milk\n');
  return root;
}

const chatRequests = (fake: FakeOllama) => fake.requests.filter((request) => request.path === '/api/chat');

describe('argo against an older Ollama', () => {
  it('0.3.0 finds tool calls only in whole answers: an agent run asks for those and works', async () => {
    const ollama = await ollamaAt('0.3.0');
    const home = tempHome();
    const result = await runArgo(['-T', 'fs', '--root', notesRoot(), 'what do the notes say?'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 0, stdout: 'The notes say: buy milk\n' });
    expect(chatRequests(ollama).map((request) => (JSON.parse(request.body) as RequestBody).stream)).toEqual([false, false]);
    expect(logLines(home)[0]).toMatchObject({ status: 'ok' });
  });

  it('0.2.5 would ignore the tools: the run is refused in one line naming both releases, nothing reaches the model', async () => {
    const ollama = await ollamaAt('0.2.5');
    const home = tempHome();
    const result = await runArgo(['-T', 'fs', '--root', notesRoot(), 'what do the notes say?'], { home, host: ollama.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`argo: Ollama 0.2.5 at ${ollama.url} is too old for tool calls (needs Ollama 0.2.6 or newer); ask without --tools (and "tools" in config.json), or upgrade Ollama (logged as error)\n`);
    expect(chatRequests(ollama)).toEqual([]);
    expect(logLines(home)[0]).toMatchObject({ status: 'error' });
  });

  it('--think: refused before 0.9.0 (it would be ignored); a level on 0.10.1 refused before sending, naming the release levels need', async () => {
    const old = await ollamaAt('0.8.0');
    const refused = await runArgo(['-m', 'qwen3', '--think', 'on', 'hi'], { home: tempHome(), host: old.url });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(new RegExp(`^argo: Ollama 0\\.8\\.0 at ${old.url} is too old for thinking on or off \\(needs Ollama 0\\.9\\.0 or newer\\); leave out --think`));
    expect(chatRequests(old)).toEqual([]);
    // Off is sent as it is: that release has no separate reasoning to turn off, and answers as it would without it.
    const off = await runArgo(['-m', 'qwen3', '--think', 'off', 'hi'], { home: tempHome(), host: old.url });
    expect(off.code).toBe(0);
    expect(off.stdout).toContain('You said: hi');

    const newer = await ollamaAt('0.10.1');
    const level = await runArgo(['-m', 'qwen3', '--think', 'high', 'hi'], { home: tempHome(), host: newer.url });
    expect(level.code).toBe(1);
    expect(level.stderr).toBe(`argo: Ollama 0.10.1 at ${newer.url} is too old for thinking levels (needs Ollama 0.11.0 or newer for gpt-oss models, 0.17.7 for others); use --think on, or upgrade Ollama (logged as error)\n`);
    expect(chatRequests(newer)).toEqual([]);
    const on = await runArgo(['-m', 'qwen3', '--think', 'on', 'hi'], { home: tempHome(), host: newer.url });
    expect(on).toMatchObject({ code: 0, stdout: 'You said: hi\n' });
  });

  it('before 0.9.0 a thinking model reasons inline: shown as it came, logged as thinking, and not replayed', async () => {
    const ollama = await ollamaAt('0.8.0');
    const home = tempHome();
    const asked = await runArgo(['-m', 'qwen3', '-s', 'q', 'What is 2+2?'], { home, host: ollama.url });
    expect(asked).toMatchObject({ code: 0, stdout: '<think>Let me see.</think>\n\nYou said: What is 2+2?\n' });
    expect(logLines(home)[0]).toMatchObject({ status: 'ok', model_response: 'You said: What is 2+2?', thinking: 'Let me see.' });
    const explained = await runArgo(['-m', 'qwen3', '-s', 'q', '--replay', 'session', '--explain', '--json', 'And 3+3?'], { home, host: ollama.url });
    const { request } = JSON.parse(explained.stdout) as { request: { body: { messages: { role: string; content: string }[] } } };
    expect(request.body.messages.find((message) => message.role === 'assistant')?.content).toBe('You said: What is 2+2?');
  });

  it('before 0.6.7 the default window is 2048 tokens: a prompt over it is warned of', async () => {
    const ollama = await ollamaAt('0.6.6');
    const prompt = `Summarize: ${'word '.repeat(3000)}`;
    const result = await runArgo(['--no-log', prompt], { home: tempHome(), host: ollama.url });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^argo: the prompt \(about \d+ tokens\) is longer than the context window \(2048 tokens, Ollama's default\)/);
  });

  it('argo doctor warns of an Ollama too old for some of what Argo offers, and passes', async () => {
    const ollama = await ollamaAt('0.8.0');
    const result = await runArgo(['doctor'], { home: tempHome(), host: ollama.url });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('\nwarn  features   Ollama 0.8.0 is too old for --think (0.9.0), --think low/medium/high (0.11.0),');
    const json = await runArgo(['doctor', '--json'], { home: tempHome(), host: ollama.url });
    const report = JSON.parse(json.stdout) as { ok: boolean; checks: { check: string; ok: boolean; warning?: boolean }[] };
    expect(report.ok).toBe(true);
    expect(report.checks.find((check) => check.check === 'features')).toMatchObject({ ok: true, warning: true });
  });

  it('argo doctor on 0.1.13, before /api/chat: the endpoint check fails naming 0.1.14, as the question fails', async () => {
    const ollama = await ollamaAt('0.1.13');
    const home = tempHome();
    const result = await runArgo(['doctor'], { home, host: ollama.url });
    expect(result.code).toBe(1);
    const detail = '/api/chat needs Ollama 0.1.14 or newer, and this is 0.1.13; upgrade Ollama, or ask with --api generate (docs/troubleshooting.md, "Ollama versions")';
    expect(result.stdout).toContain(`\nFAIL  endpoint   ${detail}\n`);
    expect(result.stderr).toBe(`argo: doctor: the endpoint check failed: ${detail}\n`);
    expect((await runArgo(['hello'], { home, host: ollama.url })).code).toBe(1);
    // Its /api/generate answers.
    expect(await runArgo(['doctor', '--api', 'generate'], { home, host: ollama.url })).toMatchObject({ code: 0, stderr: '' });
    expect(await runArgo(['--api', 'generate', 'hello'], { home, host: ollama.url })).toMatchObject({ code: 0, stderr: '' });
  });

  it('argo doctor on 0.12.10 names argo serve\'s log probabilities, which that server refuses as ollama_too_old', async () => {
    const ollama = await ollamaAt('0.12.10');
    const result = await runArgo(['doctor'], { home: tempHome(), host: ollama.url });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain("\nwarn  features   Ollama 0.12.10 is too old for argo serve's log probabilities (logprobs) (0.12.11), --think levels for models other than gpt-oss (0.17.7),");
  });

  it('argo serve on 0.3.0: a client\'s tools stream as tool calls; reasoning_effort is a 400 naming both releases', async () => {
    const ollama = await ollamaAt('0.3.0');
    ollama.options.rounds = undefined;
    ollama.options.toolCalls = [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }];
    const serve = await startServe({ home: tempHome(), host: ollama.url });
    running.push(serve);
    const client = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

    const stream = await client.chat.completions.create({ model: 'argo', stream: true, tools, messages: [{ role: 'user', content: 'weather in Paris?' }] });
    const calls: unknown[] = [];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      calls.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(calls).toMatchObject([{ function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect(finish).toBe('tool_calls');

    const refused = client.chat.completions.create({ model: 'qwen3', reasoning_effort: 'low', messages: [{ role: 'user', content: 'hi' }] });
    await expect(refused).rejects.toMatchObject({
      status: 400,
      code: 'ollama_too_old',
      message: expect.stringContaining(`Ollama 0.3.0 at ${ollama.url} is too old for thinking levels (needs Ollama 0.11.0 or newer for gpt-oss models, 0.17.7 for others); leave out "reasoning_effort"`) as string,
    });
  });

  it('argo serve on 0.12.10: logprobs (which that release answers with none) is a 400 naming both releases; nothing reaches the model', async () => {
    const ollama = await ollamaAt('0.12.10');
    const home = tempHome();
    const serve = await startServe({ home, host: ollama.url });
    running.push(serve);
    const client = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    for (const stream of [false, true]) {
      const refused = client.chat.completions.create({ model: 'argo', stream, logprobs: true, top_logprobs: 2, messages: [{ role: 'user', content: 'hi' }] });
      await expect(refused).rejects.toMatchObject({
        status: 400,
        code: 'ollama_too_old',
        error: { message: `Ollama 0.12.10 at ${ollama.url} is too old for log probabilities (needs Ollama 0.12.11 or newer); leave out "logprobs" and "top_logprobs", or upgrade Ollama` },
      });
    }
    expect(chatRequests(ollama)).toEqual([]);
    const plain = await client.chat.completions.create({ model: 'argo', messages: [{ role: 'user', content: 'hi' }] });
    expect(plain.choices[0]?.message.content).toBe('You said: hi');
  });
});
