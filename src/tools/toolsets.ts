// Toolsets are data: names of tools plus names of toolsets they include. Resolution is pure.
import { ConfigError, UsageError } from '../errors.js';
import { EXCLUDE_PREFIX, NO_TOOLS } from '../config/tool-list.js';

export interface ToolsetSpec {
  tools: string[];
  includes: string[];
}

/** The contract's table. `process` is run_command's companion for long-running commands. */
export const BUILTIN_TOOLSETS: Readonly<Record<string, ToolsetSpec>> = {
  fs: { tools: ['read_file', 'list_files', 'search_files'], includes: [] },
  edit: { tools: ['write_file', 'edit_file'], includes: [] },
  shell: { tools: ['run_command', 'process'], includes: [] },
  web: { tools: ['fetch_url'], includes: [] },
  memo: { tools: ['memo'], includes: [] },
  history: { tools: ['search_history'], includes: [] },
  dev: { tools: [], includes: ['fs', 'edit', 'shell'] },
};

export const MCP_PREFIX = 'mcp:';

/** What an MCP tool's name may be (the OpenAI limit, plus "."): it is sent to the model and shown. */
export const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** What names can mean: every toolset (built-in, user, `mcp:<server>`) and every static tool. */
export interface Catalog {
  toolsets: Readonly<Record<string, ToolsetSpec>>;
  tools: ReadonlySet<string>;
  /** Server names of `mcpServers`; their tools are known only once they run. */
  mcpServers: readonly string[];
}

export interface Resolution {
  /** Static tools, deduplicated and sorted by name. */
  tools: string[];
  /** MCP servers to start, sorted. */
  mcpServers: string[];
  /**
   * Names no toolset or static tool has, kept while MCP servers are configured: each may be a tool
   * one of them offers (known only once they run). Sorted; absent when there are none.
   */
  mcpTools?: string[];
  /** Each toolset reached and the tools it contributed directly, in resolution order (for --explain). */
  expanded: { toolset: string; tools: string[] }[];
  /** What the `-name` entries took away of what the others added: static tools and `mcp:<server>` servers. Sorted; absent when none. */
  excluded?: string[];
  /**
   * `-name`s only an MCP server could have, and `-mcp:<server>/<tool>`s (kept so): left out of what
   * the servers offer once they run. Sorted; absent when none.
   */
  excludedMcpTools?: string[];
  /** Servers a `-mcp:<server>` took away: not started, not even to look for a tool asked by name. Sorted; absent when none. */
  excludedServers?: string[];
}

/**
 * `mcp:<server>/<tool>` (a configured server, a tool name as MCP_TOOL_NAME allows) as its server and
 * tool; null for any other name.
 */
export function serverToolOf(name: string, catalog: Pick<Catalog, 'mcpServers'>): { server: string; tool: string } | null {
  if (!name.startsWith(MCP_PREFIX)) return null;
  const slash = name.indexOf('/');
  if (slash === -1) return null;
  const server = name.slice(MCP_PREFIX.length, slash);
  const tool = name.slice(slash + 1);
  return catalog.mcpServers.includes(server) && MCP_TOOL_NAME.test(tool) ? { server, tool } : null;
}

/** Splits "fs, edit,run_command" into names; empty items are a usage error. */
export function parseToolList(value: string, where: string): string[] {
  const names = value.split(',').map((name) => name.trim());
  if (names.some((name) => name === '')) throw new UsageError(`${where}: empty name in ${JSON.stringify(value)}; use a comma-separated list like fs,edit`);
  return names;
}

/**
 * Resolves toolset and tool names into tools. A toolset name wins over a tool of the same name
 * (`memo` is both, with the same result). Cycles and unknown names are usage errors naming them.
 */
