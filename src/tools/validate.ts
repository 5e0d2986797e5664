// Arguments are checked against the tool's JSON Schema before anything runs. A missing required
// parameter is told apart from every other mismatch: the loop treats it as needs_input.
// Ajv is a real JSON Schema validator: oneOf, allOf, $ref and keywords without "type" mean what
// JSON Schema says (zod's converter ignored some of them).
import { Ajv } from 'ajv';
import type { CodeOptions, ErrorObject, ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';
import type { ParametersSchema, Tool } from './types.js';

export type Validation =
  // `args`: what the tool runs with (an optional parameter sent as null it refuses left out).
  | { kind: 'ok'; args: Record<string, unknown> }
  | { kind: 'missing'; parameter: string }
  | { kind: 'invalid'; reason: string };

type RegExpEngine = NonNullable<CodeOptions['regExp']>;

/**
 * A schema's `pattern` (and `patternProperties`) as RE2 reads it: matched in time linear in the
 * value, so a pattern JavaScript's engine backtracks on for minutes ("^([a-z0-9]+-?)+$" on a long
 * "aaa…!") cannot hang argo, or argo serve for every client, on one argument. A pattern JavaScript
 * refuses is refused as before (a config.json error); one RE2 cannot read (a lookaround, a
 * backreference) is not checked by Argo, so the tool stays usable and judges the value itself.
 */
const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    // Compiling runs nothing on a value: only whether it is a pattern at all.
    new RegExp(pattern, flags);
    const re2 = re2Of(pattern);
    // Ajv keeps one compiled pattern per toString(): each pattern must name itself.
    return { test: (value: string) => re2 === null || re2.test(value), toString: () => `/${pattern}/${flags}` };
  },
  // What Ajv would write into standalone code (never generated here); it runs the function itself.
  { code: 'argoLinearRegExp' },
);

/** A JavaScript pattern as RE2 reads it; null when RE2 cannot (a lookaround, a backreference). */
function re2Of(pattern: string): RE2JS | null {
  try {
    return RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch {
    return null;
  }
}

// Every mismatch is told at once. MCP servers' schemas carry keywords and formats Ajv may not know:
// they are not errors, and Ajv never writes to the console. Only the arguments' own properties
// count: a parameter named "constructor" the model left out is absent, not Object's.
const CHECKING = { allErrors: true, strict: false, validateFormats: false, logger: false, code: { regExp: linearRegExp } } as const;
const ajv = new Ajv({ ...CHECKING, ownProperties: true });

/**
 * An Ajv for the MCP SDK's check of a tool's result against its `outputSchema`, patterns on RE2 as
 * here: a server's pattern and a result holding outside text must not hang argo either. Set as the
 * SDK's own (schemas not checked, every error), formats left unchecked as arguments' are.
 */
export function outputSchemaAjv(): Ajv {
  return new Ajv({ ...CHECKING, validateSchema: false });
}
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

/** The arguments that ran into a validator, and its verdict on them. */
function verdictOn(validator: ValidateFunction | null, record: Record<string, unknown>): { valid: boolean; errors: ErrorObject[] } {
  const valid = validator === null || validator(record);
  return { valid, errors: valid ? [] : (validator.errors ?? []) };
}

/**
 * The arguments checked, and those the tool runs with. Models send null for a value they do not
 * have: for a parameter whose schema refuses null there (or cannot say: it did not compile), that
 * is a missing parameter — a required one needs input; an optional one is absent, left out before
 * the arguments are checked again. A schema that takes null there (a required Optional, as
 * Pydantic writes it) keeps it.
 */
export function validateArguments(tool: Pick<Tool, 'parameters' | 'refuse'>, args: unknown): Validation {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { kind: 'invalid', reason: 'the arguments are not a JSON object' };
  let record = args as Record<string, unknown>;
  const validator = validatorFor(tool.parameters);
  let { valid, errors } = verdictOn(validator, record);
  const refusesNull = (name: string): boolean => record[name] === null && (validator === null || errors.some((error) => error.instancePath === pointerTo(name)));
  // A server's schema may say anything: only a list of names is read as the required ones.
  const listed: unknown = tool.parameters.required;
  const required = new Set((Array.isArray(listed) ? listed : []).filter((name) => typeof name === 'string'));
  for (const name of required) {
    if (!Object.hasOwn(record, name) || record[name] === undefined || refusesNull(name)) return { kind: 'missing', parameter: name };
  }
  const absent = Object.keys(record).filter((name) => !required.has(name) && refusesNull(name));
  if (absent.length > 0) {
    record = Object.fromEntries(Object.entries(record).filter(([name]) => !absent.includes(name)));
    ({ valid, errors } = verdictOn(validator, record));
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
