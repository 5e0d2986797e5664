import type { ContextStrength, EntryType, ReplayReason } from './types.js';

export interface StrengthInput {
  usedTypes: readonly EntryType[];
  trimmed: boolean;
  reason: ReplayReason;
  strongMinTurns: number;
}

export function contextStrength({ usedTypes, trimmed, reason, strongMinTurns }: StrengthInput): ContextStrength {
  const onlyNoise = usedTypes.every((type) => type === 'meta' || type === 'other');
  if (usedTypes.length === 0 || onlyNoise || (reason === 'clarification' && trimmed)) return 'weak';
  const taskContext = usedTypes.some((type) => type === 'instruction' || type === 'correction');
  if (usedTypes.length >= strongMinTurns && !trimmed && reason !== 'clarification' && taskContext) return 'strong';
  return 'moderate';
}
