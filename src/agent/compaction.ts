// Microcompaction (seed 004): results past their tool's budget are saved whole and replaced by
// their head and a note; older rounds' results shrink to one-line summaries. Pure: the same
// messages give the same compaction.
import { createHash } from 'node:crypto';
import { clipText, headOf } from '../output/cut.js';

export const DEFAULT_RESULT_BUDGET = 4000;
/** A result at most this long is already a summary's size and is left alone. */
export const SUMMARY_MIN_CHARS = 200;
const SUMMARY_HEAD_CHARS = 100;
const SUMMARY_ARGS_CHARS = 80;

export interface CompactionRecord {
  /** The call's id as the model sent it (or `call_<round>_<index>`); `round` tells repeated ids apart. */
  id: string;
  round: number;
  /**
   * `saved`: over budget, cut to its head and saved whole; `truncated`: over budget and cut, the rest
   * not kept (an unlogged turn, or a save that failed); `summarized`: an older round reduced to one line.
   */
  kind: 'saved' | 'truncated' | 'summarized';
  /** The full result's length, whatever was sent before this step. */
  chars_before: number;
  /** What the model is sent after this step. */
  chars_after: number;
  saved_as?: string;
}

const SAFE_NAME = /^[A-Za-z0-9_-]{1,100}$/;
/** How much of a call id the note repeats: the id comes from the model and could be any length. */
const NOTE_ID_CHARS = 64;

/**
 * The path (relative to the data home) a result over budget is saved to: one folder per turn, as
 * call ids start again every turn (call_1_0), and the round in the name, as a model may send the
 * same id every round. Ids come from the model: one that is not a plain name (`../x`, `a/b`) is made
 * one, with a hash of it to keep it unique.
 */
export function savedResultPath(sessionId: string, turnId: string, round: number, callId: string): string {
  const name = SAFE_NAME.test(callId) ? callId : `${callId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 60)}-${createHash('sha256').update(callId).digest('hex').slice(0, 12)}`;
  return `tool-results/${sessionId}/${turnId}/r${round}-${name}.json`;
}

/**
 * What the model gets instead of a result past its budget: its head and a note naming the call and
 * the full length. Valid JSON. Nothing of the data home is in it (no session or turn id), so the same
 * conversation gives the same request in every run.
 */
export function truncatedResult(content: string, budget: number, callId: string, kept: boolean): string {
  // The saved file is for the user: no tool of the run reads Argo's data home, so the model is told how to see more instead.
  const where = kept ? 'saved whole for the user' : 'the rest was not kept';
  const note = `truncated: the first part of the ${content.length} characters of call ${clipText(callId, NOTE_ID_CHARS)} (${where}); for more, call the tool again for a narrower part`;
  // The wrapper's own characters count against the budget too, so the head is what is left of it.
  const overhead = JSON.stringify({ truncated: true, note, head: '' }).length;
  let head = headOf(content, budget - overhead);
  // JSON escapes may lengthen the head: shorten until the whole fits (a few steps at most).
  while (head.length > 0 && JSON.stringify({ truncated: true, note, head }).length > budget) head = headOf(head, Math.floor(head.length * 0.9));
  return JSON.stringify({ truncated: true, note, head });
}

/**
 * `text` on one line (whitespace runs as one space), cut to `max`. Only a head is flattened: once a
 * flattened prefix is two past `max`, the rest cannot change what is shown (a result may be 50 KB).
 */
function flat(text: string, max: number): string {
  for (let take = 2 * max + 16; ; take *= 2) {
    const whole = take >= text.length;
    const line = (whole ? text : text.slice(0, take)).replace(/\s+/g, ' ').trimStart();
    if (whole || line.length >= max + 2) return clipText(line.trimEnd(), max);
  }
}

/** One line standing for an older round's result, from the full result (not the head a budget left). */
export function summaryOf(name: string, args: Record<string, unknown>, full: string): string {
  return JSON.stringify({ summary: `${name}(${flat(JSON.stringify(args), SUMMARY_ARGS_CHARS)}) returned ${full.length} characters: ${flat(full, SUMMARY_HEAD_CHARS)}` });
}

export interface ResultMessage {
  callId: string;
  name: string;
  /** What the model is sent now: the result, its head and note, or its summary. */
  content: string;
  /** The full result's length. */
  fullChars: number;
  /** The line that stands for it once its round is older (summaryOf the full result). */
  summary: string;
  round: number;
  summarized: boolean;
}

/**
 * Reduces the results of every round before `latestRound` to summaries (once each, and only those
 * longer than a summary). Mutates the given messages; returns what it did, in message order.
 */
export function summarizeOlder(results: ResultMessage[], latestRound: number): CompactionRecord[] {
  const records: CompactionRecord[] = [];
  for (const result of results) {
    if (result.round >= latestRound || result.summarized || result.content.length <= SUMMARY_MIN_CHARS) continue;
    if (result.summary.length >= result.content.length) continue;
    records.push({ id: result.callId, round: result.round, kind: 'summarized', chars_before: result.fullChars, chars_after: result.summary.length });
    result.content = result.summary;
    result.summarized = true;
  }
  return records;
}
