// The replay pipeline's promises, for generated histories and policies: the same input gives the
// same plan, the budget is never exceeded, protected turns are always sent, order is kept, and
// reading words only as textsNeeded asks gives the plan reading them all would.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyBudget, codePoints, elideMiddle, RENDER_OVERHEAD, renderTurn, turnCost } from '../../src/replay/budget.js';
import type { CandidateTurn } from '../../src/replay/filter.js';
import { planTurn, selectHistory, textsNeeded } from '../../src/replay/plan.js';
import type { PlanInput, ReplayPlan } from '../../src/replay/plan.js';
import { checkReplayPolicy, DEFAULT_REPLAY_POLICY, MIN_BUDGET } from '../../src/replay/policy.js';
import type { ReplayPolicy } from '../../src/replay/policy.js';
import { ENTRY_TYPES, REPLAY_REASONS } from '../../src/replay/types.js';
import type { HistoryTurn, ReplaySpec } from '../../src/replay/types.js';
import { makePlanInput } from '../support/plan-input.js';
import { hostileText, runs, wellFormed } from '../support/property.js';

/** Prompts of every type (the classifier's words), and anything. */
const prompt = fc.oneof(
  fc.constantFrom('What is a monad?', 'Add tests', 'actually, I meant Rust', 'what did you say', 'please explain it step by step', 'hmm', 'what do you mean?', ''),
  hostileText(6),
);

/** Text of any length: short mostly, sometimes long enough to fill a budget alone. */
const sized = fc.tuple(hostileText(4), fc.oneof({ arbitrary: fc.nat({ max: 3 }), weight: 4 }, { arbitrary: fc.integer({ min: 10, max: 400 }), weight: 1 })).map(([text, times]) => text.repeat(times));

/** Earlier turns, oldest first, with unique ids; a type cached (as the index keeps it) or not. */
const history = fc
  .array(fc.record({ prompt: fc.oneof(prompt, sized), response: sized, entry_type: fc.option(fc.constantFrom(...ENTRY_TYPES), { nil: undefined }) }), { maxLength: 14 })
  .map((turns) => turns.map(({ entry_type, ...text }, i): HistoryTurn => ({ id: `t${i}`, ...text, ...(entry_type === undefined ? {} : { entry_type }) })));

const spec: fc.Arbitrary<ReplaySpec> = fc.oneof(fc.constant({ kind: 'none' as const }), fc.constant({ kind: 'session' as const }), fc.integer({ min: 1, max: 16 }).map((count) => ({ kind: 'last' as const, count })));

/** A policy checkReplayPolicy takes: budget and protected turns together, filters of any types. */
const policy: fc.Arbitrary<ReplayPolicy> = fc
  .record({
    protectedTurns: fc.nat({ max: 5 }),
    extra: fc.oneof(fc.nat({ max: 300 }), fc.nat({ max: 6000 })),
    strongMinTurns: fc.integer({ min: 1, max: 4 }),
    filters: fc.record({
      continuation: fc.subarray([...ENTRY_TYPES]),
      clarification: fc.subarray([...ENTRY_TYPES]),
      session: fc.subarray([...ENTRY_TYPES]),
    }),
  })
  .map(({ protectedTurns, extra, strongMinTurns, filters }) =>
    checkReplayPolicy({ ...DEFAULT_REPLAY_POLICY, protectedTurns, strongMinTurns, filters, budget: Math.max(MIN_BUDGET, protectedTurns * (RENDER_OVERHEAD + 1)) + extra }),
  );

const planInput: fc.Arbitrary<PlanInput> = fc
  .record({
    input: prompt,
    spec,
    reason: fc.option(fc.constantFrom(...REPLAY_REASONS), { nil: undefined }),
    history,
    policy,
    endpoint: fc.constantFrom('chat' as const, 'generate' as const),
  })
  .map(({ reason, endpoint, ...rest }) =>
    makePlanInput({
      ...rest,
      ...(reason === undefined ? {} : { reason }),
      request: { endpoint, model: 'argo', stream: true, options: {} },
    }),
  );

