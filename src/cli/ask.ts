import type { Settings } from '../config/settings.js';
import { RuntimeError } from '../errors.js';
import { DAY_PATTERN, TIMESTAMP_PATTERN } from '../log/entry.js';
import type { LogEntry, Timings, TurnStatus } from '../log/entry.js';
import type { recordTurn } from '../log/writer.js';
import { OllamaTransport } from '../ollama/transport.js';
import type { Metrics, StreamOutcome } from '../ollama/transport.js';
import { startSpinner } from '../output/spinner.js';
import { TokenBuffer } from '../output/token-buffer.js';
import { rulesFingerprint } from '../replay/classify.js';
import { planTurn, policyForLog } from '../replay/plan.js';
import type { ReplayPlan } from '../replay/plan.js';
import type { HistoryTurn, ReplayReason, ReplaySpec } from '../replay/types.js';
import { openSession, readSession } from '../sessions/store.js';
import type { Io } from './io.js';

export interface AskOptions {
  prompt: string;
  replay: ReplaySpec;
  reason?: ReplayReason;
  explain: boolean;
  json: boolean;
  stream: boolean;
  log: boolean;
}

/** The log's two date forms: ISO 8601 local time with offset, and the daily file's local date. */
async function dateStamps(date: Date): Promise<{ timestamp: string; day: string }> {
  // Loaded while the answer streams: only the log line needs it, so the request goes out sooner.
  const { format } = await import('date-fns/format');
  return { timestamp: format(date, TIMESTAMP_PATTERN), day: format(date, DAY_PATTERN) };
}

/** One turn: plan the replay, stream the answer, log it. Returns the exit code. */
export async function ask(settings: Settings, options: AskOptions, io: Io): Promise<number> {
  const paths = settings.paths;
  const existing = await readSession(paths.sessions, settings.session);
  const model = settings.modelFromFlag ? settings.model : (existing?.last_model ?? settings.model);
  const rules = rulesFingerprint(settings.replay.classify);
  const planWith = (history: HistoryTurn[]): ReplayPlan =>
    planTurn({
      input: options.prompt,
      spec: options.replay,
      ...(options.reason ? { reason: options.reason } : {}),
      history,
      policy: settings.replay,
      style: settings.style,
      mode: settings.mode,
      persona: settings.persona,
      verbosity: settings.verbosity,
      request: {
        endpoint: settings.api,
        model,
        stream: options.stream,
        options: settings.options,
        ...(settings.keepAlive !== undefined ? { keepAlive: settings.keepAlive } : {}),
      },
    });
  // The history reader is loaded only when there is history to replay: a plain question starts sooner.
  const plan =
    existing && options.replay.kind !== 'none'
      ? await (await import('../sessions/turns.js')).withReplayHistory(paths, existing, options.replay, settings.replay.classify, planWith)
      : planWith([]);

  if (options.explain) {
    io.stdout.write(options.json ? `${JSON.stringify(explainJson(plan))}\n` : explainText(plan, settings));
    return 0;
  }

  const startedAt = io.now();
  // Needed only to log the turn: loaded while the answer streams.
  const stamps = dateStamps(startedAt);
  const writer = options.log ? import('../log/writer.js') : null;
  const transport = new OllamaTransport({
    host: settings.host,
    attempts: settings.retries.attempts,
    initialDelayMs: settings.retries.initialDelayMs,
    idleMs: settings.timeouts.idleMs,
  });
  const buffer = new TokenBuffer((text) => io.stdout.write(text), settings.stream);
  const stopSpinner = io.stderr.isTTY && !options.json ? startSpinner(io.stderr, `asking ${model}…`) : () => {};
  const controller = new AbortController();
  const stopListening = io.onInterrupt(() => controller.abort());
  const started = io.clock();
  let firstTokenMs: number | null = null;
  let response = '';

  let outcome: StreamOutcome;
  try {
    outcome = await transport.stream(plan.request, {
      signal: controller.signal,
      onText: (text) => {
        if (firstTokenMs === null) {
          firstTokenMs = Math.round(io.clock() - started);
          stopSpinner();
        }
        response += text;
        if (!options.json) buffer.push(text);
      },
      onRetry: (attempt, delayMs, kind) => {
        const reason = kind === 'busy' ? `Ollama at ${settings.host} is busy` : `cannot reach Ollama at ${settings.host}`;
        io.stderr.write(`argo: ${reason}; retrying in ${(delayMs / 1000).toFixed(2)}s (attempt ${attempt} of ${settings.retries.attempts})\n`);
      },
    });
  } catch (error) {
    stopListening();
    throw error;
  } finally {
    buffer.flush();
    stopSpinner();
  }
  const totalMs = Math.round(io.clock() - started);
  if (!options.json && response !== '' && !response.endsWith('\n')) io.stdout.write('\n');

  // Ctrl-C stays handled (ignored) until the turn is written, so an answer is never half-logged.
  try {
    const { timestamp, day } = await stamps;
    const failure = outcome.failure?.kind === 'model-missing' ? await modelMissing(transport, model, settings.host) : outcome.failure?.message;
    const entry: LogEntry = {
      id: io.newId(),
      timestamp,
      session: settings.session,
      session_id: existing?.id ?? '',
      status: outcome.status,
      entry_type: plan.entryType,
      model,
      endpoint: settings.api,
      active_mode: settings.mode,
      persona: settings.persona,
      verbosity: plan.verbosity,
      replay: {
        enabled: options.replay.kind !== 'none',
        count: options.replay.kind === 'last' ? options.replay.count : null,
        session: options.replay.kind === 'session',
      },
      user_prompt: options.prompt,
      model_response: response,
      replay_policy: policyForLog(plan.replayPolicy),
      replayed_ids: plan.replayedIds,
      timings: timingsOf(outcome.metrics, firstTokenMs, totalMs),
      done_reason: outcome.metrics.done_reason,
      error: failure ?? (outcome.status === 'interrupted' ? 'interrupted by the user' : null),
    };

    if (writer) await writeOrRescue(settings, entry, day, rules, io, (await writer).recordTurn);
    if (options.json) {
      const { id, model: usedModel, status, replay_policy, timings, error } = entry;
      io.stdout.write(`${JSON.stringify({ id, session: entry.session, model: usedModel, response, status, replay_policy, timings, error })}\n`);
    }
    return reportOutcome(outcome.status, failure, io, options.log);
  } finally {
    stopListening();
  }
}

