import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from 'date-fns/format';
import { describe, expect, it, vi } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { EMPTY_METRICS } from '../../src/ollama/transport.js';
import { logLines } from '../support/run-argo.js';
import { thrown } from '../support/thrown.js';
import { ollamaToolCallsOf } from '../../src/serve/openai.js';
import type { OllamaExtras } from '../../src/serve/openai.js';
import { ApiError } from '../../src/serve/errors.js';
import { SIDE_EFFECTS_OFF, bodyFor, clientFacts, logOutcomeOf, serverTools, settingsFor, toolEventOf, turnRunner } from '../../src/serve/turn-runner.js';
import { SessionUpdateError } from '../../src/sessions/record-turn.js';
import { UnloggedTurnError } from '../../src/turn/turn.js';
import { QUEUED_ERROR } from '../../src/log/unfinished.js';
import { ToolError } from '../../src/tools/types.js';
import type { Tool } from '../../src/tools/types.js';
import type { RunnerPorts } from '../../src/serve/turn-runner.js';
import type { Transport } from '../../src/turn/turn.js';
import type { Settings } from '../../src/config/settings.js';
import type { RunInput, TurnHooks } from '../../src/serve/types.js';
import type { ArgoFields } from '../../src/serve/schema.js';
import type { Toolbox } from '../../src/tools/catalog.js';
import type { AgentEvent } from '../../src/agent/loop.js';

const base = loadSettings({ home: mkdtempSync(join(tmpdir(), 'argo-runner-')), temperature: 0.3, numCtx: 4096 }, {});
/** What a runner's tools run with, for the tests of a turn that asks for none. */
const TOOLS: RunnerPorts['tools'] = { root: tmpdir(), allowSideEffects: false };

/** A runner on the data home `home` whose Ollama answers with `stream`, at a fixed instant; `ports` replace the rest. */
function runnerOver(home: string, stream: Transport['stream'], ports: Partial<RunnerPorts> = {}): ReturnType<typeof turnRunner> {
  return turnRunner(loadSettings({ home }, {}), {
    transport: () => ({ stream, installedModels: () => Promise.resolve(['m']) }),
    now: () => new Date('2026-01-01T00:00:00Z'),
    clock: () => 0,
    rescue: () => Promise.reject(new Error('no rescue expected')),
    tools: TOOLS,
    ...ports,
  });
}

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

  it.each<[string, 'argo' | 'plain', Record<string, unknown>, string | undefined]>([
    ['Argo mode: the client\'s sampling values over config.json\'s, as -o over config', 'argo', { temperature: 0.9, num_ctx: 4096, top_p: 0.5 }, 'low'],
    ['plain mode: config.json\'s only (the client\'s go in the body, with OpenAI\'s defaults)', 'plain', { temperature: 0.3, num_ctx: 4096 }, undefined],
  ])('%s; reasoning effort as --think', (_name, mode, options, think) => {
    const settings = settingsFor(base, { session: 's', model: 'm', mode, argo: null, extras: { options: { top_p: 0.5, temperature: 0.9 }, think: 'low' } });
    expect(settings.options).toEqual(options);
    expect(settings.think).toBe(think);
  });

  // config.json's think is a default, relaxed for a model that cannot think; the client's reasoning effort is asked of this model.
  it.each<[string, 'argo' | 'plain', 'low' | undefined, boolean | undefined]>([
    ['Argo mode without reasoning effort: config\'s, relaxable', 'argo', undefined, true],
    ['Argo mode with reasoning effort: asked of this model', 'argo', 'low', undefined],
    ['plain mode: config\'s in the settings (the client\'s goes in the body)', 'plain', 'low', true],
  ])('%s', (_name, mode, effort, fromConfig) => {
    const configured = { ...base, think: 'high' as const, thinkFromConfig: true };
    const settings = settingsFor(configured, { session: 's', model: 'm', mode, argo: null, extras: { options: {}, ...(effort !== undefined ? { think: effort } : {}) } });
    expect(settings.thinkFromConfig).toBe(fromConfig);
  });

  it.each<[string, 'argo' | 'plain', string | null]>([
    ['argo mode: config.json\'s mode applies', 'argo', 'code'],
    ['plain mode: the client\'s messages carry no style, so none is logged', 'plain', null],
  ])('%s', (_name, mode, active) => {
    expect(settingsFor({ ...base, mode: 'code' }, { session: 's', model: 'm', mode, argo: null }).mode).toBe(active);
  });

  it('plain mode always uses the chat endpoint', () => {
    expect(settingsFor({ ...base, api: 'generate' }, { session: 'api', model: 'm', mode: 'plain', argo: null }).api).toBe('chat');
    expect(settingsFor({ ...base, api: 'generate' }, { session: 's', model: 'm', mode: 'argo', argo: {} }).api).toBe('generate');
  });

  const PERSONAS = 'critic, expert, friendly, neutral, teacher';
  const MODES = 'code, review, shell, writing';
  it.each<[ArgoFields, string, string]>([
    [{ persona: 'nobody' }, 'argo.persona', `argo.persona: unknown persona "nobody"; use one of this server's personas (${PERSONAS}), or ask the server's operator to add it under "personas" in config.json`],
    [{ persona: 'nobody', fromHeaders: ['persona'] }, 'X-Argo-Persona', `X-Argo-Persona: unknown persona "nobody"; use one of this server's personas (${PERSONAS}), or ask the server's operator to add it under "personas" in config.json`],
    [{ mode: 'nope' }, 'argo.mode', `argo.mode: unknown mode "nope"; use one of this server's modes (${MODES}), or ask the server's operator to add it under "modes" in config.json`],
    [{ mode: 'nope', fromHeaders: ['mode'] }, 'X-Argo-Mode', `X-Argo-Mode: unknown mode "nope"; use one of this server's modes (${MODES}), or ask the server's operator to add it under "modes" in config.json`],
    // A header the body overrode is not the one refused.
    [{ mode: 'nope', persona: 'pirate', fromHeaders: ['persona'] }, 'argo.mode', `argo.mode: unknown mode "nope"; use one of this server's modes (${MODES}), or ask the server's operator to add it under "modes" in config.json`],
    // A name of megabytes is quoted by its head.
    [{ persona: 'x'.repeat(5000) }, 'argo.persona', `argo.persona: unknown persona "${'x'.repeat(64)}…"; use one of this server's personas (${PERSONAS}), or ask the server's operator to add it under "personas" in config.json`],
  ])('refuses %j with a 400 naming %s', (argo, param, message) => {
    const error = thrown(() => settingsFor(base, { session: 's', model: 'm', mode: 'argo', argo }));
    expect(error).toMatchObject({ status: 400, param, code: 'invalid_value', message });
  });

  it('a server with many personas counts them rather than list them', () => {
    const personas = Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`p${index}`, 'x']));
    const many = { ...base, style: { ...base.style, personas: { ...base.style.personas, ...personas } } };
    const error = thrown(() => settingsFor(many, { session: 's', model: 'm', mode: 'argo', argo: { persona: 'nobody' } }));
    expect(error).toMatchObject({ param: 'argo.persona', message: 'argo.persona: unknown persona "nobody"; use one of the 25 personas this server has, or ask the server\'s operator to add it under "personas" in config.json' });
  });

  it.each<[ArgoFields, string]>([
    [{ budget: 200 }, 'argo.budget'],
    [{ budget: 200, fromHeaders: ['budget'] }, 'X-Argo-Budget'],
  ])("refuses a budget below what the server's protected turns need, as the CLI's --budget is: %j → %s", (argo, param) => {
    const protecting = { ...base, replay: { ...base.replay, protectedTurns: 10 } };
    const error = thrown(() => settingsFor(protecting, { session: 's', model: 'm', mode: 'argo', argo }));
    expect(error).toMatchObject({ status: 400, param, code: 'invalid_value', message: `${param}: 10 protected turns need a budget of at least 210 (budget is 200)` });
    expect(settingsFor(protecting, { session: 's', model: 'm', mode: 'argo', argo: { budget: 210 } }).replay.budget).toBe(210);
  });
});

