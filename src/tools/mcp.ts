// MCP servers from config.json (`mcpServers`), each offered as toolset `mcp:<name>`, through the
// official SDK's stdio client. Loaded only when such a toolset is resolved.
import { ToolError } from './types.js';
import type { ParametersSchema, Tool } from './types.js';

export interface McpServerConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

export interface McpConnection {
  tools: Tool[];
  close: () => Promise<void>;
  /** Calls `listener` once the connection has ended, however it ended (closed, or the server exited). */
  onClose?: (listener: () => void) => void;
}

const CONNECT_TIMEOUT_MS = 10_000;
const CALL_TIMEOUT_MS = 60_000;

interface McpContent {
  type: string;
  text?: string;
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return (content as McpContent[])
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : `[${part.type} content]`))
    .join('\n');
}

function objectSchema(schema: unknown): ParametersSchema {
  if (typeof schema === 'object' && schema !== null && (schema as { type?: unknown }).type === 'object') {
    const value = schema as ParametersSchema;
    return { ...value, properties: value.properties };
  }
  return { type: 'object', properties: {} };
}

/**
 * Closes the client, then lets go of the server's pipes. The SDK ends the process it started, but a
 * launcher's child (`sh -c …`, a wrapper script) can keep the pipe open, and an open pipe would keep
 * Argo running after its answer. The process is a private field of the SDK's transport: when a new
 * SDK version renames it, this falls back to the SDK's own close.
 */
async function closeFully(client: { close: () => Promise<void> }, transport: object): Promise<void> {
  const child = (transport as { _process?: { stdin?: { destroy: () => void } | null; stdout?: { destroy: () => void } | null } })._process;
  try {
    await client.close();
  } finally {
    child?.stdin?.destroy();
    child?.stdout?.destroy();
  }
}

/** Starts the server, lists its tools; rejects with a one-line reason when it does not start or answer. */
export async function connectMcp(name: string, config: McpServerConfig): Promise<McpConnection> {
  const [{ Client }, { StdioClientTransport, getDefaultEnvironment }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
  ]);
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    env: { ...getDefaultEnvironment(), ...config.env },
    ...(config.cwd !== undefined ? { cwd: config.cwd } : {}),
    // A server's own chatter must not mix with the answer on the terminal.
    stderr: 'ignore',
  });
  const client = new Client({ name: 'argo', version: '0.1.0' });
  try {
    await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
    const listed = await client.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS });
    const tools = listed.tools.map((tool): Tool => ({
      name: tool.name,
      description: tool.description ?? `${tool.name} from MCP server ${name}`,
      parameters: objectSchema(tool.inputSchema),
      sideEffects: tool.annotations?.readOnlyHint !== true,
      timeoutMs: CALL_TIMEOUT_MS,
      run: async (args, context) => {
        const result = await client.callTool({ name: tool.name, arguments: args }, undefined, { signal: context.signal, timeout: CALL_TIMEOUT_MS });
        const text = textOf(result.content);
        if (result.isError === true) throw new ToolError(text === '' ? `${tool.name} reported an error` : text.slice(0, 500));
        return result.structuredContent !== undefined ? { content: text, structured: result.structuredContent } : { content: text };
      },
    }));
    const listeners: (() => void)[] = [];
    let ended = false;
    client.onclose = () => {
      ended = true;
      for (const listener of listeners.splice(0)) listener();
    };
    // A listener added after the end is called at once: the end has happened.
    const onClose = (listener: () => void): void => {
      if (ended) listener();
      else listeners.push(listener);
    };
    return { tools, close: () => closeFully(client, transport), onClose };
  } catch (error) {
    await closeFully(client, transport).catch(() => undefined);
    throw new Error(`MCP server "${name}" did not start (${error instanceof Error ? error.message.split('\n')[0] ?? '' : 'unknown error'})`, { cause: error });
  }
}
