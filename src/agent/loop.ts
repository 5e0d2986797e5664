// The agent loop (contract §3–§6): ask the model with tools, check its calls, run the valid ones
// in parallel, classify the outcomes, compact, and go round until it answers in words or a rule
// stops it. Everything outside the loop's own rules is injected, so the CLI and the server share it.
import { EMPTY_METRICS } from '../ollama/transport.js';
import type { AgentChatMessage, Metrics, StreamOutcome, TransportRequest, WireToolCall } from '../ollama/transport.js';
import type { ChatBody } from '../replay/prompt.js';
import type { Memo } from '../tools/memo.js';
import { asksFirst, isOverBudget, wholeResultOf } from '../tools/types.js';
import type { Tool, ToolContext } from '../tools/types.js';
import { isEmptyAnswer, paragraphBreak } from '../text/answer.js';
import { checkCall, isCutToolCall, judgeResponse, readToolCalls } from './calls.js';
import type { CheckedCall, ResponseVerdict } from './calls.js';
import { DEFAULT_RESULT_BUDGET, summarizeOlder, summaryOf, truncatedResult } from './compaction.js';
import type { CompactionRecord, ResultMessage } from './compaction.js';
import type { RoundMessage } from '../log/entry-schema.js';
import type { ToolCallOutcome } from '../log/entry-words.js';
import { buildAgentRequest } from './request.js';
import { ONE_LINE_MAX, classifyResult, classifyThrown, parameterNames } from './taxonomy.js';
import { plural } from '../output/count.js';
import { cleanLine } from '../output/terminal-text.js';
import { ArgoError, messageLine } from '../errors.js';
import type { CallOutcome } from './taxonomy.js';
import type { Unconfirmed } from '../turn/error-code.js';

export const DEFAULT_MAX_ITERATIONS = 10;
export const MAX_REASKS = 3;
/** The re-ask reason for a response with neither calls nor words. */
const EMPTY_ANSWER = 'no answer: the response was empty, or only reasoning';
const SPENT_ON_REASONING = 'the model reached its token limit before answering (a thinking model reasons first); raise num_predict, or ask for less reasoning (think)';
/** The same without reasoning: a tagged model's call the limit cut is dropped by Ollama, leaving nothing. */
const LIMIT_BEFORE_ANSWER = 'the model reached its token limit before answering (it may have been cut while writing a tool call); raise num_predict';
const CUT_TOOL_CALL = 'the model reached its token limit in the middle of a tool call (Ollama passed the unfinished call on as text); raise num_predict';
export const MAX_ALL_FAILURE_ROUNDS = 3;
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;
export const REASK_DELAY_MS = 100;
/** A call still running when the run was cut (Ctrl-C, STOP, a client gone): a failure, as a command killed then says. */
const CUT_CALL: CallOutcome = { kind: 'failure', message: 'the call was interrupted', retryable: false, detail: null };

/** Why a call is logged `not_run` (its `error`): every call the model sent is logged, run or not. */
const NOT_RUN = {
  duplicate: 'not run: an earlier call of the response has the same id',
  besideInvalid: 'not run: another call of the response was invalid',
  besideMissing: 'not run: another call of the response lacks a required parameter',
  stopped: 'not run: the STOP signal ended the run first',
  interrupted: 'not run: the run was interrupted first',
  modelFailed: 'not run: the model request failed before the response ended',
  notSaved: 'not run: an earlier result could not be saved',
} as const;

export const AGENT_STATUSES = ['ok', 'stopped', 'needs_input', 'tool_failures', 'max_iterations', 'invalid_response', 'interrupted', 'error'] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

/** Why the loop ended, for the log and for scripts. */
export type StopReason =
  | 'answered'
  | 'stop_signal'
  | 'required_parameter'
  | 'all_failure_rounds'
  | 'permanent_failure'
  | 'max_iterations'
  | 'invalid_response'
  | 'interrupted'
  | 'model_error'
  | 'result_not_saved'
  | 'memo_unreadable';

/** One call as logged (`tool_calls`). `result` is what the model was sent, for trajectories. */
export interface CallRecord {
  id: string;
  name: string;
  arguments: Record<string, unknown> | string | null;
  outcome: ToolCallOutcome;
  round: number;
  /** Which response of its round the call came from, when re-asks made it a later one (2 to 4). */
  attempt?: number;
  ms: number;
  result_chars: number;
  result?: string;
  saved_as?: string;
  error?: string;
  /** Raw exception text, for diagnosis: only in the private log, never shown. */
  error_detail?: string;
}

export type ConfirmAnswer = 'yes' | 'no' | 'no-terminal';

export interface ConfirmRequest {
  id: string;
  tool: string;
  args: Record<string, unknown>;
  /** The command or the diff. */
  preview: string;
}

export type AgentEvent =
  | { type: 'text'; text: string }
  // `args` as logged (an object, or the raw string when unreadable): the CLI's trace shows them; a server's client is not sent them.
  | { type: 'tool_status'; id: string; name: string; status: 'running' | 'success' | 'failure' | 'needs_input'; ms?: number; args: CallRecord['arguments'] }
  | { type: 'tool_execution_error'; id: string; name: string; message: string }
  | { type: 'needs_input'; id: string; name: string; parameter: string }
  | { type: 'reask'; attempt: number; of: number; reason: string }
  | { type: 'compacted'; records: CompactionRecord[] };

