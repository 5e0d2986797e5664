// `argo --tools …`: the agent loop plugged into the turn, with the terminal's side of it —
// confirmation prompts, one `argo:` line per failure, the explanation of the resolution. Loaded
// only when tools are asked for, so a plain question never pays for tool code or the MCP SDK.
import type { Settings } from '../config/settings.js';
import { ConfigError, UsageError } from '../errors.js';
import { agentAnswerer, agentDraftFields, toolsConfigOf } from '../agent/answer.js';
import { CLI_RUN_HINTS, CLI_UNLOGGED_RUN_HINTS } from '../agent/loop.js';
import type { AgentEvent, AgentResult, ConfirmAnswer, ConfirmRequest } from '../agent/loop.js';
import type { Unconfirmed } from '../turn/error-code.js';
import { buildAgentRequest } from '../agent/request.js';
import type { AgentRequest } from '../agent/request.js';
import { TIMESTAMP_PATTERN } from '../log/timestamp.js';
import type { LogEntry } from '../log/entry.js';
import type { ReplayPlan } from '../replay/plan.js';
import { ToolboxAborted, buildCatalog, builtinTools, checkCommandSchemas, loadToolbox, toolboxIfCut, unloadedToolbox } from '../tools/catalog.js';
import type { ConnectMcp } from '../tools/catalog.js';
import { MCP_PREFIX, resolveTools } from '../tools/toolsets.js';
import type { Resolution } from '../tools/toolsets.js';
import { commandEnvironment } from '../tools/process.js';
import type { Toolbox } from '../tools/catalog.js';
import { readMemoForPrompt } from '../tools/memo.js';
import { STOP_ABORT, abortOnStop, isStopSet } from '../agent/stop.js';
import type { Answerer } from '../turn/turn.js';
import { clipText } from '../output/cut.js';
import { untrustedTextFor } from '../output/terminal-text.js';
import { visibleLine } from '../tools/foreign-line.js';
import type { Io } from './io.js';
import type { Outcome } from './outcome.js';
import { toolRoot } from './root.js';
import type { TerminalAnswers } from './answers.js';
import { asksFirst } from '../tools/types.js';
import { maskSecretsIn } from '../text/secrets.js';
import type { AskLine } from '../chat/repl.js';

/** The ask command's agent flags. */
export interface AgentFlags {
  root?: string;
  yes: boolean;
  ephemeralSystem?: string;
}

/** What ask.ts needs from an agent run. */
export interface AgentRun {
  answerer: Answerer;
  /** The log fields known before the run (its tools), for the turn's draft. */
  draftFields: Record<string, unknown>;
  /** The run's exact first request (tools, memo, ephemeral system prompt), as --explain shows it. */
  firstRequest: (plan: ReplayPlan) => Promise<AgentRequest>;
  /** What --explain adds to a plain explanation: the tool resolution, as lines of text or as JSON fields. */
  explainLines: () => string[];
  explainFields: () => Record<string, unknown>;
  /** The fields --json adds. */
  jsonFields: (entry: LogEntry) => Record<string, unknown>;
  /** Whether the last run ended on a call not confirmed (its `error_code` says which way). */
  unconfirmed: () => Unconfirmed | null;
  close: () => Promise<void>;
}

function terminalConfirm(io: Io, pause: () => void, askLine: AskLine | undefined, answers: TerminalAnswers | null): (request: ConfirmRequest, signal: AbortSignal) => Promise<ConfirmAnswer> {
  return async (request, signal) => {
    if (!io.isInteractive) return 'no-terminal';
    pause();
    // Names from an MCP server, previews and model text are hostile on a terminal.
    const shown = untrustedTextFor(io.stderr);
    // Loaded only when a call asks: the preview's width measuring (string-width and a segmenter, ~20 ms) and the terminal's reader (readline).
    const [{ confirmationPreview }, { askOnTerminal, isYes }] = await Promise.all([import('../output/confirm-preview.js'), import('./answers.js')]);
    // A one-liner reads stdin itself; a chat passes its own reader, as a second reader would take its lines.
    const read: AskLine = askLine ?? ((question, signal) => (answers === null ? askOnTerminal(io, question, signal) : answers.ask(question, signal)));
    io.stderr.write(`argo: ${shown(request.tool)} wants to run:\n${confirmationPreview(shown(request.preview), io.stderr)}\n`);
    return isYes(await read('Allow? [y/N] ', signal)) ? 'yes' : 'no';
  };
}

/**
 * How an agent run's calls are traced on stderr: `terminal`, a short line per call that ran (the
 * spinner's neighbour); `log`, a line per call with its arguments and outcome, for a cron or CI log
 * that has no other record of what ran; `none` (-q, or --json, whose tool_calls hold it).
 */
