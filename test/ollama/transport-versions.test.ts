// The transport against older Ollama releases (the stand-in's profiles): what it asks first, what it
// adapts, and the one line naming the release found and the one needed.
import { describe, expect, it } from 'vitest';
import { SERVER_HINTS } from '../../src/ollama/fix-hints.js';
import { KeptAnswers, OllamaTransport } from '../../src/ollama/transport.js';
import type { AgentChatBody, TransportOptions, TransportRequest } from '../../src/ollama/transport.js';
import type { OllamaVersion } from '../../src/ollama/versions.js';
import { fakeOllamaPerTest } from '../support/fake-ollama-hooks.js';
import type { FakeOllama } from '../support/fake-ollama.js';

const start = fakeOllamaPerTest();
const TOOLS: AgentChatBody['tools'] = [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: {} } } }];
const ask = (extra: Partial<AgentChatBody> = {}, model = 'argo'): TransportRequest => ({
  endpoint: '/api/chat',
  body: { model, messages: [{ role: 'user', content: 'hi' }], stream: true, ...extra },
});

function startAt(version: string): Promise<FakeOllama> {
  return start({
    version,
    models: [{ name: 'argo', capabilities: ['completion', 'tools'] }, { name: 'qwen3', capabilities: ['completion', 'tools', 'thinking'] }],
    toolCalls: [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }],
  });
}

const transportFor = (fake: FakeOllama, options: Partial<TransportOptions> = {}) =>
  new OllamaTransport({ host: fake.url, attempts: 1, initialDelayMs: 1, idleMs: 5000, ...options });
const paths = (fake: FakeOllama): string[] => fake.requests.map((request) => `${request.method} ${request.path}`);
const sentBody = (fake: FakeOllama): Record<string, unknown> => JSON.parse(fake.requests.find((request) => request.path === '/api/chat')?.body ?? '{}') as Record<string, unknown>;

