// How a chat request's tools and tool calls bind to Ollama's Go types (api/types.go), as Gin's
// ShouldBindJSON reads them: `tools[].function.parameters` into ToolFunctionParameters, whose
// `properties` is an ordered map of ToolProperty (0.14.0+: internal/orderedmap over
// wk8/go-ordered-map, which walks the object with buger/jsonparser), and each message's
// `tool_calls[].function.arguments` into an ordered map too. A value of the wrong JSON type fails the
// whole request with a 400 and Go's words. The field types are 0.14.0's; earlier releases read
// tools with plain Go maps (the messages for a value that is no object differ, and are modelled) and
// some fields with narrower types (a property's `type` was one string before 0.6.6), which are not.
import type { RequestBody } from './types.js';
import type { VersionProfile } from './versions.js';
import { BadRequest, jsonKind, typeError } from './wire.js';

/** jsonparser's ObjectEach on anything but an object (buger/jsonparser v1.1.1 MalformedObjectError). */
export const NOT_AN_OBJECT = "Value looks like object, but can't find closing '}' symbol";

type Kind = 'string' | 'int' | 'strings' | 'types' | 'any[]' | 'any' | 'property' | 'properties' | 'property[]';

const PARAMETERS: Record<string, Kind> = { type: 'string', $defs: 'any', items: 'any', required: 'strings', properties: 'properties' };
const PROPERTY: Record<string, Kind> = {
  anyOf: 'property[]', type: 'types', items: 'any', description: 'string', enum: 'any[]', properties: 'properties', required: 'strings',
};

const isObject = (value: unknown): value is RequestBody => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every key Go reads into one of `fields` (matched case-insensitively), in the order the JSON has them. */
function fieldsIn(object: RequestBody, fields: Record<string, Kind>): [name: string, kind: Kind, value: unknown][] {
  const out: [string, Kind, unknown][] = [];
  for (const [key, value] of Object.entries(object)) {
    const name = Object.keys(fields).find((field) => field.toLowerCase() === key.toLowerCase());
    const kind = name === undefined ? undefined : fields[name];
    if (name !== undefined && kind !== undefined) out.push([name, kind, value]);
  }
  return out;
}

/**
 * Binds `value` as a field of Go type `kind`. `struct` and `path` are what Go names in an
 * UnmarshalTypeError: errors inside an ordered map's values are told as the map field's (the
 * nested decoders' context is replaced by the outer one's, and the map key is never part of it).
 */
function bind(value: unknown, kind: Kind, struct: string, path: string, profile: VersionProfile): void {
  if (value === null || value === undefined || kind === 'any') return;
  const fail = (goType: string, what: unknown = value): BadRequest => typeError(jsonKind(what), `struct field ${struct}.${path}`, goType);
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw fail('string');
      return;
    case 'int':
      if (!Number.isSafeInteger(value)) throw typeof value === 'number' ? typeError(`number ${String(value)}`, `struct field ${struct}.${path}`, 'int') : fail('int');
      return;
    case 'strings':
      if (!Array.isArray(value)) throw fail('[]string');
      for (const item of value as unknown[]) if (item !== null && typeof item !== 'string') throw fail('string', item);
      return;
    case 'types':
      // api.PropertyType: a string, else a list of strings (the list's error is the one told).
      if (typeof value !== 'string') bind(value, 'strings', struct, path, profile);
      return;
    case 'any[]':
      if (!Array.isArray(value)) throw fail('[]interface {}');
      return;
    case 'property':
      if (!isObject(value)) throw fail('api.ToolProperty');
      for (const [name, fieldKind, item] of fieldsIn(value, PROPERTY)) bind(item, fieldKind, struct, `${path}.${name}`, profile);
      return;
    case 'property[]':
      if (!Array.isArray(value)) throw fail('[]api.ToolProperty');
      for (const item of value as unknown[]) bind(item, 'property', struct, path, profile);
      return;
    case 'properties':
      if (!isObject(value)) {
        if (profile.orderedMaps) throw new BadRequest(NOT_AN_OBJECT);
        throw fail('map[string]api.ToolProperty');
      }
      for (const item of Object.values(value)) bind(item, 'property', struct, path, profile);
  }
}

