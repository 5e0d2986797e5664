// The server's TurnRunner: each request is one turn of src/turn/turn.ts, the same use case the CLI
// runs, so Argo mode builds exactly the request `argo -s NAME --replay SPEC` builds and logs one line.
import type { Settings } from '../config/settings.js';
import { format } from 'date-fns/format';
import { TIMESTAMP_PATTERN } from '../log/entry.js';
import type { ClientToolCallLog, LogEntry } from '../log/entry.js';
import { ConfigError, UsageError, messageLine } from '../errors.js';
import { agentAnswerer, agentDraftFields, toolsConfigOf } from '../agent/answer.js';
import type { AgentSetup } from '../agent/answer.js';
import type { AgentEvent, RunHints } from '../agent/loop.js';
import { PolicyError, checkReplayPolicy } from '../replay/policy.js';
import { checkStyleChoice, knownStyleNames, quotedStyleName } from '../replay/style.js';
import { SessionUpdateError } from '../sessions/record-turn.js';
import { openSession } from '../sessions/store.js';
import { checkToolNames, loadToolbox, toolboxIfCut } from '../tools/catalog.js';
import type { ConnectMcp, Toolbox } from '../tools/catalog.js';
import { estimateAnswerTokens } from '../ollama/context-window.js';
import { commandEnvironment } from '../tools/process.js';
import { UnknownToolError } from '../tools/toolsets.js';
import { ToolError, asksFirst } from '../tools/types.js';
import type { Tool } from '../tools/types.js';
import { UnloggedTurnError, queuedDraft, runTurn, streamAnswer } from '../turn/turn.js';
import { QUEUED_ERROR, readUnfinished, removeUnfinished, thisProcess, unfinishedDir, writeUnfinished } from '../log/unfinished.js';
import type { UnfinishedTurn } from '../log/unfinished.js';
import type { Answer, Answerer, Transport, TurnInput as CoreInput, TurnPorts } from '../turn/turn.js';
import { badRequest, brokenToolConfig, hideHome } from './errors.js';
import type { ApiError, TurnFailure } from './errors.js';
import { argoParam } from './schema.js';
import { ollamaToolCallsOf, toOpenAiToolCalls } from './openai.js';
import type { OllamaExtras, OllamaToolCall } from './openai.js';
import type { AgentSummary, CutReason, LogOutcome, LoggedTurn, RunInput, ToolEvent, ToolEventsHeard, TurnHooks, TurnInput, TurnResult, TurnRunner } from './types.js';

/** Server-side tools (the `tools` Argo field), run by the same agent loop as `argo --tools`. */
export interface ServerTools {
  /** Real path of the directory file tools are confined to (`--root`). */
  root: string;
  /**
   * Side-effecting calls (write, edit, run a command…) run only when the server was started with
   * `--allow-side-effects`: there is no terminal to ask on, so otherwise they fail as permanent.
   */
  allowSideEffects: boolean;
  /** How MCP servers are reached; a pool keeps them running from one request to the next. */
  connectMcp?: ConnectMcp;
  /** Injected for tests; by default the catalog's loader. */
  load?: (names: readonly string[], settings: Settings) => Promise<Toolbox>;
}

export interface RunnerPorts {
  /** A transport per turn: one carries one request's abort state at a time. */
  transport: () => Transport;
  now: () => Date;
  clock: () => number;
  rescue: TurnPorts['rescue'];
  /** The server's log (stderr): what the operator should hear of, a line at a time. */
  log?: (line: string) => void;
  /**
   * What a run of the `tools` Argo field runs with. Whether the server takes that field at all is the
   * app's to say (`agentMode`): planAnswer refuses it before a turn or a job exists.
   */
  tools: ServerTools;
}

/** The loop's events a client sees: tool progress and failures (text goes out as content). */
export function toolEventOf(event: AgentEvent): ToolEvent | null {
  switch (event.type) {
    case 'tool_status':
      return { type: 'tool_status', id: event.id, name: event.name, status: event.status, ...(event.ms !== undefined ? { ms: event.ms } : {}) };
    case 'tool_execution_error':
      return { type: 'tool_execution_error', id: event.id, name: event.name, message: event.message };
    default:
      return null;
  }
}