/** The replayed turns as the request carries them: [prompt, response] pairs. */
function sentTurns(plan: ReplayPlan, input: string): [string, string][] {
  const { request } = plan;
  if (request.endpoint === '/api/chat') {
    const pairs = request.body.messages.filter((message) => message.role !== 'system').slice(0, -1);
    const out: [string, string][] = [];
    for (let i = 0; i + 1 < pairs.length; i += 2) out.push([pairs[i]?.content ?? '', pairs[i + 1]?.content ?? '']);
    return out;
  }
  // Generate's prompt is the rendered turns, then the input; the turns' own text is known from the decisions.
  expect(request.body.prompt.endsWith(plan.replayedIds.length === 0 ? input : `User: ${input}\nAssistant:`)).toBe(true);
  return [];
}

/** The history with every turn's words dropped, as the index gives it before anything is read. */
const unread = (turns: readonly HistoryTurn[]): HistoryTurn[] => turns.map(({ id, entry_type }) => ({ id, ...(entry_type === undefined ? {} : { entry_type }) }));

describe('planTurn', () => {
  it('is deterministic: the same input (or a copy of it) gives the same plan', () => {
    fc.assert(
      fc.property(planInput, (input) => {
        const first = planTurn(input);
        expect(planTurn(input)).toEqual(first);
        expect(planTurn(structuredClone(input))).toEqual(first);
        expect(JSON.stringify(planTurn(input).request)).toBe(JSON.stringify(first.request));
      }),
      runs(200),
    );
  });

  it('never sends more than the budget, always sends the protected turns, keeps the order, and accounts for every turn', () => {
    fc.assert(
      fc.property(planInput, (input) => {
        const plan = planTurn(input);
        const log = plan.replayPolicy;
        if (log === null) {
          expect(plan.replayedIds).toEqual([]);
          return;
        }
        const loaded = selectHistory(input.spec, input.history);
        expect(log.chars_used).toBeLessThanOrEqual(input.policy.budget);
        expect(log.decisions.map((decision) => decision.id)).toEqual(loaded.map((turn) => turn.id));
        expect(log.chars_used).toBe(log.decisions.reduce((sum, decision) => sum + decision.chars, 0));
        // The newest protectedTurns turns are sent, whatever their type and length.
        const protectedIds = loaded.slice(Math.max(0, loaded.length - input.policy.protectedTurns)).map((turn) => turn.id);
        expect(log.decisions.filter((decision) => decision.protected).map((decision) => decision.id)).toEqual(protectedIds);
        for (const id of protectedIds) expect(plan.replayedIds).toContain(id);
        // Sent turns keep the history's order.
        const order = loaded.map((turn) => turn.id);
        expect([...plan.replayedIds].sort((a, b) => order.indexOf(a) - order.indexOf(b))).toEqual(plan.replayedIds);
        expect(log.decisions.filter((decision) => decision.outcome === 'used' || decision.outcome === 'elided').map((decision) => decision.id)).toEqual(plan.replayedIds);
        // What the request carries costs what the log says it does.
        const sent = sentTurns(plan, input.input);
        if (input.request.endpoint === 'chat') expect(sent.reduce((sum, [p, r]) => sum + turnCost({ prompt: p, response: r }), 0)).toBe(log.chars_used);
      }),
      runs(300),
    );
  });

  it('gives the same plan when the words are read only as textsNeeded asks, in few rounds', () => {
    fc.assert(
      fc.property(planInput, fc.integer({ min: 1, max: 10 }), (input, batch) => {
        const words = new Map(input.history.map((turn) => [turn.id, turn]));
        let known = unread(input.history);
        let rounds = 0;
        for (let asked = textsNeeded({ ...input, history: known }, batch); asked.length > 0; asked = textsNeeded({ ...input, history: known }, batch)) {
          expect(++rounds).toBeLessThanOrEqual(input.history.length + 1);
          const wanted = new Set(asked);
          known = known.map((turn) => (wanted.has(turn.id) ? { ...turn, prompt: words.get(turn.id)?.prompt ?? '', response: words.get(turn.id)?.response ?? '' } : turn));
        }
        expect(planTurn({ ...input, history: known })).toEqual(planTurn(input));
      }),
      runs(200),
    );
  });
});

