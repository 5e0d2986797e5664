import type { Settings } from '../config/settings.js';
import type { LogEntry, TurnStatus } from '../log/entry.js';
import { OllamaTransport } from '../ollama/transport.js';
import type { FixHints } from '../ollama/fix-hints.js';
import type { TransportRequest } from '../ollama/transport.js';
import { windowFix } from '../ollama/context-window.js';
import type { WindowFixes } from '../ollama/context-window.js';
import { StderrLines } from '../output/spinner.js';
import { colorLevel, parseColorMode } from '../output/color.js';
import { ReasoningStream } from '../output/reasoning.js';
import { ControlNeutralizer, jsonTextFor, untrustedTextFor } from '../output/terminal-text.js';
import { TextChunks } from '../output/text-chunks.js';
import { TokenBuffer } from '../output/token-buffer.js';
import { MODEL_SOURCE_WORDS, replayNote, statsLine, turnStats } from '../output/turn-notes.js';
import type { OllamaFigures, TurnStats } from '../output/turn-notes.js';
import { policyForLog } from '../replay/plan.js';
import { checkContext, requestSha256 } from '../turn/request-facts.js';
import type { ContextCheck } from '../turn/request-facts.js';
import { turnErrorCode } from '../turn/error-code.js';
import { prepareTurn, runTurn, streamAnswer } from '../turn/turn.js';
import type { Answer, PreparedTurn, TurnInput, TurnResult } from '../turn/turn.js';
import type { AgentFlags, AgentRun, ChatTools, ToolTrace } from './agent.js';
import type { Io } from './io.js';
import { oneShotFetch } from './one-shot-fetch.js';
import { STOP_LINES, STOP_SIGNALS, isStopSignal } from './outcome.js';
import type { Outcome, Stop } from './outcome.js';
import { isEmptyAnswer } from '../text/answer.js';
import { usesTools } from './ask-flags.js';
import type { AskLine } from '../chat/repl.js';
import { recoverUnfinishedTurns } from './recovery.js';
import { rowEnded, rowOpened } from './open-row.js';

export interface AskOptions extends TurnInput {
  explain: boolean;
  json: boolean;
  /** Agent mode's flags; used when --tools (or config's "tools") names any. */
  agent?: AgentFlags;
  /** Print the answer as the model sent it even on a terminal (control characters included). */
  raw?: boolean;
  /** --stats: Ollama's figures on stderr after the answer. */
  stats?: boolean;
  /** -q: no replay note, no tool trace. */
  quiet?: boolean;
  /** --color: whether the replay note is dim (with NO_COLOR and FORCE_COLOR, as every command's output). */
  color?: string | boolean | undefined;
}

/** What a caller running several turns (argo chat) shares between them and learns from each. */
export interface AskContext {
  /** One transport (one kept-alive connection) for every turn. */
  transport?: OllamaTransport;
  /** Aborting it stops the answer, as Ctrl-C does, or as the signal its reason names does ('SIGTERM'). */
  signal?: AbortSignal;
  onEntry?: (entry: LogEntry) => void;
  /** Reads the answer to a confirmation when the caller owns the terminal's input (a chat's readline). */
  askLine?: AskLine;
  /** A chat's MCP servers, kept from one turn to the next, and the notes it has shown. */
  tools?: ChatTools;
}

