import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/serve/errors.js';
import { MODEL_NAME_RULE } from '../../src/ollama/model-name.js';
import { argoFieldNamed, argoParam, imagesOf, parseChatRequest, parseSessionPatch, textOf } from '../../src/serve/schema.js';
import type { ChatBody } from '../../src/serve/schema.js';

const base = { model: 'argo', messages: [{ role: 'user', content: 'hi' }] };

/** A body's fields as parsed: null is absent. */
function withoutNulls(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
}

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
    [{ ...base, messages: [{ role: 'user', content: 'x' }, { role: 'robot', content: 'x' }] }, 'messages[1].role'],
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
    [{ ...base, logprobs: 'yes' }, 'logprobs'],
    [{ ...base, logprobs: 1 }, 'logprobs'],
    [{ ...base, logprobs: true, top_logprobs: '2' }, 'top_logprobs'],
    [{ ...base, tools: [{ type: 'function' }] }, 'tools[0].function'],
    [{ ...base, tool_choice: 'sometimes' }, 'tool_choice'],
    [{ ...base, parallel_tool_calls: 'no' }, 'parallel_tool_calls'],
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

  it.each([
    ['m'.repeat(1000), `invalid "model": ${MODEL_NAME_RULE}`],
    ['m'.repeat(1001), 'invalid "model": use at most 1000 characters (no model name Ollama takes is longer)'],
    [`registry.example.com:5000/team/${'m'.repeat(80)}:${'t'.repeat(80)}`, null],
    ['argo ', `invalid "model": ${MODEL_NAME_RULE}`],
    ['argo/', `invalid "model": ${MODEL_NAME_RULE}`],
    ['gpt-oss:120b-cloud', null],
  ])('a model name of %#: taken, or a 400 naming "model" and what is wrong', (model, refused) => {
    if (refused === null) {
      expect(parseChatRequest({ ...base, model }, new Headers()).body.model).toBe(model);
      return;
    }
    expect(refusal({ ...base, model })).toEqual({ param: 'model', message: refused });
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

  // OpenAI's rules for top_logprobs: a whole number 0–20, and above 0 only with "logprobs": true (0, which asks for none, also without).
  it.each([
    [{ logprobs: true, top_logprobs: 21 }, 'must be a whole number between 0 and 20'],
    [{ logprobs: true, top_logprobs: -1 }, 'must be a whole number between 0 and 20'],
    [{ logprobs: true, top_logprobs: 2.5 }, 'must be a whole number between 0 and 20'],
    [{ top_logprobs: 2 }, 'needs "logprobs": true; send it too, or leave "top_logprobs" out'],
    [{ logprobs: false, top_logprobs: 5 }, 'needs "logprobs": true; send it too, or leave "top_logprobs" out'],
    [{ logprobs: null, top_logprobs: 1 }, 'needs "logprobs": true; send it too, or leave "top_logprobs" out'],
  ])('top_logprobs in %j is refused: 400 naming it', (extra, message) => {
    expect(refusal({ ...base, ...extra })).toEqual({ param: 'top_logprobs', message: `invalid "top_logprobs": ${message}` });
  });

  it.each([
    [{ logprobs: true }],
    [{ logprobs: true, top_logprobs: 0 }],
    [{ logprobs: true, top_logprobs: 20 }],
    [{ logprobs: true, top_logprobs: null }],
    [{ logprobs: false }],
    [{ logprobs: null, top_logprobs: null }],
    [{ top_logprobs: 0 }],
    [{ logprobs: false, top_logprobs: 0 }],
  ])('log probabilities %j are accepted', (extra) => {
    expect(parseChatRequest({ ...base, ...extra }, new Headers()).body).toEqual({ ...base, ...withoutNulls(extra) });
  });

  const user = (...parts: unknown[]) => ({ ...base, messages: [{ role: 'user', content: 'earlier' }, { role: 'user', content: [{ type: 'text', text: 'see' }, ...parts] }] });
  it.each([
    ['an http image URL', user({ type: 'image_url', image_url: { url: 'http://x/y.png' } }), 'image URLs are not supported (Ollama takes images inline); send the image inline as a base64 data URL'],
    ['an https image URL', user({ type: 'image_url', image_url: { url: 'HTTPS://x/y.png' } }), 'image URLs are not supported'],
    ['a data URL that is not an image', user({ type: 'image_url', image_url: { url: 'data:application/pdf;base64,QUJD' } }), 'not an image Ollama takes; send the image inline as a base64 data URL of a JPEG, PNG or WebP image'],
    ['a GIF', user({ type: 'image_url', image_url: { url: 'data:image/gif;base64,QUJD' } }), 'not an image Ollama takes'],
    ['a data URL without base64', user({ type: 'image_url', image_url: { url: 'data:image/png,raw' } }), 'not an image Ollama takes'],
    ['broken base64', user({ type: 'image_url', image_url: { url: 'data:image/png;base64,QUJ' } }), 'the image data is not valid base64'],
    ['audio with broken base64', user({ type: 'input_audio', input_audio: { data: 'not base64!', format: 'wav' } }), 'the audio data is not valid base64'],
    ['a file part', user({ type: 'file', file: { file_id: 'f' } }), 'content parts of type "file" are not supported; send "text", "image_url" (a base64 data URL) or "input_audio" parts'],
    ['a refusal part', user({ type: 'refusal', refusal: 'no' }), 'content parts of type "refusal" are not supported'],
  ])('%s is refused naming the part', (_what, json, message) => {
    const refused = refusal(json);
    expect(refused.param).toBe('messages[1].content[1]');
    expect(refused.message).toContain(`invalid "messages[1].content[1]": ${message}`);
  });

  // Ollama's own OpenAI layer takes "image_url" as {url} or as the URL itself (older clients send that).
  it.each([
    ['an https image URL', 'https://x/y.png', 'image URLs are not supported (Ollama takes images inline); send the image inline as a base64 data URL'],
    ['a GIF', 'data:image/gif;base64,QUJD', 'not an image Ollama takes; send the image inline as a base64 data URL of a JPEG, PNG or WebP image'],
    ['broken base64', 'data:image/png;base64,QUJ', 'the image data is not valid base64'],
    ['no URL at all', '', 'not an image Ollama takes'],
  ])('an image_url given as a string is checked as {url} is: %s is refused the same', (_what, url, message) => {
    const bare = refusal(user({ type: 'image_url', image_url: url }));
    expect(bare).toEqual(refusal(user({ type: 'image_url', image_url: { url } })));
    expect(bare.param).toBe('messages[1].content[1]');
    expect(bare.message).toContain(`invalid "messages[1].content[1]": ${message}`);
  });

  // GNU base64 wraps at 76 characters; Go's decoder (Ollama's) skips the line breaks.
  it.each([
    ['LF', 'QUJD\nREVG'],
    ['CRLF', 'QUJD\r\nREVG\r\n'],
  ])('base64 wrapped with %s line breaks is taken, and sent on without them, image and audio alike', (_breaks, data) => {
    const parsed = parseChatRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } }, { type: 'input_audio', input_audio: { data, format: 'wav' } }] }] }, new Headers());
    expect(imagesOf(parsed.body.messages[0]?.content)).toEqual(['QUJDREVG', 'QUJDREVG']);
  });

  it.each([
    ['a break that leaves a wrong length', 'QUJ\nDR'],
    ['a break with other blanks', 'QUJD \nREVG'],
  ])('base64 with %s is still refused', (_what, data) => {
    expect(refusal(user({ type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } })).message).toContain('the image data is not valid base64');
  });

  it.each([
    [{ ...base, stop: 5 }, 'stop', 'invalid "stop": expected a string or an array of strings (the sequences that end the answer)'],
    [{ ...base, stop: ['a', null] }, 'stop', 'invalid "stop": expected a string or an array of strings (the sequences that end the answer)'],
    [{ ...base, tool_choice: 'any' }, 'tool_choice', 'invalid "tool_choice": use "none", "auto", "required" or {"type": "function", "function": {"name": "…"}}'],
    [{ messages: base.messages }, 'model', 'invalid "model": missing; send the name of a model Ollama has (GET /v1/models lists them)'],
    [{ ...base, model: 7 }, 'model', 'invalid "model": expected a string: the name of a model Ollama has (GET /v1/models lists them)'],
    [{ ...base, model: '' }, 'model', 'invalid "model": empty; send the name of a model Ollama has (GET /v1/models lists them)'],
    [{ model: base.model }, 'messages', 'invalid "messages": missing; send the conversation as an array of messages'],
    [{ ...base, messages: 'hi' }, 'messages', 'invalid "messages": expected an array of messages ({"role": "user", "content": "…"})'],
    [{ ...base, messages: [] }, 'messages', 'invalid "messages": send at least one message'],
  ])('%j is refused saying what is accepted', (json, param, message) => {
    expect(refusal(json)).toEqual({ param, message });
  });

  it('an audio part without input_audio says what it needs', () => {
    expect(refusal(user({ type: 'input_audio' }))).toEqual({
      param: 'messages[1].content[1].input_audio',
      message: 'invalid "messages[1].content[1].input_audio": an audio part needs "input_audio": {"data": "<base64>", "format": "wav"}',
    });
  });

  it.each([
    [{ type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } }, 'invalid "tool_choice": tool_choice "allowed_tools" is not supported: send only the allowed tools in "tools" (with "tool_choice": "auto")'],
    [{ type: 'custom', custom: { name: 'x' } }, 'invalid "tool_choice": tool_choice of type "custom" is not supported; use "none", "auto", "required" or {"type": "function", "function": {"name": "…"}}'],
    [{ type: 'function' }, 'invalid "tool_choice": a function choice needs "function": {"name": "…"}'],
  ])('tool_choice %j says what to send', (choice, message) => {
    expect(refusal({ ...base, tool_choice: choice })).toEqual({ param: 'tool_choice', message });
  });

  it.each([
    [{ temperature: -0.1 }, 'temperature', 'must be between 0 and 2'],
    [{ temperature: 2.01 }, 'temperature', 'must be between 0 and 2'],
    [{ top_p: 1.5 }, 'top_p', 'must be between 0 and 1'],
    [{ top_p: -1 }, 'top_p', 'must be between 0 and 1'],
    [{ frequency_penalty: -2.5 }, 'frequency_penalty', 'must be between -2 and 2'],
    [{ presence_penalty: 3 }, 'presence_penalty', 'must be between -2 and 2'],
    [{ max_tokens: 0 }, 'max_tokens', 'must be a whole number of 1 or more'],
    [{ max_completion_tokens: -5 }, 'max_completion_tokens', 'must be a whole number of 1 or more'],
    [{ stream_options: { include_usage: true } }, 'stream_options', 'only allowed with "stream": true; leave it out or stream the answer'],
    [{ stream: false, stream_options: { include_usage: true } }, 'stream_options', 'only allowed with "stream": true; leave it out or stream the answer'],
  ])('%j is out of range or out of place: 400 naming it', (extra, param, message) => {
    expect(refusal({ ...base, ...extra })).toEqual({ param, message: `invalid "${param}": ${message}` });
  });

  it.each([
    [{ temperature: 0, top_p: 0, frequency_penalty: -2, presence_penalty: 2, max_tokens: 1, max_completion_tokens: 1 }],
    [{ temperature: 2, top_p: 1, frequency_penalty: 2, presence_penalty: -2 }],
    [{ stream: true, stream_options: { include_usage: true } }],
    [{ stream: false, stream_options: null }],
  ])('accepts the edges %j', (extra) => {
    expect(parseChatRequest({ ...base, ...extra }, new Headers()).body).toEqual({ ...base, ...withoutNulls(extra) });
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

  it.each([
    [{ 'x-argo-sesion': 'work' }, 'X-Argo-Sesion', 'invalid header "X-Argo-Sesion": unknown Argo header (did you mean "X-Argo-Session"?); the Argo headers are X-Argo-Session, X-Argo-Replay, X-Argo-Reason, X-Argo-Budget, X-Argo-Persona, X-Argo-Verbosity, X-Argo-Mode, X-Argo-Tools'],
    [{ 'X-Argo-Colour': 'red' }, 'X-Argo-Colour', 'invalid header "X-Argo-Colour": unknown Argo header; the Argo headers are X-Argo-Session, X-Argo-Replay, X-Argo-Reason, X-Argo-Budget, X-Argo-Persona, X-Argo-Verbosity, X-Argo-Mode, X-Argo-Tools'],
  ])('an unknown X-Argo-* header %j is refused, as an unknown argo field is', (headers, param, message) => {
    expect(refusal(base, headers)).toMatchObject({ param, message });
  });

  it("an unknown X-Argo-* header with no value is no header, as a blank known one is; the server's own answer headers sent back set nothing", () => {
    expect(parseChatRequest(base, new Headers({ 'x-argo-sesion': ' ' })).argo).toBeNull();
    expect(parseChatRequest(base, new Headers({ 'x-argo-turn-id': 'abc', 'x-argo-log': 'written' })).argo).toBeNull();
  });

  it.each([
    [{ 'x-argo-budget': '10' }, {}, 'invalid header "X-Argo-Budget": use a whole number of characters, at least 200'],
    [{}, { budget: 10 }, 'invalid "argo.budget": use a whole number of characters, at least 200'],
    [{}, { budget: 300.5 }, 'invalid "argo.budget": use a whole number of characters, at least 200'],
  ])('a budget under the floor is said as the CLI says it: %j %j', (headers, argo, message) => {
    expect(refusal({ ...base, argo }, headers).message).toBe(message);
  });
});

