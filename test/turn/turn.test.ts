import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import type { StreamHooks, StreamOutcome } from '../../src/ollama/transport.js';
import type { OllamaRequest } from '../../src/replay/prompt.js';
import { prepareTurn, runTurn } from '../../src/turn/turn.js';
import type { Answerer, Transport, TurnInput, TurnPorts } from '../../src/turn/turn.js';
import { logLines } from '../support/run-argo.js';

const METRICS: StreamOutcome['metrics'] = {
  total_duration: 5,
  load_duration: 1,
  prompt_eval_count: 3,
  prompt_eval_duration: 2,
  eval_count: 2,
  eval_duration: 2,
  done_reason: 'stop',
};

/** A transport that answers every request with `words` and remembers the requests it got. */
function scriptedTransport(words: string[], outcome: Partial<StreamOutcome> = {}): Transport & { requests: OllamaRequest[] } {
  const requests: OllamaRequest[] = [];
  return {
    requests,
    stream: (request: OllamaRequest, hooks: StreamHooks) => {
      requests.push(request);
      for (const word of words) hooks.onText(word);
      return Promise.resolve({ status: 'ok', failure: null, metrics: METRICS, attempts: 1, ...outcome });
    },
    installedModels: () => Promise.resolve(['llama3.2:latest']),
  };
}

function ports(transport: Transport, extra: Partial<TurnPorts> = {}): TurnPorts {
  let tick = 0;
  let id = 0;
  return {
    transport,
    now: () => new Date('2025-03-04T05:06:07.000Z'),
    clock: () => (tick += 10),
    newId: () => `turn${String(++id).padStart(8, '0')}`,
    rescue: () => Promise.reject(new Error('no rescue expected')),
    ...extra,
  };
}

const home = (): string => mkdtempSync(join(tmpdir(), 'argo-turn-'));
const input = (prompt: string, extra: Partial<TurnInput> = {}): TurnInput => ({ prompt, replay: { kind: 'none' }, log: true, ollamaStream: true, ...extra });

describe("config.json's think: sent only to a model that can think", () => {
  const withConfig = (config: Record<string, unknown>, flags: Record<string, string> = {}) => {
    const dir = home();
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    return loadSettings({ home: dir, session: 's', ...flags }, {});
  };
  // [case, config, --think, capabilities listed (or a failure), think sent]
  it.each<[string, Record<string, unknown>, string | undefined, readonly string[] | 'fails', unknown]>([
    ['config "high", a model that cannot think: left out', { think: 'high' }, undefined, ['completion'], undefined],
    ['config true, a model that cannot think: left out', { think: true }, undefined, ['completion', 'tools'], undefined],
    ['config "high", a thinking model: sent', { think: 'high' }, undefined, ['completion', 'thinking'], 'high'],
    ['config false: sent to any model (Ollama takes it)', { think: false }, undefined, ['completion'], false],
    ['an Ollama that lists no capabilities answers for itself: sent', { think: 'high' }, undefined, [], 'high'],
    ['capabilities that cannot be asked: sent, Ollama answers for itself', { think: 'high' }, undefined, 'fails', 'high'],
    ['--think high is asked of this model: sent', {}, 'high', ['completion'], 'high'],
    ['--think over config: sent', { think: 'low' }, 'high', ['completion'], 'high'],
    ['no think at all: none', {}, undefined, ['completion'], undefined],
  ])('%s', async (_case, config, flag, listed, sent) => {
    const settings = withConfig(config, flag === undefined ? {} : { think: flag });
    const capabilities = (): Promise<readonly string[]> => (listed === 'fails' ? Promise.reject(new Error('down')) : Promise.resolve(listed));
    const { plan } = await prepareTurn(settings, input('hi'), { capabilities });
    expect((plan.request.body as { think?: unknown }).think).toEqual(sent);
  });

  it('the turn logs what was sent, so rerun rebuilds it', async () => {
    const settings = withConfig({ think: 'high' });
    const transport = { ...scriptedTransport(['ok']), modelCapabilities: () => Promise.resolve(['completion']) };
    const result = await runTurn(settings, input('hi'), ports(transport));
    expect('think' in (transport.requests[0]?.body ?? {})).toBe(false);
    expect(result.entry.think).toBeUndefined();
  });
});