/** `argo "question"`: one turn, printed as it streams (or as JSON, or explained). How it ended. */
export async function ask(settings: Settings, options: AskOptions, io: Io, shared: AskContext = {}): Promise<Outcome> {
  // An --explain sends and writes nothing: the journal waits for a turn.
  if (!options.explain) await recoverUnfinishedTurns(settings, io);
  if (!usesTools(settings)) return askTurn(settings, options, io, shared, null);
  // Tool code and the MCP SDK are loaded only here.
  const { prepareAgent } = await import('./agent.js');
  // The spinner must stop before a confirmation or a failure line is written to the terminal.
  // While calls run, the spinner names their tools instead.
  const ui: AnswerUi = { pause: () => undefined, busy: () => undefined };
  // A one-liner's Ctrl-C or SIGTERM while its MCP servers start cuts their start; the run then ends
  // at its first check, told and logged as interrupted, its prompt kept (a chat listens itself).
  const cut = shared.signal === undefined ? new AbortController() : null;
  const stopHearing = cut === null ? () => undefined : io.onInterrupt((signal) => cut.abort(signal));
  let agent: AgentRun;
  try {
    agent = await prepareAgent(settings, options.agent ?? { yes: false }, options.log, io, () => ui.pause(), shared.askLine, toolTrace(io, options), shared.tools, (label) => ui.busy(label), shared.signal ?? cut?.signal);
  } catch (error) {
    stopHearing();
    // A chat's Ctrl-C or SIGTERM while its MCP servers started: told as the signal, as a cut answer is.
    if (!(error instanceof Error) || error.name !== 'AbortError' || shared.signal?.aborted !== true) throw error;
    return toldStop(shared.signal, io);
  }
  // Handed on with no gap: askTurn listens from its start. Cut already, it follows that signal and
  // listens to none, so this keeps listening until the cut turn is logged: with no listener, the
  // next signal (a closing terminal sends SIGHUP more than once) would end argo before its log line.
  const cutAlready = cut?.signal.aborted === true;
  if (!cutAlready) stopHearing();
  try {
    // --explain sends and logs nothing: cut, it has nothing to explain either.
    if (cut !== null && cutAlready && options.explain) return toldStop(cut.signal, io);
    return await askTurn(settings, options, io, cut !== null && cutAlready ? { ...shared, signal: cut.signal } : shared, agent, ui);
  } finally {
    if (cutAlready) stopHearing();
    await agent.close();
  }
}

/** A run cut before its turn began, told as the signal that cut it (`signal`'s reason). */
function toldStop(signal: AbortSignal, io: Io): Stop {
  const stop: Stop = isStopSignal(signal.reason) ? STOP_SIGNALS[signal.reason] : 'interrupted';
  io.stderr.write(`argo: ${STOP_LINES[stop]}\n`);
  return stop;
}

/** -q leaves the calls untraced; so does --json in a log (its tool_calls say what ran), not on a terminal, where the lines show progress. */
function toolTrace(io: Io, options: AskOptions): ToolTrace {
  if (options.quiet === true) return 'none';
  if (io.stderr.isTTY) return 'terminal';
  return options.json ? 'none' : 'log';
}

/** What an agent run's events do to the answer's screen: lines of its own, and the spinner's words while tools run. */
interface AnswerUi {
  pause: () => void;
  busy: (label: string) => void;
}

