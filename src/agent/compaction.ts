// Microcompaction (seed 004): results past their tool's budget are saved whole and replaced by
// their head and a note; older rounds' results shrink to one-line summaries. Pure: the same
// messages give the same compaction.
import { createHash } from 'node:crypto';

export const DEFAULT_RESULT_BUDGET = 4000;
/** A result at most this long is already a summary's size and is left alone. */
export const SUMMARY_MIN_CHARS = 200;
const SUMMARY_HEAD_CHARS = 100;
const SUMMARY_ARGS_CHARS = 80;

export interface CompactionRecord {
  id: string;
  /** `saved`: over budget, saved to a file; `summarized`: an older round reduced to one line. */
  kind: 'saved' | 'summarized';
  chars_before: number;
  chars_after: number;
  saved_as?: string;
}

const SAFE_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The path (relative to the data home) a result over budget is saved to: one folder per turn, as
 * call ids start again every turn (call_1_0). Ids come from the model: one that is not a plain name
 * (`../x`, `a/b`) is made one, with a hash of it to keep it unique.
 */
export function savedResultPath(sessionId: string, turnId: string, callId: string): string {
  const name = SAFE_NAME.test(callId) ? callId : `${callId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 60)}-${createHash('sha256').update(callId).digest('hex').slice(0, 12)}`;
  return `tool-results/${sessionId}/${turnId}/${name}.json`;
}

export function isOverBudget(content: string, budget: number): boolean {
  return content.length > budget;
}

/** What the model gets instead of a result past its budget: its head and where the rest is. Valid JSON. */
export function truncatedResult(content: string, budget: number, savedAs: string): string {
  // The saved file is for the user: no tool of the run reads Argo's data home, so the model is told how to see more instead.
  const note = `truncated: the first part of ${content.length} characters (saved for the user as ${savedAs}); for more, call the tool again for a narrower part`;
  // The wrapper's own characters count against the budget too, so the head is what is left of it.
  const overhead = JSON.stringify({ truncated: true, note, head: '' }).length;
  let head = content.slice(0, Math.max(0, budget - overhead));
  // JSON escapes may lengthen the head: shorten until the whole fits (a few steps at most).
  while (head.length > 0 && JSON.stringify({ truncated: true, note, head }).length > budget) head = head.slice(0, Math.floor(head.length * 0.9));
  return JSON.stringify({ truncated: true, note, head });
}

const flat = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

/** One line standing for an older round's result. */
export function summaryOf(name: string, args: Record<string, unknown>, content: string): string {
  return JSON.stringify({ summary: `${name}(${flat(JSON.stringify(args), SUMMARY_ARGS_CHARS)}) returned ${content.length} characters: ${flat(content, SUMMARY_HEAD_CHARS)}` });
}

export interface ResultMessage {
  callId: string;
  name: string;
  args: Record<string, unknown>;
  content: string;
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
    const summary = summaryOf(result.name, result.args, result.content);
    if (summary.length >= result.content.length) continue;
    records.push({ id: result.callId, kind: 'summarized', chars_before: result.content.length, chars_after: summary.length });
    result.content = summary;
    result.summarized = true;
  }
  return records;
}
