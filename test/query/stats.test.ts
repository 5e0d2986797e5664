import { describe, expect, it } from 'vitest';
import { StatsAccumulator } from '../../src/query/stats.js';
import type { LogEntry } from '../../src/log/entry.js';
import { makeEntry, policy } from './helpers.js';

function statsOf(entries: readonly LogEntry[]) {
  const totals = new StatsAccumulator();
  for (const entry of entries) totals.add(entry);
  return totals.result();
}

describe('StatsAccumulator', () => {
  it('reports zeroes and nulls for no turns', () => {
    expect(statsOf([])).toEqual({
      turns: 0,
      first: null,
      last: null,
      by_type: { question: 0, instruction: 0, correction: 0, meta: 0, other: 0 },
      by_status: { ok: 0, interrupted: 0, stopped: 0, error: 0 },
      by_strength: { strong: 0, moderate: 0, weak: 0, none: 0 },
      by_reason: { continuation: 0, clarification: 0, session: 0, none: 0 },
      by_model: {},
      replayed: 0,
      trimmed: 0,
      trimmed_rate: null,
      chars_used: { mean: null, p95: null },
      first_token_ms: { mean: null, p95: null },
      tokens_per_second: null,
      eval_tokens: 0,
    });
  });

  it('counts by category, rates trimming over replayed turns, and sums tokens over their time', () => {
    const entries = [
      makeEntry({ timestamp: '2025-01-02T10:00:00Z', entry_type: 'question', replay_policy: null }),
      makeEntry({ timestamp: '2025-01-01T09:00:00Z', entry_type: 'instruction', model: 'llama3:8b', replay_policy: policy({ trimmed: true, chars_used: 300 }) }),
      makeEntry({ timestamp: '2025-01-03T08:00:00Z', entry_type: 'instruction', status: 'error', replay_policy: policy({ context_strength: 'weak', reason: 'clarification', chars_used: 100 }) }),
      makeEntry({
        entry_type: 'meta',
        status: 'interrupted',
        replay_policy: policy({ context_strength: 'moderate', reason: 'session', chars_used: 200 }),
        timings: { ...makeEntry().timings, first_token_ms: null, eval_count: null, eval_duration_ns: null },
      }),
    ];
    const stats = statsOf(entries);
    expect(stats).toMatchObject({
      turns: 4,
      first: '2025-01-01T09:00:00Z',
      last: '2025-01-03T08:00:00Z',
      by_type: { question: 1, instruction: 2, correction: 0, meta: 1, other: 0 },
      by_status: { ok: 2, interrupted: 1, stopped: 0, error: 1 },
      by_strength: { strong: 1, moderate: 1, weak: 1, none: 1 },
      by_reason: { continuation: 1, clarification: 1, session: 1, none: 1 },
      by_model: { argo: 3, 'llama3:8b': 1 },
      replayed: 3,
      trimmed: 1,
      trimmed_rate: 0.3333,
      chars_used: { mean: 200, p95: 300 },
      first_token_ms: { mean: 100, p95: 100 },
      // 3 turns × 50 tokens in 3 × 1 s
      tokens_per_second: 50,
      eval_tokens: 150,
    });
  });

  it.each<[number[], number, number]>([
    [[5], 5, 5],
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], 10.5, 19],
    [[...Array.from({ length: 99 }, () => 10), 1000], 19.9, 10],
    [[...Array.from({ length: 94 }, () => 10), ...Array.from({ length: 6 }, () => 1000)], 69.4, 1000],
  ])('chars_used %j: mean %d, nearest-rank p95 %d', (values, mean, p95) => {
    const stats = statsOf(values.map((chars_used) => makeEntry({ replay_policy: policy({ chars_used }) })));
    expect(stats.chars_used).toEqual({ mean, p95 });
  });

  it('weights tokens per second by time, not by turn', () => {
    const fast = makeEntry({ timings: { ...makeEntry().timings, eval_count: 100, eval_duration_ns: 1e9 } });
    const slow = makeEntry({ timings: { ...makeEntry().timings, eval_count: 10, eval_duration_ns: 9e9 } });
    expect(statsOf([fast, slow]).tokens_per_second).toBe(11);
  });

  it('counts values it does not know under their own name, and a model called __proto__ safely', () => {
    const odd = makeEntry({ entry_type: 'musing' as LogEntry['entry_type'], model: '__proto__' });
    const stats = statsOf([odd]);
    expect(stats.by_type.musing).toBe(1);
    expect(JSON.stringify(stats.by_model)).toBe('{"__proto__":1}');
  });
});