/** The tools a request asks to run on the server (`argo.tools`), or null when it asks for none. */
function toolsAsked(input: Pick<TurnInput, 'argo'>): readonly string[] | null {
  const names = input.argo?.tools ?? [];
  return names.length > 0 ? names : null;
}

/**
 * Loads the request's toolsets. An unknown name is the client's to fix: a 400 naming `argo.tools`. A
 * definition in the server's config.json that cannot be used (a toolset cycle, a clashing or broken
 * tool) is the operator's: a 500, which no change to the request mends.
 */
async function toolboxFor(names: readonly string[], settings: Settings, tools: ServerTools, param: string, signal?: AbortSignal): Promise<Toolbox> {
  const load = tools.load ?? ((requested, given) => loadToolbox(requested, toolsConfigOf(given.agent), { root: tools.root, ...(tools.connectMcp ? { connectMcp: tools.connectMcp } : {}), ...(signal ? { signal } : {}) }).catch(toolboxIfCut));
  return toolErrorsAsRefusal(() => load(names, settings), param);
}

/** What `work` throws about the tools asked for (in `param`), as the client's 400 or the operator's 500. */
async function toolErrorsAsRefusal<T>(work: () => T | Promise<T>, param: string): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ConfigError) throw brokenToolConfig(error.message);
    // A name nothing has is `unknown_tool`; a list that cannot be read as one (fs,none; -; only -x) is `invalid_value`.
    if (error instanceof UsageError) throw badRequest(`${param}: ${error.message}`, param, error instanceof UnknownToolError ? 'unknown_tool' : 'invalid_value');
    throw error;
  }
}

const IN_LOG = "in the turn's log line on the server (argo logs --status tool_failures)";

/** Where a client finds each failed call's error: the log has every one; tool events reach only those listening then. */
const CALL_ERRORS: Record<ToolEventsHeard, string> = {
  answer: `each call's error was streamed as a tool_execution_error event, and is ${IN_LOG}`,
  job: `each call's error was sent as a tool_execution_error event to any client following the job's stream (GET /api/jobs/ID/stream) as it ran, and is ${IN_LOG}`,
  nobody: `each call's error is ${IN_LOG}; a streamed request gets each as a tool_execution_error event`,
};

/** A server's client cannot run argo's commands or see its terminal: where its fixes are (as a streamed answer's client hears them). */
export const SERVER_RUN_HINTS: RunHints = {
  clearStop: 'DELETE /api/stop (or removing STOP from the server\'s data home) allows runs again',
  moreRounds: 'raise "maxIterations" in the server\'s config.json',
  failedCall: CALL_ERRORS.answer,
  failedRounds: CALL_ERRORS.answer,
};

/** The hints for a run whose tool events reach `heard`. */
export function serverRunHints(heard: ToolEventsHeard): RunHints {
  return { ...SERVER_RUN_HINTS, failedCall: CALL_ERRORS[heard], failedRounds: CALL_ERRORS[heard] };
}

export const SIDE_EFFECTS_OFF = 'it has side effects, which this server does not allow (start argo serve with --allow-side-effects to let tools write and run commands)';

/**
 * A server has nobody to ask "Allow?": without --allow-side-effects a side-effecting tool fails as
 * permanent, with a message that says so, instead of running; every other tool is as it was.
 */
export function serverTools(tools: readonly Tool[], allowSideEffects: boolean): Tool[] {
  if (allowSideEffects) return [...tools];
  return tools.map((tool) => (asksFirst(tool) ? { ...tool, run: (args, context) => (asksFirst(tool, args) ? Promise.reject(new ToolError(SIDE_EFFECTS_OFF, false)) : tool.run(args, context)) } : tool));
}

