// The agent loop as a turn's answer step: what `argo --tools` and `argo serve` plug into
// runTurn (src/turn/turn.ts). The loop's ports are built here from the data home and the turn's
// answer context; what is left (confirmation, events, the session id) comes from the caller.
import { dirname, join } from 'node:path';
import type { AgentSettings } from '../config/settings.js';
import { UsageError } from '../errors.js';
import { ensureHomeFolder, writeFileAtomic } from '../log/fs.js';
import { readMemoForPrompt } from '../tools/memo.js';
import type { ToolsConfig, Unavailable } from '../tools/catalog.js';
import { paragraphBreak } from '../text/answer.js';
import type { Tool } from '../tools/types.js';
import { requestSha256 } from '../turn/request-facts.js';
import type { TransportRequest } from '../ollama/transport.js';
import type { Answer, Answerer } from '../turn/turn.js';
import { savedResultPath } from './compaction.js';
import { keepDefinitions } from './definitions.js';
import { toolDefinitions } from './request.js';
import { runAgent } from './loop.js';
import type { AgentEvent, AgentResult, ConfirmAnswer, ConfirmRequest, RunHints } from './loop.js';
import { STOP_ABORT, abortOnStop, isStopSet } from './stop.js';

/** config.json's tool settings as loadToolbox takes them. */
export function toolsConfigOf(agent: AgentSettings): ToolsConfig {
  return {
    toolsets: agent.toolsets,
    commandTools: agent.commandTools,
    mcpServers: agent.mcpServers,
    toolBudgets: agent.toolBudgets,
    toolTimeouts: agent.toolTimeouts,
  };
}

export interface AgentSetup {
  /** The run's tools (available ones, sorted) and those left out. */
  tools: readonly Tool[];
  unavailable: readonly Unavailable[];
  /** Real path of the directory file tools are confined to. */
  root: string;
  /** The data home: memo.json, STOP, tool-results/, tool-definitions/. */
  home: string;
  /**
   * The turn is logged: results past their budget are saved whole and the run's tool definitions
   * kept for export. An unlogged turn (--no-log) leaves neither in the data home.
   */
  logged: boolean;
  /**
   * What shell and command tools run with (commandEnvironment: secrets left out), worked out when a
   * call first needs it: a run answered in words never reads the environment.
   */
  commandEnv?: () => NodeJS.ProcessEnv;
  maxIterations: number;
  ephemeralSystem: string | null;
  /** Side-effecting calls run without asking. */
  yes: boolean;
  /** Asks the user (a terminal prompt, a server's approval) or answers "no-terminal". */
  confirm: (request: ConfirmRequest, signal: AbortSignal) => Promise<ConfirmAnswer>;
  /** Everything but text (text goes to the turn's onText): tool status, failures, re-asks, compaction. */
  emit: (event: AgentEvent) => void;
  /** The turn's session id, for tool-results/<session_id>/; called only when a result is saved. */
  sessionId: () => Promise<string>;
  /** Defaults to the STOP file in `home`. */
  isStopped?: () => boolean;
  /** Whether an abort of the turn's signal was a STOP's (a server's); none otherwise. */
  abortedByStop?: (reason: unknown) => boolean;
  toolBudget?: number;
  /** How end messages name the fix; the CLI's when absent. */
  hints?: RunHints;
  /**
   * The names logged as the run's tools when none were loaded (a STOP or a cut before they were
   * ready): the static tools its names resolve to. An MCP server's are not known without starting it.
   */
  unloadedTools?: readonly string[];
  /** Called with the loop's result before the turn is logged (a server keeps the conversation). */
  onResult?: (result: AgentResult) => void;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new Error('aborted'));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Saves a result whole at `path` (relative to the data home), never through a link inside the home. */
async function saveResult(home: string, path: string, content: string): Promise<void> {
  await ensureHomeFolder(home, dirname(path));
  await writeFileAtomic(join(home, path), content);
}

/** The run's definitions kept for export; null (no digest logged) when they could not be written. */
async function keptDefinitions(setup: AgentSetup): Promise<string | null> {
  try {
    return await keepDefinitions(setup.home, toolDefinitions(setup.tools));
  } catch {
    // Export then says the turn has no definitions and uses today's; the answer is not lost for it.
    return null;
  }
}

/**
 * The log fields of an agent turn known before it runs: a turn its argo never finished still says it
 * was an agent run. Its `request_sha256` is its first request's, which the loop builds (the memo is
 * read then): the planned request's hash, which the draft would otherwise carry, is left out.
 */
export function agentDraftFields(setup: Pick<AgentSetup, 'tools' | 'unavailable' | 'ephemeralSystem' | 'unloadedTools'>): Record<string, unknown> {
  return {
    tools: setup.unloadedTools !== undefined ? [...setup.unloadedTools] : setup.tools.map((tool) => tool.name),
    tools_unavailable: setup.unavailable.map(({ name, reason }) => ({ name, reason })),
    ephemeral_system: setup.ephemeralSystem,
    request_sha256: undefined,
  };
}

/** Each run's first request, hashed once: a run's draft is written again after every round. */
const firstRequestHashes = new WeakMap<TransportRequest, string>();

function firstRequestSha256(request: TransportRequest): string {
  let hash = firstRequestHashes.get(request);
  if (hash === undefined) {
    hash = requestSha256(request);
    firstRequestHashes.set(request, hash);
  }
  return hash;
}

