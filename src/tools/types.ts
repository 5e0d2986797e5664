// What a tool is, what it gets when it runs, and how it reports a failure.
import type { QuotingMessage } from './foreign-line.js';

/** A JSON Schema for a tool's arguments: always an object schema at the top. */
export interface ParametersSchema {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties?: boolean;
  [key: string]: unknown;
}

/** Everything a handler may touch besides its arguments. */
export interface ToolContext {
  /** Real path of the directory file tools are confined to. */
  root: string;
  /** Argo's data home (memo, logs). */
  home: string;
  /** Aborted on Ctrl-C, on the tool's timeout, or when the run ends. */
  signal: AbortSignal;
  /** What commands run with (commandEnvironment); by default Argo's environment less its secrets. */
  env?: NodeJS.ProcessEnv;
  /**
   * The characters of this tool's result the model keeps whole (its budget); a longer result is cut
   * to its head. A tool that can page (fetch_url) sizes its pages to fit.
   */
  resultBudget?: number;
}

/** Whether a result's JSON is past its budget: the loop then cuts it to its head; a paging tool sizes its pages by it. */
export function isOverBudget(content: string, budget: number): boolean {
  return content.length > budget;
}

/**
 * The largest size below `over` (a size whose result is over budget) at which `resultOf` fits
 * `budget`, by halving: each look is one JSON.stringify. 0 when none does (0 itself is not looked at).
 */
export function largestFitting(over: number, budget: number, resultOf: (size: number) => ToolResult): number {
  let fits = 0;
  let above = over;
  while (above - fits > 1) {
    const middle = Math.floor((fits + above) / 2);
    if (!isOverBudget(JSON.stringify(resultOf(middle)), budget)) fits = middle;
    else above = middle;
  }
  return fits;
}

/** A successful result: any JSON object without an `error` key. */
export type ToolResult = Record<string, unknown>;

/**
 * A tool that fitted its result to its budget itself (a command's output: the end of each stream,
 * not the head the loop would keep) hangs the result it cut from here; a symbol, so never in its JSON.
 * The loop saves that one whole for the user, as it saves any result past its budget.
 */
export const WHOLE_RESULT = Symbol('whole result');

/** `result` with `whole`, what it was fitted from, kept for saving (WHOLE_RESULT). */
export function fittedFrom(result: ToolResult, whole: ToolResult): ToolResult {
  return Object.defineProperty(result, WHOLE_RESULT, { value: whole, enumerable: false });
}

/** The result a fitted one was cut from, or undefined when it was not fitted. */
export function wholeResultOf(result: ToolResult): ToolResult | undefined {
  const whole: unknown = (result as { [WHOLE_RESULT]?: unknown })[WHOLE_RESULT];
  return typeof whole === 'object' && whole !== null ? (whole as ToolResult) : undefined;
}

export interface Tool {
  name: string;
  description: string;
  parameters: ParametersSchema;
  /** Writes files, runs commands or changes state: asks for confirmation first (unless ownStore). */
  sideEffects: boolean;
  /** Its only side effect is on Argo's own data (the memo): it never asks. */
  ownStore?: boolean;
  /** A call of a side-effecting tool that changes nothing (`process status`): it runs without asking. */
  readsOnly?: (args: Record<string, unknown>) => boolean;
  /** Milliseconds before the call is abandoned; the loop's default applies when absent. */
  timeoutMs?: number;
  /**
   * A tool that times its own work (run_command kills its command and says so): the tool for a
   * configured timeout (toolTimeouts), in place of setting `timeoutMs` alone.
   */
  timedBy?: (timeoutMs: number) => Tool;
  /** Characters of result sent to the model before microcompaction saves the rest. */
  resultBudget?: number;
  /**
   * Why arguments the schema accepts still cannot be used (a value a command would read as an
   * option), or null. A reason makes the call invalid, as a schema mismatch does.
   */
  refuse?: (args: Record<string, unknown>) => string | null;
  /**
   * Null when the tool can run here, else why not (a missing binary, nothing answering). `root`: where
   * commands run. What the reason quotes from outside (a path) is masked already (`quoting`).
   */
  check?: (root: string) => Promise<string | null>;
  /** What a confirmation prompt shows (the command, the diff); defaults to the arguments. */
  preview?: (args: Record<string, unknown>, context: ToolContext) => Promise<string>;
  run: (args: Record<string, unknown>, context: ToolContext) => Promise<ToolResult>;
}

/**
 * A failure a tool reports on purpose: its message is safe to show (it names no secrets and holds
 * no stack). `retryable: false` means trying again cannot help (the loop then stops at once).
 * A message quoting outside words is built by `quoting` (foreign-line.ts), which masks them before
 * Argo's words wrap them; `masked: true` says the same of text masked where it was read (an MCP
 * server's stderr). Either way it is not masked again, which would take Argo's closing bracket for
 * part of a secret; any other message is masked whole.
 */
export class ToolError extends Error {
  override name = 'ToolError';
  readonly masked: boolean;
  /** Argo's words alone when built by `quoting` (the values it quotes left out), else null. */
  readonly ownWords: string | null;
  constructor(
    message: string | QuotingMessage,
    readonly retryable = true,
    options: { masked?: boolean } = {},
  ) {
    super(typeof message === 'string' ? message : message.text);
    this.masked = options.masked === true || typeof message !== 'string';
    this.ownWords = typeof message === 'string' ? null : message.ownWords;
  }
}

/** Number, string or boolean arguments of a validated call, read without casts at each use. */
export function stringArg(args: Record<string, unknown>, key: string): string | undefined {
  const value = args[key];
  return typeof value === 'string' ? value : undefined;
}

export function numberArg(args: Record<string, unknown>, key: string): number | undefined {
  const value = args[key];
  return typeof value === 'number' ? value : undefined;
}

/**
 * Whether a tool's calls ask "Allow?" first (a server without --allow-side-effects refuses them
 * instead); given `args`, whether that call does (a call that only reads does not).
 */
export function asksFirst(tool: Pick<Tool, 'sideEffects' | 'ownStore' | 'readsOnly'>, args?: Record<string, unknown>): boolean {
  if (!tool.sideEffects || tool.ownStore === true) return false;
  return args === undefined || tool.readsOnly?.(args) !== true;
}
