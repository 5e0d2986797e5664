import { describe, expect, it } from 'vitest';
import { thrown } from '../support/thrown.js';
import { checkReplayPolicy, DEFAULT_REPLAY_POLICY, DEFAULT_STYLE_POLICY, MIN_BUDGET, PolicyError } from '../../src/replay/policy.js';
import type { ReplayPolicy } from '../../src/replay/policy.js';

describe('DEFAULT_REPLAY_POLICY follows the contract', () => {
  it('caps the replay at 5500 code points and protects the two most recent turns', () => {
    expect([DEFAULT_REPLAY_POLICY.budget, DEFAULT_REPLAY_POLICY.protectedTurns, DEFAULT_REPLAY_POLICY.strongMinTurns]).toEqual([5500, 2, 2]);
  });

  it.each([
    ['continuation', ['instruction', 'correction', 'question']],
    ['clarification', ['question', 'instruction']],
    ['session', ['instruction', 'correction']],
  ] as const)('filter table: %s keeps %j', (reason, types) => {
    expect([...DEFAULT_REPLAY_POLICY.filters[reason]].sort()).toEqual([...types].sort());
  });

  const { classify, clarification, confidence } = DEFAULT_REPLAY_POLICY;
  it.each<[string, readonly string[], string[]]>([
    ['meta', classify.meta, ['what did you say', 'repeat that', 'summarize our conversation', 'what was my last question']],
    ['correction', classify.correction, ['actually', "that's wrong", 'mistake', 'i meant']],
    ['questionOpeners', classify.questionOpeners, ['what', 'why', 'how', 'when', 'where', 'who', 'which']],
    ['instructionVerbs', classify.instructionVerbs, ['explain', 'create', 'write', 'list', 'add', 'build']],
    ['politePrefixes', classify.politePrefixes, ['please']],
    ['clarification', clarification, ['what do you mean', 'what does * mean', 'clarify', "i don't understand"]],
  ])('%s lists at least the contract examples', (_name, list, required) => {
    expect(list).toEqual(expect.arrayContaining(required));
  });

  it.each([
    ['strong', /answer directly and confidently/],
    ['moderate', /answer carefully and avoid assumptions/],
    ['weak', /if you are uncertain, say so plainly and do not guess/],
  ] as const)('confidence.%s says %s', (strength, text) => {
    expect(confidence[strength]).toMatch(text);
  });

  it('accepts the defaults unchanged', () => {
    expect(checkReplayPolicy(DEFAULT_REPLAY_POLICY)).toBe(DEFAULT_REPLAY_POLICY);
  });

  it('has a neutral persona to fall back on', () => {
    expect(DEFAULT_STYLE_POLICY.personas.neutral).toBe('Use a neutral, professional tone.');
  });
});

describe('checkReplayPolicy', () => {
  const d = DEFAULT_REPLAY_POLICY;
  const bad = (patch: Partial<ReplayPolicy>): ReplayPolicy => ({ ...d, ...patch });

  it.each<[string, string, ReplayPolicy]>([
    ['budget below the minimum', 'replay.budget', bad({ budget: MIN_BUDGET - 1 })],
    ['budget not whole', 'replay.budget', bad({ budget: 5500.5 })],
    ['budget NaN', 'replay.budget', bad({ budget: Number.NaN })],
    ['negative protectedTurns', 'replay.protectedTurns', bad({ protectedTurns: -1 })],
    ['fractional protectedTurns', 'replay.protectedTurns', bad({ protectedTurns: 1.5 })],
    // Each protected turn needs 19 code points of frame plus 1 for its prompt's marker and 1 for its
    // response's: 10 × 21 = 210 > 200.
    ['more protected turns than the budget can frame', 'replay.protectedTurns', bad({ budget: 200, protectedTurns: 11 })],
    ['10 protected turns at 200: room for the responses\' markers, none for the prompts\'', 'replay.protectedTurns', bad({ budget: 200, protectedTurns: 10 })],
    // Between the frames alone (11 × 19 = 209) and frames with markers (11 × 21 = 231): still too small.
    ['a budget that frames 11 protected turns but leaves no room for their markers (210)', 'replay.protectedTurns', bad({ budget: 210, protectedTurns: 11 })],
    ['a budget one short of 11 protected turns with markers (230)', 'replay.protectedTurns', bad({ budget: 230, protectedTurns: 11 })],
    ['strongMinTurns 0', 'replay.strongMinTurns', bad({ strongMinTurns: 0 })],
    ['unknown reason in filters', 'replay.filters.bogus', bad({ filters: { ...d.filters, bogus: ['question'] } as ReplayPolicy['filters'] })],
    ['unknown type in filters', 'replay.filters.session', bad({ filters: { ...d.filters, session: ['instruction', 'chitchat'] } as ReplayPolicy['filters'] })],
    ['blank confidence text', 'replay.confidence.weak', bad({ confidence: { ...d.confidence, weak: '   ' } })],
  ])('rejects %s, naming %s', (_name, key, policy) => {
    const error = thrown(() => checkReplayPolicy(policy));
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).key).toBe(key);
    expect((error as PolicyError).message.startsWith(`${key}: `)).toBe(true);
  });

  it.each<[string, ReplayPolicy]>([
    ['the minimum budget', bad({ budget: MIN_BUDGET })],
    ['no protected turns', bad({ protectedTurns: 0 })],
    ['as many protected turns as the budget can frame with their markers', bad({ budget: 200, protectedTurns: 9 })],
    ['exactly the budget 11 protected turns with markers need (231)', bad({ budget: 231, protectedTurns: 11 })],
    ['strongMinTurns 1', bad({ strongMinTurns: 1 })],
    ['an empty filter list', bad({ filters: { ...d.filters, session: [] } })],
  ])('accepts %s', (_name, policy) => {
    expect(checkReplayPolicy(policy)).toBe(policy);
  });

  it('explains the rule in the message', () => {
    expect(() => checkReplayPolicy(bad({ budget: 10 }))).toThrow('replay.budget: must be a whole number of characters, at least 200');
    expect(() => checkReplayPolicy(bad({ filters: { ...d.filters, clarification: ['meta', 'nonsense'] } as ReplayPolicy['filters'] }))).toThrow(
      'replay.filters.clarification: unknown entry type "nonsense" (use question, instruction, correction, meta, other)',
    );
  });
});

