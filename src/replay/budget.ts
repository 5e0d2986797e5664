import type { CandidateTurn, ClassifiedTurn, StandingAt } from './filter.js';
import { isLoaded, textOf } from './types.js';
import type { EntryType, TurnText } from './types.js';

/** The replay text of one turn; its code-point length is the turn's cost. */
export function renderTurn(prompt: string, response: string): string {
  return `User: ${prompt}\nAssistant: ${response}\n`;
}

export const RENDER_OVERHEAD = codePoints(renderTurn('', ''));

export function codePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A high surrogate followed by a low one is a single code point.
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        count--;
        i++;
      }
    }
  }
  return count;
}

export function turnCost(turn: TurnText): number {
  return RENDER_OVERHEAD + codePoints(turn.prompt) + codePoints(turn.response);
}

/**
 * Shortens `text` to at most `max` code points, keeping its head and tail around a visible marker.
 * Counted and cut in place: an array of a 100 MB answer's characters took gigabytes at replay.
 */
export function elideMiddle(text: string, max: number): string {
  const total = codePoints(text);
  if (total <= max) return text;
  for (let keep = Math.max(0, max - 24); keep >= 0; keep--) {
    const marker = ` [… ${total - keep} characters elided …] `;
    const room = max - codePoints(marker);
    if (room < 0) continue;
    if (keep > room) continue;
    const head = Math.ceil(keep / 2);
    const tail = keep - head;
    return text.slice(0, headUnits(text, head)) + marker + (tail > 0 ? text.slice(text.length - tailUnits(text, tail)) : '');
  }
  return max > 0 ? '…' : '';
}

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/** The UTF-16 units the first `count` code points of `text` take (a pair is one code point, a lone surrogate one). */
export function headUnits(text: string, count: number): number {
  let units = 0;
  for (let n = 0; n < count && units < text.length; n++) units += isHigh(text.charCodeAt(units)) && isLow(text.charCodeAt(units + 1)) ? 2 : 1;
  return units;
}

/** The UTF-16 units the last `count` code points of `text` take. */
function tailUnits(text: string, count: number): number {
  let units = 0;
  for (let n = 0; n < count && units < text.length; n++) {
    const at = text.length - units - 1;
    units += at > 0 && isLow(text.charCodeAt(at)) && isHigh(text.charCodeAt(at - 1)) ? 2 : 1;
  }
  return units;
}

/** Splits `room` between `lengths` so short ones stay whole and long ones share the rest evenly. */
function shareRoom(lengths: readonly number[], room: number): number[] {
  const order = lengths.map((length, index) => ({ length, index })).sort((a, b) => a.length - b.length || a.index - b.index);
  const shares = new Array<number>(lengths.length).fill(0);
  let remaining = Math.max(0, room);
  order.forEach(({ length, index }, position) => {
    const share = Math.min(length, Math.floor(remaining / (order.length - position)));
    shares[index] = share;
    remaining -= share;
  });
  return shares;
}

/** A turn as it will be sent: its text, possibly shortened. */
export interface BudgetedTurn extends TurnText {
  id: string;
  entry_type: EntryType;
  protected: boolean;
  elided: boolean;
  chars: number;
}

export interface BudgetResult {
  used: BudgetedTurn[];
  dropped: ClassifiedTurn[];
  charsUsed: number;
  trimmed: boolean;
}

/**
 * The turns whose words budgetTurns will read and that are not read yet: the protected ones, then
 * the kept ones newest first until the first that does not fit (the walk budgetTurns makes).
 * A walk that reaches an unread turn asks for it and up to `batch - 1` more in walk order.
 */
export function textsForBudget(turns: readonly ClassifiedTurn[], standing: StandingAt, cap: number, batch: number): string[] {
  const unreadProtected: string[] = [];
  let total = 0;
  for (let i = 0; i < turns.length; i++) {
    const turn = turns[i];
    if (!turn || standing(i) !== 'protected') continue;
    if (isLoaded(turn)) total += turnCost(turn);
    else unreadProtected.push(turn.id);
  }
  if (unreadProtected.length > 0) return unreadProtected;
  const wanted: string[] = [];
  for (let i = turns.length - 1; i >= 0 && wanted.length < batch; i--) {
    const turn = turns[i];
    if (!turn || standing(i) !== 'kept') continue;
    if (!isLoaded(turn)) {
      wanted.push(turn.id);
      continue;
    }
    if (wanted.length > 0) continue;
    const cost = turnCost(turn);
    if (total + cost > cap) break;
    total += cost;
  }
  return wanted;
}

