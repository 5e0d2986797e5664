// From names and config to the tools of a run: the built-in tools, the user's toolsets and
// command tools, MCP servers; availability checked, the unavailable dropped with a reason.
import { resolve } from 'node:path';
import type { UsageError } from '../errors.js';
import { ConfigError } from '../errors.js';
import { unreadableByOllama, unreadableReason } from '../ollama/tool-schema.js';
import { clipText } from '../output/cut.js';
import { cleanLine, quotedName } from '../output/terminal-text.js';
import { groupThousands } from '../text/decimal.js';
import { byCodeUnits } from '../text/order.js';
import { commandTool } from './command.js';
import { UNAVAILABLE_REASON_CHARS } from './foreign-line.js';
import type { CommandToolConfig } from './command.js';
import { EDIT_FILE, FETCH_URL, LIST_FILES, PROCESS, READ_FILE, RUN_COMMAND, SEARCH_FILES, WRITE_FILE, runCommandDefinition } from './builtins.js';
import type { ToolDefinition } from './builtins.js';
import { loadHistorySearch, searchHistoryTool } from './history.js';
import type { McpConnection, McpServerConfig } from './mcp.js';
import { memoTool } from './memo.js';
import { nulInListing, nulInPath, nulInSearch } from './root.js';
import { EXCLUDE_PREFIX } from '../config/tool-list.js';
import { BUILTIN_TOOLSETS, MCP_PREFIX, MCP_TOOL_NAME, firstToolReached, resolveTools, serverToolOf, toolsetProblems, UnknownToolError, unknownName } from './toolsets.js';
import type { Catalog, Resolution, ToolsetSpec } from './toolsets.js';
import { asksFirst } from './types.js';
import type { Tool } from './types.js';

/** The tool settings of config.json. */
export interface ToolsConfig {
  toolsets?: Record<string, { tools?: string[]; includes?: string[] }>;
  commandTools?: Record<string, CommandToolConfig>;
  mcpServers?: Record<string, McpServerConfig>;
  /** Per tool: characters of result before microcompaction (default 4,000). */
  toolBudgets?: Record<string, number>;
  /** Per tool: milliseconds before a call is abandoned. */
  toolTimeouts?: Record<string, number>;
}

export interface Unavailable {
  name: string;
  reason: string;
}

/** A server's tool that was left out (an odd or taken name, a malformed definition); null when unreadable. */
export interface LeftOutTool {
  toolset: string;
  tool: Tool | null;
}

/**
 * How a server's tool that was left out is named in notes and the log: `mcp:<server>/<tool>`, never
 * the bare name, which may be the run's tool that took it. An odd name is quoted, cleaned, bounded.
 */
export function serverToolName(server: string, tool: string): string {
  if (MCP_TOOL_NAME.test(tool)) return `${MCP_PREFIX}${server}/${tool}`;
  return `${MCP_PREFIX}${server}/${quotedName(tool)}`;
}

/** The tools of one run. `close` ends MCP servers and processes the run started. */
export interface Toolbox {
  resolution: Resolution;
  /**
   * The resolution's toolsets and the tools each gave (for --explain), an MCP server's `mcp:<name>`
   * with what the server listed once it ran (sorted; none when it did not start).
   */
  expanded: Resolution['expanded'];
  /** Available tools, sorted by name. */
  tools: Tool[];
  unavailable: Unavailable[];
  /** The toolset (`mcp:<server>`) each MCP server's tool came from. */
  mcpToolsets: ReadonlyMap<string, string>;
  /** By `unavailable` name (`mcp:<server>/<tool>`): an MCP server's tool left out, and its toolset. */
  leftOut?: ReadonlyMap<string, LeftOutTool>;
  /** What `-name`s took away of what the run would have had, MCP servers' tools included. Sorted. */
  takenAway: string[];
  close: () => Promise<void>;
}

/**
 * Starts an MCP server. A rejection's message may quote what the server said (its stderr, its
 * errors): masked already, before it was wrapped, as connectMcp does; a left-out tool's reason too.
 */