/** What a model call returns: the transport's outcome. */
export type ModelCall = (
  request: TransportRequest,
  hooks: { onText: (text: string) => void; onThinking: (text: string) => void; onChunk: () => void; signal: AbortSignal },
) => Promise<StreamOutcome>;

export interface AgentDeps {
  model: ModelCall;
  /** Monotonic milliseconds. */
  clock: () => number;
  /**
   * Checks each request against the context window before it is sent: the turn checked the planned
   * prompt, without the tool definitions, memo and ephemeral system prompt the first request adds,
   * and later ones grow with tool results. Compaction has run by then, so what is checked is what is sent.
   */
  checkWindow?: (request: TransportRequest, signal: AbortSignal) => Promise<void>;
  /** True while the STOP signal is set (checked before each request and tool round, and on every chunk). */
  isStopped: () => boolean;
  /** Whether `signal` was aborted by a STOP (a server aborts its runs on one); else it was Ctrl-C or a client gone. */
  abortedByStop?: (reason: unknown) => boolean;
  /** Asks about one side-effecting call; `signal` aborts on Ctrl-C (then the answer is "no"). */
  confirm: (request: ConfirmRequest, signal: AbortSignal) => Promise<ConfirmAnswer>;
  emit: (event: AgentEvent) => void;
  /** Read before each request; a failure (memo.json broken by hand mid-run) ends the run as `memo_unreadable`. */
  readMemo: () => Promise<Memo>;
  /**
   * Where a result past its budget is saved, relative to the data home; asked only for such a
   * result. Null when results are not kept (an unlogged turn): the model gets the head and is told so.
   */
  resultPath: ((callId: string, round: number) => Promise<string>) | null;
  /**
   * Saves a result past its budget whole at `path`. The loop does not wait for it before the next
   * model request (a durable write must not hold up the round); it does before the next tool round
   * and before the run ends, and a failed save then fails the run as it would have at once.
   */
  saveResult: (path: string, content: string) => Promise<void>;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Hears the run as it stands after each tool round it goes on from, as it would end if cut there
   * (`interrupted`): what a turn's draft keeps, so a run whose process is killed is logged with the
   * calls it made. Results still to be saved are told as cut, not as saved.
   */
  onRound?: (progress: AgentResult) => void;
  /** Ctrl-C (or a client going away): ends the run as interrupted. */
  signal: AbortSignal;
}

export interface AgentRun {
  /** The turn's planned chat request (system, replayed turns, the user's input). */
  base: ChatBody;
  tools: readonly Tool[];
  /** `commandEnv`: what commands run with (a call's `env`), asked once, when the run's first call is made. */
  context: Pick<ToolContext, 'root' | 'home'> & { commandEnv?: () => NodeJS.ProcessEnv };
  maxIterations: number;
  ephemeralSystem: string | null;
  /** Confirmations are answered yes without asking. */
  yes?: boolean;
  defaultBudget?: number;
  defaultTimeoutMs?: number;
  reaskDelayMs?: number;
  /** How end messages name what the user changes; the CLI's when absent. */
  hints?: RunHints;
}

/** What a run's end messages tell the user to do: the CLI's user runs commands, a server's client cannot. */
export interface RunHints {
  /** After STOP: how runs are allowed again. */
  clearStop: string;
  /** After max_iterations: how more rounds are allowed. */
  moreRounds: string;
  /** After a permanent failure: where the calls' errors are. */
  failedCall: string;
  /** After three all-failure rounds: where the calls' errors are. */
  failedRounds: string;
}

export const CLI_RUN_HINTS: RunHints = {
  clearStop: 'run "argo stop --clear" to allow runs again',
  moreRounds: 'raise --max-iterations',
  failedCall: 'see argo logs --status tool_failures',
  failedRounds: 'see the lines above',
};

/** A run not logged (--no-log) has no log line to point to. */
export const CLI_UNLOGGED_RUN_HINTS: RunHints = { ...CLI_RUN_HINTS, failedCall: 'fix the cause and ask again' };

export interface AgentResult {
  status: AgentStatus;
  stopReason: StopReason;
  /** One line for the user: why it stopped and what to do; null when answered. */
  message: string | null;
  /** The final answer, or the partial text when stopped mid-answer. */
  text: string;
  /** The reasoning of the response `text` is from ('' for none). */
  thinking: string;
  /** The words and reasoning of each round whose calls ran (all failed or not), when it had any. */
  roundMessages: RoundMessage[];
  calls: CallRecord[];
  iterations: number;
  allFailureRounds: number;
  compacted: CompactionRecord[];
  /** Model requests made (re-asks included). */
  requests: number;
  firstTextMs: number | null;
  /** Ollama's counts and durations summed over every request. */
  metrics: Metrics;
  /** The largest prompt_eval_count of one request: the context window is judged request by request. */
  largestPromptEvalCount: number | null;
  /** The conversation as it stands (the messages the loop added), for a server to keep. */
  added: AgentChatMessage[];
  /** The transport's failure when status is `error` (the CLI names a missing model from it). */
  modelFailure: StreamOutcome['failure'];
  /** The run's first request, as built and sent; null when none was (a STOP set before it). */
  firstRequest: TransportRequest | null;
  /** Set when the permanent failure that ended the run (`tool_failures`) was a call not confirmed. */
  unconfirmed: Unconfirmed | null;
}

