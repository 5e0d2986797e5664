import { describe, expect, it } from 'vitest';
import { codePoints, renderTurn, turnCost } from '../../src/replay/budget.js';
import { classifyEntry, rulesFingerprint } from '../../src/replay/classify.js';
import { LOAD_BATCH, LOGGED_DECISIONS, planTurn, policyForLog, selectHistory, textsNeeded } from '../../src/replay/plan.js';
import type { PlanInput, ReplayPlan } from '../../src/replay/plan.js';
import { checkReplayPolicy, DEFAULT_REPLAY_POLICY, DEFAULT_STYLE_POLICY, PolicyError } from '../../src/replay/policy.js';
import type { ReplayPolicy } from '../../src/replay/policy.js';
import type { HistoryTurn, ReplayPolicyLog, ReplaySpec, TurnDecision, TurnText } from '../../src/replay/types.js';
import { at } from '../support/defined.js';
import { makePlanInput } from '../support/plan-input.js';
import type { PlanInputFields } from '../support/plan-input.js';

type EagerTurn = { id: string } & TurnText;

const { confidence } = DEFAULT_REPLAY_POLICY;
const { personas, modes, verbosity } = DEFAULT_STYLE_POLICY;
const MARKER = / \[… \d+ characters elided …\] /u;

function turn(id: string, prompt: string, response = `Answer ${id}.`): EagerTurn {
  return { id, prompt, response };
}

/** Short answers here, unless a test asks for another verbosity. */
function shortInput(fields: PlanInputFields): PlanInput {
  return makePlanInput({ verbosity: 'short', ...fields });
}

function plan(fields: PlanInputFields): ReplayPlan {
  return planTurn(shortInput(fields));
}

function withBudget(budget: number): ReplayPolicy {
  return checkReplayPolicy({ ...DEFAULT_REPLAY_POLICY, budget });
}

/** [role, content] of every chat message. */
function messages(result: ReplayPlan): [string, string][] {
  if (result.request.endpoint !== '/api/chat') throw new Error('expected a chat request');
  return result.request.body.messages.map((m) => [m.role, m.content]);
}

function system(result: ReplayPlan): string {
  const first = messages(result)[0];
  if (first?.[0] !== 'system') throw new Error('expected a system message');
  return first[1];
}

/** The decisions as compact rows: [id, entry_type, outcome, protected]. */
function rows(log: ReplayPolicyLog | null): [string, string, string, boolean][] {
  return (log?.decisions ?? []).map((d: TurnDecision) => [d.id, d.entry_type, d.outcome, d.protected]);
}

const cost = (...turns: EagerTurn[]): number => turns.reduce((sum, t) => sum + turnCost(t), 0);

describe('--replay none: nothing happens', () => {
  const history = [turn('h1', 'Explain monads'), turn('h2', 'Add tests')];

  it('sends no replay block and no confidence instruction over /api/chat; replay_policy is null', () => {
    const result = plan({ input: 'Explain monads', spec: { kind: 'none' }, history });
    expect(result.replayPolicy).toBeNull();
    expect(result.replayedIds).toEqual([]);
    expect(result.entryType).toBe('instruction');
    expect(messages(result)).toEqual([
      ['system', `${personas.neutral}\n${verbosity.short}`],
      ['user', 'Explain monads'],
    ]);
  });

  it('sends the bare input over /api/generate', () => {
    const result = plan({
      input: 'Explain monads',
      spec: { kind: 'none' },
      history,
      request: { endpoint: 'generate', model: 'argo', stream: true, options: {} },
    });
    expect(result.request).toEqual({
      endpoint: '/api/generate',
      body: { model: 'argo', prompt: 'Explain monads', system: `${personas.neutral}\n${verbosity.short}`, stream: true },
    });
  });

  it.each(Object.values(confidence))('never injects %j', (text) => {
    for (const endpoint of ['chat', 'generate'] as const) {
      const result = plan({ input: 'hi', spec: { kind: 'none' }, history, request: { endpoint, model: 'argo', stream: true, options: {} } });
      expect(JSON.stringify(result.request.body)).not.toContain(text);
    }
  });
});