export type ConnectMcp = (name: string, config: McpServerConfig, signal?: AbortSignal) => Promise<McpConnection>;

/** The SDK's stdio client, loaded only when an MCP toolset is asked for. */
export const connectMcpServer: ConnectMcp = async (name, server, signal) => (await import('./mcp.js')).connectMcp(name, server, signal);

/**
 * A load its caller cut (Ctrl-C, SIGTERM, a STOP, a client gone) while MCP servers started, or before:
 * an interrupt, not a server that is unavailable. `cause` is the signal's reason.
 */
export class ToolboxAborted extends Error {
  override name = 'AbortError';

  constructor(
    signal: AbortSignal,
    readonly resolution: Resolution,
  ) {
    super('the tools were not loaded: their start was interrupted', { cause: signal.reason });
  }
}

/**
 * The toolbox of a run cut before its tools were ready: no tool, nothing started. The run goes on
 * only to end at its first check as what cut it says (stopped, interrupted), and to be logged so.
 */
export function unloadedToolbox(resolution: Resolution): Toolbox {
  return { resolution, expanded: resolution.expanded, tools: [], unavailable: [], mcpToolsets: new Map(), takenAway: resolution.excluded ?? [], close: () => Promise.resolve() };
}

/** For a load's `.catch`: a cut load as unloadedToolbox; any other error as it was. */
export function toolboxIfCut(error: unknown): Toolbox {
  if (error instanceof ToolboxAborted) return unloadedToolbox(error.resolution);
  throw error;
}

/**
 * Loads now what tools load on first use: the built-in tools' code (builtins.ts), the argument
 * validator, globbing, diffs, whole-file writes, the HTML reducer, the memo's schema, the history
 * search, and the MCP client when config.json names MCP servers (none is started). Node keeps an
 * import() that failed failed for the life of the process, so a server whose first tool call met a
 * moment without file descriptors (EMFILE) could run that tool no more: `argo serve` calls this as
 * it starts, as it calls loadTurnModules. A lazy import added to a tool goes in this list:
 * test/e2e/exhaustion.test.ts calls every built-in tool (fetch_url on an HTML page), a command tool
 * and an MCP server's, and fails until it does.
 */
export async function loadToolModules(config: ToolsConfig): Promise<void> {
  await Promise.all([
    import('./fs.js'),
    import('./edit.js'),
    import('./shell.js'),
    import('./web.js'),
    import('./validate.js'),
    import('fast-glob'),
    import('braces'),
    import('diff'),
    import('./html-text.js'),
    import('./memo-schema.js'),
    loadHistorySearch(),
    ...(Object.keys(config.mcpServers ?? {}).length > 0 ? [import('./mcp.js').then(({ loadMcpClient }) => loadMcpClient())] : []),
  ]);
}

/**
 * A built-in tool offered by its definition (builtins.ts), each call run by the tool `load` brings:
 * its code is imported by the first call. `asked` adds what its module does before a call (a
 * preview, a check) that needs that code too.
 */
export function offeredTool(definition: ToolDefinition, load: () => Promise<Tool>, asked: Pick<Tool, 'preview' | 'check' | 'refuse'> = {}): Tool {
  let loading: Promise<Tool> | undefined;
  let loaded: Tool | undefined;
  return {
    ...definition,
    ...asked,
    run: (args, context) => {
      // Once loaded, a call reaches the tool at once, so it takes its place in line (edit.ts) as it is made.
      if (loaded !== undefined) return loaded.run(args, context);
      // Before: one load, and the calls made meanwhile go on in the order they were made (a promise's
      // reactions run in the order they were added), not in whichever order separate loads resolve.
      loading ??= load().then(
        (tool) => (loaded = tool),
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      );
      return loading.then((tool) => tool.run(args, context));
    },
  };
}

/**
 * run_command, offered as offeredTool does; toolTimeouts.run_command (`timedBy`) makes its commands'
 * timeout, which the model's `timeout` may only shorten, and tells the model so.
 */
