import { InvalidArgumentError } from 'commander';
import { MIN_BUDGET } from '../replay/policy.js';
import { readReplaySpec, replaySpecRule } from '../replay/spec.js';
import type { ReplaySpec } from '../replay/types.js';
import { DECIMAL } from '../text/decimal.js';

// Flag value parsers: each throws InvalidArgumentError, which commander reports as a usage error.

/** A run of digits past what a number holds exactly: said to be too large, never "not a whole number". */
export function refuseTooLarge(value: string): void {
  if (/^\d+$/.test(value) && !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError(`it is too large: the largest is ${Number.MAX_SAFE_INTEGER}.`);
}

export function parseReplaySpec(value: string): ReplaySpec {
  const spec = readReplaySpec(value);
  if (spec !== null) return spec;
  throw new InvalidArgumentError(`${replaySpecRule(value)} (e.g. last:3).`);
}

export function parseBudget(value: string): number {
  refuseTooLarge(value);
  const budget = Number(value);
  if (/^\d+$/.test(value) && Number.isSafeInteger(budget) && budget >= MIN_BUDGET) return budget;
  throw new InvalidArgumentError(`use a whole number of characters, at least ${MIN_BUDGET}.`);
}

export function parseNumber(value: string): number {
  const number = Number(value);
  if (DECIMAL.test(value) && Number.isFinite(number)) return number;
  throw new InvalidArgumentError('use a number, e.g. 0.7.');
}

export function parseInteger(value: string): number {
  refuseTooLarge(value);
  // Only a flag that takes negative numbers says how far they go.
  if (/^-\d+$/.test(value) && !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError(`it is too small: the smallest is ${Number.MIN_SAFE_INTEGER}.`);
  const number = Number(value);
  if (/^-?\d+$/.test(value) && Number.isSafeInteger(number)) return number;
  throw new InvalidArgumentError('use a whole number.');
}

export function parsePositiveInteger(value: string): number {
  refuseTooLarge(value);
  const number = Number(value);
  if (/^\d+$/.test(value) && Number.isSafeInteger(number) && number >= 1) return number;
  throw new InvalidArgumentError('use a whole number of 1 or more.');
}

/** A repeatable flag's values, in order. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