describe('prompt order: mode, persona, verbosity, confidence, replay, new input', () => {
  const history = [turn('h1', 'Write a parser', 'Here is a parser.'), turn('h2', 'Add error recovery', 'Done.')];
  const base = { input: 'Now add tests', spec: { kind: 'last', count: 2 } as const, history, mode: 'code', persona: 'teacher', verbosity: 'long' as const };
  const instructions = [modes.code, personas.teacher, verbosity.long, confidence.strong].join('\n');

  it('/api/chat: one system message, alternating user/assistant turns, then the new user message', () => {
    const result = plan(base);
    expect(result.replayPolicy?.context_strength).toBe('strong');
    expect(messages(result)).toEqual([
      ['system', instructions],
      ['user', 'Write a parser'],
      ['assistant', 'Here is a parser.'],
      ['user', 'Add error recovery'],
      ['assistant', 'Done.'],
      ['user', 'Now add tests'],
    ]);
  });

  it('/api/generate: system holds the instructions, the prompt holds the replay then the new input', () => {
    const result = plan({ ...base, request: { endpoint: 'generate', model: 'argo', stream: false, options: { seed: 1 } } });
    expect(result.request).toEqual({
      endpoint: '/api/generate',
      body: {
        model: 'argo',
        prompt: 'User: Write a parser\nAssistant: Here is a parser.\nUser: Add error recovery\nAssistant: Done.\nUser: Now add tests\nAssistant:',
        system: instructions,
        stream: false,
        options: { seed: 1 },
      },
    });
  });

  it('the replay part of the generate prompt is exactly chars_used code points', () => {
    const result = plan({ ...base, request: { endpoint: 'generate', model: 'argo', stream: true, options: {} } });
    if (result.request.endpoint !== '/api/generate') throw new Error('expected generate');
    const replayText = result.request.body.prompt.slice(0, -`User: ${base.input}\nAssistant:`.length);
    expect(codePoints(replayText)).toBe(result.replayPolicy?.chars_used);
    expect(result.replayPolicy?.chars_used).toBe(cost(...history));
  });
});

describe('the seed\'s clarification example (8 available entries)', () => {
  // The seed's list, oldest first, padded to 8 with one more question and one more instruction.
  const history = [
    turn('c1', 'How does X work?'), // question: kept by type
    turn('c2', 'Explain quantum entanglement'), // instruction: kept by type
    turn('c3', 'What did you say?'), // meta: filtered
    turn('c4', 'ok thanks'), // other: filtered
    turn('c5', 'Why does measuring one particle affect the other?'), // question
    turn('c6', 'List the classic experiments'), // instruction
    turn('c7', 'Can you elaborate?'), // question, and one of the recent two
    turn('c8', "Actually, that's not what I asked"), // correction: kept only because it is one of the recent two
  ];
  const input = { input: 'What do you mean by spooky action?', spec: { kind: 'last', count: 8 } as const, history };

  it('logs entries_available 8, entries_filtered 2, filtered_types ["meta","other"]', () => {
    const result = plan(input);
    const used = history.filter((t) => !['c3', 'c4'].includes(t.id));
    expect(result.entryType).toBe('question');
    expect(result.replayPolicy).toMatchObject({
      entries_available: 8,
      entries_filtered: 2,
      filtered_types: ['meta', 'other'],
      entries_used: 6,
      chars_used: cost(...used),
      trimmed: false,
      reason: 'clarification',
      context_strength: 'moderate', // clarification is never strong
      budget: 5500,
    });
    expect(result.replayedIds).toEqual(['c1', 'c2', 'c5', 'c6', 'c7', 'c8']);
    expect(rows(result.replayPolicy)).toEqual([
      ['c1', 'question', 'used', false],
      ['c2', 'instruction', 'used', false],
      ['c3', 'meta', 'filtered', false],
      ['c4', 'other', 'filtered', false],
      ['c5', 'question', 'used', false],
      ['c6', 'instruction', 'used', false],
      ['c7', 'question', 'used', true],
      ['c8', 'correction', 'used', true],
    ]);
    expect(system(result).endsWith(confidence.moderate)).toBe(true);
  });

  it('"final used: 4 (after budget)": the budget drops the two oldest kept turns, and that makes it weak', () => {
    // The seed logs entries_used 4 with trimmed false and "moderate"; with 6 turns kept, using 4 means
    // the budget trimmed, and the contract makes a trimmed clarification weak. The contract wins.
    const budget = cost(...history.slice(4));
    const result = plan({ ...input, policy: withBudget(budget) });
    expect(result.replayPolicy).toMatchObject({
      entries_available: 8,
      entries_filtered: 2,
      filtered_types: ['meta', 'other'],
      entries_used: 4,
      chars_used: budget,
      trimmed: true,
      reason: 'clarification',
      context_strength: 'weak',
      budget,
    });
    expect(rows(result.replayPolicy).map(([id, , outcome]) => `${id}:${outcome}`)).toEqual([
      'c1:trimmed',
      'c2:trimmed',
      'c3:filtered',
      'c4:filtered',
      'c5:used',
      'c6:used',
      'c7:used',
      'c8:used',
    ]);
    expect(result.replayPolicy?.decisions.map((d) => d.chars)).toEqual([0, 0, 0, 0, ...history.slice(4).map((t) => turnCost(t))]);
    expect(system(result).endsWith(confidence.weak)).toBe(true);
  });
});