function offeredRunCommand(limitS?: number): Tool {
  const definition = limitS === undefined ? RUN_COMMAND : runCommandDefinition(limitS);
  return {
    ...definition,
    run: async (args, context) => (await import('./shell.js')).runCommand(args, context, limitS),
    timedBy: (timeoutMs) => offeredRunCommand(timeoutMs / 1000),
  };
}

/**
 * A fresh `process` tool (shell.ts processTool) whose code and handle table come with its first
 * call; `close` kills what that table still runs, and does nothing when no call was made.
 */
function offeredProcessTool(): Tool & { close: () => Promise<void> } {
  let made: Promise<Tool & { close: () => void }> | undefined;
  const tool = (): Promise<Tool & { close: () => void }> => (made ??= import('./shell.js').then(({ processTool }) => processTool()));
  return {
    ...PROCESS,
    run: async (args, context) => (await tool()).run(args, context),
    close: async () => {
      if (made !== undefined) (await made).close();
    },
  };
}

/**
 * Fresh instances: `process` keeps a handle table per run. The file, command and web tools bring
 * their code with their first call, so a run the model answers in words never loads it; fetch_url's
 * check (whether the web answers) loads its code as a run offered it starts.
 */
export function builtinTools(): Tool[] {
  const fs = () => import('./fs.js');
  const edit = () => import('./edit.js');
  const web = () => import('./web.js');
  return [
    offeredTool(READ_FILE, async () => (await fs()).readFileTool, { refuse: nulInPath }),
    offeredTool(LIST_FILES, async () => (await fs()).listFilesTool, { refuse: nulInListing }),
    offeredTool(SEARCH_FILES, async () => (await fs()).searchFilesTool, { refuse: nulInSearch }),
    offeredTool(WRITE_FILE, async () => (await edit()).writeFileTool, { preview: async (args, context) => (await edit()).writePreview(args, context), refuse: nulInPath }),
    offeredTool(EDIT_FILE, async () => (await edit()).editFileTool, { preview: async (args, context) => (await edit()).editPreview(args, context), refuse: nulInPath }),
    offeredRunCommand(),
    offeredProcessTool(),
    offeredTool(FETCH_URL, async () => (await web()).fetchUrlTool, { check: async () => (await web()).webVerdict() }),
    memoTool,
    searchHistoryTool,
  ];
}

/** Names every toolset and static tool; rejects user definitions that clash with built-in ones. */
export function buildCatalog(config: ToolsConfig, builtins: readonly Tool[]): { catalog: Catalog; tools: Map<string, Tool> } {
  const tools = new Map(builtins.map((tool) => [tool.name, tool]));
  const builtinNames = new Set(tools.keys());
  for (const [name, spec] of Object.entries(config.commandTools ?? {})) {
    if (tools.has(name)) throw new ConfigError(`config.json: commandTools."${name}" has the name of a built-in tool; choose another name`);
    // -T NAME would mean the toolset: the tool could never be asked for by its name.
    if (Object.hasOwn(BUILTIN_TOOLSETS, name) || Object.hasOwn(config.toolsets ?? {}, name)) {
      throw new ConfigError(`config.json: commandTools."${name}" has the name of a toolset${Object.hasOwn(BUILTIN_TOOLSETS, name) ? ' (built-in)' : ''}; choose another name`);
    }
    if (spec.argv.length === 0) throw new ConfigError(`config.json: commandTools."${name}".argv must name a command, e.g. ["git", "log", "-n", "{count}"]`);
    const parameters = spec.parameters;
    if (parameters !== undefined && (parameters.type !== 'object' || typeof parameters.properties !== 'object' || parameters.properties === null)) {
      throw new ConfigError(`config.json: commandTools."${name}".parameters must be a JSON Schema object with "type": "object" and "properties"`);
    }
    tools.set(name, commandTool(name, spec));
  }
  // No prototype: a toolset named "__proto__" or "constructor" is an entry like any other.
  const toolsets: Record<string, ToolsetSpec> = Object.assign(Object.create(null) as Record<string, ToolsetSpec>, BUILTIN_TOOLSETS);
  for (const [name, spec] of Object.entries(config.toolsets ?? {})) {
    if (Object.hasOwn(BUILTIN_TOOLSETS, name)) throw new ConfigError(`config.json: toolsets."${name}" has the name of a built-in toolset; choose another name`);
    // -T NAME would mean this toolset instead of the tool everyone knows by that name.
    if (builtinNames.has(name)) throw new ConfigError(`config.json: toolsets."${name}" has the name of a built-in tool; choose another name`);
    if (name.startsWith(MCP_PREFIX)) throw new ConfigError(`config.json: toolsets."${name}": names starting with "${MCP_PREFIX}" are MCP servers (define it under mcpServers)`);
    toolsets[name] = { tools: spec.tools ?? [], includes: spec.includes ?? [] };
  }
  const mcpServers = Object.keys(config.mcpServers ?? {}).sort();
  for (const server of mcpServers) toolsets[`${MCP_PREFIX}${server}`] = { tools: [], includes: [] };
  return { catalog: { toolsets, tools: new Set(tools.keys()), mcpServers }, tools };
}