/** The agent loop as a turn's answer step, and the log fields it knows before it runs. */
function agentStep(settings: Settings, box: Toolbox, tools: ServerTools, hooks: TurnHooks, now: () => Date, summary: { value: AgentSummary | null }): { answer: Answerer; draftFields: Record<string, unknown> } {
  const setup: AgentSetup = {
    tools: serverTools(box.tools, tools.allowSideEffects),
    unavailable: box.unavailable,
    root: tools.root,
    home: settings.home,
    commandEnv: () => commandEnvironment(process.env, settings.agent.passSecrets),
    maxIterations: settings.agent.maxIterations,
    ephemeralSystem: null,
    // Refused side effects fail inside their tool (serverTools), so nothing is left to confirm.
    yes: true,
    hints: serverRunHints(hooks.toolEventsHeard ?? 'nobody'),
    abortedByStop: (reason) => reason === ('stop' satisfies CutReason),
    confirm: () => Promise.resolve('no-terminal'),
    emit: (event) => {
      const shown = toolEventOf(event);
      if (shown?.type === 'tool_execution_error' && typeof shown.message === 'string') shown.message = hideHome(shown.message, settings.home);
      if (shown) hooks.onToolEvent?.(shown);
    },
    // A server logs every turn.
    logged: true,
    // As the CLI does: a result saved before the turn is logged still needs its session's id.
    sessionId: async () => (await openSession(settings.paths.sessions, settings.session, format(now(), TIMESTAMP_PATTERN))).id,
    onResult: (result) => {
      summary.value = {
        stopReason: result.stopReason,
        iterations: result.iterations,
        toolCalls: result.calls.length,
        message: result.message,
        unavailable: box.unavailable.map(({ name, reason }) => ({ name, reason: hideHome(reason, settings.home) })),
      };
    },
  };
  return { answer: agentAnswerer(setup), draftFields: agentDraftFields(setup) };
}

/** What the log says about an answer cut short, by why it was cut. */
const CUT_ERRORS: Record<CutReason, string> = {
  stop: 'stop signal',
  disconnect: 'the client disconnected',
  shutdown: 'the server shut down',
  cancel: 'cancelled by request',
  lost: "the server lost the job's lock",
};

/**
 * The request's Argo fields laid over the server's settings, as the CLI's flags would be. In Argo
 * mode the client's sampling options and reasoning effort are settings too, as `-o` and `--think`
 * are: the request is then built, ordered and logged exactly as the CLI's.
 */
export function settingsFor(
  base: Settings,
  input: Pick<TurnInput, 'session' | 'model' | 'mode' | 'argo'> & Partial<Pick<TurnInput, 'extras'>>,
  tools: readonly string[] | null = null,
): Settings {
  const argo = input.argo ?? {};
  const asFlags = input.mode === 'argo' ? input.extras : undefined;
  const think = asFlags?.think ?? base.think;
  const settings: Settings = {
    ...base,
    session: input.session,
    // The client always names a model: it is what `-m` is to the CLI.
    model: input.model,
    modelFromFlag: true,
    // A client that sends its own messages, and the agent loop, need the chat endpoint.
    api: input.mode === 'plain' || tools !== null ? 'chat' : base.api,
    persona: argo.persona ?? base.persona,
    verbosity: argo.verbosity ?? base.verbosity,
    // The client's own messages carry no style: a plain turn is logged with no mode, as none was applied.
    mode: input.mode === 'plain' ? null : (argo.mode ?? base.mode),
    replay: argo.budget !== undefined ? { ...base.replay, budget: argo.budget } : base.replay,
    agent: tools !== null ? { ...base.agent, tools: [...tools], toolsSource: argoParam(input.argo, 'tools') } : base.agent,
    options: asFlags ? { ...base.options, ...asFlags.options } : base.options,
  };
  if (think !== undefined) settings.think = think;
  // The client's reasoning effort is asked of this model, as --think is.
  if (asFlags?.think !== undefined) delete settings.thinkFromConfig;
  if (argo.budget !== undefined) checkBudget(settings.replay, argoParam(input.argo, 'budget'));
  const unknown = checkStyleChoice(settings.style, settings);
  if (unknown) {
    const key = unknown.key === 'mode' ? 'mode' : 'persona';
    throw unknownStyle(settings, key, argoParam(input.argo, key));
  }
  return settings;
}

