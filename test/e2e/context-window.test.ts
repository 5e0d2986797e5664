// The context window check and Ollama's metadata requests end to end: the built bin/argo (and
// argo serve) against the stand-in, which cuts each request's prompt to its window as Ollama does.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeRound, RecordedRequest } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { startServe } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';

/** An agent run's round 1 reads a file; once its result is in, the model answers: two requests per run. */
function readThenAnswer(body: { messages?: { role: string }[]; tools?: unknown }): FakeRound | undefined {
  if (body.tools === undefined) return undefined;
  if (body.messages?.at(-1)?.role === 'tool') return { reply: 'Done.' };
  return { toolCalls: [{ id: 'r1', function: { name: 'read_file', arguments: { path: 'notes.txt' } } }] };
}

const ollama = await fakeOllamaPerFile({ rounds: (body) => readThenAnswer(body) });
afterEach(() => {
  ollama.options.models = undefined;
  ollama.options.stallShow = undefined;
  ollama.setScenario(undefined);
  ollama.requests.length = 0;
});

/** `n` words: the stand-in counts one token each, Argo's estimate about half a token each. */
const words = (n: number): string => Array.from({ length: n }, () => 'a').join(' ');
const isShow = (request: RecordedRequest): boolean => request.path === '/api/show';

function root(): string {
  const dir = mkdtempSync(join(tmpdir(), 'argo-window-root-'));
  writeFileSync(join(dir, 'notes.txt'), 'the secret word is heron\n');
  return dir;
}