describe('settingsFor with the tools field', () => {
  it('asks for the chat endpoint and names the toolsets as --tools would', () => {
    const settings = settingsFor({ ...base, api: 'generate' }, { session: 's', model: 'm', mode: 'argo', argo: { tools: ['fs', 'web'] } }, ['fs', 'web']);
    expect(settings.api).toBe('chat');
    expect(settings.agent).toMatchObject({ tools: ['fs', 'web'], toolsSource: 'argo.tools', maxIterations: base.agent.maxIterations });
  });

  it('leaves the agent settings alone without tools', () => {
    expect(settingsFor(base, { session: 's', model: 'm', mode: 'argo', argo: {} }).agent).toBe(base.agent);
  });
});

describe('toolEventOf: what a client sees of the loop', () => {
  it.each<[AgentEvent, unknown]>([
    // The call's arguments are for the CLI's trace: a client is not sent them.
    [{ type: 'tool_status', id: 'c1', name: 'read_file', status: 'running', args: { path: 'a.txt' } }, { type: 'tool_status', id: 'c1', name: 'read_file', status: 'running' }],
    [{ type: 'tool_status', id: 'c1', name: 'read_file', status: 'success', ms: 4, args: { path: 'a.txt' } }, { type: 'tool_status', id: 'c1', name: 'read_file', status: 'success', ms: 4 }],
    [{ type: 'tool_execution_error', id: 'c2', name: 'write_file', message: 'no' }, { type: 'tool_execution_error', id: 'c2', name: 'write_file', message: 'no' }],
    [{ type: 'text', text: 'hi' }, null],
    [{ type: 'reask', attempt: 1, of: 3, reason: 'bad' }, null],
    [{ type: 'needs_input', id: 'c3', name: 'read_file', parameter: 'path' }, null],
    [{ type: 'compacted', records: [] }, null],
  ])('%j → %j', (event, expected) => {
    expect(toolEventOf(event)).toEqual(expected);
  });
});

