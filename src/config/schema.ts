import { UsageError } from '../errors.js';
import { clipText } from '../output/cut.js';

// A tiny shape checker for config.json: every unknown key and wrong type is named by its path.
export type Shape =
  | 'string'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'string[]'
  | 'string|null'
  | 'string|integer'
  | 'boolean|string'
  /** Any JSON object, checked by its user (a tool's JSON Schema, say). */
  | 'object'
  | { record: Shape }
  | { fields: Record<string, Shape> };

export function checkShape(value: unknown, shape: Shape, path: string, source: string): void {
  const fail = (expected: string): never => {
    throw new UsageError(`${source}: ${path === '' ? 'the top level' : JSON.stringify(path)} must be ${expected}, got ${describe(value)}`);
  };
  if (typeof shape === 'object') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('an object');
    const entries = Object.entries(value as Record<string, unknown>);
    for (const [key, child] of entries) {
      const childPath = path === '' ? key : `${path}.${key}`;
      if ('record' in shape) {
        checkShape(child, shape.record, childPath, source);
        continue;
      }
      const childShape = Object.hasOwn(shape.fields, key) ? shape.fields[key] : undefined;
      if (childShape === undefined) {
        const known = Object.keys(shape.fields).join(', ');
        throw new UsageError(`${source}: unknown key ${JSON.stringify(childPath)} (known keys${path === '' ? '' : ` of ${JSON.stringify(path)}`}: ${known})`);
      }
      checkShape(child, childShape, childPath, source);
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
    case 'integer':
      // Past 2^53 a number is no longer exact, and Ollama's Go ints refuse it.
      if (!Number.isSafeInteger(value)) fail('a whole number');
      return;
    case 'boolean':
      if (typeof value !== 'boolean') fail('true or false');
      return;
    case 'string[]':
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) fail('an array of strings');
      return;
    case 'string|null':
      if (value !== null && typeof value !== 'string') fail('a string or null');
      return;
    case 'string|integer':
      if (typeof value !== 'string' && !Number.isSafeInteger(value)) fail('a string or a whole number');
      return;
    case 'boolean|string':
      if (typeof value !== 'string' && typeof value !== 'boolean') fail('true, false or a string');
      return;
    case 'object':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('an object');
      return;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(clipText(value, 40));
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : typeof value;
}
