// Pure: the replay spec as written on the command line, in config.json or in ARGO_REPLAY.
import type { ReplaySpec } from './types.js';

/** `none`, `session` or `last:N` (N ≥ 1); null when the text is none of them. */
export function readReplaySpec(value: string): ReplaySpec | null {
  const text = value.trim();
  if (text === 'none') return { kind: 'none' };
  if (text === 'session') return { kind: 'session' };
  const last = /^last:(\d+)$/.exec(text);
  const count = last ? Number(last[1]) : NaN;
  return Number.isSafeInteger(count) && count >= 1 ? { kind: 'last', count } : null;
}

export function replaySpecText(spec: ReplaySpec): string {
  return spec.kind === 'last' ? `last:${spec.count}` : spec.kind;
}
