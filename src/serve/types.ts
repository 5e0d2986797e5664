// What the server needs from the rest of Argo, injected by createServer's caller: the CLI wires the
// real turn, stores and Ollama client; tests wire fakes.
import type { TurnFailure } from './errors.js';
import type { Logprob } from '../ollama/transport.js';
import type { OllamaExtras, OllamaMessage, OllamaToolCall } from './openai.js';
import type { ReplaySpec } from '../replay/types.js';
import type { ArgoFields } from './schema.js';

/**
 * Why an answer was cut short; the turn logs `stopped` for 'stop' and `interrupted` otherwise.
 * 'lost': a job's lock was lost, so another server may fail it over (jobs only).
 */
export type CutReason = 'stop' | 'disconnect' | 'shutdown' | 'cancel' | 'lost';

export interface TurnInput {
  /** Chosen by the server so it can be sent in headers before the turn is logged. */
  turnId: string;
  session: string;
  /** 'plain': the client's messages as they are; 'argo': the last user message through replay. */
  mode: 'plain' | 'argo';
  model: string;
  /** The last user message. */
  userPrompt: string;
  messages: OllamaMessage[];
  argo: ArgoFields | null;
  extras: OllamaExtras;
  /** Aborted with a CutReason as its reason. */
  signal: AbortSignal;
  /** Its draft has been in the journal since it was queued (TurnRunner.hold). */
  journaled?: boolean;
  /** When it entered its session's queue: its timestamp, so its turn is logged in the order it was asked. */
  askedAt?: Date;
}

/**
 * A turn as the runner runs it. `round` is the round its client tool calls belong to: a call the model
 * gave no id is `call_<round>_<index>`, to the client and in the log.
 */
export interface RunInput extends TurnInput {
  round: number;
}

/** Server-side tool runs (agent mode), passed on to clients as extra stream fields. */
export interface ToolEvent {
  type: 'tool_status' | 'tool_execution_error';
  [field: string]: unknown;
}

/** A streamed answer's client; the clients following a job's stream; nobody (a whole answer). */
export type ToolEventsHeard = 'answer' | 'job' | 'nobody';

/** Each piece comes with its tokens' log probabilities when the client asked for them (`logprobs: true`). */
export interface TurnHooks {
  onText: (text: string, logprobs?: readonly Logprob[]) => void;
  /** A thinking model's reasoning, before its answer: sent as `reasoning`, as Ollama's own OpenAI layer does. */
  onThinking?: (text: string, logprobs?: readonly Logprob[]) => void;
  /** The model's calls of client tools, in one batch. */
  onToolCalls: (calls: OllamaToolCall[], logprobs?: readonly Logprob[]) => void;
  /** Log probabilities of tokens that came with no piece (a tool call Ollama held back while it was written). */
  onLogprobs?: (logprobs: readonly Logprob[]) => void;
  onToolEvent?: (event: ToolEvent) => void;
  /** Who hears onToolEvent, for the words that say where a failed call's error went; 'nobody' when left out. */
  toolEventsHeard?: ToolEventsHeard;
  /** The answer is complete and the turn is being logged; `run` resolves once it is written (or could not be). */
  onAnswered?: (result: TurnResult) => void;
}

/** `tool_calls`: the answer was calls of the client's own tools, for it to run (finish_reason "tool_calls"). */
export type TurnStatus = 'ok' | 'tool_calls' | 'interrupted' | 'stopped' | 'error' | (string & {});

/** How a server-side agent run (the `tools` Argo field) ended. */
export interface AgentSummary {
  /** The loop's stop reason as logged (`answered`, `stop_signal`, `max_iterations`…). */
  stopReason: string;
  iterations: number;
  toolCalls: number;
  /** Why it stopped and what to do; null when answered. */
  message: string | null;
  /** The tools asked for that were left out, and why (the log's `tools_unavailable`). */
  unavailable: { name: string; reason: string }[];
}

export interface TurnResult {
  turnId: string;
  status: TurnStatus;
  /** The model Ollama was asked for (Argo mode may keep the session's). */
  model: string;
  text: string;
  toolCalls: OllamaToolCall[];
  /**
   * Ollama's counts, for `usage`; where it gave none (an answer cut short before its last chunk: STOP,
   * a client gone, the shutdown, a failure), Argo's estimates, as the log's `prompt_tokens_estimate`.
   */
  promptTokens: number;
  completionTokens: number;
  doneReason: string | null;
  failure: TurnFailure | null;
  /** As logged; null without replay. */
  replayPolicy: unknown;
  /** Null unless the turn ran the agent loop. */
  agent?: AgentSummary | null;
}

/**
 * Where an answered turn's line went: `written` into the log; `rescued`, saved aside in the data home
 * (rescued/) because the log could not take it, for the operator to add back; `unsaved`, not even
 * that (its prompt alone is kept, for the next argo to log as interrupted).
 */