function addMetrics(a: Metrics, b: Metrics): Metrics {
  const sum = (x: number | null, y: number | null): number | null => (x === null ? y : y === null ? x : x + y);
  return {
    total_duration: sum(a.total_duration, b.total_duration),
    load_duration: sum(a.load_duration, b.load_duration),
    prompt_eval_count: sum(a.prompt_eval_count, b.prompt_eval_count),
    prompt_eval_duration: sum(a.prompt_eval_duration, b.prompt_eval_duration),
    eval_count: sum(a.eval_count, b.eval_count),
    eval_duration: sum(a.eval_duration, b.eval_duration),
    // The last response's: one cut short (an error mid-answer) has none, whatever rounds before it said.
    done_reason: b.done_reason,
  };
}

function largerCount(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.max(a, b);
}

/** What the model said in one response: its words and, for a thinking model, its reasoning. */
interface Said {
  text: string;
  thinking: string;
}

/** One response as it came: what was said, the calls, and whether the token limit (num_predict) ended it. */
interface Reply extends Said {
  toolCalls: unknown[];
  atLimit: boolean;
  /** Its text came whole in the final chunk: held back by Ollama's tool parser, not streamed. */
  heldToEnd: boolean;
}

/** A response whose calls all check out, ready to run. */
interface Runnable extends Said {
  calls: Extract<CheckedCall, { kind: 'ok' }>[];
  /** Every call of the response in order, duplicates included (they are logged, never run). */
  checked: CheckedCall[];
  /** Which response of its round it is: 1, or 2 to 4 after re-asks. */
  attempt: number;
}

/** Where a call is logged: its round, and which response of the round. */
interface CallPlace {
  round: number;
  attempt: number;
}

interface SaveFailure {
  path: string;
  error: unknown;
}

class Run {
  private iterations = 0;
  private allFailureRounds = 0;
  private rounds = 0;
  private requests = 0;
  private firstTextMs: number | null = null;
  /** The end of the text shown so far, across responses. */
  private shown = '';
  private metrics = EMPTY_METRICS;
  private largestPromptEvalCount: number | null = null;
  private modelFailure: StreamOutcome['failure'] = null;
  private firstRequest: TransportRequest | null = null;
  private unconfirmed: Unconfirmed | null = null;
  private readonly calls: CallRecord[] = [];
  private readonly compacted: CompactionRecord[] = [];
  private readonly roundMessages: RoundMessage[] = [];
  /** The reasoning of the response being answered or ended with. */
  private thinking = '';
  private readonly added: AgentChatMessage[] = [];
  private readonly results: ResultMessage[] = [];
  /** Results to save, started once the next request is built (their writes would hold up its memo read). */
  private unsaved: { path: string; content: string }[] = [];
  /** Saves under way: each settles to its failure or null, so none is left unhandled while the model answers. */
  private saving: Promise<SaveFailure | null>[] = [];
  /** The words of the newest round that went on to tools: what a run cut now logs as its answer. */
  private said = '';
  private readonly toolsByName: Map<string, Tool>;
  /** The commands' environment, once a call has needed it. */
  private commandEnv: NodeJS.ProcessEnv | undefined;
  private readonly started: number;

  constructor(
    private readonly run: AgentRun,
    private readonly deps: AgentDeps,
  ) {
    this.toolsByName = new Map(run.tools.map((tool) => [tool.name, tool]));
    this.started = deps.clock();
  }

  async execute(): Promise<AgentResult> {
    let result: AgentResult;
    try {
      result = await this.iterate();
    } catch (error) {
      await this.savesWritten();
      throw error;
    }
    // Every result the model was told is saved is on disk before the run ends and the turn is logged.
    const unsaved = await this.savesWritten();
    // A run that already failed (the model) keeps its own reason.
    return unsaved === null || result.status === 'error' ? result : this.notSaved(unsaved, result.text);
  }

  private async iterate(): Promise<AgentResult> {
    // The words of the last round's response, as shown: what a run that ends without an answer logs.
    let said = '';
    while (this.iterations < this.run.maxIterations) {
      const response = await this.validResponse(said);
      if ('status' in response) return response;
      if (this.deps.isStopped()) {
        this.recordUnrun(response, NOT_RUN.stopped);
        return this.end('stopped', 'stop_signal', response.text);
      }
      const ended = await this.toolRound(response);
      if (ended) return ended;
      said = response.text;
      this.said = said;
      this.deps.onRound?.(this.progress(said));
    }
    return this.end('max_iterations', 'max_iterations', said, this.tooManyRounds());
  }

  /** Why the run stopped at max_iterations, in rounds that ran: a round without a success does not count toward the limit. */
  private tooManyRounds(): string {
    const ran = plural(this.rounds, 'tool round');
    const rounds = this.rounds === this.iterations ? ran : `${ran}, ${this.iterations} of them with a successful call (the most allowed),`;
    return `stopped after ${rounds} without a final answer; ${this.hints.moreRounds} or ask a narrower question`;
  }