async function askTurn(
  settings: Settings,
  options: AskOptions,
  io: Io,
  shared: AskContext,
  agent: AgentRun | null,
  ui: AnswerUi = { pause: () => undefined, busy: () => undefined },
): Promise<Outcome> {
  const transport = shared.transport ?? newTransport(settings);
  if (options.explain) {
    const prepared = await prepareTurn(settings, options, { readOnly: true, onNotice: (line) => io.stderr.write(`${line}\n`), capabilities: (model, signal) => transport.modelCapabilities(model, signal), ...(shared.signal ? { signal: shared.signal } : {}) });
    // An agent run's first request carries its tools, memo and ephemeral system prompt: that is the one explained and checked.
    const request = agent ? await agent.firstRequest(prepared.plan) : prepared.plan.request;
    // A chat's /explain passes its signal: Ctrl-C there ends a wait on the model's window.
    // In a chat, its fixes (start it again with --num-ctx, /replay); a shorter replay only when turns were replayed.
    const fixes: WindowFixes = { hints: transport.hints, replayed: prepared.plan.replayedIds.length > 0 };
    const context = await checkContext(settings, request, (model, signal) => transport.modelNumCtx(model, signal), {
      always: true,
      defaultNumCtx: (signal) => transport.defaultNumCtx(signal),
      ...(shared.signal ? { signal: shared.signal } : {}),
      fixes,
    });
    const explained = { ...prepared, request };
    if (options.json) io.stdout.write(`${jsonTextFor(io.stdout, options)(JSON.stringify(explainJson(explained, context, agent?.explainFields() ?? {})))}\n`);
    else writeExplainText(io.stdout, explained, context, settings, agent?.explainLines() ?? [], fixes);
    return 'ok';
  }

  // The model's text is not ours: on a terminal its control characters are shown, not obeyed.
  const guard = io.stdout.isTTY === true && options.raw !== true ? new ControlNeutralizer() : null;
  // On a terminal both streams share, the answer's row is marked open while it is: a signal that
  // quits at once (a second Ctrl-C) ends it before its line.
  const sharedTerminal = io.stdout.isTTY === true && io.stderr.isTTY;
  const answerOut = (text: string): void => {
    if (text === '') return;
    io.stdout.write(text);
    if (!sharedTerminal) return;
    if (text.endsWith('\n')) rowEnded();
    else rowOpened();
  };
  const buffer = new TokenBuffer((text) => answerOut(guard ? guard.push(text) : text), settings.tokenBuffer);
  // Notes written while the answer is awaited go through it, so they never land on the spinner's row.
  const lines = new StderrLines(io.stderr, io.stderr.isTTY && !io.dumbTerminal && !options.json);
  // A thinking model's reasoning, as it streams, on a terminal's stderr: never on stdout, which
  // holds the answer alone (`argo "q" > answer.txt`), nor with --json or --hide-thinking.
  const reasoning = io.stderr.isTTY && !options.json && !settings.hideThinking ? newReasoningStream(io, lines, settings, options) : null;
  let wrote = '';
  // A reasoning block's footer was the last thing on the terminal.
  let afterFooter = false;
  // Set when lines of ours (a tool's status, a question) ended the answer's row on a terminal both
  // streams share: the next words come one blank row below them, whatever newlines they start with.
  let afterOurLines = false;
  // The model asked (the session's last one, perhaps).
  let model = '';
  // How the request failed, for --json's error_code (the entry keeps only its words).
  let failure: Answer['failure'] = null;
  /** Ends the answer's row when both streams share the terminal, so a line of stderr starts at the left edge. */
  const endAnswerRow = (): void => {
    buffer.flush();
    if (sharedTerminal && wrote !== '' && !wrote.endsWith('\n')) {
      answerOut('\n');
      wrote = '\n';
    }
  };
  const controller = new AbortController();
  // Ctrl-C stays handled (the answer ends cleanly) until the turn is written, so it is never half-logged.
  // SIGTERM and SIGHUP end the answer the same way; so does a reader that stops reading
  // (`argo … | head -1`): the request is aborted, so Ollama stops generating, and the turn is logged.
  let stoppedBy: Stop | undefined;
  const stop = (how: Stop): void => {
    stoppedBy ??= how;
    controller.abort(STOPS[how].reason);
  };
  // A chat passes its own signal: it listens for Ctrl-C itself and decides which turn one stops
  // (not one whose line came after it), so the turn does not listen too.
  const stopListening = shared.signal === undefined ? io.onInterrupt((signal) => stop(STOP_SIGNALS[signal])) : () => undefined;
  const stopWatchingOutput = io.onOutputClosed((how) => stop(how === 'closed' ? 'output-closed' : 'output-failed'));
  const stopFollowing = followSignal(shared.signal, (reason) => stop(isStopSignal(reason) ? STOP_SIGNALS[reason] : 'interrupted'));
  try {
    const result = await runTurn(settings, options, {
      transport,
      now: io.now,
      clock: io.clock,
      newId: io.newId,
      rescue: io.rescue,
      signal: controller.signal,
      ...(agent ? { draftFields: agent.draftFields } : {}),
      onNotice: (line) => {
        reasoning?.close(false);
        lines.line(untrustedTextFor(io.stderr)(line));
      },
      onText: (text) => {
        if (reasoning?.open === true) {
          reasoning.close(true);
          afterFooter = io.stdout.isTTY === true;
        }
        lines.stopSpinner();
        // The footer's blank line sets the answer apart: on the same terminal, the newlines it starts
        // with (an agent's paragraph break between responses) would only add empty rows.
        const bare = afterFooter || afterOurLines ? text.replace(/^(?:\r?\n)+/, '') : text;
        if (bare === '') return;
        const shown = afterOurLines && !afterFooter ? `\n${bare}` : bare;
        afterFooter = false;
        afterOurLines = false;
        wrote = shown;
        if (!options.json) buffer.push(shown);
      },
      onThinking: (text) => {
        if (reasoning === null) {
          // Hidden: the spinner says why the answer is slow to start.
          lines.relabel(`${model} is thinking…`);
          return;
        }
        if (!reasoning.open) endAnswerRow();
        reasoning.push(text);
      },
      onRetry: (attempt, delayMs, kind) => {
        // The request is sent again, and its reasoning starts over in a block of its own.
        reasoning?.close(false);
        const reason = kind === 'busy' ? `Ollama at ${settings.host} is busy` : kind === 'rate-limited' ? `Ollama at ${settings.host} is rate-limited` : `cannot reach Ollama at ${settings.host}`;
        lines.line(`argo: ${reason}; retrying in ${(delayMs / 1000).toFixed(2)}s (attempt ${attempt} of ${settings.retries.attempts})`);
      },
      answer: async (request, context) => {
        model = untrustedTextFor(io.stderr)(request.body.model);
        lines.spin(`asking ${model}…`);
        // Before a line of ours on stderr (a question, a tool's status): the model's words so far go
        // out first, on a line of their own when both streams share the terminal.
        ui.pause = () => {
          // The response's reasoning came before its tool calls: it has ended.
          reasoning?.close(true);
          lines.stopSpinner();
          if (options.json) return;
          endAnswerRow();
          afterOurLines = io.stdout.isTTY === true && io.stderr.isTTY;
        };
        // A spinner is no line of ours: the answer's row ends, but its next words need no blank row above.
        ui.busy = (label) => {
          reasoning?.close(true);
          if (!options.json) endAnswerRow();
          lines.spin(label);
        };
        // An agent run's later rounds wait on the model again after its tool lines: the spinner says so.
        let requests = 0;
        const onRequest = (): void => {
          if (requests++ === 0) return;
          reasoning?.close(true);
          lines.spin(`asking ${model}…`);
        };
        let answered: Answer | undefined;
        try {
          answered = await (agent?.answerer ?? streamAnswer)(request, { ...context, onRequest });
          failure = answered.failure;
        } finally {
          // Reasoning cut off (Ctrl-C, a failure) ends its row without "…done thinking.".
          reasoning?.close(answered?.status === 'ok');
          buffer.flush();
          const held = guard?.end() ?? '';
          answerOut(held);
          lines.stopSpinner();
          if (!options.json && wrote !== '' && !wrote.endsWith('\n')) answerOut('\n');
        }
        if (options.json) return answered;
        // A write fails after it returns (a fast answer to a full disk is heard of only once it has
        // ended): what was written is settled before the turn is logged, so an answer that never
        // reached its reader is logged as cut short, as one streaming slowly is.
        await io.outputWritten(controller.signal);
        return answered.status === 'ok' && isOutputEnd(stoppedBy) ? { ...answered, status: 'interrupted', failure: null } : answered;
      },
    });
    const { entry } = result;
    shared.onEntry?.(entry);
    const stats = turnStats(entryFigures(entry));
    if (options.json) {
      const { id, session, model, model_response: response, status, replay_policy, timings, error } = entry;
      // A thinking model's reasoning, as logged: absent when there was none.
      const thinking = entry.thinking !== undefined ? { thinking: entry.thinking } : {};
      const facts = { request_sha256: entry.request_sha256, num_ctx: entry.num_ctx, prompt_tokens_estimate: entry.prompt_tokens_estimate, truncation_suspected: entry.truncation_suspected, done_reason: entry.done_reason };
      const rerun = options.rerunOf !== undefined ? { rerun_of: options.rerunOf } : {};
      const error_code = turnErrorCode({ status, failure, unconfirmed: agent?.unconfirmed() ?? null });
      io.stdout.write(`${jsonTextFor(io.stdout, options)(JSON.stringify({ id, session, model, response, ...thinking, status, replay_policy, timings, error, error_code, stats, ...facts, ...rerun, ...agent?.jsonFields(entry) }))}\n`);
    } else {
      await printNotes(io, result, stats, options);
    }
    // A cut answer is told by what cut it, with tools or without (exit 143 for SIGTERM, not 130).
    if (agent && entry.status !== 'interrupted') return (await import('./agent.js')).reportAgentOutcome(entry, result.failure, io, options.log);
    return reportOutcome(entry.status, result.failure, io, options.log, stoppedBy ?? 'interrupted');
  } finally {
    stopListening();
    stopWatchingOutput();
    stopFollowing();
  }
}

