import { describe, expect, it } from 'vitest';
import { schemaProblem, validateArguments } from '../../src/tools/validate.js';
import type { ParametersSchema } from '../../src/tools/types.js';
import { defined } from '../support/defined.js';

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

  // Null for a required parameter is "missing" only where its schema refuses null: a required
  // Optional (Pydantic, FastMCP) takes it as the value.
  const nullable = (title: Record<string, unknown>, extra: Record<string, unknown> = {}): ParametersSchema => ({
    type: 'object',
    properties: { name: { type: 'string' }, title },
    required: ['name', 'title'],
    ...extra,
  });
  it.each<[string, ParametersSchema, Record<string, unknown>, string]>([
    ['anyOf string or null (a required Optional)', nullable({ anyOf: [{ type: 'string' }, { type: 'null' }] }), { name: 'bob', title: null }, 'ok'],
    ['a type list with null', nullable({ type: ['string', 'null'] }), { name: 'bob', title: null }, 'ok'],
    ['oneOf string or null', nullable({ oneOf: [{ type: 'string' }, { type: 'null' }] }), { name: 'bob', title: null }, 'ok'],
    ['nullable (OpenAPI)', nullable({ type: 'string', nullable: true }), { name: 'bob', title: null }, 'ok'],
    ['an enum holding null', nullable({ enum: ['Dr', null] }), { name: 'bob', title: null }, 'ok'],
    ['no constraint at all', nullable({}), { name: 'bob', title: null }, 'ok'],
    ['a $ref to a nullable definition', nullable({ $ref: '#/$defs/T' }, { $defs: { T: { anyOf: [{ type: 'string' }, { type: 'null' }] } } }), { name: 'bob', title: null }, 'ok'],
    ['a string only', nullable({ type: 'string' }), { name: 'bob', title: null }, 'missing'],
    ['a $ref to a string', nullable({ $ref: '#/$defs/T' }, { $defs: { T: { type: 'string' } } }), { name: 'bob', title: null }, 'missing'],
    ['an enum without null', nullable({ enum: ['Dr', 'Ms'] }), { name: 'bob', title: null }, 'missing'],
    ['null taken, but absent is still missing', nullable({ anyOf: [{ type: 'string' }, { type: 'null' }] }), { name: 'bob' }, 'missing'],
    ['null taken, another parameter wrong: invalid', nullable({ anyOf: [{ type: 'string' }, { type: 'null' }] }), { name: 1, title: null }, 'invalid'],
    // Cannot be compiled: nothing says null is taken.
    ['a schema that cannot be compiled', nullable({ anyOf: [{ type: 'string' }, { type: 'null' }] }, { $ref: '#/nowhere' }), { name: 'bob', title: null }, 'missing'],
  ])('a required parameter sent as null, schema %s → %s', (_name, parameters, args, kind) => {
    const verdict = validateArguments({ parameters }, args);
    expect(verdict.kind).toBe(kind);
    if (verdict.kind === 'missing') expect(verdict.parameter).toBe('title');
    if (verdict.kind === 'ok') expect(verdict.args).toEqual(args);
  });

  // An optional parameter sent as null where its schema refuses null is absent: the tool runs
  // without it. One whose schema takes null keeps it as its value.
  it.each<[string, Record<string, unknown>, ParametersSchema, { kind: string; args?: Record<string, unknown>; reason?: string }]>([
    ['offset null', { path: 'a', offset: null }, schema, { kind: 'ok', args: { path: 'a' } }],
    ['offset and mode null, as read_file gets them', { path: 'a', offset: null, mode: null }, schema, { kind: 'ok', args: { path: 'a' } }],
    ['an object parameter null', { path: 'a', options: null }, schema, { kind: 'ok', args: { path: 'a' } }],
    ['null beside a wrong value: still invalid for the wrong one', { path: 'a', offset: null, mode: 'delete' }, schema, { kind: 'invalid', reason: '"mode" must be equal to one of the allowed values' }],
    ['null for a name the schema does not have: an unknown parameter, not dropped', { path: 'a', colour: null }, schema, { kind: 'invalid', reason: 'the arguments must NOT have additional properties (unknown: colour)' }],
    [
      'a nullable optional parameter keeps its null',
      { path: 'a', note: null },
      { type: 'object', properties: { path: { type: 'string' }, note: { type: ['string', 'null'] } }, required: ['path'] },
      { kind: 'ok', args: { path: 'a', note: null } },
    ],
    [
      'a schema that cannot be compiled: nothing says null is taken, so it is absent',
      { path: 'a', note: null },
      { type: 'object', properties: { path: { type: 'string' }, note: { $ref: '#/nowhere' } }, required: ['path'] },
      { kind: 'ok', args: { path: 'a' } },
    ],
    [
      'a required parameter null beside an optional one null: the required one is missing',
      { path: null, offset: null },
      schema,
      { kind: 'missing' },
    ],
  ])('an optional parameter sent as null: %s', (_name, args, parameters, expected) => {
    const sent = structuredClone(args);
    const verdict = validateArguments({ parameters }, args);
    expect(verdict).toMatchObject(expected);
    if (expected.kind === 'ok') expect(verdict).toEqual(expected);
    // What the model sent is not changed: it is logged and sent back as it came.
    expect(args).toEqual(sent);
  });

  it('a parameter whose name needs escaping in a JSON pointer is placed by its own name', () => {
    const parameters: ParametersSchema = { type: 'object', properties: { 'a/b~c': { type: 'string' } }, required: ['a/b~c'] };
    expect(validateArguments({ parameters }, { 'a/b~c': null })).toEqual({ kind: 'missing', parameter: 'a/b~c' });
    expect(validateArguments({ parameters: { ...parameters, properties: { 'a/b~c': { type: ['string', 'null'] } } } }, { 'a/b~c': null }).kind).toBe('ok');
  });

  it.each([
    ['a wrong type', { path: 1 }, '"path" must be string'],
    ['a fraction for an integer', { path: 'a', offset: 1.5 }, '"offset" must be integer'],
    ['below the minimum', { path: 'a', offset: 0 }, '"offset" must be >= 1'],
    ['outside the enum', { path: 'a', mode: 'delete' }, '"mode" must be equal to one of the allowed values'],
    ['a wrong item type', { path: 'a', tags: [1] }, '"tags.0" must be string'],
    ['a nested required field missing', { path: 'a', options: {} }, '"options" must have required property \'deep\''],
    ['an unknown parameter', { path: 'a', extra: 1 }, 'the arguments must NOT have additional properties (unknown: extra)'],
    ['two mistakes', { path: 1, offset: 0 }, '"path" must be string, "offset" must be >= 1'],
    ['not an object', ['a'], 'not a JSON object'],
    ['null', null, 'not a JSON object'],
  ])('rejects %s', (_name, args, fragment) => {
    const verdict = validateArguments({ parameters: schema }, args);
    expect(verdict.kind).toBe('invalid');
    expect(verdict.kind === 'invalid' ? verdict.reason : '').toContain(fragment);
  });

  // What JSON Schema says, including keywords without "type" (zod's converter ignored those).
  const shapes: Record<string, ParametersSchema> = {
    oneOf: { type: 'object', properties: {}, oneOf: [{ properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } }, required: ['b'] }] },
    anyOf: { type: 'object', properties: { v: { anyOf: [{ type: 'string' }, { type: 'number' }] } } },
    allOf: { type: 'object', properties: {}, allOf: [{ properties: { a: { type: 'string' } } }, { required: ['a'] }] },
    ref: { type: 'object', properties: { x: { $ref: '#/$defs/X' } }, $defs: { X: { type: 'string', minLength: 2 } } },
    enum: { type: 'object', properties: { level: { enum: ['low', 1, null] } } },
    nested: { type: 'object', properties: { outer: { type: 'object', properties: { inner: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } } } } } },
    untyped: { type: 'object', properties: { s: { minLength: 2 } } },
    // As zod-to-json-schema and newer servers write them: a draft this Ajv does not load, and an id
    // two tools share (Ajv would refuse the second, were compiled schemas kept).
    draft2020: { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'urn:tool', type: 'object', properties: { n: { type: 'integer' } } },
    sameId: { $schema: 'http://json-schema.org/draft-07/schema#', $id: 'urn:tool', type: 'object', properties: { n: { type: 'string' } } },
  };
  it.each([
    ['oneOf', { a: 'x' }, true],
    ['oneOf', { b: 1 }, true],
    ['oneOf', { a: 'x', b: 1 }, false],
    ['oneOf', {}, false],
    ['oneOf', { a: 1 }, false],
    ['anyOf', { v: 'x' }, true],
    ['anyOf', { v: 2 }, true],
    ['anyOf', { v: true }, false],
    ['allOf', { a: 'x' }, true],
    ['allOf', {}, false],
    ['allOf', { a: 1 }, false],
    ['ref', { x: 'ok' }, true],
    ['ref', { x: 'o' }, false],
    ['ref', { x: 1 }, false],
    ['enum', { level: 1 }, true],
    ['enum', { level: null }, true],
    ['enum', { level: 'high' }, false],
    ['nested', { outer: { inner: [{ n: 1 }, { n: 2 }] } }, true],
    ['nested', { outer: { inner: [{ n: 1 }, {}] } }, false],
    ['nested', { outer: { inner: [{ n: 1.5 }] } }, false],
    ['untyped', { s: 'ab' }, true],
    ['untyped', { s: 7 }, true],
    ['untyped', { s: 'a' }, false],
    ['draft2020', { n: 1 }, true],
    ['draft2020', { n: 'one' }, false],
    ['sameId', { n: 'one' }, true],
    ['sameId', { n: 1 }, false],
  ])('%s schema: %j is valid: %s', (shape, args, valid) => {
    expect(validateArguments({ parameters: defined(shapes[shape]) }, args).kind).toBe(valid ? 'ok' : 'invalid');
  });

  it('a schema that cannot be compiled still checks required parameters', () => {
    const odd: ParametersSchema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], $ref: '#/definitions/nowhere' };
    expect(validateArguments({ parameters: odd }, {}).kind).toBe('missing');
    expect(validateArguments({ parameters: odd }, { a: 'x' }).kind).toBe('ok');
  });
});