  /** One model response whose calls all check out, after up to MAX_REASKS re-asks; or the end of the run. `said`: the last round's words. */
  private async validResponse(said: string): Promise<AgentResult | Runnable> {
    const round = this.rounds + 1;
    for (let reasks = 0; ; reasks++) {
      const place: CallPlace = { round, attempt: reasks + 1 };
      // What a run ending here keeps: after a re-ask the last words shown are of a response rolled back, so none, as on invalid_response.
      const kept = reasks === 0 ? said : '';
      if (this.deps.isStopped()) return this.end('stopped', 'stop_signal', kept);
      const reply = await this.ask(kept, place);
      if ('status' in reply) return reply;
      // An unfinished call is no answer; asked again, the same limit would cut it the same way. Only
      // text Ollama held back is one: a streamed JSON answer the limit cut is the model's real answer.
      if (reply.atLimit && reply.heldToEnd && reply.toolCalls.length === 0 && isCutToolCall(reply.text)) return this.end('invalid_response', 'invalid_response', '', CUT_TOOL_CALL);
      const verdict = await this.judge(reply, round);
      if (verdict.kind === 'answer') return this.end('ok', 'answered', reply.text);
      if (verdict.kind === 'run') {
        this.rounds = round;
        return { text: reply.text, thinking: reply.thinking, calls: verdict.calls, checked: verdict.checked, attempt: place.attempt };
      }
      if (verdict.kind === 'needs_input') {
        this.rounds = round;
        const { call, tool, parameter } = verdict.missing;
        this.recordChecked(verdict.checked, place, NOT_RUN.besideMissing);
        // As a call that ran and needed input reports itself: a server's client sees every call's status.
        this.deps.emit({ type: 'tool_status', id: call.id, name: tool.name, status: 'needs_input', ms: 0, args: call.arguments ?? call.unreadable });
        this.deps.emit({ type: 'needs_input', id: call.id, name: tool.name, parameter });
        return this.end('needs_input', 'required_parameter', reply.text, `tool ${tool.name} needs "${parameter}", which the model did not give; ask again with it in your question`);
      }
      const empty = verdict.checked.length === 0;
      // Asking again would spend the same limit on the same reasoning: say why at once instead (the reasoning logged shows on what).
      if (empty && reply.atLimit) return this.end('invalid_response', 'invalid_response', '', this.reasoned(reply) ? SPENT_ON_REASONING : LIMIT_BEFORE_ANSWER);
      const reason = verdict.reasons.join('; ');
      this.recordChecked(verdict.checked, place, NOT_RUN.besideInvalid);
      if (reasks >= MAX_REASKS) {
        // Rolled back: nothing of the invalid responses is in the conversation.
        const message = empty
          ? `the model still gave no answer after ${MAX_REASKS} re-asks (its last response was empty, or only reasoning); try another model`
          : `the model's tool calls were still invalid after ${MAX_REASKS} re-asks (${cleanLine(reason, 160)}); try another model or fewer tools`;
        return this.end('invalid_response', 'invalid_response', '', message);
      }
      this.deps.emit({ type: 'reask', attempt: reasks + 1, of: MAX_REASKS, reason: cleanLine(reason, 160) });
      try {
        await this.deps.sleep((this.run.reaskDelayMs ?? REASK_DELAY_MS) * 2 ** reasks, this.deps.signal);
      } catch {
        return this.cut('');
      }
    }
  }

  /** Whether a response spent tokens on reasoning: it reasoned (in its own field, or inline as its only text), or was asked to. */
  private reasoned(reply: Reply): boolean {
    const think = this.run.base.think;
    return reply.thinking.trim() !== '' || reply.text.trim() !== '' || (think !== undefined && think !== false);
  }

  /** A response in words is an answer unless it says nothing; one with calls is judged call by call. */
  private async judge(reply: Reply, round: number): Promise<ResponseVerdict | { kind: 'answer' }> {
    if (reply.toolCalls.length === 0) return isEmptyAnswer(reply.text) ? { kind: 'invalid', reasons: [EMPTY_ANSWER], checked: [] } : { kind: 'answer' };
    const parsed = readToolCalls(reply.toolCalls, round);
    // The validator (and zod) load with the first tool call: a run the model answers in words never needs them.
    const { validateArguments } = await import('../tools/validate.js');
    return judgeResponse(parsed.map((call) => checkCall(call, this.toolsByName, validateArguments)));
  }

  /** Emits text for the user; remembers its last two characters (for the break between responses). */
  private show(text: string): void {
    if (text === '') return;
    this.shown = (this.shown + text).slice(-2);
    this.deps.emit({ type: 'text', text });
  }