/** The reasoning's blocks on stderr, dim when colour is on, neutralized unless --raw. */
function newReasoningStream(io: Io, lines: StderrLines, settings: Settings, options: AskOptions): ReasoningStream {
  const level = colorLevel({ mode: parseColorMode(options.color), env: process.env, isTTY: io.stderr.isTTY });
  return new ReasoningStream(
    (text) => {
      lines.text(text);
      // A signal that quits at once (a second Ctrl-C) ends an open row before its line.
      if (text.endsWith('\n')) rowEnded();
      else rowOpened();
    },
    { neutralize: options.raw !== true, dim: level > 0, limits: settings.tokenBuffer },
  );
}

/** The transport a command asks Ollama through; `hints` name the fixes its errors give (a chat's: CHAT_HINTS). */
export function newTransport(settings: Settings, hints?: FixHints): OllamaTransport {
  return new OllamaTransport({
    host: settings.host,
    attempts: settings.retries.attempts,
    initialDelayMs: settings.retries.initialDelayMs,
    idleMs: settings.timeouts.idleMs,
    fetch: oneShotFetch(),
    ...(hints !== undefined ? { hints } : {}),
  });
}

/** Calls `abort` with the reason when `signal` aborts; returns the unsubscribe. */
function followSignal(signal: AbortSignal | undefined, abort: (reason: unknown) => void): () => void {
  if (signal === undefined) return () => undefined;
  const listener = (): void => abort(signal.reason);
  if (signal.aborted) listener();
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}