function reportOutcome(status: TurnStatus, failure: string | undefined, io: Io, logged: boolean): number {
  if (status === 'ok') return 0;
  const kept = logged ? ` (logged as ${status})` : '';
  if (status === 'interrupted') {
    io.stderr.write(`argo: interrupted${kept}\n`);
    return 130;
  }
  io.stderr.write(`argo: ${failure ?? 'the request failed'}${kept}\n`);
  return 1;
}

/** The turn is the user's words: if the log cannot take it, keep it somewhere and say where. */
async function writeOrRescue(
  settings: Settings,
  entry: LogEntry,
  day: string,
  rules: string,
  io: Io,
  record: typeof recordTurn,
): Promise<void> {
  try {
    const session = await openSession(settings.paths.sessions, settings.session, entry.timestamp);
    entry.session_id = session.id;
    await record(settings.paths, session, entry, day, rules);
  } catch (error) {
    const rescue = await io.rescue(`${JSON.stringify(entry)}\n`);
    throw new RuntimeError(
      `cannot write the log in ${settings.paths.logs} (${(error as Error).message}); the turn was saved to ${rescue} — fix the directory's permissions or free space`,
      { cause: error },
    );
  }
}

async function modelMissing(transport: OllamaTransport, model: string, host: string): Promise<string> {
  const installed = await transport.installedModels().catch(() => null);
  const list = installed === null ? '' : installed.length === 0 ? '; no models are installed' : `; installed: ${installed.join(', ')}`;
  return `model "${model}" not found on Ollama at ${host}${list}. Pull it with "ollama pull ${model}", create it (docs/Modelfile), or choose one with --model`;
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

function explainJson(plan: ReplayPlan): object {
  return {
    replay_policy: policyForLog(plan.replayPolicy),
    replayed_ids: plan.replayedIds,
    turns: plan.replayPolicy?.decisions ?? [],
    request: plan.request,
  };
}

function explainText(plan: ReplayPlan, settings: Settings): string {
  const lines = [`session    ${settings.session}`, `entry type ${plan.entryType}`, `verbosity  ${plan.verbosity}`];
  const policy = plan.replayPolicy;
  if (policy === null) {
    lines.push('replay     none');
  } else {
    lines.push(
      `replay     ${policy.entries_available} ok turns loaded, reason ${policy.reason}`,
      `filtered   ${policy.entries_filtered}${policy.filtered_types.length ? ` (${policy.filtered_types.join(', ')})` : ''}`,
      `budget     ${policy.chars_used} of ${policy.budget} chars, ${policy.entries_used} turns used${policy.trimmed ? ', trimmed' : ''}`,
      `strength   ${policy.context_strength}`,
    );
    for (const turn of policy.decisions) {
      lines.push(`  ${turn.id.padEnd(14)} ${turn.entry_type.padEnd(12)} ${turn.outcome.padEnd(9)} ${String(turn.chars).padStart(6)} chars${turn.protected ? '  protected' : ''}`);
    }
  }
  lines.push(`request    POST ${settings.host}${plan.request.endpoint}`, JSON.stringify(plan.request.body, null, 2));
  return `${lines.join('\n')}\n`;
}