/** The log fields of an agent turn (docs/logs.md). */
export function agentLogFields(result: AgentResult, setup: Pick<AgentSetup, 'tools' | 'unavailable' | 'ephemeralSystem' | 'unloadedTools'>, definitionsDigest: string | null = null): Record<string, unknown> {
  return {
    ...agentDraftFields(setup),
    // What was sent first, as --explain shows it: tools, memo and ephemeral system prompt in it.
    ...(result.firstRequest !== null ? { request_sha256: firstRequestSha256(result.firstRequest) } : {}),
    ...(definitionsDigest !== null ? { tool_definitions_sha256: definitionsDigest } : {}),
    ...(result.roundMessages.length > 0 ? { round_messages: result.roundMessages } : {}),
    tool_calls: result.calls,
    iterations: result.iterations,
    all_failure_rounds: result.allFailureRounds,
    stop_reason: result.stopReason,
    compacted: result.compacted,
    // An agent's own ending says why in `error`; a model failure is worded by the turn itself.
    ...(result.status !== 'ok' && result.status !== 'interrupted' && result.modelFailure === null ? { error: result.message } : {}),
  };
}

/** An answer step that runs the agent loop over the planned chat request. */
export function agentAnswerer(setup: AgentSetup): Answerer {
  return async (request, context): Promise<Answer> => {
    if (request.endpoint !== '/api/chat') throw new UsageError('--tools needs the chat endpoint: drop --api generate (or "api" in config.json)');
    // Asked once per turn: every result saved in it goes to the same session's folder.
    let session: Promise<string> | undefined;
    const sessionId = (): Promise<string> => (session ??= setup.sessionId());
    /** The end of the reasoning shown so far, across the run's responses. */
    let thoughtEnd = '';
    // The STOP file (the CLI's signal): a run waiting on a tool or a loading model is cut when it appears.
    const byStop = setup.isStopped === undefined && setup.abortedByStop === undefined ? abortOnStop(setup.home) : null;
    const signals = [context.signal, byStop?.signal].filter((signal) => signal !== undefined);
    // Written while the model answers; settles to null on failure, so it is never left unhandled. A
    // run without tools (a STOP before they were ready) sends none: there is nothing to keep.
    const definitions = setup.logged && setup.tools.length > 0 ? keptDefinitions(setup) : Promise.resolve(null);
    // Known once written: a draft after a round carries it if it is.
    let definitionsDigest: string | null = null;
    void definitions.then((digest) => (definitionsDigest = digest));
    const onProgress = context.onProgress;
    const checkWindow = context.checkWindow;
    const result = await runAgent(
      {
        base: request.body,
        tools: setup.tools,
        context: { root: setup.root, home: setup.home, ...(setup.commandEnv ? { commandEnv: setup.commandEnv } : {}) },
        maxIterations: setup.maxIterations,
        ephemeralSystem: setup.ephemeralSystem,
        yes: setup.yes,
        ...(setup.toolBudget !== undefined ? { defaultBudget: setup.toolBudget } : {}),
        ...(setup.hints ? { hints: setup.hints } : {}),
      },
      {
        model: (agentRequest, hooks) => {
          const shown = context.onThinking;
          let first = true;
          const onThinking = shown
            ? (text: string): void => {
                hooks.onThinking(text);
                // Each response's reasoning starts a new paragraph after an earlier one's, as its words do.
                const between = first && thoughtEnd !== '' ? paragraphBreak(thoughtEnd, text) : '';
                if (between !== '') shown(between);
                first = false;
                thoughtEnd = (thoughtEnd + text).slice(-2);
                shown(text);
              }
            : hooks.onThinking;
          context.onRequest?.();
          return context.transport.stream(agentRequest, { ...hooks, onThinking, ...(context.onRetry ? { onRetry: context.onRetry } : {}) });
        },
        clock: context.clock,
        ...(checkWindow ? { checkWindow: (agentRequest, signal) => checkWindow(agentRequest.body, signal) } : {}),
        isStopped: setup.isStopped ?? (() => isStopSet(setup.home)),
        abortedByStop: setup.abortedByStop ?? ((reason) => reason === STOP_ABORT),
        confirm: setup.confirm,
        emit: (event) => (event.type === 'text' ? context.onText(event.text) : setup.emit(event)),
        readMemo: () => readMemoForPrompt(setup.home),
        resultPath: setup.logged ? async (callId, round) => savedResultPath(await sessionId(), context.turnId, round, callId) : null,
        saveResult: (path, content) => saveResult(setup.home, path, content),
        sleep: abortableSleep,
        ...(onProgress ? { onRound: (progress: AgentResult) => onProgress(agentLogFields(progress, setup, definitionsDigest)) } : {}),
        signal: signals.length > 0 ? AbortSignal.any(signals) : new AbortController().signal,
      },
    ).finally(() => byStop?.close());
    setup.onResult?.(result);
    return {
      status: result.status,
      response: result.text,
      thinking: result.thinking,
      failure: result.status === 'error' ? result.modelFailure : null,
      metrics: result.metrics,
      largestPromptEvalCount: result.largestPromptEvalCount,
      firstTokenMs: result.firstTextMs,
      fields: agentLogFields(result, setup, await definitions),
    };
  };
}
