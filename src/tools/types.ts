// What a tool is, what it gets when it runs, and how it reports a failure.

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

/** A successful result: any JSON object without an `error` key. */
export type ToolResult = Record<string, unknown>;

export interface Tool {
  name: string;
  description: string;
  parameters: ParametersSchema;
  /** Writes files, runs commands or changes state: asks for confirmation first (unless ownStore). */
  sideEffects: boolean;
  /** Its only side effect is on Argo's own data (the memo): it never asks. */
  ownStore?: boolean;
  /** Milliseconds before the call is abandoned; the loop's default applies when absent. */
  timeoutMs?: number;
  /** Characters of result sent to the model before microcompaction saves the rest. */
  resultBudget?: number;
  /**
   * Why arguments the schema accepts still cannot be used (a value a command would read as an
   * option), or null. A reason makes the call invalid, as a schema mismatch does.
   */
  refuse?: (args: Record<string, unknown>) => string | null;
  /** Null when the tool can run here, else why not (a missing binary, nothing answering). `root`: where commands run. */
  check?: (root: string) => Promise<string | null>;
  /** What a confirmation prompt shows (the command, the diff); defaults to the arguments. */
  preview?: (args: Record<string, unknown>, context: ToolContext) => Promise<string>;
  run: (args: Record<string, unknown>, context: ToolContext) => Promise<ToolResult>;
}

/**
 * A failure a tool reports on purpose: its message is safe to show (it names no secrets and holds
 * no stack). `retryable: false` means trying again cannot help (the loop then stops at once).
 */
export class ToolError extends Error {
  override name = 'ToolError';
  constructor(
    message: string,
    readonly retryable = true,
  ) {
    super(message);
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

/** Whether a call asks "Allow?" first (a server without --allow-side-effects refuses it instead). */
export function asksFirst(tool: Pick<Tool, 'sideEffects' | 'ownStore'>): boolean {
  return tool.sideEffects && tool.ownStore !== true;
}