/** How many names an unknown mode's or persona's error lists; more would bury what it says. */
const LISTED_STYLE_NAMES = 12;

/**
 * A mode or persona the server's config.json lacks. The client cannot edit that file: it is told the
 * names it can send instead, and who can add the one it asked for.
 */
function unknownStyle(settings: Settings, key: 'mode' | 'persona', param: string): ApiError {
  const name = key === 'mode' ? (settings.mode ?? '') : settings.persona;
  const known = knownStyleNames(key === 'mode' ? settings.style.modes : settings.style.personas);
  const choice = known.length <= LISTED_STYLE_NAMES ? `this server's ${key}s (${known.join(', ')})` : `the ${known.length} ${key}s this server has`;
  return badRequest(`${param}: unknown ${key} ${quotedStyleName(name)}; use one of ${choice}, or ask the server's operator to add it under "${key}s" in config.json`, param);
}

/** The request's budget against the server's replay rules (its protected turns' floor), as the CLI's --budget is checked. */
function checkBudget(replay: Settings['replay'], param: string): void {
  try {
    checkReplayPolicy(replay);
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    throw badRequest(`${param}: ${error.message.slice(error.key.length + 2)}`, param);
  }
}

/**
 * OpenAI's documented sampling defaults, which Ollama's own OpenAI layer sends when a client leaves
 * them out: plain mode uses them where neither the client nor config.json sets the option.
 */
export const OPENAI_SAMPLING_DEFAULTS: Readonly<Record<'temperature' | 'top_p', number>> = { temperature: 1, top_p: 1 };

/**
 * Body fields the client adds beyond what `settingsFor` made settings. Plain mode lays the client's
 * options over the configured ones and fills in OpenAI's sampling defaults below them; Argo mode's
 * options and think are already settings, so a request without format, tools or logprobs adds nothing.
 */
export function bodyFor(base: Settings, input: Pick<TurnInput, 'mode' | 'messages'>, extras: OllamaExtras): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = {};
  // Plain mode's messages go in as body fields: they carry what the replay core's messages do not
  // model (tool results, tool calls, images).
  if (input.mode === 'plain') {
    body.messages = input.messages;
    const defaults = Object.entries(OPENAI_SAMPLING_DEFAULTS).filter(([name]) => base.options[name] === undefined);
    body.options = { ...base.options, ...Object.fromEntries(defaults), ...extras.options };
  }
  if (extras.format !== undefined) body.format = extras.format;
  if (extras.tools !== undefined) body.tools = extras.tools;
  if (input.mode === 'plain' && extras.think !== undefined) body.think = extras.think;
  // Asked of the answer, not the prompt: the same in both modes, and not logged.
  if (extras.logprobs) body.logprobs = true;
  if (extras.top_logprobs !== undefined) body.top_logprobs = extras.top_logprobs;
  return Object.keys(body).length > 0 ? body : undefined;
}

/**
 * What the log says of the request parts a client added, which it does not keep: how many messages a
 * plain-mode client sent, and the names of the other fields (format, tools, logprobs…). They tell
 * `argo rerun` why such a turn's request cannot be rebuilt.
 */
export function clientFacts(input: Pick<TurnInput, 'mode' | 'messages'>, body: Record<string, unknown> | undefined): Record<string, unknown> {
  // Plain mode's options are the client's sampling values laid over config.json's: logged as `options`.
  const fields = Object.keys(body ?? {}).filter((key) => key !== 'messages' && key !== 'options');
  return {
    ...(input.mode === 'plain' ? { client_messages: input.messages.length } : {}),
    ...(fields.length > 0 ? { client_fields: fields } : {}),
  };
}

/** The use case's input for the request: its prompt, replay and reason, and the client's body fields. */
function coreInputOf(input: RunInput, body: Record<string, unknown> | undefined): CoreInput {
  const argo = input.argo;
  return {
    prompt: input.userPrompt,
    replay: argo?.replay ?? { kind: 'none' },
    ...(argo?.reason !== undefined ? { reason: argo.reason } : {}),
    log: true,
    ollamaStream: true,
    ...(body ? { body } : {}),
  };
}