describe('checkReplayPolicy: the single-word lists of replay.classify', () => {
  const d = DEFAULT_REPLAY_POLICY;
  const phrases = '(phrases go in "replay.classify.meta", "replay.classify.correction" or "replay.clarification")';
  type WordList = 'questionOpeners' | 'instructionVerbs' | 'politePrefixes';
  // An entry is read as a prompt's words are: punctuation and symbols separate words, case and curly apostrophes aside.
  it.each<[WordList, string, string | null]>([
    ['politePrefixes', 'could you', `entry "could you" is 2 words; this list takes single words, skipped one at a time: list "could" and "you" apart ${phrases}`],
    ['questionOpeners', 'can you', `entry "can you" is 2 words; this list takes single words, read against a prompt's first word: list "can" ${phrases}`],
    ['instructionVerbs', 'write up', `entry "write up" is 2 words; this list takes single words, read against a prompt's first word after any polite prefixes: list "write" ${phrases}`],
    ['instructionVerbs', 'e-mail', `entry "e-mail" is 2 words; this list takes single words, read against a prompt's first word after any polite prefixes: list "e" ${phrases}`],
    ['politePrefixes', 'would you please', `entry "would you please" is 3 words; this list takes single words, skipped one at a time: list "would" and "you" and "please" apart ${phrases}`],
    ['politePrefixes', '', 'entry "" has no word in it (no letter or digit): remove it'],
    ['instructionVerbs', '   ', 'entry "   " has no word in it (no letter or digit): remove it'],
    ['questionOpeners', '¿?', 'entry "¿?" has no word in it (no letter or digit): remove it'],
    ['questionOpeners', "what's", 'entry "what\'s" never matches: a prompt\'s first word is read up to its apostrophe ("what\'s" as "what"): list "what"'],
    ['questionOpeners', 'What’s', 'entry "What’s" never matches: a prompt\'s first word is read up to its apostrophe ("what\'s" as "what"): list "what"'],
    // Each reads as one word, so each can match.
    ['politePrefixes', "y'all", null],
    ['instructionVerbs', 'Explain', null],
    ['instructionVerbs', 'explain!', null],
    ['instructionVerbs', ' fix ', null],
    ['questionOpeners', 'क्या', null],
    ['questionOpeners', 'Erkla\u0308re', null],
    ['instructionVerbs', 'x2', null],
  ])('%s entry %j → %j', (list, entry, message) => {
    const policy: ReplayPolicy = { ...d, classify: { ...d.classify, [list]: [...d.classify[list], entry] } };
    if (message === null) {
      expect(checkReplayPolicy(policy)).toBe(policy);
      return;
    }
    const error = thrown(() => checkReplayPolicy(policy));
    expect(error).toBeInstanceOf(PolicyError);
    expect((error as PolicyError).key).toBe(`replay.classify.${list}`);
    expect((error as PolicyError).message).toBe(`replay.classify.${list}: ${message}`);
  });

  it('leaves the phrase lists to hold phrases', () => {
    const policy: ReplayPolicy = { ...d, classify: { ...d.classify, meta: ['could you repeat'], correction: ['no wait'] }, clarification: ['say again'] };
    expect(checkReplayPolicy(policy)).toBe(policy);
  });
});