describe('the seed\'s workflows', () => {
  it('1. continuation: a follow-up question after one question is moderate', () => {
    const history = [turn('w1', 'What is photosynthesis?', 'Plants turn light into chemical energy.')];
    const result = plan({ input: 'How does the light-dependent reaction work?', spec: { kind: 'last', count: 3 }, history });
    expect(result.replayPolicy).toMatchObject({
      entries_available: 1,
      entries_filtered: 0,
      filtered_types: [],
      entries_used: 1,
      trimmed: false,
      reason: 'continuation',
      context_strength: 'moderate', // one turn, and no instruction or correction
    });
    expect(messages(result).slice(1)).toEqual([
      ['user', 'What is photosynthesis?'],
      ['assistant', 'Plants turn light into chemical energy.'],
      ['user', 'How does the light-dependent reaction work?'],
    ]);
    expect(system(result)).toContain('answer carefully and avoid assumptions');
  });

  it('1. continuation: with an instruction among two or more recent turns it is strong', () => {
    const history = [turn('w0', 'Explain photosynthesis'), turn('w1', 'What is photosynthesis?'), turn('w2', 'ok thanks')];
    const result = plan({ input: 'How does the light-dependent reaction work?', spec: { kind: 'last', count: 3 }, history });
    expect(result.replayPolicy).toMatchObject({ entries_used: 3, reason: 'continuation', context_strength: 'strong' });
    expect(rows(result.replayPolicy)).toEqual([
      ['w0', 'instruction', 'used', false],
      ['w1', 'question', 'used', true],
      ['w2', 'other', 'used', true],
    ]);
  });

  const day1 = [
    turn('s1', 'Build a Python function that validates emails', 'def validate(email): ...'),
    turn('s2', 'Why use a regex here?'),
    turn('s3', 'Actually, reject addresses without a TLD'),
    turn('s4', 'What about unicode domains?'),
    turn('s5', 'Write tests for it'),
    turn('s6', 'ok thanks'),
  ];

  it('2. session resumption: questions are filtered, the task definition and corrections stay: strong', () => {
    const result = plan({ input: 'Add case-insensitive matching', spec: { kind: 'session' }, history: day1 });
    expect(result.entryType).toBe('instruction');
    expect(result.replayPolicy).toMatchObject({
      entries_available: 6,
      entries_filtered: 2,
      filtered_types: ['question'],
      entries_used: 4,
      chars_used: cost(at(day1, 0), at(day1, 2), at(day1, 4), at(day1, 5)),
      trimmed: false,
      reason: 'session',
      context_strength: 'strong',
    });
    expect(result.replayedIds).toEqual(['s1', 's3', 's5', 's6']);
    expect(rows(result.replayPolicy)).toEqual([
      ['s1', 'instruction', 'used', false],
      ['s2', 'question', 'filtered', false],
      ['s3', 'correction', 'used', false],
      ['s4', 'question', 'filtered', false],
      ['s5', 'instruction', 'used', true],
      ['s6', 'other', 'used', true],
    ]);
    expect(system(result)).toContain('answer directly and confidently');
  });

  it('2. session resumption with only the day-1 task is moderate (the contract needs 2 turns for strong)', () => {
    // The seed says "likely STRONG"; the contract's strong rule needs at least 2 used turns.
    const result = plan({ input: 'Add case-insensitive matching', spec: { kind: 'session' }, history: day1.slice(0, 1) });
    expect(result.replayPolicy).toMatchObject({ entries_used: 1, reason: 'session', context_strength: 'moderate' });
  });

  const quantum = [
    turn('q1', 'What is a qubit?'),
    turn('q2', 'Actually, I meant photonic qubits'),
    turn('q3', 'repeat that'),
    turn('q4', 'How are they measured?'),
    turn('q5', 'Explain quantum entanglement', 'Two particles share one state...'),
  ];
  const clarify = { input: "What does 'superposition' mean?", spec: { kind: 'last', count: 5 } as const };

  it('3. clarification: corrections and meta are dropped; clarification is moderate at best', () => {
    const result = plan({ ...clarify, history: quantum });
    expect(result.replayPolicy).toMatchObject({
      entries_available: 5,
      entries_filtered: 2,
      filtered_types: ['correction', 'meta'],
      entries_used: 3,
      trimmed: false,
      reason: 'clarification',
      context_strength: 'moderate',
    });
    expect(result.replayedIds).toEqual(['q1', 'q4', 'q5']);
  });

  it('3. clarification over questions only is moderate, not weak (the seed guessed weak)', () => {
    const result = plan({ ...clarify, history: [at(quantum, 0), at(quantum, 3)] });
    expect(result.replayPolicy).toMatchObject({ entries_used: 2, reason: 'clarification', context_strength: 'moderate' });
  });

  it('3. clarification that the budget trims is weak and says so', () => {
    const long = quantum.map((t) => ({ ...t, response: 'x'.repeat(400) }));
    const result = plan({ ...clarify, history: long, policy: withBudget(1000) });
    expect(result.replayPolicy).toMatchObject({ entries_used: 2, trimmed: true, context_strength: 'weak' });
    expect(rows(result.replayPolicy).map(([id, , outcome]) => `${id}:${outcome}`)).toEqual([
      'q1:trimmed',
      'q2:filtered',
      'q3:filtered',
      'q4:used',
      'q5:used',
    ]);
    expect(system(result)).toContain('if you are uncertain, say so plainly and do not guess');
  });
});

