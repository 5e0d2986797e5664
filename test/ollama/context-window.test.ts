import { describe, expect, it } from 'vitest';
import {
  OLLAMA_DEFAULT_NUM_CTX,
  countMayBeWindow,
  defaultWindowOf,
  estimateAnswerTokens,
  estimatePromptTokens,
  estimateTextTokens,
  numCtxFromParameters,
  overWindow,
  resolveWindow,
  suggestedNumCtx,
  truncationLine,
  truncationSuspected,
} from '../../src/ollama/context-window.js';
import type { EstimableBody, PromptGrowth, TruncationCheck, WindowFixes } from '../../src/ollama/context-window.js';
import { CHAT_HINTS, SERVER_HINTS } from '../../src/ollama/fix-hints.js';

describe('resolveWindow', () => {
  it.each([
    [{ tokens: 8192, source: 'flag' as const }, 2048, { tokens: 8192, source: 'flag' }],
    [{ tokens: 16384, source: 'config' as const }, null, { tokens: 16384, source: 'config' }],
    [null, 2048, { tokens: 2048, source: 'model' }],
    [null, null, { tokens: OLLAMA_DEFAULT_NUM_CTX, source: 'default' }],
  ])('%j with the model at %s → %j', (requested, model, expected) => {
    expect(resolveWindow(requested, model)).toEqual(expected);
  });
  it('defaults to 4096 as Ollama does', () => expect(OLLAMA_DEFAULT_NUM_CTX).toBe(4096));
  it("takes the default it is given (the server's own)", () => expect(resolveWindow(null, null, 2048)).toEqual({ tokens: 2048, source: 'default' }));
});

describe("defaultWindowOf: Ollama's default window by release", () => {
  it.each<[Parameters<typeof defaultWindowOf>[0], number]>([
    [[0, 5, 7], 2048],
    [[0, 6, 6], 2048],
    [[0, 6, 7], 4096],
    [[0, 12, 0], 4096],
    // 0.15.5+ may pick more on a large GPU; 4096 is its least, and the prompt count tells the rest.
    [[0, 32, 15], 4096],
    [null, 4096],
  ])('%j → %i', (version, tokens) => {
    expect(defaultWindowOf(version)).toBe(tokens);
  });
});

describe('numCtxFromParameters', () => {
  it.each([
    ['num_ctx                        8192', 8192],
    ['stop                           "<|im_start|>"\nnum_ctx                        2048\ntemperature 0.7', 2048],
    ['temperature 0.7', null],
    ['', null],
    [undefined, null],
    ['num_ctx 0', null],
    ['num_ctx abc', null],
    ['num_ctx                        1.048576e+06', 1_048_576],
    ['num_ctx 2e+06', 2_000_000],
    ['num_ctx 1.5', null],
    ['num_ctx 1e-3', null],
  ])('%j → %s', (text, expected) => {
    expect(numCtxFromParameters(text)).toBe(expected);
  });
});

describe('estimateTextTokens', () => {
  it.each([
    ['', 0],
    ['abcd', 1],
    ['abcde', 2],
    ['why is the sky blue?', 5],
    ['日本語', 3],
    ['hi 日本', 3],
    ['🙂🙂', 2],
    ['x'.repeat(4000), 1000],
    // ASCII controls count as characters; a character past ASCII that is not dense counts as one.
    ['a\tb\n', 1],
    ['\u0000\u007f\u0000\u007f\u0000', 2],
    ['caf\u00e9', 1],
    ['caf\u00e9s', 2],
    ['\u00a9', 1],
    ['abcd\u00a9', 2],
    ['\u{1F600}abc', 2],
  ])('%#: %i tokens', (text, tokens) => {
    expect(estimateTextTokens(text)).toBe(tokens);
  });
});

