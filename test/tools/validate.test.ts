import { describe, expect, it } from 'vitest';
import { validateArguments } from '../../src/tools/validate.js';
import type { ParametersSchema } from '../../src/tools/types.js';

const schema: ParametersSchema = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    offset: { type: 'integer', minimum: 1 },
    mode: { type: 'string', enum: ['overwrite', 'append'] },
    tags: { type: 'array', items: { type: 'string' } },
    options: { type: 'object', properties: { deep: { type: 'boolean' } }, required: ['deep'] },
  },
  required: ['path'],
  additionalProperties: false,
};

describe('validating arguments against the JSON Schema', () => {
  it.each([
    ['the required one only', { path: 'a' }],
    ['every kind of field', { path: 'a', offset: 2, mode: 'append', tags: ['x'], options: { deep: true } }],
  ])('accepts %s', (_name, args) => {
    expect(validateArguments({ parameters: schema }, args)).toEqual({ kind: 'ok', args });
  });

  it.each([
    ['absent', {}],
    ['null', { path: null }],
  ])('a required parameter %s is "missing", not invalid', (_name, args) => {
    expect(validateArguments({ parameters: schema }, args)).toEqual({ kind: 'missing', parameter: 'path' });
  });

  it.each([
    ['a wrong type', { path: 1 }, '"path"'],
    ['a fraction for an integer', { path: 'a', offset: 1.5 }, '"offset"'],
    ['below the minimum', { path: 'a', offset: 0 }, '"offset"'],
    ['outside the enum', { path: 'a', mode: 'delete' }, '"mode"'],
    ['a wrong item type', { path: 'a', tags: [1] }, '"tags.0"'],
    ['a nested required field missing', { path: 'a', options: {} }, '"options.deep"'],
    ['an unknown parameter', { path: 'a', extra: 1 }, 'extra'],
    ['not an object', ['a'], 'not a JSON object'],
    ['null', null, 'not a JSON object'],
  ])('rejects %s', (_name, args, fragment) => {
    const verdict = validateArguments({ parameters: schema }, args);
    expect(verdict.kind).toBe('invalid');
    expect(verdict.kind === 'invalid' ? verdict.reason : '').toContain(fragment);
  });

  it('a schema zod cannot convert still checks required parameters', () => {
    const odd: ParametersSchema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], $ref: '#/definitions/nowhere' };
    expect(validateArguments({ parameters: odd }, {}).kind).toBe('missing');
    expect(validateArguments({ parameters: odd }, { a: 'x' }).kind).toBe('ok');
  });
});
