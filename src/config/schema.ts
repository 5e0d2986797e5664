import { UsageError } from '../errors.js';
import { quotedName } from '../output/terminal-text.js';
import { looksSecret } from '../text/secrets.js';

// A tiny shape checker for config.json: every unknown key and wrong type is named by its path.
export type Shape =
  | 'string'
  | 'number'
  /** A whole number a double holds exactly (±2^53 − 1). */
  | 'integer'
  | 'boolean'
  | 'string[]'
  | 'string|null'
  | 'string|integer'
  | 'boolean|string'
  /** Any JSON object, checked by its user (a tool's JSON Schema, say). */
  | 'object'
  /** A whole number from min to max (max: the largest exact one when left out). */
  | { integer: { min: number; max?: number } }
  | { record: Shape }
  | { fields: Record<string, Shape> };

/** `{ integer: { min, max } }`, written short. */
export function whole(min: number, max?: number): Shape {
  return { integer: max === undefined ? { min } : { min, max } };
}

/**
 * `hidden`: the value is under a key that holds secrets (checkShape's `secretKey`), so a message
 * says its type, never the value itself. The message goes to a terminal, a CI log, a client.
 */
export function checkShape(value: unknown, shape: Shape, path: string, source: string, hidden = false): void {
  const fail = (expected: string, shown = value, at = path, byType = hidden): never => {
    throw new UsageError(`${source}: ${at === '' ? 'the top level' : JSON.stringify(at)} must be ${expected}, got ${valueHidden(shown, byType) ? typeName(shown) : describe(shown)}`);
  };
  if (typeof shape === 'object' && 'integer' in shape) {
    const wrong = wholeFailure(value, shape.integer.min, shape.integer.max);
    if (wrong !== null) fail(wrong);
    return;
  }
  if (typeof shape === 'object') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('an object');
    const entries = Object.entries(value as Record<string, unknown>);
    for (const [key, child] of entries) {
      const childPath = path === '' ? key : `${path}.${key}`;
      const childHidden = hidden || secretKey(key);
      if ('record' in shape) {
        checkShape(child, shape.record, childPath, source, childHidden);
        continue;
      }
      const childShape = Object.hasOwn(shape.fields, key) ? shape.fields[key] : undefined;
      if (childShape === undefined) {
        const known = Object.keys(shape.fields).join(', ');
        throw new UsageError(`${source}: unknown key ${JSON.stringify(childPath)} (known keys${path === '' ? '' : ` of ${JSON.stringify(path)}`}: ${known})`);
      }
      checkShape(child, childShape, childPath, source, childHidden);
    }
    return;
  }
  switch (shape) {
    case 'string':
      if (typeof value !== 'string') fail('a string');
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) fail('a number');
      return;
    case 'integer': {
      const wrong = wholeFailure(value);
      if (wrong !== null) fail(wrong);
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') fail('true or false');
      return;
    case 'string[]': {
      if (!Array.isArray(value)) fail('an array of strings');
      // The element is named (in a long argv "an array" leaves the user looking) and said by its
      // type: an argument beside "--pin" or "--token" is one.
      const index = (value as unknown[]).findIndex((item) => typeof item !== 'string');
      if (index !== -1) fail('a string', (value as unknown[])[index], `${path}[${index}]`, true);
      return;
    }
    case 'string|null':
      if (value !== null && typeof value !== 'string') fail('a string or null');
      return;
    case 'string|integer':
      if (typeof value !== 'string' && typeof value !== 'number') fail('a string or a whole number');
      if (typeof value === 'number') {
        const wrong = wholeFailure(value);
        if (wrong !== null) fail(wrong === 'a whole number' ? 'a string or a whole number' : wrong);
      }
      return;
    case 'boolean|string':
      if (typeof value !== 'string' && typeof value !== 'boolean') fail('true, false or a string');
      return;
    case 'object':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('an object');
      return;
  }
}

/**
 * What a whole number from min to max must be, or null when `value` is one. Past 2^53 a number is no
 * longer exact (and Ollama's Go ints refuse it): a larger one is too large, not a fraction.
 */
function wholeFailure(value: unknown, min = -Number.MAX_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): string | null {
  // JSON.parse reads 1e400 as Infinity: too large too, as 1e300 is.
  if (typeof value !== 'number' || Number.isNaN(value) || (Number.isFinite(value) && !Number.isInteger(value))) return 'a whole number';
  if (value < min) return `at least ${min}`;
  if (value > max) return max === Number.MAX_SAFE_INTEGER ? `at most ${max} (2^53 - 1, the largest whole number kept exact)` : `at most ${max}`;
  return null;
}

/**
 * A key whose value is a secret, or holds some: a secret-looking name (apiKey, token, password, as
 * tools' environments are judged) or a process's environment ("env"), whatever its variables are named.
 */
function secretKey(key: string): boolean {
  return key === 'env' || looksSecret(key, undefined);
}

/**
 * Whether a message gives a config value by its type alone: one under a key that holds secrets
 * (`underSecretKey`: checkShape's `secretKey`), or a string shaped like a key or token, whatever its key.
 */
export function valueHidden(value: unknown, underSecretKey = false): boolean {
  return underSecretKey || (typeof value === 'string' && looksSecret('', value));
}

/**
 * A config value as a message quotes it (docs/configuration.md): a string quoted, cut to 40
 * characters, a number as written; by its type alone ("a string") when valueHidden. Messages go to
 * a terminal, a CI log, a client.
 */
export function shownValue(value: unknown, underSecretKey = false): string {
  if (!valueHidden(value, underSecretKey)) return describe(value);
  // Said as what it is ("unknown persona a string" reads as a message that lost its value); a wrong
  // type's message (checkShape) needs only the type.
  return typeof value === 'string' && looksSecret('', value) ? 'a value shaped like a key or token (not shown)' : typeName(value);
}

/** `value` as describe says it, a string or a number by its type alone (true, false and null are no secret). */
function typeName(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? `a ${typeof value}` : describe(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  // Controls a JSON string keeps as they are (C1, direction marks) shown as "?".
  if (typeof value === 'string') return quotedName(value, 40);
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value;
}