describe('estimatePromptTokens', () => {
  it.each([
    [{ messages: [{ content: 'abcd' }] }, 5],
    [{ messages: [{ content: 'be brief' }, { content: 'abcd' }, { content: 'efgh' }] }, 16],
    [{ prompt: 'abcd' }, 5],
    [{ prompt: 'abcd', system: 'be brief' }, 11],
    [{ messages: [] }, 0],
    // The tools' JSON (69 characters) and a call sent back (56) count, as a template writes them.
    [{ messages: [{ content: 'abcd' }], tools: [{ type: 'function', function: { name: 'read_file', parameters: {} } }] }, 5 + 18],
    [{ messages: [{ content: 'abcd' }], tools: [] }, 5],
    [{ messages: [{ content: '', tool_calls: [{ function: { name: 'f', arguments: { path: 'a.txt' } } }] }] }, 4 + 14],
    [{ messages: [{ content: 'x', tool_calls: [] }] }, 5],
  ])('%j → %i', (body, tokens) => {
    expect(estimatePromptTokens(body)).toBe(tokens);
  });

  // An image counts as Ollama counts one when it drops older messages, whatever its size; audio goes in `images` too.
  const small = 'aGk=';
  const large = 'A'.repeat(4_000_000);
  it.each<[string, EstimableBody, number]>([
    ['one small image', { messages: [{ content: 'abcd', images: [small] }] }, 5 + 768],
    ['a small and a 3 MB image: the same each', { messages: [{ content: 'abcd', images: [small, large] }] }, 5 + 2 * 768],
    ['an image in each of two messages', { messages: [{ content: '', images: [small] }, { content: 'abcd', images: [small] }] }, 4 + 768 + 5 + 768],
    ['no images', { messages: [{ content: 'abcd', images: [] }] }, 5],
    ['an image and tools', { messages: [{ content: 'abcd', images: [small] }], tools: [{ type: 'function', function: { name: 'read_file', parameters: {} } }] }, 5 + 768 + 18],
  ])('%s → %i', (_case, body, tokens) => {
    expect(estimatePromptTokens(body)).toBe(tokens);
  });
});

describe('estimateAnswerTokens: an answer Ollama gave no count of', () => {
  it.each<[string, Parameters<typeof estimateAnswerTokens>[0], number]>([
    ['nothing yet', { content: '' }, 0],
    ['text', { content: 'first second' }, 3],
    ['reasoning and text', { content: 'It is 4.', thinking: 'add them' }, 2 + 2],
    // A call's JSON (56 characters), as a call sent back counts in a prompt.
    ['a call only', { content: '', tool_calls: [{ function: { name: 'f', arguments: { path: 'a.txt' } } }] }, 14],
    ['text, reasoning and a call', { content: 'abcd', thinking: 'abcd', tool_calls: [{ function: { name: 'f', arguments: { path: 'a.txt' } } }] }, 1 + 1 + 14],
    ['no calls', { content: 'abcd', tool_calls: [] }, 1],
  ])('%s → %i', (_case, answer, tokens) => {
    expect(estimateAnswerTokens(answer)).toBe(tokens);
  });
});

const check = (estimate: number, tokens = 4096, source: 'flag' | 'config' | 'model' | 'default' = 'default'): TruncationCheck => ({ estimate, window: { tokens, source } });

describe('countMayBeWindow', () => {
  it.each([
    // prompt_eval_count after a small prompt → worth asking the model's window
    [256, true],
    [512, true],
    [4096, true],
    [300, true],
    [2000, true],
    [192, true],
    [250, false],
    [257, false],
    [31, false],
    [0, false],
    [null, false],
  ])('%s → %s', (count, ask) => {
    expect(countMayBeWindow(count)).toBe(ask);
  });
});