// As OpenAI and Ollama's own OpenAI layer have it: a message without content is refused (it would be an
// empty turn), but for an assistant's tool calls, which stand alone.
describe('chat request: a message needs content, but for an assistant with tool_calls', () => {
  const CALL = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } };
  it.each([
    [{ role: 'user' }, 'a user message needs "content": send its text (a string) or an array of content parts'],
    [{ role: 'user', content: null }, 'a user message needs "content": send its text (a string) or an array of content parts'],
    [{ role: 'user', tool_calls: [CALL] }, 'a user message needs "content": send its text (a string) or an array of content parts'],
    [{ role: 'system' }, 'a system message needs "content": send its text (a string or an array of text parts)'],
    [{ role: 'developer', content: null }, 'a developer message needs "content": send its text (a string or an array of text parts)'],
    [{ role: 'assistant' }, 'an assistant message needs "content" unless it has "tool_calls": send its text, or the calls it made'],
    [{ role: 'assistant', content: null, tool_calls: null }, 'an assistant message needs "content" unless it has "tool_calls": send its text, or the calls it made'],
    [{ role: 'assistant', reasoning: 'hmm' }, 'an assistant message needs "content" unless it has "tool_calls": send its text, or the calls it made'],
    [{ role: 'tool', tool_call_id: 'c1' }, 'a tool message needs "content": send the tool\'s result as text'],
    [{ role: 'tool', tool_call_id: 'c1', content: null }, 'a tool message needs "content": send the tool\'s result as text'],
  ])('%j → 400 on its content, saying what to send', (sent, message) => {
    expect(refusal({ ...base, messages: [{ role: 'user', content: 'real question' }, sent] })).toEqual({ param: 'messages[1].content', message: `invalid "messages[1].content": ${message}` });
  });

  it.each([
    [{ role: 'assistant', content: null, tool_calls: [CALL] }],
    [{ role: 'assistant', tool_calls: [CALL] }],
    // Ollama's own OpenAI layer takes an empty list as calls too.
    [{ role: 'assistant', content: null, tool_calls: [] }],
    [{ role: 'user', content: '' }],
    [{ role: 'assistant', content: '' }],
    [{ role: 'tool', tool_call_id: 'c1', content: '' }],
  ])('%j is taken', (sent) => {
    expect(parseChatRequest({ ...base, messages: [sent, { role: 'user', content: 'q' }] }, new Headers()).body.messages).toHaveLength(2);
  });
});

