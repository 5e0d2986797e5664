import { containsPhrase, normaliseWords } from './phrases.js';
import type { ReplayReason, ReplaySpec } from './types.js';

/** Why earlier turns are replayed; null when replay is off. */
export function inferReason(
  spec: ReplaySpec,
  input: string,
  explicit: ReplayReason | undefined,
  clarificationPhrases: readonly string[],
): ReplayReason | null {
  switch (spec.kind) {
    case 'none':
      return null;
    case 'session':
      return 'session';
    case 'last':
      if (explicit) return explicit;
      return containsPhrase(normaliseWords(input), clarificationPhrases) ? 'clarification' : 'continuation';
  }
}
