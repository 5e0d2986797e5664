// Pure: aggregates of a stream of turns in memory that does not grow with the number of turns
// (counts per category, and a histogram of distinct values for percentiles).
import { BASIC_TURN_STATUSES } from '../log/entry.js';
import type { LogEntry } from '../log/entry.js';
import type { CountedTurn } from './search.js';
import { ENTRY_TYPES } from '../replay/types.js';
import { REASON_FILTERS, STRENGTH_FILTERS } from './query.js';

export interface Spread {
  mean: number | null;
  /** Nearest-rank 95th percentile: the smallest value at or above 95% of the values. */
  p95: number | null;
}

export interface HistoryStats {
  turns: number;
  first: string | null;
  last: string | null;
  by_type: Record<string, number>;
  by_status: Record<string, number>;
  by_strength: Record<string, number>;
  by_reason: Record<string, number>;
  by_model: Record<string, number>;
  /** Turns that asked for replay (replay_policy not null). */
  replayed: number;
  trimmed: number;
  /** trimmed / replayed, null when nothing was replayed. */
  trimmed_rate: number | null;
  chars_used: Spread;
  first_token_ms: Spread;
  /** Sum of eval_count over sum of eval_duration, for turns where Ollama reported both. */
  tokens_per_second: number | null;
  eval_tokens: number;
}

class Histogram {
  private readonly counts = new Map<number, number>();
  private n = 0;
  private sum = 0;

  add(value: number): void {
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
    this.n++;
    this.sum += value;
  }

  spread(): Spread {
    if (this.n === 0) return { mean: null, p95: null };
    const rank = Math.ceil(0.95 * this.n);
    let seen = 0;
    let p95 = 0;
    for (const value of [...this.counts.keys()].sort((a, b) => a - b)) {
      seen += this.counts.get(value) ?? 0;
      p95 = value;
      if (seen >= rank) break;
    }
    return { mean: round(this.sum / this.n, 1), p95 };
  }
}

export class StatsAccumulator {
  private turns = 0;
  private first: { time: number; text: string } | null = null;
  private last: { time: number; text: string } | null = null;
  private readonly byType = zeroes(ENTRY_TYPES);
  private readonly byStatus = zeroes(BASIC_TURN_STATUSES);
  private readonly byStrength = zeroes(STRENGTH_FILTERS);
  private readonly byReason = zeroes(REASON_FILTERS);
  private readonly byModel = zeroes([]);
  private replayed = 0;
  private trimmed = 0;
  private readonly chars = new Histogram();
  private readonly firstToken = new Histogram();
  private evalTokens = 0;
  private evalNs = 0;

  add(entry: CountedTurn): void {
    this.turns++;
    const time = Date.parse(entry.timestamp);
    if (!Number.isNaN(time)) {
      if (!this.first || time < this.first.time) this.first = { time, text: entry.timestamp };
      if (!this.last || time >= this.last.time) this.last = { time, text: entry.timestamp };
    }
    bump(this.byType, entry.entry_type);
    bump(this.byStatus, entry.status);
    bump(this.byModel, entry.model);
    const policy = entry.replay_policy;
    bump(this.byStrength, policy ? policy.context_strength : 'none');
    bump(this.byReason, policy ? policy.reason : 'none');
    if (policy) {
      this.replayed++;
      if (policy.trimmed) this.trimmed++;
      if (Number.isFinite(policy.chars_used)) this.chars.add(policy.chars_used);
    }
    this.addTimings(entry.timings);
  }

  /** parseEntry does not check timings: an old or hand-edited line may have none, or only some. */
  private addTimings(timings: Partial<LogEntry['timings']> | undefined): void {
    if (!timings) return;
    if (typeof timings.first_token_ms === 'number') this.firstToken.add(timings.first_token_ms);
    if (typeof timings.eval_count === 'number' && typeof timings.eval_duration_ns === 'number' && timings.eval_duration_ns > 0) {
      this.evalTokens += timings.eval_count;
      this.evalNs += timings.eval_duration_ns;
    }
  }

  result(): HistoryStats {
    return {
      turns: this.turns,
      first: this.first?.text ?? null,
      last: this.last?.text ?? null,
      by_type: { ...this.byType },
      by_status: { ...this.byStatus },
      by_strength: { ...this.byStrength },
      by_reason: { ...this.byReason },
      by_model: { ...this.byModel },
      replayed: this.replayed,
      trimmed: this.trimmed,
      trimmed_rate: this.replayed === 0 ? null : round(this.trimmed / this.replayed, 4),
      chars_used: this.chars.spread(),
      first_token_ms: this.firstToken.spread(),
      tokens_per_second: this.evalNs === 0 ? null : round(this.evalTokens / (this.evalNs / 1e9), 2),
      eval_tokens: this.evalTokens,
    };
  }
}

/** Null-prototype maps: a model called "__proto__" is a valid Ollama name. */
function zeroes(keys: readonly string[]): Record<string, number> {
  const counts = Object.create(null) as Record<string, number>;
  for (const key of keys) counts[key] = 0;
  return counts;
}

function bump(counts: Record<string, number>, key: unknown): void {
  const name = typeof key === 'string' && key !== '' ? key : 'unknown';
  counts[name] = (counts[name] ?? 0) + 1;
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