describe('serverTools: the side-effect policy', () => {
  const tool = (name: string, sideEffects: boolean): Tool => ({ name, description: '', parameters: { type: 'object', properties: {} }, sideEffects, run: () => Promise.resolve({ ran: name }) });
  const context = { root: tmpdir(), home: tmpdir(), signal: new AbortController().signal, round: 1 };

  it('with --allow-side-effects every tool runs as it is', async () => {
    const tools = serverTools([tool('read', false), tool('write', true)], true);
    expect(await Promise.all(tools.map((each) => each.run({}, context)))).toEqual([{ ran: 'read' }, { ran: 'write' }]);
  });

  it('without it a side-effecting tool fails as permanent, saying how to allow it; the others run', async () => {
    const [read, write] = serverTools([tool('read', false), tool('write', true)], false);
    expect(await read?.run({}, context)).toEqual({ ran: 'read' });
    const error = await write?.run({}, context).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolError);
    expect(error).toMatchObject({ message: SIDE_EFFECTS_OFF, retryable: false });
    expect(write).toMatchObject({ name: 'write', sideEffects: true });
  });

  it('a call its tool says only reads (process status) runs without it; the tool\'s other calls are refused', async () => {
    const [looker] = serverTools([{ ...tool('process', true), readsOnly: (args) => args.operation === 'status' }], false);
    expect(await looker?.run({ operation: 'status' }, context)).toEqual({ ran: 'process' });
    await expect(looker?.run({ operation: 'start' }, context)).rejects.toMatchObject({ message: SIDE_EFFECTS_OFF, retryable: false });
  });
});