/** `record[name]` when the record itself has it: a tool named "constructor" never reads Object.prototype's. */
function ownEntry<T>(record: Readonly<Record<string, T>> | undefined, name: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, name) ? record[name] : undefined;
}

/**
 * An MCP server starts in the run's root, as command tools run there: `"args": ["./server.mjs"]`
 * finds the same file wherever argo was started from; a relative `cwd` is taken from the root too.
 */
export function startedInRoot(server: McpServerConfig, root: string): McpServerConfig {
  return { ...server, cwd: resolve(root, server.cwd ?? '.') };
}

/**
 * Refuses a command tool whose parameters Ajv cannot compile, naming where (`.required must be
 * array`). The validator is loaded only when config.json has such a schema to check.
 */
export async function checkCommandSchemas(config: ToolsConfig): Promise<void> {
  const schemas = Object.entries(config.commandTools ?? {}).filter(([, spec]) => spec.parameters !== undefined);
  if (schemas.length === 0) return;
  const { schemaProblem } = await import('./validate.js');
  for (const [name, spec] of schemas) {
    const found = spec.parameters === undefined ? null : schemaProblem(spec.parameters);
    if (found !== null) throw new ConfigError(`config.json: commandTools."${name}".parameters${found.at === '' ? '' : `.${found.at}`} ${found.problem}; fix the tool's parameters`);
  }
}

function withSettings(tool: Tool, config: ToolsConfig): Tool {
  const budget = ownEntry(config.toolBudgets, tool.name);
  const timeout = ownEntry(config.toolTimeouts, tool.name);
  if (budget === undefined && timeout === undefined) return tool;
  const timed = timeout === undefined ? tool : tool.timedBy !== undefined ? tool.timedBy(timeout) : { ...tool, timeoutMs: timeout };
  return budget === undefined ? timed : { ...timed, resultBudget: budget };
}

/** Why Ollama would refuse every request that offers the tool (its schema binds to no Go type), or null. */
function unreadable(tool: Tool): string | null {
  const found = unreadableByOllama(tool.parameters);
  // The property names it quotes, a server's words, come masked (unreadableByOllama).
  return found === null ? null : clipText(unreadableReason(found), UNAVAILABLE_REASON_CHARS);
}

async function availability(tool: Tool, root: string): Promise<string | null> {
  const refused = unreadable(tool);
  if (refused !== null) return refused;
  try {
    return tool.check ? await tool.check(root) : null;
  } catch {
    return 'its availability check failed';
  }
}

export interface LoadOptions {
  /** Injected for tests; by default the SDK client, loaded only here. */
  connectMcp?: ConnectMcp;
  /** A name no MCP server offers is listed as unavailable instead of refused (`argo tools`). */
  keepUnknown?: boolean;
  /** Where the run's commands and MCP servers run (--root): a command tool's relative `argv[0]` is looked for there. Default: the working directory. */
  root?: string;
  /** Cuts the servers' start (killing them): the load rejects with ToolboxAborted. Aborted already, none is started. */
  signal?: AbortSignal;
}

