import type { Settings } from '../config/settings.js';
import type { TurnStatus } from '../log/entry.js';
import { OllamaTransport } from '../ollama/transport.js';
import { startSpinner } from '../output/spinner.js';
import { TokenBuffer } from '../output/token-buffer.js';
import { policyForLog } from '../replay/plan.js';
import type { ReplayPlan } from '../replay/plan.js';
import { prepareTurn, runTurn, streamAnswer } from '../turn/turn.js';
import type { TurnInput } from '../turn/turn.js';
import type { Io } from './io.js';
import type { Outcome } from './outcome.js';

export interface AskOptions extends TurnInput {
  explain: boolean;
  json: boolean;
}

/** `argo "question"`: one turn, printed as it streams (or as JSON, or explained). How it ended. */
export async function ask(settings: Settings, options: AskOptions, io: Io): Promise<Outcome> {
  if (options.explain) {
    const { plan } = await prepareTurn(settings, options);
    io.stdout.write(options.json ? `${JSON.stringify(explainJson(plan))}\n` : explainText(plan, settings));
    return 'ok';
  }

  const transport = new OllamaTransport({
    host: settings.host,
    attempts: settings.retries.attempts,
    initialDelayMs: settings.retries.initialDelayMs,
    idleMs: settings.timeouts.idleMs,
  });
  const buffer = new TokenBuffer((text) => io.stdout.write(text), settings.tokenBuffer);
  let stopSpinner = (): void => undefined;
  let wrote = '';
  const controller = new AbortController();
  // Ctrl-C stays handled (the answer ends cleanly) until the turn is written, so it is never half-logged.
  const stopListening = io.onInterrupt(() => controller.abort());
  try {
    const result = await runTurn(settings, options, {
      transport,
      now: io.now,
      clock: io.clock,
      newId: io.newId,
      rescue: io.rescue,
      signal: controller.signal,
      onText: (text) => {
        stopSpinner();
        wrote = text;
        if (!options.json) buffer.push(text);
      },
      onRetry: (attempt, delayMs, kind) => {
        const reason = kind === 'busy' ? `Ollama at ${settings.host} is busy` : `cannot reach Ollama at ${settings.host}`;
        io.stderr.write(`argo: ${reason}; retrying in ${(delayMs / 1000).toFixed(2)}s (attempt ${attempt} of ${settings.retries.attempts})\n`);
      },
      answer: async (request, context) => {
        if (io.stderr.isTTY && !options.json) stopSpinner = startSpinner(io.stderr, `asking ${request.body.model}…`);
        try {
          return await streamAnswer(request, context);
        } finally {
          buffer.flush();
          stopSpinner();
          if (!options.json && wrote !== '' && !wrote.endsWith('\n')) io.stdout.write('\n');
        }
      },
    });
    const { entry } = result;
    if (options.json) {
      const { id, session, model, model_response: response, status, replay_policy, timings, error } = entry;
      io.stdout.write(`${JSON.stringify({ id, session, model, response, status, replay_policy, timings, error })}\n`);
    }
    return reportOutcome(entry.status, result.failure, io, options.log);
  } finally {
    stopListening();
  }
}

function reportOutcome(status: TurnStatus, failure: string | null, io: Io, logged: boolean): Outcome {
  if (status === 'ok') return 'ok';
  const kept = logged ? ` (logged as ${status})` : '';
  if (status === 'interrupted') {
    io.stderr.write(`argo: interrupted${kept}\n`);
    return 'interrupted';
  }
  io.stderr.write(`argo: ${failure ?? 'the request failed'}${kept}\n`);
  return 'failed';
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
