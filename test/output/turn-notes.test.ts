import { describe, expect, it } from 'vitest';
import { replayNote, statsLine, turnStats } from '../../src/output/turn-notes.js';
import type { ReplayPolicyLog, TurnDecision } from '../../src/replay/types.js';

const decision = (id: string, entry_type: TurnDecision['entry_type'], outcome: TurnDecision['outcome']): TurnDecision => ({ id, entry_type, outcome, protected: false, chars: outcome === 'used' ? 10 : 0 });

function policyOf(decisions: TurnDecision[], extra: Partial<ReplayPolicyLog> = {}): ReplayPolicyLog {
  const filtered = decisions.filter((turn) => turn.outcome === 'filtered');
  return {
    entries_available: decisions.length,
    entries_filtered: filtered.length,
    filtered_types: [...new Set(filtered.map((turn) => turn.entry_type))],
    entries_used: decisions.filter((turn) => turn.outcome === 'used' || turn.outcome === 'elided').length,
    chars_used: 100,
    trimmed: decisions.some((turn) => turn.outcome === 'trimmed'),
    reason: 'session',
    context_strength: 'strong',
    budget: 5500,
    decisions,
    decisions_omitted: 0,
    ...extra,
  };
}

describe('replayNote', () => {
  it.each([
    [
      'everything sent',
      policyOf([decision('a', 'instruction', 'used'), decision('b', 'correction', 'used')]),
      { name: 'argo', source: 'default' as const },
      'replayed 2 of 2 turns · strong · model argo (the default)',
    ],
    [
      'plain Q&A under --replay session: the questions are left out, and the note says why',
      policyOf([decision('a', 'question', 'filtered'), decision('b', 'question', 'filtered'), decision('c', 'instruction', 'used')], { context_strength: 'weak' }),
      { name: 'llama3:8b', source: 'session' as const },
      "replayed 1 of 3 turns · weak · left out 2 question turns (session replay does not send question turns) · model llama3:8b (the session's last model)",
    ],
    [
      'filtered and trimmed',
      policyOf([decision('a', 'meta', 'filtered'), decision('b', 'question', 'filtered'), decision('c', 'instruction', 'trimmed'), decision('d', 'instruction', 'used')], { reason: 'continuation', context_strength: 'moderate' }),
      { name: 'argo', source: 'config' as const },
      'replayed 1 of 4 turns · moderate · left out 1 meta turn, 1 question turn (continuation replay does not send meta or question turns) · 1 turn over the 5500-char budget · model argo (config.json)',
    ],
    [
      'a long session over a small budget: the turns dropped counted from the totals, not from the 50 decisions a log line keeps',
      policyOf([...Array.from({ length: 46 }, (_, i) => decision(`t${i}`, 'instruction', 'trimmed')), ...['u1', 'u2', 'u3', 'u4'].map((id) => decision(id, 'instruction', 'used'))], {
        entries_available: 56,
        decisions_omitted: 6,
        context_strength: 'moderate',
        budget: 200,
      }),
      { name: 'argo', source: 'default' as const },
      'replayed 4 of 56 turns · moderate · 52 turns over the 200-char budget · model argo (the default)',
    ],
    [
      'every decision at hand (the plan’s own): the same count',
      policyOf([...Array.from({ length: 52 }, (_, i) => decision(`t${i}`, 'instruction', 'trimmed')), ...['u1', 'u2', 'u3', 'u4'].map((id) => decision(id, 'instruction', 'used'))], { context_strength: 'moderate', budget: 200 }),
      { name: 'argo', source: 'default' as const },
      'replayed 4 of 56 turns · moderate · 52 turns over the 200-char budget · model argo (the default)',
    ],
    [
      'a protected turn sent shortened (replay.md’s elision example): said, though nothing was dropped',
      policyOf([decision('t5', 'instruction', 'elided'), decision('t6', 'instruction', 'used')], { context_strength: 'moderate' }),
      { name: 'argo', source: 'session' as const },
      "replayed 2 of 2 turns · moderate · 1 turn shortened to fit the 5500-char budget · model argo (the session's last model)",
    ],
    [
      'turns dropped and the protected ones shortened',
      policyOf([decision('a', 'instruction', 'trimmed'), decision('b', 'question', 'filtered'), decision('c', 'instruction', 'trimmed'), decision('d', 'instruction', 'elided'), decision('e', 'correction', 'elided')], {
        context_strength: 'moderate',
      }),
      { name: 'argo', source: 'flag' as const },
      'replayed 2 of 5 turns · moderate · left out 1 question turn (session replay does not send question turns) · 2 turns over the 5500-char budget, 2 shortened to fit · model argo (--model)',
    ],
    [
      'one turn dropped, one shortened',
      policyOf([decision('a', 'instruction', 'trimmed'), decision('b', 'instruction', 'used'), decision('c', 'instruction', 'elided')], { context_strength: 'moderate', budget: 300 }),
      { name: 'argo', source: 'config' as const },
      'replayed 2 of 3 turns · moderate · 1 turn over the 300-char budget, 1 shortened to fit · model argo (config.json)',
    ],
    [
      'decisions cut from a long log line',
      policyOf([decision('d', 'instruction', 'used')], { entries_available: 80, entries_filtered: 30, filtered_types: ['question'], entries_used: 50, decisions_omitted: 79 }),
      { name: 'm', source: 'flag' as const },
      'replayed 50 of 80 turns · strong · left out 30 turns (session replay does not send question turns) · model m (--model)',
    ],
  ])('%s', (_name, policy, model, note) => {
    expect(replayNote(policy, model)).toBe(note);
  });
});

describe('turnStats and statsLine', () => {
  it.each([
    [
      { prompt_eval_count: 26, eval_count: 298, eval_duration_ns: 6_578_000_000, load_duration_ns: 12_345_678, total_duration_ns: 6_840_000_000 },
      { prompt_tokens: 26, answer_tokens: 298, tokens_per_second: 45.3, load_seconds: 0.012, total_seconds: 6.84 },
      'prompt 26 tokens · answer 298 tokens · 45.30 tokens/s · load 0.012s · total 6.840s',
    ],
    [
      { prompt_eval_count: 5, eval_count: 3, eval_duration_ns: 0, load_duration_ns: null, total_duration_ns: null },
      { prompt_tokens: 5, answer_tokens: 3, tokens_per_second: null, load_seconds: null, total_seconds: null },
      'prompt 5 tokens · answer 3 tokens · - · load - · total -',
    ],
    [
      { prompt_eval_count: null, eval_count: null, eval_duration_ns: null, load_duration_ns: null, total_duration_ns: null },
      { prompt_tokens: null, answer_tokens: null, tokens_per_second: null, load_seconds: null, total_seconds: null },
      null,
    ],
  ])('%j', (figures, stats, line) => {
    expect(turnStats(figures)).toEqual(stats);
    expect(statsLine(turnStats(figures))).toBe(line);
  });
});