export function turnRunner(base: Settings, ports: RunnerPorts): TurnRunner {
  return {
    run: async (input, hooks) => {
      try {
        const names = toolsAsked(input);
        const settings = settingsFor(base, input, names);
        const box = names !== null ? await toolboxFor(names, settings, ports.tools, argoParam(input.argo, 'tools'), input.signal) : null;
        try {
          return await runOne(settings, input, hooks, box);
        } finally {
          await box?.close();
        }
      } catch (error) {
        // Refused before the turn's own draft took its place: as for any refused request, no line.
        if (input.journaled === true) await dropQueued(base.home, input.turnId);
        throw error;
      }
    },
    check: async (input) => {
      const tools = toolsAsked(input);
      const settings = settingsFor(base, input, tools);
      if (tools !== null) await toolErrorsAsRefusal(() => checkToolNames(tools, toolsConfigOf(settings.agent)), argoParam(input.argo, 'tools'));
    },
    hold: async (input) => {
      let draft: Omit<UnfinishedTurn, 'owner'>;
      try {
        const settings = settingsFor(base, input, toolsAsked(input));
        const body = bodyFor(base, input, input.extras);
        draft = await queuedDraft(settings, coreInputOf(input, body), input.turnId, input.askedAt ?? ports.now(), clientFacts(input, body));
      } catch {
        // A request its run will refuse, saying why: nothing to keep.
        return null;
      }
      try {
        await writeUnfinished(base.home, { owner: thisProcess(), ...draft });
      } catch (error) {
        ports.log?.(`argo serve: turn ${input.turnId} cannot be kept in ${unfinishedDir(base.home)} while its job waits (${messageLine(error)}); it is logged when it runs, but would be lost if the server were killed first`);
        return null;
      }
      return () => removeUnfinished(base.home, input.turnId).catch(() => undefined);
    },
  };

  async function runOne(settings: Settings, input: RunInput, hooks: TurnHooks, box: Toolbox | null): Promise<LoggedTurn> {
    const summary: { value: AgentSummary | null } = { value: null };
    const agent = box ? agentStep(settings, box, ports.tools, hooks, ports.now, summary) : null;
    const step: Answerer = agent?.answer ?? streamAnswer;
    const body = bodyFor(base, input, input.extras);
    const core = coreInputOf(input, body);
    const toolCalls: OllamaToolCall[] = [];
    let failure: TurnFailure | null = null;
    // The answer as the model wrote it, as a stream sends it: the log may keep inline reasoning apart.
    let written: string | null = null;
    /**
     * The turn as its log line has it: the line's `error` words a failure (an agent run's own
     * included). Argo's own (a result it could not save) is said to the client without the data
     * home's path; Ollama's (a model not found) as it came, as it may quote what the client sent.
     */
    const resultOf = (entry: LogEntry): TurnResult => {
      const failed = failure;
      const logged = typeof entry.error === 'string' ? entry.error : null;
      const message = logged === null ? null : failed ? logged : hideHome(logged, settings.home);
      return {
        turnId: entry.id,
        status: entry.status,
        model: entry.model,
        text: written ?? entry.model_response,
        toolCalls,
        // An answer cut short has no counts: estimated, never 0, which would make it look free (every
        // turn logs its prompt's estimate; older lines may lack one).
        promptTokens: entry.timings.prompt_eval_count ?? entry.prompt_tokens_estimate ?? 0,
        completionTokens: entry.timings.eval_count ?? estimateAnswerTokens({ content: entry.model_response, thinking: entry.thinking, tool_calls: toolCalls }),
        doneReason: entry.done_reason,
        failure: entry.status !== 'error' ? null : failed ? { ...failed, message: message ?? failed.message } : message !== null ? { kind: 'argo', message } : null,
        replayPolicy: entry.replay_policy,
        agent: summary.value && { ...summary.value, message: summary.value.message === null ? null : hideHome(summary.value.message, settings.home) },
      };
    };
    // Set once the answer is complete (onEntry), before its line is written.
    const answered: { result: TurnResult | null } = { result: null };
    const run = runTurn(settings, core, {
      transport: ports.transport(),
      now: ports.now,
      clock: ports.clock,
      newId: () => input.turnId,
      rescue: ports.rescue,
      ...(input.journaled === true ? { journaled: true } : {}),
      ...(input.askedAt ? { askedAt: input.askedAt } : {}),
      // Nobody else hears it: a client's request is not the place, the operator's log is.
      onJournalNotice: (line) => ports.log?.(`argo serve: ${line}`),
      // Replay skipping a damaged log line: the operator's to act on (a prompt past the window is in the turn's log line).
      onHistoryNotice: (line) => ports.log?.(`argo serve: turn ${input.turnId}: ${line.replace(/^argo: /, '')}`),
      // The client's own history is not logged: how long it was is, and tells rerun why it cannot rebuild the request.
      ...(agent || body ? { draftFields: { ...agent?.draftFields, ...clientFacts(input, body) } } : {}),
      onEntry: (entry) => {
        answered.result = resultOf(entry);
        hooks.onAnswered?.(answered.result);
      },
      signal: input.signal,
      onText: hooks.onText,
      ...(hooks.onThinking ? { onThinking: hooks.onThinking } : {}),
      onToolCalls: (calls, logprobs) => {
        const parsed = ollamaToolCallsOf(calls);
        toolCalls.push(...parsed);
        if (parsed.length > 0) hooks.onToolCalls(parsed, logprobs);
        else if (logprobs) hooks.onLogprobs?.(logprobs);
      },
      ...(hooks.onLogprobs ? { onLogprobs: hooks.onLogprobs } : {}),
      answer: async (request, context): Promise<Answer> => {
        const answer = await step(request, context);
        failure = answer.failure;
        written = answer.response;
        // The calls the client was answered with, for it to run: no other field of the line has them.
        const calls = toolCalls.length > 0 ? { client_tool_calls: clientToolCallsLog(toolCalls, input.round) } : {};
        // Not an answer yet, but a question back (the calls' results), so never replayed as one: a
        // turn answered only with calls would replay as an empty answer.
        if (answer.status === 'ok' && toolCalls.length > 0) return { ...answer, status: 'tool_calls', fields: { ...answer.fields, ...calls } };
        if (answer.status !== 'interrupted') return { ...answer, fields: { ...answer.fields, ...calls } };
        const reason = input.signal.reason as CutReason;
        return { ...answer, status: reason === 'stop' ? 'stopped' : 'interrupted', fields: { ...answer.fields, ...calls, error: CUT_ERRORS[reason] } };
      },
    });
    try {
      const { entry } = await run;
      return { ...resultOf(entry), log: 'written', logProblem: null };
    } catch (error) {
      // Answered: the client gets its answer, and is told where its line went.
      if (answered.result === null) throw error;
      return { ...answered.result, log: logOutcomeOf(error), logProblem: messageLine(error) };
    }
  }
}

/** A client's tool calls as its turn logs them: each with the id the client was sent. */
export function clientToolCallsLog(calls: readonly OllamaToolCall[], round: number): ClientToolCallLog[] {
  return toOpenAiToolCalls(calls, round).map((call, at) => ({ id: call.id, name: call.function.name, arguments: calls[at]?.function.arguments ?? {} }));
}

/** Where the line of an answered turn went, by what its logging threw. */
export function logOutcomeOf(error: unknown): LogOutcome {
  // In the log: only the session's index or record is behind, and is rebuilt from the log on next use.
  if (error instanceof SessionUpdateError) return 'written';
  if (error instanceof UnloggedTurnError && error.savedTo !== null) return 'rescued';
  return 'unsaved';
}

/** Removes a queued turn's draft if it is still the one its queue kept (the turn's own, kept as its only copy, stays). */
async function dropQueued(home: string, turnId: string): Promise<void> {
  const read = readUnfinished(home, `${turnId}.json`);
  if (read === null || 'problem' in read) return;
  const entry = (read.value as { entry?: { error?: unknown } }).entry;
  if (entry?.error === QUEUED_ERROR) await removeUnfinished(home, turnId).catch(() => undefined);
}