  /**
   * One streamed request. The STOP signal is checked on every chunk and ends the answer there.
   * `kept`: the words a run ending before it keeps; `place`: where its calls are logged.
   */
  private async ask(kept: string, place: CallPlace): Promise<AgentResult | Reply> {
    let memo: Memo;
    try {
      memo = await this.deps.readMemo();
    } catch (error) {
      // Ended here, not thrown: the calls that ran are logged with the reason.
      return this.end('error', 'memo_unreadable', kept, memoFailure(error));
    }
    const request = buildAgentRequest({ base: this.run.base, tools: this.run.tools, ephemeralSystem: this.run.ephemeralSystem, memo, added: this.added });
    this.firstRequest ??= request;
    this.startSaves();
    await this.deps.checkWindow?.(request, this.deps.signal);
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    if (this.deps.signal.aborted) onAbort();
    this.deps.signal.addEventListener('abort', onAbort, { once: true });
    let text = '';
    let thinking = '';
    this.thinking = '';
    // Set from the chunk hook: an object, so the check after the await reads its current value.
    const stop = { requested: false };
    this.requests++;
    let outcome: StreamOutcome;
    try {
      outcome = await this.deps.model(request, {
        signal: controller.signal,
        onText: (chunk) => {
          if (stop.requested) return;
          this.firstTextMs ??= Math.round(this.deps.clock() - this.started);
          // Each response's words start a new paragraph after an earlier response's, not mid-line.
          if (text === '' && this.shown !== '') this.show(paragraphBreak(this.shown, chunk));
          text += chunk;
          this.show(chunk);
        },
        onThinking: (chunk) => {
          if (stop.requested) return;
          thinking += chunk;
          this.thinking = thinking;
        },
        onChunk: () => {
          if (!stop.requested && this.deps.isStopped()) {
            stop.requested = true;
            controller.abort();
          }
        },
      });
    } finally {
      this.deps.signal.removeEventListener('abort', onAbort);
    }
    this.metrics = addMetrics(this.metrics, outcome.metrics);
    this.largestPromptEvalCount = largerCount(this.largestPromptEvalCount, outcome.metrics.prompt_eval_count);
    // Calls that came before the response was cut short are logged, never run.
    const sent = outcome.toolCalls ?? [];
    if (stop.requested) {
      this.recordSent(sent, place, NOT_RUN.stopped);
      return this.end('stopped', 'stop_signal', text);
    }
    if (outcome.status === 'interrupted') {
      this.recordSent(sent, place, this.cutByStop() ? NOT_RUN.stopped : NOT_RUN.interrupted);
      return this.cut(text);
    }
    if (outcome.status === 'error') {
      this.recordSent(sent, place, NOT_RUN.modelFailed);
      this.modelFailure = outcome.failure;
      return this.end('error', 'model_error', text, outcome.failure?.message ?? 'the request failed');
    }
    return { text, thinking, toolCalls: outcome.toolCalls ?? [], atLimit: outcome.metrics.done_reason === 'length', heldToEnd: outcome.textHeldToEnd === true };
  }

