// The server's TurnRunner: each request is one turn of src/turn/turn.ts, the same use case the CLI
// runs, so Argo mode builds exactly the request `argo -s NAME --replay SPEC` builds and logs one line.
import type { Settings } from '../config/settings.js';
import type { LogEntry } from '../log/entry.js';
import { UsageError } from '../errors.js';
import { checkStyleChoice } from '../replay/style.js';
import { runTurn, streamAnswer } from '../turn/turn.js';
import type { Answer, Transport, TurnInput as CoreInput } from '../turn/turn.js';
import type { TurnFailure } from './errors.js';
import { ollamaToolCallsOf } from './openai.js';
import type { OllamaExtras, OllamaToolCall } from './openai.js';
import type { CutReason, TurnInput, TurnResult, TurnRunner } from './types.js';

export interface RunnerPorts {
  /** A transport per turn: one carries one request's abort state at a time. */
  transport: () => Transport;
  now: () => Date;
  clock: () => number;
  rescue: (text: string) => Promise<string>;
}

/** What the log says about an answer cut short, by why it was cut. */
const CUT_ERRORS: Record<CutReason, string> = {
  stop: 'stop signal',
  disconnect: 'the client disconnected',
  shutdown: 'the server shut down',
  cancel: 'cancelled by request',
};

/** The request's Argo fields laid over the server's settings, as the CLI's flags would be. */
export function settingsFor(base: Settings, input: Pick<TurnInput, 'session' | 'model' | 'mode' | 'argo'>): Settings {
  const argo = input.argo ?? {};
  const settings: Settings = {
    ...base,
    session: input.session,
    // The client always names a model: it is what `-m` is to the CLI.
    model: input.model,
    modelFromFlag: true,
    // A client that sends its own messages needs the chat endpoint.
    api: input.mode === 'plain' ? 'chat' : base.api,
    persona: argo.persona ?? base.persona,
    verbosity: argo.verbosity ?? base.verbosity,
    mode: argo.mode ?? base.mode,
    replay: argo.budget !== undefined ? { ...base.replay, budget: argo.budget } : base.replay,
  };
  const unknown = checkStyleChoice(settings.style, settings);
  if (unknown) throw new UsageError(`argo.${unknown.key}: ${unknown.message.slice(unknown.key.length + 2)}`);
  return settings;
}

/**
 * Body fields the client adds. Client options are laid over the configured ones (key order kept, so
 * equal requests give equal bytes); a request without any adds nothing, exactly like the CLI.
 */
export function bodyFor(base: Settings, input: Pick<TurnInput, 'mode' | 'messages'>, extras: OllamaExtras): Record<string, unknown> | undefined {
  const body: Record<string, unknown> = {};
  // Plain mode's messages go in as body fields: they carry what the replay core's messages do not
  // model (tool results, tool calls, images).
  if (input.mode === 'plain') body.messages = input.messages;
  if (Object.keys(extras.options).length > 0) body.options = { ...base.options, ...extras.options };
  if (extras.format !== undefined) body.format = extras.format;
  if (extras.tools !== undefined) body.tools = extras.tools;
  return Object.keys(body).length > 0 ? body : undefined;
}

export function turnRunner(base: Settings, ports: RunnerPorts): TurnRunner {
  return {
    run: async (input, hooks) => {
      const settings = settingsFor(base, input);
      const argo = input.argo;
      const body = bodyFor(base, input, input.extras);
      const core: CoreInput = {
        prompt: input.userPrompt,
        replay: argo?.replay ?? { kind: 'none' },
        ...(argo?.reason !== undefined ? { reason: argo.reason } : {}),
        log: true,
        ollamaStream: true,
        ...(body ? { body } : {}),
      };
      const toolCalls: OllamaToolCall[] = [];
      let failure: TurnFailure | null = null;
      const resultOf = (entry: LogEntry, message: string | null): TurnResult => {
        const failed = failure;
        return {
          turnId: entry.id,
          status: entry.status,
          model: entry.model,
          text: entry.model_response,
          toolCalls,
          promptTokens: entry.timings.prompt_eval_count,
          completionTokens: entry.timings.eval_count,
          doneReason: entry.done_reason,
          failure: entry.status === 'error' && failed ? { ...failed, message: message ?? failed.message } : null,
          replayPolicy: entry.replay_policy,
        };
      };
      const result = await runTurn(settings, core, {
        transport: ports.transport(),
        now: ports.now,
        clock: ports.clock,
        newId: () => input.turnId,
        rescue: ports.rescue,
        onEntry: (entry) => hooks.onAnswered?.(resultOf(entry, typeof entry.error === 'string' ? entry.error : null)),
        signal: input.signal,
        onText: hooks.onText,
        onToolCalls: (calls) => {
          const parsed = ollamaToolCallsOf(calls);
          toolCalls.push(...parsed);
          if (parsed.length > 0) hooks.onToolCalls(parsed);
        },
        answer: async (request, context): Promise<Answer> => {
          const answer = await streamAnswer(request, context);
          failure = answer.failure;
          if (answer.status !== 'interrupted') return answer;
          const reason = input.signal.reason as CutReason;
          return { ...answer, status: reason === 'stop' ? 'stopped' : 'interrupted', fields: { ...answer.fields, error: CUT_ERRORS[reason] } };
        },
      });
      return resultOf(result.entry, result.failure);
    },
  };
}