describe('runTurn: the turn as a use case', () => {
  it('plans, streams through onText, and logs one line with the injected id and clock', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'work' }, {});
    const transport = scriptedTransport(['Hello', ' there']);
    const seen: string[] = [];
    const result = await runTurn(settings, input('Explain closures'), ports(transport, { onText: (text) => seen.push(text) }));
    expect(seen).toEqual(['Hello', ' there']);
    expect(result.entry).toMatchObject({ id: 'turn00000001', session: 'work', status: 'ok', model_response: 'Hello there', entry_type: 'instruction' });
    expect(result.entry.timings).toMatchObject({ first_token_ms: 10, total_ms: 30, eval_count: 2 });
    const [line] = logLines(dir);
    expect(line).toMatchObject({ id: 'turn00000001', user_prompt: 'Explain closures', model_response: 'Hello there' });
    expect(line?.session_id).toBe(result.entry.session_id);
    expect(transport.requests).toEqual([result.plan.request]);
  });

  it('replays the session: the second turn sends the first as history, the same request prepareTurn builds', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 's' }, {});
    const transport = scriptedTransport(['ok']);
    await runTurn(settings, input('Write a parser'), ports(transport));
    const second = input('Add tests', { replay: { kind: 'session' } });
    const planned = await prepareTurn(settings, second);
    const result = await runTurn(settings, second, ports(transport, { newId: () => 'turn2' }));
    expect(transport.requests.at(-1)).toEqual(planned.plan.request);
    expect(result.entry.replayed_ids).toHaveLength(1);
    expect(JSON.stringify(transport.requests.at(-1))).toContain('Write a parser');
  });

  it.each<[string, string[], { model_response: string; thinking?: string }]>([
    ['reasoning inline ahead of the answer is logged as thinking', ['<think>\nAdd them.\n', '</think>\n\n', 'It is 4.'], { model_response: 'It is 4.', thinking: 'Add them.' }],
    ['an answer that is only reasoning (cut while reasoning) has no words', ['<think>\nStill adding'], { model_response: '', thinking: 'Still adding' }],
    ['a tag further on is part of the answer', ['Write <think> to open a block.'], { model_response: 'Write <think> to open a block.' }],
  ])('%s; it streams as it came, and the next replay sends only the answer', async (_case, words, logged) => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'think' }, {});
    const seen: string[] = [];
    const result = await runTurn(settings, input('What is 2+2?'), ports(scriptedTransport(words), { onText: (text) => seen.push(text) }));
    expect(seen).toEqual(words);
    expect(result.entry.status).toBe('ok');
    expect(logLines(dir)[0]).toEqual(expect.objectContaining(logged));
    if (logged.thinking === undefined) expect(logLines(dir)[0]).not.toHaveProperty('thinking');
    const next = await prepareTurn(settings, input('And 3+3?', { replay: { kind: 'session' } }));
    expect(next.plan.request.body).toMatchObject({ messages: [expect.anything(), { role: 'user', content: 'What is 2+2?' }, { role: 'assistant', content: logged.model_response }, { role: 'user', content: 'And 3+3?' }] });
  });

  it('reasoning Ollama gave in its own field stays the reasoning; the text is the answer as written', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'think' }, {});
    const transport: Transport = {
      stream: (_request, hooks) => {
        hooks.onThinking?.('Add them.');
        hooks.onText('<think>kept</think> It is 4.');
        return Promise.resolve({ status: 'ok', failure: null, metrics: METRICS, attempts: 1 });
      },
      installedModels: () => Promise.resolve([]),
    };
    await runTurn(settings, input('What is 2+2?'), ports(transport));
    expect(logLines(dir)[0]).toMatchObject({ model_response: '<think>kept</think> It is 4.', thinking: 'Add them.' });
  });

  it('plain mode sends the caller messages as they are, with caller body fields', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'api' }, {});
    const transport = scriptedTransport(['fine']);
    const messages = [
      { role: 'system' as const, content: 'be terse' },
      { role: 'user' as const, content: 'hi' },
    ];
    const result = await runTurn(settings, input('hi', { body: { messages, format: 'json' } }), ports(transport));
    expect(transport.requests[0]?.body).toMatchObject({ messages, format: 'json', stream: true });
    expect(result.entry.user_prompt).toBe('hi');
  });

  it('a pluggable answer step replaces the single stream and adds its own log fields', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir }, {});
    const answer: Answerer = (_request, context) => {
      context.onText('done');
      return Promise.resolve({ status: 'ok', response: 'done', failure: null, metrics: METRICS, largestPromptEvalCount: null, firstTokenMs: 1, fields: { iterations: 2 } });
    };
    const result = await runTurn(settings, input('List files'), ports(scriptedTransport([]), { answer }));
    expect(logLines(dir)[0]).toMatchObject({ model_response: 'done', iterations: 2 });
    expect(result.entry.status).toBe('ok');
  });

  it('an error outcome is logged with the failure in words; a missing model lists the installed ones', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, model: 'nope' }, {});
    const transport = scriptedTransport([], { status: 'error', failure: { kind: 'model-missing', message: "model 'nope' not found" } });
    const result = await runTurn(settings, input('hi'), ports(transport));
    expect(result.failure).toContain('installed: llama3.2:latest');
    expect(logLines(dir)[0]).toMatchObject({ status: 'error', error: result.failure });
  });

  it('when the log cannot be written the turn is rescued and the error says where', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir }, {});
    // A file where the logs folder belongs: no append can succeed, whoever runs the test.
    writeFileSync(join(dir, 'logs'), '');
    const rescued: string[] = [];
    const failing = runTurn(settings, input('keep me'), ports(scriptedTransport(['a']), { rescue: (text) => (rescued.push(text), Promise.resolve('/safe/place')) }));
    await expect(failing).rejects.toThrow(/the turn was saved to \/safe\/place/);
    expect(JSON.parse(rescued[0] ?? '{}')).toMatchObject({ user_prompt: 'keep me', model_response: 'a' });
  });
});
