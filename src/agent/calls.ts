// Tool calls as the model sent them → calls the loop can check and run. Pure.
import type { Tool } from '../tools/types.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../text/json-depth.js';
import type { validateArguments } from '../tools/validate.js';

export interface ParsedCall {
  /** The model's id, or `call_<round>_<index>` when it sent none. */
  id: string;
  name: string;
  /** The arguments as an object; null when they could not be read. */
  arguments: Record<string, unknown> | null;
  /** What was sent when it could not be read (a string as it came, anything else as JSON), for the log. */
  unreadable: string | null;
  /** Why the call cannot be read (no name, arguments not JSON or not an object). */
  problem: string | null;
  /** It repeats the id of an earlier call of the response: it is never checked or run, only logged. */
  duplicate?: true;
}

export function callId(round: number, index: number): string {
  return `call_${round}_${index}`;
}

/** What the log keeps of arguments nested too deep to be written out: a note, not the value. */
export const TOO_DEEP_ARGUMENTS = `[arguments nested more than ${MAX_JSON_DEPTH} levels deep: not kept]`;

function readArguments(raw: unknown): { value: Record<string, unknown> | null; problem: string | null; tooDeep?: true } {
  if (raw === undefined || raw === null || raw === '') return { value: {}, problem: null };
  let value: unknown = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return { value: null, problem: 'the arguments are not valid JSON' };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { value: null, problem: 'the arguments are not a JSON object' };
  // Refused before anything walks them (the schema check, the trace, the log): none would survive it.
  if (nestedDeeperThan(value, MAX_JSON_DEPTH)) return { value: null, problem: `the arguments nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep`, tooDeep: true };
  return { value: value as Record<string, unknown>, problem: null };
}

/**
 * Reads `message.tool_calls` (arguments as an object or a JSON string, ids often absent). A call
 * repeating an id the model already sent in the response is a duplicate: the first one counts, and
 * the duplicate is kept only to be logged (`duplicate`). A call without an id gets
 * `call_<round>_<index>`, or, should the model have sent that very id for another call, the first
 * free `call_<round>_<index>_<n>`: never a call lost to a name Argo made up.
 */
export function readToolCalls(raw: readonly unknown[], round: number): ParsedCall[] {
  const items = raw.map((item) => (typeof item === 'object' && item !== null ? item : {}) as { id?: unknown; function?: { name?: unknown; arguments?: unknown } });
  const sent = (item: (typeof items)[number]): string | null => (typeof item.id === 'string' && item.id !== '' ? item.id : null);
  const taken = new Set(items.map(sent).filter((id) => id !== null));
  const seen = new Set<string>();
  const calls: ParsedCall[] = [];
  items.forEach((call, index) => {
    let id = sent(call);
    const duplicate = id !== null && seen.has(id);
    if (id === null) {
      const base = callId(round, index);
      id = base;
      for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
      taken.add(id);
    }
    seen.add(id);
    const name = typeof call.function?.name === 'string' ? call.function.name : '';
    const raw = call.function?.arguments;
    const args = readArguments(raw);
    const unreadable = args.value !== null ? null : typeof raw === 'string' ? raw : args.tooDeep === true ? TOO_DEEP_ARGUMENTS : JSON.stringify(raw);
    calls.push({ id, name, arguments: args.value, unreadable, problem: name === '' ? 'the call names no tool' : args.problem, ...(duplicate ? { duplicate: true as const } : {}) });
  });
  return calls;
}

/**
 * Whether a response's text is a tool call the token limit cut short. For a model whose calls are
 * bare JSON (tool tag `{` or `[`, llama 3.x) Ollama holds text that opens with one as a call, and
 * hands it back as text when the answer ends before the call does (tools.Parser.Content). So: text
 * that opens with `{` or `[` and is not whole JSON. (Words before it would have made Ollama take it
 * all as words: that text opens otherwise.) The caller checks the rest: the limit ended the
 * response, and its text came held back, in the final chunk (streamed, it is an answer).
 */
export function isCutToolCall(text: string): boolean {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return false;
  try {
    JSON.parse(trimmed);
    return false;
  } catch {
    return true;
  }
}

export type CheckedCall =
  // `sent`: the arguments as the model sent them (logged, shown, sent back); `args`: what the tool
  // runs with, an optional parameter sent as null left out (validate.ts).
  | { call: ParsedCall; kind: 'ok'; tool: Tool; args: Record<string, unknown>; sent: Record<string, unknown> }
  | { call: ParsedCall; kind: 'missing'; tool: Tool; parameter: string }
  | { call: ParsedCall; kind: 'invalid'; reason: string }
  | { call: ParsedCall; kind: 'duplicate' };

/** Validation before anything runs: the name is offered, the arguments parse and match the schema. A duplicate is not checked: it never runs. */
export function checkCall(call: ParsedCall, tools: ReadonlyMap<string, Tool>, validate: typeof validateArguments): CheckedCall {
  if (call.duplicate === true) return { call, kind: 'duplicate' };
  if (call.problem !== null || call.arguments === null) return { call, kind: 'invalid', reason: `${call.name || 'a call'}: ${call.problem ?? 'unreadable'}` };
  const tool = tools.get(call.name);
  if (!tool) return { call, kind: 'invalid', reason: `unknown tool "${call.name}"` };
  const verdict = validate(tool, call.arguments);
  if (verdict.kind === 'missing') return { call, kind: 'missing', tool, parameter: verdict.parameter };
  if (verdict.kind === 'invalid') return { call, kind: 'invalid', reason: `${call.name}: ${verdict.reason}` };
  return { call, kind: 'ok', tool, args: verdict.args, sent: call.arguments };
}

/** Every verdict keeps the response's calls in order (`checked`), duplicates too: each is logged. */
export type ResponseVerdict =
  | { kind: 'run'; calls: Extract<CheckedCall, { kind: 'ok' }>[]; checked: CheckedCall[] }
  | { kind: 'needs_input'; missing: Extract<CheckedCall, { kind: 'missing' }>; checked: CheckedCall[] }
  | { kind: 'invalid'; reasons: string[]; checked: CheckedCall[] };

/** A missing required parameter wins over everything; any other problem makes the response invalid; duplicates count for nothing. */
export function judgeResponse(checked: CheckedCall[]): ResponseVerdict {
  const missing = checked.find((entry) => entry.kind === 'missing');
  if (missing) return { kind: 'needs_input', missing, checked };
  const invalid = checked.filter((entry) => entry.kind === 'invalid');
  if (invalid.length > 0) return { kind: 'invalid', reasons: invalid.map((entry) => entry.reason), checked };
  return { kind: 'run', calls: checked.filter((entry) => entry.kind === 'ok'), checked };
}
