import { RENDER_OVERHEAD } from './budget.js';
import { normaliseWords } from './phrases.js';
import { CONTEXT_STRENGTHS, ENTRY_TYPES, REPLAY_REASONS } from './types.js';
import type { ContextStrength, EntryType, ReplayReason } from './types.js';

/**
 * Every tunable rule of the replay pipeline. Phrase lists are matched on whole words,
 * case-insensitively; `*` in a phrase stands for one or more words or symbol tokens (phrases.ts).
 */
export interface ReplayPolicy {
  budget: number;
  protectedTurns: number;
  filters: Record<ReplayReason, EntryType[]>;
  strongMinTurns: number;
  classify: {
    meta: string[];
    correction: string[];
    questionOpeners: string[];
    instructionVerbs: string[];
    politePrefixes: string[];
  };
  clarification: string[];
  confidence: Record<ContextStrength, string>;
}

export interface StylePolicy {
  personas: Record<string, string>;
  modes: Record<string, string>;
  verbosity: {
    short: string;
    long: string;
    longPhrases: string[];
    longInputChars: number;
  };
}

export const MIN_BUDGET = 200;

export const DEFAULT_REPLAY_POLICY: ReplayPolicy = {
  budget: 5500,
  protectedTurns: 2,
  filters: {
    continuation: ['instruction', 'correction', 'question'],
    clarification: ['question', 'instruction'],
    session: ['instruction', 'correction'],
  },
  strongMinTurns: 2,
  classify: {
    meta: [
      'what did you say',
      'what did you just say',
      'what did i say',
      'what did i ask',
      'what was my last question',
      'what was my question',
      'what was your last answer',
      'what have we discussed',
      'what were we talking about',
      'repeat that',
      'repeat your answer',
      'say that again',
      'summarize our conversation',
      'summarise our conversation',
      'summarize the conversation',
      'summarise the conversation',
      'summarize this conversation',
      'summarise this conversation',
      'recap our conversation',
      'our conversation so far',
    ],
    correction: [
      'actually',
      "that's wrong",
      'that is wrong',
      "that's not right",
      'that is not right',
      "that's incorrect",
      'that is incorrect',
      "you're wrong",
      'you are wrong',
      'mistake',
      'i meant',
      'i mean',
      'not what i meant',
      'correction',
      'wrong answer',
    ],
    questionOpeners: ['what', 'why', 'how', 'when', 'where', 'who', 'which', 'whose', 'whom'],
    instructionVerbs: [
      'add', 'analyze', 'analyse', 'build', 'calculate', 'change', 'check', 'compare', 'compose',
      'continue', 'convert', 'create', 'define', 'delete', 'describe', 'design', 'do', 'draft',
      'edit', 'elaborate', 'explain', 'expand', 'find', 'fix', 'format', 'generate', 'give',
      'implement', 'improve', 'list', 'make', 'optimize', 'optimise', 'outline', 'plan', 'provide',
      'refactor', 'remove', 'rename', 'replace', 'review', 'rewrite', 'run', 'show', 'sort',
      'suggest', 'summarize', 'summarise', 'tell', 'test', 'translate', 'update', 'use', 'write',
    ],
    politePrefixes: ['please', 'kindly', 'now', 'also', 'then', 'ok', 'okay'],
  },
  clarification: [
    'what do you mean',
    'what did you mean',
    'what does * mean',
    'what is meant by',
    'clarify',
    "i don't understand",
    'i do not understand',
    "i don't get it",
  ],
  confidence: {
    strong: 'Context is strong: answer directly and confidently.',
    moderate: 'Context is partial: answer carefully and avoid assumptions.',
    weak: 'Context is weak: if you are uncertain, say so plainly and do not guess.',
  },
};

export const DEFAULT_STYLE_POLICY: StylePolicy = {
  personas: {
    neutral: 'Use a neutral, professional tone.',
    friendly: 'Use a warm, friendly tone.',
    teacher: 'Teach: explain the reasoning step by step and check understanding with an example.',
    expert: 'Answer as a senior expert: precise terminology, no basics unless asked.',
    critic: 'Be a constructive critic: point out weaknesses and risks before strengths.',
  },
  modes: {
    code: 'You are a programming assistant. Prefer working code with brief explanations.',
    review: 'You are reviewing the given material. List concrete problems first, then suggestions.',
    shell: 'You help with shell commands. Answer with the command first, then a one-line explanation.',
    writing: 'You are a writing assistant. Improve clarity and flow while keeping the author\'s voice.',
  },
  verbosity: {
    short: 'Keep the answer short: a few sentences at most.',
    long: 'Give a thorough answer with the detail the question needs.',
    longPhrases: [
      'explain', 'in detail', 'step by step', 'elaborate', 'walk me through', 'thorough',
      'comprehensive', 'compare', 'describe', 'why', 'pros and cons', 'tutorial', 'deep dive',
    ],
    longInputChars: 280,
  },
};

