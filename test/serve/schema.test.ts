import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/serve/errors.js';
import { imagesOf, parseChatRequest, parseSessionPatch, textOf } from '../../src/serve/schema.js';

const base = { model: 'argo', messages: [{ role: 'user', content: 'hi' }] };

function refusal(json: unknown, headers: Record<string, string> = {}): { param: string | null; message: string } {
  try {
    parseChatRequest(json, new Headers(headers));
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    expect(error.status).toBe(400);
    return { param: error.param, message: error.message };
  }
  throw new Error('accepted');
}

describe('chat request: wrong types are 400 naming the field', () => {
  it.each([
    [{ ...base, model: 3 }, 'model'],
    [{ ...base, model: '' }, 'model'],
    [{ model: 'argo' }, 'messages'],
    [{ ...base, messages: [] }, 'messages'],
    [{ ...base, messages: [{ role: 'user' }, { role: 'robot', content: 'x' }] }, 'messages[1].role'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, 'messages[0].content[0].text'],
    [{ ...base, messages: [{ role: 'user', content: 5 }] }, 'messages[0].content'],
    [{ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url' }] }] }, 'messages[0].content[1].image_url'],
    [{ ...base, messages: [{ role: 'assistant', content: null, tool_calls: [{ function: { name: 'f', arguments: {} } }] }] }, 'messages[0].tool_calls[0].function.arguments'],
    [{ ...base, stream: 'yes' }, 'stream'],
    [{ ...base, stream_options: { include_usage: 1 } }, 'stream_options.include_usage'],
    [{ ...base, temperature: '0.5' }, 'temperature'],
    [{ ...base, top_p: [] }, 'top_p'],
    [{ ...base, max_tokens: 1.5 }, 'max_tokens'],
    [{ ...base, max_completion_tokens: 'x' }, 'max_completion_tokens'],
    [{ ...base, stop: 5 }, 'stop'],
    [{ ...base, seed: 0.1 }, 'seed'],
    [{ ...base, n: 2 }, 'n'],
    [{ ...base, n: 0 }, 'n'],
    [{ ...base, n: 1.5 }, 'n'],
    [{ ...base, logprobs: true }, 'logprobs'],
    [{ ...base, logprobs: 'yes' }, 'logprobs'],
    [{ ...base, top_logprobs: 2 }, 'top_logprobs'],
    [{ ...base, logprobs: false, top_logprobs: 5 }, 'top_logprobs'],
    [{ ...base, tools: [{ type: 'function' }] }, 'tools[0].function'],
    [{ ...base, tool_choice: 'sometimes' }, 'tool_choice'],
    [{ ...base, response_format: { type: 'xml' } }, 'response_format.type'],
    [{ ...base, user: 7 }, 'user'],
    [{ ...base, argo: 'work' }, 'argo'],
    [{ ...base, argo: { session: '' } }, 'argo.session'],
    [{ ...base, argo: { replay: 'last:0' } }, 'argo.replay'],
    [{ ...base, argo: { reason: 'why' } }, 'argo.reason'],
    [{ ...base, argo: { budget: 10 } }, 'argo.budget'],
    [{ ...base, argo: { verbosity: 'loud' } }, 'argo.verbosity'],
    [{ ...base, argo: { tools: 5 } }, 'argo.tools'],
  ])('%j → %s', (json, param) => {
    expect(refusal(json).param).toBe(param);
  });

  it('an image part without image_url says what it needs', () => {
    expect(refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url' }] }] })).toEqual({
      param: 'messages[0].content[0].image_url',
      message: 'invalid "messages[0].content[0].image_url": an image part needs "image_url"',
    });
  });

  it('n other than 1 says the server answers with one choice', () => {
    expect(refusal({ ...base, n: 3 })).toEqual({
      param: 'n',
      message: 'invalid "n": this server answers with one choice; send 1 or leave "n" out, and send the request again for another answer',
    });
  });

  it('logprobs says it is not supported', () => {
    expect(refusal({ ...base, logprobs: true, top_logprobs: 3 })).toEqual({
      param: 'logprobs',
      message: 'invalid "logprobs": log probabilities are not supported by this server; leave "logprobs" out or send false',
    });
  });

  it('refuses a body that is not an object', () => {
    expect(refusal([base]).param).toBeNull();
    expect(refusal('text').param).toBeNull();
  });

  it.each([
    [{ 'x-argo-replay': 'always' }, 'X-Argo-Replay'],
    [{ 'x-argo-budget': 'lots' }, 'X-Argo-Budget'],
    [{ 'X-ARGO-SESSION': 'a/b' }, 'X-Argo-Session'],
  ])('header %j → %s, named so in the message too', (headers, param) => {
    const refused = refusal(base, headers);
    expect(refused.param).toBe(param);
    expect(refused.message).toMatch(new RegExp(`^invalid header "${param}": `));
  });
});

describe('chat request: what is accepted', () => {
  it('ignores unknown fields and is plain mode without Argo fields', () => {
    const request = parseChatRequest({ ...base, logit_bias: {}, n: 1 }, new Headers());
    expect(request.argo).toBeNull();
    expect(request.body).not.toHaveProperty('logit_bias');
  });

  it('accepts nulls where clients send them', () => {
    const request = parseChatRequest({ ...base, stream: null, temperature: null, stop: null, tools: null, response_format: null, stream_options: null, n: null, logprobs: false, top_logprobs: null }, new Headers());
    expect(request.body.messages).toHaveLength(1);
  });

  it.each([
    [{}, { 'x-argo-session': 'work', 'x-argo-replay': 'last:2', 'x-argo-budget': '8000' }, { session: 'work', replay: { kind: 'last', count: 2 }, budget: 8000 }],
    [{ session: 'body', replay: 'none' }, { 'x-argo-session': 'header', 'x-argo-persona': 'pirate' }, { session: 'body', replay: { kind: 'none' }, persona: 'pirate' }],
    [{ tools: 'fs, edit,' }, {}, { tools: ['fs', 'edit'] }],
    [{ tools: ['fs'] }, {}, { tools: ['fs'] }],
    [{ replay: 'session', reason: 'session', verbosity: 'short', mode: 'code' }, {}, { replay: { kind: 'session' }, reason: 'session', verbosity: 'short', mode: 'code' }],
    [{}, {}, null],
    [null, {}, null],
    [null, { 'x-argo-session': 'work' }, { session: 'work' }],
  ])('argo %j with headers %j → %j', (argo, headers, expected) => {
    expect(parseChatRequest({ ...base, argo }, new Headers(headers)).argo).toEqual(expected);
  });
});

describe('content', () => {
  it.each([
    [null, ''],
    ['plain', 'plain'],
    [[{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }, { type: 'text', text: 'b' }], 'a\nb'],
    [[{ type: 'input_audio' }], ''],
  ])('text of %j is %j', (content, text) => {
    expect(textOf(content as never)).toBe(text);
  });

  it('takes base64 images from data URLs only', () => {
    expect(imagesOf([{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'image_url', image_url: { url: 'https://x' } }])).toEqual(['AAAA']);
  });
});

describe('session patch', () => {
  it('takes a string title and names the field otherwise', () => {
    expect(parseSessionPatch({ title: 'New', other: 1 })).toEqual({ title: 'New' });
    expect(() => parseSessionPatch({ title: 5 })).toThrow(expect.objectContaining({ param: 'title', status: 400 }) as Error);
    expect(() => parseSessionPatch(null)).toThrow(ApiError);
  });
});