describe('chat request: Argo names are capped at 200 characters, argo.tools at 100 names', () => {
  const rule = 'use at most 200 characters (the length of a name in config.json)';
  const toolsRule = 'use names of at most 200 characters each (the length of a name in config.json)';
  const countRule = 'use at most 100 names (a toolset in config.json can group more)';
  const names = (count: number): string[] => Array.from({ length: count }, (_, at) => `t${at}`);
  it.each([
    [{}, { persona: 'p'.repeat(200) }, null],
    [{}, { persona: 'p'.repeat(201) }, ['argo.persona', `invalid "argo.persona": ${rule}`]],
    // Characters, not UTF-16 units: an emoji is one.
    [{}, { persona: '😀'.repeat(200) }, null],
    [{}, { persona: '😀'.repeat(201) }, ['argo.persona', `invalid "argo.persona": ${rule}`]],
    [{}, { mode: 'm'.repeat(200) }, null],
    [{}, { mode: 'm'.repeat(5_000_000) }, ['argo.mode', `invalid "argo.mode": ${rule}`]],
    [{ 'x-argo-mode': 'm'.repeat(201) }, {}, ['X-Argo-Mode', `invalid header "X-Argo-Mode": ${rule}`]],
    [{ 'x-argo-persona': 'p'.repeat(201) }, {}, ['X-Argo-Persona', `invalid header "X-Argo-Persona": ${rule}`]],
    [{}, { tools: ['fs', 't'.repeat(200)] }, null],
    [{}, { tools: ['fs', 't'.repeat(201)] }, ['argo.tools', `invalid "argo.tools": ${toolsRule}`]],
    [{}, { tools: `fs,${'t'.repeat(201)}` }, ['argo.tools', `invalid "argo.tools": ${toolsRule}`]],
    // Spaces around a name are not part of it.
    [{}, { tools: ` ${'t'.repeat(200)} ,fs` }, null],
    [{ 'x-argo-tools': `fs,${'t'.repeat(201)}` }, {}, ['X-Argo-Tools', `invalid header "X-Argo-Tools": ${toolsRule}`]],
    // As many names as a request may name, however sent.
    [{}, { tools: names(100) }, null],
    [{}, { tools: `${names(100).join(',')} ` }, null],
    // An empty name is refused, as --tools refuses it: never a list read as fewer tools (or none).
    [{}, { tools: 'fs,,edit' }, ['argo.tools', 'invalid "argo.tools": empty name in "fs,,edit"; use a comma-separated list like fs,edit (or an array of names)']],
    [{}, { tools: '' }, ['argo.tools', 'invalid "argo.tools": empty name in ""; use a comma-separated list like fs,edit (or an array of names)']],
    [{}, { tools: ['fs', ' '] }, ['argo.tools', 'invalid "argo.tools": empty name in the array; use a comma-separated list like fs,edit (or an array of names)']],
    [{ 'x-argo-tools': 'fs,,edit' }, {}, ['X-Argo-Tools', 'invalid header "X-Argo-Tools": empty name in "fs,,edit"; use a comma-separated list like fs,edit (or an array of names)']],
    [{}, { tools: names(101) }, ['argo.tools', `invalid "argo.tools": ${countRule}`]],
    [{}, { tools: names(100_000).join(',') }, ['argo.tools', `invalid "argo.tools": ${countRule}`]],
    [{ 'x-argo-tools': names(101).join(',') }, {}, ['X-Argo-Tools', `invalid header "X-Argo-Tools": ${countRule}`]],
    // The session name has its own rule, 1-64 characters.
    [{}, { session: 's'.repeat(65) }, ['argo.session', 'invalid "argo.session": use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot']],
    // A replay spec is one of three shapes, whatever its length: nothing of it is quoted back.
    [{}, { replay: `last:${'9'.repeat(100_000)}` }, ['argo.replay', 'invalid "argo.replay": N is too large: use last:N with N of at most 9007199254740991']],
    [{}, { replay: `last:x${'9'.repeat(100_000)}` }, ['argo.replay', 'invalid "argo.replay": use none, session, or last:N with N a whole number of 1 or more']],
    // Read as the CLI reads --replay: blanks around it are no part of it.
    [{}, { replay: ' session ' }, null],
  ])('headers %# %j: taken, or a 400 naming the field and the limit', (headers, argo, refused) => {
    if (refused === null) {
      expect(parseChatRequest({ ...base, argo }, new Headers(headers)).argo).not.toBeNull();
      return;
    }
    expect(refusal({ ...base, argo }, headers)).toEqual({ param: refused[0], message: refused[1] });
  });
});

