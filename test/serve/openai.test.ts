import { describe, expect, it } from 'vitest';
import type { ApiError } from '../../src/serve/errors.js';
import {
  ChunkFormat,
  StreamedToolCalls,
  choiceLogprobs,
  completionObject,
  findModel,
  finishReason,
  modelNotFound,
  lastUserText,
  openAiLogprobs,
  toOllamaExtras,
  toOllamaMessages,
  toOpenAiToolCalls,
  toolRound,
  usageOf,
} from '../../src/serve/openai.js';
import { parseChatRequest } from '../../src/serve/schema.js';
import type { ChatBody, OpenAiMessage } from '../../src/serve/schema.js';

const body = (extra: Record<string, unknown>): ChatBody => parseChatRequest({ model: 'm', messages: [{ role: 'user', content: 'x' }], ...extra }, new Headers()).body;
const messages = (list: unknown[]): OpenAiMessage[] => parseChatRequest({ model: 'm', messages: list }, new Headers()).body.messages;

describe('messages to Ollama', () => {
  it.each([
    ['a string stays', [{ role: 'user', content: 'hi' }], [{ role: 'user', content: 'hi' }]],
    ['developer is system', [{ role: 'developer', content: 'rules' }], [{ role: 'system', content: 'rules' }]],
    ['parts join by newline', [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }], [{ role: 'user', content: 'a\nb' }]],
    ['images ride along', [{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,QUJD' } }] }], [{ role: 'user', content: 'see', images: ['QUJD'] }]],
    ['null content (an assistant with calls, none here) is empty', [{ role: 'assistant', content: null, tool_calls: [] }], [{ role: 'assistant', content: '' }]],
    [
      'arguments string → object; ids kept; tool result named by its call',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } }, { id: 'c2', type: 'function', function: { name: 'sub', arguments: '' } }] },
        { role: 'tool', tool_call_id: 'c2', content: '0' },
        { role: 'tool', tool_call_id: 'c1', content: '1' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'add', arguments: { a: 1 } } }, { id: 'c2', function: { name: 'sub', arguments: {} } }] },
        { role: 'tool', content: '0', tool_name: 'sub', tool_call_id: 'c2' },
        { role: 'tool', content: '1', tool_name: 'add', tool_call_id: 'c1' },
      ],
    ],
    [
      'a call without an id goes without one',
      [{ role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'add', arguments: '{}' } }] }],
      [{ role: 'assistant', content: '', tool_calls: [{ function: { name: 'add', arguments: {} } }] }],
    ],
    [
      "a result is named by the call its id points at, not by a name the client gives it",
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a"}' } }] },
        { role: 'tool', tool_call_id: 'c1', name: 'other', content: 'text of a' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'read_file', arguments: { path: 'a' } } }] },
        { role: 'tool', content: 'text of a', tool_name: 'read_file', tool_call_id: 'c1' },
      ],
    ],
    ['unknown call id falls back to name', [{ role: 'tool', tool_call_id: 'zz', name: 'legacy', content: 'r' }], [{ role: 'tool', content: 'r', tool_name: 'legacy', tool_call_id: 'zz' }]],
    ['no name at all', [{ role: 'tool', tool_call_id: 'zz', content: 'r' }], [{ role: 'tool', content: 'r', tool_call_id: 'zz' }]],
    [
      'two equal calls in one message (a die rolled twice) are both sent, and so are two equal results',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } }, { id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'first' },
        { role: 'tool', tool_call_id: 'c1', content: 'first' },
        { role: 'user', content: 'and?' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'add', arguments: { a: 1 } } }, { id: 'c1', function: { name: 'add', arguments: { a: 1 } } }] },
        { role: 'tool', content: 'first', tool_name: 'add', tool_call_id: 'c1' },
        { role: 'tool', content: 'first', tool_name: 'add', tool_call_id: 'c1' },
        { role: 'user', content: 'and?' },
      ],
    ],
    [
      'parallel calls under one id that both answered "ok": both results sent',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'write_file', arguments: '{"path":"a.txt"}' } }, { id: 'call_0', type: 'function', function: { name: 'write_file', arguments: '{"path":"b.txt"}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: 'ok' },
        { role: 'tool', tool_call_id: 'call_0', content: 'ok' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_0', function: { name: 'write_file', arguments: { path: 'a.txt' } } }, { id: 'call_0', function: { name: 'write_file', arguments: { path: 'b.txt' } } }] },
        { role: 'tool', content: 'ok', tool_name: 'write_file', tool_call_id: 'call_0' },
        { role: 'tool', content: 'ok', tool_name: 'write_file', tool_call_id: 'call_0' },
      ],
    ],
    [
      'one call whose result the client sent twice: the resend is left out',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'add', arguments: {} } }] },
        { role: 'tool', content: 'ok', tool_name: 'add', tool_call_id: 'c1' },
      ],
    ],
    [
      'parallel calls that share an id but differ are all sent, with every result',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'get_time', type: 'function', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } }, { id: 'get_time', type: 'function', function: { name: 'get_time', arguments: '{"tz":"CET"}' } }] },
        { role: 'tool', tool_call_id: 'get_time', content: '12:00' },
        { role: 'tool', tool_call_id: 'get_time', content: '13:00' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'get_time', function: { name: 'get_time', arguments: { tz: 'UTC' } } }, { id: 'get_time', function: { name: 'get_time', arguments: { tz: 'CET' } } }] },
        { role: 'tool', content: '12:00', tool_name: 'get_time', tool_call_id: 'get_time' },
        { role: 'tool', content: '13:00', tool_name: 'get_time', tool_call_id: 'get_time' },
      ],
    ],
    [
      'calls of different tools under one id: all sent; their results are named after the first',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'x', type: 'function', function: { name: 'add', arguments: '{}' } }, { id: 'x', type: 'function', function: { name: 'sub', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'x', content: '1' },
        { role: 'tool', tool_call_id: 'x', content: '2' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'x', function: { name: 'add', arguments: {} } }, { id: 'x', function: { name: 'sub', arguments: {} } }] },
        { role: 'tool', content: '1', tool_name: 'add', tool_call_id: 'x' },
        { role: 'tool', content: '2', tool_name: 'add', tool_call_id: 'x' },
      ],
    ],
    [
      'an empty id is no id: every call and every result is sent, results named as the client names them',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: '', type: 'function', function: { name: 'get_time', arguments: '{}' } }, { id: '', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: '', name: 'get_time', content: '12:00' },
        { role: 'tool', tool_call_id: '', content: '12:00' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_time', arguments: {} } }, { function: { name: 'get_time', arguments: {} } }] },
        { role: 'tool', content: '12:00', tool_name: 'get_time' },
        { role: 'tool', content: '12:00' },
      ],
    ],
    [
      'a result sent twice in one round: the first is kept; the round\'s other results stay, in order; one of other content is sent',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'add', arguments: '{}' } }, { id: 'b', type: 'function', function: { name: 'sub', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'a', content: 'A1' },
        { role: 'tool', tool_call_id: 'b', content: 'B' },
        { role: 'tool', tool_call_id: 'a', content: 'A1' },
        { role: 'tool', tool_call_id: 'a', content: 'A2' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'a', function: { name: 'add', arguments: {} } }, { id: 'b', function: { name: 'sub', arguments: {} } }] },
        { role: 'tool', content: 'A1', tool_name: 'add', tool_call_id: 'a' },
        { role: 'tool', content: 'B', tool_name: 'sub', tool_call_id: 'b' },
        { role: 'tool', content: 'A2', tool_name: 'add', tool_call_id: 'a' },
      ],
    ],
    [
      'a repeat after a user message is still the same round (no assistant message between)',
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'add', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'a', content: 'A1' },
        { role: 'user', content: 'hm' },
        { role: 'tool', tool_call_id: 'a', content: 'A1' },
      ],
      [
        { role: 'assistant', content: '', tool_calls: [{ id: 'a', function: { name: 'add', arguments: {} } }] },
        { role: 'tool', content: 'A1', tool_name: 'add', tool_call_id: 'a' },
        { role: 'user', content: 'hm' },
      ],
    ],
    [
      'results before any assistant message are one round of their own',
      [
        { role: 'tool', tool_call_id: 'x', name: 'early', content: '1' },
        { role: 'tool', tool_call_id: 'x', name: 'early', content: '1' },
      ],
      [{ role: 'tool', content: '1', tool_name: 'early', tool_call_id: 'x' }],
    ],
    [
      'a call id reused in a later round: each round keeps its calls, each result answers the nearest call before it',
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'add', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: 'r1' },
        { role: 'assistant', content: 'again', tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'sub', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: 'r2' },
      ],
      [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'call_0', function: { name: 'add', arguments: {} } }] },
        { role: 'tool', content: 'r1', tool_name: 'add', tool_call_id: 'call_0' },
        { role: 'assistant', content: 'again', tool_calls: [{ id: 'call_0', function: { name: 'sub', arguments: {} } }] },
        { role: 'tool', content: 'r2', tool_name: 'sub', tool_call_id: 'call_0' },
      ],
    ],
    [
      'a result sent before any call with its id keeps its own name',
      [
        { role: 'tool', tool_call_id: 'c9', name: 'early', content: 'r' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'late', arguments: '{}' } }] },
      ],
      [
        { role: 'tool', content: 'r', tool_name: 'early', tool_call_id: 'c9' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'c9', function: { name: 'late', arguments: {} } }] },
      ],
    ],
    [
      "a thinking model's reasoning goes back as Ollama's thinking; an empty one is left out",
      [
        { role: 'assistant', content: null, reasoning: 'Add them.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '3' },
        { role: 'assistant', content: 'It is 3.', reasoning: '' },
      ],
      [
        { role: 'assistant', content: '', thinking: 'Add them.', tool_calls: [{ id: 'c1', function: { name: 'add', arguments: {} } }] },
        { role: 'tool', content: '3', tool_name: 'add', tool_call_id: 'c1' },
        { role: 'assistant', content: 'It is 3.' },
      ],
    ],
    ['results without an id are all kept', [{ role: 'tool', name: 't', content: '1' }, { role: 'tool', name: 't', content: '2' }], [{ role: 'tool', content: '1', tool_name: 't' }, { role: 'tool', content: '2', tool_name: 't' }]],
  ])('%s', (_name, input, expected) => {
    expect(toOllamaMessages(messages(input))).toEqual(expected);
  });

  it.each([['{bad'], ['[1,2]'], ['"text"']])('refuses arguments %s naming the field', (args) => {
    const list = messages([{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] }]);
    expect(() => toOllamaMessages(list)).toThrow(expect.objectContaining({ param: 'messages[0].tool_calls[0].function.arguments' }) as ApiError);
  });
});

