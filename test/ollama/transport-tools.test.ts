import { describe, expect, it } from 'vitest';
import { OllamaTransport } from '../../src/ollama/transport.js';
import type { TransportRequest } from '../../src/ollama/transport.js';
import { scriptRounds } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';

const ollama = await fakeOllamaPerFile({
  models: [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }, { name: 'gpt-oss:20b', family: 'gptoss', capabilities: ['completion', 'tools'] }],
});

const TOOLS = [{ type: 'function' as const, function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

const request: TransportRequest = {
  endpoint: '/api/chat',
  body: {
    model: 'argo',
    messages: [
      { role: 'user', content: 'read a.txt' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1_0', function: { name: 'read_file', arguments: { path: 'a.txt' } } }] },
      { role: 'tool', tool_name: 'read_file', tool_call_id: 'call_1_0', content: '{"content":"hi"}' },
    ],
    tools: TOOLS,
    stream: true,
  },
};

describe('OllamaTransport with tools', () => {
  it('sends tools and tool messages as given and surfaces tool calls from every chunk, as sent', async () => {
    scriptRounds(ollama, [{ reply: 'Let me look.', splitToolCalls: true, toolCalls: [{ function: { name: 'read_file', arguments: { path: 'b.txt' } } }, { id: 'x', function: { name: 'read_file', arguments: '{"path":"c.txt"}' } }] }]);
    const before = ollama.requests.length;
    const hooked: unknown[][] = [];
    let chunks = 0;
    let text = '';
    const outcome = await new OllamaTransport({ host: ollama.url, attempts: 1, initialDelayMs: 1, idleMs: 5000 }).stream(request, {
      onText: (t) => (text += t),
      onToolCalls: (calls) => hooked.push(calls),
      onChunk: () => chunks++,
    });
    expect(outcome.status).toBe('ok');
    expect(text).toBe('Let me look.');
    expect(outcome.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_[a-z0-9]{8}$/) as unknown, function: { index: 0, name: 'read_file', arguments: { path: 'b.txt' } } },
      { id: 'x', function: { index: 1, name: 'read_file', arguments: '{"path":"c.txt"}' } },
    ]);
    expect(hooked).toHaveLength(2);
    expect(chunks).toBeGreaterThanOrEqual(3);
    // The version is asked first: an Ollama too old for tools would ignore them.
    expect(ollama.requests.slice(before).map((r) => r.path)).toEqual(['/api/version', '/api/chat']);
    const sent = JSON.parse(ollama.requests[before + 1]?.body ?? '{}') as { tools: unknown; messages: unknown };
    expect(sent.tools).toEqual(TOOLS);
    expect(sent.messages).toEqual(request.body.messages);
  });

  it('collects the calls a done:true line carries (gpt-oss: harmony holds a call until the answer ends), with the words that came with them', async () => {
    scriptRounds(ollama, [{ reply: 'Let me look.', toolCalls: [{ function: { name: 'read_file', arguments: { path: 'b.txt' } } }] }]);
    ollama.options.textInDone = true;
    try {
      const seen: string[] = [];
      const outcome = await new OllamaTransport({ host: ollama.url, attempts: 1, initialDelayMs: 1, idleMs: 5000 }).stream({ endpoint: '/api/chat', body: { ...request.body, model: 'gpt-oss:20b' } }, {
        onText: (t) => seen.push(`text ${t}`),
        onToolCalls: (calls) => seen.push(`calls ${calls.length}`),
        onChunk: () => seen.push('chunk'),
      });
      expect(outcome).toMatchObject({ status: 'ok', metrics: { done_reason: 'stop' } });
      expect(outcome.toolCalls).toEqual([{ id: expect.stringMatching(/^call_[a-z0-9]{8}$/) as unknown, function: { index: 0, name: 'read_file', arguments: { path: 'b.txt' } } }]);
      // The last line brought the end of the words and the call: both taken before the line's done was read.
      expect(seen.slice(-3)).toEqual(['text  look.', 'calls 1', 'chunk']);
      expect(seen.filter((event) => event.startsWith('calls'))).toEqual(['calls 1']);
    } finally {
      delete ollama.options.textInDone;
    }
  });

  it('a plain answer has no tool calls', async () => {
    scriptRounds(ollama, [{ reply: 'hello' }]);
    const outcome = await new OllamaTransport({ host: ollama.url, attempts: 1, initialDelayMs: 1, idleMs: 5000 }).stream(request, { onText: () => undefined });
    expect(outcome.toolCalls).toEqual([]);
  });
});
