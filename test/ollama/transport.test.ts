import { afterEach, describe, expect, it, vi } from 'vitest';
import { CLI_HINTS, SERVER_HINTS } from '../../src/ollama/fix-hints.js';
import { NotOllamaAnswer, OllamaTransport, logprobsOf, questionFailure, retryAfterSeconds } from '../../src/ollama/transport.js';
import type { TransportRequest } from '../../src/ollama/transport.js';
import type { OllamaRequest } from '../../src/replay/prompt.js';
import { fakeLogprob } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';

const ollama = await fakeOllamaPerFile({ tokens: ['a', 'b', 'c', 'd'] });
afterEach(() => {
  ollama.setScenario(undefined);
  ollama.requests.length = 0;
  vi.restoreAllMocks();
});

/**
 * Nothing listens here: a privileged port no test binds, outside the ephemeral range another test's server on port 0
 * may get, and not on fetch's list of refused ports (9, as in doctor.test.ts, fails as a "bad port", not a refusal).
 */
const NOWHERE = 'http://127.0.0.1:2';

const chat: OllamaRequest = { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream: true } };

function transport(overrides: Partial<ConstructorParameters<typeof OllamaTransport>[0]> = {}) {
  return new OllamaTransport({ host: ollama.url, attempts: 3, initialDelayMs: 1, idleMs: 2000, ...overrides });
}

async function run(t: OllamaTransport, request: TransportRequest = chat, signal?: AbortSignal) {
  const texts: string[] = [];
  const retries: [number, number, string][] = [];
  const sleeps: number[] = [];
  const outcome = await t.stream(request, {
    onText: (text) => texts.push(text),
    onRetry: (attempt, delay, kind) => retries.push([attempt, delay, kind]),
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    ...(signal ? { signal } : {}),
  });
  return { outcome, texts, retries, sleeps };
}

