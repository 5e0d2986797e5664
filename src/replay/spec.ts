// Pure: the replay spec as written on the command line, in config.json or in ARGO_REPLAY.
import type { ReplaySpec } from './types.js';

/** The largest N of last:N: past it a number is not held exactly (it would be rounded). */
export const MAX_REPLAY_COUNT = Number.MAX_SAFE_INTEGER;

const LAST = /^last:(\d+)$/;

/** `none`, `session` or `last:N` (1 ≤ N ≤ MAX_REPLAY_COUNT); null when the text is none of them. */
export function readReplaySpec(value: string): ReplaySpec | null {
  const text = value.trim();
  if (text === 'none') return { kind: 'none' };
  if (text === 'session') return { kind: 'session' };
  const count = Number(LAST.exec(text)?.[1]);
  return count >= 1 && count <= MAX_REPLAY_COUNT ? { kind: 'last', count } : null;
}

/** Whether `value` is `last:N` refused only for its size: N a whole number past MAX_REPLAY_COUNT, for the error to say so. */
export function isReplayCountTooLarge(value: string): boolean {
  return Number(LAST.exec(value.trim())?.[1]) > MAX_REPLAY_COUNT;
}

/** What a replay spec must be, for the refusal of `value` (readReplaySpec gave null): its size named when that alone was wrong. */
export function replaySpecRule(value: string): string {
  return isReplayCountTooLarge(value) ? `N is too large: use last:N with N of at most ${MAX_REPLAY_COUNT}` : 'use none, session, or last:N with N a whole number of 1 or more';
}

export function replaySpecText(spec: ReplaySpec): string {
  return spec.kind === 'last' ? `last:${spec.count}` : spec.kind;
}