describe('a command tool schema from config.json: compiled once, refused with where and why', () => {
  const object = (extra: Record<string, unknown>) => ({ type: 'object', properties: { who: { type: 'string' } }, ...extra });
  it.each([
    [object({ required: ['who'] }), null],
    [object({ $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'x' }), null],
    [object({ required: 'who' }), { at: 'required', problem: 'must be array, as JSON Schema says' }],
    [object({ required: 5 }), { at: 'required', problem: 'must be array, as JSON Schema says' }],
    [object({ required: [1] }), { at: 'required.0', problem: 'must be string, as JSON Schema says' }],
    [{ type: 'object', properties: { who: { type: 'nonsense' } } }, { at: 'properties.who.type', problem: 'must be equal to one of the allowed values (array, boolean, integer, null, number, object, string), as JSON Schema says' }],
    [{ type: 'object', properties: { who: { type: 'string', pattern: '([' } } }, { at: '', problem: expect.stringMatching(/^cannot be compiled as JSON Schema \(Invalid regular expression: .*\)$/) as unknown }],
    [{ type: 'object', properties: { who: { $ref: '#/nowhere' } } }, { at: '', problem: expect.stringMatching(/^cannot be compiled as JSON Schema \(can't resolve reference #\/nowhere/) as unknown }],
  ])('%j → %j', (given, problem) => {
    expect(schemaProblem(given)).toEqual(problem);
  });

  // An MCP server's schema is not checked as config is: an odd "required" must not crash the run.
  it.each([['who'], [5], [{ who: true }], [[1, 'who']]])('a "required" of %j is read only as a list of names', (required) => {
    const odd = { type: 'object', properties: { who: { type: 'string' } }, required } as unknown as ParametersSchema;
    const verdict = validateArguments({ parameters: odd }, {});
    expect(['ok', 'invalid', 'missing']).toContain(verdict.kind);
    if (verdict.kind === 'missing') expect(verdict.parameter).toBe('who');
  });
});

// Patterns run on RE2 (linear in the value), not JavaScript's backtracking engine: a schema's
// pattern cannot hang argo, or every request of argo serve, on one argument.
describe('a schema pattern', () => {
  const withPattern = (pattern: string, where: 'pattern' | 'patternProperties' = 'pattern'): ParametersSchema =>
    where === 'pattern'
      ? { type: 'object', properties: { name: { type: 'string', pattern } }, required: ['name'] }
      : { type: 'object', properties: { name: { type: 'object', patternProperties: { [pattern]: { type: 'number' } } } }, required: ['name'] };
  it.each<[string, string, unknown, 'ok' | 'invalid']>([
    ['a tag', '^([a-z0-9]+-?)+$', 'release-1', 'ok'],
    ['a tag', '^([a-z0-9]+-?)+$', 'Release 1', 'invalid'],
    ['digits', '^\\d{3}-\\d{4}$', '555-1234', 'ok'],
    ['digits', '^\\d{3}-\\d{4}$', '555-12345', 'invalid'],
    ['found anywhere, as JSON Schema says', 'b+', 'abba', 'ok'],
    ['found anywhere, as JSON Schema says', 'b+', 'acca', 'invalid'],
    ['a named group', '^(?<year>\\d{4})-\\d{2}$', '2026-11', 'ok'],
    ['a named group', '^(?<year>\\d{4})-\\d{2}$', '26-11', 'invalid'],
    ['a \\u escape', '^caf\\u00e9$', 'café', 'ok'],
    ['a \\u escape', '^caf\\u00e9$', 'cafe', 'invalid'],
    ['a Unicode class', '^\\p{L}+$', 'Ωμέγα', 'ok'],
    ['a Unicode class', '^\\p{L}+$', 'Ωμέγα 1', 'invalid'],
    ['an end before a last newline, not after it', '^a$', 'a\n', 'invalid'],
    // RE2 has no lookaround or backreferences: not checked by Argo, left to the tool.
    ['a lookahead (not checked)', '^(?!tmp)\\w+$', 'tmpfile', 'ok'],
    ['a backreference (not checked)', '^(a)\\1$', 'ab', 'ok'],
    ['a lookahead (not checked), still typed', '^(?!tmp)\\w+$', 5, 'invalid'],
  ])('%s: %s on %j → %s', (_name, pattern, value, kind) => {
    expect(validateArguments({ parameters: withPattern(pattern) }, { name: value }).kind).toBe(kind);
  });

  it.each<[string, Record<string, unknown>, 'ok' | 'invalid']>([
    ['^x-', { 'x-a': 1, y: 'free' }, 'ok'],
    ['^x-', { 'x-a': 'not a number' }, 'invalid'],
  ])('patternProperties %s on %j → %s', (pattern, value, kind) => {
    expect(validateArguments({ parameters: withPattern(pattern, 'patternProperties') }, { name: value }).kind).toBe(kind);
  });

  it('two schemas with different patterns each keep their own', () => {
    expect(validateArguments({ parameters: withPattern('^a+$') }, { name: 'aaa' }).kind).toBe('ok');
    expect(validateArguments({ parameters: withPattern('^b+$') }, { name: 'aaa' }).kind).toBe('invalid');
    const both: ParametersSchema = { type: 'object', properties: { a: { type: 'string', pattern: '^a+$' }, b: { type: 'string', pattern: '^b+$' } } };
    expect(validateArguments({ parameters: both }, { a: 'aa', b: 'bb' }).kind).toBe('ok');
    expect(validateArguments({ parameters: both }, { a: 'bb', b: 'aa' })).toEqual({ kind: 'invalid', reason: '"a" must match pattern "^a+$", "b" must match pattern "^b+$"' });
  });

  // Backtracking, these take minutes (2^40 ways to split the a's): the test finishing at all is the proof.
  it.each([
    ['^([a-z0-9]+-?)+$', `${'a'.repeat(40)}!`],
    ['^(a+)+$', `${'a'.repeat(40)}b`],
    ['^(\\w+\\s?)*$', `${'word '.repeat(12)}word!`],
  ])('%s on a value it backtracks on returns a verdict', (pattern, value) => {
    expect(validateArguments({ parameters: withPattern(pattern) }, { name: value })).toEqual({ kind: 'invalid', reason: `"name" must match pattern "${pattern}"` });
  });

  it.each([
    ['^(?!tmp)\\w+$', null],
    ['(?i)abc', 'Invalid regular expression'],
    ['\\-', 'Invalid regular expression'],
  ])('in config.json, %s is a usable pattern, or refused as JavaScript refuses it', (pattern, refused) => {
    const problem = schemaProblem({ type: 'object', properties: { name: { type: 'string', pattern } } });
    if (refused === null) expect(problem).toBeNull();
    else expect(problem?.problem).toContain(refused);
  });
});

// Arguments are the model's JSON object: a name an object inherits (constructor, toString) is a
// parameter like any other, absent unless the model sent it.
describe('a parameter named as an Object.prototype member', () => {
  const inherited = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];
  it.each(inherited)('%s, required and absent, is missing', (name) => {
    expect(validateArguments({ parameters: { type: 'object', properties: { [name]: { type: 'string' } }, required: [name] } }, {})).toEqual({ kind: 'missing', parameter: name });
    expect(validateArguments({ parameters: { type: 'object', properties: { [name]: {} }, required: [name] } }, {})).toEqual({ kind: 'missing', parameter: name });
  });
  it.each(inherited.filter((name) => name !== '__proto__'))('%s, required and given, is ok', (name) => {
    const args = { [name]: 'bob' };
    expect(validateArguments({ parameters: { type: 'object', properties: { [name]: { type: 'string' } }, required: [name] } }, args)).toEqual({ kind: 'ok', args });
  });
  it('an optional one absent is not checked against its schema', () => {
    expect(validateArguments({ parameters: { type: 'object', properties: { toString: { type: 'string' } } } }, {})).toEqual({ kind: 'ok', args: {} });
  });
});