describe('truncation checks', () => {
  it.each([
    // estimate, window, prompt_eval_count, over before sending, suspected after
    [1000, 4096, 1000, false, false],
    [1000, 4096, 300, false, false], // a cached prefix lowers the count: not a cut
    [4096, 4096, 4000, false, false],
    [4097, 4096, null, true, true],
    [7268, 4096, 4096, true, true],
    [3900, 4096, 4096, false, true], // the estimate was low, the count says the window was full
    [100, 4096, null, false, false],
  ])('estimate %i, window %i, count %s → before %s, after %s', (estimate, tokens, count, before, after) => {
    expect(overWindow(check(estimate, tokens))).toBe(before);
    expect(truncationSuspected(check(estimate, tokens), count)).toBe(after);
  });

  // Only Ollama's default is a guess: a count past it shows the server's window is larger.
  it.each([
    ['default', 7268, 7300, false],
    ['default', 3900, 5000, false],
    ['default', 7268, 4096, true],
    ['model', 3900, 5000, true],
    ['flag', 7268, 7300, true],
  ] as const)('window from %s, estimate %i, count %i → suspected %s', (source, estimate, count, suspected) => {
    expect(truncationSuspected(check(estimate, 4096, source), count)).toBe(suspected);
  });

  it.each([
    [7268, 4096, 16384],
    [5000, 4096, 8192],
    [100, 512, 2048],
    [40000, 8192, 65536],
  ])('suggests a window for %i tokens over %i: %i', (estimate, window, size) => {
    expect(suggestedNumCtx(estimate, window)).toBe(size);
  });

  it.each([
    [check(7268), null, "argo: the prompt (about 7268 tokens) is longer than the context window (4096 tokens, Ollama's default); Ollama cuts such prompts silently — raise --num-ctx (e.g. --num-ctx 16384) or lower --budget"],
    [check(7268, 4096, 'model'), 4096, "argo: the prompt (about 7268 tokens) is longer than the context window (4096 tokens, the model's num_ctx); Ollama read 4096; Ollama cuts such prompts silently — raise --num-ctx (e.g. --num-ctx 16384) or lower --budget"],
    [check(3900, 4096, 'flag'), 4096, 'argo: Ollama read 4096 prompt tokens, all of the context window (4096 tokens, from --num-ctx); the prompt was probably cut — raise --num-ctx (e.g. --num-ctx 8192) or lower --budget'],
  ])('phrases %j / %s', (value, count, line) => {
    expect(truncationLine(value, count)).toBe(line);
  });

  it.each([
    // an agent run's request grown by tool results: named so, and the tools' budgets to lower, not the replay's
    [check(1300, 1000, 'flag'), null, "argo: the prompt with the tool results so far (about 1300 tokens) is longer than the context window (1000 tokens, from --num-ctx); Ollama cuts such prompts silently — raise --num-ctx (e.g. --num-ctx 2048) or lower the tools' result budgets (toolBudgets in config.json)"],
    [check(3900, 4096, 'model'), 4096, "argo: Ollama read 4096 prompt tokens, all of the context window (4096 tokens, the model's num_ctx); the prompt was probably cut — raise --num-ctx (e.g. --num-ctx 8192) or lower the tools' result budgets (toolBudgets in config.json)"],
  ])('phrases a request grown by tool results %j / %s', (value, count, line) => {
    expect(truncationLine(value, count, 'tool-results')).toBe(line);
  });

  // The fixes named are those the user can change where the turn was asked, and replaying less only
  // when something was replayed.
  const OVER = "argo: the prompt (about 7268 tokens) is longer than the context window (4096 tokens, the model's num_ctx); Ollama cuts such prompts silently — ";
  it.each<[string, PromptGrowth, WindowFixes, string]>([
    ['a question, turns replayed', 'planned', { replayed: true }, `${OVER}raise --num-ctx (e.g. --num-ctx 16384) or lower --budget`],
    ['a question, nothing replayed', 'planned', { replayed: false }, `${OVER}raise --num-ctx (e.g. --num-ctx 16384) or shorten the prompt`],
    ['a chat, turns replayed', 'planned', { hints: CHAT_HINTS, replayed: true }, `${OVER}start argo chat again with --num-ctx 16384 or replay less (/replay last:1 or /replay none)`],
    ['a chat, nothing replayed', 'planned', { hints: CHAT_HINTS, replayed: false }, `${OVER}start argo chat again with --num-ctx 16384 or shorten the prompt`],
    [
      'a chat, the tool definitions',
      'tool-definitions',
      { hints: CHAT_HINTS, replayed: false },
      "argo: the prompt with the tool definitions (about 7268 tokens) is longer than the context window (4096 tokens, the model's num_ctx); Ollama cuts such prompts silently — start argo chat again with --num-ctx 16384 or fewer tools in --tools",
    ],
    [
      'argo serve, the tool results',
      'tool-results',
      { hints: SERVER_HINTS, replayed: false },
      "argo: the prompt with the tool results so far (about 7268 tokens) is longer than the context window (4096 tokens, the model's num_ctx); Ollama cuts such prompts silently — raise \"options\": {\"num_ctx\": …} in argo serve's config.json (e.g. to 16384) or lower the tools' result budgets (toolBudgets in argo serve's config.json)",
    ],
  ])('%s', (_case, growth, fixes, line) => {
    expect(truncationLine(check(7268, 4096, 'model'), null, growth, fixes)).toBe(line);
  });
});
