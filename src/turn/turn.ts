import type { Settings } from '../config/settings.js';
import { RuntimeError } from '../errors.js';
import type { LogEntry, Timings, TurnStatus } from '../log/entry.js';
// Loaded with the journal (log/unfinished.ts) anyway: the rescue needs no import that could fail.
import { serializeEntry } from '../log/entry.js';
import { CLI_HINTS, missingModelLine } from '../ollama/fix-hints.js';
import { EMPTY_METRICS } from '../ollama/transport.js';
import type { Logprob, Metrics, OllamaTransport, RetryReason, StreamOutcome } from '../ollama/transport.js';
import type { EstimableBody } from '../ollama/context-window.js';
import { rulesFingerprint } from '../replay/classify.js';
import { planTurn, policyForLog, textsNeeded } from '../replay/plan.js';
import type { PlanInput, ReplayPlan } from '../replay/plan.js';
import type { OllamaRequest } from '../replay/prompt.js';
import type { HistoryTurn, ReplayReason, ReplaySpec, TurnWords } from '../replay/types.js';
import type { SessionRecord } from '../sessions/store.js';
import { leadingThinking } from '../text/answer.js';
import type { ReplaySource } from '../sessions/turns.js';
import { randomUUID } from 'node:crypto';
import { access } from 'node:fs/promises';
import { ForeignFolderError, ForeignLinkError, NotAFolderError, NotRegularFileError, SymlinkRefusedError, UnwritableFileError, errnoOf, folderTrouble, isMissing, saveBeforeQuitting } from '../log/fs.js';
import { LockTimeoutError, loadLockLibrary } from '../log/lock.js';
import { DAY_PATTERN, TIMESTAMP_PATTERN } from '../log/timestamp.js';
import { recordPath } from '../sessions/names.js';
import type { ModelSource } from '../output/turn-notes.js';
import { QUEUED_ERROR, UNFINISHED_ERROR } from '../log/unfinished.js';
import type { UnfinishedTurn } from '../log/unfinished.js';
import { checkContext, requestFacts, windowFacts } from './request-facts.js';
import type { ContextCheck } from './request-facts.js';
import { journalTurn } from './journal.js';
import type { JournalEntry } from './journal.js';

/** What one turn asks: the user's words and how to replay the session before them. */
export interface TurnInput {
  prompt: string;
  /** Code points at the start of `prompt` that were typed, when piped text follows them (logged as typed_chars). */
  typedChars?: number;
  replay: ReplaySpec;
  reason?: ReplayReason;
  /** Write the turn to the log (false: --no-log). */
  log: boolean;
  /** Ask Ollama to stream its answer (false: one response at the end). */
  ollamaStream: boolean;
  /** Request body fields a caller adds to the built request (client tools, format, extra options). */
  body?: Record<string, unknown>;
  /** A plan made already (argo rerun's rebuilt request): sent as it is. */
  prepared?: PreparedTurn;
  /** The id of the turn this one reruns (logged as rerun_of). */
  rerunOf?: string;
}

/** The parts of the Ollama transport a turn uses. */
export type Transport = Pick<OllamaTransport, 'stream' | 'installedModels'> & Partial<Pick<OllamaTransport, 'modelNumCtx' | 'defaultNumCtx' | 'loadedNumCtx' | 'hints' | 'answeringModel' | 'modelCapabilities'>>;

/** What answering a planned request produced. */
export interface Answer {
  status: TurnStatus;
  response: string;
  /** A thinking model's reasoning before `response` ('' for none): logged, never replayed. */
  thinking?: string;
  failure: NonNullable<StreamOutcome['failure']> | null;
  /** Ollama's figures; an answer of several requests (an agent run) sums them. */
  metrics: Metrics;
  /**
   * The largest `prompt_eval_count` one request's final chunk reported: what the context window is
   * judged by, since Ollama cuts each request's prompt to the window by itself.
   */
  largestPromptEvalCount: number | null;
  firstTokenMs: number | null;
  /** Extra log fields the answer step adds (an agent run's tool calls, say). */
  fields?: Record<string, unknown>;
}