/** Resolves the names and makes the tools ready; never throws for an unavailable tool. */
/** Resolves `requested` against the catalog alone, nothing loaded or started: throws as loadToolbox does for a name nothing has or a list that cannot be read. */
export function checkToolNames(requested: readonly string[], config: ToolsConfig): void {
  resolveTools(requested, buildCatalog(config, builtinTools()).catalog);
}

export async function loadToolbox(requested: readonly string[], config: ToolsConfig, options: LoadOptions = {}): Promise<Toolbox> {
  const { catalog, tools: known } = buildCatalog(config, builtinTools());
  await checkCommandSchemas(config);
  const resolution = resolveTools(requested, catalog);
  const signal = options.signal;
  if (signal?.aborted === true) throw new ToolboxAborted(signal, resolution);
  const chosen = resolution.tools.map((name) => known.get(name)).filter((tool): tool is Tool => tool !== undefined);
  const root = options.root ?? process.cwd();
  const checks = await Promise.all(chosen.map((tool) => availability(tool, root)));
  const unavailable: Unavailable[] = [];
  // Every reason, logged and shown alike, is one bounded line. What it quotes from outside (an MCP
  // server's words, config.json's paths, a schema's keys) was masked where the reason was made
  // (ConnectMcp, a tool's check, `unreadable`): masked again here, a secret at the end of a quote
  // would take Argo's closing bracket with it.
  const leaveOut = (name: string, reason: string): void => {
    unavailable.push({ name, reason: cleanLine(reason, UNAVAILABLE_REASON_CHARS) });
  };
  const tools: Tool[] = [];
  chosen.forEach((tool, index) => {
    const reason = checks[index];
    if (reason) leaveOut(tool.name, reason);
    else tools.push(withSettings(tool, config));
  });

  const connections: McpConnection[] = [];
  const mcpToolsets = new Map<string, string>();
  const leftOut = new Map<string, LeftOutTool>();
  const offeredButLeftOut = new Set<string>();
  /** Names a server listed that `-mcp:<server>/<name>` (or `-name`) took away: asked for by name too, they are accounted for, not unknown. */
  const offeredButTakenAway = new Set<string>();
  /** By toolset (`mcp:<server>`): every tool its server listed, kept or left out. */
  const serverTools = new Map<string, string[]>();
  const connect = options.connectMcp ?? connectMcpServer;
  // `-name` of a tool only a server offers is known only now, as the servers list theirs.
  const excluded = new Set(resolution.excludedMcpTools ?? []);
  const takenAway = new Set(resolution.excluded ?? []);
  /** Starts these servers; `wanted` keeps only the tools it names (a single MCP tool asked by name). */
  /** By server: every name it listed (kept or left out), for the servers that started. */
  const listedBy = new Map<string, Set<string>>();
  let someDidNotStart = false;
  const addServers = async (servers: readonly string[], wanted: ReadonlySet<string> | null): Promise<string[]> => {
    const failures: string[] = [];
    const settled = await Promise.allSettled(servers.map((server) => connect(server, startedInRoot(ownEntry(config.mcpServers, server) ?? { command: '' }, root), signal)));
    if (signal?.aborted === true) {
      // Cut: what did start is ended with the rest, and nothing is told as unavailable.
      await Promise.allSettled([...connections, ...settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))].map((connection) => connection.close()));
      throw new ToolboxAborted(signal, resolution);
    }
    settled.forEach((result, index) => {
      const server = servers[index] ?? '';
      if (result.status === 'rejected') {
        // One bounded line for the errors below too, not only for `unavailable`.
        const reason = cleanLine(result.reason instanceof Error ? result.reason.message : 'did not start', UNAVAILABLE_REASON_CHARS);
        if (wanted === null) leaveOut(`${MCP_PREFIX}${server}`, reason);
        failures.push(reason);
        someDidNotStart = true;
        return;
      }
      listedBy.set(server, new Set([...result.value.tools.map((tool) => tool.name), ...(result.value.leftOut ?? []).map((gone) => gone.name)]));
      const listed = result.value.tools.filter((tool) => wanted === null || wanted.has(tool.name));
      // `-name`, or `-mcp:<server>/<name>` (the one way to a tool named as a toolset, none or -x).
      const takenBy = (tool: string): string | null => (excluded.has(tool) ? tool : excluded.has(`${MCP_PREFIX}${server}/${tool}`) ? `${MCP_PREFIX}${server}/${tool}` : null);
      for (const tool of listed) {
        const by = takenBy(tool.name);
        if (by === null) continue;
        takenAway.add(by);
        offeredButTakenAway.add(tool.name);
      }
      const offered = listed.filter((tool) => takenBy(tool.name) === null);
      const toolset = `${MCP_PREFIX}${server}`;
      const leaveOutOffered = (name: string, reason: string, tool: Tool | null): void => {
        const shown = serverToolName(server, name);
        leaveOut(shown, `${reason}; left out`);
        leftOut.set(shown, { toolset, tool });
        offeredButLeftOut.add(name);
      };
      for (const gone of result.value.leftOut ?? []) if ((wanted === null || wanted.has(gone.name)) && takenBy(gone.name) === null) leaveOutOffered(gone.name, gone.reason, null);
      // A server started for its toolset: what it gave, as a built-in toolset's list shows what it gives.
      // Each name once: a name the server listed twice is one tool (its second left out).
      if (wanted === null) serverTools.set(toolset, [...new Set([...listed.map((tool) => tool.name), ...(result.value.leftOut ?? []).map((gone) => gone.name)])].sort(byCodeUnits));
      if (offered.length === 0) {
        void result.value.close().catch(() => undefined);
        return;
      }
      connections.push(result.value);
      for (const tool of offered) {
        // The name goes to the model, the log and the terminal: only a plain name is offered.
        const refused = unreadable(tool);
        if (!MCP_TOOL_NAME.test(tool.name)) leaveOutOffered(tool.name, 'its name is not 1 to 64 letters, digits, "_", "-" or "."', tool);
        else if (refused !== null) leaveOutOffered(tool.name, refused, tool);
        else if (tools.some((other) => other.name === tool.name)) {
          const winner = mcpToolsets.get(tool.name);
          leaveOutOffered(tool.name, winner !== undefined ? `"${tool.name}" is already offered by ${winner}` : `"${tool.name}" is already a tool of the run`, tool);
        } else {
          tools.push(withSettings(tool, config));
          mcpToolsets.set(tool.name, toolset);
        }
      }
    });
    return failures;
  };
  if (resolution.mcpServers.length > 0) await addServers(resolution.mcpServers, null);
  // Names only an MCP server can explain: asked of the servers not started yet; one none offers is unknown.
  const pending = new Set((resolution.mcpTools ?? []).filter((name) => !tools.some((tool) => tool.name === name)));
  if (pending.size > 0) {
    const others = catalog.mcpServers.filter((server) => !resolution.mcpServers.includes(server) && !(resolution.excludedServers ?? []).includes(server));
    const failures = await addServers(others, pending);
    const missing = [...pending].filter((name) => !tools.some((tool) => tool.name === name) && !offeredButLeftOut.has(name) && !offeredButTakenAway.has(name));
    const why = failures.length > 0 ? `; some MCP servers did not start (${failures.join('; ')})` : '';
    if (missing.length > 0 && options.keepUnknown === true) {
      for (const name of missing) leaveOut(name, `no toolset, built-in tool or MCP server (${catalog.mcpServers.join(', ')}) has it${why}`);
    } else if (missing.length > 0) {
      await Promise.allSettled(connections.map((connection) => connection.close()));
      const name = missing[0] ?? '';
      const servers = catalog.mcpServers.join(', ');
      // Listed by a toolset of config.json, it is the config's to fix, whoever named the toolset.
      const listedBy = resolution.expanded.find((entry) => entry.tools.includes(name));
      if (listedBy !== undefined) throw new ConfigError(`toolset "${listedBy.toolset}" lists unknown tool ${JSON.stringify(name)}; no MCP server (${servers}) offers it either${why}`);
      throw new UnknownToolError(`${unknownName(name, [], catalog).message}; no MCP server (${servers}) offers it either${why}`);
    }
  }
  const misspelt = unknownTakenAway(excluded, listedBy, someDidNotStart, catalog);
  if (misspelt !== null) {
    await Promise.allSettled(connections.map((connection) => connection.close()));
    throw misspelt;
  }
  tools.sort((a, b) => byCodeUnits(a.name, b.name));
  unavailable.sort((a, b) => byCodeUnits(a.name, b.name));
  const closers = [...connections.map((connection) => connection.close), ...tools.map((tool) => (tool as Tool & { close?: () => void }).close).filter((close) => close !== undefined)];
  return {
    resolution,
    expanded: resolution.expanded.map((entry) => ({ toolset: entry.toolset, tools: serverTools.get(entry.toolset) ?? entry.tools })),
    tools,
    unavailable,
    mcpToolsets,
    leftOut,
    takenAway: [...takenAway].sort(),
    close: async () => {
      await Promise.allSettled(closers.map((close) => Promise.resolve().then(close)));
    },
  };
}