export type ToolTrace = 'terminal' | 'log' | 'none';

/** How far a call's arguments are shown on its trace line. */
const TRACE_ARGS_CHARS = 120;
/** How far a tool's name is: an MCP server names its own tools. */
const TRACE_NAME_CHARS = 64;

/**
 * A call's line in a log: tool, arguments (JSON, cut short without splitting a character), outcome
 * and time, secret-looking values shown as ***. The arguments are the model's and the name may be an MCP server's: the line keeps to one
 * row and shows their controls rather than obeying them wherever the log is read later.
 */
export function traceLine(event: Extract<AgentEvent, { type: 'tool_status' }>): string {
  // A log outlives the run and is read by others (CI): what looks like a secret is masked before the cut.
  const args = event.args === null ? '' : ` ${clipText(JSON.stringify(maskSecretsIn(event.args)), TRACE_ARGS_CHARS)}`;
  return `${visibleLine(`argo: tool ${clipText(event.name, TRACE_NAME_CHARS)}${args}: ${event.status} (${event.ms ?? 0} ms)`)}\n`;
}

/**
 * The spinner's words while calls run: their tools by name, each once, in the order they started
 * (the model waits for them, not the other way round). Names are shown as given: the caller neutralizes them.
 */
export function runningLabel(names: readonly string[]): string {
  const distinct = [...new Set(names)].map((name) => clipText(name, TRACE_NAME_CHARS));
  if (distinct.length <= 2) return `running ${distinct.join(' and ')}…`;
  return `running ${distinct.slice(0, 2).join(', ')} and ${String(distinct.length - 2)} more…`;
}

function eventPrinter(io: Io, pause: () => void, busy: (label: string) => void, trace: ToolTrace): (event: AgentEvent) => void {
  const shown = untrustedTextFor(io.stderr);
  // The calls running now, by id: the spinner names them rather than the model, which waits.
  const running = new Map<string, string>();
  return (event) => {
    if (event.type === 'tool_status') {
      if (event.status === 'running') running.set(event.id, event.name);
      else running.delete(event.id);
    }
    if (event.type === 'tool_execution_error' || event.type === 'reask' || (event.type === 'tool_status' && isTraced(event, trace))) pause();
    switch (event.type) {
      case 'tool_execution_error':
        io.stderr.write(`argo: tool ${shown(event.name)} failed: ${shown(event.message)}\n`);
        return;
      case 'reask':
        io.stderr.write(`argo: the model's response was invalid (${shown(event.reason)}); asking again (${event.attempt} of ${event.of})\n`);
        return;
      case 'tool_status':
        if (isTraced(event, trace)) io.stderr.write(trace === 'log' ? traceLine(event) : `argo: ran ${shown(event.name)} (${event.ms ?? 0} ms)\n`);
        if (running.size > 0) busy(shown(runningLabel([...running.values()])));
        return;
      default:
        return;
    }
  };
}

/** A terminal is told of each call that ran; a log of each call once it has ended, however. */
function isTraced(event: Extract<AgentEvent, { type: 'tool_status' }>, trace: ToolTrace): boolean {
  if (trace === 'terminal') return event.status === 'success';
  return trace === 'log' && event.status !== 'running';
}

// The session store (and its zod codec) loads when a result is first saved, not at start-up. Only a
// logged turn saves results, so the session is the one the turn is logged in.
async function sessionIdFor(settings: Settings, io: Io): Promise<string> {
  const { openSession } = await import('../sessions/store.js');
  const { format } = await import('date-fns/format');
  return (await openSession(settings.paths.sessions, settings.session, format(io.now(), TIMESTAMP_PATTERN))).id;
}

/** What --explain says while STOP is set: the tools and request shown are the real ones, but a run would not get that far. */
const STOP_SET_LINE = 'set: a run now stops before its first request; "argo stop --clear" allows runs again';

/** The resolution's lines of --explain (before its request line). */
function explainLines(box: Toolbox, settings: Settings, root: string): string[] {
  const lines = [`tools      ${settings.agent.tools.join(', ')} (from ${settings.agent.toolsSource})`];
  for (const { toolset, tools } of box.expanded) lines.push(`  ${toolset.padEnd(12)} → ${tools.length > 0 ? tools.join(', ') : toolset.startsWith(MCP_PREFIX) ? '(none)' : '(includes only)'}`);
  if (box.takenAway.length > 0) lines.push(`  ${'taken away'.padEnd(12)} → ${box.takenAway.join(', ')}`);
  lines.push(`resolved   ${box.tools.map((tool) => tool.name).join(', ') || '(none)'}`);
  for (const gone of box.unavailable) lines.push(`  unavailable ${gone.name}: ${gone.reason}`);
  lines.push(`root       ${root}`, `max        ${settings.agent.maxIterations} iterations`);
  if (isStopSet(settings.home)) lines.push(`stop       ${STOP_SET_LINE}`);
  return lines;
}