// Whatever was wrong with an Argo field, its 400 says what the field takes, as the CLI's flag does.
describe("chat request: a wrong Argo field is told the field's rule, not zod's words", () => {
  const SESSION = 'use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot';
  const REPLAY = 'use none, session, or last:N with N a whole number of 1 or more';
  const REASON = 'use continuation, clarification or session (the reason to replay earlier turns)';
  const BUDGET = 'use a whole number of characters, at least 200';
  const PERSONA = "use the name of one of the server's personas (a string; they are in its config.json)";
  const VERBOSITY = 'use auto, short or long';
  const MODE = "use the name of one of the server's modes (a string; they are in its config.json)";
  const TOOLS = 'use tool and toolset names, as a comma list ("fs,edit") or an array of strings';
  it.each([
    [{ session: 7 }, 'session', SESSION],
    [{ session: '' }, 'session', SESSION],
    [{ session: '..' }, 'session', SESSION],
    // A leading dot alone is enough: the rule says so, not "only dots".
    [{ session: '.notes' }, 'session', SESSION],
    [{ session: ['w'] }, 'session', SESSION],
    [{ replay: 3 }, 'replay', REPLAY],
    [{ replay: 'last:0' }, 'replay', REPLAY],
    [{ replay: 'last:9007199254740992' }, 'replay', 'N is too large: use last:N with N of at most 9007199254740991'],
    [{ replay: true }, 'replay', REPLAY],
    [{ reason: 5 }, 'reason', REASON],
    [{ reason: 'why' }, 'reason', REASON],
    [{ budget: '5000' }, 'budget', BUDGET],
    [{ budget: 10 }, 'budget', BUDGET],
    [{ budget: 500.5 }, 'budget', BUDGET],
    [{ persona: 5 }, 'persona', PERSONA],
    [{ persona: '' }, 'persona', PERSONA],
    [{ verbosity: 1 }, 'verbosity', VERBOSITY],
    [{ verbosity: 'loud' }, 'verbosity', VERBOSITY],
    [{ mode: {} }, 'mode', MODE],
    [{ mode: '' }, 'mode', MODE],
    [{ tools: 5 }, 'tools', TOOLS],
    [{ tools: ['fs', 5] }, 'tools', TOOLS],
  ])('"argo": %j → 400 on argo.%s: %s', (argo, key, rule) => {
    expect(refusal({ ...base, argo })).toEqual({ param: `argo.${key}`, message: `invalid "argo.${key}": ${rule}` });
  });

  it.each([
    ['X-Argo-Session', '..', SESSION],
    ['X-Argo-Replay', 'all', REPLAY],
    ['X-Argo-Reason', 'why', REASON],
    ['X-Argo-Budget', 'lots', BUDGET],
    ['X-Argo-Budget', '10', BUDGET],
    ['X-Argo-Verbosity', 'loud', VERBOSITY],
  ])('%s: %j → 400 on the header: %s', (header, value, rule) => {
    expect(refusal(base, { [header]: value })).toEqual({ param: header, message: `invalid header "${header}": ${rule}` });
  });

  it('a check with words of its own keeps them', () => {
    expect(refusal({ ...base, argo: { persona: 'p'.repeat(201) } }).message).toBe('invalid "argo.persona": use at most 200 characters (the length of a name in config.json)');
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
    [{}, { 'x-argo-session': 'work', 'x-argo-replay': 'last:2', 'x-argo-budget': '8000' }, { session: 'work', replay: { kind: 'last', count: 2 }, budget: 8000, fromHeaders: ['session', 'replay', 'budget'] }],
    // The body wins field by field; what is left of the headers is remembered, for an error to name the header.
    [{ session: 'body', replay: 'none' }, { 'x-argo-session': 'header', 'x-argo-persona': 'pirate' }, { session: 'body', replay: { kind: 'none' }, persona: 'pirate', fromHeaders: ['persona'] }],
    [{ persona: null }, { 'x-argo-persona': 'pirate' }, { persona: 'pirate', fromHeaders: ['persona'] }],
    [{ persona: 'teacher', mode: 'code' }, { 'x-argo-persona': 'pirate', 'x-argo-mode': 'shell' }, { persona: 'teacher', mode: 'code' }],
    [{ tools: 'fs, edit' }, {}, { tools: ['fs', 'edit'] }],
    [{ tools: ['fs'] }, {}, { tools: ['fs'] }],
    [{ replay: 'session', reason: 'session', verbosity: 'short', mode: 'code' }, {}, { replay: { kind: 'session' }, reason: 'session', verbosity: 'short', mode: 'code' }],
    // An argo object is Argo mode, empty too: the configured session and replay.
    [{}, {}, {}],
    [{ tools: [] }, {}, { tools: [] }],
    [null, {}, null],
    [undefined, {}, null],
    [null, { 'x-argo-session': 'work' }, { session: 'work', fromHeaders: ['session'] }],
    // A blank header counts as not sent: it neither makes Argo mode nor sets its field.
    [undefined, { 'x-argo-tools': '' }, null],
    [undefined, { 'x-argo-session': '   ', 'x-argo-persona': '' }, null],
    [undefined, { 'x-argo-tools': ' ', 'x-argo-session': 'work' }, { session: 'work', fromHeaders: ['session'] }],
    [{}, { 'x-argo-tools': '' }, {}],
    [{ session: 'body' }, { 'x-argo-session': '' }, { session: 'body' }],
  ])('argo %j with headers %j → %j', (argo, headers, expected) => {
    expect(parseChatRequest({ ...base, argo }, new Headers(headers)).argo).toEqual(expected);
  });

  it('a body cannot claim its fields came from headers: fromHeaders is no Argo field', () => {
    expect(refusal({ ...base, argo: { persona: 'x', fromHeaders: ['persona'] } }).param).toBe('argo.fromHeaders');
  });

  const KNOWN = 'the Argo fields are session, replay, reason, budget, persona, verbosity, mode and tools';
  it.each([
    [{ sesion: 'x' }, 'argo.sesion', `invalid "argo.sesion": unknown Argo field (did you mean "session"?); ${KNOWN}`],
    [{ Session: 'x' }, 'argo.Session', `invalid "argo.Session": unknown Argo field (did you mean "session"?); ${KNOWN}`],
    [{ session: 'x', replay_spec: 'last:2' }, 'argo.replay_spec', `invalid "argo.replay_spec": unknown Argo field; ${KNOWN}`],
    // A typo is refused with or without a value.
    [{ persona: 'pirate', tool: null }, 'argo.tool', `invalid "argo.tool": unknown Argo field (did you mean "tools"?); ${KNOWN}`],
    // Not a plain name: quoted, clipped and made safe, and only "argo" as the param.
    [{ 'a b': 1 }, 'argo', `invalid "argo": unknown Argo field "a b"; ${KNOWN}`],
    [{ 'x\u001b[2J': 1 }, 'argo', `invalid "argo": unknown Argo field "x\\u001b[2J"; ${KNOWN}`],
    [{ ['k'.repeat(100_000)]: 1 }, 'argo', `invalid "argo": unknown Argo field "${'k'.repeat(64)}…"; ${KNOWN}`],
  ])('an unknown Argo field (row %#) is a 400 naming it: %s', (argo, param, message) => {
    expect(refusal({ ...base, argo })).toEqual({ param, message });
  });
});