describe('OllamaTransport.stream', () => {
  it('streams text and returns Ollama\'s metrics from the final chunk', async () => {
    const { outcome, texts } = await run(transport());
    expect(texts).toEqual(['a', 'b', 'c', 'd']);
    expect(outcome).toMatchObject({ status: 'ok', failure: null, attempts: 1 });
    expect(outcome.metrics.done_reason).toBe('stop');
    expect(outcome.metrics.eval_count).toBe(4);
  });

  it('retries 503 with exponential backoff, then succeeds', async () => {
    ollama.setScenario({ busy: 2 });
    const { outcome, retries, sleeps } = await run(transport({ initialDelayMs: 100 }));
    expect(outcome).toMatchObject({ status: 'ok', attempts: 3 });
    expect(sleeps).toEqual([100, 200]);
    expect(retries).toEqual([[2, 100, 'busy'], [3, 200, 'busy']]);
  });

  it.each([
    ['says none (as Ollama itself)', undefined, undefined],
    ['says 7 seconds (a proxy before it)', '7', 7],
    ['says something that is no wait', 'soon', undefined],
  ])('busy through every retry, the Retry-After it %s is kept with the failure', async (_case, header, seconds) => {
    ollama.setScenario({ busy: 3, ...(header !== undefined ? { busyRetryAfter: header } : {}) });
    const { outcome } = await run(transport());
    expect(outcome.failure).toMatchObject({ kind: 'busy' });
    expect(outcome.failure?.retryAfterS).toBe(seconds);
  });

  it.each([
    ['none', undefined, {}, [100, 200]],
    ['3 s: each wait is 3 s, longer than the backoff', '3', {}, [3000, 3000]],
    ['30 s: waited, the most a retry waits', '30', {}, [30_000, 30_000]],
  ])("a busy Ollama's Retry-After of %s", async (_case, header, options, waits) => {
    ollama.setScenario({ busy: 2, ...(header !== undefined ? { busyRetryAfter: header } : {}) });
    const { outcome, sleeps } = await run(transport({ initialDelayMs: 100, ...options }));
    expect(outcome).toMatchObject({ status: 'ok', attempts: 3 });
    expect(sleeps).toEqual(waits);
  });

  it.each([
    ['a minute, past the 30 s a retry waits', '60', {}],
    ['3 s, to a server passing it on at once (maxRetryAfterMs 0)', '3', { maxRetryAfterMs: 0 }],
  ])("a busy Ollama's Retry-After of %s: not asked again sooner than it said, the failure kept with it", async (_case, header, options) => {
    ollama.setScenario({ busy: 2, busyRetryAfter: header });
    const { outcome, sleeps } = await run(transport({ initialDelayMs: 100, ...options }));
    expect(outcome).toMatchObject({ status: 'error', attempts: 1, failure: { kind: 'busy', retryAfterS: Number(header) } });
    expect(sleeps).toEqual([]);
    expect(ollama.requests.filter((request) => request.path === '/api/chat')).toHaveLength(1);
  });

  it('a rate limit (429, a cloud model\'s) is retried as a busy Ollama is, and said so when it lasts', async () => {
    ollama.setScenario({ busy: 1, busyAsRateLimit: true });
    const retried = await run(transport());
    expect(retried.outcome).toMatchObject({ status: 'ok', attempts: 2 });
    expect(retried.retries).toEqual([[2, 1, 'rate-limited']]);
    ollama.setScenario({ busy: 3, busyAsRateLimit: true, busyRetryAfter: '1' });
    const { outcome } = await run(transport({ maxRetryAfterMs: 0 }));
    expect(outcome.failure).toEqual({ kind: 'busy', httpStatus: 429, retryAfterS: 1, message: `Ollama at ${ollama.url} is rate-limited (rate limit exceeded)` });
  });

  it.each([
    ['runner error (500)', { runnerError: true }, 'http'],
    ['error line mid-stream', { errorMidStream: 2 }, 'mid-stream'],
    ['truncated stream', { truncate: 2 }, 'truncated'],
  ] as const)('does not retry a %s', async (_name, scenario, kind) => {
    ollama.setScenario(scenario);
    const { outcome, retries } = await run(transport());
    expect(outcome.failure?.kind).toBe(kind);
    expect(retries).toEqual([]);
    expect(ollama.requests).toHaveLength(1);
  });

  it('reports a malformed line itself, without the client\'s console warning', async () => {
    const warn = vi.spyOn(console, 'warn');
    ollama.setScenario({ malformedAfter: 2 });
    const { outcome, texts } = await run(transport());
    expect(texts).toEqual(['a', 'b']);
    expect(outcome.failure?.kind).toBe('malformed');
    expect(warn).not.toHaveBeenCalled();
  });

  it('a line that never ends (not Ollama, or a broken proxy) is cut at 32 MiB with a line saying so, and no more is read', async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    let sent = 0;
    const endless = () =>
      Promise.resolve(
        new Response(
          new ReadableStream<Uint8Array>({
            // Each chunk a turn of the event loop later, as a socket's: a guard that never stops then fails by the test's timeout.
            async pull(controller) {
              await new Promise((resolve) => setImmediate(resolve));
              sent += chunk.length;
              controller.enqueue(chunk);
            },
          }),
          { status: 200, headers: { 'content-type': 'application/x-ndjson' } },
        ),
      );
    const { outcome, texts } = await run(transport({ fetch: endless }));
    expect(texts).toEqual([]);
    expect(outcome.failure).toEqual({
      kind: 'malformed',
      message: `Ollama sent a line of more than 32 MiB without ending it (${'a'.repeat(80)}…); the answer is incomplete (is it Ollama at ${ollama.url}, with nothing in between?)`,
    });
    // Read up to the limit (the stream's own buffer may hold a few more chunks), not for ever.
    expect(sent).toBeLessThan(33 * 1024 * 1024);
  });

  it('maps a missing model to model-missing with Ollama\'s message', async () => {
    const { outcome } = await run(transport(), { endpoint: '/api/generate', body: { model: 'nope', prompt: 'hi', stream: true } });
    expect(outcome.failure).toEqual({ kind: 'model-missing', message: "model 'nope' not found", httpStatus: 404 });
  });

  it('an abort from the caller ends the turn as interrupted and cancels the request', async () => {
    ollama.setScenario({ hang: 1 });
    const controller = new AbortController();
    const texts: string[] = [];
    const outcome = await transport().stream(chat, {
      signal: controller.signal,
      onText: (text) => {
        texts.push(text);
        controller.abort();
      },
    });
    expect(outcome.status).toBe('interrupted');
    expect(texts).toEqual(['a']);
    await ollama.requests[0]?.settled;
    expect(ollama.requests[0]?.clientAborted).toBe(true);
  });

  it('an abort during the backoff wait ends as interrupted without another request', async () => {
    ollama.setScenario({ busy: 5 });
    const controller = new AbortController();
    const outcome = await transport({ initialDelayMs: 5_000 }).stream(chat, {
      signal: controller.signal,
      onText: () => undefined,
      // onRetry runs just before the backoff wait starts: abort once it has.
      onRetry: () => {
        queueMicrotask(() => {
          controller.abort();
        });
      },
    });
    expect(outcome.status).toBe('interrupted');
    expect(ollama.requests).toHaveLength(1);
  });

  it('aborts an idle stream as an error of kind idle', async () => {
    ollama.setScenario({ hang: 2 });
    const { outcome, texts } = await run(transport({ idleMs: 150 }));
    expect(texts).toEqual(['a', 'b']);
    expect(outcome).toMatchObject({ status: 'error', failure: { kind: 'idle' } });
  });

  // The CLI's user changes a flag; a server's operator its environment, and its client the request.
  it.each([
    [CLI_HINTS, 'or set --host / OLLAMA_HOST to where it runs', /^"embedder" does not support chat; try --api generate, or another model if this one does neither \(an embedding model\)$/],
    [SERVER_HINTS, 'or set argo serve\'s OLLAMA_HOST (or "host" in its config.json) to where it runs', /answered HTTP 400: "embedder" does not support chat$/],
  ])('failures name the fix in the caller\'s terms (%#)', async (hints, refused, unsupported) => {
    const down = await run(transport({ host: NOWHERE, attempts: 1, hints }));
    expect(down.outcome.failure?.message).toContain(refused);
    ollama.options.models = [{ name: 'embedder', capabilities: ['embedding'] }];
    try {
      const { outcome } = await run(transport({ hints }), { endpoint: '/api/chat', body: { ...chat.body, model: 'embedder' } });
      expect(outcome.failure?.message).toMatch(unsupported);
    } finally {
      ollama.options.models = undefined;
    }
  });

  it.each([
    [CLI_HINTS, 'with --model ("ollama show MODEL" lists "tools" under its capabilities)'],
    [SERVER_HINTS, 'with the request\'s "model" ("ollama show MODEL" lists "tools" under its capabilities)'],
  ])('a model that cannot call tools is told apart, with the fix in the caller\'s terms (%#)', async (hints, fix) => {
    const tools = [{ type: 'function' as const, function: { name: 'read_file', description: 'read', parameters: { type: 'object' as const, properties: {} } } }];
    const { outcome } = await run(transport({ hints }), { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream: true, tools } });
    expect(outcome.failure?.message).toBe(`Ollama at ${ollama.url} answered HTTP 400: registry.ollama.ai/library/argo:latest does not support tools; choose a model that can call tools ${fix}`);
  });

  it.each([
    ['a page labelled JSON', 'application/json', '<html><body>502 Bad Gateway</body></html>', 'Ollama at http://ollama.test:11434 answered HTTP 502: <html><body>502 Bad Gateway</body></html>'],
    ['plain text', 'text/plain', 'upstream timed out', 'Ollama at http://ollama.test:11434 answered HTTP 502: upstream timed out'],
    ['Ollama\'s own error', 'application/json', '{"error":"runner crashed"}', 'Ollama at http://ollama.test:11434 answered HTTP 502: runner crashed'],
    // One line, printed after `argo: ` and logged: a page's or a message's line breaks would start lines of their own.
    ['a page of several lines', 'text/html', '<html>\r\n<body>\r\n502 Bad Gateway\r\n</body>\r\n</html>\r\n', 'Ollama at http://ollama.test:11434 answered HTTP 502: <html> <body> 502 Bad Gateway </body> </html>'],
    ['Ollama\'s own error of several lines', 'application/json', '{"error":"runner crashed\\r\\nargo: not argo\\n"}', 'Ollama at http://ollama.test:11434 answered HTTP 502: runner crashed argo: not argo'],
    // Cut at 200 units, never through a surrogate pair (half an emoji is a lone surrogate in the log).
    ['a long page', 'text/html', `${'x'.repeat(199)}😀 and more`, `Ollama at http://ollama.test:11434 answered HTTP 502: ${'x'.repeat(199)}…`],
  ])('an error body that is %s becomes the failure message; nothing is printed', async (_name, type, body, message) => {
    const log = vi.spyOn(console, 'log');
    const error = vi.spyOn(console, 'error');
    const write = vi.spyOn(process.stdout, 'write');
    const fetch = () => Promise.resolve(new Response(body, { status: 502, statusText: 'Bad Gateway', headers: { 'content-type': type } }));
    const { outcome } = await run(transport({ host: 'http://ollama.test:11434', attempts: 1, fetch }));
    expect(outcome.failure).toMatchObject({ kind: 'http', message });
    expect([log.mock.calls, error.mock.calls, write.mock.calls]).toEqual([[], [], []]);
  });

  it.each([
    [undefined, 'First, a greeting.'],
    [false, ''],
  ])('a thinking model with think %j streams its reasoning to onThinking, apart from the answer', async (think, thought) => {
    ollama.options.models = [{ name: 'qwen3', capabilities: ['completion', 'thinking'] }];
    ollama.options.thinking = 'First, a greeting.';
    try {
      const thinking: string[] = [];
      const texts: string[] = [];
      const body = { model: 'qwen3', messages: [{ role: 'user' as const, content: 'hi' }], stream: true, ...(think === undefined ? {} : { think }) };
      const outcome = await transport().stream({ endpoint: '/api/chat', body }, { onText: (text) => texts.push(text), onThinking: (text) => thinking.push(text) });
      expect(outcome.status).toBe('ok');
      expect(thinking.join('')).toBe(thought);
      expect(texts.join('')).toBe('abcd');
    } finally {
      ollama.options.models = undefined;
      ollama.options.thinking = undefined;
    }
  });

  it.each([
    [[{ name: 'all-minilm:latest', capabilities: ['embedding'] }, { name: 'llama3:8b' }], 'llama3:8b'],
    [[{ name: 'nomic-embed-text:latest', capabilities: ['embedding'] }], undefined],
    [[{ name: 'aaa-old:latest', capabilities: [] }, { name: 'llama3:8b' }], 'aaa-old:latest'],
  ])('answeringModel among %j: %s (an embedding model is never suggested)', async (models, expected) => {
    ollama.options.models = models;
    try {
      const t = transport();
      expect(await t.answeringModel(await t.installedModels())).toBe(expected);
    } finally {
      ollama.options.models = undefined;
    }
  });

  it.each([
    // stream, scenario → status, failure kind
    [true, undefined, 'ok', undefined],
    [false, undefined, 'ok', undefined],
    [true, { truncate: true }, 'error', 'truncated'],
    [false, { truncate: true }, 'error', 'truncated'],
    [false, { truncate: 2 }, 'error', 'truncated'],
  ])('stream %s, scenario %j: %s %s (an answer needs its done:true chunk, streamed or whole)', async (stream, scenario, status, kind) => {
    ollama.setScenario(scenario);
    const { outcome } = await run(transport(), { endpoint: '/api/chat', body: { ...chat.body, stream } });
    expect(outcome.status).toBe(status);
    expect(outcome.failure?.kind).toBe(kind);
    if (kind !== undefined) expect(outcome.failure?.message).toBe('the stream from Ollama ended without its final chunk; the answer is incomplete');
  });

  it.each([
    ['asked', { logprobs: true, top_logprobs: 1 }, true],
    ['not asked', {}, false],
    ['top_logprobs alone (Ollama gives none)', { top_logprobs: 1 }, false],
  ])('log probabilities %s: each chunk\'s ride with its first piece (reasoning, else text, else calls); a chunk with nothing else hands them over alone', async (_name, asked, given) => {
    ollama.options.models = [{ name: 'qwen3', capabilities: ['completion', 'thinking', 'tools'] }];
    ollama.options.thinking = 'Hm.';
    ollama.options.toolCalls = [{ function: { name: 'f', arguments: {} } }];
    try {
      const pieces: [string, unknown, unknown][] = [];
      const tools = [{ type: 'function' as const, function: { name: 'f', description: 'f', parameters: { type: 'object' } } }];
      const body = { model: 'qwen3', messages: [{ role: 'user' as const, content: 'hi' }], stream: true, tools, ...asked };
      const outcome = await transport().stream({ endpoint: '/api/chat', body }, {
        onThinking: (text, logprobs) => pieces.push(['thinking', text, logprobs]),
        onText: (text, logprobs) => pieces.push(['text', text, logprobs]),
        onToolCalls: (calls, logprobs) => pieces.push(['calls', calls.length, logprobs]),
        onLogprobs: (logprobs) => pieces.push(['alone', null, logprobs]),
      });
      expect(outcome.status).toBe('ok');
      // The call as the model wrote it (name and arguments), about four characters a token: all but the last held back by Ollama's parser.
      const callTokens = JSON.stringify({ name: 'f', arguments: {} }).match(/[^]{1,4}/g) ?? [];
      const lp = (token: string) => (given ? [fakeLogprob(token, 1)] : undefined);
      expect(pieces).toEqual([
        ['thinking', 'Hm.', lp('Hm.')],
        ...['a', 'b', 'c', 'd'].map((token) => ['text', token, lp(token)]),
        ...(given ? callTokens.slice(0, -1).map((token) => ['alone', null, lp(token)]) : []),
        ['calls', 1, lp(callTokens.at(-1) ?? '')],
      ]);
    } finally {
      ollama.options.models = undefined;
      ollama.options.thinking = undefined;
      delete ollama.options.toolCalls;
    }
  });

  it.each<[string, unknown, unknown]>([
    ['none', undefined, undefined],
    ['an empty list', [], undefined],
    ['entries of Ollama\'s shape', [{ token: 'a', logprob: -0.1, bytes: [97], top_logprobs: [{ token: 'b', logprob: -2 }] }], [{ token: 'a', logprob: -0.1, bytes: [97], top_logprobs: [{ token: 'b', logprob: -2 }] }]],
    ['a null or a stranger among them (a proxy): left out', [null, 'x', { token: 'a', logprob: -0.1 }, { token: 1, logprob: 0 }, { token: 'c', logprob: -1, top_logprobs: [null] }], [{ token: 'a', logprob: -0.1 }]],
    ['nothing usable', [null, { logprob: -1 }], undefined],
  ])('logprobsOf: %s', (_case, logprobs, handed) => {
    expect(logprobsOf({ logprobs } as Parameters<typeof logprobsOf>[0])).toEqual(handed);
  });

  it('log probabilities of /api/generate come with its text the same way', async () => {
    const pieces: [string, unknown][] = [];
    const outcome = await transport().stream(
      { endpoint: '/api/generate', body: { model: 'argo', prompt: 'hi', stream: true, logprobs: true } },
      { onText: (text, logprobs) => pieces.push([text, logprobs]) },
    );
    expect(outcome.status).toBe('ok');
    expect(pieces).toEqual(['a', 'b', 'c', 'd'].map((token) => [token, [fakeLogprob(token, 0)]]));
  });

  describe('questions about Ollama and its models (tags, show, version)', () => {
    const asks: [string, (t: OllamaTransport, signal?: AbortSignal) => Promise<unknown>][] = [
      ['modelNumCtx', (t, signal) => t.modelNumCtx('argo', signal)],
      ['capabilities', (t, signal) => t.capabilities('argo', signal)],
      ['installedModels', (t, signal) => t.installedModels(signal)],
      ['version', (t, signal) => t.version(signal)],
    ];

    it.each(asks)('%s answers', async (_name, ask) => {
      await expect(ask(transport())).resolves.toBeDefined();
    });

    const stalled = (_input: Parameters<typeof fetch>[0], init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)));

    it.each(asks)('%s gives up after idleMs when Ollama sends nothing', async (name, ask) => {
      // A TimeoutError, as AbortSignal.timeout gives: what the failure's wording looks for ('no answer in time').
      // The version question says so in words already (questionFailure's), the TimeoutError its cause.
      const failure = name === 'version' ? { message: expect.stringMatching(/ within 0\.05s /) as unknown, cause: { name: 'TimeoutError' } } : { name: 'TimeoutError' };
      await expect(ask(transport({ idleMs: 50, fetch: stalled }))).rejects.toMatchObject(failure);
    });

    it('version waits 5 s at most, as a turn asks it, however long idleMs is', async () => {
      vi.useFakeTimers({ toFake: ['setTimeout'] });
      try {
        const asked = transport({ idleMs: 120_000, fetch: stalled }).version();
        const settled = expect(asked).rejects.toThrow(`no answer from Ollama at ${ollama.url} within 5s (Ollama stuck, or its machine overloaded); restart Ollama, or check that machine's load`);
        await vi.advanceTimersByTimeAsync(5000);
        await settled;
      } finally {
        vi.useRealTimers();
      }
    });

    it.each<[string, () => Response]>([
      ['a web page', () => new Response('<!DOCTYPE html><html></html>', { headers: { 'content-type': 'text/html' } })],
      ['nothing', () => new Response('')],
    ])('version: %s with status 200 is said not to be Ollama', async (_case, answer) => {
      await expect(transport({ fetch: () => Promise.resolve(answer()) }).version()).rejects.toThrow(`something at ${ollama.url} answered, but not as Ollama does (its answer is not JSON); check that --host / OLLAMA_HOST points at Ollama`);
    });

    it.each<[string, unknown]>([
      ['no version', {}],
      ['a version that is no text', { version: 12 }],
      ['a list', []],
    ])('version: a JSON answer with %s is said not to be Ollama', async (_case, body) => {
      await expect(transport({ fetch: () => Promise.resolve(Response.json(body)) }).version()).rejects.toThrow(
        `something at ${ollama.url} answered, but not as Ollama does (its answer names no version); check that --host / OLLAMA_HOST points at Ollama`,
      );
    });

    it.each(asks)('%s ends at once when the caller\'s signal aborts, and the request is cancelled', async (_name, ask) => {
      let cancelled = false;
      const stalled = (_input: Parameters<typeof fetch>[0], init?: RequestInit) =>
        new Promise<Response>((_resolve, reject) =>
          init?.signal?.addEventListener('abort', () => {
            cancelled = true;
            reject(init.signal?.reason as Error);
          }),
        );
      const controller = new AbortController();
      const asked = ask(transport({ idleMs: 60_000, fetch: stalled }), controller.signal);
      controller.abort();
      await expect(asked).rejects.toThrow();
      expect(cancelled).toBe(true);
    });
  });

  it('treats a refused connection as unreachable and retries it', async () => {
    const { outcome, retries } = await run(transport({ host: NOWHERE }));
    expect(outcome.failure?.kind).toBe('unreachable');
    expect(retries.map(([attempt]) => attempt)).toEqual([2, 3]);
  });
});