/**
 * What can be checked before any turn, without starting an MCP server: the endpoint, the root and
 * the names (a cycle, an unknown name). A chat calls it once at its start, so a typo is a usage
 * error then, not a failure of every message.
 */
export async function checkAgentSetup(settings: Settings, flags: AgentFlags): Promise<string> {
  const root = await endpointAndRoot(settings, flags);
  await checkToolNames(settings);
  return root;
}

/**
 * The tool definitions in config.json and the names a run would ask for, resolved as the run would,
 * without starting an MCP server: a clash, a cycle, an unknown name or a bad schema is an error here.
 */
export async function checkToolNames(settings: Settings): Promise<Resolution> {
  const config = toolsConfigOf(settings.agent);
  return namingWhere(settings, async () => {
    const { catalog } = buildCatalog(config, builtinTools());
    await checkCommandSchemas(config);
    return resolveTools(settings.agent.tools, catalog);
  });
}

/** Agent mode needs /api/chat and an existing root. */
async function endpointAndRoot(settings: Settings, flags: AgentFlags): Promise<string> {
  if (settings.api !== 'chat') throw new UsageError('--tools needs the chat endpoint: drop --api generate (or "api" in config.json)');
  return toolRoot(flags.root);
}

/** A usage error about the tools names where the list came from (--tools, or config.json's "tools"). */
async function namingWhere<T>(settings: Settings, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UsageError && !(error instanceof ConfigError)) throw new UsageError(`${settings.agent.toolsSource}: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * What the turns of one chat share: each MCP server started once, at its first turn, and kept to
 * the chat's end (a server that did not start is not tried again), and the notes of what is
 * unavailable, each shown once.
 */
export interface ChatTools {
  connectMcp: ConnectMcp;
  /** The unavailable notes shown so far (name and reason): a later turn shows only a new one. */
  shown: Set<string>;
  /** Ends the servers, at the chat's end. */
  close: () => Promise<void>;
}

export async function chatTools(): Promise<ChatTools> {
  const { mcpPool } = await import('../tools/mcp-pool.js');
  const pool = mcpPool(undefined, { keepFailures: true });
  return { connectMcp: pool.connect, shown: new Set(), close: pool.close };
}

/**
 * The run's tools, or null when a STOP was set before they were ready (no server is started then;
 * one starting is cut). `signal` (a chat's Ctrl-C or SIGTERM) cuts the start too: ToolboxAborted.
 */
export async function toolboxUnlessStopped(settings: Settings, root: string, chat: ChatTools | undefined, signal: AbortSignal | undefined): Promise<Toolbox | null> {
  if (isStopSet(settings.home)) return null;
  const byStop = abortOnStop(settings.home);
  try {
    return await runToolbox(settings, root, chat, signal === undefined ? byStop.signal : AbortSignal.any([signal, byStop.signal]));
  } catch (error) {
    if (error instanceof ToolboxAborted && error.cause === STOP_ABORT) return null;
    throw error;
  } finally {
    byStop.close();
  }
}

/** The run's tools loaded (MCP servers started); `signal` cuts their start: ToolboxAborted. */
function runToolbox(settings: Settings, root: string, chat: ChatTools | undefined, signal: AbortSignal | undefined): Promise<Toolbox> {
  return namingWhere(settings, () => loadToolbox(settings.agent.tools, toolsConfigOf(settings.agent), { root, ...(signal ? { signal } : {}), ...(chat ? { connectMcp: chat.connectMcp } : {}) }));
}

/** A run a STOP ended before its tools were ready: the names checked, no tool loaded, no server started. */
async function stoppedToolbox(settings: Settings): Promise<Toolbox> {
  return unloadedToolbox(await checkToolNames(settings));
}

/** The reader of a one-liner's answers; loaded only for a terminal that may be asked (it brings readline and the key gate). */
async function terminalAnswers(io: Io): Promise<TerminalAnswers> {
  const { TerminalAnswers } = await import('./answers.js');
  return new TerminalAnswers(io);
}

/** Resolves the tools (usage errors name the cycle or the unknown name) and prepares the run. */
export async function prepareAgent(
  settings: Settings,
  flags: AgentFlags,
  log: boolean,
  io: Io,
  pause: () => void,
  askLine: AskLine | undefined,
  trace: ToolTrace,
  chat?: ChatTools,
  busy: (label: string) => void = () => undefined,
  signal?: AbortSignal,
): Promise<AgentRun> {
  const root = await endpointAndRoot(settings, flags);
  /** No tool was loaded (a STOP or a cut before they were ready): the run ends at its first check. */
  let unloaded = false;
  const loaded = await toolboxUnlessStopped(settings, root, chat, signal).catch((error: unknown) => {
    // A one-liner cut while its servers started goes on without them: the run ends at its first
    // check as the signal says, and is logged so. A chat tells the signal and logs nothing.
    if (chat !== undefined) throw error;
    unloaded = true;
    return toolboxIfCut(error);
  });
  if (loaded === null) unloaded = true;
  const box = loaded ?? (await stoppedToolbox(settings));
  /** What --explain shows: the real tools even while STOP is set, as nothing runs (loaded when asked, servers started then). */
  let explained: Toolbox | null = loaded === null ? null : box;
  const shown = untrustedTextFor(io.stderr);
  for (const gone of box.unavailable) {
    const note = `${gone.name}\n${gone.reason}`;
    if (chat?.shown.has(note) === true) continue;
    chat?.shown.add(note);
    io.stderr.write(`argo: tool ${shown(gone.name)} is unavailable (${shown(gone.reason)}); going on without it\n`);
  }
  const ephemeralSystem = flags.ephemeralSystem ?? null;
  // A one-liner that may ask reads the terminal from now on, so keys typed before a question is
  // shown never answer it (a chat's own reader does the same for its questions).
  const answers = askLine === undefined && io.isInteractive && !flags.yes && box.tools.some((tool) => asksFirst(tool)) ? await terminalAnswers(io) : null;
  let ended: AgentResult | null = null;
  const setup = {
    tools: box.tools,
    unavailable: box.unavailable,
    root,
    home: settings.home,
    commandEnv: () => commandEnvironment(process.env, settings.agent.passSecrets),
    maxIterations: settings.agent.maxIterations,
    ephemeralSystem,
    yes: flags.yes,
    confirm: terminalConfirm(io, pause, askLine, answers),
    emit: eventPrinter(io, pause, busy, trace),
    logged: log,
    hints: log ? CLI_RUN_HINTS : CLI_UNLOGGED_RUN_HINTS,
    sessionId: () => sessionIdFor(settings, io),
    // Logged as its tools: what its names resolve to, no server started to learn its own.
    ...(unloaded ? { unloadedTools: box.resolution.tools } : {}),
    // Stopped before its tools were ready: the run ends at its first check, logged as stopped.
    ...(loaded === null ? { isStopped: () => true } : {}),
    onResult: (result: AgentResult) => {
      ended = result;
    },
  };
  return {
    answerer: agentAnswerer(setup),
    draftFields: agentDraftFields(setup),
    firstRequest: async (plan) => {
      if (plan.request.endpoint !== '/api/chat') throw new UsageError('--tools needs the chat endpoint');
      explained ??= await runToolbox(settings, root, chat, signal);
      return buildAgentRequest({ base: plan.request.body, tools: explained.tools, ephemeralSystem, memo: await readMemoForPrompt(settings.home), added: [] });
    },
    // MCP servers name and describe their tools: on a terminal, what they sent is shown, not obeyed.
    explainLines: () => explainLines(explained ?? box, settings, root).map(untrustedTextFor(io.stdout)),
    explainFields: () => {
      const shown = explained ?? box;
      return {
        tools: {
          requested: settings.agent.tools,
          expanded: shown.expanded,
          excluded: shown.takenAway,
          tools: shown.tools.map((tool) => tool.name),
          unavailable: shown.unavailable,
        },
        root,
        max_iterations: settings.agent.maxIterations,
        // As `argo stop --json` says it; absent while not set.
        ...(isStopSet(settings.home) ? { stop: true } : {}),
      };
    },
    jsonFields: (entry) => ({
      tools: entry.tools,
      tool_calls: entry.tool_calls?.map(({ result: _result, error_detail: _detail, ...call }) => call),
      iterations: entry.iterations,
      all_failure_rounds: entry.all_failure_rounds,
      stop_reason: entry.stop_reason,
    }),
    unconfirmed: () => ended?.unconfirmed ?? null,
    close: async () => {
      answers?.close();
      await Promise.all([box.close(), explained !== null && explained !== box ? explained.close() : undefined]);
    },
  };
}

/**
 * How an agent turn that was not interrupted ended, with the one `argo:` line saying why and what to
 * do (an interrupted one is told as a plain turn's, by the signal that cut it).
 */
export function reportAgentOutcome(entry: LogEntry, failure: string | null, io: Io, logged: boolean): Outcome {
  if (entry.status === 'ok') return 'ok';
  const kept = logged ? ` (logged as ${entry.status})` : '';
  io.stderr.write(`argo: ${untrustedTextFor(io.stderr)(failure ?? entry.error ?? 'the run stopped')}${kept}\n`);
  return 'failed';
}