  /** Runs one round's valid calls and applies the taxonomy; returns the end of the run, or null to go on. */
  private async toolRound(response: Runnable): Promise<AgentResult | null> {
    const { text, thinking, calls: checked } = response;
    const round = this.rounds;
    const place: CallPlace = { round, attempt: response.attempt };
    const saved = this.saving.length > 0 || this.unsaved.length > 0;
    const unsaved = await this.savesWritten();
    if (unsaved !== null) {
      this.recordUnrun(response, NOT_RUN.notSaved);
      return this.notSaved(unsaved, text);
    }
    // The rounds before are as they were, their results now on disk: a kill from here on logs them saved.
    if (saved) this.deps.onRound?.(this.progress(this.said));
    const approvals = await this.confirmAll(checked);
    // Cut while asking (STOP, Ctrl-C, a client gone): no call ran, and none was refused by the user.
    if (this.wasCut()) {
      this.recordUnrun(response, this.cutByStop() ? NOT_RUN.stopped : NOT_RUN.interrupted);
      return this.cut(text);
    }
    // A STOP set while a question waited, answered before its watcher cut the run: STOP wins.
    if (this.asksAny(checked) && this.deps.isStopped()) {
      this.recordUnrun(response, NOT_RUN.stopped);
      return this.end('stopped', 'stop_signal', text);
    }
    const outcomes = await Promise.all(checked.map(async (entry, index) => this.runCall(entry, approvals[index] ?? 'yes')));

    // Results past their budget are cut down now and saved whole while the model answers (see saveResult).
    const saves = await Promise.all(
      checked.map(async (entry, index) => {
        const outcome = outcomes[index]?.outcome;
        if (outcome?.kind !== 'success') return null;
        // A result its tool fitted to the budget is sent as fitted, and what it was cut from is saved.
        const shown = JSON.stringify(outcome.result);
        const whole = wholeResultOf(outcome.result);
        const full = whole === undefined ? shown : JSON.stringify(whole);
        const budget = this.budgetOf(entry.tool);
        if (full === shown && !isOverBudget(shown, budget)) return { full, content: full, savedAs: null, truncated: false };
        const savedAs = this.deps.resultPath === null ? null : await this.deps.resultPath(entry.call.id, round);
        if (savedAs !== null) this.unsaved.push({ path: savedAs, content: full });
        const content = isOverBudget(shown, budget) ? truncatedResult(shown, budget, entry.call.id, savedAs !== null) : shown;
        return { full, content, savedAs, truncated: true };
      }),
    );

    const successes: { entry: Extract<CheckedCall, { kind: 'ok' }>; content: string; full: string }[] = [];
    let needsInput: { name: string; parameter: string } | null = null;
    let permanent: { name: string; message: string; approval: ConfirmAnswer } | null = null;
    // Logged in the order the model sent them: a repeated id (the only other kind here) where it came.
    let index = -1;
    for (const entry of response.checked) {
      if (entry.kind !== 'ok') {
        this.recordChecked([entry], place, NOT_RUN.duplicate);
        continue;
      }
      index++;
      const { outcome, ms } = outcomes[index] ?? { outcome: classifyThrown(new Error('lost'), []), ms: 0 };
      const { call, tool } = entry;
      if (outcome.kind === 'needs_input') {
        this.record(call.id, tool.name, entry.sent, place, 'needs_input', ms, { error: outcome.message });
        this.deps.emit({ type: 'needs_input', id: call.id, name: tool.name, parameter: outcome.parameter });
        needsInput ??= { name: tool.name, parameter: outcome.parameter };
        continue;
      }
      if (outcome.kind === 'failure') {
        this.record(call.id, tool.name, entry.sent, place, 'failure', ms, { error: outcome.message, ...(outcome.detail !== null ? { error_detail: outcome.detail } : {}) });
        this.deps.emit({ type: 'tool_execution_error', id: call.id, name: tool.name, message: outcome.message });
        if (!outcome.retryable) permanent ??= { name: tool.name, message: outcome.message, approval: approvals[index] ?? 'yes' };
        continue;
      }
      const saved = saves[index] ?? { full: '', content: '', savedAs: null, truncated: false };
      if (saved.truncated) {
        const record: CompactionRecord = {
          id: call.id,
          round,
          kind: saved.savedAs !== null ? 'saved' : 'truncated',
          chars_before: saved.full.length,
          chars_after: saved.content.length,
          ...(saved.savedAs !== null ? { saved_as: saved.savedAs } : {}),
        };
        this.compacted.push(record);
        this.deps.emit({ type: 'compacted', records: [record] });
      }
      this.record(call.id, tool.name, entry.sent, place, 'success', ms, { result_chars: saved.full.length, result: saved.content, ...(saved.savedAs !== null ? { saved_as: saved.savedAs } : {}) });
      successes.push({ entry, content: saved.content, full: saved.full });
    }

    // A round with a success counts (`iterations`) whatever ends the run after it.
    if (successes.length > 0) this.iterations++;
    // Logged for every round whose calls ran, failed ones too; only a success's go back to the model.
    if (text !== '' || thinking !== '') this.roundMessages.push({ round, content: text, ...(thinking !== '' ? { thinking } : {}) });
    // Kept with its round: the run's `thinking` is a later response's.
    this.thinking = '';
    if (this.wasCut()) return this.cut(text);
    if (needsInput) {
      return this.end('needs_input', 'required_parameter', text, `tool ${needsInput.name} needs "${needsInput.parameter}", which the model did not give; ask again with it in your question`);
    }
    if (successes.length > 0) {
      // Only successful calls go back: the model never sees a failure.
      const calls: WireToolCall[] = successes.map(({ entry }) => ({ id: entry.call.id, function: { name: entry.tool.name, arguments: entry.sent } }));
      // A thinking model's reasoning goes back with its calls, as Ollama asks: the model continues from it.
      this.added.push({ role: 'assistant', content: text, ...(thinking !== '' ? { thinking } : {}), tool_calls: calls });
      for (const { entry, content, full } of successes) {
        // Named and paired by the id its call went back with: renderers that pair by id (cohere, gemma4) find it; older releases ignore the field.
        const message: AgentChatMessage = { role: 'tool', tool_name: entry.tool.name, tool_call_id: entry.call.id, content };
        this.added.push(message);
        // Summarized from the full result: a truncated one's head and note would misstate its size.
        const summary = summaryOf(entry.tool.name, entry.args, full);
        this.results.push({ callId: entry.call.id, name: entry.tool.name, content, fullChars: full.length, summary, round, summarized: false });
      }
      const summarized = summarizeOlder(this.results, round);
      if (summarized.length > 0) {
        this.applySummaries();
        this.compacted.push(...summarized);
        this.deps.emit({ type: 'compacted', records: summarized });
      }
    } else {
      this.allFailureRounds++;
    }
    if (permanent) {
      this.unconfirmed = permanent.approval === 'no' ? 'refused' : permanent.approval === 'no-terminal' ? 'no-terminal' : null;
      return this.end('tool_failures', 'permanent_failure', text, `tool ${permanent.name} failed and retrying cannot help (${permanent.message}); ${this.hints.failedCall}`);
    }
    if (this.allFailureRounds >= MAX_ALL_FAILURE_ROUNDS) {
      return this.end('tool_failures', 'all_failure_rounds', text, `every tool call failed in ${MAX_ALL_FAILURE_ROUNDS} rounds; ${this.hints.failedRounds}, fix the cause and ask again`);
    }
    return null;
  }

  private startSaves(): void {
    for (const { path, content } of this.unsaved.splice(0)) {
      this.saving.push(this.deps.saveResult(path, content).then(() => null, (error: unknown) => ({ path, error })));
    }
  }

  /** Waits for the saves (starting any not started yet); the first one's failure, or null. */
  private async savesWritten(): Promise<SaveFailure | null> {
    this.startSaves();
    if (this.saving.length === 0) return null;
    const failures = (await Promise.all(this.saving.splice(0))).filter((outcome) => outcome !== null);
    this.forgetUnsaved(failures);
    return failures[0] ?? null;
  }

  /** A result whose save failed is logged as cut with the rest not kept: no `saved_as` names a file that is not there. */
  private forgetUnsaved(failures: readonly SaveFailure[]): void {
    if (failures.length === 0) return;
    const lost = new Set(failures.map(({ path }) => path));
    for (const call of this.calls) {
      if (call.saved_as !== undefined && lost.has(call.saved_as)) delete call.saved_as;
    }
    for (const record of this.compacted) {
      if (record.saved_as === undefined || !lost.has(record.saved_as)) continue;
      delete record.saved_as;
      record.kind = 'truncated';
    }
  }