describe('edges', () => {
  it.each([
    ['last:3', { kind: 'last', count: 3 } as const, 'continuation'],
    ['session', { kind: 'session' } as const, 'session'],
  ])('no history with %s: weak, nothing replayed', (_name, spec, reason) => {
    const result = plan({ input: 'Add tests', spec });
    expect(result.replayPolicy).toEqual({
      entries_available: 0,
      entries_filtered: 0,
      filtered_types: [],
      entries_used: 0,
      chars_used: 0,
      trimmed: false,
      reason,
      context_strength: 'weak',
      budget: 5500,
      decisions: [],
      decisions_omitted: 0,
    });
    expect(messages(result)).toEqual([
      ['system', [personas.neutral, verbosity.short, confidence.weak].join('\n')],
      ['user', 'Add tests'],
    ]);
  });

  it('everything filtered except the protected two: only noise is used, so weak', () => {
    const history = [turn('n1', 'ok'), turn('n2', 'What did you say?'), turn('n3', 'Why?'), turn('n4', 'repeat that'), turn('n5', 'thanks')];
    const result = plan({ input: 'Continue', spec: { kind: 'session' }, history });
    expect(result.replayPolicy).toMatchObject({
      entries_available: 5,
      entries_filtered: 3,
      filtered_types: ['question', 'meta', 'other'], // in the fixed order of entry types
      entries_used: 2,
      context_strength: 'weak',
    });
    expect(result.replayedIds).toEqual(['n4', 'n5']);
  });

  it.each([
    ['last:3 of 10', { kind: 'last', count: 3 } as const, 10, ['h8', 'h9', 'h10']],
    ['last:1 of 10', { kind: 'last', count: 1 } as const, 10, ['h10']],
    ['last:20 of 4', { kind: 'last', count: 20 } as const, 4, ['h1', 'h2', 'h3', 'h4']],
    ['session of 4', { kind: 'session' } as const, 4, ['h1', 'h2', 'h3', 'h4']],
    ['none of 4', { kind: 'none' } as const, 4, []],
  ])('loads %s', (_name, spec, size, ids) => {
    const history = Array.from({ length: size }, (_, i) => turn(`h${i + 1}`, `Add step ${i + 1}`));
    expect(selectHistory(spec, history).map((t) => t.id)).toEqual(ids);
    const result = plan({ input: 'Add more', spec, history });
    expect(result.replayPolicy?.decisions.map((d) => d.id) ?? []).toEqual(ids);
    expect(result.replayPolicy?.entries_available ?? 0).toBe(ids.length);
  });

  it.each<[string, number | undefined, string, string]>([
    ['typed words, then piped text: the words decide', 14, 'instruction', 'continuation'],
    ['no typed length (all of it is the question)', undefined, 'meta', 'clarification'],
  ])("%s the new turn's type and the reason", (_case, typedChars, entryType, reason) => {
    const input = 'Summarize this\n\nWhat do you mean by churn? Repeat that to the board.';
    const fields = { input, spec: { kind: 'last', count: 2 } as const, history: [turn('p1', 'Add a chart')], ...(typedChars !== undefined ? { typedChars } : {}) };
    const result = plan(fields);
    expect({ entryType: result.entryType, reason: result.replayPolicy?.reason }).toEqual({ entryType, reason });
    // The whole prompt is sent either way.
    expect(messages(result).at(-1)).toEqual(['user', input]);
    expect(textsNeeded(shortInput(fields))).toEqual([]);
  });

  it("an earlier turn's piped text does not decide its type either; its whole prompt is replayed", () => {
    const piped = { id: 'c1', prompt: 'Summarize this\n\nActually, the budget was approved.', response: 'A summary.', typedChars: 14 };
    const old = { ...piped, id: 'c0', typedChars: undefined };
    const result = plan({ input: 'Add more', spec: { kind: 'session' }, history: [old, piped, turn('c2', 'ok'), turn('c3', 'fine')] });
    expect(rows(result.replayPolicy).slice(0, 2)).toEqual([
      ['c0', 'correction', 'used', false],
      ['c1', 'instruction', 'used', false],
    ]);
    expect(messages(result)).toContainEqual(['user', piped.prompt]);
  });

  it('--reason overrides the inferred reason for last:N', () => {
    const history = [turn('r1', 'What is X?'), turn('r2', 'Explain Y'), turn('r3', 'Add Z'), turn('r4', 'ok')];
    const result = plan({ input: 'What do you mean?', spec: { kind: 'last', count: 4 }, reason: 'session', history });
    expect(result.replayPolicy).toMatchObject({ reason: 'session', entries_filtered: 1, filtered_types: ['question'] });
  });

  it('drops the oldest turns to fit the budget and records them as trimmed', () => {
    const history = Array.from({ length: 5 }, (_, i) => turn(`b${i + 1}`, `Add part ${i + 1}`, 'y'.repeat(2000)));
    const result = plan({ input: 'Add part 6', spec: { kind: 'last', count: 5 }, history });
    expect(result.replayPolicy).toMatchObject({
      entries_used: 2,
      chars_used: cost(at(history, 3), at(history, 4)),
      trimmed: true,
      reason: 'continuation',
      context_strength: 'moderate', // trimmed, so not strong
    });
    expect(rows(result.replayPolicy).map(([id, , outcome]) => `${id}:${outcome}`)).toEqual([
      'b1:trimmed',
      'b2:trimmed',
      'b3:trimmed',
      'b4:used',
      'b5:used',
    ]);
    const decisions = result.replayPolicy?.decisions ?? [];
    expect(decisions.reduce((sum, d) => sum + d.chars, 0)).toBe(result.replayPolicy?.chars_used);
  });

  it('elides the protected turns when they alone exceed the budget', () => {
    const history = [turn('e1', 'Summarise the log', 'L'.repeat(10_000)), turn('e2', 'Explain line 3', 'M'.repeat(10_000))];
    const result = plan({ input: 'And line 4?', spec: { kind: 'last', count: 2 }, history, policy: withBudget(1000) });
    expect(result.replayPolicy).toMatchObject({ entries_used: 2, chars_used: 1000, trimmed: true, budget: 1000 });
    expect(rows(result.replayPolicy)).toEqual([
      ['e1', 'instruction', 'elided', true],
      ['e2', 'instruction', 'elided', true],
    ]);
    const sent = messages(result).filter(([role]) => role === 'assistant');
    expect(sent.map(([, content]) => MARKER.test(content))).toEqual([true, true]);
    expect(sent.reduce((sum, [, content]) => sum + codePoints(content), 0)).toBeLessThan(1000);
    // Each decision's chars is the code-point length of the turn's replay text exactly as sent.
    const [u1, a1, u2, a2] = messages(result)
      .slice(1, 5)
      .map(([, content]) => content);
    expect(result.replayPolicy?.decisions.map((d) => d.chars)).toEqual([
      codePoints(renderTurn(u1 ?? '', a1 ?? '')),
      codePoints(renderTurn(u2 ?? '', a2 ?? '')),
    ]);
    expect([u1, u2]).toEqual(['Summarise the log', 'Explain line 3']); // prompts are kept whole
  });

  it.each([
    ['Explain monads', 'long'],
    ['hi', 'short'],
  ] as const)('verbosity auto resolves %j to %s', (input, expected) => {
    const result = plan({ input, spec: { kind: 'none' }, verbosity: 'auto' });
    expect(result.verbosity).toBe(expected);
    expect(system(result)).toBe(`${personas.neutral}\n${verbosity[expected]}`);
  });

  it.each([
    ['persona', { persona: 'pirate' }, 'unknown persona "pirate"'],
    ['mode', { mode: 'poetry' }, 'unknown mode "poetry"'],
  ])('an unknown %s is a PolicyError naming it', (_name, choice, message) => {
    expect(() => plan({ input: 'hi', spec: { kind: 'none' }, ...choice })).toThrow(PolicyError);
    expect(() => plan({ input: 'hi', spec: { kind: 'session' }, ...choice })).toThrow(message);
  });
});

