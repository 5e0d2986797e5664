// Ollama's answers at the edges of its protocol: a refusal of what the model cannot do, naming the fix.
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_HINTS, SERVER_HINTS } from '../../src/ollama/fix-hints.js';
import { OllamaTransport, httpFailure } from '../../src/ollama/transport.js';
import type { StreamOutcome, TransportOptions, TransportRequest } from '../../src/ollama/transport.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';

const ollama = await fakeOllamaPerFile({ models: [{ name: 'argo', capabilities: ['completion', 'tools'] }], tokens: ['a', 'b'] });
afterEach(() => {
  ollama.setScenario(undefined);
  ollama.options.tokens = ['a', 'b'];
  ollama.requests.length = 0;
});

const H = 'http://ollama.test:11434';

function transport(options: Partial<TransportOptions> = {}): OllamaTransport {
  return new OllamaTransport({ host: ollama.url, attempts: 1, initialDelayMs: 1, idleMs: 5000, ...options });
}

async function run(t: OllamaTransport, request: TransportRequest): Promise<{ outcome: StreamOutcome; texts: string[] }> {
  const texts: string[] = [];
  const outcome = await t.stream(request, { onText: (text) => texts.push(text) });
  return { outcome, texts };
}

describe('httpFailure: a model that cannot think, asked to', () => {
  const refusal = Object.assign(new Error('"argo" does not support thinking'), { name: 'ResponseError', status_code: 400, error: '"argo" does not support thinking' });
  it.each([
    [CLI_HINTS, 'ask with --think off (or remove "think" from config.json), or choose a thinking model with --model ("ollama show MODEL" lists "thinking" under its capabilities)'],
    [SERVER_HINTS, 'leave out "reasoning_effort" (and "think" in argo serve\'s config.json), or choose a thinking model with the request\'s "model" ("ollama show MODEL" lists "thinking" under its capabilities)'],
  ])('names the fix in the caller\'s terms (%#)', (hints, fix) => {
    expect(httpFailure(H, refusal, hints)).toEqual({ kind: 'http', httpStatus: 400, message: `Ollama at ${H} answered HTTP 400: "argo" does not support thinking; ${fix}` });
  });

  it('as the stand-in refuses it', async () => {
    const { outcome } = await run(transport(), { endpoint: '/api/chat', body: { model: 'argo', messages: [{ role: 'user', content: 'hi' }], stream: true, think: true } });
    expect(outcome.failure?.message).toBe(`Ollama at ${ollama.url} answered HTTP 400: "argo" does not support thinking; ask with --think off (or remove "think" from config.json), or choose a thinking model with --model ("ollama show MODEL" lists "thinking" under its capabilities)`);
  });
});
