// Arguments are checked against the tool's JSON Schema before anything runs. A missing required
// parameter is told apart from every other mismatch: the loop treats it as needs_input.
// Ajv is a real JSON Schema validator: oneOf, allOf, $ref and keywords without "type" mean what
// JSON Schema says (zod's converter ignored some of them).
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { ParametersSchema, Tool } from './types.js';

export type Validation =
  | { kind: 'ok'; args: Record<string, unknown> }
  | { kind: 'missing'; parameter: string }
  | { kind: 'invalid'; reason: string };

// Every mismatch is told at once. MCP servers' schemas carry keywords and formats Ajv may not know:
// they are not errors, and Ajv never writes to the console.
const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, logger: false });
const compiled = new WeakMap<ParametersSchema, ValidateFunction | null>();

/**
 * The compiled schema; null when it cannot be compiled (then only `required` and object-ness are
 * checked). Its `$schema` and `$id` are left out: a server may name a draft this Ajv does not load
 * (2020-12) or reuse an id across tools, and neither changes what the arguments must be. Ajv keeps
 * what it compiles: removed at once, so a schema made per run is not kept for the process's life.
 */
function validatorFor(schema: ParametersSchema): ValidateFunction | null {
  let validator = compiled.get(schema);
  if (validator === undefined) {
    const result = compile(schema);
    validator = typeof result === 'function' ? result : null;
    compiled.set(schema, validator);
  }
  return validator;
}

function compile(schema: Readonly<Record<string, unknown>>): ValidateFunction | SchemaProblem {
  const rest: Record<string, unknown> = { ...schema };
  delete rest.$schema;
  delete rest.$id;
  try {
    if (ajv.validateSchema(rest) !== true) {
      const first = ajv.errors?.[0];
      const allowed = (first?.params as { allowedValues?: unknown } | undefined)?.allowedValues;
      return {
        at: first === undefined ? '' : dottedPath(first.instancePath),
        problem: `${first?.message ?? 'is not valid'}${Array.isArray(allowed) ? ` (${allowed.join(', ')})` : ''}, as JSON Schema says`,
      };
    }
    return ajv.compile(rest);
  } catch (error) {
    // A pattern that is no regular expression, a $ref to nothing.
    return { at: '', problem: `cannot be compiled as JSON Schema (${error instanceof Error ? error.message : String(error)})` };
  } finally {
    ajv.removeSchema(rest);
  }
}

/** Where in a schema it goes wrong (`properties.a.type`, '' for the whole) and what JSON Schema says. */
export interface SchemaProblem {
  at: string;
  problem: string;
}

/**
 * Why a config.json command tool's parameters cannot be used as its JSON Schema, or null. Checked
 * when the catalog is built, so a bad schema is a config error, not a quietly shrunken validation.
 */
export function schemaProblem(schema: Readonly<Record<string, unknown>>): SchemaProblem | null {
  const result = compile(schema);
  return typeof result === 'function' ? null : result;
}

/** One mismatch, placed by parameter name ("tags.0"), as every other message names them. */
function describeError(error: ErrorObject): string {
  const where = placeOf(error.instancePath);
  const extra = error.keyword === 'additionalProperties' ? (error.params as { additionalProperty?: unknown }).additionalProperty : undefined;
  return `${where} ${error.message ?? 'is not valid'}${typeof extra === 'string' ? ` (unknown: ${extra})` : ''}`;
}

function placeOf(pointer: string): string {
  return pointer === '' ? 'the arguments' : `"${dottedPath(pointer)}"`;
}

/** A JSON pointer ("/tags/0") as the dotted path messages use ("tags.0"). */
function dottedPath(pointer: string): string {
  return pointer.slice(1).split('/').map((step) => step.replaceAll('~1', '/').replaceAll('~0', '~')).join('.');
}

export function validateArguments(tool: Pick<Tool, 'parameters' | 'refuse'>, args: unknown): Validation {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { kind: 'invalid', reason: 'the arguments are not a JSON object' };
  const record = args as Record<string, unknown>;
  const validator = validatorFor(tool.parameters);
  const valid = validator === null || validator(record);
  const errors = valid ? [] : (validator.errors ?? []);
  // A server's schema may say anything: only a list of names is read as the required ones.
  const required: unknown = tool.parameters.required;
  for (const name of Array.isArray(required) ? required : []) {
    if (typeof name !== 'string') continue;
    // Models send null for a value they do not have: missing, unless the schema takes null there
    // (a required Optional, as Pydantic writes it), or cannot say (it did not compile).
    if (record[name] === undefined || (record[name] === null && (validator === null || errors.some((error) => error.instancePath === pointerTo(name))))) {
      return { kind: 'missing', parameter: name };
    }
  }
  if (valid) {
    const refused = tool.refuse?.(record) ?? null;
    return refused === null ? { kind: 'ok', args: record } : { kind: 'invalid', reason: refused };
  }
  return { kind: 'invalid', reason: errors.slice(0, 3).map(describeError).join(', ') };
}

/** The JSON pointer to a top-level parameter, as Ajv places its errors. */
function pointerTo(name: string): string {
  return `/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
}