describe('determinism', () => {
  const input: PlanInput = {
    input: 'What do you mean by “strict”? 😀',
    spec: { kind: 'last', count: 6 },
    history: [
      turn('d1', 'Explain TypeScript’s strict mode', 'It turns on a family of checks. '.repeat(60)),
      turn('d2', 'What did you say?'),
      turn('d3', 'Actually, I meant noUncheckedIndexedAccess', 'Ah — that one. '.repeat(100)),
      turn('d4', 'How does it change array access?', 'x[i] becomes T | undefined. '.repeat(100)),
      turn('d5', 'ok 👍'),
      turn('d6', 'List the flags', 'strict, noImplicitOverride, … '.repeat(100)),
    ],
    policy: DEFAULT_REPLAY_POLICY,
    style: DEFAULT_STYLE_POLICY,
    mode: 'code',
    persona: 'expert',
    verbosity: 'auto',
    request: { endpoint: 'chat', model: 'argo', stream: true, options: { seed: 42, temperature: 0 }, keepAlive: '5m' },
  };

  it.each(['chat', 'generate'] as const)('/api/%s: same input twice, or a structural copy, gives byte-identical bodies', (endpoint) => {
    const given = { ...input, request: { ...input.request, endpoint } };
    const before = structuredClone(given);
    const first = planTurn(given);
    const second = planTurn(given);
    planTurn({ ...given, input: 'Something else entirely', spec: { kind: 'session' } }); // no state carries over
    const copy = planTurn(structuredClone(given));
    const body = JSON.stringify(first.request.body);
    expect(JSON.stringify(second.request.body)).toBe(body);
    expect(JSON.stringify(copy.request.body)).toBe(body);
    expect(JSON.stringify(copy.replayPolicy)).toBe(JSON.stringify(first.replayPolicy));
    expect(copy.replayedIds).toEqual(first.replayedIds);
    expect(given).toEqual(before); // planTurn does not mutate its input
    expect(first.replayPolicy).toMatchObject({ reason: 'clarification', filtered_types: ['correction', 'meta'] });
  });

  it('chat and generate replay the same turns', () => {
    const chat = planTurn(input);
    const generate = planTurn({ ...input, request: { ...input.request, endpoint: 'generate' } });
    expect(generate.replayedIds).toEqual(chat.replayedIds);
    expect(generate.replayPolicy).toEqual(chat.replayPolicy);
  });
});