  /** The model was told a result is saved and it is not: the run ends, and is logged, as an error. */
  private notSaved({ path, error }: SaveFailure, text: string): AgentResult {
    const said = `cannot save the tool result ${path} in the data home (${error instanceof Error ? error.message : String(error)})`;
    // Argo's own errors (a link, another user's folder) end with their fix; a system error gets the usual one.
    return this.end('error', 'result_not_saved', text, error instanceof ArgoError ? said : `${said}; fix the folder's permissions or free space, then ask again`);
  }

  /** The run as it would end if cut now, with no `saved_as` naming a result not yet on disk. */
  private progress(text: string): AgentResult {
    const now = this.end('interrupted', 'interrupted', text);
    const pending = new Set(this.unsaved.map(({ path }) => path));
    if (pending.size === 0) return now;
    const written = (savedAs: string | undefined): boolean => savedAs === undefined || !pending.has(savedAs);
    return {
      ...now,
      calls: now.calls.map(({ saved_as: savedAs, ...call }) => (written(savedAs) ? { ...call, ...(savedAs !== undefined ? { saved_as: savedAs } : {}) } : call)),
      compacted: now.compacted.map(({ saved_as: savedAs, ...record }) => (written(savedAs) ? { ...record, ...(savedAs !== undefined ? { saved_as: savedAs } : {}) } : { ...record, kind: record.kind === 'saved' ? 'truncated' : record.kind })),
    };
  }

  /** Tool messages hold their result's current content (a summary once compacted). */
  private applySummaries(): void {
    let index = 0;
    for (const message of this.added) {
      if (message.role !== 'tool') continue;
      const result = this.results[index++];
      if (result) message.content = result.content;
    }
  }

  /** Whether a call of the round asks before it runs. */
  private asksAny(checked: Extract<CheckedCall, { kind: 'ok' }>[]): boolean {
    return this.run.yes !== true && checked.some(({ tool, args }) => asksFirst(tool, args));
  }

  /** Asked one at a time, in call order, before any call of the round runs. */
  private async confirmAll(checked: Extract<CheckedCall, { kind: 'ok' }>[]): Promise<ConfirmAnswer[]> {
    const answers: ConfirmAnswer[] = [];
    for (const { call, tool, args } of checked) {
      if (!asksFirst(tool, args) || this.run.yes === true) {
        answers.push('yes');
        continue;
      }
      const context = this.toolContext(this.deps.signal);
      let preview: string;
      try {
        preview = tool.preview ? await tool.preview(args, context) : JSON.stringify(args);
      } catch {
        // The call itself will fail the same way and report it; ask with the arguments.
        preview = JSON.stringify(args);
      }
      answers.push(this.deps.signal.aborted ? 'no' : await this.deps.confirm({ id: call.id, tool: tool.name, args, preview }, this.deps.signal));
    }
    return answers;
  }

  /** Asked anew at each look (a property read would be narrowed across the awaits between them). */
  private wasCut(): boolean {
    return this.deps.signal.aborted;
  }

  private toolContext(signal: AbortSignal, resultBudget?: number): ToolContext {
    const { root, home } = this.run.context;
    const env = (this.commandEnv ??= this.run.context.commandEnv?.());
    return { root, home, signal, ...(env ? { env } : {}), ...(resultBudget !== undefined ? { resultBudget } : {}) };
  }

  private budgetOf(tool: Tool): number {
    return tool.resultBudget ?? this.run.defaultBudget ?? DEFAULT_RESULT_BUDGET;
  }

  private async runCall(entry: Extract<CheckedCall, { kind: 'ok' }>, approval: ConfirmAnswer): Promise<{ outcome: CallOutcome; ms: number }> {
    const { tool, args, sent, call } = entry;
    if (approval !== 'yes') {
      const message = approval === 'no' ? 'the user refused the call' : 'it has side effects and needs confirmation: pass --yes (there is no terminal to ask on)';
      this.deps.emit({ type: 'tool_status', id: call.id, name: tool.name, status: 'failure', ms: 0, args: sent });
      return { outcome: { kind: 'failure', message, retryable: false, detail: null }, ms: 0 };
    }
    this.deps.emit({ type: 'tool_status', id: call.id, name: tool.name, status: 'running', args: sent });
    const timeoutMs = tool.timeoutMs ?? this.run.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const controller = new AbortController();
    // The call's own signal: it aborts on its timeout or when the run is cut. Not a listener per
    // call on the run's signal: a round of more than 10 calls would warn.
    const signal = AbortSignal.any([this.deps.signal, controller.signal]);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const started = this.deps.clock();
    try {
      // A tool that does not heed its signal must not hold the run: the call ends at its timeout or
      // its cut whatever the tool does, and the tool, told by its signal, must not take effect after.
      const ended = new Promise<CallOutcome>((resolve) => {
        timer = setTimeout(() => {
          controller.abort();
          resolve({ kind: 'failure', message: `timed out after ${timeoutMs / 1000} s`, retryable: true, detail: null });
        }, timeoutMs);
        // A macrotask later: a tool that had already ended, or ends on the cut at once, reports its own outcome.
        const cut = (): void => void setImmediate(() => resolve(CUT_CALL));
        onAbort = () => {
          if (this.deps.signal.aborted) cut();
        };
        if (this.deps.signal.aborted) cut();
        else signal.addEventListener('abort', onAbort, { once: true });
      });
      const parameters = parameterNames(tool.parameters);
      const running = tool.run(args, this.toolContext(signal, this.budgetOf(tool))).then(
        (result) => classifyResult(result, parameters),
        // A tool that fails once the run is cut (a command killed, a lock wait given up) was cut: it says so alike.
        (error: unknown) => (this.deps.signal.aborted ? CUT_CALL : classifyThrown(error, parameters)),
      );
      const outcome = await Promise.race([running, ended]);
      const ms = Math.round(this.deps.clock() - started);
      // Reported as each call ends, not when the round does: a server shows progress live.
      this.deps.emit({ type: 'tool_status', id: call.id, name: tool.name, status: outcome.kind, ms, args: sent });
      return { outcome, ms };
    } finally {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    }
  }