describe('OllamaTransport against older Ollama releases', () => {
  it('a plain question asks no version: any release can answer it', async () => {
    const fake = await startAt('0.2.0');
    const outcome = await transportFor(fake).stream(ask(), { onText: () => undefined });
    expect(outcome.status).toBe('ok');
    expect(paths(fake)).toEqual(['POST /api/chat']);
  });

  it('tools on a release that would ignore them (before 0.2.6): refused, nothing sent', async () => {
    const fake = await startAt('0.2.5');
    const outcome = await transportFor(fake).stream(ask({ tools: TOOLS }), { onText: () => undefined });
    expect(outcome).toMatchObject({ status: 'error', failure: { kind: 'too-old', feature: 'tools' } });
    expect(outcome.failure?.message).toBe(`Ollama 0.2.5 at ${fake.url} is too old for tool calls (needs Ollama 0.2.6 or newer); ask without --tools (and "tools" in config.json), or upgrade Ollama`);
    expect(paths(fake)).toEqual(['GET /api/version']);
  });

  it('tools on 0.2.6–0.4.5, which find calls only in a whole answer: asked whole, the calls arrive; the version is asked once', async () => {
    const fake = await startAt('0.3.0');
    const transport = transportFor(fake);
    for (let i = 0; i < 2; i++) {
      const outcome = await transport.stream(ask({ tools: TOOLS }), { onText: () => undefined });
      expect(outcome.toolCalls).toEqual([{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }]);
    }
    expect(paths(fake)).toEqual(['GET /api/version', 'POST /api/chat', 'POST /api/chat']);
    expect(sentBody(fake).stream).toBe(false);
  });

  it('tools on 0.4.6 and later stream as asked', async () => {
    const fake = await startAt('0.4.6');
    const outcome = await transportFor(fake).stream(ask({ tools: TOOLS }), { onText: () => undefined });
    expect(outcome.toolCalls).toHaveLength(1);
    expect(sentBody(fake).stream).toBe(true);
  });

  it('think on a release that would ignore it (before 0.9.0): refused, in the words of the server\'s hints', async () => {
    const fake = await startAt('0.8.0');
    const outcome = await transportFor(fake, { hints: SERVER_HINTS }).stream(ask({ think: true }, 'qwen3'), { onText: () => undefined });
    expect(outcome.failure?.message).toBe(`Ollama 0.8.0 at ${fake.url} is too old for thinking on or off (needs Ollama 0.9.0 or newer); leave out "reasoning_effort" (and "think" in argo serve's config.json), or upgrade Ollama`);
    expect(paths(fake)).toEqual(['GET /api/version']);
  });

  it.each<[string, NonNullable<AgentChatBody['think']>, string]>([
    ['0.12.0', 'low', 'takes thinking levels from gpt-oss models only (other models need Ollama 0.17.7 or newer); use --think on, or upgrade Ollama'],
  ])('Ollama %s refuses think %j with a 400: the line names the release', async (version, think, said) => {
    const fake = await startAt(version);
    const outcome = await transportFor(fake).stream(ask({ think }, 'qwen3'), { onText: () => undefined });
    expect(outcome.failure).toEqual({ kind: 'too-old', httpStatus: 400, feature: expect.any(String) as string, message: `Ollama ${version} at ${fake.url} ${said}` });
  });

  // One upgrade as named is enough: an older release would refuse "max" first as a level, then as "max".
  it.each<[string, NonNullable<AgentChatBody['think']>, string]>([
    ['0.8.0', 'high', 'is too old for thinking levels (needs Ollama 0.11.0 or newer for gpt-oss models, 0.17.7 for others); leave out --think (and "think" in config.json), or upgrade Ollama'],
    ['0.10.1', 'high', 'is too old for thinking levels (needs Ollama 0.11.0 or newer for gpt-oss models, 0.17.7 for others); use --think on, or upgrade Ollama'],
    ['0.8.0', 'max', 'is too old for the thinking level "max" (needs Ollama 0.22.0 or newer); leave out --think (and "think" in config.json), or upgrade Ollama'],
    ['0.10.0', 'max', 'is too old for the thinking level "max" (needs Ollama 0.22.0 or newer); use --think on, or upgrade Ollama'],
    ['0.21.0', 'max', 'is too old for the thinking level "max" (needs Ollama 0.22.0 or newer); use --think high, or upgrade Ollama'],
  ])('Ollama %s and think %j: refused before sending, naming the release that level needs and a way out that release takes', async (version, think, said) => {
    const fake = await startAt(version);
    const outcome = await transportFor(fake).stream(ask({ think }, 'qwen3'), { onText: () => undefined });
    expect(outcome.failure).toEqual({ kind: 'too-old', feature: expect.any(String) as string, message: `Ollama ${version} at ${fake.url} ${said}` });
    expect(paths(fake)).toEqual(['GET /api/version']);
  });

  it('a JSON schema as format on a release before 0.5.0: the 400 named as such', async () => {
    const fake = await startAt('0.4.7');
    // argo serve adds the client's format to the body (its type knows no such field).
    const body: Record<string, unknown> = { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream: false, format: { type: 'object' } };
    const request = { endpoint: '/api/chat', body } as unknown as TransportRequest;
    const outcome = await transportFor(fake, { hints: SERVER_HINTS }).stream(request, { onText: () => undefined });
    expect(outcome.failure?.message).toBe(`Ollama 0.4.7 at ${fake.url} is too old for a JSON schema as the answer format (needs Ollama 0.5.0 or newer); send "response_format": {"type": "json_object"}, or upgrade Ollama`);
  });

  it('log probabilities on a release that would ignore them (before 0.12.11, answering none): refused, nothing sent', async () => {
    const old = await startAt('0.12.10');
    const refused = await transportFor(old, { hints: SERVER_HINTS }).stream(ask({ logprobs: true, top_logprobs: 2 }), { onText: () => undefined });
    expect(refused).toMatchObject({ status: 'error', failure: { kind: 'too-old', feature: 'logprobs' } });
    expect(refused.failure?.message).toBe(`Ollama 0.12.10 at ${old.url} is too old for log probabilities (needs Ollama 0.12.11 or newer); leave out "logprobs" and "top_logprobs", or upgrade Ollama`);
    expect(paths(old)).toEqual(['GET /api/version']);

    const since = await startAt('0.12.11');
    const carried: unknown[] = [];
    const outcome = await transportFor(since).stream(ask({ logprobs: true }), { onText: (_text, logprobs) => carried.push(...(logprobs ?? [])) });
    expect(outcome.status).toBe('ok');
    expect(carried.length).toBeGreaterThan(0);
    expect(paths(since)).toEqual(['GET /api/version', 'POST /api/chat']);
  });

  it('a release that is no number (a build from source says 0.0.0) is sent everything as it is', async () => {
    const fake = await startAt('0.0.0');
    const outcome = await transportFor(fake).stream(ask({ tools: TOOLS, think: true }, 'qwen3'), { onText: () => undefined });
    expect(outcome.status).toBe('ok');
    expect(sentBody(fake)).toMatchObject({ stream: true, think: true });
  });

  it('a version question that fails leaves the request as it is (the request itself reports what is wrong)', async () => {
    const fake = await startAt('0.2.5');
    const noVersion: typeof fetch = (input, init) => (new Request(input).url.endsWith('/api/version') ? Promise.reject(new TypeError('fetch failed')) : fetch(input, init));
    const outcome = await transportFor(fake, { fetch: noVersion }).stream(ask({ tools: TOOLS }), { onText: () => undefined });
    expect(outcome.status).toBe('ok');
  });

  it("a server's transports share one version question (kept for the server's minute)", async () => {
    const fake = await startAt('0.3.0');
    const versions = new KeptAnswers<OllamaVersion | null>(60_000);
    await Promise.all([1, 2, 3].map(() => transportFor(fake, { versions }).stream(ask({ tools: TOOLS }), { onText: () => undefined })));
    expect(paths(fake).filter((path) => path === 'GET /api/version')).toHaveLength(1);
  });

  it.each<[string, number]>([
    ['0.6.6', 2048],
    ['0.6.7', 4096],
  ])("Ollama %s: the default window is %i", async (version, tokens) => {
    expect(await transportFor(await startAt(version)).defaultNumCtx()).toBe(tokens);
  });

  it('a stalled /api/ps is given up after the version question\'s bound, not the answer\'s idle time', async () => {
    const fake = await start({ models: [{ name: 'argo' }], stallPs: true });
    const transport = transportFor(fake, { idleMs: 60_000 });
    const started = Date.now();
    await expect(transport.loadedNumCtx('argo')).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 20_000);

  it.each<[string, string, string, number | null]>([
    // release, the model asked, the name it is asked by later → the loaded window /api/ps reports
    ['0.10.0', 'argo', 'argo', 4096],
    ['0.10.0', 'argo', 'argo:latest', 4096],
    ['0.10.0', 'argo', 'registry.ollama.ai/library/ARGO:latest', 4096],
    ['0.10.0', 'argo', 'qwen3', null],
    ['0.9.6', 'argo', 'argo', null],
  ])('Ollama %s, %s loaded: the window /api/ps reports for %s is %s', async (version, loaded, asked, tokens) => {
    const fake = await startAt(version);
    const transport = transportFor(fake);
    expect(await transport.loadedNumCtx(asked)).toBeNull();
    await transport.stream(ask({}, loaded), { onText: () => undefined });
    expect(await transport.loadedNumCtx(asked)).toBe(tokens);
  });
});