describe('an agent run is judged request by request', () => {
  it.each([
    // the model's num_ctx (none: Ollama's 4096), prompt words, suspected, the stderr line
    [undefined, 5000, true, /^argo: Ollama read 4096 prompt tokens, all of the context window \(4096 tokens, the window Ollama loaded the model with\)/m],
    [2048, 1200, false, null],
  ])('num_ctx %s, %i words: truncation_suspected %s', async (numCtx, count, suspected, line) => {
    ollama.options.models = [{ name: 'argo', capabilities: ['completion', 'tools'], ...(numCtx === undefined ? {} : { numCtx }) }];
    const home = tempHome();
    const result = await runArgo(['--tools', 'fs', '--root', root(), words(count)], { home, host: ollama.url });
    expect(result.code).toBe(0);
    const chats = ollama.requests.filter((request) => request.path === '/api/chat');
    expect(chats).toHaveLength(2);
    const window = numCtx ?? 4096;
    // Each request on its own decides: both were cut (first case), or neither was (second) …
    expect(chats.map((request) => request.prompt?.truncated)).toEqual([suspected, suspected]);
    const [entry] = logLines(home);
    // … while the logged figures stay the run's totals, past the window in both cases.
    expect(entry?.timings).toMatchObject({ prompt_eval_count: expect.any(Number) as unknown });
    expect((entry?.timings as { prompt_eval_count: number }).prompt_eval_count).toBeGreaterThan(window);
    expect(entry).toMatchObject({ num_ctx: window, truncation_suspected: suspected });
    if (line === null) expect(result.stderr).not.toContain('context window');
    else expect(result.stderr).toMatch(line);
  });

  it('argo serve with tools judges the same way', async () => {
    ollama.options.models = [{ name: 'argo', capabilities: ['completion', 'tools'] }];
    const home = tempHome();
    const serve = await startServe({ home, host: ollama.url, args: ['--root', root()] });
    try {
      const response = await fetch(`${serve.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: words(5000) }], argo: { tools: 'fs', session: 'w' } }),
      });
      expect(response.status).toBe(200);
      const id = response.headers.get('x-argo-turn-id');
      await waitFor(() => expect(logLines(home).find((line) => line.id === id)).toMatchObject({ num_ctx: 4096, truncation_suspected: true }));
    } finally {
      await serve.stop();
    }
  });
});

describe("an agent run's later requests are checked before they are sent", () => {
  /** A tree whose notes.txt is under read_file's budget but, fed back, longer than a 600-token window. */
  function bigNotes(): string {
    const dir = mkdtempSync(join(tmpdir(), 'argo-window-root-'));
    writeFileSync(join(dir, 'notes.txt'), `${words(1600)}\n`);
    return dir;
  }

  it.each([
    // how the window is set → the words naming it, /api/show asked
    ['--num-ctx 600', ['--num-ctx', '600'], undefined, 'from --num-ctx', 0],
    ["the model's num_ctx 600", [], 600, "the model's num_ctx", 1],
  ])('%s: one line before the request with the tool results, which is still sent; logged as cut', async (_case, flags, numCtx, source, shows) => {
    ollama.options.models = [{ name: 'argo', capabilities: ['completion', 'tools'], ...(numCtx === undefined ? {} : { numCtx }) }];
    const home = tempHome();
    const result = await runArgo(['--tools', 'fs', '--root', bigNotes(), ...flags, 'what do the notes say?'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 0, stdout: 'Done.\n' });
    const [line, ...others] = result.stderr.split('\n').filter((text) => text.includes('context window'));
    expect(others).toEqual([]);
    const estimate = Number(/about (\d+) tokens/.exec(line ?? '')?.[1]);
    expect(line).toBe(`argo: the prompt with the tool results so far (about ${String(estimate)} tokens) is longer than the context window (600 tokens, ${source}); Ollama cuts such prompts silently — raise --num-ctx (e.g. --num-ctx 2048) or lower the tools' result budgets (toolBudgets in config.json)`);
    // The first request fitted; the second went out all the same, and the stand-in cut it as Ollama would.
    const chats = ollama.requests.filter((request) => request.path === '/api/chat');
    expect(chats.map((request) => request.prompt?.truncated)).toEqual([false, true]);
    expect(ollama.requests.filter(isShow)).toHaveLength(shows);
    expect(logLines(home)[0]).toMatchObject({ status: 'ok', num_ctx: 600, prompt_tokens_estimate: estimate, truncation_suspected: true });
    expect(estimate).toBeGreaterThan(600);
  });
});

describe('a small prompt is checked after the answer when its count could be the window', () => {
  it.each([
    // the model's num_ctx, prompt words, asked /api/show, suspected
    [256, 300, true, true],
    [256, 3, false, false],
    [undefined, 3, false, false],
  ])('num_ctx %s, %i words: /api/show asked %s, truncation_suspected %s', async (numCtx, count, asked, suspected) => {
    ollama.options.models = [{ name: 'argo', ...(numCtx === undefined ? {} : { numCtx }) }];
    const home = tempHome();
    const result = await runArgo([words(count)], { home, host: ollama.url });
    expect(result.code).toBe(0);
    expect(ollama.requests.some(isShow)).toBe(asked);
    expect(logLines(home)[0]).toMatchObject({ num_ctx: asked ? numCtx : null, truncation_suspected: suspected });
    if (suspected) expect(result.stderr).toMatch(/^argo: Ollama read 256 prompt tokens, all of the context window \(256 tokens, the model's num_ctx\)/m);
    else expect(result.stderr).toBe('');
  });
});

describe("a server whose default window is not Ollama's usual 4096", () => {
  it.each([
    // the server's default (a big GPU's, or OLLAMA_CONTEXT_LENGTH), prompt words → the window logged, suspected
    [32_768, 40_000, 32_768, true],
    [32_768, 20_000, 4096, false],
    [10_000, 12_000, 10_000, true],
  ])('default %i, %i words: judged against %i from /api/ps, truncation_suspected %s', async (defaultNumCtx, count, window, suspected) => {
    ollama.options.models = [{ name: 'argo' }];
    ollama.options.defaultNumCtx = defaultNumCtx;
    try {
      const home = tempHome();
      const result = await runArgo([words(count)], { home, host: ollama.url });
      expect(result.code).toBe(0);
      expect(logLines(home)[0]).toMatchObject({ num_ctx: window, truncation_suspected: suspected });
      expect(ollama.requests.some((request) => request.path === '/api/ps')).toBe(suspected);
      if (suspected) expect(result.stderr).toMatch(new RegExp(`^argo: Ollama read ${window} prompt tokens, all of the context window \\(${window} tokens, the window Ollama loaded the model with\\); the prompt was probably cut`, 'm'));
      else expect(result.stderr).toBe('');
    } finally {
      delete ollama.options.defaultNumCtx;
    }
  });
});

describe('a stalled /api/show', () => {
  it('holds a turn no longer than timeouts.idleMs: the turn goes on unchecked', async () => {
    ollama.options.stallShow = true;
    const home = tempHome({ timeouts: { idleMs: 300 } });
    const result = await runArgo([words(2000)], { home, host: ollama.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('You said:');
    expect(logLines(home)[0]).toMatchObject({ status: 'ok', num_ctx: null, truncation_suspected: false });
    const show = ollama.requests.find(isShow);
    await show?.settled;
    expect(show?.clientAborted).toBe(true);
  });

  // The window check asks /api/show; so does config.json's think, for the model's capabilities.
  it.each<[string, Record<string, unknown>, string]>([
    ['the window check', {}, words(2000)],
    ["config.json's think", { think: true }, 'hi'],
  ])('Ctrl-C while %s waits for it ends the turn at once: exit 130, logged as interrupted', async (_case, config, prompt) => {
    ollama.options.stallShow = true;
    const home = tempHome(config);
    const result = await runArgo([prompt], {
      home,
      host: ollama.url,
      onSpawn: (child) => void ollama.waitForRequest(isShow).then(() => child.kill('SIGINT')),
    });
    expect(result.code).toBe(130);
    expect(logLines(home)[0]).toMatchObject({ status: 'interrupted' });
    expect(ollama.requests.some((request) => request.path === '/api/chat')).toBe(false);
  });

  it('a chat\'s /explain waiting for it: Ctrl-C ends the wait, the explanation comes without the window, the chat goes on', async () => {
    ollama.options.stallShow = true;
    const home = tempHome();
    let interrupted = false;
    const result = await runArgo(['chat'], {
      home,
      host: ollama.url,
      stdin: `/explain ${words(2000)}\nhello\n`,
      onSpawn: (child) =>
        void ollama.waitForRequest(isShow).then(() => {
          interrupted = true;
          child.kill('SIGINT');
        }),
    });
    expect(interrupted).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('You said: hello');
    expect(result.stderr).toMatch(/^context {4}about \d+ prompt tokens$/m);
    expect(logLines(home)).toMatchObject([{ status: 'ok', user_prompt: 'hello' }]);
    const show = ollama.requests.find(isShow);
    await show?.settled;
    expect(show?.clientAborted).toBe(true);
  });

  it('argo serve: a client that goes away cancels the lookup', async () => {
    ollama.options.stallShow = true;
    const home = tempHome();
    const serve = await startServe({ home, host: ollama.url });
    try {
      const client = new AbortController();
      const sent = fetch(`${serve.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'argo', stream: true, messages: [{ role: 'user', content: words(2000) }] }),
        signal: client.signal,
      }).catch(() => null);
      const show = await ollama.waitForRequest(isShow);
      client.abort();
      await sent;
      await show.settled;
      expect(show.clientAborted).toBe(true);
    } finally {
      await serve.stop();
    }
  });
});

describe('--no-stream', () => {
  it('a whole answer without done:true fails as a cut stream does: exit 1, status error', async () => {
    ollama.setScenario({ truncate: true });
    const home = tempHome();
    const result = await runArgo(['--no-stream', 'hi'], { home, host: ollama.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('argo: the stream from Ollama ended without its final chunk; the answer is incomplete');
    expect(logLines(home)[0]).toMatchObject({ status: 'error', ollama_stream: false, error: 'the stream from Ollama ended without its final chunk; the answer is incomplete' });
  });
});

describe("the context window line names the fixes the user can use where the turn was asked", () => {
  // A model whose own window is small (256 tokens): the line comes before sending.
  it.each<[string, string[], string[], RegExp[]]>([
    [
      'a question, nothing replayed: the prompt is what to shorten',
      ['-r', 'none', words(600)],
      [],
      [/— raise --num-ctx \(e\.g\. --num-ctx \d+\) or shorten the prompt$/],
    ],
    [
      'a chat: its --num-ctx is given by starting it again; replaying less only once something was replayed',
      ['chat', '-s', 'big'],
      [words(600), words(600)],
      [/— start argo chat again with --num-ctx \d+ or shorten the prompt$/, /— start argo chat again with --num-ctx \d+ or replay less \(\/replay last:1 or \/replay none\)$/],
    ],
  ])('%s', async (_case, args, lines, expected) => {
    ollama.options.models = [{ name: 'argo', numCtx: 256 }];
    const result = await runArgo(args, { home: tempHome(), host: ollama.url, stdin: lines.map((line) => `${line}\n`).join('') });
    expect(result.code).toBe(0);
    const said = result.stderr.split('\n').filter((line) => line.includes('context window'));
    expect(said).toHaveLength(expected.length);
    for (const [index, pattern] of expected.entries()) expect(said[index]).toMatch(pattern);
  });
});
