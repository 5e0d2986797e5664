// MCP servers from config.json (`mcpServers`), each offered as toolset `mcp:<name>`, through the
// official SDK's stdio client. Loaded only when such a toolset is resolved.
import { stat } from 'node:fs/promises';
import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { cleanLine } from '../output/terminal-text.js';
import { knownSecrets, maskKnownSecrets } from '../text/secrets.js';
import { TIMER_MAX_MS } from '../config/settings.js';
import { foreignLine, quoting } from './foreign-line.js';
import { ToolError } from './types.js';
import type { ParametersSchema, Tool } from './types.js';
import { headOf } from '../output/cut.js';

export interface McpServerConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  /** Only "stdio" is supported; other tools' configs often say so. */
  type?: string;
  /** How long it may take to start and to list each page of its tools (default CONNECT_TIMEOUT_MS). */
  startTimeoutMs?: number;
}

/** A tool a server offers that cannot be used, and why. */
export interface LeftOut {
  name: string;
  reason: string;
}

export interface McpConnection {
  tools: Tool[];
  /** Tools the server offered that were left out (a malformed schema). */
  leftOut?: LeftOut[];
  close: () => Promise<void>;
  /** Calls `listener` once the connection has ended, however it ended (closed, or the server exited). */
  onClose?: (listener: () => void) => void;
}

const CONNECT_TIMEOUT_MS = 10_000;
/** The most pages of a server's tool list read (each `nextCursor` followed): a list going on past them is not used. */
const MAX_TOOL_PAGES = 100;
/** The default of an MCP tool's timeout (toolTimeouts overrides it); the loop's timer applies it. */
const CALL_TIMEOUT_MS = 60_000;
const STDERR_LINE_CHARS = 200;
const REASON_CHARS = 300;

interface McpContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  title?: string;
  description?: string;
  resource?: { uri?: string; text?: string; blob?: string; mimeType?: string };
}

/** Binary content is named, not sent: its type and size. */
function placeholder(kind: string, mimeType: string | undefined, base64: string): string {
  return `[${kind}${mimeType !== undefined ? ` ${mimeType}` : ''}, ${Buffer.byteLength(base64, 'base64')} bytes]`;
}

function partText(part: McpContent): string {
  if (part.type === 'text' && typeof part.text === 'string') return part.text;
  const resource = part.resource;
  if (part.type === 'resource' && resource !== undefined) {
    if (typeof resource.text === 'string') return resource.text;
    if (typeof resource.blob === 'string') return placeholder('resource', resource.mimeType, resource.blob);
  }
  if ((part.type === 'image' || part.type === 'audio') && typeof part.data === 'string') return placeholder(part.type, part.mimeType, part.data);
  if (part.type === 'resource_link' && typeof part.uri === 'string') return linkText(part);
  return `[${part.type} content]`;
}

/** A link to a resource, not its content: where it is and what it says it is, as JSON (the server's words, kept apart). */
function linkText(part: McpContent): string {
  const fields = Object.entries({ uri: part.uri, name: part.name, title: part.title, description: part.description, mimeType: part.mimeType }).filter(([, value]) => typeof value === 'string');
  return `[resource_link ${JSON.stringify(Object.fromEntries(fields))}]`;
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return (content as McpContent[]).map(partText).join('\n');
}

function objectSchema(schema: unknown): ParametersSchema {
  if (typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object') {
    const value = schema as ParametersSchema;
    const properties: unknown = value.properties;
    // A tool without parameters may list no properties: Ollama reads none for a missing one, and
    // `{}` the same; sent as every other tool without parameters is.
    return { ...value, properties: properties === undefined || properties === null ? {} : value.properties };
  }
  return { type: 'object', properties: {} };
}

/**
 * The last line a server wrote on stderr, cleaned and its secrets masked (those `hide` knows first,
 * before the line is cut): for a reason, never echoed raw.
 */
