// What Ollama can read of a tool's parameters schema. Ollama unmarshals `tools[].function.parameters`
// into Go structs (api/types.go: ToolFunctionParameters, whose `properties` is an ordered map of
// ToolProperty), so a value of another JSON type than its field's fails the whole request: a 400 for
// every request of a run that offers the tool. Valid JSON Schema is not enough (`"x": true` is a
// schema; Ollama's ToolProperty is an object). Pure.
import { quotedName } from '../output/terminal-text.js';
import { maskSecrets } from '../text/secrets.js';

/** Where in the schema (`properties.limit.required`, '' for the whole) and what Ollama needs there. */
export interface UnreadableSchema {
  at: string;
  problem: string;
}

type Kind = 'string' | 'names' | 'types' | 'list' | 'property' | 'properties' | 'properties-list' | 'any';

// Each struct's fields and the JSON they take. null binds to any field (Go leaves it unset); keys
// Go does not know are ignored.
const PARAMETERS: Readonly<Record<string, Kind>> = { type: 'string', $defs: 'any', items: 'any', required: 'names', properties: 'properties' };
const PROPERTY: Readonly<Record<string, Kind>> = {
  anyOf: 'properties-list',
  type: 'types',
  items: 'any',
  description: 'string',
  enum: 'list',
  properties: 'properties',
  required: 'names',
};

const NEEDS: Record<Exclude<Kind, 'any'>, string> = {
  string: 'must be a string',
  // []string: a null element binds too.
  names: 'must be a list of names',
  // PropertyType: a string, or a list of strings.
  types: 'must be a type name or a list of them',
  list: 'must be a list',
  property: 'must be an object (Ollama cannot read a true or false schema there)',
  properties: 'must be an object of schemas',
  'properties-list': 'must be a list of schemas',
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A property name as a path step: plain names as they are, any other quoted (cut, controls hidden)
 * so the path reads one way; masked before it is quoted, as it may be a server's words.
 */
function step(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(name) ? name : quotedName(maskSecrets(name));
}

const join = (path: string, next: string): string => (path === '' ? next : `${path}.${next}`);

/**
 * Go matches a JSON key to a field case-insensitively (`Required` sets `required`), so every key
 * that folds to a field's name is read into it.
 */
function fieldsOf(value: Record<string, unknown>, fields: Readonly<Record<string, Kind>>): [key: string, kind: Kind, value: unknown][] {
  const byFolded = new Map(Object.entries(fields).map(([name, kind]) => [name.toLowerCase(), [name, kind] as const]));
  return Object.entries(value).flatMap(([key, item]) => {
    const field = byFolded.get(key.toLowerCase());
    return field === undefined ? [] : [[field[0], field[1], item] as [string, Kind, unknown]];
  });
}

function check(value: unknown, kind: Kind, at: string): UnreadableSchema | null {
  if (value === null || kind === 'any') return null;
  const fail = { at, problem: NEEDS[kind] };
  switch (kind) {
    case 'string':
      return typeof value === 'string' ? null : fail;
    case 'names':
      return Array.isArray(value) && value.every((item) => item === null || typeof item === 'string') ? null : fail;
    case 'types':
      return typeof value === 'string' || (Array.isArray(value) && value.every((item) => item === null || typeof item === 'string')) ? null : fail;
    case 'list':
      return Array.isArray(value) ? null : fail;
    case 'property':
      return isObject(value) ? checkFields(value, PROPERTY, at) : fail;
    case 'properties':
      if (!isObject(value)) return fail;
      for (const [name, property] of Object.entries(value)) {
        const found = check(property, 'property', join(at, step(name)));
        if (found) return found;
      }
      return null;
    case 'properties-list':
      if (!Array.isArray(value)) return fail;
      for (const [index, property] of value.entries()) {
        const found = check(property, 'property', join(at, String(index)));
        if (found) return found;
      }
      return null;
  }
}

function checkFields(value: Record<string, unknown>, fields: Readonly<Record<string, Kind>>, at: string): UnreadableSchema | null {
  for (const [name, kind, item] of fieldsOf(value, fields)) {
    const found = check(item, kind, join(at, name));
    if (found) return found;
  }
  return null;
}

/** The first part of a tool's parameters schema Ollama could not read, or null when it reads it all. */
export function unreadableByOllama(parameters: unknown): UnreadableSchema | null {
  if (parameters === null) return null;
  if (!isObject(parameters)) return { at: '', problem: 'must be an object' };
  return checkFields(parameters, PARAMETERS, '');
}

/** The reason a tool is left out for it: one line naming where. */
export function unreadableReason({ at, problem }: UnreadableSchema): string {
  return `Ollama cannot read its input schema: ${at === '' ? 'the schema' : at} ${problem}`;
}