export function entryFigures(entry: LogEntry): OllamaFigures {
  const t = entry.timings;
  return { prompt_eval_count: t.prompt_eval_count, eval_count: t.eval_count, eval_duration_ns: t.eval_duration_ns, load_duration_ns: t.load_duration_ns, total_duration_ns: t.total_duration_ns };
}

/** After the answer, on stderr: the replay note (a terminal only; -q silences it), --stats, and a word on an empty answer. */
async function printNotes(io: Io, result: TurnResult, stats: TurnStats, options: AskOptions): Promise<void> {
  // The plan's, with every decision: the logged copy keeps the newest ones only.
  const policy = result.plan.replayPolicy;
  // A first turn has nothing to replay: no note.
  if (policy !== null && policy.entries_available > 0 && io.stderr.isTTY && options.quiet !== true) {
    // Loaded only for the note: a plain question does not pay for the colour library.
    const { Chalk, supportsColorStderr } = await import('chalk');
    // The decision every command's output takes (--color, NO_COLOR, FORCE_COLOR, TERM=dumb); chalk
    // only says how many colours the terminal has.
    const level = colorLevel({
      mode: parseColorMode(options.color),
      env: process.env,
      isTTY: io.stderr.isTTY,
      terminalLevel: supportsColorStderr === false || supportsColorStderr.level === 0 ? 1 : supportsColorStderr.level,
    });
    const dim = new Chalk({ level }).dim;
    io.stderr.write(`${dim(untrustedTextFor(io.stderr)(replayNote(policy, { name: result.model, source: result.modelSource })))}\n`);
  }
  if (options.stats === true) io.stderr.write(`${statsLine(stats) ?? 'no figures: Ollama sent no final chunk'}\n`);
  // A thinking model can spend its whole token limit reasoning: exit 0 with nothing printed would look like success.
  const entry = result.entry;
  if (entry.status === 'ok' && entry.tool_calls === undefined && isEmptyAnswer(entry.model_response)) {
    const why = entry.done_reason === 'length' ? ': it reached its token limit before answering (a thinking model reasons first); raise it with -o num_predict=N' : '';
    io.stderr.write(`argo: the model gave an empty answer${why}\n`);
  } else if (entry.status === 'ok' && entry.done_reason === 'length') {
    // The answer is all there is, but not all the model would have said: it looks complete otherwise.
    io.stderr.write(`argo: the answer was cut at the token limit (num_predict); raise it with -o num_predict=N\n`);
  }
}

/** How each way of stopping an answer is logged (the entry's `error`); STOP_LINES says it on stderr. */
const STOPS: Record<Stop, { reason: string }> = {
  interrupted: { reason: 'interrupted by the user' },
  terminated: { reason: 'interrupted by SIGTERM' },
  'hung-up': { reason: 'interrupted by SIGHUP (the terminal closed)' },
  'output-closed': { reason: 'interrupted: standard output was closed' },
  'output-failed': { reason: 'interrupted: standard output could not be written' },
};

function isOutputEnd(stop: Stop | undefined): boolean {
  return stop === 'output-closed' || stop === 'output-failed';
}

function reportOutcome(status: TurnStatus, failure: string | null, io: Io, logged: boolean, stoppedBy: Stop): Outcome {
  if (status === 'ok') return 'ok';
  const kept = logged ? ` (logged as ${status})` : '';
  if (status === 'interrupted') {
    io.stderr.write(`argo: ${STOP_LINES[stoppedBy]}${kept}\n`);
    return stoppedBy;
  }
  io.stderr.write(`argo: ${untrustedTextFor(io.stderr)(failure ?? 'the request failed')}${kept}\n`);
  return 'failed';
}