describe('docs/replay.md worked examples', () => {
  const work = [
    turn('t1', 'Build a Python function that validates emails', 'def is_valid(email): return EMAIL_RE.fullmatch(email) is not None'),
    turn('t2', 'Why use a regex here?', 'It is short and fast for this shape of input.'),
    turn('t3', 'Actually, reject addresses without a TLD', 'Updated: the domain must contain a dot.'),
    turn('t4', 'What about unicode domains?', 'Use the idna codec before matching.'),
    turn('t5', 'Write tests for it', 'Here are five pytest cases.'),
    turn('t6', 'ok thanks', 'You are welcome.'),
  ];
  const big = work.map((t) => (t.id === 't5' ? { ...t, response: 'x'.repeat(6000) } : t));

  it.each<[string, Pick<PlanInput, 'input' | 'spec' | 'history'>, Partial<ReplayPolicyLog>, [string, string, number][]]>([
    [
      'session resumption',
      { input: 'Add case-insensitive matching', spec: { kind: 'session' }, history: work },
      { entries_available: 6, entries_filtered: 2, filtered_types: ['question'], entries_used: 4, chars_used: 335, trimmed: false, reason: 'session', context_strength: 'strong' },
      [['t1', 'used', 129], ['t2', 'filtered', 0], ['t3', 'used', 98], ['t4', 'filtered', 0], ['t5', 'used', 64], ['t6', 'used', 44]],
    ],
    [
      'clarification',
      { input: 'What do you mean by a TLD?', spec: { kind: 'last', count: 3 }, history: work },
      { entries_available: 3, entries_filtered: 0, filtered_types: [], entries_used: 3, chars_used: 189, trimmed: false, reason: 'clarification', context_strength: 'moderate' },
      [['t4', 'used', 81], ['t5', 'used', 64], ['t6', 'used', 44]],
    ],
    [
      'elision',
      { input: 'Add one more test', spec: { kind: 'last', count: 2 }, history: big },
      { entries_used: 2, chars_used: 5500, trimmed: true, reason: 'continuation', context_strength: 'moderate' },
      [['t5', 'elided', 5456], ['t6', 'used', 44]],
    ],
  ])('%s', (_name, given, log, decisions) => {
    const result = plan({ ...given, verbosity: 'auto' });
    expect(result.replayPolicy).toMatchObject({ ...log, budget: 5500 });
    expect(result.replayPolicy?.decisions.map((d) => [d.id, d.outcome, d.chars])).toEqual(decisions);
  });

  it('elision marker text', () => {
    const result = plan({ input: 'Add one more test', spec: { kind: 'last', count: 2 }, history: big });
    expect(messages(result)[2]?.[1]).toContain(' [… 610 characters elided …] ');
  });
});

