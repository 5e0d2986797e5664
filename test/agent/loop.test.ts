import { describe, expect, it } from 'vitest';
import { CLI_UNLOGGED_RUN_HINTS, runAgent } from '../../src/agent/loop.js';
import type { AgentDeps, AgentEvent, AgentResult, AgentRun, ConfirmAnswer, ConfirmRequest, ModelCall, RunHints } from '../../src/agent/loop.js';
import { RuntimeError } from '../../src/errors.js';
import { ForeignFolderError, SymlinkRefusedError } from '../../src/log/fs.js';
import type { AgentChatBody, StreamOutcome, TransportRequest } from '../../src/ollama/transport.js';
import { ToolError, fittedFrom } from '../../src/tools/types.js';
import type { Tool, ToolResult } from '../../src/tools/types.js';
import { SERVER_RUN_HINTS } from '../../src/serve/turn-runner.js';
import { waitFor } from '../support/wait.js';

interface Step {
  /** A thinking model's reasoning, streamed before the text. */
  thinking?: string[];
  /** Ollama's done_reason for this response (default stop). */
  doneReason?: string | null;
  /** This response's prompt_eval_count (default METRICS'); null when it never reached its final chunk. */
  promptEvalCount?: number | null;
  chunks?: string[];
  calls?: unknown[];
  status?: StreamOutcome['status'];
  failure?: string;
  /** The text came whole in the final chunk (Ollama's parser held it back). */
  held?: boolean;
  /** Calls that came in chunks before the response was cut short (STOP, Ctrl-C): the transport returns them. */
  sentBeforeCut?: unknown[];
}

const METRICS = { total_duration: 10, load_duration: 1, prompt_eval_count: 5, prompt_eval_duration: 2, eval_count: 3, eval_duration: 4, done_reason: 'stop' };

/** A model that answers from a script and records every request body (as sent, serialised). */
function scriptedModel(steps: Step[], onChunk?: (index: number) => void): { model: ModelCall; bodies: AgentChatBody[] } {
  const bodies: AgentChatBody[] = [];
  let next = 0;
  const model: ModelCall = async (request: TransportRequest, hooks) => {
    bodies.push(JSON.parse(JSON.stringify(request.body)) as AgentChatBody);
    const step = steps[Math.min(next++, steps.length - 1)] ?? {};
    for (const thought of step.thinking ?? []) {
      hooks.onThinking(thought);
      hooks.onChunk();
    }
    const chunks = step.chunks ?? [];
    const cut: StreamOutcome = { status: 'interrupted', failure: null, metrics: METRICS, attempts: 1, toolCalls: step.sentBeforeCut ?? [] };
    for (const [index, text] of chunks.entries()) {
      if (hooks.signal.aborted) return cut;
      hooks.onText(text);
      onChunk?.(index);
      hooks.onChunk();
      await Promise.resolve();
    }
    if (hooks.signal.aborted) return cut;
    hooks.onChunk();
    return {
      status: step.status ?? 'ok',
      failure: step.failure ? { kind: 'http', message: step.failure } : null,
      metrics: { ...METRICS, done_reason: step.doneReason === undefined ? METRICS.done_reason : step.doneReason, prompt_eval_count: step.promptEvalCount === undefined ? METRICS.prompt_eval_count : step.promptEvalCount },
      attempts: 1,
      toolCalls: step.calls ?? [],
      ...(step.held === true ? { textHeldToEnd: true } : {}),
    };
  };
  return { model, bodies };
}

const call = (name: string, args: unknown, id?: string): unknown => ({ ...(id ? { id } : {}), function: { name, arguments: args } });

function tool(name: string, run: (args: Record<string, unknown>) => Promise<ToolResult>, extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `${name} for tests`,
    parameters: { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer' } }, required: ['q'], additionalProperties: false },
    sideEffects: false,
    run,
    ...extra,
  };
}

const okTool = tool('ok_tool', (args) => Promise.resolve({ echoed: args.q }));
const failTool = tool('fail_tool', () => Promise.reject(new ToolError('the disk is on fire')));
const permTool = tool('perm_tool', () => Promise.reject(new ToolError('no such service', false)));
const crashTool = tool('crash_tool', () => Promise.reject(new TypeError('Cannot read properties of undefined (reading "x") at /secret/path.js:1')));
/** Its result says its optional parameter `city` is required (as a tool whose parameters depend on each other does). */
const requiredTool = tool('req_tool', () => Promise.resolve({ error: 'city is required' }), {
  parameters: { type: 'object', properties: { q: { type: 'string' }, city: { type: 'string' } }, required: ['q'] },
});
/** Its result says "… is required" of something that is none of its parameters. */
const authTool = tool('auth_tool', () => Promise.reject(new ToolError('Authentication is required to read acme/app')));
const returnsErrorTool = tool('err_tool', () => Promise.resolve({ error: 'quota exceeded', retryable: false }));
const sideTool = tool('side_tool', (args) => Promise.resolve({ done: args.q }), { sideEffects: true, preview: (args) => Promise.resolve(`$ touch ${String(args.q)}`) });
const bigTool = tool('big_tool', () => Promise.resolve({ text: 'x'.repeat(500) }), { resultBudget: 200 });
/** Past its budget by far: its head and note are still longer than a summary. */
const hugeTool = tool('huge_tool', () => Promise.resolve({ text: 'y'.repeat(3000) }), { resultBudget: 600 });
const slowTool = tool('slow_tool', () => new Promise<ToolResult>(() => undefined), { timeoutMs: 20 });
/** Fits its own result to its budget (as a command's output is), keeping what it cut from. */
const FITTED_WHOLE = { exit_code: 2, stdout: 'line\n'.repeat(100), stderr: 'FATAL' };
const fittingTool = tool('fitting_tool', () => Promise.resolve(fittedFrom({ exit_code: 2, stdout: 'line\n', stderr: 'FATAL' }, FITTED_WHOLE)), { resultBudget: 200 });

const TOOLS = [okTool, failTool, permTool, crashTool, requiredTool, authTool, returnsErrorTool, sideTool, bigTool, slowTool, fittingTool];

interface Harness {
  events: AgentEvent[];
  bodies: AgentChatBody[];
  sleeps: number[];
  saved: Record<string, string>;
  confirms: ConfirmRequest[];
}

interface RunOptions extends Partial<AgentRun> {
  confirm?: ConfirmAnswer;
  /** Called as a confirmation is asked (before its answer). */
  onConfirm?: () => void;
  stopped?: () => boolean;
  abortedByStop?: (reason: unknown) => boolean;
  memo?: () => Record<string, string>;
  onChunk?: (index: number) => void;
  signal?: AbortSignal;
  /** Replaces the harness's instant save (which records what was saved). */
  save?: (path: string, content: string) => Promise<void>;
  /** The turn is not logged: results past their budget are not kept (resultPath null). */
  unlogged?: boolean;
  checkWindow?: AgentDeps['checkWindow'];
  onRound?: AgentDeps['onRound'];
}

