import { budgetTurns, textsForBudget } from './budget.js';
import { classifyEntry, typedPart } from './classify.js';
import { standingByReason } from './filter.js';
import type { StandingAt } from './filter.js';
import type { ClassifiedTurn } from './filter.js';
import type { ReplayPolicy, StylePolicy } from './policy.js';
import { buildRequest } from './prompt.js';
import type { OllamaRequest, RequestSettings } from './prompt.js';
import { inferReason } from './reason.js';
import { contextStrength } from './strength.js';
import { resolveVerbosity, styleInstructions } from './style.js';
import type { ResolvedVerbosity } from './style.js';
import { ENTRY_TYPES, isLoaded, textOf } from './types.js';
import type { EntryType, HistoryTurn, ReplayPolicyLog, ReplayReason, ReplaySpec, TurnDecision, Verbosity } from './types.js';

export interface PlanInput {
  input: string;
  /** Code points of `input` that were typed, when piped text follows them: its type and reason are read from those (typedPart). */
  typedChars?: number;
  spec: ReplaySpec;
  reason?: ReplayReason;
  /** Earlier ok turns of the session, oldest first; at least what `spec` asks for. */
  history: readonly HistoryTurn[];
  policy: ReplayPolicy;
  style: StylePolicy;
  mode: string | null;
  persona: string;
  verbosity: Verbosity;
  /** The caller's own system prompt (--system), sent before the mode, persona and verbosity texts. */
  system?: string | null;
  request: RequestSettings;
}

export interface ReplayPlan {
  entryType: EntryType;
  verbosity: ResolvedVerbosity;
  replayPolicy: ReplayPolicyLog | null;
  replayedIds: string[];
  request: OllamaRequest;
}

/** Unread turns the budget walk asks for at a time: few reads past the cap, few planning rounds. */
export const LOAD_BATCH = 8;

/**
 * Which turns' words the plan needs and the caller has not read yet: every untyped turn (to
 * classify it), then the turns the budget walk reaches. The caller reads them, adds their words to
 * `history`, and asks again until the answer is empty; then planTurn has all it needs.
 */
export function textsNeeded(input: PlanInput, batch = LOAD_BATCH): string[] {
  const { policy } = input;
  const reason = inferReason(input.spec, typedPart(input.input, input.typedChars), input.reason, policy.clarification);
  if (reason === null) return [];
  const loaded = selectHistory(input.spec, input.history);
  const untyped = loaded.filter((turn) => turn.entry_type === undefined && !isLoaded(turn)).map((turn) => turn.id);
  if (untyped.length > 0) return untyped;
  const turns = classified(loaded, policy);
  return textsForBudget(turns, standingByReason(turns, policy.filters[reason], policy.protectedTurns), policy.budget, batch);
}

// A turn whose type the index already gave is used as it is: a long session is planned several
// times over (once per batch of words read), and a copy of every turn each time adds up.
function classified(turns: readonly HistoryTurn[], policy: ReplayPolicy): readonly ClassifiedTurn[] {
  if (allClassified(turns)) return turns;
  return turns.map((turn) => (isClassified(turn) ? turn : { ...turn, entry_type: classifyEntry(typedPart(textOf(turn).prompt, turn.typedChars), policy.classify) }));
}

function isClassified(turn: HistoryTurn): turn is ClassifiedTurn {
  return turn.entry_type !== undefined;
}

function allClassified(turns: readonly HistoryTurn[]): turns is readonly ClassifiedTurn[] {
  return turns.every(isClassified);
}

/** The whole replay pipeline: load, classify, reason, filter, budget, strength, prompt. Needs the words textsNeeded asked for. */
export function planTurn(input: PlanInput): ReplayPlan {
  const { policy } = input;
  const verbosity = resolveVerbosity(input.verbosity, input.input, input.style.verbosity);
  const instructions = [...(input.system ? [input.system] : []), ...styleInstructions(input.style, { mode: input.mode, persona: input.persona, verbosity })];
  const question = typedPart(input.input, input.typedChars);
  const entryType = classifyEntry(question, policy.classify);
  const reason = inferReason(input.spec, question, input.reason, policy.clarification);

  if (reason === null) {
    const request = buildRequest({ instructions, replay: [], input: input.input }, input.request);
    return { entryType, verbosity, replayPolicy: null, replayedIds: [], request };
  }

  const loaded = classified(selectHistory(input.spec, input.history), policy);
  const standing = standingByReason(loaded, policy.filters[reason], policy.protectedTurns);
  const budget = budgetTurns(loaded, standing, policy.budget);
  const filtered = filteredTypes(loaded, standing);
  const strength = contextStrength({
    usedTypes: budget.used.map((turn) => turn.entry_type),
    trimmed: budget.trimmed,
    reason,
    strongMinTurns: policy.strongMinTurns,
  });

  const replayPolicy: ReplayPolicyLog = {
    entries_available: loaded.length,
    entries_filtered: filtered.count,
    filtered_types: ENTRY_TYPES.filter((type) => filtered.types.has(type)),
    entries_used: budget.used.length,
    chars_used: budget.charsUsed,
    trimmed: budget.trimmed,
    reason,
    context_strength: strength,
    budget: policy.budget,
    decisions: decide(loaded, standing, budget.used),
    decisions_omitted: 0,
  };
  const request = buildRequest(
    { instructions: [...instructions, policy.confidence[strength]], replay: budget.used, input: input.input },
    input.request,
  );
  return { entryType, verbosity, replayPolicy, replayedIds: budget.used.map((turn) => turn.id), request };
}

/** Per-turn decisions logged with each turn; older ones are only counted, so lines stay small on long sessions. */
export const LOGGED_DECISIONS = 50;

export function policyForLog(policy: ReplayPolicyLog | null): ReplayPolicyLog | null {
  if (policy === null || policy.decisions.length <= LOGGED_DECISIONS) return policy;
  const omitted = policy.decisions.length - LOGGED_DECISIONS;
  return { ...policy, decisions: policy.decisions.slice(omitted), decisions_omitted: policy.decisions_omitted + omitted };
}

export function selectHistory(spec: ReplaySpec, history: readonly HistoryTurn[]): readonly HistoryTurn[] {
  if (spec.kind === 'none') return [];
  if (spec.kind === 'last') return history.slice(Math.max(0, history.length - spec.count));
  return history;
}

/** How many turns the filter left out, and of which types. */
function filteredTypes(turns: readonly ClassifiedTurn[], standing: StandingAt): { count: number; types: Set<EntryType> } {
  const types = new Set<EntryType>();
  let count = 0;
  for (let i = 0; i < turns.length; i++) {
    const turn = turns[i];
    if (turn === undefined || standing(i) !== 'filtered') continue;
    count++;
    types.add(turn.entry_type);
  }
  return { count, types };
}

function decide(loaded: readonly ClassifiedTurn[], standing: StandingAt, used: readonly { id: string; elided: boolean; chars: number }[]): TurnDecision[] {
  const usedById = new Map(used.map((turn) => [turn.id, turn]));
  return loaded.map((turn, index) => {
    const sent = usedById.get(turn.id);
    const is = standing(index);
    const outcome = sent ? (sent.elided ? 'elided' : 'used') : is === 'filtered' ? 'filtered' : 'trimmed';
    return { id: turn.id, entry_type: turn.entry_type, outcome, protected: is === 'protected', chars: sent?.chars ?? 0 };
  });
}