/**
 * The first `-name` (or `-mcp:<server>/<tool>`) that names nothing, once the servers have listed their
 * tools: a misspelt `-delete_repos` must not leave delete_repo in the run unnoticed. A bare name is
 * judged only when every server of the run started (one that did not might have offered it); a
 * server's tool only when that server started. Null when every name is accounted for.
 */
export function unknownTakenAway(excluded: ReadonlySet<string>, listedBy: ReadonlyMap<string, ReadonlySet<string>>, someDidNotStart: boolean, catalog: Catalog): UsageError | null {
  const started = [...listedBy.keys()].sort(byCodeUnits);
  for (const name of [...excluded].sort(byCodeUnits)) {
    const qualified = serverToolOf(name, catalog);
    if (qualified !== null) {
      const listed = listedBy.get(qualified.server);
      if (listed === undefined || listed.has(qualified.tool)) continue;
      return new UnknownToolError(`${JSON.stringify(EXCLUDE_PREFIX + name)} takes away nothing: MCP server "${qualified.server}" offers no tool ${JSON.stringify(qualified.tool)}; argo tools lists what it offers`);
    }
    if (someDidNotStart || started.some((server) => listedBy.get(server)?.has(name) === true)) continue;
    const servers = started.length > 0 ? `the run's MCP servers (${started.join(', ')}) do not offer it either` : 'the run starts no MCP server that could offer it';
    return new UnknownToolError(`${unknownName(name, [], catalog).message}; ${servers}`);
  }
  return null;
}