  private record(
    id: string,
    name: string,
    args: CallRecord['arguments'],
    { round, attempt }: CallPlace,
    outcome: CallRecord['outcome'],
    ms: number,
    extra: Partial<Pick<CallRecord, 'result_chars' | 'result' | 'saved_as' | 'error' | 'error_detail'>>,
  ): void {
    this.calls.push({ id, name, arguments: args, outcome, round, ...(attempt > 1 ? { attempt } : {}), ms, result_chars: extra.result_chars ?? 0, ...extra });
  }

  /**
   * Logs the calls of a response none of which ran: each invalid one with its reason, one lacking a
   * parameter as needs_input, a repeated id as such, and a valid one as not run, saying why (`unrun`).
   */
  private recordChecked(checked: readonly CheckedCall[], place: CallPlace, unrun: string): void {
    for (const entry of checked) {
      const { call } = entry;
      if (entry.kind === 'ok') this.record(call.id, entry.tool.name, entry.sent, place, 'not_run', 0, { error: unrun });
      else if (entry.kind === 'missing') this.record(call.id, entry.tool.name, call.arguments, place, 'needs_input', 0, { error: `${entry.parameter} is required` });
      else if (entry.kind === 'invalid') this.record(call.id, call.name, call.arguments ?? call.unreadable, place, 'invalid', 0, { error: cleanLine(entry.reason, ONE_LINE_MAX) });
      else this.record(call.id, call.name, call.arguments ?? call.unreadable, place, 'not_run', 0, { error: NOT_RUN.duplicate });
    }
  }

  /** Logs the calls of a response cut short as not run (`why`), unchecked: the response never ended. */
  private recordSent(sent: readonly unknown[], place: CallPlace, why: string): void {
    for (const call of readToolCalls(sent, place.round)) {
      this.record(call.id, call.name, call.arguments ?? call.unreadable, place, 'not_run', 0, { error: call.duplicate === true ? NOT_RUN.duplicate : why });
    }
  }

  /** Logs a valid response's calls as not run: the run ended before its round (`why`). */
  private recordUnrun(response: Runnable, why: string): void {
    this.recordChecked(response.checked, { round: this.rounds, attempt: response.attempt }, why);
  }

  private get hints(): RunHints {
    return this.run.hints ?? CLI_RUN_HINTS;
  }

  /** Whether the run's signal was aborted by a STOP (else by Ctrl-C or a client gone). */
  private cutByStop(): boolean {
    return this.deps.abortedByStop?.(this.deps.signal.reason) === true;
  }

  /** The run's signal was aborted: by a STOP, or by Ctrl-C or a client gone. */
  private cut(text: string): AgentResult {
    return this.cutByStop() ? this.end('stopped', 'stop_signal', text) : this.end('interrupted', 'interrupted', text);
  }

  private end(status: AgentStatus, stopReason: StopReason, text: string, detail?: string): AgentResult {
    const message = detail ?? defaultMessage(status, this.hints);
    return {
      status,
      stopReason,
      message,
      text,
      thinking: this.thinking,
      roundMessages: this.roundMessages,
      calls: this.calls,
      iterations: this.iterations,
      allFailureRounds: this.allFailureRounds,
      compacted: this.compacted,
      requests: this.requests,
      firstTextMs: this.firstTextMs,
      metrics: this.metrics,
      largestPromptEvalCount: this.largestPromptEvalCount,
      added: this.added,
      modelFailure: this.modelFailure,
      firstRequest: this.firstRequest,
      unconfirmed: this.unconfirmed,
    };
  }
}

/** Why the memo could not be read: Argo's own words name the file and the fix; anything else is quoted. */
function memoFailure(error: unknown): string {
  if (error instanceof ArgoError) return messageLine(error);
  return `cannot read the memo (${messageLine(error)}); fix memo.json in the data home (its permissions, or what it holds) or delete it, then ask again`;
}

function defaultMessage(status: AgentStatus, hints: RunHints): string | null {
  switch (status) {
    case 'stopped':
      return `stopped by the STOP signal; ${hints.clearStop}`;
    case 'interrupted':
      return 'interrupted';
    default:
      return null;
  }
}

/** Runs the loop to its end. Never throws for a tool's, the model's or the memo's failure: the result says. */
export function runAgent(run: AgentRun, deps: AgentDeps): Promise<AgentResult> {
  return new Run(run, deps).execute();
}
