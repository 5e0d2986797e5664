// Arguments are checked against the tool's JSON Schema before anything runs. A missing required
// parameter is told apart from every other mismatch: the loop treats it as needs_input.
import * as z from 'zod';
import type { ParametersSchema, Tool } from './types.js';

export type Validation =
  | { kind: 'ok'; args: Record<string, unknown> }
  | { kind: 'missing'; parameter: string }
  | { kind: 'invalid'; reason: string };

const compiled = new WeakMap<ParametersSchema, z.ZodType | null>();

/** zod's converter for the schema; null when it cannot convert it (then only `required` and object-ness are checked). */
function validatorFor(schema: ParametersSchema): z.ZodType | null {
  let validator = compiled.get(schema);
  if (validator === undefined) {
    try {
      validator = z.fromJSONSchema(schema);
    } catch {
      validator = null;
    }
    compiled.set(schema, validator);
  }
  return validator;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = issue.path.length > 0 ? `"${issue.path.map(String).join('.')}"` : 'the arguments';
  return `${where}: ${issue.message}`;
}

export function validateArguments(tool: Pick<Tool, 'parameters'>, args: unknown): Validation {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return { kind: 'invalid', reason: 'the arguments are not a JSON object' };
  const record = args as Record<string, unknown>;
  for (const name of tool.parameters.required ?? []) {
    if (record[name] === undefined || record[name] === null) return { kind: 'missing', parameter: name };
  }
  const validator = validatorFor(tool.parameters);
  if (validator === null) return { kind: 'ok', args: record };
  const parsed = validator.safeParse(record);
  if (parsed.success) return { kind: 'ok', args: record };
  return { kind: 'invalid', reason: parsed.error.issues.slice(0, 3).map(describeIssue).join('; ') };
}
