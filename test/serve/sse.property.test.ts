// argo serve's event streams, for generated answers (awkward text, tool calls, a failure mid-way):
// always valid SSE, one `data:` line per event whose payload parses as JSON, carrying exactly the
// answer's text, and ending as OpenAI's streams end. ChunkFormat's payloads parse to what they say.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChunkFormat, toOpenAiToolCalls, usageOf } from '../../src/serve/openai.js';
import type { FinishReason, OllamaToolCall } from '../../src/serve/openai.js';
import { hostileText, runs } from '../support/property.js';
import { startTestServer } from './fake-runner.js';
import type { TestServer } from './fake-runner.js';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.listening.close(1000);
});

const text = hostileText(6);
const toolCall: fc.Arbitrary<OllamaToolCall> = fc.record(
  { id: fc.oneof(fc.constant('c1'), text), function: fc.record({ name: fc.oneof(fc.constant('get_weather'), text), arguments: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) }) },
  { requiredKeys: ['function'] },
);

/**
 * The events of an SSE body, read as the spec says: a line ends at CR, LF or CR LF, and an event at
 * a blank line. Each event of Argo's is one `data: ` line: anything else fails the property.
 */
function events(body: string): string[] {
  expect(body.endsWith('\n\n')).toBe(true);
  return body
    .slice(0, -2)
    .split('\n\n')
    .map((event) => {
      expect(event, JSON.stringify(event)).not.toMatch(/[\r\n]/);
      expect(event.startsWith('data: ')).toBe(true);
      return event.slice('data: '.length);
    });
}

interface Chunk {
  choices?: { delta: { content?: string; role?: string; tool_calls?: unknown[] }; finish_reason: string | null }[];
  usage?: unknown;
  error?: { message: string };
}

describe('argo serve streams', () => {
  it('are valid SSE whose data lines are JSON carrying exactly the answer, ending with [DONE] or an error chunk', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(text, { maxLength: 6 }),
        fc.option(fc.array(toolCall, { minLength: 1, maxLength: 2 }), { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        async (tokens, toolCalls, fails, usage) => {
          t.runner.script = () => ({ tokens, ...(toolCalls ? { toolCalls } : {}), ...(fails ? { failAfter: { kind: 'mid-stream', message: 'boom' } } : {}) });
          const body = {
            model: 'argo',
            messages: [{ role: 'user', content: 'hi' }],
            stream: true,
            ...(usage ? { stream_options: { include_usage: true } } : {}),
            ...(toolCalls ? { tools: [{ type: 'function', function: { name: 'get_weather' } }] } : {}),
          };
          const response = await fetch(`${t.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
          // A failure before any text is answered with its own status, not a stream.
          if (fails && tokens.length === 0) {
            expect(response.status).toBe(502);
            expect(((await response.json()) as Chunk).error?.message).toBe('boom');
            return;
          }
          expect(response.status).toBe(200);
          expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
          const payloads = events(await response.text());
          const done = payloads.at(-1) === '[DONE]';
          expect(done).toBe(!fails);
          const chunks = (done ? payloads.slice(0, -1) : payloads).map((payload) => JSON.parse(payload) as Chunk);
          expect(chunks[0]?.choices?.[0]?.delta.role).toBe('assistant');
          const content = chunks.map((chunk) => chunk.choices?.[0]?.delta.content ?? '').join('');
          expect(content).toBe(tokens.join(''));
          if (fails) {
            expect(chunks.at(-1)?.error?.message).toBe('boom');
            return;
          }
          const finishes = chunks.flatMap((chunk) => (chunk.choices ?? []).map((choice) => choice.finish_reason)).filter((reason) => reason !== null);
          expect(finishes).toEqual([toolCalls ? 'tool_calls' : 'stop']);
          expect(chunks.flatMap((chunk) => chunk.choices?.[0]?.delta.tool_calls ?? [])).toHaveLength(toolCalls?.length ?? 0);
          expect(chunks.at(-1)?.usage !== undefined).toBe(usage);
        },
      ),
      runs(60),
    );
  });
});

describe('ChunkFormat', () => {
  const head = fc.record({ id: text, created: fc.integer({ min: 0, max: 2 ** 40 }), model: text });

  it('writes payloads that parse to the chunk they stand for, on one line', () => {
    fc.assert(
      fc.property(head, text, fc.array(toolCall, { maxLength: 2 }), fc.constantFrom<FinishReason>('stop', 'length', 'tool_calls'), fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }), (answer, piece, calls, reason, fields) => {
        const format = new ChunkFormat(answer);
        const one = (delta: unknown, finish: string | null): unknown => ({ ...answer, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
        const parsed = (payload: string): unknown => {
          expect(payload).not.toMatch(/[\r\n]/);
          return JSON.parse(payload);
        };
        const outs = toOpenAiToolCalls(calls, 1);
        expect(parsed(format.role(piece))).toEqual(one({ role: 'assistant', content: piece }, null));
        expect(parsed(format.content(piece))).toEqual(one({ content: piece }, null));
        expect(parsed(format.reasoning(piece))).toEqual(one({ reasoning: piece }, null));
        expect(parsed(format.toolCalls(outs, 2))).toEqual(one({ tool_calls: outs.map((call, at) => ({ index: 2 + at, ...call })) }, null));
        const plain = JSON.parse(JSON.stringify(fields)) as Record<string, unknown>;
        expect(parsed(format.finish(reason, fields))).toEqual({ ...(one({}, reason) as object), ...plain });
        expect(parsed(format.extra(fields))).toEqual({ ...answer, object: 'chat.completion.chunk', choices: [], ...plain });
        expect(parsed(format.usage(usageOf(3, 4)))).toEqual({ ...answer, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } });
      }),
      runs(300),
    );
  });
});