export function resolveTools(requested: readonly string[], catalog: Catalog): Resolution {
  if (requested.includes(NO_TOOLS)) {
    if (requested.length > 1) throw new UsageError(`"${NO_TOOLS}" turns tools off and cannot be combined with other names`);
    return { tools: [], mcpServers: [], expanded: [] };
  }
  const removed = requested.filter((name) => name.startsWith(EXCLUDE_PREFIX)).map((name) => name.slice(EXCLUDE_PREFIX.length));
  // A server's tool by its server's name: the only way to one named as a toolset (fs), none or -x.
  const serverTools = removed.filter((name) => serverToolOf(name, catalog) !== null);
  const taken = removed.filter((name) => !serverTools.includes(name));
  const bad = taken.find((name) => name === '' || name.startsWith(EXCLUDE_PREFIX) || name === NO_TOOLS);
  if (bad !== undefined) {
    const qualified = catalog.mcpServers.length > 0 && bad !== '' ? ` (an MCP server's tool of that name: ${EXCLUDE_PREFIX}${MCP_PREFIX}${catalog.mcpServers[0] ?? ''}/${bad})` : '';
    throw new UsageError(`${JSON.stringify(EXCLUDE_PREFIX + bad)} takes nothing away; write ${EXCLUDE_PREFIX}NAME with a toolset or tool, e.g. dev,-shell${qualified}`);
  }
  const adding = requested.filter((name) => !name.startsWith(EXCLUDE_PREFIX));
  if (adding.length === 0 && removed.length > 0) throw new UsageError(`${requested.join(',')} only takes tools away, and nothing in the list adds any; name what to keep too, e.g. dev,-shell`);
  const added = expand(adding, catalog);
  if (removed.length === 0) return added;
  const away = expand(taken, catalog);
  const keep = (set: readonly string[], gone: readonly string[]): string[] => set.filter((name) => !gone.includes(name));
  const went = (set: readonly string[], gone: readonly string[]): string[] => set.filter((name) => gone.includes(name));
  const mcpTools = keep(added.mcpTools ?? [], away.mcpTools ?? []);
  const excluded = [...went(added.tools, away.tools), ...went(added.mcpServers, away.mcpServers).map((server) => `${MCP_PREFIX}${server}`)].sort();
  const excludedMcpTools = [...(away.mcpTools ?? []), ...serverTools].sort();
  const excludedServers = away.mcpServers;
  return {
    tools: keep(added.tools, away.tools),
    mcpServers: keep(added.mcpServers, away.mcpServers),
    expanded: added.expanded,
    ...(mcpTools.length > 0 ? { mcpTools } : {}),
    ...(excluded.length > 0 ? { excluded } : {}),
    ...(excludedMcpTools.length > 0 ? { excludedMcpTools } : {}),
    ...(excludedServers.length > 0 ? { excludedServers } : {}),
  };
}

/**
 * What one pass of resolution keeps between the names it expands: the toolsets already resolved
 * (everything they reach resolves too), and, after a usage error, the toolsets that would fail alone
 * with the very same message.
 */
interface Pass {
  done: Set<string>;
  failing: readonly string[];
}

/** The tools, servers and possible MCP tools that names add (no exclusions). */
function expand(requested: readonly string[], catalog: Catalog, pass: Pass = { done: new Set(), failing: [] }): Resolution {
  const tools = new Set<string>();
  const servers = new Set<string>();
  const mcpTools = new Set<string>();
  // A name that may be an MCP server's tool: asked of the servers once they run (loadToolbox).
  const perhapsMcp = (name: string): boolean => catalog.mcpServers.length > 0 && MCP_TOOL_NAME.test(name);
  const expanded: Resolution['expanded'] = [];
  const { done } = pass;
  /**
   * `error`, noting the toolsets that fail alone with it, as each takes the same route to it: the whole
   * path for a problem in one toolset's own lists (it names only that toolset); for a cycle, see there.
   */
  const failing = (error: UsageError, toolsets: readonly string[]): UsageError => {
    pass.failing = toolsets;
    return error;
  };

  // Depth-first with an explicit stack: an includes chain thousands deep is no deeper for the call
  // stack, and each toolset is entered once (a Set for the cycle check, not a search of the path).
  const path: string[] = [];
  const onPath = new Set<string>();
  const pending: { name: string; includes: readonly string[]; next: number }[] = [];
  /** Adds what `name` gives directly; returns its includes to visit, or null when there is nothing more. */
  const enter = (name: string): readonly string[] | null => {
    if (onPath.has(name)) {
      const start = path.indexOf(name);
      // A toolset after `name` on the path enters the cycle elsewhere, and names it from there.
      throw failing(new ConfigError(`toolset cycle: ${[...path.slice(start), name].join(' → ')}; remove one of these includes in config.json`), path.slice(0, start + 1));
    }
    if (done.has(name)) return null;
    const spec = Object.hasOwn(catalog.toolsets, name) ? catalog.toolsets[name] : undefined;
    if (spec === undefined) {
      const includedBy = path.at(-1);
      // "includes" names toolsets only: a tool there is a mistake, the tool's place is "tools".
      if (includedBy !== undefined && catalog.tools.has(name)) {
        throw failing(new ConfigError(`toolset "${includedBy}" includes ${JSON.stringify(name)}, which is a tool, not a toolset; move it to the toolset's "tools"`), [...path]);
      }
      if (catalog.tools.has(name)) {
        tools.add(name);
        return null;
      }
      if (path.length === 0 && perhapsMcp(name)) {
        mcpTools.add(name);
        return null;
      }
      throw failing(unknownName(name, path, catalog), [...path]);
    }
    if (name.startsWith(MCP_PREFIX)) servers.add(name.slice(MCP_PREFIX.length));
    const taking = [...spec.tools, ...spec.includes].find((entry) => entry.startsWith(EXCLUDE_PREFIX));
    if (taking !== undefined) {
      throw failing(
        new ConfigError(`toolset "${name}" lists ${JSON.stringify(taking)}, but ${EXCLUDE_PREFIX}NAME works only in a list of tools (--tools, "tools"), not inside a toolset; list what the toolset keeps instead`),
        [...path, name],
      );
    }
    for (const tool of spec.tools) {
      if (catalog.tools.has(tool)) tools.add(tool);
      // As on the command line, a toolset's name means the toolset, never an MCP tool of that name.
      else if (Object.hasOwn(catalog.toolsets, tool)) {
        throw failing(new ConfigError(`toolset "${name}" lists ${JSON.stringify(tool)} in "tools", but it is a toolset; move it to the toolset's "includes"`), [...path, name]);
      } else if (perhapsMcp(tool)) mcpTools.add(tool);
      else throw failing(new ConfigError(`toolset "${name}" lists unknown tool ${JSON.stringify(tool)}; known tools: ${[...catalog.tools].sort().join(', ')}`), [...path, name]);
    }
    expanded.push({ toolset: name, tools: [...spec.tools].sort() });
    return spec.includes;
  };
  const visit = (name: string): void => {
    const includes = enter(name);
    if (includes === null) return;
    path.push(name);
    onPath.add(name);
    pending.push({ name, includes, next: 0 });
  };
  for (const name of requested) {
    visit(name);
    for (let top = pending.at(-1); top !== undefined; top = pending.at(-1)) {
      const include = top.includes[top.next++];
      if (include !== undefined) {
        visit(include);
        continue;
      }
      pending.pop();
      path.pop();
      onPath.delete(top.name);
      done.add(top.name);
    }
  }
  return { tools: [...tools].sort(), mcpServers: [...servers].sort(), expanded, ...(mcpTools.size > 0 ? { mcpTools: [...mcpTools].sort() } : {}) };
}