export class PolicyError extends Error {
  override name = 'PolicyError';
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
  }
}

/**
 * The least budget `protectedTurns` need. They are never dropped: each needs room for its frame and
 * a one-character marker ("…") for its prompt and for its response, so a cut text is never sent
 * empty (shortenToFit).
 */
export function budgetFloor(protectedTurns: number): number {
  return protectedTurns * (RENDER_OVERHEAD + 2);
}

/**
 * The budget in force for a config.json budget: one an earlier version took (20 a protected turn,
 * with no room for a prompt's marker) counts as the floor now, rather than stopping every command.
 */
export function configuredBudget(policy: ReplayPolicy): number {
  const floor = budgetFloor(policy.protectedTurns);
  return policy.budget < floor && policy.budget >= policy.protectedTurns * (RENDER_OVERHEAD + 1) ? floor : policy.budget;
}

const WORD_LISTS = ['questionOpeners', 'instructionVerbs', 'politePrefixes'] as const;

const PHRASE_LISTS = '(phrases go in "replay.classify.meta", "replay.classify.correction" or "replay.clarification")';

/**
 * Why an entry of a single-word list could never match, or null when it can. Words are read as
 * a prompt's are (normaliseWords), so "Explain!" is the word "explain" and "e-mail" two words.
 */
function wordListProblem(list: (typeof WORD_LISTS)[number], entry: string): string | null {
  const words = normaliseWords(entry);
  if (words === '') return 'has no word in it (no letter or digit): remove it';
  const parts = words.split(' ');
  const [first = ''] = parts;
  if (parts.length > 1) {
    const count = `is ${parts.length} words; this list takes single words`;
    switch (list) {
      case 'questionOpeners':
        return `${count}, read against a prompt's first word: list ${JSON.stringify(first)} ${PHRASE_LISTS}`;
      case 'instructionVerbs':
        return `${count}, read against a prompt's first word after any polite prefixes: list ${JSON.stringify(first)} ${PHRASE_LISTS}`;
      case 'politePrefixes':
        return `${count}, skipped one at a time: list ${parts.map((word) => JSON.stringify(word)).join(' and ')} apart ${PHRASE_LISTS}`;
    }
  }
  // A prompt's opener is read up to its apostrophe ("What's …" opens with "what").
  const apostrophe = first.indexOf("'");
  if (list === 'questionOpeners' && apostrophe !== -1) {
    return `never matches: a prompt's first word is read up to its apostrophe ("what's" as "what"): list ${JSON.stringify(first.slice(0, apostrophe))}`;
  }
  return null;
}

/** Cross-field rules that a shape check cannot express. Throws PolicyError naming the key. */
export function checkReplayPolicy(policy: ReplayPolicy): ReplayPolicy {
  if (!Number.isInteger(policy.budget) || policy.budget < MIN_BUDGET) {
    throw new PolicyError('replay.budget', `must be a whole number of characters, at least ${MIN_BUDGET}`);
  }
  if (!Number.isInteger(policy.protectedTurns) || policy.protectedTurns < 0) {
    throw new PolicyError('replay.protectedTurns', 'must be a whole number, 0 or more');
  }
  const protectedFloor = budgetFloor(policy.protectedTurns);
  if (policy.budget < protectedFloor) {
    throw new PolicyError(
      'replay.protectedTurns',
      `${policy.protectedTurns} protected turns need a budget of at least ${protectedFloor} (budget is ${policy.budget})`,
    );
  }
  if (!Number.isInteger(policy.strongMinTurns) || policy.strongMinTurns < 1) {
    throw new PolicyError('replay.strongMinTurns', 'must be a whole number, 1 or more');
  }
  for (const reason of Object.keys(policy.filters)) {
    if (!(REPLAY_REASONS as readonly string[]).includes(reason)) {
      throw new PolicyError(`replay.filters.${reason}`, `unknown reason (use ${REPLAY_REASONS.join(', ')})`);
    }
  }
  for (const reason of REPLAY_REASONS) {
    for (const type of policy.filters[reason]) {
      if (!(ENTRY_TYPES as readonly string[]).includes(type)) {
        throw new PolicyError(`replay.filters.${reason}`, `unknown entry type ${JSON.stringify(type)} (use ${ENTRY_TYPES.join(', ')})`);
      }
    }
  }
  for (const list of WORD_LISTS) {
    for (const entry of policy.classify[list]) {
      const problem = wordListProblem(list, entry);
      if (problem !== null) throw new PolicyError(`replay.classify.${list}`, `entry ${JSON.stringify(entry)} ${problem}`);
    }
  }
  for (const strength of CONTEXT_STRENGTHS) {
    if (policy.confidence[strength].trim() === '') {
      throw new PolicyError(`replay.confidence.${strength}`, 'must not be empty');
    }
  }
  return policy;
}