describe('chat request: null counts as absent in every optional field', () => {
  const call = { function: { name: 'f', arguments: '{}' } };
  const parameters = { type: 'object', properties: {} };
  // Each body, and where its null field is read: parsed as if the field were left out.
  it.each<[string, Record<string, unknown>, (body: ChatBody) => unknown, unknown]>([
    ['a message name', { messages: [{ role: 'user', content: 'hi', name: null }] }, (body) => body.messages[0], { role: 'user', content: 'hi' }],
    ['a tool_call_id', { messages: [{ role: 'tool', content: 'r', tool_call_id: null }] }, (body) => body.messages[0], { role: 'tool', content: 'r' }],
    ['a message content', { messages: [{ role: 'assistant', content: null, tool_calls: [call] }] }, (body) => body.messages[0], { role: 'assistant', tool_calls: [call] }],
    ['a message reasoning', { messages: [{ role: 'assistant', content: 'a', reasoning: null }] }, (body) => body.messages[0], { role: 'assistant', content: 'a' }],
    ['a tool call id and type', { messages: [{ role: 'assistant', tool_calls: [{ id: null, type: null, ...call }] }] }, (body) => body.messages[0]?.tool_calls, [call]],
    ['a tool description', { tools: [{ type: 'function', function: { name: 'f', description: null, parameters } }] }, (body) => body.tools, [{ type: 'function', function: { name: 'f', parameters } }]],
    ['tool parameters', { tools: [{ type: 'function', function: { name: 'f', parameters: null, strict: null } }] }, (body) => body.tools, [{ type: 'function', function: { name: 'f' } }]],
    ['a JSON schema', { response_format: { type: 'json_schema', json_schema: { name: 'n', schema: null } } }, (body) => body.response_format, { type: 'json_schema', json_schema: { name: 'n' } }],
    ['a text part\'s image_url', { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', image_url: null }] }] }, (body) => body.messages[0]?.content, [{ type: 'text', text: 'hi' }]],
    ['an image part\'s text', { messages: [{ role: 'user', content: [{ type: 'image_url', text: null, image_url: { url: 'data:image/png;base64,QUJD' } }] }] }, (body) => body.messages[0]?.content, [{ type: 'image_url', image_url: { url: 'data:image/png;base64,QUJD' } }]],
    ['an audio format', { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklG', format: null } }] }] }, (body) => body.messages[0]?.content, [{ type: 'input_audio', input_audio: { data: 'UklG' } }]],
    ['include_usage', { stream: true, stream_options: { include_usage: null } }, (body) => body.stream_options, {}],
    ['a reasoning effort', { reasoning: { effort: null } }, (body) => body.reasoning, {}],
  ])('%s', (_field, extra, read, expected) => {
    expect(read(parseChatRequest({ ...base, ...extra }, new Headers()).body)).toEqual(expected);
  });

  it('keeps null inside a tool\'s JSON Schema, which is the client\'s own', () => {
    const parameters = { type: 'object', properties: { tz: { type: ['string', 'null'], default: null } } };
    const request = parseChatRequest({ ...base, tools: [{ type: 'function', function: { name: 'f', parameters } }] }, new Headers());
    expect(request.body.tools?.[0]?.function.parameters).toEqual(parameters);
  });

  it.each([
    [{ session: 'n1', persona: null }, { session: 'n1' }],
    [{ session: 'n1', replay: null, reason: null, budget: null, verbosity: null, mode: null, tools: null }, { session: 'n1' }],
    [{ session: null, persona: 'pirate' }, { persona: 'pirate' }],
  ])('argo %j is %j', (argo, expected) => {
    expect(parseChatRequest({ ...base, argo }, new Headers()).argo).toEqual(expected);
  });

  // A required field has no absent meaning: null there is still a wrong type.
  it.each([
    [{ model: null }, 'model', 'expected a string: the name of a model Ollama has (GET /v1/models lists them)'],
    [{ messages: [{ role: null, content: 'x' }] }, 'messages[0].role', 'Invalid option: expected one of "system"|"developer"|"user"|"assistant"|"tool"'],
    [{ messages: [{ role: 'user', content: [{ type: 'text', text: null }] }] }, 'messages[0].content[0].text', 'a text part needs "text"'],
    [{ tools: [{ type: 'function', function: { name: null } }] }, 'tools[0].function.name', 'Invalid input: expected string, received null'],
  ])('%j is refused naming %s', (extra, param, message) => {
    expect(refusal({ ...base, ...extra })).toEqual({ param, message: `invalid "${param}": ${message}` });
  });
});

describe('chat request: a bad content part is named by its index, field and type', () => {
  const parts = (...content: unknown[]) => ({ ...base, messages: [{ role: 'user', content: 'earlier' }, { role: 'user', content }] });
  it.each([
    [parts({ type: 'text', text: 'see' }, { type: 'text', text: 5 }), 'messages[1].content[1].text', 'Invalid input: expected string, received number (in a part of type "text")'],
    [parts({ type: 'image_url', image_url: 5 }), 'messages[1].content[0].image_url', 'expected {"url": "data:image/png;base64,…"} or the data URL as a string (in a part of type "image_url")'],
    [parts({ type: 'image_url', image_url: ['data:image/png;base64,QUJD'] }), 'messages[1].content[0].image_url', 'expected {"url": "data:image/png;base64,…"} or the data URL as a string (in a part of type "image_url")'],
    [parts({ type: 'image_url', image_url: { url: 5 } }), 'messages[1].content[0].image_url.url', 'Invalid input: expected string, received number (in a part of type "image_url")'],
    [parts({ type: 'input_audio', input_audio: { data: 'UklG', format: 3 } }), 'messages[1].content[0].input_audio.format', 'Invalid input: expected string, received number (in a part of type "input_audio")'],
    [parts({ type: 7 }), 'messages[1].content[0].type', 'Invalid input: expected string, received number'],
    [parts('hi'), 'messages[1].content[0]', 'Invalid input: expected object, received string'],
    [parts({ type: 'text', text: 'a' }, null), 'messages[1].content[1]', 'Invalid input: expected object, received null'],
    [{ ...base, messages: [{ role: 'user', content: 5 }] }, 'messages[0].content', 'expected a string or an array of content parts'],
    [{ ...base, messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }, 'messages[0].content', 'expected a string or an array of content parts'],
  ])('%j → %s', (json, param, message) => {
    expect(refusal(json)).toEqual({ param, message: `invalid "${param}": ${message}` });
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

  it.each([
    ['data:image/png;base64,QUJD', ['QUJD']],
    ['data:image/jpeg;base64,QUI=', ['QUI=']],
    ['data:image/jpg;base64,QQ==', ['QQ==']],
    ['data:image/webp;base64,', ['']],
    ['data:;base64,QUJD', ['QUJD']],
  ])('accepts the image %s as Ollama does, in {url} or as a bare string', (url, images) => {
    for (const imageUrl of [{ url }, url]) {
      const request = parseChatRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: imageUrl }] }] }, new Headers());
      expect(imagesOf(request.body.messages[0]?.content)).toEqual(images);
    }
  });

  it('checks an image of megabytes without overflowing the stack', () => {
    const url = `data:image/png;base64,${'QUJD'.repeat(2_000_000)}`;
    const request = parseChatRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }] }] }, new Headers());
    expect(imagesOf(request.body.messages[0]?.content)[0]).toHaveLength(8_000_000);
  });

  it('passes audio on with the images, as Ollama\'s own OpenAI layer does', () => {
    const request = parseChatRequest({ ...base, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklG', format: 'wav' } }, { type: 'image_url', image_url: { url: 'data:image/png;base64,QUJD' } }] }] }, new Headers());
    expect(imagesOf(request.body.messages[0]?.content)).toEqual(['UklG', 'QUJD']);
  });

  it('takes base64 images from data URLs only', () => {
    expect(imagesOf([{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'image_url', image_url: { url: 'https://x' } }])).toEqual(['AAAA']);
  });
});

