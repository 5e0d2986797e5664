// Writing an answer: the plan of lines (tokens, tool calls, faults) and its timeline, streamed as
// NDJSON or sent whole for stream:false.
import type { Exchange } from './exchange.js';
import { sendBody, sendError, sendJson } from './exchange.js';
import type { Malformed, Terminal } from './faults.js';
import { holdOf, malformedOf, terminalOf } from './faults.js';
import { fakeLogprob, logprobsAsked } from './logprobs.js';
import type { FakeLogprob } from './logprobs.js';
import { cutAtStop, replyTokens, splitTokens, tokenId } from './reply.js';
import type { ServerState } from './exchange.js';
import { toolCallChunks, toolCallsFor } from './tool-calls.js';
import type { Endpoint, FakeRound, FakeScenario, FakeToolCall, RequestBody } from './types.js';
import type { VersionProfile } from './versions.js';
import { JSON_TYPE, createdAt, goJson, nowNs, pick, str } from './wire.js';

// Nominal speeds, so durations are realistic and never zero even when nothing is delayed.
const PROMPT_NS_PER_TOKEN = 200_000;
const EVAL_NS_PER_TOKEN = 1_000_000;
const NDJSON_TYPE = 'application/x-ndjson';

export interface Plan {
  endpoint: Endpoint;
  model: string; // as the request spelled it
  modelJson: string;
  chunks: (string | FakeToolCall[] | Thought)[]; // one line each
  // Asked for (`logprobs: true`): the tokens each chunk carries (a tool call's held-back tokens go in
  // chunks of their own, with empty content), and those of the done line.
  logprobs: (FakeLogprob[] | undefined)[] | undefined;
  finalLogprobs: FakeLogprob[] | undefined;
  finalText: string;
  /** Calls the done:true line carries (harmony holds a call until the answer ends); none otherwise. */
  finalCalls: FakeToolCall[] | undefined;
  doneReason: 'stop' | 'length' | undefined; // undefined: a release before done_reason
  evalCount: number;
  promptEvalCount: number;
  context: number[] | undefined;
  malformed: Malformed | undefined;
  terminal: Terminal | undefined;
  holdAt: number | undefined;
  hangBeforeHeaders: boolean;
  openAfterDone: boolean;
  endAfterMs: number;
  delayMs: number;
  startNs: bigint;
  loadedNs: bigint;
}

/** A piece of the model's reasoning, streamed before the answer. */
export interface Thought {
  thinking: string;
}

export interface PlanInput {
  body: RequestBody;
  endpoint: Endpoint;
  /** Where a thinking model's reasoning goes: `thinking` fields, the text (in <think> tags), or nowhere. */
  thinking: 'field' | 'inline' | 'off';
  /** A gpt-oss model's harmony parser: its calls go in the done:true line. */
  harmony: boolean;
  /** The model's tool tag is `{` or `[`: Ollama's tool parser takes calls only at the start of the answer, and hands back one cut short as text. */
  bareJsonCalls: boolean;
  profile: VersionProfile;
  scenario: FakeScenario;
  round: FakeRound | undefined;
  promptEvalCount: number;
  startNs: bigint;
}