export interface ToolListing {
  /** `problem` says why a toolset cannot be used (an include cycle, an unknown name), else null. */
  toolsets: { name: string; tools: string[]; includes: string[]; builtin: boolean; problem: string | null }[];
  /** `asks`: a call asks "Allow?" first (side effects outside Argo's own data). */
  tools: { name: string; description: string; side_effects: boolean; asks: boolean; available: boolean; reason: string | null; toolset: string | null }[];
}

/** How many broken toolsets past the first `unusableToolsets` names. */
const OTHERS_NAMED = 3;

/**
 * What `argo tools` exits with when config.json breaks toolsets (each is listed with its problem):
 * the first one's problem, then the others by name (a few, and how many more); null when none is.
 */
export function unusableToolsets(listing: Pick<ToolListing, 'toolsets'>): string | null {
  const [first, ...others] = listing.toolsets.filter((set) => set.problem !== null);
  if (first === undefined) return null;
  const named = others.slice(0, OTHERS_NAMED).map((set) => `"${set.name}"`);
  const rest = others.length - named.length;
  const also = named.length === 0 ? '' : `; also unusable: ${named.join(', ')}${rest > 0 ? ` and ${groupThousands(rest)} more` : ''} (each is listed with its problem)`;
  return `config.json: toolsets."${first.name}": ${first.problem ?? ''}${also}`;
}