/** A chat request's tools and its messages' tool calls, as `profile`'s release binds them (none before 0.2.6: unknown fields). */
export function bindToolFields(body: RequestBody, profile: VersionProfile): void {
  if (!profile.tools) return;
  for (const [, , messages] of fieldsIn(body, { messages: 'any' })) {
    for (const message of Array.isArray(messages) ? (messages as unknown[]) : []) {
      if (isObject(message)) for (const [, , calls] of fieldsIn(message, { tool_calls: 'any' })) bindToolCalls(calls, profile);
    }
  }
  bindTools(body, profile);
}

/** ChatRequest.tools (api.Tools): each tool, its function and the function's parameters. */
function bindTools(body: RequestBody, profile: VersionProfile): void {
  const tools = fieldsIn(body, { tools: 'any' }).map(([, , value]) => value);
  for (const list of tools) {
    for (const tool of Array.isArray(list) ? (list as unknown[]) : []) {
      if (tool === null) continue;
      if (!isObject(tool)) throw typeError(jsonKind(tool), 'struct field ChatRequest.tools', 'api.Tool');
      for (const [name, , value] of fieldsIn(tool, { type: 'string', function: 'any' })) {
        if (name === 'type') bind(value, 'string', 'Tool', 'tools.type', profile);
        else bindFunction(value, profile);
      }
    }
  }
}

function bindFunction(fn: unknown, profile: VersionProfile): void {
  if (fn === null || fn === undefined) return;
  if (!isObject(fn)) throw typeError(jsonKind(fn), 'struct field Tool.tools.function', 'api.ToolFunction');
  for (const [name, , value] of fieldsIn(fn, { name: 'string', description: 'string', parameters: 'any' })) {
    if (name !== 'parameters') {
      bind(value, 'string', 'ToolFunction', `tools.function.${name}`, profile);
      continue;
    }
    if (value === null) continue;
    if (!isObject(value)) throw typeError(jsonKind(value), 'struct field ToolFunction.tools.function.parameters', 'api.ToolFunctionParameters');
    for (const [field, kind, item] of fieldsIn(value, PARAMETERS)) bind(item, kind, 'ToolFunctionParameters', `tools.function.parameters.${field}`, profile);
  }
}

/** A message's `tool_calls` (api.ToolCall): the function's name, index and arguments (an ordered map from 0.14.0). */
function bindToolCalls(calls: unknown, profile: VersionProfile): void {
  if (calls === null || calls === undefined) return;
  if (!Array.isArray(calls)) throw typeError(jsonKind(calls), 'struct field Message.messages.tool_calls', '[]api.ToolCall');
  for (const call of calls as unknown[]) {
    if (call === null) continue;
    if (!isObject(call)) throw typeError(jsonKind(call), 'struct field Message.messages.tool_calls', 'api.ToolCall');
    for (const [, , fn] of fieldsIn(call, { function: 'any' })) {
      if (fn === null) continue;
      if (!isObject(fn)) throw typeError(jsonKind(fn), 'struct field ToolCall.messages.tool_calls.function', 'api.ToolCallFunction');
      for (const [name, kind, value] of fieldsIn(fn, { index: 'int', name: 'string', arguments: 'any' })) {
        if (name !== 'arguments') {
          bind(value, kind, 'ToolCallFunction', `messages.tool_calls.function.${name}`, profile);
          continue;
        }
        if (value === null || isObject(value)) continue;
        if (profile.orderedMaps) throw new BadRequest(NOT_AN_OBJECT);
        throw typeError(jsonKind(value), 'struct field ToolCallFunction.messages.tool_calls.function.arguments', 'api.ToolCallFunctionArguments');
      }
    }
  }
}