export function buildPlan(state: ServerState, input: PlanInput): Plan {
  const { body, endpoint, scenario, round } = input;
  const requestOptions = (pick(body, 'options') ?? {}) as RequestBody;
  const reasoning = input.thinking === 'off' ? undefined : state.options.thinking;
  const inline = input.thinking === 'inline' && reasoning ? splitTokens(`<think>${reasoning}</think>\n\n`) : [];
  // A release without tools never showed them to the model: it answers in words.
  const heard = round && !input.profile.tools ? { ...round, toolCalls: [] } : round;
  let tokens = cutAtStop([...inline, ...replyTokens(state.options, body, endpoint, heard)], requestOptions.stop);
  let thoughts: Thought[] = input.thinking === 'field' && reasoning ? (reasoning.match(/\s*\S+/g) ?? []).map((thinking) => ({ thinking })) : [];
  let offered = toolCallsFor(state, body, endpoint, round, input.profile) ?? [];
  // Before 0.4.6 Ollama parsed calls only from a whole answer: streamed, they are the model's text.
  // With a `{` or `[` tag its parser takes a call only at the start of the answer: after words, text.
  const streamedAsText = !input.profile.streamedToolCalls && pick(body, 'stream') !== false;
  const afterWords = input.bareJsonCalls && !input.harmony && tokens.join('').trim() !== '';
  if (offered.length > 0 && (streamedAsText || afterWords)) {
    tokens = [...tokens, ...splitTokens(offered.map((call) => goJson({ name: call.function.name, arguments: call.function.arguments })).join('\n'))];
    offered = [];
  }
  let calls = offered;
  let callTokens = callPieces(calls).length;
  // num_predict counts every generated token, the reasoning's first: a small limit can end it
  // mid-thought, and a call cut short is no call (Ollama's parser never completes it); the calls
  // whole before it are parsed.
  const limit = requestOptions.num_predict;
  const cut = typeof limit === 'number' && limit > 0 && thoughts.length + tokens.length + callTokens > limit;
  let cutCall: string[] = [];
  if (cut) {
    thoughts = thoughts.slice(0, limit);
    tokens = tokens.slice(0, limit - thoughts.length);
    callTokens = limit - thoughts.length - tokens.length;
    calls = wholeWithin(offered, callTokens);
    cutCall = callPieces(offered).slice(callPieces(calls).length, callTokens);
  }
  // tools.Parser.Content: with a `{` or `[` tag, a call the parser held and never completed is
  // handed back as the done line's text, when no call came before it.
  const cutCallText = cut && input.bareJsonCalls && !input.harmony && calls.length === 0 ? cutCall.join('') : '';
  const finalText = cutCallText || (state.options.textInDone && tokens.length > 0 ? (tokens.at(-1) ?? '') : '');
  // Before 0.12.11 the fields were unknown: no line carries any.
  const top = input.profile.logprobs ? logprobsAsked(body) : null;
  const tokenLogprobs = (texts: string[]): FakeLogprob[] | undefined => (top === null ? undefined : texts.map((text) => fakeLogprob(text, top)));
  const chunks: Plan['chunks'] = [];
  const logprobs: (FakeLogprob[] | undefined)[] = [];
  const send = (chunk: Plan['chunks'][number], texts: string[]): void => {
    chunks.push(chunk);
    logprobs.push(tokenLogprobs(texts));
  };
  for (const thought of thoughts) send(thought, [thought.thinking]);
  for (const token of finalText && !cutCallText ? tokens.slice(0, -1) : tokens) send(token, [token]);
  // Ollama's tool parser holds a call's text back until the call is whole: each token's log
  // probability still goes out at once, in a chunk with empty content (routes.go), the last with the call.
  const held = (texts: string[]): void => {
    if (top !== null) for (const text of texts) send('', [text]);
  };
  // Harmony parses a call only once the answer is done (HarmonyMessageHandler.Add): its tokens'
  // log probabilities go out as they come, the call itself in the done line.
  if (input.harmony) held(callPieces(calls));
  else {
    for (const group of toolCallChunks(calls, round)) {
      const pieces = callPieces(group);
      held(pieces.slice(0, -1));
      send(group, pieces.slice(-1));
    }
  }
  // A call the limit cut short never completes: its tokens so far are all that went out.
  held(cutCall);
  const withContext = endpoint === 'generate' && pick(body, 'raw') !== true;
  const promptWords = withContext ? (str(pick(body, 'prompt')).match(/\S+/g) ?? []) : [];
  return {
    endpoint,
    model: str(pick(body, 'model')),
    modelJson: goJson(str(pick(body, 'model'))),
    chunks,
    logprobs: top === null ? undefined : logprobs,
    finalLogprobs: finalText && !cutCallText ? tokenLogprobs([finalText]) : undefined,
    finalText,
    finalCalls: input.harmony && calls.length > 0 ? calls : undefined,
    doneReason: input.profile.doneReason ? (cut ? 'length' : 'stop') : undefined,
    evalCount: thoughts.length + tokens.length + callTokens,
    promptEvalCount: input.promptEvalCount,
    context: withContext ? [...promptWords, ...tokens].map(tokenId) : undefined,
    malformed: malformedOf(scenario, chunks.length, str(pick(body, 'model'))),
    terminal: terminalOf(scenario, chunks.length),
    holdAt: holdOf(scenario, chunks.length),
    hangBeforeHeaders: scenario.hang === 'beforeHeaders',
    openAfterDone: scenario.openAfterDone === true,
    endAfterMs: scenario.endAfterMs ?? 0,
    delayMs: scenario.delayMs ?? 0,
    startNs: input.startNs,
    loadedNs: nowNs(),
  };
}

