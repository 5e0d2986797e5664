// The error taxonomy (seed 002) for one executed call: required parameter missing, execution
// failure, or success. A message saying "X is required" is a missing parameter only when X is one
// of the tool's parameters: "Authentication is required" is the tool's own failure. Only the
// message's own words say so, never a value it quotes (a path named "path is required.md").
// Users see only safe text; raw detail is kept for the private log. Neither
// keeps a secret-looking value a tool's message carried (an MCP server's error echoing its DSN).
import { cleanLine } from '../output/terminal-text.js';
import { foreignLine } from '../tools/foreign-line.js';
import { ToolError } from '../tools/types.js';
import { maskSecrets } from '../text/secrets.js';
import type { ParametersSchema, ToolResult } from '../tools/types.js';

/** The longest failure line a call's outcome keeps. */
export const ONE_LINE_MAX = 300;

export type CallOutcome =
  | { kind: 'success'; result: ToolResult }
  | { kind: 'needs_input'; parameter: string; message: string }
  | { kind: 'failure'; message: string; retryable: boolean; detail: string | null };

export const GENERIC_FAILURE = 'tool execution failed';

const REQUIRED = /(?:^|[\s"'`(])["'`]?([A-Za-z_][\w.-]*)["'`]? (?:parameter )?is required\b/g;

/** The names of a tool's parameters (its schema's `properties`); none when a server sent no properties. */
export function parameterNames(schema: ParametersSchema): string[] {
  const properties: unknown = schema.properties;
  return typeof properties === 'object' && properties !== null && !Array.isArray(properties) ? Object.keys(properties) : [];
}

/** A quoted span: in double quotes, backticks, or single quotes standing apart from words (not an apostrophe). */
const QUOTED = /"[^"\n]*"|`[^`\n]*`|(?<![\w'])'[^'\n]*'(?![\w'])/g;
const BARE_NAME = /^.[A-Za-z_][\w.-]*.$/;

/** `message` with what its quotes hold emptied, unless that is a bare name (`"city" is required`). */
function withoutQuotedValues(message: string): string {
  return message.replace(QUOTED, (span) => (BARE_NAME.test(span) ? span : `${span[0] ?? ''}${span.at(-1) ?? ''}`));
}

/**
 * The first of `parameters` (the tool's) an error message says is required, or null. Its name is
 * matched whatever its case, as a sentence capitalizes it ("Path is required."): the tool's own
 * spelling is returned, an exact one first when two differ only in case.
 */
export function requiredParameter(message: string, parameters: readonly string[]): string | null {
  for (const match of withoutQuotedValues(message).matchAll(REQUIRED)) {
    const name = match[1];
    if (name === undefined) continue;
    if (parameters.includes(name)) return name;
    const folded = name.toLowerCase();
    const found = parameters.find((parameter) => parameter.toLowerCase() === folded);
    if (found !== undefined) return found;
  }
  return null;
}

/** A result the tool returned (it may carry `error`, `retryable`); `parameters`: the tool's parameter names. */
export function classifyResult(result: ToolResult, parameters: readonly string[]): CallOutcome {
  const error = result.error;
  if (error === undefined || error === null || error === false) return { kind: 'success', result };
  const message = typeof error === 'string' && error.trim() !== '' ? error : GENERIC_FAILURE;
  const parameter = requiredParameter(message, parameters);
  if (parameter !== null) return { kind: 'needs_input', parameter, message: foreignLine(message, ONE_LINE_MAX) };
  return { kind: 'failure', message: foreignLine(message, ONE_LINE_MAX), retryable: result.retryable !== false, detail: null };
}

/** Something the tool threw: its own safe message for a ToolError, else the generic text with the raw detail kept aside. */
export function classifyThrown(error: unknown, parameters: readonly string[]): CallOutcome {
  if (error instanceof ToolError) {
    // Built by `quoting`: Argo's words are known apart from the values they quote, whatever those hold.
    const parameter = requiredParameter(error.ownWords ?? error.message, parameters);
    const message = error.masked ? cleanLine(error.message, ONE_LINE_MAX) : foreignLine(error.message, ONE_LINE_MAX);
    if (parameter !== null) return { kind: 'needs_input', parameter, message };
    return { kind: 'failure', message, retryable: error.retryable, detail: null };
  }
  const detail = maskSecrets(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  return { kind: 'failure', message: GENERIC_FAILURE, retryable: true, detail };
}