export interface AnswerContext {
  /** The id the turn will be logged under. */
  turnId: string;
  transport: Transport;
  clock: () => number;
  signal?: AbortSignal;
  /**
   * Pieces of the answer as they stream. With `logprobs: true` in the request (a server's client
   * asks), each comes with its tokens' log probabilities as the transport hands them over (StreamHooks).
   */
  onText: (text: string, logprobs?: readonly Logprob[]) => void;
  /** A thinking model's reasoning as it streams, before its answer (shown as progress; logged whole as `thinking`). */
  onThinking?: (text: string, logprobs?: readonly Logprob[]) => void;
  onRetry?: (attempt: number, delayMs: number, reason: RetryReason) => void;
  /** The model's tool calls, as Ollama sent them (client tools, passed through). */
  onToolCalls?: (calls: unknown[], logprobs?: readonly Logprob[]) => void;
  /** Log probabilities of tokens that came with nothing else (a tool call Ollama's parser holds back). */
  onLogprobs?: (logprobs: readonly Logprob[]) => void;
  /** Just before each request to the model: an agent run makes one per round. */
  onRequest?: () => void;
  /**
   * Checks a later request of the turn against the context window before it is sent, as the planned
   * one was (an agent run's requests grow with tool results): the user hears of the first one too long.
   */
  checkWindow?: (body: EstimableBody, signal?: AbortSignal) => Promise<void>;
  /**
   * Log fields the answer has settled so far (an agent run's rounds, after each one): the journal's
   * draft takes them, so a turn whose argo is killed is logged with what it did. Absent when the turn is not logged.
   */
  onProgress?: (fields: Record<string, unknown>) => void;
}

/** The answer step of a turn: one streamed answer by default; an agent run plugs in its loop. */
export type Answerer = (request: OllamaRequest, context: AnswerContext) => Promise<Answer>;

/** Everything a turn touches outside its input: the transport, clock, ids, signals and output hooks. */
export interface TurnPorts {
  transport: Transport;
  now: () => Date;
  /** Monotonic milliseconds, for durations. */
  clock: () => number;
  newId: () => string;
  signal?: AbortSignal;
  onText?: AnswerContext['onText'];
  onThinking?: AnswerContext['onThinking'];
  onRetry?: AnswerContext['onRetry'];
  onToolCalls?: AnswerContext['onToolCalls'];
  onLogprobs?: AnswerContext['onLogprobs'];
  /** Saves a turn the log could not take, privately under the data home `home` if it can; returns where. */
  rescue: (text: string, home: string) => Promise<string>;
  /** A one-line warning for the user (a prompt longer than the context window). */
  onNotice?: (line: string) => void;
  /** Hears that reading the session's history skipped unreadable log lines; without it, `onNotice` does. */
  onHistoryNotice?: (line: string) => void;
  /**
   * Hears, once per process, that turns cannot be kept in unfinished/ while they are answered (a
   * line to start with the program's name); without it, `onNotice` says it as argo's.
   */
  onJournalNotice?: (line: string) => void;
  /** The finished entry, just before it is written: a server can end its response without waiting for the disk. */
  onEntry?: (entry: LogEntry) => void;
  answer?: Answerer;
  /** Log fields the answer step knows before it runs (an agent run's tools): the draft has them too. */
  draftFields?: Record<string, unknown>;
  /** The turn's queuedDraft is in the journal (it waited in a queue): the turn's own draft replaces it. */
  journaled?: boolean;
  /**
   * When the turn was asked, if before it starts (a server's turn queued behind others on its
   * session): its timestamp, as its queuedDraft's, so turns keep the order they were asked in.
   */
  askedAt?: Date;
}

export interface PreparedTurn {
  session: SessionRecord | null;
  model: string;
  /** Where `model` came from: --model, the session's last model, ARGO_MODEL, config.json or the default. */
  modelSource: ModelSource;
  plan: ReplayPlan;
}

/**
 * The turn was answered, but the log could not take its line: it was saved aside to `savedTo` (the
 * data home's rescued/ folder, or a private temporary one), or, when null, not even that (its prompt
 * is kept for the next argo to log as interrupted, where it could be).
 */