describe('questionFailure: a question about Ollama that got no usable answer, in words naming the fix', () => {
  const H = 'http://h:11434';
  const refused = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });
  const timeout = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
  const status = (code: number, error: string): Error => Object.assign(new Error(error), { name: 'ResponseError', status_code: code, error });
  const NOT_OLLAMA = (what: string, where = '--host / OLLAMA_HOST'): string => `something at ${H} answered, but not as Ollama does (${what}); check that ${where} points at Ollama`;
  it.each<[string, unknown, typeof CLI_HINTS, string]>([
    ['nothing listens', refused, CLI_HINTS, `cannot reach Ollama at ${H} (connection refused); start it with "ollama serve", or set --host / OLLAMA_HOST to where it runs`],
    ['nothing listens, for a server', refused, SERVER_HINTS, `cannot reach Ollama at ${H} (connection refused); start it with "ollama serve", or set argo serve's OLLAMA_HOST (or "host" in its config.json) to where it runs`],
    ['no answer in time', timeout, CLI_HINTS, `no answer from Ollama at ${H} within 5s (Ollama stuck, or its machine overloaded); restart Ollama, or check that machine's load`],
    ['a web page where JSON goes', new SyntaxError('Unexpected token \'<\', "<!DOCTYPE "... is not valid JSON'), CLI_HINTS, NOT_OLLAMA('its answer is not JSON')],
    ['JSON without the field asked for', new NotOllamaAnswer('its answer names no version'), CLI_HINTS, NOT_OLLAMA('its answer names no version')],
    ['a 404 page', status(404, '<html><h1>404 Not Found</h1></html>'), CLI_HINTS, NOT_OLLAMA('HTTP 404')],
    ['a 404, for a server', status(404, 'Not Found'), SERVER_HINTS, NOT_OLLAMA('HTTP 404', 'argo serve\'s OLLAMA_HOST (or "host" in its config.json)')],
    ['a 405', status(405, 'Method Not Allowed'), CLI_HINTS, NOT_OLLAMA('HTTP 405')],
    // Ollama's own answers keep their words.
    ['a missing model (Ollama\'s 404)', status(404, 'model "x" not found, try pulling it first'), CLI_HINTS, 'model "x" not found, try pulling it first'],
    ['Ollama busy', status(503, 'server busy'), CLI_HINTS, `Ollama at ${H} is busy (server busy)`],
    ['Ollama refusing the host', status(403, ''), CLI_HINTS, `Ollama at ${H} refused the request (403 Forbidden); check OLLAMA_HOST and OLLAMA_ORIGINS on the server`],
    ['a proxy whose Ollama is down', status(502, 'Bad Gateway'), CLI_HINTS, `Ollama at ${H} answered HTTP 502: Bad Gateway`],
  ])('%s', (_case, error, hints, line) => {
    expect(questionFailure(H, error, hints, 5000)).toBe(line);
  });
});

describe('retryAfterSeconds', () => {
  const NOW = Date.parse('2026-01-15T09:30:00Z');
  it.each([
    [null, null],
    ['', null],
    ['0', 0],
    ['7', 7],
    [' 120 ', 120],
    ['1.5', null],
    ['-3', null],
    ['7 seconds', null],
    ['Thu, 15 Jan 2026 09:30:42 GMT', 42],
    ['Thu, 15 Jan 2026 09:30:00 GMT', 0],
    ['Thu, 15 Jan 2026 09:00:00 GMT', 0],
    // Not the HTTP date form, though Date.parse would guess at them.
    ['2026-01-15T09:31:00Z', null],
    ['tomorrow', null],
  ])('%j → %j', (value, seconds) => {
    expect(retryAfterSeconds(value, NOW)).toBe(seconds);
  });
});