/** What --explain explains: the planned turn and the exact request it sends first (an agent run's has its tools). */
export interface Explained extends PreparedTurn {
  request: TransportRequest;
}

/** `--explain --json`; `added` (an agent run's tool resolution) goes before the request. */
function explainJson({ plan, model, modelSource, request }: Explained, context: ContextCheck, added: Record<string, unknown>): object {
  return {
    model,
    model_source: modelSource,
    context: { prompt_tokens_estimate: context.estimate, num_ctx: context.window?.tokens ?? null, num_ctx_source: context.window?.source ?? null },
    request_sha256: requestSha256(request),
    replay_policy: policyForLog(plan.replayPolicy),
    replayed_ids: plan.replayedIds,
    turns: plan.replayPolicy?.decisions ?? [],
    ...added,
    request,
  };
}

const WINDOW_SOURCES = { flag: 'from --num-ctx or -o num_ctx', config: 'from config.json', model: "the model's num_ctx", default: "Ollama's default", loaded: 'as Ollama loaded the model' } as const;

/** `value.padEnd(width)` and a space, made once per distinct value. */
function paddedColumn(width: number): (value: string) => string {
  const made = new Map<string, string>();
  return (value) => {
    let found = made.get(value);
    if (found === undefined) made.set(value, (found = `${value.padEnd(width)} `));
    return found;
  };
}

/**
 * `--explain` as text, written in chunks as it is made. It has a line per loaded turn: a session of
 * thousands of turns is neither held as one string nor made a string per line (its columns repeat a
 * few values, padded once).
 */
export function writeExplainText(out: Io['stdout'], { plan, model, modelSource, request }: Explained, context: ContextCheck, settings: Settings, added: readonly string[] = [], fixes: WindowFixes = {}): void {
  const text = new TextChunks(out);
  const line = (words: string): void => {
    text.add(words);
    text.endLine();
  };
  const window = context.window;
  line(`session    ${settings.session}`);
  line(`model      ${untrustedTextFor(out)(model)} (${MODEL_SOURCE_WORDS[modelSource]})`);
  line(`entry type ${plan.entryType}`);
  line(`verbosity  ${plan.verbosity}`);
  const tooLong = window && context.over ? `${window.source === 'default' ? " — too long, unless the server's default is larger: " : ' — too long: '}${windowFix(context.estimate, window.tokens, 'planned', fixes)}` : '';
  line(`context    about ${context.estimate} prompt tokens${window ? ` of a ${window.tokens}-token window (${WINDOW_SOURCES[window.source]})${tooLong}` : ''}`);
  const policy = plan.replayPolicy;
  if (policy === null) {
    line('replay     none');
  } else {
    line(`replay     ${policy.entries_available} ok turns loaded, reason ${policy.reason}`);
    line(`filtered   ${policy.entries_filtered}${policy.filtered_types.length ? ` (${policy.filtered_types.join(', ')})` : ''}`);
    line(`budget     ${policy.chars_used} of ${policy.budget} chars, ${policy.entries_used} turns used${policy.trimmed ? ', trimmed' : ''}`);
    line(`strength   ${policy.context_strength}`);
    const typeColumn = paddedColumn(12);
    const outcomeColumn = paddedColumn(9);
    const charsColumns = new Map<number, string>();
    const idPads: string[] = [];
    // `  {id:14} {type:12} {outcome:9} {chars:>6} chars[  protected]`, from pieces that already exist.
    // (forEach, not for-of: run once, the loop is not optimized, and each iterator step would be an object.)
    policy.decisions.forEach((turn) => {
      const pad = Math.max(0, 14 - turn.id.length);
      text.add('  ');
      text.add(turn.id);
      text.add((idPads[pad] ??= `${' '.repeat(pad)} `));
      text.add(typeColumn(turn.entry_type));
      text.add(outcomeColumn(turn.outcome));
      let chars = charsColumns.get(turn.chars);
      if (chars === undefined) charsColumns.set(turn.chars, (chars = `${String(turn.chars).padStart(6)} chars`));
      text.add(chars);
      if (turn.protected) text.add('  protected');
      text.endLine();
    });
  }
  for (const words of added) line(words);
  line(`request    POST ${settings.host}${request.endpoint} (sha256 ${requestSha256(request)})`);
  // Logged prompts and answers are in it: on a terminal their controls are escaped, as JSON allows.
  line(jsonTextFor(out)(JSON.stringify(request.body, null, 2)));
  text.flush();
}
