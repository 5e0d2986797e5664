// What Ollama can read of a tool's parameters: the rules of Go's encoding/json for api/types.go's
// ToolFunctionParameters and ToolProperty (a string or list of strings for a property's `type`, an
// ordered map of ToolProperty objects for `properties`, anything for `items` and `$defs`, null
// anywhere, unknown keys ignored, keys matched case-insensitively).
import { describe, expect, it } from 'vitest';
import { unreadableByOllama, unreadableReason } from '../../src/ollama/tool-schema.js';
import { builtinTools } from '../../src/tools/catalog.js';

const withProperty = (property: unknown): unknown => ({ type: 'object', properties: { limit: property } });

describe('unreadableByOllama', () => {
  it.each<[string, unknown, string | null]>([
    // Read whole.
    ['an empty object schema', { type: 'object', properties: {} }, null],
    ['no properties at all', { type: 'object' }, null],
    ['null properties, required and type', { type: null, properties: null, required: null }, null],
    ['a null parameters schema', null, null],
    ['keywords Go has no field for', { type: 'object', additionalProperties: false, description: 5, $schema: 7, properties: { a: { minimum: 'x', default: {}, format: 1 } } }, null],
    ['$defs and items of any shape', { type: 'object', $defs: 5, items: true, properties: { a: { items: false } } }, null],
    ['a type list with null', withProperty({ type: ['string', 'null'] }), null],
    ['a null type and a null in the list', withProperty({ type: null, enum: null, anyOf: null }), null],
    ['enum of any values', withProperty({ enum: [1, 'a', null, {}, []] }), null],
    ['anyOf of schemas and null', withProperty({ anyOf: [{ type: 'string' }, null, { type: ['number'] }] }), null],
    ['nested properties and required', withProperty({ type: 'object', properties: { b: { type: 'string' }, c: null }, required: ['b', null] }), null],
    ['required with a null name', { type: 'object', required: ['a', null] }, null],
    ['a null property', withProperty(null), null],
    // Not read: a 400 for every request that offers the tool.
    ['parameters a list', [], ' must be an object'],
    ['type a list at the top', { type: ['object'] }, 'type must be a string'],
    ['required a string', { type: 'object', required: 'a' }, 'required must be a list of names'],
    ['required holding a number', { type: 'object', required: ['a', 1] }, 'required must be a list of names'],
    ['properties a list', { type: 'object', properties: [] }, 'properties must be an object of schemas'],
    ['a boolean subschema', withProperty(true), 'properties.limit must be an object (Ollama cannot read a true or false schema there)'],
    ['a list as a property', withProperty([{ type: 'string' }]), 'properties.limit must be an object (Ollama cannot read a true or false schema there)'],
    ["a property's required a string", withProperty({ required: 'x' }), 'properties.limit.required must be a list of names'],
    ["a property's type a number", withProperty({ type: 5 }), 'properties.limit.type must be a type name or a list of them'],
    ["a property's type list holding an object", withProperty({ type: ['string', {}] }), 'properties.limit.type must be a type name or a list of them'],
    ["a property's description a number", withProperty({ description: 5 }), 'properties.limit.description must be a string'],
    ["a property's enum an object", withProperty({ enum: { a: 1 } }), 'properties.limit.enum must be a list'],
    ["a property's anyOf an object", withProperty({ anyOf: { type: 'string' } }), 'properties.limit.anyOf must be a list of schemas'],
    ["a boolean in anyOf, placed by index", withProperty({ anyOf: [{ type: 'string' }, true] }), 'properties.limit.anyOf.1 must be an object (Ollama cannot read a true or false schema there)'],
    ['a boolean subschema two levels down', withProperty({ properties: { inner: false } }), 'properties.limit.properties.inner must be an object (Ollama cannot read a true or false schema there)'],
    ["a property's properties a string", withProperty({ properties: 'x' }), 'properties.limit.properties must be an object of schemas'],
    ['Required: Go matches keys case-insensitively', { type: 'object', Required: 'a' }, 'required must be a list of names'],
    ['TYPE inside a property', withProperty({ TYPE: 5 }), 'properties.limit.type must be a type name or a list of them'],
    ['an odd property name is quoted', { type: 'object', properties: { 'a.b c': true } }, 'properties."a.b c" must be an object (Ollama cannot read a true or false schema there)'],
    ['a bidi mark in a name is not shown raw', { type: 'object', properties: { 'a\u202eb': false } }, 'properties."a?b" must be an object (Ollama cannot read a true or false schema there)'],
    ['the first problem in key order', { type: 'object', properties: { a: { type: 5 } }, required: 'a' }, 'properties.a.type must be a type name or a list of them'],
  ])('%s', (_name, schema, said) => {
    const found = unreadableByOllama(schema);
    expect(found === null ? null : `${found.at} ${found.problem}`).toBe(said);
  });

  it('names the place in one line', () => {
    expect(unreadableReason({ at: 'properties.limit.required', problem: 'must be a list of names' })).toBe('Ollama cannot read its input schema: properties.limit.required must be a list of names');
    expect(unreadableReason({ at: '', problem: 'must be an object' })).toBe('Ollama cannot read its input schema: the schema must be an object');
  });

  it("reads every built-in tool's schema", () => {
    expect(builtinTools().map((tool) => [tool.name, unreadableByOllama(tool.parameters)]).filter(([, found]) => found !== null)).toEqual([]);
  });
});
