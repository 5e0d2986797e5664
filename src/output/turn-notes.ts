// Pure: the one-line notes a turn prints on stderr — what replay sent and left out, and Ollama's
// figures for `--stats`.
import { plural } from './count.js';

/** The parts of a turn's replay diagnostics (the log's replay_policy) the note reads. */
export interface ReplaySummary {
  entries_available: number;
  entries_filtered: number;
  filtered_types: readonly string[];
  entries_used: number;
  reason: string;
  context_strength: string;
  budget: number;
  decisions: readonly { entry_type: string; outcome: string }[];
}

/** Where the model of a turn came from, in the order that decides it. */
export type ModelSource = 'flag' | 'chat' | 'session' | 'env' | 'config' | 'default';

export const MODEL_SOURCE_WORDS: Record<ModelSource, string> = {
  flag: '--model',
  chat: '/model',
  session: "the session's last model",
  env: 'ARGO_MODEL',
  config: 'config.json',
  default: 'the default',
};


/**
 * `replayed 5 of 8 turns · strong · left out 2 question turns (session replay does not send question
 * turns) · 1 turn over the 5500-char budget · model argo (config.json)`; a turn sent shortened adds
 * `, 1 shortened to fit` there (`1 turn shortened to fit the 5500-char budget` when none was dropped).
 */
export function replayNote(policy: ReplaySummary, model: { name: string; source: ModelSource }): string {
  const parts = [`replayed ${policy.entries_used} of ${plural(policy.entries_available, 'turn')}`, policy.context_strength];
  const filtered = policy.decisions.filter((turn) => turn.outcome === 'filtered');
  if (policy.entries_filtered > 0) {
    const counts = new Map<string, number>();
    for (const turn of filtered) counts.set(turn.entry_type, (counts.get(turn.entry_type) ?? 0) + 1);
    // Older decisions may have been left out of the log line: fall back to the total.
    const listed = counts.size > 0 && filtered.length === policy.entries_filtered ? [...counts].map(([type, count]) => plural(count, `${type} turn`)).join(', ') : plural(policy.entries_filtered, 'turn');
    parts.push(`left out ${listed} (${policy.reason} replay does not send ${policy.filtered_types.join(' or ')} turns)`);
  }
  // From the totals: a logged policy lists the newest decisions only, and the oldest are the ones dropped.
  const trimmed = Math.max(0, policy.entries_available - policy.entries_used - policy.entries_filtered);
  // Only protected turns, the newest loaded, are ever elided: a logged policy still lists them.
  const elided = policy.decisions.filter((turn) => turn.outcome === 'elided').length;
  if (trimmed > 0) parts.push(`${plural(trimmed, 'turn')} over the ${policy.budget}-char budget${elided > 0 ? `, ${elided} shortened to fit` : ''}`);
  else if (elided > 0) parts.push(`${plural(elided, 'turn')} shortened to fit the ${policy.budget}-char budget`);
  parts.push(`model ${model.name} (${MODEL_SOURCE_WORDS[model.source]})`);
  return parts.join(' · ');
}

export interface OllamaFigures {
  prompt_eval_count: number | null;
  eval_count: number | null;
  eval_duration_ns: number | null;
  load_duration_ns: number | null;
  total_duration_ns: number | null;
}

/** The figures as numbers for `--json`: tokens, tokens per second, seconds. */
export interface TurnStats {
  prompt_tokens: number | null;
  answer_tokens: number | null;
  tokens_per_second: number | null;
  load_seconds: number | null;
  total_seconds: number | null;
}

const seconds = (ns: number | null): number | null => (ns === null ? null : Math.round(ns / 1e6) / 1000);

export function turnStats(figures: OllamaFigures): TurnStats {
  const rate = figures.eval_count !== null && figures.eval_duration_ns !== null && figures.eval_duration_ns > 0 ? figures.eval_count / (figures.eval_duration_ns / 1e9) : null;
  return {
    prompt_tokens: figures.prompt_eval_count,
    answer_tokens: figures.eval_count,
    tokens_per_second: rate === null ? null : Math.round(rate * 100) / 100,
    load_seconds: seconds(figures.load_duration_ns),
    total_seconds: seconds(figures.total_duration_ns),
  };
}

/** `prompt 26 tokens · answer 298 tokens · 45.30 tokens/s · load 0.012s · total 6.840s`, as `ollama run --verbose` reports them. */
export function statsLine(stats: TurnStats): string | null {
  if (stats.answer_tokens === null && stats.prompt_tokens === null) return null;
  const show = (value: number | null, unit: string, digits: number): string => (value === null ? '-' : `${value.toFixed(digits)}${unit}`);
  return [
    `prompt ${stats.prompt_tokens ?? '-'} tokens`,
    `answer ${stats.answer_tokens ?? '-'} tokens`,
    show(stats.tokens_per_second, ' tokens/s', 2),
    `load ${show(stats.load_seconds, 's', 3)}`,
    `total ${show(stats.total_seconds, 's', 3)}`,
  ].join(' · ');
}