// The model writes its calls as text too (its name and arguments, no id or index: Ollama adds
// those): about 4 characters a token.
function callPieces(calls: FakeToolCall[]): string[] {
  return calls.flatMap((call) => goJson({ name: call.function.name, arguments: call.function.arguments }).match(/[^]{1,4}/g) ?? []);
}

/** The leading calls whose tokens all fit in `room`. */
function wholeWithin(calls: FakeToolCall[], room: number): FakeToolCall[] {
  const whole: FakeToolCall[] = [];
  let left = room;
  for (const call of calls) {
    const cost = callPieces([call]).length;
    if (cost > left) break;
    whole.push(call);
    left -= cost;
  }
  return whole;
}

// `logprobs` follows `done` in both api.ChatResponse and (for a done:false line) api.GenerateResponse.
function chunkLine(plan: Plan, chunk: string | FakeToolCall[] | Thought, logprobs: FakeLogprob[] | undefined): string {
  const head = `{"model":${plan.modelJson},"created_at":"${createdAt()}",`;
  const tail = logprobs ? `"done":false,"logprobs":${goJson(logprobs)}}\n` : '"done":false}\n';
  if (isThought(chunk)) {
    const thinking = goJson(chunk.thinking);
    return plan.endpoint === 'generate'
      ? `${head}"response":"","thinking":${thinking},${tail}`
      : `${head}"message":{"role":"assistant","content":"","thinking":${thinking}},${tail}`;
  }
  if (typeof chunk !== 'string') {
    const message = { role: 'assistant', content: '', tool_calls: chunk };
    return `${head}"message":${goJson(message)},${tail}`;
  }
  const text = goJson(chunk);
  return plan.endpoint === 'generate'
    ? `${head}"response":${text},${tail}`
    : `${head}"message":{"role":"assistant","content":${text}},${tail}`;
}

// Zero metrics are left out, as Go's omitempty does.
function metrics(plan: Plan): Record<string, number> {
  const now = nowNs();
  const load = Math.max(1, Number(plan.loadedNs - plan.startNs));
  const promptEval = plan.promptEvalCount * PROMPT_NS_PER_TOKEN;
  const evalNs = Math.max(Number(now - plan.loadedNs), plan.evalCount * EVAL_NS_PER_TOKEN, 1);
  const all: Record<string, number> = {
    total_duration: Math.max(Number(now - plan.startNs), load + promptEval + evalNs),
    load_duration: load,
    prompt_eval_count: plan.promptEvalCount,
    prompt_eval_duration: promptEval,
    eval_count: plan.evalCount,
    eval_duration: evalNs,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== 0));
}

function isThought(chunk: string | FakeToolCall[] | Thought | undefined): chunk is Thought {
  return typeof chunk === 'object' && !Array.isArray(chunk);
}

function responseObject(plan: Plan, text: string, calls: FakeToolCall[] | undefined, done: boolean, thinking = '', logprobs: FakeLogprob[] = []) {
  const head = { model: plan.model, created_at: createdAt() };
  const tail = done ? metrics(plan) : {};
  const reason = done && plan.doneReason !== undefined ? { done_reason: plan.doneReason } : {};
  const thought = thinking === '' ? {} : { thinking };
  // omitempty: none asked for, none sent.
  const probabilities = logprobs.length > 0 ? { logprobs } : {};
  if (plan.endpoint === 'generate') {
    const context = done && plan.context ? { context: plan.context } : {};
    return { ...head, response: text, ...thought, done, ...reason, ...context, ...tail, ...probabilities };
  }
  const message = { role: 'assistant', content: text, ...thought, ...(calls ? { tool_calls: calls } : {}) };
  return { ...head, message, ...reason, done, ...probabilities, ...tail };
}