async function run(steps: Step[], options: RunOptions = {}) {
  const { model, bodies } = scriptedModel(steps, options.onChunk);
  const harness: Harness = { events: [], bodies, sleeps: [], saved: {}, confirms: [] };
  let time = 0;
  const deps: AgentDeps = {
    model,
    clock: () => (time += 1),
    isStopped: options.stopped ?? (() => false),
    ...(options.abortedByStop ? { abortedByStop: options.abortedByStop } : {}),
    confirm: (request) => {
      harness.confirms.push(request);
      options.onConfirm?.();
      return Promise.resolve(options.confirm ?? 'yes');
    },
    emit: (event) => harness.events.push(event),
    readMemo: () => Promise.resolve(options.memo?.() ?? {}),
    resultPath: options.unlogged === true ? null : (id, round) => Promise.resolve(`tool-results/S1/r${String(round)}-${id}.json`),
    saveResult:
      options.save ??
      ((path, content) => {
        harness.saved[path] = content;
        return Promise.resolve();
      }),
    sleep: (ms) => {
      harness.sleeps.push(ms);
      return Promise.resolve();
    },
    signal: options.signal ?? new AbortController().signal,
    ...(options.checkWindow ? { checkWindow: options.checkWindow } : {}),
    ...(options.onRound ? { onRound: options.onRound } : {}),
  };
  const agentRun: AgentRun = {
    base: { model: 'argo', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hello' }], stream: true },
    tools: TOOLS,
    context: { root: '/tmp', home: '/tmp' },
    maxIterations: 10,
    ephemeralSystem: null,
    reaskDelayMs: 100,
    ...options,
  };
  const result = await runAgent(agentRun, deps);
  return { result, ...harness };
}

describe('the agent loop', () => {
  it('ends at once when the model answers in words', async () => {
    const { result, bodies } = await run([{ chunks: ['Hi', ' there'] }]);
    expect(result).toMatchObject({ status: 'ok', stopReason: 'answered', text: 'Hi there', iterations: 0, requests: 1, calls: [] });
    expect(bodies[0]?.tools?.map((t) => t.function.name)).toEqual(TOOLS.map((t) => t.name));
    expect(result.metrics.eval_count).toBe(3);
  });

  it.each([
    // each request's prompt_eval_count → the run's sum (logged as its totals), the largest one request's (judged against the window)
    [[4096, 4096], 8192, 4096],
    [[1500, 1600], 3100, 1600],
    [[1600, 1500], 3100, 1600],
    [[null, 700], 700, 700],
    [[null, null], null, null],
  ])('prompt counts %j: summed %s, largest of one request %s', async (counts, sum, largest) => {
    const steps: Step[] = counts.map((count, index) => (index < counts.length - 1 ? { calls: [call('ok_tool', { q: 'a' })], promptEvalCount: count } : { chunks: ['done'], promptEvalCount: count }));
    const { result } = await run(steps);
    expect(result.requests).toBe(counts.length);
    expect(result.metrics.prompt_eval_count).toBe(sum);
    expect(result.largestPromptEvalCount).toBe(largest);
  });

  it('runs a call, sends back the assistant message (arguments as an object) and the result, then answers', async () => {
    const { result, bodies } = await run([{ calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['done'] }]);
    expect(result).toMatchObject({ status: 'ok', text: 'done', iterations: 1, requests: 2 });
    expect(bodies[1]?.messages.slice(2)).toEqual([
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1_0', function: { name: 'ok_tool', arguments: { q: 'a' } } }] },
      { role: 'tool', tool_name: 'ok_tool', tool_call_id: 'call_1_0', content: '{"echoed":"a"}' },
    ]);
    expect(result.calls).toEqual([{ id: 'call_1_0', name: 'ok_tool', arguments: { q: 'a' }, outcome: 'success', round: 1, ms: 1, result_chars: 14, result: '{"echoed":"a"}' }]);
  });

  it.each([
    ['its own budget', { resultBudget: 1234 }, {}, 1234],
    ["the run's default", {}, { defaultBudget: 2500 }, 2500],
    ['the contract\'s default', {}, {}, 4000],
  ])('a tool is told its result budget: %s', async (_case, extra, options, budget) => {
    const seen: (number | undefined)[] = [];
    const told = tool('budget_tool', () => Promise.resolve({}), { ...extra, run: (_args, context) => (seen.push(context.resultBudget), Promise.resolve({})) });
    await run([{ calls: [call('budget_tool', { q: 'a' })] }, { chunks: ['done'] }], { tools: [told], ...options });
    expect(seen).toEqual([budget]);
  });

  it.each([
    // the model's responses → times the commands' environment was worked out, what each call got as env
    ['words only', [{ chunks: ['done'] }], 0, []],
    ['one call', [{ calls: [call('env_tool', { q: 'a' })] }, { chunks: ['done'] }], 1, ['kept']],
    ['three calls over two rounds', [{ calls: [call('env_tool', { q: 'a' }), call('env_tool', { q: 'b' })] }, { calls: [call('env_tool', { q: 'c' })] }, { chunks: ['done'] }], 1, ['kept', 'kept', 'kept']],
  ])("the commands' environment is worked out when the first call is made, once a run: %s", async (_case, steps, asked, seen) => {
    let times = 0;
    const envs: (string | undefined)[] = [];
    const envTool = tool('env_tool', () => Promise.resolve({}), { run: (_args, context) => (envs.push(context.env?.KEPT), Promise.resolve({})) });
    await run(steps, { tools: [envTool], context: { root: '/tmp', home: '/tmp', commandEnv: () => (times++, { KEPT: 'kept' }) } });
    expect(times).toBe(asked);
    expect(envs).toEqual(seen);
  });

  it.each([
    ['a STOP', 'stop', 'stopped', 'stop_signal'],
    ['Ctrl-C', 'interrupt', 'interrupted', 'interrupted'],
  ])('%s while a confirmation is asked cuts the run: nothing runs, the call is logged not run (not refused)', async (_case, reason, status, stopReason) => {
    const controller = new AbortController();
    let ran = false;
    const side = tool('side_tool', () => ((ran = true), Promise.resolve({})), { sideEffects: true });
    const { result } = await run([{ chunks: ['Looking.'], calls: [call('side_tool', { q: 'a' })] }, { chunks: ['never'] }], {
      tools: [side],
      confirm: 'no',
      onConfirm: () => controller.abort(reason),
      signal: controller.signal,
      abortedByStop: (why) => why === 'stop',
    });
    expect(result).toMatchObject({ status, stopReason, requests: 1 });
    const why = reason === 'stop' ? 'not run: the STOP signal ended the run first' : 'not run: the run was interrupted first';
    expect(result.calls).toEqual([{ id: 'call_1_0', name: 'side_tool', arguments: { q: 'a' }, outcome: 'not_run', round: 1, ms: 0, result_chars: 0, error: why }]);
    expect(ran).toBe(false);
  });

  it('a STOP set while a confirmation is asked, answered yes before STOP cut the run: the call does not run, the run ends stopped', async () => {
    let ran = false;
    let stopSet = false;
    const side = tool('side_tool', () => ((ran = true), Promise.resolve({})), { sideEffects: true });
    const { result } = await run([{ chunks: ['Looking.'], calls: [call('side_tool', { q: 'a' })] }, { chunks: ['never'] }], {
      tools: [side],
      confirm: 'yes',
      onConfirm: () => (stopSet = true),
      stopped: () => stopSet,
    });
    expect(result).toMatchObject({ status: 'stopped', stopReason: 'stop_signal', calls: [{ outcome: 'not_run', error: 'not run: the STOP signal ended the run first' }], requests: 1 });
    expect(ran).toBe(false);
  });

  it("sends a thinking model's reasoning back with its calls, and only there", async () => {
    const { result, bodies } = await run([
      { thinking: ['Need ', 'a file.'], chunks: ['Looking.'], calls: [call('ok_tool', { q: 'a' })] },
      { calls: [call('ok_tool', { q: 'b' })] },
      { thinking: ['Done.'], chunks: ['done'] },
    ]);
    expect(result).toMatchObject({ status: 'ok', text: 'done', iterations: 2 });
    expect(bodies[1]?.messages[2]).toEqual({ role: 'assistant', content: 'Looking.', thinking: 'Need a file.', tool_calls: [{ id: 'call_1_0', function: { name: 'ok_tool', arguments: { q: 'a' } } }] });
    // A response without reasoning sends none: no empty field.
    expect(bodies[2]?.messages[4]).toEqual({ role: 'assistant', content: '', tool_calls: [{ id: 'call_2_0', function: { name: 'ok_tool', arguments: { q: 'b' } } }] });
    // Kept for the log: each round's words and reasoning (none for a round with neither), and the answer's.
    expect(result.roundMessages).toEqual([{ round: 1, content: 'Looking.', thinking: 'Need a file.' }]);
    expect(result.thinking).toBe('Done.');
  });

  it.each<[string, Step[], { thinking: string; roundMessages: unknown[] }]>([
    ['an answer without reasoning after a round with it: none for the answer', [{ thinking: ['Plan.'], calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['done'] }], { thinking: '', roundMessages: [{ round: 1, content: '', thinking: 'Plan.' }] }],
    ['a re-asked response: its reasoning rolled back with it', [{ thinking: ['Wrong.'], calls: [call('no_such_tool', {})] }, { thinking: ['Right.'], chunks: ['done'] }], { thinking: 'Right.', roundMessages: [] }],
    ['the token limit spent on reasoning: the reasoning kept', [{ thinking: ['Long', ' thought'], doneReason: 'length' }], { thinking: 'Long thought', roundMessages: [] }],
    ["re-asked until the run ends: the last response's reasoning kept, as the stop names it", [{ thinking: ['Hmm.'], chunks: ['<think>still</think>\n'] }], { thinking: 'Hmm.', roundMessages: [] }],
    ['max iterations: every round in roundMessages, none as the answer', [{ thinking: ['A.'], calls: [call('ok_tool', { q: 'a' })] }, { thinking: ['B.'], calls: [call('ok_tool', { q: 'b' })] }], { thinking: '', roundMessages: [{ round: 1, content: '', thinking: 'A.' }, { round: 2, content: '', thinking: 'B.' }] }],
    // Every round whose calls ran is logged, a round whose calls all failed too.
    [
      'an all-failure round, then an answer',
      [{ thinking: ['Try a.'], chunks: ['Reading a.'], calls: [call('fail_tool', { q: 'a' })] }, { thinking: ['Done.'], chunks: ['done'] }],
      { thinking: 'Done.', roundMessages: [{ round: 1, content: 'Reading a.', thinking: 'Try a.' }] },
    ],
    [
      'three all-failure rounds: each one logged, none as the answer',
      [{ thinking: ['Try.'], calls: [call('fail_tool', { q: 'a' })] }],
      { thinking: '', roundMessages: [1, 2, 3].map((round) => ({ round, content: '', thinking: 'Try.' })) },
    ],
    ['a round a permanent failure ends', [{ thinking: ['Ask.'], chunks: ['Asking.'], calls: [call('perm_tool', { q: 'a' })] }], { thinking: '', roundMessages: [{ round: 1, content: 'Asking.', thinking: 'Ask.' }] }],
    ["a round a tool's needs_input ends", [{ thinking: ['City?'], calls: [call('req_tool', { q: 'a' })] }], { thinking: '', roundMessages: [{ round: 1, content: '', thinking: 'City?' }] }],
    ['a round whose calls never ran (one lacks a parameter): not a round that ran', [{ thinking: ['Hm.'], chunks: ['Hm.'], calls: [call('ok_tool', {})] }], { thinking: 'Hm.', roundMessages: [] }],
  ])('reasoning for the log: %s', async (_case, steps, expected) => {
    const { result } = await run(steps, { maxIterations: 2 });
    expect({ thinking: result.thinking, roundMessages: result.roundMessages }).toEqual(expected);
  });

  it("an all-failure round's words are logged, never sent back: the model is asked again as before it", async () => {
    const { result, bodies } = await run([{ thinking: ['Try a.'], chunks: ['Reading a.'], calls: [call('fail_tool', { q: 'a' })] }, { chunks: ['done'] }]);
    expect(result).toMatchObject({ status: 'ok', allFailureRounds: 1, roundMessages: [{ round: 1, content: 'Reading a.', thinking: 'Try a.' }] });
    expect(bodies[1]).toEqual(bodies[0]);
  });

  it.each([
    ['Looking.', 'Looking.\n\nFound it.'],
    ['Looking.\n', 'Looking.\n\nFound it.'],
    ['Looking.\n\n', 'Looking.\n\nFound it.'],
  ])("starts each response's words as a new paragraph on screen (after %j); the answer logged is the last response's", async (before, shown) => {
    const { result, events } = await run([{ chunks: [before], calls: [call('ok_tool', { q: 'a' })] }, { calls: [call('ok_tool', { q: 'b' })] }, { chunks: ['Found', ' it.'] }]);
    expect(events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('')).toBe(shown);
    expect(result.text).toBe('Found it.');
  });

  it('parses string arguments, keeps ids the model sent, numbers missing ones call_<round>_<index>', async () => {
    const { result, bodies } = await run([
      { calls: [call('ok_tool', '{"q":"s"}'), call('ok_tool', { q: 'o' }, 'abc')] },
      { calls: [call('ok_tool', { q: 'r2' })] },
      { chunks: ['end'] },
    ]);
    expect(result.calls.map((c) => [c.id, c.arguments])).toEqual([['call_1_0', { q: 's' }], ['abc', { q: 'o' }], ['call_2_0', { q: 'r2' }]]);
    expect(bodies[1]?.messages[2]?.tool_calls?.[0]?.function.arguments).toEqual({ q: 's' });
    expect(result.iterations).toBe(2);
  });

  it.each<[string, unknown[], [string, string][]]>([
    ["Ollama's ids (0.12.10+)", [call('ok_tool', { q: 'a' }, 'call_k3x9q0za'), call('ok_tool', { q: 'b' }, 'call_0bz7m2ye')], [['call_k3x9q0za', 'call_k3x9q0za'], ['call_0bz7m2ye', 'call_0bz7m2ye']]],
    ['none: numbered', [call('ok_tool', { q: 'a' }), call('ok_tool', { q: 'b' })], [['call_1_0', 'call_1_0'], ['call_1_1', 'call_1_1']]],
    ['the model took a number Argo would make', [call('ok_tool', { q: 'a' }), call('ok_tool', { q: 'b' }, 'call_1_0')], [['call_1_0_2', 'call_1_0_2'], ['call_1_0', 'call_1_0']]],
    ['a failed call between: its result is not sent, the others keep their ids', [call('ok_tool', { q: 'a' }, 'x'), call('fail_tool', { q: 'b' }, 'y'), call('ok_tool', { q: 'c' }, 'z')], [['x', 'x'], ['z', 'z']]],
  ])('each result goes back with its call\'s id and name: %s', async (_case, calls, paired) => {
    const { bodies } = await run([{ calls }, { chunks: ['done'] }]);
    const added = bodies[1]?.messages.slice(2) ?? [];
    const sentIds = added[0]?.tool_calls?.map((c) => c.id ?? '') ?? [];
    const results = added.filter((m) => m.role === 'tool');
    expect(results.map((m, index) => [sentIds[index] ?? '', m.tool_call_id ?? ''])).toEqual(paired);
    expect(results.map((m) => m.tool_name)).toEqual(paired.map(() => 'ok_tool'));
  });

  it('runs a call once when the response repeats its id', async () => {
    let runs = 0;
    const counted = tool('ok_tool', () => Promise.resolve({ n: ++runs }));
    const { result } = await run([{ calls: [call('ok_tool', { q: 'a' }, 'same'), call('ok_tool', { q: 'b' }, 'same')] }, { chunks: ['x'] }], { tools: [counted] });
    expect(runs).toBe(1);
    // The repeat is logged where it came, as not run: it does not vanish from tool_calls.
    expect(result.calls.map((c) => [c.id, c.arguments, c.outcome, c.error])).toEqual([
      ['same', { q: 'a' }, 'success', undefined],
      ['same', { q: 'b' }, 'not_run', 'not run: an earlier call of the response has the same id'],
    ]);
  });

  it.each<[string, Step[], [string, string, string, number | undefined, string | undefined][], string]>([
    // the script → each logged call as [name, arguments, outcome, attempt, error], the run's status
    [
      'a valid call beside invalid ones, asked again: logged not run, with the attempt of each response',
      [{ calls: [call('ok_tool', { q: 'notes' }, 'A'), call('nope', {}, 'B'), call('ok_tool', { q: 5 }, 'C')] }, { chunks: ['done'] }],
      [
        ['ok_tool', '{"q":"notes"}', 'not_run', undefined, 'not run: another call of the response was invalid'],
        ['nope', '{}', 'invalid', undefined, 'unknown tool "nope"'],
        ['ok_tool', '{"q":5}', 'invalid', undefined, 'ok_tool: "q" must be string'],
      ],
      'ok',
    ],
    [
      'the same response three times, then a valid one: the attempts told apart, the successes of attempt 4 marked',
      [{ calls: [call('nope', {}, 'B')] }, { calls: [call('nope', {}, 'B')] }, { calls: [call('nope', {}, 'B')] }, { calls: [call('ok_tool', { q: 'a' }, 'B')] }, { chunks: ['done'] }],
      [
        ['nope', '{}', 'invalid', undefined, 'unknown tool "nope"'],
        ['nope', '{}', 'invalid', 2, 'unknown tool "nope"'],
        ['nope', '{}', 'invalid', 3, 'unknown tool "nope"'],
        ['ok_tool', '{"q":"a"}', 'success', 4, undefined],
      ],
      'ok',
    ],
    [
      'a missing parameter beside a valid, an invalid and another missing one: every call logged',
      [{ calls: [call('ok_tool', { q: 'a' }), call('nope', {}), call('ok_tool', {}), call('req_tool', {})] }],
      [
        ['ok_tool', '{"q":"a"}', 'not_run', undefined, 'not run: another call of the response lacks a required parameter'],
        ['nope', '{}', 'invalid', undefined, 'unknown tool "nope"'],
        ['ok_tool', '{}', 'needs_input', undefined, 'q is required'],
        ['req_tool', '{}', 'needs_input', undefined, 'q is required'],
      ],
      'needs_input',
    ],
    [
      'a repeated id in an invalid response',
      [{ calls: [call('ok_tool', { q: 'a' }, 'c'), call('nope', {}, 'c'), call('nope', {}, 'd')] }, { chunks: ['done'] }],
      [
        ['ok_tool', '{"q":"a"}', 'not_run', undefined, 'not run: another call of the response was invalid'],
        ['nope', '{}', 'not_run', undefined, 'not run: an earlier call of the response has the same id'],
        ['nope', '{}', 'invalid', undefined, 'unknown tool "nope"'],
      ],
      'ok',
    ],
  ])('every call the model sent is logged, in order: %s', async (_case, steps, logged, status) => {
    const { result } = await run(steps);
    expect(result.status).toBe(status);
    expect(result.calls.map((c) => [c.name, JSON.stringify(c.arguments), c.outcome, c.attempt, c.error])).toEqual(logged);
    expect(result.calls.every((c) => c.round === 1)).toBe(true);
  });

  it.each([
    ['an unknown tool', call('nope', { q: 'a' }), 'unknown tool "nope"'],
    ['arguments that are not JSON', call('ok_tool', '{"q":'), 'not valid JSON'],
    ['arguments that are not an object', call('ok_tool', '[1]'), 'not a JSON object'],
    ['a value of the wrong type', call('ok_tool', { q: 1 }), '"q"'],
    ['an extra parameter', call('ok_tool', { q: 'a', zz: 1 }), 'zz'],
  ])('re-asks 3 times after %s, then rolls back and stops invalid_response', async (_name, bad, reason) => {
    const { result, bodies, sleeps, events } = await run([{ chunks: ['trying'], calls: [bad] }]);
    expect(result.status).toBe('invalid_response');
    expect(result.message).toContain(reason);
    expect(bodies).toHaveLength(4);
    // Rolled back: every re-ask sends exactly what the first request sent.
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    expect(sleeps).toEqual([100, 200, 400]);
    expect(events.flatMap((e) => (e.type === 'reask' ? [e.attempt] : []))).toEqual([1, 2, 3]);
    expect(result.calls.every((c) => c.outcome === 'invalid')).toBe(true);
    // Logged as sent: the object, or the string that could not be read as one.
    expect(result.calls[0]?.arguments).toEqual((bad as { function: { arguments: unknown } }).function.arguments);
    expect(result.text).toBe('');
  });

  it('re-asks a response with neither calls nor words (blank, or only reasoning), then stops invalid_response', async () => {
    const { result, bodies, events } = await run([{ thinking: ['Hmm.'], chunks: ['<think>still</think>\n'] }]);
    expect(result).toMatchObject({ status: 'invalid_response', stopReason: 'invalid_response', text: '', calls: [] });
    expect(result.message).toBe('the model still gave no answer after 3 re-asks (its last response was empty, or only reasoning); try another model');
    expect(bodies).toHaveLength(4);
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    expect(events.filter((e) => e.type === 'reask')).toEqual([1, 2, 3].map((attempt) => ({ type: 'reask', attempt, of: 3, reason: 'no answer: the response was empty, or only reasoning' })));
  });

  it('stops at once when the token limit ended an empty response: asking again would spend it the same way', async () => {
    const { result, bodies, events } = await run([{ thinking: ['Long', ' thought'], doneReason: 'length' }]);
    expect(result).toMatchObject({ status: 'invalid_response', text: '', requests: 1 });
    expect(result.message).toBe('the model reached its token limit before answering (a thinking model reasons first); raise num_predict, or ask for less reasoning (think)');
    expect(bodies).toHaveLength(1);
    expect(events.some((e) => e.type === 'reask')).toBe(false);
  });

  const SPENT_ON_REASONING = 'the model reached its token limit before answering (a thinking model reasons first); raise num_predict, or ask for less reasoning (think)';
  const LIMIT_BEFORE_ANSWER = 'the model reached its token limit before answering (it may have been cut while writing a tool call); raise num_predict';
  it.each<[string, Step, AgentRun['base']['think'], string]>([
    // the response the limit ended empty, the think setting sent → the message
    ['reasoning in its own field', { thinking: ['Long', ' thought'] }, undefined, SPENT_ON_REASONING],
    ['reasoning written into the text', { chunks: ['<think>Long thought'] }, undefined, SPENT_ON_REASONING],
    ['nothing, though reasoning was asked for', {}, 'high', SPENT_ON_REASONING],
    ['nothing, think true', {}, true, SPENT_ON_REASONING],
    // A tagged model's call the limit cut: Ollama's parser drops it, and nothing at all comes.
    ['nothing, no reasoning asked for', {}, undefined, LIMIT_BEFORE_ANSWER],
    ['nothing, think off', {}, false, LIMIT_BEFORE_ANSWER],
  ])('the token limit ending an empty response (%s) says what spent it', async (_case, step, think, message) => {
    const base: AgentRun['base'] = { model: 'argo', messages: [{ role: 'user', content: 'hello' }], stream: true, ...(think !== undefined ? { think } : {}) };
    const { result } = await run([{ ...step, doneReason: 'length' }], { base });
    expect(result).toMatchObject({ status: 'invalid_response', stopReason: 'invalid_response', text: '', requests: 1, message });
  });

  it.each<[string, string[], string, boolean, string]>([
    ['a call the token limit cut short, held back and passed on as text: stops at once, nothing logged as the answer', ['{"name":"ok_tool","arguments":{"q'], 'length', true, 'invalid_response'],
    ['the same JSON streamed (a tagged model, as qwen\'s <tool_call>): the real, cut answer', ['{"name":"ok_tool",', '"arguments":{"q'], 'length', false, 'ok'],
    ['the held text with the answer whole (done_reason stop): words, the answer', ['{"name":"ok_tool","arguments":{"q'], 'stop', true, 'ok'],
    ['whole JSON at the limit: an answer, cut or not', ['{"answer":', '42}'], 'length', true, 'ok'],
    ['words cut at the limit: an answer, as a plain turn\'s is', ['The notes', ' say'], 'length', true, 'ok'],
  ])('%s', async (_name, chunks, doneReason, held, status) => {
    const { result, bodies, events } = await run([{ chunks, doneReason, held }]);
    expect(result.status).toBe(status);
    expect(bodies).toHaveLength(1);
    expect(events.some((e) => e.type === 'reask')).toBe(false);
    if (status === 'ok') {
      expect(result.text).toBe(chunks.join(''));
      return;
    }
    expect(result).toMatchObject({ stopReason: 'invalid_response', text: '', calls: [] });
    expect(result.message).toBe('the model reached its token limit in the middle of a tool call (Ollama passed the unfinished call on as text); raise num_predict');
  });

  it('answers when a re-asked empty response is followed by words', async () => {
    const { result } = await run([{ chunks: [] }, { chunks: ['Hi.'] }]);
    expect(result).toMatchObject({ status: 'ok', text: 'Hi.', requests: 2 });
  });

  it('goes on when a re-asked response is valid', async () => {
    const { result } = await run([{ calls: [call('nope', {})] }, { calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['fine'] }]);
    expect(result).toMatchObject({ status: 'ok', text: 'fine', iterations: 1, requests: 3 });
  });

  it('stops needs_input when validation finds a required parameter missing, even beside an invalid call; nothing runs', async () => {
    let ran = false;
    const watched = tool('ok_tool', () => {
      ran = true;
      return Promise.resolve({});
    });
    const { result, events, bodies } = await run([{ calls: [call('nope', {}), call('ok_tool', { n: 1 })] }], { tools: [watched] });
    expect(result).toMatchObject({ status: 'needs_input', stopReason: 'required_parameter', requests: 1 });
    expect(result.message).toBe('tool ok_tool needs "q", which the model did not give; ask again with it in your question');
    expect(events.filter((event) => event.type === 'tool_status' || event.type === 'needs_input')).toEqual([
      { type: 'tool_status', id: 'call_1_1', name: 'ok_tool', status: 'needs_input', ms: 0, args: { n: 1 } },
      { type: 'needs_input', id: 'call_1_1', name: 'ok_tool', parameter: 'q' },
    ]);
    expect(ran).toBe(false);
    expect(bodies).toHaveLength(1);
  });

  it('stops needs_input when a tool result says one of its parameters is required', async () => {
    const { result } = await run([{ calls: [call('req_tool', { q: 'x' })] }]);
    expect(result).toMatchObject({ status: 'needs_input', requests: 1, message: 'tool req_tool needs "city", which the model did not give; ask again with it in your question' });
    expect(result.calls[0]).toMatchObject({ outcome: 'needs_input', error: 'city is required' });
  });

  it('a tool saying something that is none of its parameters "is required" failed: its own message is shown, the run goes on', async () => {
    const { result, events } = await run([{ calls: [call('auth_tool', { q: 'x' })] }, { chunks: ['Sign in first.'] }]);
    expect(result).toMatchObject({ status: 'ok', text: 'Sign in first.', allFailureRounds: 1 });
    expect(result.calls[0]).toMatchObject({ outcome: 'failure', error: 'Authentication is required to read acme/app' });
    expect(events).toContainEqual({ type: 'tool_execution_error', id: 'call_1_0', name: 'auth_tool', message: 'Authentication is required to read acme/app' });
    expect(events.some((event) => event.type === 'needs_input')).toBe(false);
  });

  it.each<[string, string, string, number]>([
    // the call beside a successful ok_tool → the run's status, its stop reason, iterations
    ['a tool result saying one of its parameters is required', 'req_tool', 'needs_input', 1],
    ['Ctrl-C while it runs', 'cut_tool', 'interrupted', 1],
    ['a STOP while it runs', 'stop_tool', 'stopped', 1],
    ['a failure: the run goes on', 'fail_tool', 'ok', 1],
  ])('a round with a success counts in iterations whatever ends the run after it: %s', async (_case, name, status, iterations) => {
    const controller = new AbortController();
    const cutTool = tool('cut_tool', () => (controller.abort(), Promise.reject(new ToolError('the command was interrupted', false))));
    const stopTool = tool('stop_tool', () => (controller.abort('stop'), Promise.reject(new ToolError('the command was interrupted', false))));
    const { result } = await run([{ calls: [call('ok_tool', { q: 'a' }), call(name, { q: 'b' })] }, { chunks: ['done'] }], {
      tools: [okTool, requiredTool, failTool, cutTool, stopTool],
      signal: controller.signal,
      abortedByStop: (reason) => reason === 'stop',
    });
    expect(result).toMatchObject({ status, iterations });
    expect(result.calls[0]).toMatchObject({ name: 'ok_tool', outcome: 'success', round: 1 });
  });

  it('a round without a success does not count, whatever ends the run: needs_input alone, iterations 0', async () => {
    const { result } = await run([{ calls: [call('req_tool', { q: 'x' })] }]);
    expect(result).toMatchObject({ status: 'needs_input', iterations: 0, allFailureRounds: 0 });
  });

  it('never sends a failure back: only the round\'s successes go to the model', async () => {
    const { result, bodies, events } = await run([{ calls: [call('fail_tool', { q: 'a' }), call('ok_tool', { q: 'b' })] }, { chunks: ['ok'] }]);
    expect(result).toMatchObject({ status: 'ok', iterations: 1, allFailureRounds: 0 });
    const sent = bodies[1]?.messages.slice(2);
    expect(sent?.[0]?.tool_calls?.map((c) => c.function.name)).toEqual(['ok_tool']);
    expect(sent?.filter((m) => m.role === 'tool').map((m) => m.tool_name)).toEqual(['ok_tool']);
    expect(JSON.stringify(bodies[1])).not.toContain('fire');
    expect(events).toContainEqual({ type: 'tool_execution_error', id: 'call_1_0', name: 'fail_tool', message: 'the disk is on fire' });
  });

  it('stops tool_failures after 3 all-failure rounds; iterations stay 0', async () => {
    const { result, bodies } = await run([{ calls: [call('fail_tool', { q: 'a' })] }]);
    expect(result).toMatchObject({ status: 'tool_failures', stopReason: 'all_failure_rounds', iterations: 0, allFailureRounds: 3, requests: 3 });
    // The model is asked again with the same conversation: nothing of the failures was added.
    expect(bodies[2]).toEqual(bodies[0]);
  });

  it('counts all-failure rounds over the whole run, not in a row: fail, fail, success, fail stops after round 4', async () => {
    const fail = { calls: [call('fail_tool', { q: 'a' })] };
    const { result } = await run([fail, fail, { calls: [call('ok_tool', { q: 'b' })] }, fail, { chunks: ['never'] }]);
    expect(result).toMatchObject({ status: 'tool_failures', stopReason: 'all_failure_rounds', iterations: 1, allFailureRounds: 3, requests: 4 });
  });

  it.each([
    ['a thrown ToolError with retryable false', 'perm_tool', 'no such service'],
    ['a returned error with retryable false', 'err_tool', 'quota exceeded'],
  ])('stops tool_failures at once on %s', async (_name, name, message) => {
    const { result } = await run([{ chunks: ['checking the service'], calls: [call(name, { q: 'a' }), call('ok_tool', { q: 'b' })] }, { chunks: ['never'] }]);
    // The words said before the calls were shown: they stay as the run's text.
    expect(result).toMatchObject({ status: 'tool_failures', stopReason: 'permanent_failure', requests: 1, iterations: 1, text: 'checking the service' });
    expect(result.message).toContain(message);
  });

  it('shows "tool execution failed" for an unexpected exception and keeps the raw text for the log only', async () => {
    const { result, events } = await run([{ calls: [call('crash_tool', { q: 'a' })] }, { chunks: ['x'] }, { chunks: ['x'] }]);
    const failure = events.find((e) => e.type === 'tool_execution_error');
    expect(failure).toEqual({ type: 'tool_execution_error', id: 'call_1_0', name: 'crash_tool', message: 'tool execution failed' });
    expect(result.calls[0]).toMatchObject({ outcome: 'failure', error: 'tool execution failed' });
    expect(result.calls[0]?.error_detail).toContain('/secret/path.js');
  });

  it('gives up a call after its timeout as an execution failure', async () => {
    const { result } = await run([{ calls: [call('slow_tool', { q: 'a' })] }, { chunks: ['x'] }]);
    expect(result.calls[0]).toMatchObject({ outcome: 'failure', error: 'timed out after 0.02 s' });
    expect(result.status).toBe('ok');
  });

  // A command tool's own timeoutMs is only its default: toolTimeouts may lengthen it, and the loop's timer alone ends it.
  it.each([
    [{ slow: 5000 }, '0.3', { outcome: 'success' }],
    [{ slow: 100 }, '30', { outcome: 'failure', error: 'timed out after 0.1 s' }],
  ])('a command tool with toolTimeouts %j runs "sleep %s" to %j', async (toolTimeouts, seconds, expected) => {
    const { loadToolbox } = await import('../../src/tools/catalog.js');
    const parameters = { type: 'object' as const, properties: { s: { type: 'string' } }, required: ['s'] };
    const box = await loadToolbox(['slow'], { commandTools: { slow: { description: 'sleeps', argv: ['sleep', '{s}'], parameters, sideEffects: false, timeoutMs: 50 } }, toolTimeouts });
    const { result } = await run([{ calls: [call('slow', { s: seconds })] }, { chunks: ['x'] }], { tools: box.tools });
    expect(result.calls[0]).toMatchObject(expected);
  });

  it('stops max_iterations when rounds keep succeeding', async () => {
    const { result } = await run([{ calls: [call('ok_tool', { q: 'a' })] }], { maxIterations: 2 });
    expect(result).toMatchObject({ status: 'max_iterations', iterations: 2, requests: 2 });
    expect(result.message).toContain('--max-iterations');
  });

  it.each<[string, Step[], number, string, string]>([
    // the script, --max-iterations → the run's text (the last round's words, as shown), the message's count
    ['one round', [{ chunks: ['Looking at notes.'], calls: [call('ok_tool', { q: 'a' })] }], 1, 'Looking at notes.', 'stopped after 1 tool round without'],
    ['the last round said nothing', [{ chunks: ['First.'], calls: [call('ok_tool', { q: 'a' })] }, { calls: [call('ok_tool', { q: 'b' })] }], 2, '', 'stopped after 2 tool rounds without'],
    [
      'an all-failure round between: it ran, but does not count toward the limit',
      [{ chunks: ['One.'], calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['Two.'], calls: [call('fail_tool', { q: 'b' })] }, { chunks: ['Three.'], calls: [call('ok_tool', { q: 'c' })] }],
      2,
      'Three.',
      'stopped after 3 tool rounds, 2 of them with a successful call (the most allowed), without',
    ],
  ])('max_iterations keeps the words shown last and counts the rounds that ran: %s', async (_case, steps, maxIterations, text, message) => {
    const { result } = await run(steps, { maxIterations });
    expect(result).toMatchObject({ status: 'max_iterations', text });
    expect(result.message).toContain(message);
  });

  it('runs a round\'s calls in parallel', async () => {
    let started = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const waiting = tool('ok_tool', async () => {
      if (++started === 3) release();
      await gate;
      return { started };
    });
    const { result } = await run([{ calls: [call('ok_tool', { q: '1' }), call('ok_tool', { q: '2' }), call('ok_tool', { q: '3' })] }, { chunks: ['x'] }], { tools: [waiting] });
    expect(result.calls.map((c) => c.result)).toEqual(['{"started":3}', '{"started":3}', '{"started":3}']);
  });

  it('starts all 8 calls of a round before any ends, and feeds the results back in call order whatever order they end in', async () => {
    const releases: (() => void)[] = [];
    const ended: string[] = [];
    const waiting = tool('ok_tool', async (args) => {
      await new Promise<void>((resolve) => releases.push(resolve));
      ended.push(String(args.q));
      return { q: args.q };
    });
    const calls = Array.from({ length: 8 }, (_, index) => call('ok_tool', { q: String(index) }));
    const running = run([{ calls }, { chunks: ['x'] }], { tools: [waiting] });
    await waitFor(() => expect(releases).toHaveLength(8));
    for (const release of [...releases].reverse()) release();
    const { result, bodies } = await running;
    expect(ended).toEqual(['7', '6', '5', '4', '3', '2', '1', '0']);
    const order = ['0', '1', '2', '3', '4', '5', '6', '7'];
    expect(result.calls.map((c) => [c.id, c.arguments])).toEqual(order.map((q, index) => [`call_1_${String(index)}`, { q }]));
    const sent = bodies[1]?.messages.slice(2) ?? [];
    expect(sent[0]?.tool_calls?.map((c) => c.id)).toEqual(order.map((_, index) => `call_1_${String(index)}`));
    expect(sent.slice(1).map((m) => m.content)).toEqual(order.map((q) => JSON.stringify({ q })));
  });

  describe('the STOP signal', () => {
    it('stops before the first request', async () => {
      const { result, bodies } = await run([{ chunks: ['x'] }], { stopped: () => true });
      expect(result).toMatchObject({ status: 'stopped', stopReason: 'stop_signal', requests: 0 });
      expect(bodies).toHaveLength(0);
    });

    it("a STOP found before the request after a round keeps that round's words, as shown", async () => {
      let stop = false;
      const stopping = tool('ok_tool', () => ((stop = true), Promise.resolve({})));
      const { result } = await run([{ chunks: ['Looking.'], calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['never'] }], { tools: [stopping], stopped: () => stop });
      expect(result).toMatchObject({ status: 'stopped', text: 'Looking.', requests: 1, iterations: 1 });
    });

    it('a STOP found before a re-ask keeps no words: the invalid response is rolled back', async () => {
      let checks = 0;
      // Clear for the request, its chunk and its end; set when the re-ask is about to go out.
      const { result } = await run([{ chunks: ['Hmm.'], calls: [call('nope', {})] }, { chunks: ['never'] }], { stopped: () => ++checks >= 4 });
      expect(result).toMatchObject({ status: 'stopped', text: '', requests: 1 });
    });

    it('stops a running answer within one chunk and keeps its partial text', async () => {
      let stop = false;
      const { result } = await run([{ chunks: ['one ', 'two ', 'three ', 'four'] }], { stopped: () => stop, onChunk: (index) => (stop = index === 1) });
      expect(result).toMatchObject({ status: 'stopped', text: 'one two ' });
    });

    it('stops before a tool round, keeping what the model said before its calls', async () => {
      let ran = false;
      let checks = 0;
      const watched = tool('ok_tool', () => {
        ran = true;
        return Promise.resolve({});
      });
      // Clear for the request, its chunk and its end (4th check: the answer has ended, the tool round is next).
      const { result } = await run([{ chunks: ['let me look'], calls: [call('ok_tool', { q: 'a' })] }], { tools: [watched], stopped: () => ++checks >= 4 });
      // The words said before the calls stay: they were shown, so they are logged.
      expect(result).toMatchObject({ status: 'stopped', text: 'let me look' });
      expect(result.calls).toEqual([{ id: 'call_1_0', name: 'ok_tool', arguments: { q: 'a' }, outcome: 'not_run', round: 1, ms: 0, result_chars: 0, error: 'not run: the STOP signal ended the run first' }]);
      expect(ran).toBe(false);
    });
  });

  describe('confirmation of side effects', () => {
    it('asks with the preview and runs on yes', async () => {
      const { result, confirms } = await run([{ calls: [call('side_tool', { q: 'f' })] }, { chunks: ['x'] }]);
      expect(confirms).toEqual([{ id: 'call_1_0', tool: 'side_tool', args: { q: 'f' }, preview: '$ touch f' }]);
      expect(result.status).toBe('ok');
    });

    it.each([
      ['no', 'the user refused the call'],
      ['no-terminal', 'pass --yes'],
    ] as const)('answer %s is a permanent failure', async (answer, text) => {
      const { result } = await run([{ calls: [call('side_tool', { q: 'f' })] }], { confirm: answer });
      expect(result).toMatchObject({ status: 'tool_failures', stopReason: 'permanent_failure' });
      expect(result.calls[0]?.error).toContain(text);
    });

    it('does not ask for a call its tool says only reads (process status), with no terminal too; asks for its other calls', async () => {
      const looker = tool('look_tool', (args) => Promise.resolve({ did: args.q }), { sideEffects: true, readsOnly: (args) => args.q === 'look', preview: (args) => Promise.resolve(`look ${String(args.q)}`) });
      const { result, confirms } = await run([{ calls: [call('look_tool', { q: 'look' }), call('look_tool', { q: 'change' })] }, { chunks: ['x'] }], { tools: [looker] });
      expect(confirms).toEqual([{ id: 'call_1_1', tool: 'look_tool', args: { q: 'change' }, preview: 'look change' }]);
      expect(result.status).toBe('ok');
      const unasked = await run([{ calls: [call('look_tool', { q: 'look' })] }, { chunks: ['x'] }], { tools: [looker], confirm: 'no-terminal' });
      expect(unasked.result.calls[0]).toMatchObject({ outcome: 'success' });
    });

    it('does not ask with yes, nor for tools without side effects', async () => {
      const { confirms } = await run([{ calls: [call('side_tool', { q: 'f' }), call('ok_tool', { q: 'g' })] }, { chunks: ['x'] }], { yes: true });
      expect(confirms).toEqual([]);
    });
  });

  describe('microcompaction', () => {
    it('saves a result past its budget and sends its head and a note', async () => {
      const { result, saved, bodies } = await run([{ calls: [call('big_tool', { q: 'a' })] }, { chunks: ['x'] }]);
      const full = JSON.stringify({ text: 'x'.repeat(500) });
      expect(saved).toEqual({ 'tool-results/S1/r1-call_1_0.json': full });
      const sent = bodies[1]?.messages.at(-1)?.content ?? '';
      expect(sent.length).toBeLessThanOrEqual(200);
      expect(JSON.parse(sent)).toMatchObject({ truncated: true, note: `truncated: the first part of the ${String(full.length)} characters of call call_1_0 (saved whole for the user); for more, call the tool again for a narrower part` });
      expect(result.calls[0]).toMatchObject({ saved_as: 'tool-results/S1/r1-call_1_0.json', result_chars: full.length });
      expect(result.compacted).toEqual([{ id: 'call_1_0', round: 1, kind: 'saved', chars_before: full.length, chars_after: sent.length, saved_as: 'tool-results/S1/r1-call_1_0.json' }]);
    });

    it('a result its tool fitted to the budget is sent as fitted, and what it was cut from is saved whole', async () => {
      const { result, saved, bodies } = await run([{ calls: [call('fitting_tool', { q: 'a' })] }, { chunks: ['x'] }]);
      const sent = JSON.stringify({ exit_code: 2, stdout: 'line\n', stderr: 'FATAL' });
      const full = JSON.stringify(FITTED_WHOLE);
      expect(bodies[1]?.messages.at(-1)?.content).toBe(sent);
      expect(saved).toEqual({ 'tool-results/S1/r1-call_1_0.json': full });
      expect(result.calls[0]).toMatchObject({ saved_as: 'tool-results/S1/r1-call_1_0.json', result_chars: full.length, result: sent });
      expect(result.compacted).toEqual([{ id: 'call_1_0', round: 1, kind: 'saved', chars_before: full.length, chars_after: sent.length, saved_as: 'tool-results/S1/r1-call_1_0.json' }]);
    });

    it('writes a saved result while the model answers the next request, and ends only once it is written', async () => {
      let finish!: () => void;
      const written = new Promise<void>((resolve) => (finish = resolve));
      const saves: string[] = [];
      let requests = 0;
      let ended = false;
      const running = run([{ calls: [call('big_tool', { q: 'a' })] }, { chunks: ['x'] }], {
        // Read once for every request.
        memo: () => {
          requests++;
          return {};
        },
        save: (path) => {
          saves.push(path);
          return written;
        },
      }).then((outcome) => {
        ended = true;
        return outcome;
      });
      // The next request went out with the head and the note while the save was still under way.
      await waitFor(() => expect({ requests, saves }).toEqual({ requests: 2, saves: ['tool-results/S1/r1-call_1_0.json'] }));
      await new Promise((resolve) => setImmediate(resolve));
      expect(ended).toBe(false);
      finish();
      const { result, bodies } = await running;
      expect(bodies).toHaveLength(2);
      expect(result).toMatchObject({ status: 'ok', text: 'x', compacted: [{ kind: 'saved', saved_as: 'tool-results/S1/r1-call_1_0.json' }] });
    });

    it('a failed save fails the run before another tool runs', async () => {
      let ran = 0;
      const counted = tool('ok_tool', () => Promise.resolve({ ran: ++ran }));
      const failing = run([{ calls: [call('big_tool', { q: 'a' })] }, { calls: [call('ok_tool', { q: 'b' })] }, { chunks: ['x'] }], {
        tools: [bigTool, counted],
        save: () => Promise.reject(new Error('EACCES: permission denied')),
      });
      const { result } = await failing;
      expect(result).toMatchObject({
        status: 'error',
        stopReason: 'result_not_saved',
        message: "cannot save the tool result tool-results/S1/r1-call_1_0.json in the data home (EACCES: permission denied); fix the folder's permissions or free space, then ask again",
        modelFailure: null,
      });
      expect(result.calls.map((c) => [c.name, c.round, c.outcome, c.error])).toEqual([
        ['big_tool', 1, 'success', undefined],
        ['ok_tool', 2, 'not_run', 'not run: an earlier result could not be saved'],
      ]);
      expect(ran).toBe(0);
    });

    it.each<[string, Error, string]>([
      ['a system error: the usual fix', new Error('EACCES: permission denied'), "(EACCES: permission denied); fix the folder's permissions or free space, then ask again"],
      ['a link: its own fix, no other', new SymlinkRefusedError('/h/tool-results'), '(/h/tool-results is a symbolic link; Argo does not follow links in its data home (remove the link and try again))'],
      ['another user\'s folder: its own fix, no other', new ForeignFolderError('/h/tool-results', 0, 'remove it, and Argo makes the folder again'), '(/h/tool-results belongs to another user (uid 0); remove it, and Argo makes the folder again)'],
    ])('a save that fails with %s', async (_case, error, ending) => {
      const { result } = await run([{ calls: [call('big_tool', { q: 'a' })] }, { chunks: ['x'] }], { save: () => Promise.reject(error) });
      expect(result.message).toBe(`cannot save the tool result tool-results/S1/r1-call_1_0.json in the data home ${ending}`);
    });

    it('a save that fails while the model gives its final answer ends the run as an error, the answer kept', async () => {
      const { result } = await run([{ calls: [call('big_tool', { q: 'a' })] }, { chunks: ['all ', 'done'] }], { save: () => Promise.reject(new Error('ENOSPC: no space left on device')) });
      expect(result).toMatchObject({ status: 'error', stopReason: 'result_not_saved', text: 'all done', message: expect.stringContaining('(ENOSPC: no space left on device)') as unknown });
    });

    it.each([
      // the saves that fail (of round 1's two results) → each call's saved_as and compaction kind, and the message's file
      [['r1-call_1_0'], [[undefined, 'truncated'], ['tool-results/S1/r1-call_1_1.json', 'saved']], 'r1-call_1_0'],
      [['r1-call_1_1'], [['tool-results/S1/r1-call_1_0.json', 'saved'], [undefined, 'truncated']], 'r1-call_1_1'],
      [['r1-call_1_0', 'r1-call_1_1'], [[undefined, 'truncated'], [undefined, 'truncated']], 'r1-call_1_0'],
    ])('saves of %j fail: logged without saved_as (no such file), cut with the rest not kept', async (failing, logged, named) => {
      const save = (path: string): Promise<void> => (failing.some((name) => path.endsWith(`/${name}.json`)) ? Promise.reject(new Error('EACCES: permission denied')) : Promise.resolve());
      const { result, bodies } = await run([{ calls: [call('big_tool', { q: 'a' }), call('big_tool', { q: 'b' })] }, { chunks: ['x'] }], { save });
      expect(result).toMatchObject({ status: 'error', stopReason: 'result_not_saved', message: expect.stringContaining(`tool-results/S1/${named}.json`) as unknown });
      expect(result.calls.map((c) => [c.saved_as, c.outcome])).toEqual(logged.map(([savedAs]) => [savedAs, 'success']));
      expect(result.compacted.map((c) => [c.saved_as, c.kind])).toEqual(logged);
      // What the model was sent stays as logged: the save fails only once the next request is out.
      expect(result.calls.map((c) => c.result)).toEqual(bodies[1]?.messages.filter((m) => m.role === 'tool').map((m) => m.content));
    });

    it('an unlogged run keeps nothing: the head goes to the model with a note saying the rest was not kept', async () => {
      const { result, saved, bodies } = await run([{ calls: [call('big_tool', { q: 'a' })] }, { chunks: ['x'] }], { unlogged: true });
      const full = JSON.stringify({ text: 'x'.repeat(500) });
      const sent = bodies[1]?.messages.at(-1)?.content ?? '';
      expect(saved).toEqual({});
      expect(JSON.parse(sent)).toMatchObject({ truncated: true, note: `truncated: the first part of the ${String(full.length)} characters of call call_1_0 (the rest was not kept); for more, call the tool again for a narrower part` });
      expect(result.calls[0]).not.toHaveProperty('saved_as');
      expect(result.compacted).toEqual([{ id: 'call_1_0', round: 1, kind: 'truncated', chars_before: full.length, chars_after: sent.length }]);
    });

    it('a call id the model repeats every round: saved apart, recorded with its round, sent back as it came', async () => {
      const steps = [{ calls: [call('huge_tool', { q: 'a' }, 'call_0')] }, { calls: [call('huge_tool', { q: 'b' }, 'call_0')] }, { chunks: ['x'] }];
      const { result, saved, bodies } = await run(steps, { tools: [hugeTool] });
      expect(Object.keys(saved)).toEqual(['tool-results/S1/r1-call_0.json', 'tool-results/S1/r2-call_0.json']);
      expect(result.calls.map((c) => [c.id, c.round, c.saved_as])).toEqual([
        ['call_0', 1, 'tool-results/S1/r1-call_0.json'],
        ['call_0', 2, 'tool-results/S1/r2-call_0.json'],
      ]);
      expect(result.compacted.map((c) => [c.id, c.round, c.kind])).toEqual([
        ['call_0', 1, 'saved'],
        ['call_0', 2, 'saved'],
        ['call_0', 1, 'summarized'],
      ]);
      const ids = (bodies[2]?.messages ?? []).flatMap((m) => m.tool_calls?.map((c) => c.id) ?? []);
      expect(ids).toEqual(['call_0', 'call_0']);
    });

    it("an older round's truncated result is summarized with the full result's length and head, not the note's", async () => {
      const steps = [{ calls: [call('huge_tool', { q: 'a' })] }, { calls: [call('ok_tool', { q: 'b' })] }, { chunks: ['x'] }];
      const { result, bodies } = await run(steps, { tools: [hugeTool, okTool] });
      const full = JSON.stringify({ text: 'y'.repeat(3000) });
      const [summary] = (bodies[2]?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
      expect(JSON.parse(summary ?? '')).toEqual({ summary: `huge_tool({"q":"a"}) returned ${String(full.length)} characters: {"text":"${'y'.repeat(91)}…` });
      expect(result.compacted.find((c) => c.kind === 'summarized')).toEqual({ id: 'call_1_0', round: 1, kind: 'summarized', chars_before: full.length, chars_after: summary?.length });
    });

    it('reduces older rounds to one-line summaries and keeps the latest whole; the same input compacts the same way', async () => {
      const long = tool('ok_tool', (args) => Promise.resolve({ text: `${String(args.q)} `.repeat(100) }));
      const steps = [{ calls: [call('ok_tool', { q: 'first' })] }, { calls: [call('ok_tool', { q: 'second' })] }, { chunks: ['x'] }];
      const one = await run(steps, { tools: [long] });
      const two = await run(steps, { tools: [long] });
      const last = one.bodies[2]?.messages ?? [];
      const results = last.filter((m) => m.role === 'tool').map((m) => m.content);
      expect(JSON.parse(results[0] ?? '')).toEqual({ summary: expect.stringMatching(/^ok_tool\(\{"q":"first"\}\) returned 611 characters: \{"text":"first first/) as unknown });
      expect(results[1]).toBe(JSON.stringify({ text: 'second '.repeat(100) }));
      expect(one.result.compacted).toEqual([{ id: 'call_1_0', round: 1, kind: 'summarized', chars_before: 611, chars_after: results[0]?.length }]);
      expect(JSON.stringify(two.bodies)).toBe(JSON.stringify(one.bodies));
    });
  });

  describe('the context window check of each request', () => {
    it.each([
      // the script → the requests checked (1-based), the run's status
      ['answered at once', [{ chunks: ['hi'] }], [1], 'ok'],
      ['one round, then the answer', [{ calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['x'] }], [1, 2], 'ok'],
      ['two rounds, then the answer', [{ calls: [call('ok_tool', { q: 'a' })] }, { calls: [call('ok_tool', { q: 'b' })] }, { chunks: ['x'] }], [1, 2, 3], 'ok'],
      ['a re-ask in round 1', [{ calls: [call('nope', {})] }, { chunks: ['x'] }], [1, 2], 'ok'],
      ['every call failed', [{ calls: [call('fail_tool', { q: 'a' })] }, { chunks: ['x'] }], [1, 2], 'ok'],
    ] as [string, Step[], number[], string][])('%s: requests checked %j', async (_case, steps, checked, status) => {
      const seen: number[] = [];
      let requests = 0;
      const { result, bodies } = await run(steps, {
        memo: () => (requests++, {}),
        checkWindow: () => {
          seen.push(requests);
          return Promise.resolve();
        },
      });
      expect(seen).toEqual(checked);
      expect(result.status).toBe(status);
      expect(bodies).toHaveLength(steps.length);
    });

    it('checks what is sent, older rounds compacted, and the request waits for the check', async () => {
      const long = tool('ok_tool', (args) => Promise.resolve({ text: `${String(args.q)} `.repeat(100) }));
      const steps = [{ calls: [call('ok_tool', { q: 'first' })] }, { calls: [call('ok_tool', { q: 'second' })] }, { chunks: ['x'] }];
      const checked: string[] = [];
      const order: string[] = [];
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const running = run(steps, {
        tools: [long],
        memo: () => (order.push('memo'), {}),
        checkWindow: async (request) => {
          checked.push(JSON.stringify(request.body));
          order.push('check');
          if (checked.length === 3) await held;
        },
      });
      await waitFor(() => expect(checked).toHaveLength(3));
      // The third request is not sent while its check waits (a model's window asked of Ollama).
      expect(order).toEqual(['memo', 'check', 'memo', 'check', 'memo', 'check']);
      release();
      const { bodies } = await running;
      expect(checked).toEqual(bodies.map((body) => JSON.stringify(body)));
      expect(JSON.parse(bodies[2]?.messages.find((m) => m.role === 'tool')?.content ?? '')).toHaveProperty('summary');
    });
  });

  it('reads the memo fresh for every request and puts it in the system prompt', async () => {
    let version = 0;
    const { bodies } = await run([{ calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['x'] }], { memo: () => ({ lang: `v${++version}` }), ephemeralSystem: 'Use tools.' });
    expect(bodies.map((b) => b.messages[0])).toEqual([
      { role: 'system', content: 'Be brief.\n\nUse tools.\n\nMemo (notes kept with the memo tool):\n- lang: "v1"' },
      { role: 'system', content: 'Be brief.\n\nUse tools.\n\nMemo (notes kept with the memo tool):\n- lang: "v2"' },
    ]);
  });

  describe('a memo that cannot be read ends the run with its reason, the calls that ran kept', () => {
    const broken = new RuntimeError('/h/memo.json is not valid JSON; fix it by hand or delete it (the memo then starts empty)');
    const denied = Object.assign(new Error("EACCES: permission denied, open '/h/memo.json'"), { code: 'EACCES' });
    it.each<[string, Step[], number, Error, Partial<AgentResult>, [string, string][]]>([
      // the case, the script, the read that fails (1 = before the first request), what it throws → the result, the calls logged
      ['before the first request', [{ chunks: ['never'] }], 1, broken, { text: '', iterations: 0, requests: 0, firstRequest: null, message: broken.message }, []],
      [
        'before the request after a round: that round\'s words and calls are kept',
        [{ chunks: ['reading'], calls: [call('ok_tool', { q: 'a' }), call('fail_tool', { q: 'b' })] }, { chunks: ['never'] }],
        2,
        broken,
        { text: 'reading', iterations: 1, allFailureRounds: 0, requests: 1, message: broken.message },
        [['ok_tool', 'success'], ['fail_tool', 'failure']],
      ],
      [
        'before a re-ask: the invalid response is rolled back, its words not kept',
        [{ chunks: ['hmm'], calls: [call('no_tool', {})] }, { chunks: ['never'] }],
        2,
        broken,
        { text: '', iterations: 0, requests: 1 },
        [['no_tool', 'invalid']],
      ],
      [
        'a failure not of Argo\'s own words is quoted, with what to do',
        [{ chunks: ['never'] }],
        1,
        denied,
        { message: "cannot read the memo (EACCES: permission denied, open '/h/memo.json'); fix memo.json in the data home (its permissions, or what it holds) or delete it, then ask again" },
        [],
      ],
    ])('%s', async (_case, steps, failing, error, expected, calls) => {
      let reads = 0;
      const memo = (): Record<string, string> => {
        if (++reads === failing) throw error;
        return {};
      };
      const { result, bodies } = await run(steps, { memo });
      expect(result).toMatchObject({ status: 'error', stopReason: 'memo_unreadable', modelFailure: null, ...expected });
      expect(result.calls.map((c) => [c.name, c.outcome])).toEqual(calls);
      expect(bodies).toHaveLength(failing - 1);
    });
  });

  it.each<[string, Step[], () => boolean, number | null]>([
    ['a run of two requests and a re-ask: the first as sent, with the memo of its moment', [{ calls: [call('no_tool', {})] }, { calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['x'] }], () => false, 0],
    ['STOP set before any request: none', [{ chunks: ['x'] }], () => true, null],
  ])("the run's first request (its log line's request_sha256): %s", async (_case, steps, stopped, index) => {
    let version = 0;
    const { result, bodies } = await run(steps, { memo: () => ({ lang: `v${++version}` }), stopped });
    expect(result.firstRequest === null ? null : JSON.stringify(result.firstRequest.body)).toBe(index === null ? null : JSON.stringify(bodies[index]));
    if (index !== null) expect(bodies.length).toBe(3);
  });

  it.each<[string, Step[], ConfirmAnswer, 'refused' | 'no-terminal' | null]>([
    ['refused on the terminal', [{ calls: [call('side_tool', { q: 'a' })] }], 'no', 'refused'],
    ['no terminal to ask on', [{ calls: [call('side_tool', { q: 'a' })] }], 'no-terminal', 'no-terminal'],
    ['a tool that fails for good: not a confirmation', [{ calls: [call('perm_tool', { q: 'a' })] }], 'yes', null],
    ['a refused call after a permanent failure in the same round: the first one ended the run', [{ calls: [call('perm_tool', { q: 'a' }), call('side_tool', { q: 'b' })] }], 'no', null],
  ])('a permanent failure says whether it was a call not confirmed: %s', async (_case, steps, confirm, unconfirmed) => {
    const { result } = await run(steps, { confirm });
    expect(result).toMatchObject({ status: 'tool_failures', stopReason: 'permanent_failure', unconfirmed });
  });

  it('ends as interrupted on Ctrl-C during a tool', async () => {
    const controller = new AbortController();
    const waits = tool('ok_tool', (_args) => {
      controller.abort();
      return Promise.reject(new ToolError('the command was interrupted', false));
    });
    const { result } = await run([{ calls: [call('ok_tool', { q: 'a' })] }], { tools: [waits], signal: controller.signal });
    expect(result.status).toBe('interrupted');
  });

  it('an optional parameter sent as null is absent to the tool; the call is logged, shown and sent back as the model sent it', async () => {
    const seen: Record<string, unknown>[] = [];
    const echo = tool('ok_tool', (args) => (seen.push(args), Promise.resolve({ echoed: args.q })));
    const { result, bodies, events } = await run([{ calls: [call('ok_tool', { q: 'a', n: null })] }, { chunks: ['done'] }], { tools: [echo] });
    expect(result).toMatchObject({ status: 'ok', requests: 2 });
    expect(seen).toEqual([{ q: 'a' }]);
    expect(result.calls[0]).toMatchObject({ outcome: 'success', arguments: { q: 'a', n: null } });
    expect(bodies[1]?.messages[2]?.tool_calls?.[0]?.function.arguments).toEqual({ q: 'a', n: null });
    expect(events).toContainEqual(expect.objectContaining({ type: 'tool_status', status: 'success', args: { q: 'a', n: null } }));
  });

  it('arguments nested 5000 levels deep are an invalid response: asked again, then invalid_response, every call logged', async () => {
    const deep = JSON.parse(`{"q":${'['.repeat(4999)}${']'.repeat(4999)}}`) as unknown;
    const { result, events } = await run([{ calls: [call('ok_tool', deep)] }]);
    expect(result).toMatchObject({ status: 'invalid_response', stopReason: 'invalid_response', requests: 4 });
    expect(result.message).toContain('the arguments nest arrays and objects more than 100 levels deep');
    expect(result.calls).toHaveLength(4);
    expect(result.calls[3]).toMatchObject({ outcome: 'invalid', arguments: '[arguments nested more than 100 levels deep: not kept]', attempt: 4 });
    expect(events.filter((event) => event.type === 'reask')).toHaveLength(3);
    // The log line can be written.
    expect(() => JSON.stringify(result)).not.toThrow();
  });

  // A tool that ignores its signal (a glob walking /, a lock wait) must not hold the run: the call is
  // cut when the run is, logged as a failure, never as the success the tool reports afterwards.
  it.each<[string, string | undefined, string, string]>([
    // what cuts the run, the abort's reason → the run's status, its stop reason
    ['Ctrl-C', undefined, 'interrupted', 'interrupted'],
    ['a STOP', 'stop', 'stopped', 'stop_signal'],
    ['a client gone', 'gone', 'interrupted', 'interrupted'],
  ])('%s while a tool that ignores its signal runs ends the run at once; the call is logged cut, not success', async (_case, reason, status, stopReason) => {
    const controller = new AbortController();
    let finish: (result: ToolResult) => void = () => undefined;
    let toldToStop = false;
    const deaf = tool('ok_tool', (_args) => {
      setImmediate(() => controller.abort(reason));
      return new Promise<ToolResult>((resolve) => (finish = resolve));
    });
    const heard = tool('fail_tool', (_args) => new Promise<ToolResult>(() => undefined), {
      run: (_args, context) => {
        context.signal.addEventListener('abort', () => (toldToStop = true));
        return new Promise<ToolResult>(() => undefined);
      },
    });
    const { result, events } = await run([{ calls: [call('ok_tool', { q: 'a' }), call('fail_tool', { q: 'b' })] }, { chunks: ['never'] }], {
      tools: [deaf, heard],
      signal: controller.signal,
      abortedByStop: (why) => why === 'stop',
    });
    expect(result).toMatchObject({ status, stopReason, requests: 1, iterations: 0 });
    expect(result.calls.map(({ name, outcome, error }) => [name, outcome, error])).toEqual([
      ['ok_tool', 'failure', 'the call was interrupted'],
      ['fail_tool', 'failure', 'the call was interrupted'],
    ]);
    expect(toldToStop).toBe(true);
    expect(events).toContainEqual(expect.objectContaining({ type: 'tool_status', name: 'ok_tool', status: 'failure' }));
    // What the tool says after the cut changes nothing.
    finish({ done: true });
    await new Promise((resolve) => setImmediate(resolve));
    expect(result.calls[0]).toMatchObject({ outcome: 'failure' });
  });

  it('a run cut before a call of its round started cuts that call at once too', async () => {
    const controller = new AbortController();
    const cutter = tool('fail_tool', () => (controller.abort(), new Promise<ToolResult>(() => undefined)));
    const deaf = tool('ok_tool', () => new Promise<ToolResult>(() => undefined));
    const { result } = await run([{ calls: [call('fail_tool', { q: 'a' }), call('ok_tool', { q: 'b' })] }], { tools: [cutter, deaf], signal: controller.signal });
    expect(result.status).toBe('interrupted');
    expect(result.calls.map(({ outcome, error }) => [outcome, error])).toEqual([
      ['failure', 'the call was interrupted'],
      ['failure', 'the call was interrupted'],
    ]);
  });

  it('a tool timed out is told so by its signal (so it takes no effect later), the run is not', async () => {
    let seen: AbortSignal | undefined;
    const deaf = tool('ok_tool', (_args) => new Promise<ToolResult>(() => undefined), {
      timeoutMs: 20,
      run: (_args, context) => {
        seen = context.signal;
        return new Promise<ToolResult>(() => undefined);
      },
    });
    const controller = new AbortController();
    const { result } = await run([{ calls: [call('ok_tool', { q: 'a' })] }, { chunks: ['done'] }], { tools: [deaf], signal: controller.signal });
    expect(result).toMatchObject({ status: 'ok', text: 'done' });
    expect(result.calls[0]).toMatchObject({ outcome: 'failure', error: 'timed out after 0.02 s' });
    expect(seen?.aborted).toBe(true);
    expect(controller.signal.aborted).toBe(false);
  });

  it('a STOP that cut a tool (a server aborts its runs on one) ends the run as stopped, not interrupted', async () => {
    const controller = new AbortController();
    const cut = tool('ok_tool', (_args) => {
      controller.abort('stop');
      return Promise.reject(new ToolError('the command was interrupted', false));
    });
    const { result } = await run([{ calls: [call('ok_tool', { q: 'a' })] }], { tools: [cut], signal: controller.signal, abortedByStop: (reason) => reason === 'stop' });
    expect(result).toMatchObject({ status: 'stopped', stopReason: 'stop_signal', message: 'stopped by the STOP signal; run "argo stop --clear" to allow runs again' });
  });

  it.each<[string, RunHints | undefined, string]>([
    ['the CLI\'s', undefined, 'stopped after 1 tool round without a final answer; raise --max-iterations or ask a narrower question'],
    ['a server\'s', SERVER_RUN_HINTS, 'stopped after 1 tool round without a final answer; raise "maxIterations" in the server\'s config.json or ask a narrower question'],
  ])('end messages name %s fix', async (_, hints, message) => {
    const { result } = await run([{ calls: [call('ok_tool', { q: 'a' })] }, { calls: [call('ok_tool', { q: 'b' })] }], { maxIterations: 1, ...(hints ? { hints } : {}) });
    expect(result).toMatchObject({ status: 'max_iterations', message });
  });

  it.each<[string, RunHints | undefined, string]>([
    ["the CLI's: the logged call", undefined, 'tool perm_tool failed and retrying cannot help (no such service); see argo logs --status tool_failures'],
    // No log line was written to point to.
    ["an unlogged CLI run's (--no-log)", CLI_UNLOGGED_RUN_HINTS, 'tool perm_tool failed and retrying cannot help (no such service); fix the cause and ask again'],
    ["a server's", SERVER_RUN_HINTS, "tool perm_tool failed and retrying cannot help (no such service); each call's error was streamed as a tool_execution_error event, and is in the turn's log line on the server (argo logs --status tool_failures)"],
  ])('a permanent failure says where its error is: %s', async (_, hints, message) => {
    const { result } = await run([{ calls: [call('perm_tool', { q: 'a' })] }], hints ? { hints } : {});
    expect(result).toMatchObject({ status: 'tool_failures', stopReason: 'permanent_failure', message });
  });

  describe('the calls of a response cut short are logged, never run', () => {
    const NOT_RUN_STOPPED = 'not run: the STOP signal ended the run first';
    const NOT_RUN_INTERRUPTED = 'not run: the run was interrupted first';
    const NOT_RUN_FAILED = 'not run: the model request failed before the response ended';
    const sent = [call('ok_tool', { q: 'a' }, 'A'), call('ok_tool', { q: 'b' }, 'A'), call('nope', '{"q":')];
    type Cut = 'stop' | 'ctrl-c' | 'server stop' | 'error';
    it.each<[string, Cut, Step[], string, [string, string, unknown, string, number, number | undefined, string][]]>([
      // how it is cut, the script → the run's status, each logged call as [id, name, arguments, outcome, round, attempt, error]
      [
        'STOP on a chunk after the calls came',
        'stop',
        [{ chunks: ['one ', 'two'], sentBeforeCut: sent }],
        'stopped',
        [
          ['A', 'ok_tool', { q: 'a' }, 'not_run', 1, undefined, NOT_RUN_STOPPED],
          ['A', 'ok_tool', { q: 'b' }, 'not_run', 1, undefined, 'not run: an earlier call of the response has the same id'],
          ['call_1_2', 'nope', '{"q":', 'not_run', 1, undefined, NOT_RUN_STOPPED],
        ],
      ],
      ['Ctrl-C', 'ctrl-c', [{ chunks: ['one ', 'two'], sentBeforeCut: [call('ok_tool', { q: 'a' })] }], 'interrupted', [['call_1_0', 'ok_tool', { q: 'a' }, 'not_run', 1, undefined, NOT_RUN_INTERRUPTED]]],
      ["a server's STOP, through the run's signal", 'server stop', [{ chunks: ['one ', 'two'], sentBeforeCut: [call('ok_tool', { q: 'a' })] }], 'stopped', [['call_1_0', 'ok_tool', { q: 'a' }, 'not_run', 1, undefined, NOT_RUN_STOPPED]]],
      ['an error line from Ollama after a call', 'error', [{ status: 'error', failure: 'runner crashed', calls: [call('ok_tool', { q: 'a' })] }], 'error', [['call_1_0', 'ok_tool', { q: 'a' }, 'not_run', 1, undefined, NOT_RUN_FAILED]]],
      [
        'in a later round, on a re-ask: its round and attempt',
        'error',
        [{ calls: [call('ok_tool', { q: 'a' })] }, { calls: [call('nope', {})] }, { status: 'error', failure: 'runner crashed', calls: [call('ok_tool', { q: 'c' })] }],
        'error',
        [
          ['call_1_0', 'ok_tool', { q: 'a' }, 'success', 1, undefined, ''],
          ['call_2_0', 'nope', {}, 'invalid', 2, undefined, 'unknown tool "nope"'],
          ['call_2_0', 'ok_tool', { q: 'c' }, 'not_run', 2, 2, NOT_RUN_FAILED],
        ],
      ],
    ])('%s', async (_case, how, steps, status, logged) => {
      let ran = 0;
      const counted = tool('ok_tool', (args) => (ran++, Promise.resolve({ echoed: args.q })));
      const controller = new AbortController();
      let stop = false;
      const cutAt = (index: number): void => {
        if (index !== 1) return;
        if (how === 'stop') stop = true;
        if (how === 'ctrl-c') controller.abort();
        if (how === 'server stop') controller.abort('stop');
      };
      const { result } = await run(steps, { tools: [counted], onChunk: cutAt, stopped: () => stop, signal: controller.signal, abortedByStop: (reason) => reason === 'stop' });
      expect(result.status).toBe(status);
      expect(result.calls.map((c) => [c.id, c.name, c.arguments, c.outcome, c.round, c.attempt, c.error ?? ''])).toEqual(logged);
      // Only the first round's call ran; none of a response cut short did.
      expect(ran).toBe(logged.filter(([, , , outcome]) => outcome === 'success').length);
    });
  });

  it('reports a model failure as error with its message', async () => {
    const { result } = await run([{ status: 'error', failure: 'Ollama at x answered HTTP 500' }]);
    expect(result).toMatchObject({ status: 'error', stopReason: 'model_error', message: 'Ollama at x answered HTTP 500' });
  });

  it.each<[string, string | null, string | null]>([
    ['a response cut by an error has no done_reason, whatever the round before said', null, null],
    ['the last response\'s done_reason is the run\'s', 'length', 'length'],
  ])('%s', async (_, last, expected) => {
    const { result } = await run([{ calls: [call('ok_tool', { q: 'a' })] }, last === null ? { status: 'error', failure: 'cut', doneReason: null } : { doneReason: last }]);
    expect(result.metrics.done_reason).toBe(expected);
  });
});

describe('the run as it stands after each round (what a killed run is logged with)', () => {
  /** Each progress as told: its status, rounds, calls (name and outcome) and what was saved. */
  const told = (progress: AgentResult) => ({
    status: progress.status,
    stopReason: progress.stopReason,
    iterations: progress.iterations,
    allFailureRounds: progress.allFailureRounds,
    calls: progress.calls.map((record) => `${record.name}:${record.outcome}${record.saved_as !== undefined ? ':saved' : ''}`),
    compacted: progress.compacted.map((record) => record.kind),
  });

  it.each<[string, Step[], ReturnType<typeof told>[]]>([
    ['an answer in words: no round, nothing told', [{ chunks: ['Hi'] }], []],
    [
      'two rounds, then an answer: told after each',
      [{ calls: [call('ok_tool', { q: 'a' })] }, { calls: [call('fail_tool', { q: 'b' }), call('ok_tool', { q: 'c' })] }, { chunks: ['done'] }],
      [
        { status: 'interrupted', stopReason: 'interrupted', iterations: 1, allFailureRounds: 0, calls: ['ok_tool:success'], compacted: [] },
        { status: 'interrupted', stopReason: 'interrupted', iterations: 2, allFailureRounds: 0, calls: ['ok_tool:success', 'fail_tool:failure', 'ok_tool:success'], compacted: [] },
      ],
    ],
    ['an all-failure round is told too', [{ calls: [call('fail_tool', { q: 'a' })] }, { chunks: ['done'] }], [{ status: 'interrupted', stopReason: 'interrupted', iterations: 0, allFailureRounds: 1, calls: ['fail_tool:failure'], compacted: [] }]],
    ['a round that ends the run (a permanent failure): the run ends, nothing told', [{ calls: [call('perm_tool', { q: 'a' })] }], []],
    [
      'a result past its budget, not yet saved when told: told as cut, not as saved',
      [{ calls: [call('big_tool', { q: 'a' })] }, { chunks: ['done'] }],
      [{ status: 'interrupted', stopReason: 'interrupted', iterations: 1, allFailureRounds: 0, calls: ['big_tool:success'], compacted: ['truncated'] }],
    ],
    [
      'saved as the next round begins: told as saved then, before that round\'s calls run (a long one killed keeps it)',
      [{ calls: [call('big_tool', { q: 'a' })] }, { calls: [call('ok_tool', { q: 'b' })] }, { chunks: ['done'] }],
      [
        { status: 'interrupted', stopReason: 'interrupted', iterations: 1, allFailureRounds: 0, calls: ['big_tool:success'], compacted: ['truncated'] },
        { status: 'interrupted', stopReason: 'interrupted', iterations: 1, allFailureRounds: 0, calls: ['big_tool:success:saved'], compacted: ['saved'] },
        { status: 'interrupted', stopReason: 'interrupted', iterations: 2, allFailureRounds: 0, calls: ['big_tool:success:saved', 'ok_tool:success'], compacted: ['saved'] },
      ],
    ],
  ])('%s', async (_case, steps, expected) => {
    const heard: ReturnType<typeof told>[] = [];
    const { result } = await run(steps, { onRound: (progress) => heard.push(told(progress)) });
    expect(heard).toEqual(expected);
    // What was told never changes the run's own records.
    expect(result.calls.every((record) => record.name !== 'big_tool' || record.saved_as !== undefined)).toBe(true);
  });
});