function stderrTail(hide: (text: string) => string): { take: (text: string) => void; last: () => string | null } {
  let last = '';
  let partial = '';
  const line = (text: string): string => foreignLine(hide(text), STDERR_LINE_CHARS);
  return {
    take: (text) => {
      const parts = (partial + text).split('\n');
      partial = hide(parts.pop() ?? '').slice(-4 * STDERR_LINE_CHARS);
      const said = parts.map(line).filter((shown) => shown !== '').at(-1);
      if (said !== undefined) last = said;
    },
    last: () => line(partial) || last || null,
  };
}

/**
 * What a zod error (`what` failed the SDK's check) or any other error says, in one readable line.
 * What the server sent (its keys, its error's words) is masked here, before Argo wraps it: masked
 * after, a secret at its end would take Argo's closing bracket with it. `hide` masks the secrets
 * Argo gave the server first.
 */
function reasonOf(error: unknown, hide: (text: string) => string, what = "the server's answer"): string {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    const issue = issues[0] as { path?: unknown[]; message?: string };
    const where = Array.isArray(issue.path) && issue.path.length > 0 ? `${issue.path.map(String).join('.')}: ` : '';
    return cleanLine(`${what} does not follow MCP: ${foreignLine(hide(`${where}${issue.message ?? 'invalid'}`), REASON_CHARS)}`, REASON_CHARS);
  }
  return error instanceof Error ? foreignLine(hide(error.message), REASON_CHARS) || error.name : 'unknown error';
}

/** A start its caller cut (its signal aborted): an AbortError, not a server that did not start. */
export class McpStartAborted extends Error {
  override name = 'AbortError';

  constructor(server: string, signal: AbortSignal) {
    super(`MCP server "${server}" was not started: its start was interrupted`, { cause: signal.reason });
  }
}

/** A name the server listed again (on a page or across pages): its first tool is kept, the others left out. */
function withoutRepeats(listed: McpTool[], leftOut: LeftOut[]): { listed: McpTool[]; leftOut: LeftOut[] } {
  const seen = new Set<string>();
  const kept: McpTool[] = [];
  const repeated: LeftOut[] = [];
  for (const tool of listed) {
    if (seen.has(tool.name)) repeated.push({ name: tool.name, reason: 'listed twice by the server' });
    else kept.push(tool);
    seen.add(tool.name);
  }
  return { listed: kept, leftOut: [...leftOut, ...repeated] };
}

/** The SDK's client, loaded when an MCP server is first started. */
export function loadMcpClient() {
  return Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('./mcp-transport.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('zod'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
    import('./validate.js'),
  ]);
}

/**
 * Starts the server, lists its tools; rejects with a one-line reason when it does not start or answer.
 * What the server said in a reason (its stderr, its errors) is masked already (ConnectMcp); so are
 * the secrets of its `env` (knownSecrets), wherever it says them: its stderr, a reason, a call's
 * error, whatever their shape. `signal` cuts the start at once (the server's group killed): it then
 * rejects with McpStartAborted.
 */