describe('options, format and tools to Ollama', () => {
  const tool = { type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' }, strict: true } };
  it.each([
    [{}, { options: {} }],
    [{ temperature: 0.2, top_p: 0.9, seed: 4, stop: 'END' }, { options: { temperature: 0.2, top_p: 0.9, seed: 4, stop: ['END'] } }],
    [{ stop: ['a', 'b'] }, { options: { stop: ['a', 'b'] } }],
    [{ stop: [] }, { options: {} }],
    [{ stop: null }, { options: {} }],
    [{ stop: '' }, { options: { stop: [''] } }],
    [{ max_tokens: 100 }, { options: { num_predict: 100 } }],
    [{ max_tokens: 100, max_completion_tokens: 50 }, { options: { num_predict: 50 } }],
    [{ frequency_penalty: 0.5, presence_penalty: -0.25 }, { options: { frequency_penalty: 0.5, presence_penalty: -0.25 } }],
    [{ presence_penalty: 1 }, { options: { presence_penalty: 1 } }],
    [{ frequency_penalty: 0 }, { options: { frequency_penalty: 0 } }],
    [{ frequency_penalty: null, presence_penalty: null }, { options: {} }],
    [{ response_format: { type: 'text' } }, { options: {} }],
    [{ response_format: { type: 'json_object' } }, { options: {}, format: 'json' }],
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } } }, { options: {}, format: { type: 'object' } }],
    [{ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, { options: {}, format: 'json' }],
    [{ tools: [tool] }, { options: {}, tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } }] }],
    [{ tools: [tool], tool_choice: 'none' }, { options: {} }],
    [{ tools: [tool], tool_choice: 'auto' }, { options: {}, tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } }] }],
    [{ tools: [tool], tool_choice: 'required', parallel_tool_calls: false }, { options: {}, tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } }] }],
    [{ tools: [tool, { type: 'function', function: { name: 'g' } }], tool_choice: { type: 'function', function: { name: 'g' } } }, { options: {}, tools: [{ type: 'function', function: { name: 'g' } }] }],
    [{ tools: [] }, { options: {} }],
    [{ reasoning_effort: 'none' }, { options: {}, think: false }],
    [{ reasoning_effort: 'minimal' }, { options: {}, think: 'low' }],
    [{ reasoning_effort: 'medium' }, { options: {}, think: 'medium' }],
    [{ reasoning_effort: 'xhigh' }, { options: {}, think: 'max' }],
    [{ reasoning_effort: null }, { options: {} }],
    [{ reasoning: { effort: 'high' } }, { options: {}, think: 'high' }],
    [{ reasoning: { effort: 'none' }, reasoning_effort: 'high' }, { options: {}, think: false }],
    [{ reasoning: {}, reasoning_effort: 'high' }, { options: {} }],
  ])('%j → %j', (extra, expected) => {
    expect(toOllamaExtras(body(extra))).toEqual(expected);
  });

  it.each([
    [[tool], 'h', 'invalid "tool_choice.function.name": no tool named "h" ("tools" has "f"); name one of "tools" or send it there'],
    [[], 'h', 'invalid "tool_choice.function.name": no tool named "h" ("tools" is empty); name one of "tools" or send it there'],
  ])('a named function not in tools %j is a 400 naming it', (tools, name, message) => {
    expect(() => toOllamaExtras(body({ tools, tool_choice: { type: 'function', function: { name } } }))).toThrow(
      expect.objectContaining({ status: 400, param: 'tool_choice.function.name', message }) as ApiError,
    );
  });

  // What Ollama cannot bind to its Go types fails the whole request there: refused first, naming the part.
  const fn = (name: string, parameters?: Record<string, unknown>) => ({ type: 'function', function: { name, ...(parameters ? { parameters } : {}) } });
  const schema = (properties: Record<string, unknown>) => ({ type: 'object', properties });
  const fix = '; change that part of its schema, or leave the tool out';
  it.each<[string, Record<string, unknown>, string | null, string]>([
    ['a boolean subschema', { tools: [fn('f', schema({})), fn('g', schema({})), fn('get_time', schema({ x: true }))] }, 'tools[2].function.parameters.properties.x', 'tool "get_time": Ollama cannot read its input schema: properties.x must be an object (Ollama cannot read a true or false schema there)'],
    ['required not a list', { tools: [fn('f', { type: 'object', required: 'a' })] }, 'tools[0].function.parameters.required', 'tool "f": Ollama cannot read its input schema: required must be a list of names'],
    ['a nested anyOf entry', { tools: [fn('f', schema({ a: { anyOf: [{ type: 'string' }, false] } }))] }, 'tools[0].function.parameters.properties.a.anyOf.1', 'tool "f": Ollama cannot read its input schema: properties.a.anyOf.1 must be an object (Ollama cannot read a true or false schema there)'],
    ['a type that is a number', { tools: [fn('f', { type: 5 })] }, 'tools[0].function.parameters.type', 'tool "f": Ollama cannot read its input schema: type must be a string'],
    // A name is quoted, controls hidden, so the message stays one line.
    ['a name with a line break', { tools: [fn('a\nb', schema({ 'x y': 1 }))] }, 'tools[0].function.parameters.properties."x y"', 'tool "a\\nb": Ollama cannot read its input schema: properties."x y" must be an object (Ollama cannot read a true or false schema there)'],
    ['the one tool_choice names', { tools: [fn('f'), fn('g', schema({ x: [] }))], tool_choice: { type: 'function', function: { name: 'g' } } }, 'tools[1].function.parameters.properties.x', 'tool "g": Ollama cannot read its input schema: properties.x must be an object (Ollama cannot read a true or false schema there)'],
    // Not sent, so not refused.
    ['tool_choice "none"', { tools: [fn('f', schema({ x: true }))], tool_choice: 'none' }, null, ''],
    ['one tool_choice leaves out', { tools: [fn('f', schema({ x: true })), fn('g')], tool_choice: { type: 'function', function: { name: 'g' } } }, null, ''],
    ['no parameters', { tools: [fn('f')] }, null, ''],
    ['keys Ollama ignores, null anywhere', { tools: [fn('f', { type: 'object', additionalProperties: false, properties: { x: { type: ['string', 'null'], enum: null, format: 7 } }, required: null })] }, null, ''],
  ])('client tools, %s: %s', (_case, extra, param, problem) => {
    if (param === null) {
      expect(() => toOllamaExtras(body(extra))).not.toThrow();
      return;
    }
    expect(() => toOllamaExtras(body(extra))).toThrow(
      expect.objectContaining({ status: 400, type: 'invalid_request_error', code: 'invalid_value', param, message: `invalid "${param}": ${problem}${fix}` }) as ApiError,
    );
  });

  it('orders option keys the same whatever the body order', () => {
    const a = toOllamaExtras(body({ seed: 1, temperature: 0.5, max_tokens: 9 }));
    const b = toOllamaExtras(body({ max_tokens: 9, temperature: 0.5, seed: 1 }));
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });
});