export type LogOutcome = 'written' | 'rescued' | 'unsaved';

export interface LoggedTurn extends TurnResult {
  log: LogOutcome;
  /** What went wrong with the turn's line or its session's bookkeeping, in the operator's words; null when nothing did. */
  logProblem: string | null;
}

/**
 * Runs one turn and logs it once, whatever happens; resolves once its line is written or could not
 * be. Throws only for a turn that never answered (a request it refuses: a UsageError).
 */
export interface TurnRunner {
  run: (input: RunInput, hooks: TurnHooks) => Promise<LoggedTurn>;
  /**
   * Keeps a turn that is to wait in its session's queue (a job) in the journal of unfinished turns,
   * so a server killed before it runs leaves it for the next argo to log; it is then run with
   * `journaled`. Returns what removes it again (the job was not made), or null when it is not kept
   * (a request the run will refuse, or a journal that cannot be written, said on the server's log).
   */
  hold?: (input: RunInput) => Promise<(() => Promise<void>) | null>;
  /**
   * Throws the 400 (or the operator's 500) a run of `input` would give before asking anything of
   * Ollama: a persona, mode or budget the server's config refuses, tools it cannot resolve. Nothing
   * is loaded or started. A job is refused with it before it is made.
   */
  check?: (input: Pick<TurnInput, 'session' | 'model' | 'mode' | 'argo' | 'extras'>) => Promise<void>;
}

export interface SessionStore {
  /** Records as `argo sessions --json` prints them; `query` matches titles and prompts. */
  list: (query: string | null) => Promise<unknown[]>;
  /**
   * `argo sessions show NAME --json`'s text less what only the log's owner reads (tool calls'
   * `error_detail`), handed to `give` piece by piece (a session of years is never one string;
   * `give` answers false once the client has gone), or null for an unknown name.
   */
  show: (name: string) => Promise<((give: (piece: string) => Promise<boolean>) => Promise<void>) | null>;
  /** The updated record, or null for an unknown name. */
  setTitle: (name: string, title: string) => Promise<unknown>;
}

/** Ollama's version and models; each call gives up (rejects) after a bound of its own. */
export interface OllamaInfo {
  /** Where Ollama is, as the server's error lines name it. */
  host: string;
  version: () => Promise<string>;
  /** Rejects with the one line a client is shown: what failed and how the server's operator fixes it. */
  models: () => Promise<{ name: string; modified_at: string }[]>;
  /** The installed model to suggest for a missing one, as a chat request's 404 suggests it (never an embedding model). */
  answeringModel: (installed: readonly string[]) => Promise<string | undefined>;
}

export interface StopSignal {
  isSet: () => Promise<boolean>;
  /** When STOP was set (its file's time, as `argo stop --status` tells it); null when it is not set. */
  since: () => Promise<Date | null>;
  set: () => Promise<void>;
  clear: () => Promise<void>;
  /**
   * As a server starts: removes a STOP set before this machine booted ('cleared'), leaves any other
   * ('kept'); null when none is set. `since` is when it was set.
   */
  clearStale: () => Promise<{ kind: 'cleared' | 'kept'; since: Date } | null>;
  /** Calls `listener` when the signal appears from outside (another process); returns an unsubscribe. */
  watch: (listener: () => void) => () => void;
}

export interface Clock {
  now: () => Date;
  /** Milliseconds from a monotonic clock, for durations. */
  monotonic: () => number;
}

export interface ServeLimits {
  maxBodyBytes: number;
  jobRetentionDays: number;
}

/** What Argo mode uses where a request does not say: the CLI's default session and replay. */
export interface ArgoDefaults {
  session: string;
  replay: ReplaySpec;
  /** Where `replay` was set (ARGO_REPLAY, config.json's "defaultReplay"): a refusal it causes says so. Without it, Argo's own default. */
  replaySource?: 'flag' | 'env' | 'config' | 'default';
}

export interface ServerDeps {
  runner: TurnRunner;
  sessions: SessionStore;
  stop: StopSignal;
  ollama: OllamaInfo;
  clock: Clock;
  newId: () => string;
  /** The jobs directory (`jobs/` in the data home). */
  jobsDir: string;
  /** The data home: an error a client is sent names it `<data home>`, never by its path (the operator's). */
  home?: string;
  limits: ServeLimits;
  /** Null on a loopback bind without a key. */
  apiKey: string | null;
  /** What Argo mode uses without a session or replay field: the CLI's defaults. */
  argoDefaults: ArgoDefaults;
  /**
   * Whether the server runs server-side tools; without it planAnswer refuses the `tools` Argo field
   * with a 400, before a turn or a job exists (the one place that refusal is made).
   */
  agentMode: boolean;
  /** One line per request. */
  log: (line: string) => void;
}
