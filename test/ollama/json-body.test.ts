// Item 15: a streamed reply labelled application/json (a proxy, a misconfigured server) is checked
// line by line like NDJSON; a whole answer (stream: false) is still read as one JSON value.
import { describe, expect, it, vi } from 'vitest';
import { OllamaTransport } from '../../src/ollama/transport.js';
import type { OllamaRequest } from '../../src/replay/prompt.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';

const ollama = await fakeOllamaPerFile({ tokens: ['a', 'b', 'c', 'd'] });

/** The real server's answer, with its content type replaced by application/json. */
const relabelled: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  const headers = new Headers(response.headers);
  headers.set('content-type', 'application/json; charset=utf-8');
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
};

function request(stream: boolean): OllamaRequest {
  return { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream } };
}

async function run(stream: boolean) {
  const transport = new OllamaTransport({ host: ollama.url, attempts: 1, initialDelayMs: 1, idleMs: 2000, fetch: relabelled });
  const texts: string[] = [];
  const outcome = await transport.stream(request(stream), { onText: (text) => texts.push(text) });
  return { outcome, texts };
}

describe('a streamed reply served as application/json', () => {
  it('a garbage line fails the turn as malformed, in order, without the client’s console warning', async () => {
    const warn = vi.spyOn(console, 'warn');
    ollama.setScenario({ malformedAfter: 2 });
    try {
      const { outcome, texts } = await run(true);
      expect(texts).toEqual(['a', 'b']);
      expect(outcome.status).toBe('error');
      expect(outcome.failure?.kind).toBe('malformed');
      expect(outcome.failure?.message).toMatch(/^Ollama sent a line that is not JSON \(.+\); the answer is incomplete$/);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      ollama.setScenario(undefined);
      warn.mockRestore();
    }
  });

  it('a clean stream is read as before', async () => {
    const { outcome, texts } = await run(true);
    expect(texts).toEqual(['a', 'b', 'c', 'd']);
    expect(outcome.status).toBe('ok');
  });

  it('a whole answer (stream: false) is one JSON value, read as before', async () => {
    const { outcome, texts } = await run(false);
    expect(texts.join('')).toBe('abcd');
    expect(outcome.status).toBe('ok');
  });
});