describe('turnRunner with the tools field', () => {
  const input = (tools: string[], fromHeaders?: ['tools']): RunInput => ({
    turnId: 't1',
    session: 's',
    mode: 'argo',
    model: 'm',
    userPrompt: 'hi',
    messages: [],
    argo: { tools, ...(fromHeaders ? { fromHeaders } : {}) },
    extras: { options: {} },
    signal: new AbortController().signal,
    round: 1,
  });
  const hooks = { onText: () => undefined, onToolCalls: () => undefined };
  const failingTransport = (): ReturnType<RunnerPorts['transport']> => ({
    stream: () => Promise.reject(new Error('no model here')),
    installedModels: () => Promise.resolve([]),
  });
  const ports = (tools: RunnerPorts['tools']): RunnerPorts => ({
    transport: failingTransport,
    now: () => new Date('2026-01-01T00:00:00Z'),
    clock: () => 0,
    rescue: () => Promise.resolve(''),
    tools,
  });
  const refusal = async (promise: Promise<unknown>): Promise<ApiError> => {
    const error = await promise.then(() => null, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  };

  it.each([
    // A name nothing has is unknown_tool; a list that cannot be read as one is invalid_value.
    [['nosuchset'], 'unknown_tool', /^argo\.tools: unknown toolset or tool "nosuchset"/],
    [['fs', '-lok'], 'unknown_tool', /^argo\.tools: unknown toolset or tool "lok"|^argo\.tools: .*"-lok"/],
    [['fs', 'none'], 'invalid_value', /^argo\.tools: "none" turns tools off/],
    [['fs', '-'], 'invalid_value', /^argo\.tools: "-" takes nothing away/],
  ])('%j → 400 %s on argo.tools', async (names, code, message) => {
    const error = await refusal(turnRunner(base, ports({ root: tmpdir(), allowSideEffects: false })).run(input(names), hooks));
    expect(error).toMatchObject({ status: 400, param: 'argo.tools', code });
    expect(error.message).toMatch(message);
  });

  it('an unknown toolset sent as X-Argo-Tools → 400 unknown_tool naming the header', async () => {
    const error = await refusal(turnRunner(base, ports({ root: tmpdir(), allowSideEffects: false })).run(input(['nosuchset'], ['tools']), hooks));
    expect(error).toMatchObject({ status: 400, param: 'X-Argo-Tools', code: 'unknown_tool' });
    expect(error.message).toMatch(/^X-Argo-Tools: unknown toolset or tool "nosuchset"/);
  });

  it.each<[string, Partial<Settings['agent']>, string[], string]>([
    ['a toolset cycle', { toolsets: { a: { includes: ['b'] }, b: { includes: ['a'] } } }, ['a'], 'toolset cycle: a → b → a'],
    ['a toolset listing an unknown tool', { toolsets: { mine: { tools: ['nope'] } } }, ['mine'], 'toolset "mine" lists unknown tool "nope"'],
    ['a toolset including an unknown toolset', { toolsets: { mine: { includes: ['ghost'] } } }, ['mine'], 'toolset "mine" includes unknown toolset "ghost"'],
    ['a command tool named as a built-in', { commandTools: { read_file: { description: 'x', argv: ['cat'] } } }, ['fs'], 'commandTools."read_file" has the name of a built-in tool'],
  ])('%s in the server\'s config.json → 500 tool_config_invalid, not the client\'s to fix', async (_name, agent, names, problem) => {
    const settings = { ...base, agent: { ...base.agent, ...agent } };
    const error = await refusal(turnRunner(settings, ports({ root: tmpdir(), allowSideEffects: false })).run(input(names), hooks));
    expect(error).toMatchObject({ status: 500, type: 'server_error', param: null, code: 'tool_config_invalid', headers: { 'X-Should-Retry': 'false' } });
    expect(error.message).toContain(problem);
    expect(error.message).toMatch(/^the server's config\.json defines these tools in a way that cannot be used: (?!config\.json)/);
    expect(error.message).toMatch(/restart argo serve$/);
  });

  it('closes the toolbox after the turn, however it ends', async () => {
    const close = vi.fn(() => Promise.resolve());
    const box: Toolbox = { resolution: { tools: [], mcpServers: [], expanded: [] }, expanded: [], tools: [], unavailable: [], mcpToolsets: new Map(), takenAway: [], close };
    const load = vi.fn(() => Promise.resolve(box));
    await turnRunner(base, ports({ root: tmpdir(), allowSideEffects: false, load })).run(input(['fs']), hooks).catch(() => null);
    expect(load).toHaveBeenCalledWith(['fs'], expect.objectContaining({ agent: expect.objectContaining({ tools: ['fs'] }) as unknown }));
    expect(close).toHaveBeenCalledTimes(1);
  });
});

describe('clientFacts: what the log says of the parts a client added', () => {
  const messages = [{ role: 'user' as const, content: 'q' }, { role: 'assistant' as const, content: 'a' }, { role: 'user' as const, content: 'q2' }];
  it.each<[string, 'plain' | 'argo', Record<string, unknown> | undefined, Record<string, unknown>]>([
    ['Argo mode, nothing added', 'argo', undefined, {}],
    ['Argo mode with a format and log probabilities', 'argo', { format: 'json', logprobs: true, top_logprobs: 2 }, { client_fields: ['format', 'logprobs', 'top_logprobs'] }],
    ['plain mode: its messages counted, its options logged as options', 'plain', { messages, options: { temperature: 1 } }, { client_messages: 3 }],
    ['plain mode with client tools', 'plain', { messages, options: {}, tools: [] }, { client_messages: 3, client_fields: ['tools'] }],
  ])('%s', (_case, mode, body, facts) => {
    expect(clientFacts({ mode, messages }, body)).toEqual(facts);
  });
});

describe('bodyFor: what the client adds to the planned request', () => {
  const none: OllamaExtras = { options: {} };
  const cases: [string, 'argo' | 'plain', OllamaExtras, Record<string, unknown> | undefined][] = [
    ['Argo mode without extras adds nothing (the CLI request, byte for byte)', 'argo', none, undefined],
    ['plain mode sends its messages; OpenAI\'s top_p default where config.json sets none', 'plain', none, { messages: [{ role: 'user', content: 'q' }], options: { temperature: 0.3, num_ctx: 4096, top_p: 1 } }],
    ['plain mode: the client\'s values win', 'plain', { options: { top_p: 0.5, temperature: 0.9 } }, { messages: [{ role: 'user', content: 'q' }], options: { temperature: 0.9, num_ctx: 4096, top_p: 0.5 } }],
    ['Argo mode: client options are settings (settingsFor), not body fields', 'argo', { options: { top_p: 0.5, temperature: 0.9 }, think: 'low' }, undefined],
    ['plain mode: think passes through', 'plain', { options: {}, think: 'low' }, { messages: [{ role: 'user', content: 'q' }], options: { temperature: 0.3, num_ctx: 4096, top_p: 1 }, think: 'low' }],
    ['format and tools pass through', 'argo', { options: {}, format: 'json', tools: [{ type: 'function', function: { name: 'f' } }] }, { format: 'json', tools: [{ type: 'function', function: { name: 'f' } }] }],
    ['Argo mode: log probabilities are asked of the answer, after the rest', 'argo', { options: {}, format: 'json', logprobs: true, top_logprobs: 3 }, { format: 'json', logprobs: true, top_logprobs: 3 }],
    ['plain mode: logprobs without alternatives', 'plain', { options: {}, logprobs: true }, { messages: [{ role: 'user', content: 'q' }], options: { temperature: 0.3, num_ctx: 4096, top_p: 1 }, logprobs: true }],
  ];
  it.each(cases)('%s', (_name, mode, extras, expected) => {
    const body = bodyFor(base, { mode, messages: [{ role: 'user', content: 'q' }] }, extras);
    expect(body).toEqual(expected);
    if (body?.options) expect(Object.keys(body.options)).toEqual(Object.keys((expected as { options: object }).options));
  });

  // The order: the client's value, then config.json's options, then OpenAI's defaults (as Ollama's own OpenAI layer sends them).
  const unconfigured = { ...base, options: {} };
  it.each([
    ['nothing set: OpenAI\'s defaults', unconfigured, none, { temperature: 1, top_p: 1 }],
    ['config.json\'s temperature beats the default', { ...base, options: { temperature: 0.3 } }, none, { temperature: 0.3, top_p: 1 }],
    ['the client beats config.json', { ...base, options: { temperature: 0.3 } }, { options: { temperature: 0 } }, { temperature: 0, top_p: 1 }],
    ['the client beats the defaults', unconfigured, { options: { top_p: 0.1, seed: 2 } }, { temperature: 1, top_p: 0.1, seed: 2 }],
  ])('plain mode sampling: %s', (_name, settings, extras, options) => {
    expect(bodyFor(settings, { mode: 'plain', messages: [] }, extras)?.options).toEqual(options);
  });
  it('Argo mode adds no defaults: the model\'s own apply, as for the CLI', () => {
    expect(bodyFor(unconfigured, { mode: 'argo', messages: [] }, none)).toBeUndefined();
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

describe('turnRunner: log probabilities', () => {
  it('asks Ollama for them in the turn\'s one request and hands each piece\'s to its hook; a call Argo cannot read hands its over alone', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-runner-logprobs-'));
    const sent: unknown[] = [];
    const lp = (token: string) => [{ token, logprob: -1 }];
    const runner = runnerOver(home, (request, hooks) => {
      sent.push(request.body);
      hooks.onThinking?.('hm', lp('hm'));
      hooks.onText('Hi', lp('Hi'));
      hooks.onToolCalls?.([{ function: { name: 'f', arguments: {} } }], lp('call'));
      hooks.onToolCalls?.([null], lp('broken'));
      hooks.onLogprobs?.(lp('held'));
      return Promise.resolve({ status: 'ok', failure: null, metrics: EMPTY_METRICS, attempts: 1 });
    });
    const heard: [string, unknown][] = [];
    const result = await runner.run(
      { turnId: 'turn00000001', session: 's', mode: 'argo', model: 'm', userPrompt: 'hi', messages: [], argo: null, extras: { options: {}, logprobs: true, top_logprobs: 2 }, signal: new AbortController().signal, round: 1 },
      {
        onThinking: (text, logprobs) => heard.push([`thinking ${text}`, logprobs]),
        onText: (text, logprobs) => heard.push([`text ${text}`, logprobs]),
        onToolCalls: (calls, logprobs) => heard.push([`calls ${calls.length}`, logprobs]),
        onLogprobs: (logprobs) => heard.push(['alone', logprobs]),
      },
    );
    // Answered with a call of the client's tools.
    expect(result.status).toBe('tool_calls');
    expect(sent).toEqual([expect.objectContaining({ logprobs: true, top_logprobs: 2 })]);
    expect(heard).toEqual([['thinking hm', lp('hm')], ['text Hi', lp('Hi')], ['calls 1', lp('call')], ['alone', lp('broken')], ['alone', lp('held')]]);
  });
});

describe('turnRunner: reasoning a model wrote inline', () => {
  it("the client gets the answer as the model wrote it (as streamed); the log keeps the reasoning apart", async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-runner-think-'));
    const runner = runnerOver(home, (_request, hooks) => {
      hooks.onText('<think>Add them.</think>\n\nIt is 4.');
      return Promise.resolve({ status: 'ok', failure: null, metrics: EMPTY_METRICS, attempts: 1 });
    });
    const input: RunInput = { turnId: 'turn00000001', session: 's', mode: 'argo', model: 'm', userPrompt: '2+2?', messages: [], argo: null, extras: { options: {} }, signal: new AbortController().signal, round: 1 };
    const result = await runner.run(input, { onText: () => undefined, onToolCalls: () => undefined });
    expect(result.text).toBe('<think>Add them.</think>\n\nIt is 4.');
    expect(logLines(home)[0]).toMatchObject({ model_response: 'It is 4.', thinking: 'Add them.' });
  });
});

describe('turnRunner and the journal of unfinished turns', () => {
  it("a journal that cannot be written is said once on the server's log, as argo serve's; the turns go on", async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-runner-journal-'));
    // A file where the folder goes.
    writeFileSync(join(home, 'unfinished'), 'not a folder');
    const lines: string[] = [];
    const runner = runnerOver(home, (_request, hooks) => {
      hooks.onText('Hi.');
      return Promise.resolve({ status: 'ok', failure: null, metrics: EMPTY_METRICS, attempts: 1 });
    }, { log: (line) => lines.push(line) });
    const input = (turnId: string): RunInput => ({ turnId, session: 's', mode: 'argo', model: 'm', userPrompt: 'hi', messages: [], argo: null, extras: { options: {} }, signal: new AbortController().signal, round: 1 });
    const hooks = { onText: () => undefined, onToolCalls: () => undefined };
    const results = [await runner.run(input('turn00000001'), hooks), await runner.run(input('turn00000002'), hooks)];
    expect(results.map((result) => result.status)).toEqual(['ok', 'ok']);
    expect(lines).toEqual([
      `argo serve: cannot keep this turn in ${join(home, 'unfinished')} while it is answered (${join(home, 'unfinished')} is not a folder; remove it, and Argo makes the folder again); it is logged as usual when it ends, but would be lost if argo were killed first (argo doctor checks the data home)`,
    ]);
  });
});

describe('turnRunner.hold: a job\'s turn kept in the journal while it waits in its queue', () => {
  const setup = (): { home: string; runner: ReturnType<typeof turnRunner>; drafts: () => string[]; journal: (id: string) => { entry: Record<string, unknown> } } => {
    const home = mkdtempSync(join(tmpdir(), 'argo-runner-hold-'));
    const runner = runnerOver(home, (_request, hooks) => {
      hooks.onText('Hi.');
      return Promise.resolve({ status: 'ok', failure: null, metrics: EMPTY_METRICS, attempts: 1 });
    });
    const drafts = (): string[] => (existsSync(join(home, 'unfinished')) ? readdirSync(join(home, 'unfinished')) : []);
    const journal = (id: string): { entry: Record<string, unknown> } => JSON.parse(readFileSync(join(home, 'unfinished', `${id}.json`), 'utf8')) as { entry: Record<string, unknown> };
    return { home, runner, drafts, journal };
  };
  const input = (argo: ArgoFields | null = null): RunInput => ({ turnId: 'turn00000001', session: 's', mode: 'argo', model: 'm', userPrompt: 'hi', messages: [], argo, extras: { options: {} }, signal: new AbortController().signal, round: 1 });
  const hooks = { onText: () => undefined, onToolCalls: () => undefined };

  it('held: its draft says the model was never asked; run, the turn is logged once and the draft is gone', async () => {
    const { home, runner, drafts, journal } = setup();
    expect(await runner.hold?.(input())).toEqual(expect.any(Function));
    expect(drafts()).toEqual(['turn00000001.json']);
    expect(journal('turn00000001').entry).toMatchObject({ id: 'turn00000001', status: 'interrupted', user_prompt: 'hi', session: 's', model_response: '', error: QUEUED_ERROR });
    // Planned without history and never sent: no hash that rerun could take for the turn's request.
    expect(journal('turn00000001').entry).not.toHaveProperty('request_sha256');
    expect((await runner.run({ ...input(), journaled: true }, hooks)).status).toBe('ok');
    expect(drafts()).toEqual([]);
    expect(logLines(home)).toEqual([expect.objectContaining({ id: 'turn00000001', status: 'ok', user_prompt: 'hi' })]);
  });

  it.each<[string, Date | undefined, Date]>([
    ['asked before it ran (a job queued at that instant)', new Date('2025-12-31T23:59:58.123Z'), new Date('2025-12-31T23:59:58.123Z')],
    ['no instant given', undefined, new Date('2026-01-01T00:00:00Z')],
  ])('%s: its held draft and its line have one timestamp (%#)', async (_case, askedAt, stamped) => {
    const { home, runner, journal } = setup();
    const asked = askedAt ? { askedAt } : {};
    await runner.hold?.({ ...input(), ...asked });
    expect(Date.parse(String(journal('turn00000001').entry.timestamp))).toBe(stamped.getTime());
    await runner.run({ ...input(), ...asked, journaled: true }, hooks);
    expect(logLines(home).map((line) => Date.parse(String(line.timestamp)))).toEqual([stamped.getTime()]);
  });

  it('held without reading the session\'s history (a job is accepted at once, however long its session): its record is read, its turns are not', async () => {
    const { home, runner, journal } = setup();
    await runner.run({ ...input(), turnId: 'turn00000000', userPrompt: 'earlier' }, hooks);
    const [earlier] = logLines(home);
    const replayed = input({ replay: { kind: 'session' } });
    await runner.hold?.(replayed);
    expect(journal('turn00000001').entry).toMatchObject({ session_id: earlier?.session_id, replayed_ids: [], replay: { enabled: true, session: true } });
    await runner.run({ ...replayed, journaled: true }, hooks);
    expect(logLines(home)[1]).toMatchObject({ id: 'turn00000001', replayed_ids: ['turn00000000'] });
  });

  it('held, then dropped (the job was not made): nothing kept, nothing logged', async () => {
    const { home, runner, drafts } = setup();
    const drop = await runner.hold?.(input());
    await drop?.();
    expect(drafts()).toEqual([]);
    expect(logLines(home)).toEqual([]);
  });

  it('a request its run refuses: nothing held; held and then refused, its draft goes too, as a refused request logs nothing', async () => {
    const { home, runner, drafts } = setup();
    expect(await runner.hold?.(input({ persona: 'nosuch' }))).toBeNull();
    expect(drafts()).toEqual([]);
    expect(await runner.hold?.(input())).toEqual(expect.any(Function));
    await expect(runner.run({ ...input({ persona: 'nosuch' }), journaled: true }, hooks)).rejects.toThrow('unknown persona');
    expect(drafts()).toEqual([]);
    expect(logLines(home)).toEqual([]);
  });
});

describe('turnRunner when the log cannot take an answered turn', () => {
  const answering = (): ReturnType<RunnerPorts['transport']> => ({
    stream: (_request, hooks) => {
      hooks.onText('Hi.');
      return Promise.resolve({ status: 'ok', failure: null, metrics: EMPTY_METRICS, attempts: 1 });
    },
    installedModels: () => Promise.resolve(['m']),
  });
  const NOON = new Date('2026-01-01T12:00:00Z');
  const input: RunInput = { turnId: 'turn00000001', session: 's', mode: 'argo', model: 'm', userPrompt: 'hi', messages: [], argo: null, extras: { options: {} }, signal: new AbortController().signal, round: 1 };

  it.each<[string, boolean, RunnerPorts['rescue'], string, RegExp | null]>([
    ['the log takes it', false, () => Promise.reject(new Error('no rescue expected')), 'written', null],
    ['a folder where the day\'s log goes, the turn saved aside', true, () => Promise.resolve('/home/u/.argo/rescued/unlogged-1.ndjson'), 'rescued', /^cannot write the log: .*\.log is a folder where the day's log goes; the turn was saved to \/home\/u\/\.argo\/rescued\/unlogged-1\.ndjson — move it away/],
    ['a folder where the day\'s log goes, and nowhere to save it', true, () => Promise.reject(new Error('no space')), 'unsaved', /^cannot write the log: .*\.log is a folder where the day's log goes; the turn could not be saved either \(no space\)/],
  ])('%s: the answer still comes back, saying where its line went (%#)', async (_case, blocked, rescue, log, problem) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-runner-log-'));
    const settings = loadSettings({ home }, {});
    if (blocked) mkdirSync(join(settings.paths.logs, `${format(NOON, 'yyyy-MM-dd')}.log`), { recursive: true });
    const answered: string[] = [];
    const runner = turnRunner(settings, { transport: answering, now: () => NOON, clock: () => 0, rescue, tools: TOOLS });
    const result = await runner.run(input, { onText: () => undefined, onToolCalls: () => undefined, onAnswered: (heard) => answered.push(heard.text) });
    expect(answered).toEqual(['Hi.']);
    expect(result).toMatchObject({ status: 'ok', text: 'Hi.', log });
    if (problem === null) expect(result.logProblem).toBeNull();
    else expect(result.logProblem).toMatch(problem);
  });

  it.each<[string, unknown, string]>([
    ['the line written, its session\'s index not', new SessionUpdateError('the turn was logged in x.log, but session "s" could not be updated'), 'written'],
    ['saved aside', new UnloggedTurnError('cannot write the log', '/tmp/argo-rescued-1/unlogged.ndjson'), 'rescued'],
    ['not saved', new UnloggedTurnError('cannot write the log', null), 'unsaved'],
    ['anything else', new Error('unexpected'), 'unsaved'],
  ])('%s → %s', (_case, error, log) => {
    expect(logOutcomeOf(error)).toBe(log);
  });
});

describe('turnRunner: the tokens usage reports', () => {
  const counted = { ...EMPTY_METRICS, prompt_eval_count: 30, eval_count: 4, done_reason: 'stop' };
  // 'first second' is 3 estimated tokens, 'hm ok' 2, a call {"function":{"name":"f","arguments":{}}} 11.
  it.each<[string, { status: 'ok' | 'interrupted' | 'error'; metrics: typeof EMPTY_METRICS }, { thinking?: string; call?: boolean }, 'stop' | null, string, 'counted' | 'estimated', number | 'counted']>([
    ["Ollama's counts, when it sent its last chunk", { status: 'ok', metrics: counted }, {}, null, 'ok', 'counted', 'counted'],
    ['STOP mid-answer: no counts, so the estimates (they were 0 and 0)', { status: 'interrupted', metrics: EMPTY_METRICS }, {}, 'stop', 'stopped', 'estimated', 3],
    ['the client gone mid-answer', { status: 'interrupted', metrics: EMPTY_METRICS }, {}, null, 'interrupted', 'estimated', 3],
    ['a failure mid-answer', { status: 'error', metrics: EMPTY_METRICS }, {}, null, 'error', 'estimated', 3],
    ['cut with reasoning and a client tool call: all three counted', { status: 'interrupted', metrics: EMPTY_METRICS }, { thinking: 'hm ok', call: true }, 'stop', 'stopped', 'estimated', 3 + 2 + 11],
    ['a prompt Ollama gave no count of (cached whole), the answer counted', { status: 'ok', metrics: { ...counted, prompt_eval_count: null } }, {}, null, 'ok', 'estimated', 'counted'],
  ])('%s', async (_case, outcome, extra, cut, status, prompt, completion) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-runner-usage-'));
    const controller = new AbortController();
    const runner = runnerOver(home, (_request, hooks) => {
      if (extra.thinking) hooks.onThinking?.(extra.thinking);
      hooks.onText('first second');
      if (extra.call) hooks.onToolCalls?.([{ function: { name: 'f', arguments: {} } }]);
      if (outcome.status === 'interrupted') controller.abort(cut ?? 'disconnect');
      return Promise.resolve({ ...outcome, failure: outcome.status === 'error' ? { kind: 'mid-stream', message: 'boom' } : null, attempts: 1 });
    });
    const input: RunInput = { turnId: 'turn00000001', session: 's', mode: 'argo', model: 'm', userPrompt: 'count with me', messages: [], argo: null, extras: { options: {} }, signal: controller.signal, round: 1 };
    const result = await runner.run(input, { onText: () => undefined, onToolCalls: () => undefined });
    const [entry] = logLines(home) as [{ status: string; prompt_tokens_estimate: number }];
    expect(entry.status).toBe(status);
    expect(result.promptTokens).toBe(prompt === 'counted' ? 30 : entry.prompt_tokens_estimate);
    expect(result.promptTokens).toBeGreaterThan(0);
    expect(result.completionTokens).toBe(completion === 'counted' ? 4 : completion);
  });
});

describe("turnRunner: a client's tool calls in the turn's log line", () => {
  const call = (name: string, args: unknown, id?: string) => ({ ...(id !== undefined ? { id } : {}), function: { name, arguments: args } });
  it.each<[string, number, unknown[][], string, 'stop' | 'error' | null, unknown, string]>([
    ['no calls: no field', 1, [], 'Hi.', null, undefined, 'ok'],
    [
      'calls alone: each with the id the client got (the model\'s, else call_<round>_<index>) and its arguments',
      2,
      [[call('get_time', { tz: 'UTC' }), call('get_date', '{"y":1}', 'call_ab12cd34')]],
      '',
      null,
      [{ id: 'call_2_0', name: 'get_time', arguments: { tz: 'UTC' } }, { id: 'call_ab12cd34', name: 'get_date', arguments: { y: 1 } }],
      // Not an answer to replay (it replayed as an empty one), but a question back: status tool_calls.
      'tool_calls',
    ],
    ['calls in two chunks, after words: numbered across the answer; still no answer', 1, [[call('a', {})], [call('b', {})]], 'Let me see.', null, [{ id: 'call_1_0', name: 'a', arguments: {} }, { id: 'call_1_1', name: 'b', arguments: {} }], 'tool_calls'],
    ['arguments that are not JSON: kept as the client got them', 1, [[call('a', 'not json')]], '', null, [{ id: 'call_1_0', name: 'a', arguments: { _raw: 'not json' } }], 'tool_calls'],
    ['calls then STOP: the calls sent are kept; stopped', 1, [[call('a', {})]], '', 'stop', [{ id: 'call_1_0', name: 'a', arguments: {} }], 'stopped'],
    ['calls then a failure: the calls sent are kept; error', 1, [[call('a', {})]], '', 'error', [{ id: 'call_1_0', name: 'a', arguments: {} }], 'error'],
  ])('%s', async (_case, round, batches, text, cut, logged, status) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-runner-calls-'));
    const controller = new AbortController();
    const runner = runnerOver(home, (_request, hooks) => {
      if (text !== '') hooks.onText(text);
      for (const batch of batches) hooks.onToolCalls?.(batch);
      if (cut === 'stop') controller.abort(cut);
      if (cut === 'error') return Promise.resolve({ status: 'error', failure: { kind: 'mid-stream', message: 'boom' }, metrics: EMPTY_METRICS, attempts: 1 });
      return Promise.resolve({ status: cut ? 'interrupted' : 'ok', failure: null, metrics: EMPTY_METRICS, attempts: 1 });
    });
    const input: RunInput = { turnId: 'turn00000001', session: 'api', mode: 'plain', model: 'm', userPrompt: 'what time is it', messages: [{ role: 'user', content: 'what time is it' }], argo: null, extras: { options: {}, tools: [{ type: 'function', function: { name: 'get_time' } }] }, signal: controller.signal, round };
    await runner.run(input, { onText: () => undefined, onToolCalls: () => undefined });
    const [entry] = logLines(home);
    expect(entry?.client_tool_calls).toEqual(logged);
    expect(entry).toMatchObject({ status, model_response: text, client_fields: ['tools'] });
  });
});

describe('turnRunner: where a run tells its client a failed call\'s error went', () => {
  const IN_LOG = "in the turn's log line on the server (argo logs --status tool_failures)";
  it.each<[TurnHooks['toolEventsHeard'], string]>([
    ['answer', `each call's error was streamed as a tool_execution_error event, and is ${IN_LOG}`],
    ['job', `each call's error was sent as a tool_execution_error event to any client following the job's stream (GET /api/jobs/ID/stream) as it ran, and is ${IN_LOG}`],
    ['nobody', `each call's error is ${IN_LOG}; a streamed request gets each as a tool_execution_error event`],
    // A whole answer's hooks say nothing: nobody heard its events.
    [undefined, `each call's error is ${IN_LOG}; a streamed request gets each as a tool_execution_error event`],
  ])('tool events heard by %s: %s', async (heard, where) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-runner-heard-'));
    const runner = runnerOver(home, () => Promise.resolve({ status: 'ok', failure: null, metrics: EMPTY_METRICS, attempts: 1, toolCalls: [{ function: { name: 'write_file', arguments: { path: 'out.txt', content: 'x' } } }] }), { tools: { root: mkdtempSync(join(tmpdir(), 'argo-runner-root-')), allowSideEffects: false } });
    const input: RunInput = { turnId: 'turn00000001', session: 's', mode: 'argo', model: 'm', userPrompt: 'write it', messages: [], argo: { tools: ['edit'] }, extras: { options: {} }, signal: new AbortController().signal, round: 1 };
    const result = await runner.run(input, { onText: () => undefined, onToolCalls: () => undefined, ...(heard ? { toolEventsHeard: heard } : {}) });
    expect(result.status).toBe('tool_failures');
    expect(result.agent?.message).toBe(`tool write_file failed and retrying cannot help (${SIDE_EFFECTS_OFF}); ${where}`);
  });
});
