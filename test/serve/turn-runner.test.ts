import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { UsageError } from '../../src/errors.js';
import { ollamaToolCallsOf } from '../../src/serve/openai.js';
import type { OllamaExtras } from '../../src/serve/openai.js';
import { bodyFor, settingsFor } from '../../src/serve/turn-runner.js';

const base = loadSettings({ home: mkdtempSync(join(tmpdir(), 'argo-runner-')), temperature: 0.3, numCtx: 4096 }, {});

describe('settingsFor: Argo fields are the CLI flags', () => {
  it('takes session and model from the request, the rest from config when not given', () => {
    const settings = settingsFor(base, { session: 'work', model: 'llama3', mode: 'argo', argo: null });
    expect(settings).toMatchObject({ session: 'work', model: 'llama3', modelFromFlag: true, api: 'chat', persona: 'neutral', verbosity: 'auto', mode: null });
    expect(settings.replay).toBe(base.replay);
  });

  it.each([
    [{ persona: 'teacher' }, { persona: 'teacher' }],
    [{ verbosity: 'short' as const }, { verbosity: 'short' }],
    [{ mode: 'code' }, { mode: 'code' }],
    [{ budget: 9000 }, { replay: expect.objectContaining({ budget: 9000 }) as unknown }],
  ])('%j → %j', (argo, expected) => {
    expect(settingsFor(base, { session: 's', model: 'm', mode: 'argo', argo })).toMatchObject(expected);
  });

  it('plain mode always uses the chat endpoint', () => {
    expect(settingsFor({ ...base, api: 'generate' }, { session: 'api', model: 'm', mode: 'plain', argo: null }).api).toBe('chat');
    expect(settingsFor({ ...base, api: 'generate' }, { session: 's', model: 'm', mode: 'argo', argo: {} }).api).toBe('generate');
  });

  it.each([[{ persona: 'nobody' }, /^argo\.persona: unknown persona "nobody"/], [{ mode: 'nope' }, /^argo\.mode: unknown mode "nope"/]])('refuses %j', (argo, message) => {
    expect(() => settingsFor(base, { session: 's', model: 'm', mode: 'argo', argo })).toThrow(UsageError);
    expect(() => settingsFor(base, { session: 's', model: 'm', mode: 'argo', argo })).toThrow(message);
  });
});

describe('bodyFor: what the client adds to the planned request', () => {
  const none: OllamaExtras = { options: {} };
  const cases: [string, 'argo' | 'plain', OllamaExtras, Record<string, unknown> | undefined][] = [
    ['Argo mode without extras adds nothing (the CLI request, byte for byte)', 'argo', none, undefined],
    ['plain mode sends its messages', 'plain', none, { messages: [{ role: 'user', content: 'q' }] }],
    ['client options lie over the configured ones, keeping their order', 'argo', { options: { top_p: 0.5, temperature: 0.9 } }, { options: { temperature: 0.9, num_ctx: 4096, top_p: 0.5 } }],
    ['format and tools pass through', 'argo', { options: {}, format: 'json', tools: [{ type: 'function', function: { name: 'f' } }] }, { format: 'json', tools: [{ type: 'function', function: { name: 'f' } }] }],
  ];
  it.each(cases)('%s', (_name, mode, extras, expected) => {
    const body = bodyFor(base, { mode, messages: [{ role: 'user', content: 'q' }] }, extras);
    expect(body).toEqual(expected);
    if (body?.options) expect(Object.keys(body.options)).toEqual(Object.keys((expected as { options: object }).options));
  });
});

describe('ollamaToolCallsOf', () => {
  it.each([
    [[{ function: { name: 'f', arguments: { a: 1 } } }], [{ function: { name: 'f', arguments: { a: 1 } } }]],
    [[{ id: 'x', function: { name: 'f', arguments: '{"a":2}' } }], [{ id: 'x', function: { name: 'f', arguments: { a: 2 } } }]],
    [[{ id: '', function: { name: 'f' } }], [{ function: { name: 'f', arguments: {} } }]],
    [[{ function: { name: 'f', arguments: 'not json' } }], [{ function: { name: 'f', arguments: { _raw: 'not json' } } }]],
    [[{ function: { name: 'f', arguments: [1] } }], [{ function: { name: 'f', arguments: { _value: [1] } } }]],
    [[null, 'x', { function: {} }, { nofunction: 1 }], []],
  ])('%j → %j', (input, expected) => {
    expect(ollamaToolCallsOf(input)).toEqual(expected);
  });
});