// Gin's c.Stream sends the headers with the first line.
function startStream(ctx: Exchange): void {
  if (ctx.res.headersSent) return;
  ctx.record.status = 200;
  ctx.res.writeHead(200, { 'Content-Type': NDJSON_TYPE });
}

async function runTerminal(ctx: Exchange, terminal: Terminal): Promise<void> {
  switch (terminal.kind) {
    case 'error':
      // Before anything was written the real status goes out instead (streamResponse).
      if (!ctx.res.headersSent) { sendError(ctx, 500, terminal.message, 'application/json'); return; }
      await ctx.writeLine(`${goJson({ error: terminal.message })}\n`);
      return void ctx.res.end();
    case 'drop':
      { ctx.drop(); return; }
    case 'hang':
      // With nothing written yet no headers went either: Ollama sends them with the first line.
      return ctx.untilGone();
    case 'truncate':
      startStream(ctx);
      ctx.res.end();
  }
}

export async function streamPlan(ctx: Exchange, plan: Plan): Promise<void> {
  if (plan.hangBeforeHeaders) return ctx.untilGone();
  const { chunks, malformed, terminal } = plan;
  for (let i = 0; i <= chunks.length; i++) {
    if (i > 0) await ctx.wait(plan.delayMs);
    if (ctx.gone) return;
    // Held before the first line, the client has no headers yet, as with a real Ollama.
    if (plan.holdAt === i && !(await ctx.hold())) return;
    if (malformed?.at === i) {
      startStream(ctx);
      await ctx.writeLine(`${malformed.line}\n`);
      if (malformed.then === 'end') return void ctx.res.end();
    }
    if (terminal?.at === i) return runTerminal(ctx, terminal);
    const chunk = chunks[i];
    startStream(ctx);
    await ctx.writeLine(
      chunk === undefined
        ? `${goJson(responseObject(plan, plan.finalText, plan.finalCalls, true, '', plan.finalLogprobs))}\n`
        : chunkLine(plan, chunk, plan.logprobs?.[i]),
    );
  }
  if (plan.openAfterDone) return ctx.untilGone();
  if (plan.endAfterMs > 0) await ctx.wait(plan.endAfterMs);
  if (!ctx.gone) ctx.res.end();
}

// stream:false: the same timeline, answered as one object (or one error) at the end.
export async function answerWhole(ctx: Exchange, plan: Plan): Promise<void> {
  if (plan.hangBeforeHeaders) return ctx.untilGone();
  const { chunks, malformed, terminal } = plan;
  let text = '';
  let thinking = '';
  let calls: FakeToolCall[] | undefined;
  // Every chunk's, in order (writeChatResponse and GenerateHandler gather them the same way).
  const logprobs: FakeLogprob[] = [];
  for (let i = 0; i <= chunks.length; i++) {
    if (i > 0) await ctx.wait(plan.delayMs);
    if (ctx.gone) return;
    if (plan.holdAt === i) {
      if (!(await ctx.hold())) return;
    }
    if (malformed?.at === i) { sendBody(ctx, 200, malformed.line, JSON_TYPE); return; }
    if (terminal?.at === i) return finishWholeEarly(ctx, plan, terminal, text, calls, logprobs);
    const carried = i < chunks.length ? plan.logprobs?.[i] : plan.finalLogprobs;
    if (carried) logprobs.push(...carried);
    const chunk = chunks[i];
    if (typeof chunk === 'string') text += chunk;
    else if (isThought(chunk)) thinking += chunk.thinking;
    else if (chunk) calls = [...(calls ?? []), ...chunk];
  }
  const every = plan.finalCalls ? [...(calls ?? []), ...plan.finalCalls] : calls;
  sendJson(ctx, 200, responseObject(plan, text + plan.finalText, every, true, thinking, logprobs));
}

async function finishWholeEarly(
  ctx: Exchange, plan: Plan, terminal: Terminal, text: string, calls: FakeToolCall[] | undefined, logprobs: FakeLogprob[],
): Promise<void> {
  if (terminal.kind === 'error') { sendError(ctx, 500, terminal.message); return; }
  if (terminal.kind === 'drop') { ctx.drop(); return; }
  if (terminal.kind === 'hang') return ctx.untilGone();
  sendJson(ctx, 200, responseObject(plan, text, calls, false, '', logprobs)); // the runner stopped without done
}