export class UnloggedTurnError extends RuntimeError {
  override name = 'UnloggedTurnError';
  constructor(
    message: string,
    readonly savedTo: string | null,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface TurnResult extends PreparedTurn {
  entry: LogEntry;
  /** The failure in words for the user, null when the turn is ok or interrupted. */
  failure: string | null;
}

/** How a turn is prepared beside its input. */
export interface PrepareOptions {
  /** Hears the one line saying unreadable log lines were skipped reading the session's history. */
  onNotice?: (line: string) => void;
  /** Write nothing, not even a rebuilt index or the record's counters (--explain). */
  readOnly?: boolean;
  /** The model's capabilities as Ollama lists them (`/api/show`): whether config's `think` is sent to it. */
  capabilities?: (model: string, signal?: AbortSignal) => Promise<readonly string[]>;
  /** Ends a wait on Ollama's answers (Ctrl-C, a client gone). */
  signal?: AbortSignal;
  /** Plan as if the session had no history: its record is read, its log and index are not. */
  withoutHistory?: boolean;
}

/** Plans the turn: reads the session and its history, runs the replay pipeline. No model is called. */
export async function prepareTurn(settings: Settings, input: TurnInput, options: PrepareOptions = {}): Promise<PreparedTurn> {
  const session = await findSession(settings.paths.sessions, settings.session);
  const model = settings.modelFromFlag ? settings.model : (session?.last_model ?? settings.model);
  const modelSource: ModelSource = !settings.modelFromFlag && typeof session?.last_model === 'string' ? 'session' : settings.modelSource;
  const think = await thinkFor(settings, model, options.capabilities, options.signal);
  const planInput = (history: HistoryTurn[]): PlanInput => ({
      input: input.prompt,
      ...(input.typedChars !== undefined ? { typedChars: input.typedChars } : {}),
      spec: input.replay,
      ...(input.reason ? { reason: input.reason } : {}),
      history,
      policy: settings.replay,
      style: settings.style,
      mode: settings.mode,
      persona: settings.persona,
      verbosity: settings.verbosity,
      system: settings.system,
      request: {
        endpoint: settings.api,
        model,
        stream: input.ollamaStream,
        options: settings.options,
        ...(settings.keepAlive !== undefined ? { keepAlive: settings.keepAlive } : {}),
        ...(think !== undefined ? { think } : {}),
      },
    });
  let planned: ReplayPlan;
  if (session && input.replay.kind !== 'none' && options.withoutHistory !== true) {
    // The history reader is loaded only when there is history to replay: a plain question starts sooner.
    const { openReplaySource } = await import('../sessions/turns.js');
    const spec = input.replay;
    const open = (rebuild: boolean): Promise<ReplaySource> => openReplaySource(settings.paths, session, spec, settings.replay.classify, rebuild, { save: options.readOnly !== true });
    planned = await planWithHistory(open, planInput, session.name, options.onNotice);
  } else {
    planned = planTurn(planInput([]));
  }
  return { session, model, modelSource, plan: { ...planned, request: withCallerParts(planned.request, input) } };
}

/**
 * The `think` to send: config.json's only to a model that can think. Ollama refuses `true` or a level
 * from one that cannot, and config's is a default for every model. An Ollama that lists no
 * capabilities (too old), or that cannot be asked, is sent it: it answers for itself.
 */
async function thinkFor(settings: Settings, model: string, capabilities: PrepareOptions['capabilities'], signal: AbortSignal | undefined): Promise<Settings['think']> {
  const { think } = settings;
  if (think === undefined || think === false || settings.thinkFromConfig !== true || capabilities === undefined) return think;
  const listed = await capabilities(model, signal).catch((): readonly string[] => []);
  return listed.length > 0 && !listed.includes('thinking') ? undefined : think;
}

/**
 * The session's record, or null when there is none. The record codec (and zod with it) is loaded only
 * when there is a record to read: a question in a new session, or with --no-log, starts sooner.
 */
async function findSession(dir: string, name: string): Promise<SessionRecord | null> {
  // Once the codec is loaded (a server's every turn after its first), reading is the one check.
  if (readRecord === undefined) {
    try {
      await access(recordPath(dir, name));
    } catch (error) {
      if (isMissing(error)) return null;
    }
    readRecord = (await import('../sessions/store.js')).readSession;
  }
  return readRecord(dir, name);
}

let readRecord: ((dir: string, name: string) => Promise<SessionRecord | null>) | undefined;

/**
 * The replay core says which turns' words it needs; this reads them from the source and asks
 * again, until it can plan. A stale index (a line that is not the turn it names) is rebuilt once.
 * `onNotice` hears once if the source planned from skipped unreadable log lines.
 */
export async function planWithHistory(
  openSource: (rebuild: boolean) => Promise<ReplaySource>,
  planInput: (history: HistoryTurn[]) => PlanInput,
  sessionName: string,
  onNotice?: (line: string) => void,
): Promise<ReplayPlan> {
  for (const rebuild of [false, true]) {
    const source = await openSource(rebuild);
    try {
      // One history for every round, the words read filled in place: a long session is planned
      // several times over, and a copy of every turn per round is what its memory would go on.
      const history = [...source.turns];
      const input = planInput(history);
      for (;;) {
        const needed = textsNeeded(input);
        if (needed.length === 0) {
          const notice = source.skipped.notice();
          if (notice !== null) onNotice?.(notice.trimEnd());
          return planTurn(input);
        }
        const texts = source.read(needed);
        if (texts === null) break;
        withWords(history, texts);
      }
    } finally {
      source.close();
    }
  }
  throw new RuntimeError(`the log changed while reading session "${sessionName}"; try again`);
}

/** Puts the words read into their turns (a new object for each: the source's turns stay as they were). */
function withWords(history: HistoryTurn[], texts: ReadonlyMap<string, TurnWords>): void {
  for (let i = 0; i < history.length; i++) {
    const turn = history[i];
    const text = turn && texts.get(turn.id);
    if (turn && text) history[i] = { ...turn, ...text };
  }
}

/** Caller body fields (a client's own messages, tools, format), placed into the planned request. */
function withCallerParts(request: OllamaRequest, input: TurnInput): OllamaRequest {
  if (input.body === undefined) return request;
  if (request.endpoint !== '/api/chat') return { ...request, body: { ...request.body, ...input.body } };
  return { endpoint: '/api/chat', body: { ...request.body, ...input.body } };
}

/** One turn: plan the replay, answer, log one line. Never throws for a failed answer: the entry says how it ended. */
export async function runTurn(settings: Settings, input: TurnInput, ports: TurnPorts): Promise<TurnResult> {
  const capabilities = ports.transport.modelCapabilities?.bind(ports.transport);
  const onHistoryNotice = ports.onHistoryNotice ?? ports.onNotice;
  const prepared =
    input.prepared ??
    (await prepareTurn(settings, input, { ...(onHistoryNotice ? { onNotice: onHistoryNotice } : {}), ...(capabilities ? { capabilities } : {}), ...(ports.signal ? { signal: ports.signal } : {}) }));
  const { plan, model, session } = prepared;
  const context = await checkContext(settings, plan.request, ports.transport.modelNumCtx?.bind(ports.transport), {
    defaultNumCtx: ports.transport.defaultNumCtx?.bind(ports.transport),
    loadedNumCtx: ports.transport.loadedNumCtx?.bind(ports.transport),
    ...(ports.signal ? { signal: ports.signal } : {}),
    longerRequests: ports.draftFields?.tools !== undefined,
    fixes: { ...(ports.transport.hints ? { hints: ports.transport.hints } : {}), replayed: plan.replayedIds.length > 0 },
  });
  if (context.before !== null) ports.onNotice?.(context.before);
  // Needed only to log the turn: loaded while the answer streams.
  const stamps = dateStamps(ports.askedAt ?? ports.now());
  const started = ports.clock();
  const id = ports.newId();
  const drafted = stamps.then(({ timestamp }) => ({ ...draftEntry(settings, input, prepared, context, id, timestamp), ...ports.draftFields }));
  const rules = rulesFingerprint(settings.replay.classify);
  // Kept from the start of the answer on, so a kill before the turn is logged does not lose it.
  const planned = { id: session?.id ?? null, name: settings.session };
  const onJournalNotice = ports.onJournalNotice ?? ((line: string) => ports.onNotice?.(`argo: ${line}`));
  const journal = input.log ? journalTurn(settings.home, Promise.all([drafted, stamps]).then(([entry, { day }]) => ({ day, session: planned, rules, entry })), onJournalNotice, ports.journaled === true) : null;
  let logging = false;
  let answered: LogEntry | null = null;
  // The answer as it streams, for a quit at once (a second Ctrl-C) before the turn is logged: the
  // journal's draft takes it synchronously, so the next argo logs what was on the screen. An agent
  // run's is its latest round's, as its log line's model_response is (the progress has the others).
  const streamed = { response: '', thinking: '', afterRound: false };
  const onProgress = journal
    ? (fields: Record<string, unknown>): void => {
        journal.update(fields);
        Object.assign(streamed, { response: '', thinking: '', afterRound: true });
      }
    : null;
  const unregister = journal
    ? saveBeforeQuitting((signal) => {
        journal.saveNow(answered ?? quitFields(streamed, ports.signal, signal, Math.round(ports.clock() - started)));
      })
    : () => undefined;
  try {
    const answer = await (ports.answer ?? streamAnswer)(plan.request, {
      turnId: id,
      transport: ports.transport,
      clock: ports.clock,
      onText: (text, logprobs) => {
        streamed.response += text;
        ports.onText?.(text, logprobs);
      },
      ...(ports.signal ? { signal: ports.signal } : {}),
      // A request is repeated only before any text: reasoning streamed by the failed one is not the answer's.
      onRetry: (attempt, delayMs, reason) => {
        streamed.thinking = '';
        ports.onRetry?.(attempt, delayMs, reason);
      },
      onThinking: (text, logprobs) => {
        streamed.thinking += text;
        ports.onThinking?.(text, logprobs);
      },
      ...(ports.onToolCalls ? { onToolCalls: ports.onToolCalls } : {}),
      ...(ports.onLogprobs ? { onLogprobs: ports.onLogprobs } : {}),
      checkWindow: async (body, signal) => {
        const line = await context.later(body, signal);
        if (line !== null) ports.onNotice?.(line);
      },
      ...(onProgress ? { onProgress } : {}),
    });
    const window = await context.after(answer.largestPromptEvalCount);
    if (window.line !== null) ports.onNotice?.(window.line);
    const failure = answer.failure?.kind === 'model-missing' ? await modelMissing(ports.transport, model, settings.host, ports.signal) : (answer.failure?.message ?? null);
    const { day } = await stamps;
    const { response, thinking } = answerParts(answer);
    // The draft, completed by the answer: one set of fields for both.
    const entry: LogEntry = {
      ...(await drafted),
      status: answer.status,
      model_response: response,
      ...(thinking ? { thinking } : {}),
      timings: timingsOf(answer.metrics, answer.firstTokenMs, Math.round(ports.clock() - started)),
      done_reason: answer.metrics.done_reason,
      // The caller may abort with a reason in words (a signal, a closed output); Ctrl-C is the default.
      error: failure ?? (answer.status === 'interrupted' ? cutReason(ports.signal) : null),
      ...windowFacts(window),
      ...answer.fields,
    };
    answered = entry;
    ports.onEntry?.(entry);
    if (input.log) {
      logging = true;
      // Written before the line, so removing it below never races its creation.
      await journal?.written;
      await writeOrRescue(settings, session, entry, day, rules, ports, journal);
    }
    return { ...prepared, entry, failure };
  } catch (error) {
    // Thrown before the turn reached the log: the turn is logged anyway before the caller reports
    // it, as answered when only a hook after the answer threw, else as a fault in answering.
    // The answer's progress (an agent run's rounds so far), as the journal has it: a turn whose
    // answering throws is logged with what it did, as one whose argo is killed is.
    if (input.log && !logging) await logUnanswered(settings, session, answered, journal?.progress() ?? null, Promise.all([drafted, stamps]), Math.round(ports.clock() - started), rules, ports, journal);
    throw error;
  } finally {
    unregister();
    // Logged, rescued, or failed before it could be (an error the caller reports): either way the
    // journal no longer speaks for it, unless it was kept as the turn's only copy.
    await journal?.remove();
  }
}

/**
 * The draft of a turn that waits in a queue (a server's job), for the journal until its turn comes:
 * its prompt, session and the client's request, planned without the session's history (never read:
 * a job is accepted at once, however long its session) and without asking Ollama anything. A server
 * killed meanwhile leaves it for the next argo to log, its error saying the model was never asked;
 * `askedAt` is its timestamp, and its run's own draft keeps it.
 */
export async function queuedDraft(settings: Settings, input: TurnInput, id: string, askedAt: Date, draftFields?: Record<string, unknown>): Promise<Omit<UnfinishedTurn, 'owner'>> {
  const prepared = await prepareTurn(settings, input, { readOnly: true, withoutHistory: true });
  const context = await checkContext(settings, prepared.plan.request, undefined);
  const { timestamp, day } = await dateStamps(askedAt);
  // No request was sent yet, and this one, planned without history, may never be: it has no hash to prove.
  const entry: LogEntry = { ...draftEntry(settings, input, prepared, context, id, timestamp), ...draftFields, request_sha256: undefined, error: QUEUED_ERROR };
  return { day, session: { id: prepared.session?.id ?? null, name: settings.session }, rules: rulesFingerprint(settings.replay.classify), entry };
}

/**
 * The draft's fields when argo quits at once on `quitSignal` (a second Ctrl-C) before the turn is
 * logged: the answer as far as it had streamed, and why it went no further. Its status stays the
 * draft's, interrupted.
 */
export function quitFields(streamed: { response: string; thinking: string; afterRound?: boolean }, signal: AbortSignal | undefined, quitSignal: string, totalMs: number): Partial<LogEntry> {
  // A later round's words begin with the paragraph break the screen put between rounds.
  const { response, thinking } = answerParts(streamed.afterRound === true ? { ...streamed, response: streamed.response.replace(/^\n+/, '') } : streamed);
  const cut = signal?.aborted === true ? cutReason(signal) : 'interrupted';
  // The first signal may have been another (SIGTERM, then Ctrl-C): only the one that quit is named.
  const how = quitSignal === 'SIGINT' ? 'a second Ctrl-C' : quitSignal;
  return {
    model_response: response,
    ...(thinking ? { thinking } : {}),
    timings: timingsOf(EMPTY_METRICS, null, totalMs),
    error: `${cut}; argo then quit at once (${how}) before it could log the turn`,
  };
}

/** Why an interrupted turn ended, as logged: the caller's reason in words (a signal, a closed output), or Ctrl-C's. */
function cutReason(signal: AbortSignal | undefined): string {
  return typeof signal?.reason === 'string' ? signal.reason : 'interrupted by the user';
}

/** What the log says of a turn whose answering threw: not the thrown text, which may hold anything (the caller shows it where Argo runs). */
export const UNANSWERED_ERROR = 'argo failed while answering (an unexpected failure; argo or argo serve said what on standard error)';

/** An agent run's stop reason when its answering threw: an unexpected failure of Argo's own. */
export const UNANSWERED_STOP_REASON = 'unexpected_failure';

/**
 * Logs a turn that threw before it was logged: `answered` when the answer was complete (a hook after
 * it threw), else its draft as an error (interrupted, when the throw came from a cancelled answer),
 * with the answer's latest `progress` over it: an agent run keeps the calls, iterations and rounds
 * it had made, the calls that ran (files written, commands run) above all.
 * Best effort, as the thrown error is what the caller reports: when neither the log nor the rescue
 * takes the line, the journal's draft is kept for the next argo to log.
 */
async function logUnanswered(
  settings: Settings,
  session: SessionRecord | null,
  answered: LogEntry | null,
  progress: Record<string, unknown> | null,
  draft: Promise<[LogEntry, { day: string }]>,
  totalMs: number,
  rules: string,
  ports: TurnPorts,
  journal: JournalEntry | null,
): Promise<void> {
  try {
    const [drafted, { day }] = await draft;
    const cut = ports.signal?.aborted === true;
    // An agent run (its draft names its tools) says how it ended, its rounds so far or none: the
    // progress says "interrupted", as for a killed argo, and a throw that was no cut says what it was.
    const agentRun = Array.isArray(drafted.tools) || (progress !== null && 'stop_reason' in progress);
    const ran = progress ?? (agentRun ? { tool_calls: [], iterations: 0 } : {});
    const stopReason = agentRun && !cut ? { stop_reason: UNANSWERED_STOP_REASON } : {};
    const entry: LogEntry = answered ?? { ...drafted, ...ran, ...stopReason, status: cut ? 'interrupted' : 'error', timings: timingsOf(EMPTY_METRICS, null, totalMs), error: cut ? cutReason(ports.signal) : UNANSWERED_ERROR };
    await journal?.written;
    await writeOrRescue(settings, session, entry, day, rules, ports, journal);
  } catch {
    await journal?.written;
    journal?.keep();
  }
}

/**
 * The answer's words and its reasoning. Reasoning the model wrote inline ahead of its answer (an
 * Ollama that gave it no field of its own) is split off, so it is logged as `thinking`, never replayed.
 */
function answerParts(answer: Pick<Answer, 'response' | 'thinking'>): { response: string; thinking: string } {
  const inline = answer.thinking ? null : leadingThinking(answer.response);
  return inline ? { response: inline.answer, thinking: inline.thinking } : { response: answer.response, thinking: answer.thinking ?? '' };
}

/**
 * The turn's log line as it stands before the answer: what the journal keeps while the answer
 * streams (a turn whose argo is killed is logged as this), and what the answer's fields complete.
 */
function draftEntry(settings: Settings, input: TurnInput, { plan, model, session }: PreparedTurn, context: ContextCheck, id: string, timestamp: string): LogEntry {
  return {
    id,
    timestamp,
    session: settings.session,
    session_id: session?.id ?? '',
    status: 'interrupted',
    entry_type: plan.entryType,
    model,
    endpoint: settings.api,
    active_mode: settings.mode,
    persona: settings.persona,
    verbosity: plan.verbosity,
    replay: {
      enabled: input.replay.kind !== 'none',
      count: input.replay.kind === 'last' ? input.replay.count : null,
      session: input.replay.kind === 'session',
    },
    user_prompt: input.prompt,
    ...(input.typedChars !== undefined ? { typed_chars: input.typedChars } : {}),
    model_response: '',
    replay_policy: policyForLog(plan.replayPolicy),
    replayed_ids: plan.replayedIds,
    timings: timingsOf(EMPTY_METRICS, null, 0),
    done_reason: null,
    error: UNFINISHED_ERROR,
    // The window as known before the answer; the answer's verdict replaces it.
    ...requestFacts(settings, plan.request, { window: context.window, estimate: context.estimate, suspected: false }, input.rerunOf),
  };
}

/** The default answer step: one request, streamed through `onText`, retried only before any text. */
export const streamAnswer: Answerer = async (request, context) => {
  const started = context.clock();
  let firstTokenMs: number | null = null;
  let response = '';
  let thinking = '';
  const outcome = await context.transport.stream(request, {
    ...(context.signal ? { signal: context.signal } : {}),
    // A request is repeated only before any text: reasoning streamed by the failed one is not the answer's.
    onRetry: (attempt, delayMs, kind) => {
      thinking = '';
      context.onRetry?.(attempt, delayMs, kind);
    },
    ...(context.onToolCalls ? { onToolCalls: context.onToolCalls } : {}),
    onThinking: (text, logprobs) => {
      thinking += text;
      context.onThinking?.(text, logprobs);
    },
    ...(context.onLogprobs ? { onLogprobs: context.onLogprobs } : {}),
    onText: (text, logprobs) => {
      firstTokenMs ??= Math.round(context.clock() - started);
      response += text;
      context.onText(text, logprobs);
    },
  });
  return { status: outcome.status, response, thinking, failure: outcome.failure, metrics: outcome.metrics, largestPromptEvalCount: outcome.metrics.prompt_eval_count, firstTokenMs };
};

/**
 * Loads now what a turn otherwise loads when it first needs it: the session stores, the history
 * reader, the date format, the lock library. Node keeps an import() that failed failed for the life
 * of the process, so a server whose first turns meet a moment without file descriptors (EMFILE)
 * could log no turn after them: `argo serve` calls this as it starts.
 */
export async function loadTurnModules(): Promise<void> {
  await Promise.all([
    import('../sessions/turns.js'),
    import('../sessions/store.js'),
    import('../sessions/record-turn.js'),
    import('date-fns/format'),
    loadLockLibrary(),
  ]);
}

/** The log's two date forms: ISO 8601 local time with offset, and the daily file's local date. */
async function dateStamps(date: Date): Promise<{ timestamp: string; day: string }> {
  const { format } = await import('date-fns/format');
  return { timestamp: format(date, TIMESTAMP_PATTERN), day: format(date, DAY_PATTERN) };
}

/** The first error in `error`'s cause chain (itself included) that `is` accepts: the log writer wraps what failed. */
function causeIn<T extends Error>(error: unknown, is: (cause: Error) => cause is T): T | null {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (is(cause)) return cause;
  }
  return null;
}

/** What a failed write of a turn was writing: its folder, what goes there, and the way back for the saved turn. */
interface WriteTarget {
  dir: string;
  /** "the day's log", "the session's record": what a folder or a pipe in the way took the place of. */
  place: string;
  addBack: string;
}

/**
 * What went wrong with a write of the turn, and what to do about it, by its cause: a planted link, a
 * folder or a named pipe in the file's place, a file whose own mode refuses us, another user's
 * folder, a lock held too long, or the disk. The saved turn goes back in every case. `dirTrouble`:
 * why `dir` is no folder (folderTrouble), when the error itself does not say it.
 */
function writeTrouble(error: unknown, { dir, place, addBack }: WriteTarget, dirTrouble: string | null = null): { what: string; fix: string } {
  const link = causeIn(error, (cause): cause is SymlinkRefusedError => cause instanceof SymlinkRefusedError);
  // Its own words say whose it is and what to do: the link is not the user's to replace.
  if (link instanceof ForeignLinkError) return { what: `: ${link.message}`, fix: `mend that, ${addBack}` };
  if (link !== null) return { what: `: ${link.path} is a symbolic link, and Argo does not follow links in its data home`, fix: `replace the link with the real file, ${addBack}` };
  const notFile = causeIn(error, (cause): cause is NotRegularFileError => cause instanceof NotRegularFileError);
  if (notFile !== null) return { what: `: ${notFile.path} is ${notFile.kind} where ${place} goes`, fix: `move it away, ${addBack}` };
  // logs/ out of reach (a link to a disk not mounted, a file): its own line says what it is and what to do.
  const folder = causeIn(error, (cause): cause is NotAFolderError => cause instanceof NotAFolderError)?.message ?? dirTrouble;
  if (folder !== null) return { what: `: ${folder}`, fix: `mend that, ${addBack}` };
  // The file is there and its own mode or owner refuses us: its folder is not what to fix.
  const file = causeIn(error, (cause): cause is UnwritableFileError => cause instanceof UnwritableFileError);
  if (file !== null) return { what: `: ${file.path} cannot be written (${file.problem})`, fix: `${file.fix}, ${addBack}` };
  const what = ` in ${dir} (${error instanceof Error ? error.message : String(error)})`;
  if (causeIn(error, (cause): cause is LockTimeoutError => cause instanceof LockTimeoutError)) return { what, fix: `wait until the other argo is done, ${addBack}` };
  const code = (codes: readonly string[]): boolean => causeIn(error, (cause): cause is Error => codes.includes(errnoOf(cause) ?? '')) !== null;
  if (code(['ENOSPC', 'EDQUOT'])) return { what, fix: `free some space on its disk (df -h ${dir} shows it), ${addBack}` };
  if (code(['EROFS'])) return { what, fix: `its file system is read-only: make it writable or set ARGO_HOME to a folder on one, ${addBack}` };
  if (code(['EMFILE', 'ENFILE'])) return { what, fix: `raise the limit on open files (ulimit -n), ${addBack}` };
  // Another user's folder (or root, run in a user's data home): taking it over with chown would
  // lock its owner out, so the fix is running as that user, or a data home of one's own.
  if (causeIn(error, (cause): cause is ForeignFolderError => cause instanceof ForeignFolderError) !== null) return { what, fix: `run argo as the user who owns it, or set ARGO_HOME to a folder of your own, ${addBack}` };
  if (code(['EACCES', 'EPERM'])) return { what, fix: `fix the folder's permissions or set ARGO_HOME to a folder you can write, ${addBack}` };
  return { what, fix: `fix the directory's permissions or free space, ${addBack}` };
}

/**
 * The turn is the user's words: if the log cannot take it, keep it somewhere and say where. When
 * the rescue fails too, the journal's draft is kept: its prompt and settings, for the next argo to
 * log. The session is the one the turn was planned on (by id), so a rename or removal meanwhile
 * never brings its old name back; a session that did not exist yet is created now, under an id
 * chosen first, so a turn saved because its record could not be made still carries its session.
 */
async function writeOrRescue(
  settings: Settings,
  planned: SessionRecord | null,
  entry: LogEntry,
  day: string,
  rules: string,
  ports: TurnPorts,
  journal: JournalEntry | null,
): Promise<void> {
  // Loaded inside the try: a module that cannot be loaded now (no file descriptor left) is one more
  // reason the log cannot take the turn, and the rescue, which needs no module loaded, still can.
  const stores = Promise.all([import('../sessions/record-turn.js'), import('../sessions/store.js')]);
  if (planned === null) entry.session_id = randomUUID();
  let recorded = planned !== null;
  try {
    const [{ recordTurn }, { openSession }] = await stores;
    const session = planned ?? (await openSession(settings.paths.sessions, settings.session, entry.timestamp, entry.session_id));
    recorded = true;
    // Another argo may have made the record first: its id is the session's.
    entry.session_id = session.id;
    await recordTurn(settings.paths, session, entry, day, rules, { lockWaitMs: settings.timeouts.lockWaitMs });
  } catch (error) {
    // Logged, only the session's bookkeeping failed: saving the turn again would duplicate it.
    const loaded = await stores.catch(() => null);
    if (loaded !== null && error instanceof loaded[0].SessionUpdateError) throw error;
    let saved: string;
    let savedTo: string | null = null;
    try {
      savedTo = await ports.rescue(`${serializeEntry(entry)}\n`, settings.home);
      saved = `the turn was saved to ${savedTo}`;
    } catch (rescueError) {
      saved = `the turn could not be saved either (${rescueError instanceof Error ? rescueError.message : String(rescueError)})`;
      const kept = journal?.keep() ?? null;
      if (kept !== null) saved += `; its prompt and settings, not its answer, are still in ${kept}, which the next argo logs as interrupted once this one has ended`;
    }
    // A file where the folder goes is its cause, whatever the failure said of it.
    const dir = recorded ? settings.paths.logs : settings.paths.sessions;
    const dirTrouble = await folderTrouble(dir).catch(() => null);
    if (recorded) {
      const { what, fix } = writeTrouble(error, { dir, place: "the day's log", addBack: 'then add the saved turn back (docs/troubleshooting.md)' }, dirTrouble);
      throw new UnloggedTurnError(`cannot write the log${what}; ${saved} — ${fix}`, savedTo, { cause: error });
    }
    // The turn started the session: without its record, the turn added back would be a removed session's.
    const addBack = "then make the session's record and add the saved turn back (docs/troubleshooting.md)";
    const { what, fix } = writeTrouble(error, { dir, place: "the session's record", addBack }, dirTrouble);
    throw new UnloggedTurnError(`cannot create session "${settings.session}"${what}; ${saved} — ${fix}`, savedTo, { cause: error });
  }
}

async function modelMissing(transport: Transport, model: string, host: string, signal: AbortSignal | undefined): Promise<string> {
  const installed = await transport.installedModels(signal).catch(() => null);
  const suggested = installed === null ? undefined : transport.answeringModel ? await transport.answeringModel(installed, signal) : installed[0];
  return missingModelLine(model, host, installed, transport.hints ?? CLI_HINTS, suggested);
}

function timingsOf(metrics: Metrics, firstTokenMs: number | null, totalMs: number): Timings {
  return {
    first_token_ms: firstTokenMs,
    total_ms: totalMs,
    total_duration_ns: metrics.total_duration,
    load_duration_ns: metrics.load_duration,
    prompt_eval_count: metrics.prompt_eval_count,
    prompt_eval_duration_ns: metrics.prompt_eval_duration,
    eval_count: metrics.eval_count,
    eval_duration_ns: metrics.eval_duration,
  };
}