/**
 * What `resolveTools([name])` would throw for each toolset, by name; a toolset that resolves is absent.
 * One pass: each toolset is entered once, not once per toolset that reaches it (a chain 5,000 deep
 * was 12.5 million steps), and a failure is kept for every toolset that fails alone with it.
 */
export function toolsetProblems(catalog: Catalog): Map<string, string> {
  const pass: Pass = { done: new Set(), failing: [] };
  const problems = new Map<string, string>();
  for (const name of Object.keys(catalog.toolsets)) {
    if (pass.done.has(name) || problems.has(name)) continue;
    pass.failing = [];
    try {
      expand([name], catalog, pass);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      problems.set(name, error.message);
      for (const toolset of pass.failing) problems.set(toolset, error.message);
    }
  }
  return problems;
}

/**
 * For each of `names` (toolsets that resolve), the first by name of the tools `pick` chooses among
 * those it lists itself or through its includes; absent when there is none. Each toolset is looked
 * at once, with an explicit stack as in `expand`.
 */
export function firstToolReached(names: readonly string[], catalog: Catalog, pick: (tool: string) => boolean): Map<string, string> {
  const specOf = (name: string): ToolsetSpec | undefined => (Object.hasOwn(catalog.toolsets, name) ? catalog.toolsets[name] : undefined);
  const earlier = (a: string | null, b: string | null): string | null => (a === null || (b !== null && b < a) ? b : a);
  const own = (spec: ToolsetSpec): string | null => spec.tools.filter(pick).reduce<string | null>(earlier, null);
  const first = new Map<string, string | null>();
  const entered = new Set<string>();
  for (const root of names) {
    const rootSpec = specOf(root);
    if (rootSpec === undefined || entered.has(root)) continue;
    entered.add(root);
    const pending = [{ name: root, spec: rootSpec, best: own(rootSpec), next: 0 }];
    for (let top = pending.at(-1); top !== undefined; top = pending.at(-1)) {
      const include = top.spec.includes[top.next++];
      if (include === undefined) {
        pending.pop();
        first.set(top.name, top.best);
        const parent = pending.at(-1);
        if (parent !== undefined) parent.best = earlier(parent.best, top.best);
        continue;
      }
      const spec = specOf(include);
      if (spec === undefined) continue;
      if (first.has(include)) top.best = earlier(top.best, first.get(include) ?? null);
      else if (!entered.has(include)) {
        entered.add(include);
        pending.push({ name: include, spec, best: own(spec), next: 0 });
      }
    }
  }
  const found = new Map<string, string>();
  for (const name of names) {
    const tool = first.get(name);
    if (tool !== undefined && tool !== null) found.set(name, tool);
  }
  return found;
}

/** A name no toolset or tool has: the asker's mistake at the top (`path` empty), config.json's inside a toolset. */
/** A name in the list that no toolset, tool or MCP server has (exit 2; argo serve's `unknown_tool`). */
export class UnknownToolError extends UsageError {
  override name = 'UnknownToolError';
}

export function unknownName(name: string, path: readonly string[], catalog: Catalog): UsageError {
  const where = path.length > 0 ? `toolset "${path[path.length - 1] ?? ''}" includes unknown toolset ${JSON.stringify(name)}` : `unknown toolset or tool ${JSON.stringify(name)}`;
  const toolsets = Object.keys(catalog.toolsets).sort().join(', ');
  const message = `${where}; toolsets: ${toolsets}; tools: ${[...catalog.tools].sort().join(', ')} (argo tools lists them)`;
  return path.length > 0 ? new ConfigError(message) : new UnknownToolError(message);
}