describe('the budget', () => {
  /** Candidates oldest first, at most `cap / (RENDER_OVERHEAD + 1)` of them protected, as checkReplayPolicy allows. */
  const candidates = fc
    .tuple(
      fc.array(fc.record({ prompt: fc.oneof(prompt, sized), response: sized, isProtected: fc.boolean() }), { maxLength: 10 }),
      fc.integer({ min: 0, max: 3000 }),
    )
    .map(([turns, cap]) => {
      const room = Math.floor(cap / (RENDER_OVERHEAD + 1));
      let protectedCount = 0;
      const list = turns.map(({ isProtected, ...text }, i): CandidateTurn & { prompt: string; response: string } => {
        const marked = isProtected && protectedCount < room;
        if (marked) protectedCount++;
        return { id: `c${i}`, entry_type: 'question', protected: marked, ...text };
      });
      return { list, cap };
    });

  it('applyBudget keeps every protected turn, the newest others that fit, in order, within the cap', () => {
    fc.assert(
      fc.property(candidates, ({ list, cap }) => {
        const result = applyBudget(list, cap);
        expect(result.charsUsed).toBeLessThanOrEqual(cap);
        expect(result.charsUsed).toBe(result.used.reduce((sum, turn) => sum + turn.chars, 0));
        for (const turn of result.used) {
          expect(turn.chars).toBe(turnCost(turn));
          // Elision cuts at code points: a whole pair in, a whole pair out.
          const original = list.find((candidate) => candidate.id === turn.id);
          if (original && wellFormed(original.prompt)) expect(wellFormed(turn.prompt)).toBe(true);
          if (original && wellFormed(original.response)) expect(wellFormed(turn.response)).toBe(true);
        }
        const usedIds = result.used.map((turn) => turn.id);
        expect(usedIds).toEqual(list.filter((turn) => usedIds.includes(turn.id)).map((turn) => turn.id));
        expect(list.filter((turn) => turn.protected).every((turn) => usedIds.includes(turn.id))).toBe(true);
        // The unprotected turns sent are the newest ones: none is dropped after one is sent.
        const others = list.filter((turn) => !turn.protected).map((turn) => usedIds.includes(turn.id));
        const firstSent = others.indexOf(true);
        expect(firstSent === -1 || others.slice(firstSent).every(Boolean)).toBe(true);
        expect(result.used.length + result.dropped.length).toBe(list.length);
        expect(result.trimmed).toBe(result.dropped.length > 0 || result.used.some((turn) => turn.elided));
      }),
      runs(300),
    );
  });

  it('elideMiddle shortens to at most max code points, leaves what fits alone, and never splits a pair', () => {
    fc.assert(
      fc.property(sized, fc.nat({ max: 200 }), (text, max) => {
        const cut = elideMiddle(text, max);
        expect(codePoints(cut)).toBeLessThanOrEqual(Math.max(max, 0));
        if (codePoints(text) <= max) expect(cut).toBe(text);
        if (wellFormed(text)) expect(wellFormed(cut)).toBe(true);
      }),
      runs(300),
    );
  });

  it('elideMiddle cuts where an array of the code points would (head, marker, tail), lone surrogates and all', () => {
    // The rule as first written: every code point an element of an array.
    const byArray = (text: string, max: number): string => {
      const chars = Array.from(text);
      if (chars.length <= max) return text;
      for (let keep = Math.max(0, max - 24); keep >= 0; keep--) {
        const marker = ` [… ${chars.length - keep} characters elided …] `;
        if (keep > max - Array.from(marker).length) continue;
        const head = Math.ceil(keep / 2);
        return chars.slice(0, head).join('') + marker + (keep - head > 0 ? chars.slice(chars.length - (keep - head)).join('') : '');
      }
      return max > 0 ? '…' : '';
    };
    fc.assert(
      fc.property(sized, fc.nat({ max: 200 }), (text, max) => {
        expect(elideMiddle(text, max)).toBe(byArray(text, max));
      }),
      runs(300),
    );
  });

  it('a turn costs the code points of its rendering', () => {
    fc.assert(
      fc.property(sized, sized, (p, r) => {
        expect(turnCost({ prompt: p, response: r })).toBe(Array.from(renderTurn(p, r)).length);
      }),
      runs(100),
    );
  });
});