/**
 * Every toolset and tool with availability, for `argo tools`. MCP servers are started to list theirs.
 * A toolset config.json breaks (a cycle, an unknown name) is listed with its problem; the rest still are.
 */
export async function listAllTools(config: ToolsConfig, options: LoadOptions = {}): Promise<ToolListing> {
  const { catalog, tools: known } = buildCatalog(config, builtinTools());
  await checkCommandSchemas(config);
  const problems = toolsetProblems(catalog);
  const usable = Object.keys(catalog.toolsets).filter((name) => !problems.has(name));
  const box = await loadToolbox([...usable, ...catalog.tools].sort(), config, { ...options, keepUnknown: true });
  // A toolset naming a tool no MCP server offers is as broken as one naming an unknown built-in.
  const offered = new Set(box.tools.map((tool) => tool.name));
  const noneOffers = new Set(box.unavailable.map((gone) => gone.name).filter((name) => !offered.has(name) && !catalog.tools.has(name)));
  if (noneOffers.size > 0) {
    for (const [name, missing] of firstToolReached(usable, catalog, (tool) => noneOffers.has(tool))) {
      problems.set(name, `toolset "${name}" lists unknown tool "${missing}"; no MCP server (${catalog.mcpServers.join(', ')}) offers it either`);
    }
  }
  try {
    const toolsetOf = new Map<string, string>();
    for (const [name, spec] of Object.entries(catalog.toolsets).sort(([a], [b]) => byCodeUnits(a, b))) {
      for (const tool of spec.tools) if (!toolsetOf.has(tool)) toolsetOf.set(tool, name);
    }
    for (const [tool, toolset] of box.mcpToolsets) toolsetOf.set(tool, toolset);
    const rows: ToolListing['tools'] = [
      ...box.tools.map((tool) => ({ name: tool.name, description: tool.description, side_effects: tool.sideEffects, asks: asksFirst(tool), available: true, reason: null, toolset: toolsetOf.get(tool.name) ?? null })),
      ...box.unavailable.map((gone) => {
        // A tool that cannot run here is still described as it would be; a server that did not start is its own toolset.
        const origin = box.leftOut?.get(gone.name);
        const tool = origin !== undefined ? origin.tool : known.get(gone.name);
        const server = origin === undefined && gone.name.startsWith(MCP_PREFIX);
        const mcp = server || origin !== undefined;
        return {
          name: gone.name,
          description: tool?.description ?? (server ? `the tools of MCP server "${gone.name.slice(MCP_PREFIX.length)}"` : ''),
          side_effects: tool?.sideEffects ?? mcp,
          asks: tool ? asksFirst(tool) : mcp,
          available: false,
          reason: gone.reason,
          toolset: origin?.toolset ?? toolsetOf.get(gone.name) ?? (server ? gone.name : null),
        };
      }),
    ].sort((a, b) => byCodeUnits(a.name, b.name));
    // An MCP server's toolset holds what the server listed: known now that it ran.
    const listedBy = new Map(box.expanded.map((entry) => [entry.toolset, entry.tools]));
    const toolsets = Object.entries(catalog.toolsets)
      .map(([name, spec]) => ({
        name,
        tools: name.startsWith(MCP_PREFIX) ? (listedBy.get(name) ?? []) : [...spec.tools].sort(),
        includes: [...spec.includes],
        builtin: Object.hasOwn(BUILTIN_TOOLSETS, name),
        problem: problems.get(name) ?? null,
      }))
      .sort((a, b) => byCodeUnits(a.name, b.name));
    return { toolsets, tools: rows };
  } finally {
    await box.close();
  }
}
