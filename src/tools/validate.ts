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
    const rest: Record<string, unknown> = { ...schema };
    delete rest.$schema;
    delete rest.$id;
    try {
      validator = ajv.compile(rest);
    } catch {
      validator = null;
    }
    ajv.removeSchema(rest);
    compiled.set(schema, validator);
  }
  return validator;
}

/** One mismatch, placed by parameter name ("tags.0"), as every other message names them. */
function describeError(error: ErrorObject): string {
  const where = placeOf(error.instancePath);
  const extra = error.keyword === 'additionalProperties' ? (error.params as { additionalProperty?: unknown }).additionalProperty : undefined;
  return `${where} ${error.message ?? 'is not valid'}${typeof extra === 'string' ? ` (unknown: ${extra})` : ''}`;
}

function placeOf(pointer: string): string {
  if (pointer === '') return 'the arguments';
  return `"${pointer.slice(1).split('/').map((step) => step.replaceAll('~1', '/').replaceAll('~0', '~')).join('.')}"`;
}

export function validateArguments(tool: Pick<Tool, 'parameters'>, args: unknown): Validation {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { kind: 'invalid', reason: 'the arguments are not a JSON object' };
  const record = args as Record<string, unknown>;
  for (const name of tool.parameters.required ?? []) {
    if (record[name] === undefined || record[name] === null) return { kind: 'missing', parameter: name };
  }
  const validator = validatorFor(tool.parameters);
  if (validator === null || validator(record)) return { kind: 'ok', args: record };
  return { kind: 'invalid', reason: (validator.errors ?? []).slice(0, 3).map(describeError).join(', ') };
}