describe('policyForLog: bounded per-turn decisions in the log line', () => {
  const history = Array.from({ length: LOGGED_DECISIONS + 25 }, (_, i) => turn(`t${i}`, `Write step ${i}`));

  it('keeps every decision when there are few', () => {
    const result = plan({ input: 'Next', spec: { kind: 'session' }, history: history.slice(0, 3) });
    expect(policyForLog(result.replayPolicy)).toBe(result.replayPolicy);
  });

  it('keeps the newest LOGGED_DECISIONS and counts the rest', () => {
    const full = plan({ input: 'Next', spec: { kind: 'session' }, history }).replayPolicy;
    const logged = policyForLog(full);
    expect(full?.decisions).toHaveLength(LOGGED_DECISIONS + 25);
    expect(logged?.decisions).toEqual(full?.decisions.slice(25));
    expect(logged?.decisions_omitted).toBe(25);
    expect({ ...logged, decisions: [], decisions_omitted: 0 }).toEqual({ ...full, decisions: [], decisions_omitted: 0 });
  });

  it('is null for replay none', () => {
    expect(policyForLog(null)).toBeNull();
  });
});

describe('textsNeeded: the plan reads only the words it needs', () => {
  // A long session: mostly instructions, a few questions, each turn about 300 code points.
  const history = Array.from({ length: 400 }, (_, i) =>
    turn(`d${i}`, i % 7 === 0 ? `Why is step ${i} needed?` : `Write step ${i} of the migration`, `Step ${i}: ${'x'.repeat(240)}`),
  );
  const types = history.map((t) => classifyEntry(t.prompt, DEFAULT_REPLAY_POLICY.classify));
  const byId = new Map(history.map((t) => [t.id, t]));

  /** The index's view: ids (and types when cached), no words. */
  const unread = (withTypes: boolean): HistoryTurn[] => history.map((t, i) => ({ id: t.id, ...(withTypes ? { entry_type: types[i] } : {}) }));

  /** Asks textsNeeded and reads what it names until it names nothing, as a turn does; then plans. */
  function planReading(spec: ReplaySpec, withTypes: boolean): { result: ReplayPlan; reads: string[] } {
    const reads: string[] = [];
    let turns = unread(withTypes);
    for (;;) {
      const input = shortInput({ input: 'Add a rollback', spec, history: turns });
      const needed = textsNeeded(input);
      if (needed.length === 0) return { result: planTurn(input), reads };
      reads.push(...needed);
      const wanted = new Set(needed);
      turns = turns.map((t) => (wanted.has(t.id) ? { ...t, ...byId.get(t.id) } : t));
    }
  }

  it.each([
    ['session', { kind: 'session' } as const],
    ['last:50', { kind: 'last', count: 50 } as const],
    ['last:3', { kind: 'last', count: 3 } as const],
  ])('%s: same request and diagnostics as with every text at hand', (_name, spec) => {
    const eager = plan({ input: 'Add a rollback', spec, history });
    expect(JSON.stringify(planReading(spec, true).result)).toBe(JSON.stringify(eager));
    expect(JSON.stringify(planReading(spec, false).result)).toBe(JSON.stringify(eager));
  });

  it('with cached types, reads only the turns the budget reaches (newest first, one past the cap, in batches)', () => {
    const { result, reads } = planReading({ kind: 'session' }, true);
    const used = result.replayPolicy?.entries_used ?? 0;
    expect(used).toBeGreaterThan(2);
    expect(used).toBeLessThan(40);
    expect(new Set(reads).size).toBe(reads.length);
    expect(reads.length).toBeGreaterThanOrEqual(used + 1);
    expect(reads.length).toBeLessThan(used + 1 + LOAD_BATCH);
    expect(reads.every((id) => Number(id.slice(1)) >= 400 - 60)).toBe(true);
  });

  it('without cached types, reads every prompt to classify it', () => {
    expect(new Set(planReading({ kind: 'session' }, false).reads).size).toBe(history.length);
  });

  it('asks for nothing without replay, and planTurn refuses words it was not given', () => {
    expect(textsNeeded(shortInput({ input: 'x', spec: { kind: 'none' }, history: unread(false) }))).toEqual([]);
    expect(() => planTurn(shortInput({ input: 'x', spec: { kind: 'session' }, history: unread(true) }))).toThrow(/were needed but not read/);
  });

  it('a given entry_type is used as is', () => {
    const result = plan({ input: 'Go on', spec: { kind: 'session' }, history: [{ ...turn('q1', 'Why?'), entry_type: 'instruction' }] });
    expect(result.replayPolicy?.decisions[0]?.entry_type).toBe('instruction');
  });
});

describe('rulesFingerprint', () => {
  it('is stable for equal rules and changes with any rule', () => {
    const rules = DEFAULT_REPLAY_POLICY.classify;
    expect(rulesFingerprint(structuredClone(rules))).toBe(rulesFingerprint(rules));
    expect(rulesFingerprint({ ...rules, meta: [...rules.meta, 'recap'] })).not.toBe(rulesFingerprint(rules));
    expect(rulesFingerprint({ ...rules, instructionVerbs: rules.instructionVerbs.slice(1) })).not.toBe(rulesFingerprint(rules));
    expect(rulesFingerprint(rules)).toMatch(/^[0-9a-z]+$/);
  });

  it("is not the one earlier versions cached types under: they split words at combining marks and compared word lists as written", () => {
    // The default rules' and {"instructionVerbs":["write","explain"]}'s fingerprints before.
    expect(rulesFingerprint(DEFAULT_REPLAY_POLICY.classify)).not.toBe('208s4guuewp');
    expect(rulesFingerprint({ ...DEFAULT_REPLAY_POLICY.classify, instructionVerbs: ['write', 'explain'] })).not.toBe('107rnxkm48c');
  });
});
