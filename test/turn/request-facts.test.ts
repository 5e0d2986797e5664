import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import type { OllamaRequest } from '../../src/replay/prompt.js';
import { SMALL_PROMPT_TOKENS, checkContext, requestFacts, requestSha256 } from '../../src/turn/request-facts.js';

const settings = (flags: Parameters<typeof loadSettings>[0] = {}) => loadSettings({ home: mkdtempSync(join(tmpdir(), 'argo-facts-')), ...flags }, {});
const request = (content: string, options?: Record<string, number>): OllamaRequest => ({
  endpoint: '/api/chat',
  body: { model: 'argo', messages: [{ role: 'user', content }], stream: true, ...(options ? { options } : {}) },
});

describe('requestSha256', () => {
  it('is the SHA-256 of the body as JSON, the bytes the client sends', () => {
    const req = request('hi');
    expect(requestSha256(req)).toBe(createHash('sha256').update(JSON.stringify(req.body)).digest('hex'));
    expect(requestSha256(request('hi'))).toBe(requestSha256(req));
    expect(requestSha256(request('hi!'))).not.toBe(requestSha256(req));
  });
});

describe('checkContext', () => {
  const asked: string[] = [];
  const lookup = (numCtx: number | null) => (model: string) => {
    asked.push(model);
    return Promise.resolve(numCtx);
  };

  it.each([
    // prompt chars, request num_ctx, model num_ctx, window, source, warned before, asked the model
    [40, undefined, 2048, null, null, false, false],
    [40, 8, 2048, 8, 'flag', true, false],
    [4 * (SMALL_PROMPT_TOKENS + 10), undefined, 2048, 2048, 'model', false, true],
    [4 * (SMALL_PROMPT_TOKENS + 10), undefined, 256, 256, 'model', true, true],
    [4 * (SMALL_PROMPT_TOKENS + 10), undefined, null, 4096, 'default', false, true],
    // Over Ollama's usual default: the server's may be larger, so no warning before sending (judged after, by the count).
    [4 * 5000, undefined, null, 4096, 'default', false, true],
    [4 * 5000, undefined, 4096, 4096, 'model', true, true],
  ])('%i chars, num_ctx %s, model %s → window %s (%s), warned %s, asked %s', async (chars, numCtx, model, tokens, source, warned, askedModel) => {
    asked.length = 0;
    const check = await checkContext(settings(), request('x'.repeat(chars), numCtx === undefined ? undefined : { num_ctx: numCtx }), lookup(model));
    expect(check.window).toEqual(tokens === null ? null : { tokens, source });
    expect(check.before !== null).toBe(warned);
    expect(asked.length > 0).toBe(askedModel);
  });

  // A client's images (argo serve's plain mode) count 768 tokens each: a short question with an image
  // asks the model's window, and one that does not fit it with its images is warned of before sending.
  it.each([
    // images, model num_ctx → estimate, window, warned before, asked the model
    [0, 2048, 4 + 4, null, false, false],
    [1, 2048, 4 + 4 + 768, 2048, false, true],
    [3, 2048, 4 + 4 + 3 * 768, 2048, true, true],
    [2, null, 4 + 4 + 2 * 768, 4096, false, true],
  ])('a question with %i image(s), model num_ctx %s → estimate %i, window %s, warned %s, asked %s', async (images, model, estimate, tokens, warned, askedModel) => {
    asked.length = 0;
    const withImages: OllamaRequest = { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'what is this?', ...(images > 0 ? { images: Array<string>(images).fill('aGk=') } : {}) }], stream: true } };
    const check = await checkContext(settings(), withImages, lookup(model));
    expect(check.estimate).toBe(estimate);
    expect(check.window?.tokens ?? null).toBe(tokens);
    expect(check.before !== null).toBe(warned);
    if (warned) expect(check.before).toMatch(new RegExp(`^argo: the prompt \\(about ${estimate} tokens\\) is longer than the context window \\(2048 tokens, the model's num_ctx\\)`));
    expect(asked.length > 0).toBe(askedModel);
  });

  it('after the answer: one line only when the estimate fitted but the count filled the window', async () => {
    const check = await checkContext(settings(), request('hello', { num_ctx: 100 }), undefined);
    const window = { tokens: 100, source: 'flag' };
    expect(await check.after(20)).toEqual({ window, estimate: check.estimate, suspected: false, line: null });
    expect(await check.after(100)).toMatchObject({ window, suspected: true, line: expect.stringMatching(/^argo: Ollama read 100 prompt tokens/) as unknown });
    const over = await checkContext(settings(), request('x'.repeat(800), { num_ctx: 100 }), undefined);
    expect(await over.after(100)).toEqual({ window, estimate: over.estimate, suspected: true, line: null });
  });

  it.each([
    // Ollama's count → suspected, and the line after the answer
    [4096, true, /^argo: the prompt \(about \d+ tokens\) is longer than the context window \(4096 tokens, Ollama's default\); Ollama read 4096;/],
    [9000, false, null],
  ])("a prompt over Ollama's default window, counted %i: cut %s, said after the answer", async (count, suspected, line) => {
    const check = await checkContext(settings(), request('x'.repeat(4 * 5000)), lookup(null));
    expect(check).toMatchObject({ over: true, before: null });
    const verdict = await check.after(count);
    expect(verdict.suspected).toBe(suspected);
    if (line === null) expect(verdict.line).toBeNull();
    else expect(verdict.line).toMatch(line);
  });

  it.each([
    // a small prompt: model num_ctx, the count after the answer → window judged, suspected, asked the model
    [256, 256, 256, true, true],
    [256, 250, null, false, false],
    [512, 300, 512, false, true],
    [null, 4096, 4096, true, true],
    [null, 4097, null, false, false],
    [null, null, null, false, false],
    [2048, 1100, 2048, false, true],
  ])('a small prompt, model num_ctx %s, count %s: judged against %s, suspected %s, asked %s', async (model, count, tokens, suspected, askedModel) => {
    asked.length = 0;
    const check = await checkContext(settings(), request('What is 2+2?'), lookup(model));
    expect(check.window).toBeNull();
    expect(asked).toEqual([]);
    const verdict = await check.after(count);
    expect(verdict.window?.tokens ?? null).toBe(tokens);
    expect(verdict.suspected).toBe(suspected);
    expect(verdict.line !== null).toBe(suspected);
    expect(asked.length > 0).toBe(askedModel);
  });

  it.each([
    // what the lookup does → the window before sending, the line
    ['rejects (no answer in time)', () => Promise.reject(new Error('timeout')), null],
    ['answers 2048', () => Promise.resolve(2048), 2048],
    ['answers no num_ctx', () => Promise.resolve(null), 4096],
  ])('a long prompt whose lookup %s: checked against what it gave, the model asked once, before sending', async (_what, numCtx, tokens) => {
    let lookups = 0;
    const counted = () => {
      lookups++;
      return numCtx();
    };
    const check = await checkContext(settings(), request('x'.repeat(4 * (SMALL_PROMPT_TOKENS + 10))), counted);
    expect(check.window?.tokens ?? null).toBe(tokens);
    // 4096 could be a window: a lookup that got no answer before sending is still not tried again.
    expect((await check.after(4096)).window?.tokens ?? null).toBe(tokens);
    expect(lookups).toBe(1);
  });

  it.each<[string, number, number | null, (() => Promise<number | null>) | 'none', number | null, 'default' | 'loaded' | null, boolean, boolean]>([
    // prompt chars, Ollama's count, what /api/ps says → window judged, its source, suspected, /api/ps asked
    ['cut at a big GPU\'s 32768', 4 * 5000, 32_768, () => Promise.resolve(32_768), 32_768, 'loaded', true, true],
    ['cut at OLLAMA_CONTEXT_LENGTH=10000', 4 * 5000, 10_000, () => Promise.resolve(10_000), 10_000, 'loaded', true, true],
    ['a 32768 count on a 65536 window', 4 * 5000, 32_768, () => Promise.resolve(65_536), 65_536, 'loaded', false, true],
    ['exactly the usual default, loaded larger', 4 * 5000, 4096, () => Promise.resolve(8192), 8192, 'loaded', false, true],
    ['exactly the usual default, loaded with it', 4 * 5000, 4096, () => Promise.resolve(4096), 4096, 'loaded', true, true],
    ['no window in /api/ps (before 0.10.0, or unloaded)', 4 * 5000, 32_768, () => Promise.resolve(null), 4096, 'default', false, true],
    ['/api/ps failing', 4 * 5000, 32_768, () => Promise.reject(new Error('timeout')), 4096, 'default', false, true],
    ['a count that cannot be a window', 4 * 5000, 32_769, () => Promise.resolve(32_768), 4096, 'default', false, false],
    ['a count under the usual default', 4 * 5000, 3200, () => Promise.resolve(32_768), 4096, 'default', true, false],
    ['a small prompt counted 32768', 40, 32_768, () => Promise.resolve(32_768), 32_768, 'loaded', true, true],
    ['no /api/ps lookup given', 4 * 5000, 32_768, 'none', 4096, 'default', false, false],
  ])("Ollama's usual default, %s: judged against the loaded window when the count may be one", async (_what, chars, count, loaded, tokens, source, suspected, askedPs) => {
    let psAsked = 0;
    const loadedNumCtx = loaded === 'none' ? undefined : () => {
      psAsked++;
      return loaded();
    };
    const check = await checkContext(settings(), request('x'.repeat(chars)), lookup(null), { loadedNumCtx });
    const verdict = await check.after(count);
    expect(verdict.window).toEqual(tokens === null ? null : { tokens, source });
    expect(verdict.suspected).toBe(suspected);
    expect(psAsked > 0).toBe(askedPs);
    if (source === 'loaded' && suspected) expect(verdict.line).toMatch(/the window Ollama loaded the model with/);
  });

  it('a window set by flag or the model is never second-guessed by /api/ps', async () => {
    let psAsked = 0;
    const loadedNumCtx = () => {
      psAsked++;
      return Promise.resolve(65_536);
    };
    for (const check of [
      await checkContext(settings(), request('x'.repeat(4 * 5000), { num_ctx: 32_768 }), lookup(null), { loadedNumCtx }),
      await checkContext(settings(), request('x'.repeat(4 * 5000)), lookup(32_768), { loadedNumCtx }),
    ]) {
      expect(await check.after(32_768)).toMatchObject({ window: { tokens: 32_768 }, suspected: true });
    }
    expect(psAsked).toBe(0);
  });

  it('a lookup still waiting when the signal aborts ends at once, and the prompt is not checked', async () => {
    const controller = new AbortController();
    const hung = (_model: string, signal?: AbortSignal) => new Promise<number | null>((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    const pending = checkContext(settings(), request('x'.repeat(4 * (SMALL_PROMPT_TOKENS + 10))), hung, { signal: controller.signal });
    controller.abort();
    expect((await pending).window).toBeNull();
  });

  describe("later requests of the turn (an agent run's, grown by tool results)", () => {
    /** A request body of about `tokens` estimated tokens (4 characters each, 4 for each message), a tool result sent back in it. */
    const body = (tokens: number) => ({ messages: [{ role: 'user', content: 'x'.repeat(4 * (tokens - 8)) }, { role: 'tool', content: '' }] });
    const TOOL_LINE = /^argo: the prompt with the tool results so far \(about (\d+) tokens\) is longer than the context window \((\d+) tokens, ([^)]+)\); Ollama cuts such prompts silently — raise --num-ctx \(e\.g\. --num-ctx \d+\) or lower the tools' result budgets \(toolBudgets in config\.json\)$/;

    it.each<[string, Record<string, number> | undefined, number | null, number[], (string | null)[], number]>([
      // the window's source, request num_ctx, model num_ctx, later requests' tokens → the line before each, /api/show asks
      ['--num-ctx, the third request over', { num_ctx: 1000 }, null, [600, 900, 1200, 1500], [null, null, '1200 1000 from --num-ctx', null], 0],
      ["the model's, asked once a request passes 512", undefined, 1000, [300, 700, 1100], [null, null, "1100 1000 the model's num_ctx"], 1],
      ['fitting every time', { num_ctx: 4000 }, null, [1000, 2000, 3000], [null, null, null], 0],
      // Ollama's usual default: the server's may be larger, so judged after the answer by the count.
      ["Ollama's default", undefined, null, [3000, 5000], [null, null], 1],
      ['a shorter request after a longer one: not checked again', { num_ctx: 1000 }, null, [1200, 800, 1100], ['1200 1000 from --num-ctx', null, null], 0],
    ])('%s', async (_case, numCtx, model, sizes, lines, asks) => {
      asked.length = 0;
      const check = await checkContext(settings(), request('What is 2+2?', numCtx), lookup(model));
      const said: (string | null)[] = [];
      for (const tokens of sizes) said.push(await check.later(body(tokens)));
      expect(said.map((line) => (line === null ? null : (TOOL_LINE.exec(line)?.slice(1).join(' ') ?? line)))).toEqual(lines);
      expect(asked).toHaveLength(asks);
    });

    it("an agent run's first request, long with the tool definitions, says so and names that fix", async () => {
      const check = await checkContext(settings(), request('What is 2+2?', { num_ctx: 1000 }), undefined);
      const tools = [{ type: 'function', function: { name: 'read_file', description: 'x'.repeat(4400), parameters: {} } }];
      expect(await check.later({ messages: [{ role: 'user', content: 'What is 2+2?' }], tools })).toMatch(
        /^argo: the prompt with the tool definitions \(about 11\d\d tokens\) is longer than the context window \(1000 tokens, from --num-ctx\); Ollama cuts such prompts silently — raise --num-ctx \(e\.g\. --num-ctx \d+\) or name fewer tools in --tools$/,
      );
    });

    it.each([
      // the first request's system prompt (a memo), its tools' description → what the line blames
      ['a long memo, no tools: the prompt', 4400, 0, /^argo: the prompt \(about \d+ tokens\) is longer .* or lower --budget$/],
      ['a long memo and tools, too long without them too: the prompt', 4400, 400, /^argo: the prompt \(about \d+ tokens\) is longer .* or lower --budget$/],
      ['a short memo, tools that tip it over: the tool definitions', 400, 4400, /^argo: the prompt with the tool definitions \(about \d+ tokens\) is longer .* or name fewer tools in --tools$/],
    ])('%s', async (_case, memo, description, line) => {
      const check = await checkContext(settings(), request('What is 2+2?', { num_ctx: 1000 }), undefined);
      const tools = description === 0 ? [] : [{ type: 'function', function: { name: 'read_file', description: 'x'.repeat(description), parameters: {} } }];
      const first = { messages: [{ role: 'system', content: 'm'.repeat(memo) }, { role: 'user', content: 'What is 2+2?' }], tools };
      expect(await check.later(first)).toMatch(line);
    });

    it("an agent run's turn asks the model's window as it starts, and its requests then ask nothing more", async () => {
      asked.length = 0;
      const check = await checkContext(settings(), request('What is 2+2?'), lookup(1000), { longerRequests: true });
      // Asked before any request waits for it, and only once.
      expect(asked).toEqual(['argo']);
      expect(check.before).toBeNull();
      expect(await check.later(body(300))).toBeNull();
      expect(await check.later(body(1100))).toMatch(/^argo: the prompt with the tool results so far \(about 1100 tokens\) is longer than the context window \(1000 tokens, the model's num_ctx\)/);
      expect((await check.after(900)).window).toEqual({ tokens: 1000, source: 'model' });
      expect(asked).toEqual(['argo']);
    });

    it('one line per turn: none for a later request once the planned prompt had its line', async () => {
      const check = await checkContext(settings(), request('x'.repeat(800), { num_ctx: 100 }), undefined);
      expect(check.before).toMatch(/^argo: the prompt \(about \d+ tokens\)/);
      expect(await check.later(body(400))).toBeNull();
    });

    it.each([
      // the longest later request, Ollama's largest count → suspected, the line after (none when one was said before sending)
      [1500, 1000, true, null],
      [1500, 700, true, null],
      [900, 1000, true, /^argo: Ollama read 1000 prompt tokens, all of the context window \(1000 tokens, from --num-ctx\); the prompt was probably cut — .* or lower the tools' result budgets/],
      [900, 950, false, null],
    ])('the verdict judges the longest request: %i tokens, counted %i → suspected %s', async (tokens, count, suspected, line) => {
      const check = await checkContext(settings(), request('What is 2+2?', { num_ctx: 1000 }), undefined);
      await check.later(body(tokens));
      const verdict = await check.after(count);
      expect(verdict).toMatchObject({ window: { tokens: 1000, source: 'flag' }, estimate: tokens, suspected });
      if (line === null) expect(verdict.line).toBeNull();
      else expect(verdict.line).toMatch(line);
    });

    it("over Ollama's default: said after the answer, with the tool results' fix", async () => {
      const check = await checkContext(settings(), request('What is 2+2?'), lookup(null));
      expect(await check.later(body(5000))).toBeNull();
      const verdict = await check.after(4096);
      expect(verdict).toMatchObject({ window: { tokens: 4096, source: 'default' }, estimate: 5000, suspected: true });
      expect(verdict.line).toMatch(/^argo: the prompt with the tool results so far \(about 5000 tokens\) is longer than the context window \(4096 tokens, Ollama's default\); Ollama read 4096; .* or lower the tools' result budgets/);
    });

    it('a lookup still waiting when the signal aborts ends at once: the request goes unchecked', async () => {
      const controller = new AbortController();
      const hung = (_model: string, signal?: AbortSignal) => new Promise<number | null>((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))));
      const check = await checkContext(settings(), request('What is 2+2?'), hung);
      const pending = check.later(body(2000), controller.signal);
      controller.abort();
      expect(await pending).toBeNull();
      expect((await check.after(null)).window).toBeNull();
    });

    it('requestFacts logs the longest estimate', async () => {
      const s = settings();
      const req = request('hello', { num_ctx: 1000 });
      const check = await checkContext(s, req, undefined);
      await check.later(body(1500));
      expect(requestFacts(s, req, await check.after(1000), undefined)).toMatchObject({ num_ctx: 1000, prompt_tokens_estimate: 1500, truncation_suspected: true });
    });
  });

  it('requestFacts logs the hash, the options, the window and the verdict', async () => {
    const s = settings({ system: 'Be brief.' });
    const req = request('hello', { num_ctx: 100 });
    const check = await checkContext(s, req, undefined);
    expect(requestFacts(s, req, await check.after(null), 'abc')).toEqual({
      request_sha256: requestSha256(req),
      options: { num_ctx: 100 },
      system: 'Be brief.',
      ollama_stream: true,
      num_ctx: 100,
      prompt_tokens_estimate: 6,
      truncation_suspected: false,
      rerun_of: 'abc',
    });
  });
});
