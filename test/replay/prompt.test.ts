import { describe, expect, it } from 'vitest';
import { buildRequest } from '../../src/replay/prompt.js';
import type { ModelOptions, PromptParts, RequestSettings } from '../../src/replay/prompt.js';

const parts: PromptParts = {
  instructions: ['MODE', 'PERSONA', 'VERBOSITY', 'CONFIDENCE'],
  replay: [
    { prompt: 'first question', response: 'first answer' },
    { prompt: 'second question', response: 'second answer' },
  ],
  input: 'new input',
};

function settings(overrides: Partial<RequestSettings> = {}): RequestSettings {
  return { endpoint: 'chat', model: 'argo', stream: true, options: {}, ...overrides };
}

describe('buildRequest for /api/chat', () => {
  it('sends the instructions as one system message, the replay as alternating turns, then the new input', () => {
    expect(buildRequest(parts, settings())).toEqual({
      endpoint: '/api/chat',
      body: {
        model: 'argo',
        messages: [
          { role: 'system', content: 'MODE\nPERSONA\nVERBOSITY\nCONFIDENCE' },
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: 'second question' },
          { role: 'assistant', content: 'second answer' },
          { role: 'user', content: 'new input' },
        ],
        stream: true,
      },
    });
  });

  it.each<[string, PromptParts, [string, string][]]>([
    ['no instructions: no system message', { instructions: [], replay: [], input: 'hi' }, [['user', 'hi']]],
    ['no replay', { instructions: ['A'], replay: [], input: 'hi' }, [['system', 'A'], ['user', 'hi']]],
    ['empty input is still sent', { instructions: ['A'], replay: [], input: '' }, [['system', 'A'], ['user', '']]],
  ])('%s', (_name, p, expected) => {
    const request = buildRequest(p, settings());
    expect(request.endpoint).toBe('/api/chat');
    if (request.endpoint !== '/api/chat') return;
    expect(request.body.messages.map((m) => [m.role, m.content])).toEqual(expected);
  });
});

describe('buildRequest for /api/generate', () => {
  it('renders the replay like the budget counts it, then the new input, with the instructions as system', () => {
    expect(buildRequest(parts, settings({ endpoint: 'generate' }))).toEqual({
      endpoint: '/api/generate',
      body: {
        model: 'argo',
        prompt: 'User: first question\nAssistant: first answer\nUser: second question\nAssistant: second answer\nUser: new input\nAssistant:',
        system: 'MODE\nPERSONA\nVERBOSITY\nCONFIDENCE',
        stream: true,
      },
    });
  });

  it.each<[string, PromptParts, string, string | undefined]>([
    ['no replay: the prompt is the bare input', { instructions: ['A'], replay: [], input: 'hi' }, 'hi', 'A'],
    ['no instructions: no system key', { instructions: [], replay: [], input: 'hi' }, 'hi', undefined],
    ['one replayed turn', { instructions: ['A', 'B'], replay: [{ prompt: 'p', response: 'r' }], input: 'hi' }, 'User: p\nAssistant: r\nUser: hi\nAssistant:', 'A\nB'],
  ])('%s', (_name, p, prompt, system) => {
    const request = buildRequest(p, settings({ endpoint: 'generate' }));
    expect(request.endpoint).toBe('/api/generate');
    if (request.endpoint !== '/api/generate') return;
    expect(request.body.prompt).toBe(prompt);
    expect(request.body.system).toBe(system);
    expect('system' in request.body).toBe(system !== undefined);
  });
});

describe('request body key order is fixed', () => {
  it.each<[string, RequestSettings, string[], string]>([
    ['chat, bare', settings(), ['model', 'messages', 'stream'], ''],
    ['generate, bare', settings({ endpoint: 'generate' }), ['model', 'prompt', 'system', 'stream'], ''],
    [
      'chat, options given out of order',
      settings({ options: { num_ctx: 4096, seed: 7, temperature: 0 }, keepAlive: '5m', stream: false }),
      ['model', 'messages', 'stream', 'options', 'keep_alive'],
      '"stream":false,"options":{"temperature":0,"seed":7,"num_ctx":4096},"keep_alive":"5m"}',
    ],
    [
      'generate, one option and keep_alive 0',
      settings({ endpoint: 'generate', options: { seed: 42 }, keepAlive: 0 }),
      ['model', 'prompt', 'system', 'stream', 'options', 'keep_alive'],
      '"stream":true,"options":{"seed":42},"keep_alive":0}',
    ],
  ])('%s', (_name, s, keys, tail) => {
    const body = buildRequest(parts, s).body;
    expect(Object.keys(body)).toEqual(keys);
    expect(JSON.stringify(body).endsWith(tail)).toBe(true);
  });

  it('omits options when none is set', () => {
    const options: ModelOptions = {};
    expect('options' in buildRequest(parts, settings({ options })).body).toBe(false);
  });

  it('does not mutate its inputs', () => {
    const p = structuredClone(parts);
    const s = settings({ options: { seed: 1, temperature: 0.2 } });
    const copy = structuredClone(s);
    buildRequest(p, s);
    buildRequest(p, { ...s, endpoint: 'generate' });
    expect(p).toEqual(parts);
    expect(s).toEqual(copy);
  });
});
