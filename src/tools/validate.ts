// Arguments are checked against the tool's JSON Schema before anything runs. A missing required
// parameter is told apart from every other mismatch: the loop treats it as needs_input.
// The validator is Ajv, as the MCP SDK provides it (a real JSON Schema validator: oneOf, allOf,
// $ref and keywords without "type" mean what JSON Schema says; zod's converter did not).
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import type { ParametersSchema, Tool } from './types.js';

export type Validation =
  | { kind: 'ok'; args: Record<string, unknown> }
  | { kind: 'missing'; parameter: string }
  | { kind: 'invalid'; reason: string };

const ajv = new AjvJsonSchemaValidator();
const compiled = new WeakMap<ParametersSchema, JsonSchemaValidator<unknown> | null>();

/** The compiled schema; null when it cannot be compiled (then only `required` and object-ness are checked). */
function validatorFor(schema: ParametersSchema): JsonSchemaValidator<unknown> | null {
  let validator = compiled.get(schema);
  if (validator === undefined) {
    try {
      validator = ajv.getValidator(schema);
    } catch {
      validator = null;
    }
    compiled.set(schema, validator);
  }
  return validator;
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
  if (validator === null) return { kind: 'ok', args: record };
  const verdict = validator(record);
  if (verdict.valid) return { kind: 'ok', args: record };
  // Ajv names each place as a JSON pointer under "data" ("data/tags/0 must be string"): shown as the
  // parameter's name ("tags.0"), as in every other message. It does not name an unknown parameter:
  // the model is told which it sent.
  const reason = verdict.errorMessage.replace(/(^|, )data((?:\/[^\s/]*)*) /g, (_match, start: string, pointer: string) => `${start}${placeOf(pointer)} `);
  const unknown = tool.parameters.additionalProperties === false ? Object.keys(record).filter((key) => !Object.hasOwn(tool.parameters.properties, key)) : [];
  return { kind: 'invalid', reason: unknown.length > 0 ? `${reason} (unknown: ${unknown.join(', ')})` : reason };
}