export async function connectMcp(name: string, config: McpServerConfig, signal?: AbortSignal): Promise<McpConnection> {
  // Read anew at each step: the signal may abort while the start awaits.
  const aborted = (): boolean => signal?.aborted === true;
  if (signal !== undefined && aborted()) throw new McpStartAborted(name, signal);
  // A missing directory would be reported by spawn as the command missing (ENOENT).
  if (config.cwd !== undefined && !(await stat(config.cwd).then((found) => found.isDirectory(), () => false))) {
    // The catalog does not mask a reason again: config.json's path is masked here, as the server's words are.
    throw new Error(quoting`MCP server "${name}" did not start (its cwd "${config.cwd}" is not a directory)`.text);
  }
  const [{ Client }, { getDefaultEnvironment }, { GroupStdioTransport }, { ToolSchema, McpError, ErrorCode }, z, { AjvJsonSchemaValidator }, { outputSchemaAjv }] = await loadMcpClient();
  if (signal !== undefined && aborted()) throw new McpStartAborted(name, signal);
  const startMs = config.startTimeoutMs ?? CONNECT_TIMEOUT_MS;
  const secrets = knownSecrets(config.env ?? {});
  const hide = (text: string): string => maskKnownSecrets(text, secrets);
  // A server's own chatter must not mix with the answer on the terminal: kept, cleaned, for reasons.
  const stderr = stderrTail(hide);
  const transport = new GroupStdioTransport(
    { command: config.command, args: config.args ?? [], env: { ...getDefaultEnvironment(), ...config.env }, ...(config.cwd !== undefined ? { cwd: config.cwd } : {}) },
    stderr.take,
  );
  /** How it ended (`exit`: not when Argo's own close ended it) and its last words. */
  const details = (exit: string | null): string => {
    const said = stderr.last();
    return [exit, said !== null ? `it said: ${said}` : null].filter((part) => part !== null).join('; ');
  };

  // Results are checked against output schemas on RE2 patterns, as arguments are (validate.ts).
  const client = new Client({ name: 'argo', version: '0.1.0' }, { jsonSchemaValidator: new AjvJsonSchemaValidator(outputSchemaAjv()) });
  const listeners: (() => void)[] = [];
  const state = { ended: false, closedHere: false };
  // Read through a call: the connection can end while a call awaits.
  const hasEnded = (): boolean => state.ended;
  client.onclose = () => {
    state.ended = true;
    for (const listener of listeners.splice(0)) listener();
  };
  const gone = (): ToolError => {
    const why = details(transport.exit);
    const message =
      transport.refused !== null ? `MCP server "${name}" was stopped (${transport.refused})`
      : state.closedHere ? `MCP server "${name}" was stopped`
      : `MCP server "${name}" exited${why !== '' ? ` (${why})` : ''}`;
    // Calling again cannot help: the loop stops at once. Its stderr was masked as it was read.
    return new ToolError(message, false, { masked: true });
  };
  const close = async (): Promise<void> => {
    state.closedHere = true;
    await client.close();
    // The client lets go of a transport that ended (the server exited): its pipes are let go here.
    await transport.close();
  };
  const rawPage = z.object({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
  /** Why a tool's `outputSchema` cannot be used (the SDK compiles it to check results), or null. */
  const outputSchemaProblem = (tool: McpTool, validator: InstanceType<typeof AjvJsonSchemaValidator>): string | null => {
    if (tool.outputSchema === undefined) return null;
    try {
      validator.getValidator(tool.outputSchema as Parameters<typeof validator.getValidator>[0]);
      return null;
    } catch (error) {
      return `its outputSchema is not usable JSON Schema (${reasonOf(error, hide)})`;
    }
  };
  /**
   * Every tool the server lists, page after page (`nextCursor`). A page one malformed tool makes fail
   * the SDK's check of the whole (its definition, or an output schema that does not compile) is read
   * again as it came, each tool checked on its own and the good ones kept (their output schemas are
   * then not checked by the SDK, nor, as the SDK keeps only the last page's, those of a page before
   * the last).
   */
  const listAll = async (): Promise<{ listed: McpTool[]; leftOut: LeftOut[] }> => {
    const listed: McpTool[] = [];
    const leftOut: LeftOut[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      const params = cursor !== undefined ? { cursor } : undefined;
      let next: string | undefined;
      try {
        const result = await client.listTools(params, { timeout: startMs });
        listed.push(...result.tools);
        next = result.nextCursor;
      } catch (error) {
        // Not a check of the list: no answer, an error of the server's, the connection gone.
        if (error instanceof McpError || hasEnded()) throw error;
        const raw = await client.request({ method: 'tools/list', ...(params !== undefined ? { params } : {}) }, rawPage, { timeout: startMs });
        const validator = new AjvJsonSchemaValidator(outputSchemaAjv());
        for (const offered of raw.tools) {
          const parsed = ToolSchema.safeParse(offered);
          if (!parsed.success) {
            const toolName = (offered as { name?: unknown } | null)?.name;
            leftOut.push({ name: typeof toolName === 'string' ? toolName : '', reason: reasonOf(parsed.error, hide, 'its definition') });
            continue;
          }
          const problem = outputSchemaProblem(parsed.data, validator);
          if (problem === null) listed.push(parsed.data);
          else leftOut.push({ name: parsed.data.name, reason: problem });
        }
        next = raw.nextCursor;
      }
      if (next === undefined) return withoutRepeats(listed, leftOut);
      // A server that pages for ever would hold the run for ever.
      if (cursors.has(next)) throw new Error('its list of tools names a page it has given already (the same nextCursor)');
      if (page === MAX_TOOL_PAGES) throw new Error(`its list of tools goes on past ${MAX_TOOL_PAGES} pages`);
      cursors.add(next);
      cursor = next;
    }
  };
  // Every request pending fails as the connection ends.
  const cut = (): void => transport.kill();
  signal?.addEventListener('abort', cut, { once: true });
  let listing: Awaited<ReturnType<typeof listAll>> | null;
  try {
    await client.connect(transport, { timeout: startMs });
    // A server without the tools capability (resources or prompts alone) is not asked for tools: it would refuse.
    listing = client.getServerCapabilities()?.tools === undefined ? null : await listAll();
  } catch (error) {
    // An exit Argo's close causes (a server that hung, closed) is not how it ended.
    const exit = transport.exit;
    await close().catch(() => undefined);
    if (signal !== undefined && aborted()) throw new McpStartAborted(name, signal);
    // An exit Argo's refusal caused is not how it ended either.
    const why = details(transport.refused !== null ? null : exit);
    const timedOut = error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number);
    const reason = transport.refused ?? (timedOut ? `it did not answer within ${startMs / 1000} s; raise "mcpServers.${name}.startTimeoutMs" in config.json if it is slow to start` : reasonOf(error, hide));
    throw new Error(`MCP server "${name}" did not start (${reason}${why !== '' ? `; ${why}` : ''})`, { cause: error });
  } finally {
    signal?.removeEventListener('abort', cut);
  }
  if (listing === null || listing.listed.length + listing.leftOut.length === 0) {
    // Nothing to keep it running for; said, so that a run offered nothing by it is not silent.
    await close().catch(() => undefined);
    throw new Error(`MCP server "${name}" offers no tools (${listing === null ? 'it does not have the tools capability' : 'its list of tools is empty'})`);
  }
  const { listed, leftOut } = listing;
  const tools = listed.map((tool): Tool => ({
    name: tool.name,
    description: tool.description ?? `${tool.name} from MCP server ${name}`,
    parameters: objectSchema(tool.inputSchema),
    sideEffects: tool.annotations?.readOnlyHint !== true,
    timeoutMs: CALL_TIMEOUT_MS,
    run: async (args, context) => {
      if (hasEnded()) throw gone();
      let result;
      try {
        // The loop's signal bounds the call (its timer applies the tool's timeout).
        result = await client.callTool({ name: tool.name, arguments: args }, undefined, { signal: context.signal, timeout: TIMER_MAX_MS /* the SDK's own timeout (60 s by default) must never end a call before the loop's timer */ });
      } catch (error) {
        if (hasEnded()) throw gone();
        // Ctrl-C, a STOP, the run's end: the call was cut, it did not fail (as run_command says it).
        if (context.signal.aborted) throw new ToolError('the call was interrupted', false);
        // Its words go to the log's error_detail, masked by shape there: the secrets only Argo knows are masked here.
        if (error instanceof Error) error.message = hide(error.message);
        throw error;
      }
      const text = textOf(result.content);
      if (result.isError === true) throw new ToolError(text === '' ? `${tool.name} reported an error` : headOf(hide(text), 500));
      return result.structuredContent !== undefined ? { content: text, structured: result.structuredContent } : { content: text };
    },
  }));
  // A listener added after the end is called at once: the end has happened.
  const onClose = (listener: () => void): void => {
    if (state.ended) listener();
    else listeners.push(listener);
  };
  return { tools, ...(leftOut.length > 0 ? { leftOut } : {}), close, onClose };
}