describe('answers to OpenAI', () => {
  it.each([
    ['stop', 0, 'stop'],
    ['length', 0, 'length'],
    [null, 0, 'stop'],
    ['load', 0, 'stop'],
    ['stop', 2, 'tool_calls'],
    ['length', 1, 'tool_calls'],
  ] as const)('done_reason %s with %i calls → %s', (done, calls, expected) => {
    expect(finishReason(done, calls)).toBe(expected);
  });

  it.each([
    [3, 5, { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }],
    [12, 0, { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 }],
  ])('usage of %s and %s', (prompt, completion, expected) => {
    expect(usageOf(prompt, completion)).toEqual(expected);
  });

  it('gives calls without an id call_<round>_<index> and keeps ids the model sent', () => {
    expect(toOpenAiToolCalls([{ function: { name: 'a', arguments: { x: 1 } } }, { id: 'keep', function: { name: 'b', arguments: {} } }, { id: '', function: { name: 'c', arguments: {} } }], 2)).toEqual([
      { id: 'call_2_0', type: 'function', function: { name: 'a', arguments: '{"x":1}' } },
      { id: 'keep', type: 'function', function: { name: 'b', arguments: '{}' } },
      { id: 'call_2_2', type: 'function', function: { name: 'c', arguments: '{}' } },
    ]);
  });

  const call = (name: string, id?: string) => ({ ...(id !== undefined ? { id } : {}), function: { name, arguments: {} } });
  it.each([
    ['one chunk of two', [[call('a'), call('b')]], [['call_3_0', 0], ['call_3_1', 1]]],
    ['one chunk each', [[call('a')], [call('b')]], [['call_3_0', 0], ['call_3_1', 1]]],
    ['the model\'s ids kept, the rest counted on', [[call('a')], [call('b', 'mine'), call('c')]], [['call_3_0', 0], ['mine', 1], ['call_3_2', 2]]],
  ])('a stream numbers its calls across chunks: %s', (_case, chunks, expected) => {
    const streamed = new StreamedToolCalls(3);
    const format = new ChunkFormat({ id: 'c', created: 1, model: 'm' });
    const sent = chunks.flatMap((calls) => {
      const numbered = streamed.number(calls);
      const chunk = JSON.parse(format.toolCalls(numbered.calls, numbered.first)) as { choices: [{ delta: { tool_calls: { id: string; index: number }[] } }] };
      return chunk.choices[0].delta.tool_calls.map((delta) => [delta.id, delta.index]);
    });
    expect(sent).toEqual(expected);
  });

  it.each([
    [[{ role: 'user', content: 'q' }], 1],
    [[{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'a', content: 'r' }], 2],
    [[{ role: 'assistant', content: 'no calls' }], 1],
  ])('round after %j is %i', (list, round) => {
    expect(toolRound(messages(list))).toBe(round);
  });

  it.each([
    [[{ role: 'system', content: 's' }, { role: 'user', content: 'one' }, { role: 'assistant', content: 'a' }, { role: 'user', content: [{ type: 'text', text: 'two' }] }], 'two'],
    [[{ role: 'system', content: 's' }], null],
    [[{ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'x', content: 'r' }], 'q'],
  ])('last user text of %j is %j', (list, expected) => {
    expect(lastUserText(messages(list))).toBe(expected);
  });

  it('builds the non-streamed object', () => {
    expect(
      completionObject({ id: 'chatcmpl-1', created: 10, model: 'm', text: 'hi', toolCalls: [], finishReason: 'stop', usage: usageOf(1, 2), argo: { turn_id: 't' } }),
    ).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 10,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
      argo: { turn_id: 't' },
    });
    const calls = toOpenAiToolCalls([{ function: { name: 'f', arguments: {} } }], 1);
    expect(completionObject({ id: 'c', created: 1, model: 'm', text: '', toolCalls: calls, finishReason: 'tool_calls', usage: usageOf(0, 0) })).toMatchObject({
      choices: [{ message: { role: 'assistant', content: '', tool_calls: calls }, finish_reason: 'tool_calls' }],
    });
  });

  it('formats every kind of chunk as valid JSON of the chunk shape', () => {
    const format = new ChunkFormat({ id: 'chatcmpl-"x"', created: 5, model: 'a\nb' });
    const head = { id: 'chatcmpl-"x"', object: 'chat.completion.chunk', created: 5, model: 'a\nb' };
    const one = (delta: unknown, finish: string | null) => ({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
    expect(JSON.parse(format.role())).toEqual(one({ role: 'assistant', content: '' }, null));
    expect(JSON.parse(format.role('so far'))).toEqual(one({ role: 'assistant', content: 'so far' }, null));
    expect(JSON.parse(format.content('a "quoted"\n\u2028 piece'))).toEqual(one({ content: 'a "quoted"\n\u2028 piece' }, null));
    const calls = toOpenAiToolCalls([{ function: { name: 'f', arguments: { q: 1 } } }], 1);
    expect(JSON.parse(format.toolCalls(calls))).toEqual(one({ tool_calls: [{ index: 0, id: 'call_1_0', type: 'function', function: { name: 'f', arguments: '{"q":1}' } }] }, null));
    expect(JSON.parse(format.finish('length'))).toEqual(one({}, 'length'));
    expect(JSON.parse(format.finish('stop', { argo: { turn_id: 't' } }))).toEqual({ ...one({}, 'stop'), argo: { turn_id: 't' } });
    expect(JSON.parse(format.usage(usageOf(1, 1)))).toEqual({ ...head, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
    expect(JSON.parse(format.usage(usageOf(1, 1), { argo: { turn_id: 't' } }))).toEqual({ ...head, choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, argo: { turn_id: 't' } });
    expect(JSON.parse(format.extra({ tool_status: { tool: 'read_file' } }))).toEqual({ ...head, choices: [], tool_status: { tool: 'read_file' } });
  });
});

describe('log probabilities: Ollama\'s api.Logprob → OpenAI\'s ChatCompletionTokenLogprob', () => {
  const sky = { token: ' sky', logprob: -0.25, bytes: [32, 115, 107, 121] };
  it.each([
    ['bytes and no alternatives (top_logprobs 0)', [sky], [{ ...sky, top_logprobs: [] }]],
    ['no bytes (Ollama leaves them out of an empty token): null', [{ token: '', logprob: -1.5 }], [{ token: '', logprob: -1.5, bytes: null, top_logprobs: [] }]],
    [
      'alternatives, each with its bytes or null',
      [{ ...sky, top_logprobs: [sky, { token: ' sea', logprob: -2, bytes: [32, 115, 101, 97] }, { token: '', logprob: -9 }] }],
      [{ ...sky, top_logprobs: [sky, { token: ' sea', logprob: -2, bytes: [32, 115, 101, 97] }, { token: '', logprob: -9, bytes: null }] }],
    ],
    ['several tokens, in order', [sky, { token: 'é', logprob: 0, bytes: [195, 169] }], [{ ...sky, top_logprobs: [] }, { token: 'é', logprob: 0, bytes: [195, 169], top_logprobs: [] }]],
    ['none', [], []],
    // Only what OpenAI's type has goes on: a field Ollama adds later is not passed through.
    ['a field OpenAI does not have is left out', [{ ...sky, extra: 1 }], [{ ...sky, top_logprobs: [] }]],
  ])('%s', (_what, ollama, openAi) => {
    expect(openAiLogprobs(ollama)).toEqual(openAi);
    expect(JSON.stringify(openAiLogprobs(ollama))).toBe(JSON.stringify(openAi.map(({ token, logprob, bytes, top_logprobs }) => ({ token, logprob, bytes, top_logprobs }))));
  });

  it('a choice\'s logprobs: the tokens in content, no refusal', () => {
    expect(choiceLogprobs([sky])).toEqual({ content: [{ ...sky, top_logprobs: [] }], refusal: null });
  });

  const a = { token: 'a', logprob: -1, bytes: [97] };
  const b = { token: 'b', logprob: -2, bytes: [98] };
  it.each([
    ['not asked: null', undefined, null],
    ['asked, none came (an Ollama before 0.12.11): an empty list', [], { content: [], refusal: null }],
    ['every piece\'s, joined in order', [a, b], { content: [{ ...a, top_logprobs: [] }, { ...b, top_logprobs: [] }], refusal: null }],
  ])('the non-streamed object: %s', (_what, logprobs, expected) => {
    const input = { id: 'c', created: 1, model: 'm', text: 'ab', toolCalls: [], finishReason: 'stop' as const, usage: usageOf(1, 2) };
    expect(completionObject(logprobs === undefined ? input : { ...input, logprobs }).choices).toEqual([{ index: 0, message: { role: 'assistant', content: 'ab' }, logprobs: expected, finish_reason: 'stop' }]);
  });

  it('a chunk carries its piece\'s log probabilities; a piece without has null', () => {
    const format = new ChunkFormat({ id: 'c', created: 5, model: 'm' });
    const logprobsOf = (chunk: string): unknown => (JSON.parse(chunk) as { choices: { logprobs: unknown }[] }).choices[0]?.logprobs;
    const carried = { content: [{ ...a, top_logprobs: [] }], refusal: null };
    expect(logprobsOf(format.content('a', [a]))).toEqual(carried);
    expect(logprobsOf(format.content('a'))).toBeNull();
    expect(JSON.parse(format.content('', [a]))).toMatchObject({ choices: [{ delta: { content: '' }, logprobs: carried, finish_reason: null }] });
    expect(logprobsOf(format.reasoning('hm', [a]))).toEqual(carried);
    const calls = toOpenAiToolCalls([{ function: { name: 'f', arguments: {} } }], 1);
    expect(logprobsOf(format.toolCalls(calls, 0, [a]))).toEqual(carried);
    expect(logprobsOf(format.toolCalls(calls, 0))).toBeNull();
    expect(logprobsOf(format.role())).toBeNull();
    expect(logprobsOf(format.finish('stop'))).toBeNull();
  });
});

describe('one model by id', () => {
  const installed = [
    { name: 'argo:latest', modified_at: '2026-01-15T09:30:00Z' },
    { name: 'qwen3:8b', modified_at: '2026-01-15T09:30:00Z' },
    { name: 'team/coder:1.5b', modified_at: '2026-01-15T09:30:00Z' },
  ];
  it.each([
    ['argo', 'argo:latest'],
    ['argo:latest', 'argo:latest'],
    ['ARGO', 'argo:latest'],
    ['library/argo', 'argo:latest'],
    ['registry.ollama.ai/library/argo:latest', 'argo:latest'],
    ['qwen3:8b', 'qwen3:8b'],
    ['qwen3', undefined],
    ['argo:7b', undefined],
    ['team/coder:1.5b', 'team/coder:1.5b'],
    ['coder:1.5b', undefined],
  ])('%s → %s', (wanted, found) => {
    expect(findModel(installed, wanted)?.name).toBe(found);
  });

  it('a missing one is the 404 a chat request gets, naming what is installed', () => {
    const error = modelNotFound('nope', 'http://127.0.0.1:11434', ['argo:latest'], 'argo:latest');
    expect({ status: error.status, ...error.body().error }).toEqual({
      status: 404,
      type: 'invalid_request_error',
      code: 'model_not_found',
      param: 'model',
      message: 'model "nope" not found on Ollama at http://127.0.0.1:11434; installed: argo:latest. Pull it with "ollama pull nope", or use an installed one ("model": "argo:latest")',
    });
    expect(modelNotFound('x', 'http://127.0.0.1:11434', [], undefined).message).toContain('; no models are installed.');
  });
});