describe('session patch', () => {
  it.each([
    ['t'.repeat(200), true],
    ['t'.repeat(201), false],
    // Characters, not UTF-16 units: an emoji is one.
    ['😀'.repeat(200), true],
    ['😀'.repeat(201), false],
    ['', true],
  ])('a title of %#: taken %s, else a 400 naming "title" and the limit', (title, taken) => {
    if (taken) {
      expect(parseSessionPatch({ title })).toEqual({ title });
      return;
    }
    expect(() => parseSessionPatch({ title })).toThrow(expect.objectContaining({ param: 'title', status: 400, message: 'invalid "title": use at most 200 characters' }) as Error);
  });

  it('takes a string title and names the field otherwise', () => {
    expect(parseSessionPatch({ title: 'New', other: 1 })).toEqual({ title: 'New' });
    expect(() => parseSessionPatch({ title: 5 })).toThrow(expect.objectContaining({ param: 'title', status: 400 }) as Error);
    expect(() => parseSessionPatch(null)).toThrow(ApiError);
  });
});

describe('argoParam, argoFieldNamed: an Argo field named as the client sent it', () => {
  it.each([
    // Each field that a later rule can refuse (an unknown persona or mode, a budget under the floor, a reason without replay, unknown tools), from each source.
    ...(['persona', 'mode', 'budget', 'reason', 'tools'] as const).flatMap((key) => {
      const value = key === 'budget' ? '8000' : key === 'reason' ? 'clarification' : key === 'tools' ? 'fs' : 'x';
      const header = `X-Argo-${key.charAt(0).toUpperCase()}${key.slice(1)}`;
      const body = key === 'budget' ? 8000 : value;
      return [
        [key, { [key]: body }, {}, `argo.${key}`, `the "${key}" Argo field`],
        [key, undefined, { [header]: value }, header, `the ${header} header`],
        [key, {}, { [header]: value }, header, `the ${header} header`],
        [key, { [key]: body }, { [header]: value }, `argo.${key}`, `the "${key}" Argo field`],
      ] as const;
    }),
  ])('%s from body %j and headers %j → %s, %s', (key, argo, headers, param, named) => {
    const fields = parseChatRequest({ ...base, argo }, new Headers(headers)).argo;
    expect(argoParam(fields, key)).toBe(param);
    expect(argoFieldNamed(fields, key)).toBe(named);
  });

  it('a field nobody sent is named as a body field (plain mode too)', () => {
    expect(argoParam(null, 'persona')).toBe('argo.persona');
    expect(argoParam(parseChatRequest(base, new Headers({ 'x-argo-session': 'w' })).argo, 'persona')).toBe('argo.persona');
  });
});