/**
 * Drops the oldest unprotected turns until the rest fit `cap`. Protected turns are never dropped:
 * if they alone exceed the cap, their responses (then, only if still needed, their prompts) are
 * shortened in the middle so the total never exceeds the cap.
 *
 * Dropping oldest-first keeps the longest run of newest unprotected turns that fits, so the walk goes
 * newest to oldest and stops at the first turn that does not fit: older turns are never measured.
 */
export function applyBudget(turns: readonly CandidateTurn[], cap: number): BudgetResult {
  return budgetTurns(turns, (index) => (turns[index]?.protected === true ? 'protected' : 'kept'), cap);
}

/** applyBudget over turns the filter has not copied out: `standing` says which are candidates, and which protected. */
export function budgetTurns(turns: readonly ClassifiedTurn[], standing: StandingAt, cap: number): BudgetResult {
  const sent = new Map<number, { text: TurnText; cost: number }>();
  let total = 0;
  for (let i = 0; i < turns.length; i++) {
    const turn = turns[i];
    if (!turn || standing(i) !== 'protected') continue;
    const text = textOf(turn);
    const cost = turnCost(text);
    sent.set(i, { text, cost });
    total += cost;
  }
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i];
    if (!turn || standing(i) !== 'kept') continue;
    const text = textOf(turn);
    const cost = turnCost(text);
    if (total + cost > cap) break;
    sent.set(i, { text, cost });
    total += cost;
  }
  const dropped: ClassifiedTurn[] = [];
  let used: BudgetedTurn[] = [];
  for (let i = 0; i < turns.length; i++) {
    const turn = turns[i];
    const is = standing(i);
    if (!turn || is === 'filtered') continue;
    const chosen = sent.get(i);
    if (!chosen) {
      dropped.push(turn);
      continue;
    }
    used.push({ id: turn.id, entry_type: turn.entry_type, protected: is === 'protected', ...chosen.text, elided: false, chars: chosen.cost });
  }
  if (total > cap) used = shortenToFit(used, cap);
  const charsUsed = used.reduce((sum, turn) => sum + turn.chars, 0);
  return { used, dropped, charsUsed, trimmed: dropped.length > 0 || used.some((turn) => turn.elided) };
}

function shortenToFit(turns: BudgetedTurn[], cap: number): BudgetedTurn[] {
  const promptLengths = turns.map((turn) => codePoints(turn.prompt));
  const responseLengths = turns.map((turn) => codePoints(turn.response));
  const textRoom = cap - RENDER_OVERHEAD * turns.length;
  // Keep one code point per non-empty response so a shortened response still shows a marker ("…").
  // The prompts share the rest, at least one each: the policy's floor (two per protected turn)
  // leaves that much. Below it (a cap logged by an earlier version, rebuilt by rerun) the
  // arithmetic is the same, so such a request is rebuilt as it was sent.
  const promptRoom = textRoom - responseLengths.filter((length) => length > 0).length;
  const promptTotal = promptLengths.reduce((a, b) => a + b, 0);
  const promptShares = promptTotal <= promptRoom ? promptLengths : shareRoom(promptLengths, promptRoom);
  const responseShares = shareRoom(responseLengths, textRoom - promptShares.reduce((a, b) => a + b, 0));
  return turns.map((turn, i) => {
    const prompt = elideMiddle(turn.prompt, promptShares[i] ?? 0);
    const response = elideMiddle(turn.response, responseShares[i] ?? 0);
    const elided = prompt !== turn.prompt || response !== turn.response;
    return { ...turn, prompt, response, elided, chars: turnCost({ prompt, response }) };
  });
}
