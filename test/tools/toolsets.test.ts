import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../../src/errors.js';
import { ToolboxAborted, buildCatalog, builtinTools, listAllTools, loadToolbox, serverToolName, startedInRoot, unusableToolsets } from '../../src/tools/catalog.js';
import type { ToolsConfig } from '../../src/tools/catalog.js';
import { BUILTIN_TOOLSETS, firstToolReached, parseToolList, resolveTools, toolsetProblems } from '../../src/tools/toolsets.js';
import type { Catalog, ToolsetSpec } from '../../src/tools/toolsets.js';
import { thrown } from '../support/thrown.js';

const catalog: Catalog = {
  toolsets: {
    ...BUILTIN_TOOLSETS,
    a: { tools: ['read_file'], includes: ['b'] },
    b: { tools: [], includes: ['c'] },
    c: { tools: [], includes: ['a'] },
    self: { tools: [], includes: ['self'] },
    review: { tools: ['memo'], includes: ['fs', 'history'] },
    broken: { tools: ['nope'], includes: [] },
    taking: { tools: ['-run_command'], includes: ['dev'] },
    bad_include: { tools: [], includes: ['ghost'] },
    set_as_tool: { tools: ['fs'], includes: [] },
    tool_as_set: { tools: [], includes: ['read_file'] },
    'mcp:files': { tools: [], includes: [] },
    remote: { tools: [], includes: ['mcp:files', 'fs'] },
  },
  tools: new Set(builtinTools().map((tool) => tool.name)),
  mcpServers: ['files'],
};

describe('resolving toolsets and tools', () => {
  it.each([
    [['fs'], ['list_files', 'read_file', 'search_files'], []],
    [['dev'], ['edit_file', 'list_files', 'process', 'read_file', 'run_command', 'search_files', 'write_file'], []],
    [['read_file', 'memo'], ['memo', 'read_file'], []],
    [['fs', 'read_file', 'fs'], ['list_files', 'read_file', 'search_files'], []],
    [['review'], ['list_files', 'memo', 'read_file', 'search_files', 'search_history'], []],
    [['remote'], ['list_files', 'read_file', 'search_files'], ['files']],
    [['none'], [], []],
    [['web', 'shell'], ['fetch_url', 'process', 'run_command'], []],
  ])('%j → %j (mcp %j)', (requested, tools, servers) => {
    const resolution = resolveTools(requested, catalog);
    expect(resolution.tools).toEqual(tools);
    expect(resolution.mcpServers).toEqual(servers);
  });

  it.each([
    [['dev', '-shell'], ['edit_file', 'list_files', 'read_file', 'search_files', 'write_file'], [], ['process', 'run_command']],
    [['-shell', 'dev'], ['edit_file', 'list_files', 'read_file', 'search_files', 'write_file'], [], ['process', 'run_command']],
    [['dev', '-run_command'], ['edit_file', 'list_files', 'process', 'read_file', 'search_files', 'write_file'], [], ['run_command']],
    // Only what went is reported: fs never had the shell's tools.
    [['fs', '-shell'], ['list_files', 'read_file', 'search_files'], [], undefined],
    [['remote', '-mcp:files'], ['list_files', 'read_file', 'search_files'], [], ['mcp:files']],
    [['remote', '-fs'], [], ['files'], ['list_files', 'read_file', 'search_files']],
    [['fs', '-fs'], [], [], ['list_files', 'read_file', 'search_files']],
  ])('%j → %j (mcp %j), taken away %j', (requested, tools, servers, excluded) => {
    const resolution = resolveTools(requested, catalog);
    expect(resolution).toMatchObject({ tools, mcpServers: servers });
    expect(resolution.excluded).toEqual(excluded);
  });

  it('a name taken away that only an MCP server could have is passed on, to leave out of what the servers offer', () => {
    const resolution = resolveTools(['mcp:files', 'gh_issue', '-gh_issue', '-lint'], catalog);
    expect(resolution).toMatchObject({ mcpServers: ['files'], excludedMcpTools: ['gh_issue', 'lint'] });
    expect(resolution).not.toHaveProperty('mcpTools');
    expect(resolution).not.toHaveProperty('excluded');
  });

  it.each([
    // mcp:<server>/<tool>: the one way to a tool named as a toolset, none or -x; of a configured server only.
    [['mcp:files', '-mcp:files/none', '-mcp:files/fs', '-mcp:files/-dash'], ['mcp:files/-dash', 'mcp:files/fs', 'mcp:files/none']],
    [['mcp:files', '-mcp:files/read'], ['mcp:files/read']],
  ])('%j takes an MCP server\'s tool away by its server: %j', (requested, gone) => {
    const resolution = resolveTools(requested, catalog);
    expect(resolution).toMatchObject({ mcpServers: ['files'], excludedMcpTools: gone });
    expect(resolution).not.toHaveProperty('excluded');
  });

  it.each([
    [['dev', '-'], '"-" takes nothing away; write -NAME with a toolset or tool, e.g. dev,-shell'],
    [['taking'], 'toolset "taking" lists "-run_command", but -NAME works only in a list of tools (--tools, "tools"), not inside a toolset; list what the toolset keeps instead'],
    [['-shell', '-web'], '-shell,-web only takes tools away, and nothing in the list adds any; name what to keep too, e.g. dev,-shell'],
    [['dev', '--shell'], '"--shell" takes nothing away'],
    [['dev', '-none'], '"-none" takes nothing away; write -NAME with a toolset or tool, e.g. dev,-shell (an MCP server\'s tool of that name: -mcp:files/none)'],
    [['dev', '--dash'], '(an MCP server\'s tool of that name: -mcp:files/-dash)'],
    [['-mcp:files/none'], '-mcp:files/none only takes tools away'],
    // Of a server config.json does not have: no name at all.
    [['dev', '-mcp:other/none'], 'unknown toolset or tool "mcp:other/none"'],
    // Not even an MCP tool's name: a typo.
    [['dev', '-she ll'], 'unknown toolset or tool "she ll"'],
  ])('%j is a usage error: %s', (requested, message) => {
    const error = thrown(() => resolveTools(requested, catalog));
    expect(error).toBeInstanceOf(UsageError);
    expect(error instanceof ConfigError).toBe(message.startsWith('toolset '));
    expect((error as Error).message).toContain(message);
  });

  it('records each toolset reached, for --explain', () => {
    expect(resolveTools(['dev'], catalog).expanded).toEqual([
      { toolset: 'dev', tools: [] },
      { toolset: 'fs', tools: ['list_files', 'read_file', 'search_files'] },
      { toolset: 'edit', tools: ['edit_file', 'write_file'] },
      { toolset: 'shell', tools: ['process', 'run_command'] },
    ]);
  });

  it.each([
    [['a'], 'toolset cycle: a → b → c → a'],
    [['b'], 'toolset cycle: b → c → a → b'],
    [['self'], 'toolset cycle: self → self'],
  ])('a cycle is config.json\'s usage error naming it: %j', (requested, message) => {
    const error = thrown(() => resolveTools(requested, catalog));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(message);
  });

  it.each([
    [['fss'], 'unknown toolset or tool "fss"; toolsets: a, b, bad_include, broken, c, dev, edit, fs, history, mcp:files, memo, remote, review, self, set_as_tool, shell, taking, tool_as_set, web; tools: edit_file, fetch_url'],
    [['bad_include'], 'toolset "bad_include" includes unknown toolset "ghost"'],
    [['broken'], 'toolset "broken" lists unknown tool "nope"'],
    // Each list holds one kind of name: the message says where the name belongs.
    [['set_as_tool'], 'toolset "set_as_tool" lists "fs" in "tools", but it is a toolset; move it to the toolset\'s "includes"'],
    [['tool_as_set'], 'toolset "tool_as_set" includes "read_file", which is a tool, not a toolset; move it to the toolset\'s "tools"'],
    [['none', 'fs'], '"none" turns tools off'],
    // The members every object has are no toolset: only the catalog's own entries are.
    [['constructor'], 'unknown toolset or tool "constructor"'],
    [['toString'], 'unknown toolset or tool "toString"'],
    [['__proto__'], 'unknown toolset or tool "__proto__"'],
    [['hasOwnProperty'], 'unknown toolset or tool "hasOwnProperty"'],
    [['fs', 'valueOf'], 'unknown toolset or tool "valueOf"'],
  ])('an unknown name is a usage error listing the known ones: %j', (requested, message) => {
    const error = thrown(() => resolveTools(requested, { ...catalog, mcpServers: [] }));
    expect(error).toBeInstanceOf(UsageError);
    // Inside a toolset, the name is config.json's to fix, not the list's.
    expect(error instanceof ConfigError).toBe(message.startsWith('toolset '));
    expect((error as Error).message).toContain(message);
  });

  // With MCP servers configured, a name nobody else has may be one of their tools: the servers are asked.
  it.each([
    [['fs', 'github_search'], ['list_files', 'read_file', 'search_files'], ['github_search']],
    [['broken'], [], ['nope']],
    [['zeta', 'alpha'], [], ['alpha', 'zeta']],
  ])('with MCP servers, %j → static %j, MCP tool names %j', (requested, tools, mcpTools) => {
    const resolution = resolveTools(requested, catalog);
    expect(resolution.tools).toEqual(tools);
    expect(resolution.mcpTools).toEqual(mcpTools);
    expect(resolution.mcpServers).toEqual([]);
  });

  it.each([
    [['bad_include'], 'includes unknown toolset "ghost"'],
    [['we ird'], 'unknown toolset or tool "we ird"'],
    // A toolset's name in "tools" is the toolset, as on the command line: never asked of the servers.
    [['set_as_tool'], 'toolset "set_as_tool" lists "fs" in "tools", but it is a toolset'],
    [['tool_as_set'], 'toolset "tool_as_set" includes "read_file", which is a tool'],
  ])('with MCP servers, %j is still refused: %s', (requested, message) => {
    expect((thrown(() => resolveTools(requested, catalog)) as Error).message).toContain(message);
  });

  it.each([
    ['fs,edit', ['fs', 'edit']],
    [' fs , read_file ', ['fs', 'read_file']],
  ])('parseToolList(%j)', (value, names) => {
    expect(parseToolList(value, '--tools')).toEqual(names);
  });

  it.each([
    [10_000, false],
    [10_000, true],
  ])('an includes chain %i deep resolves without deep recursion (closed into a cycle: %s, named)', (depth, cycle) => {
    const chain: Record<string, { tools: string[]; includes: string[] }> = {};
    for (let i = 0; i < depth; i++) chain[`t${i}`] = { tools: [], includes: [`t${i + 1}`] };
    chain[`t${depth}`] = { tools: ['read_file'], includes: cycle ? ['t0'] : [] };
    // A walk that runs away (a cycle check that misses) never returns to let a timeout fire: it grows
    // until the worker dies, tens of seconds later. Each toolset is looked up once, so a bound on the
    // lookups ends such a walk at once, naming the cause.
    let lookups = 0;
    const most = 3 * (depth + 1);
    const toolsets = new Proxy<Record<string, ToolsetSpec>>({ ...BUILTIN_TOOLSETS, ...chain }, {
      get: (target, key, receiver) => {
        if (++lookups > most) throw new Error(`more than ${most} toolset lookups for ${depth + 1} toolsets: the walk runs away`);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const deep: Catalog = { ...catalog, toolsets };
    if (cycle) expect((thrown(() => resolveTools(['t0'], deep)) as Error).message).toMatch(/^toolset cycle: t0 → t1 → .* → t10000 → t0; remove one of these includes in config\.json$/);
    else expect(resolveTools(['t0', 't5000'], deep)).toMatchObject({ tools: ['read_file'], expanded: expect.arrayContaining([{ toolset: `t${depth}`, tools: ['read_file'] }]) as unknown });
  }, 5_000);

  it('parseToolList rejects empty items', () => {
    expect(thrown(() => parseToolList('fs,,edit', '--tools'))).toBeInstanceOf(UsageError);
    // Found by test/cli/parse.property.test.ts: the list is quoted as JSON, so the error is one line.
    expect((thrown(() => parseToolList('fs,\n', '--tools')) as Error).message).toBe('--tools: empty name in "fs,\\n"; use a comma-separated list like fs,edit');
  });
});

/** The built-in toolsets and tools, plus these toolsets (`tools` and `includes` default to none). */
const catalogWith = (toolsets: Record<string, Partial<ToolsetSpec>>, mcpServers: string[] = []): Catalog => ({
  toolsets: { ...BUILTIN_TOOLSETS, ...Object.fromEntries(Object.entries(toolsets).map(([name, spec]) => [name, { tools: spec.tools ?? [], includes: spec.includes ?? [] }])) },
  tools: new Set(builtinTools().map((tool) => tool.name)),
  mcpServers,
});

// top reaches base twice (through left and right): a diamond.
const diamond = {
  top: { tools: ['memo'], includes: ['left', 'right'] },
  left: { tools: ['read_file'], includes: ['base'] },
  right: { tools: ['write_file'], includes: ['base'] },
  base: { tools: ['read_file', 'fetch_url'] },
};

describe('diamond includes: each toolset once, depth first in the order of includes', () => {
  it.each([
    [['top'], ['top', 'left', 'base', 'right'], ['fetch_url', 'memo', 'read_file', 'write_file']],
    [['top', 'top'], ['top', 'left', 'base', 'right'], ['fetch_url', 'memo', 'read_file', 'write_file']],
    [['right', 'left'], ['right', 'base', 'left'], ['fetch_url', 'read_file', 'write_file']],
    [['base', 'top'], ['base', 'top', 'left', 'right'], ['fetch_url', 'memo', 'read_file', 'write_file']],
    [['left', 'read_file', 'base'], ['left', 'base'], ['fetch_url', 'read_file']],
  ])('%j expands %j and resolves to %j', (requested, order, tools) => {
    const resolution = resolveTools(requested, catalogWith(diamond));
    expect(resolution.expanded.map((entry) => entry.toolset)).toEqual(order);
    expect(resolution.tools).toEqual(tools);
  });

  it('each toolset reached gives its own tools, sorted, once', () => {
    expect(resolveTools(['top'], catalogWith(diamond)).expanded).toEqual([
      { toolset: 'top', tools: ['memo'] },
      { toolset: 'left', tools: ['read_file'] },
      { toolset: 'base', tools: ['fetch_url', 'read_file'] },
      { toolset: 'right', tools: ['write_file'] },
    ]);
  });
});

describe("every toolset's problem in one pass (argo tools)", () => {
  it.each([
    ['a diamond', diamond, {}],
    ['a self include', { self: { includes: ['self'] } }, { self: 'toolset cycle: self → self;' }],
    // Each toolset names the cycle from where its own resolution enters it.
    [
      'a cycle under a diamond',
      { a: { includes: ['b', 'c'] }, b: { includes: ['d'] }, c: { includes: ['d'] }, d: { includes: ['e'] }, e: { includes: ['c'] } },
      { a: 'toolset cycle: d → e → c → d;', b: 'toolset cycle: d → e → c → d;', c: 'toolset cycle: c → d → e → c;', d: 'toolset cycle: d → e → c → d;', e: 'toolset cycle: e → c → d → e;' },
    ],
    [
      'a chain into a cycle of two',
      { c0: { includes: ['c1'] }, c1: { includes: ['x'] }, x: { includes: ['y'] }, y: { includes: ['x'] }, apart: { includes: ['fs'] } },
      { c0: 'toolset cycle: x → y → x;', c1: 'toolset cycle: x → y → x;', x: 'toolset cycle: x → y → x;', y: 'toolset cycle: y → x → y;' },
    ],
    [
      'an unknown include in one arm of a diamond',
      { a: { includes: ['b', 'c'] }, b: { includes: ['base'] }, c: { includes: ['base', 'ghost'] }, base: { tools: ['memo'] } },
      { a: 'toolset "c" includes unknown toolset "ghost"; toolsets: ', c: 'toolset "c" includes unknown toolset "ghost"; toolsets: ' },
    ],
    ['an unknown tool two includes down', { a: { includes: ['b'] }, b: { includes: ['c'] }, c: { tools: ['nope'] } }, { a: 'toolset "c" lists unknown tool "nope"', b: 'toolset "c" lists unknown tool "nope"', c: 'toolset "c" lists unknown tool "nope"' }],
    [
      'a toolset in "tools" and a tool in "includes", one include down',
      { a: { includes: ['b'] }, b: { tools: ['memo', 'fs'] }, c: { includes: ['d'] }, d: { includes: ['memo', 'search_history'] } },
      {
        a: 'toolset "b" lists "fs" in "tools", but it is a toolset',
        b: 'toolset "b" lists "fs" in "tools", but it is a toolset',
        c: 'toolset "d" includes "search_history", which is a tool',
        d: 'toolset "d" includes "search_history", which is a tool',
      },
    ],
    ['-NAME inside an included toolset', { a: { includes: ['fs', 'b'] }, b: { tools: ['-memo'] } }, { a: 'toolset "b" lists "-memo", but -NAME works only', b: 'toolset "b" lists "-memo", but -NAME works only' }],
    // The first problem in the order of includes: the cycle comes before the unknown name.
    [
      'a cycle and an unknown name below one toolset',
      { a: { includes: ['loop', 'bad'] }, loop: { includes: ['loop'] }, bad: { includes: ['ghost'] } },
      { a: 'toolset cycle: loop → loop;', loop: 'toolset cycle: loop → loop;', bad: 'toolset "bad" includes unknown toolset "ghost"' },
    ],
  ] satisfies [string, Record<string, Partial<ToolsetSpec>>, Record<string, string>][])('%s: %j → %j', (_name, toolsets, expected) => {
    const catalog = catalogWith(toolsets);
    const problems = toolsetProblems(catalog);
    expect([...problems.keys()].sort()).toEqual(Object.keys(expected).sort());
    for (const [toolset, start] of Object.entries(expected)) expect(problems.get(toolset)?.slice(0, start.length)).toBe(start);
    // Word for word what resolving each toolset apart throws.
    const alone = (toolset: string): string | undefined => (toolset in expected ? (thrown(() => resolveTools([toolset], catalog)) as Error).message : (resolveTools([toolset], catalog), undefined));
    for (const toolset of Object.keys(catalog.toolsets)) expect(problems.get(toolset)).toBe(alone(toolset));
  });
});

describe("argo tools' exit line for toolsets config.json breaks", () => {
  const set = (name: string, problem: string | null) => ({ name, tools: [], includes: [], builtin: false, problem });
  it.each<[string, ReturnType<typeof set>[], string | null]>([
    // case, the listing's toolsets → the line (null: none is broken, exit 0)
    ['none broken', [set('fs', null), set('mine', null)], null],
    ['one', [set('a', 'toolset cycle: a → a'), set('fs', null)], 'config.json: toolsets."a": toolset cycle: a → a'],
    ['two: the second by name', [set('a', 'P'), set('b', 'Q'), set('fs', null)], 'config.json: toolsets."a": P; also unusable: "b" (each is listed with its problem)'],
    ['four: three by name', [set('a', 'P'), set('b', 'Q'), set('c', 'R'), set('d', 'S')], 'config.json: toolsets."a": P; also unusable: "b", "c", "d" (each is listed with its problem)'],
    ['1,002: three by name, the rest counted', Array.from({ length: 1002 }, (_, index) => set(`t${index}`, 'P')), 'config.json: toolsets."t0": P; also unusable: "t1", "t2", "t3" and 998 more (each is listed with its problem)'],
  ])('%s', (_case, toolsets, line) => {
    expect(unusableToolsets({ toolsets })).toBe(line);
  });

  it('lists every broken toolset, whatever is wrong with each', async () => {
    const listing = await listAllTools({ toolsets: { as_tool: { tools: ['fs'] }, as_set: { includes: ['read_file'] }, fine: { includes: ['fs'] } } });
    expect(unusableToolsets(listing)).toBe('config.json: toolsets."as_set": toolset "as_set" includes "read_file", which is a tool, not a toolset; move it to the toolset\'s "tools"; also unusable: "as_tool" (each is listed with its problem)');
  });
});

describe('the first picked tool a toolset reaches (argo tools: one no MCP server offers)', () => {
  const toolsets = { top: { includes: ['left', 'right'] }, left: { tools: ['zeta'] }, right: { tools: ['alpha'], includes: ['base', 'memo'] }, base: { tools: ['beta', 'read_file'] }, lone: { tools: ['memo'] } };
  it.each([
    [['alpha', 'beta', 'zeta'], { top: 'alpha', left: 'zeta', right: 'alpha', base: 'beta' }],
    [['beta', 'zeta'], { top: 'beta', left: 'zeta', right: 'beta', base: 'beta' }],
    [['zeta'], { top: 'zeta', left: 'zeta' }],
    [['gamma'], {}],
  ])('picking %j → %j', (picked, expected) => {
    const found = firstToolReached(Object.keys(toolsets), catalogWith(toolsets, ['s']), (tool) => picked.includes(tool));
    expect(Object.fromEntries(found)).toEqual(expected);
  });
});

describe('the catalog from config', () => {
  it.each([
    [{ toolsets: { fs: { tools: [] } } }, 'toolsets."fs" has the name of a built-in toolset'],
    [{ toolsets: { 'mcp:x': { tools: [] } } }, 'are MCP servers'],
    [{ commandTools: { read_file: { description: 'x', argv: ['cat'] } } }, 'commandTools."read_file" has the name of a built-in tool'],
    [{ commandTools: { shell: { description: 'x', argv: ['cat'] } } }, 'config.json: commandTools."shell" has the name of a toolset (built-in); choose another name'],
    [{ commandTools: { review: { description: 'x', argv: ['cat'] } }, toolsets: { review: { tools: ['memo'] } } }, 'config.json: commandTools."review" has the name of a toolset; choose another name'],
    [{ toolsets: { read_file: { tools: ['run_command'] } } }, 'config.json: toolsets."read_file" has the name of a built-in tool; choose another name'],
    [{ toolsets: { fetch_url: { includes: ['web'] } } }, 'toolsets."fetch_url" has the name of a built-in tool'],
  ] satisfies [ToolsConfig, string][])('rejects %j', (config, message) => {
    expect((thrown(() => buildCatalog(config, builtinTools())) as Error).message).toContain(message);
  });

  it.each([
    [{ required: 'who' }, 'config.json: commandTools."x".parameters.required must be array, as JSON Schema says; fix the tool\'s parameters'],
    [{ properties: { who: { type: 'nonsense' } } }, 'config.json: commandTools."x".parameters.properties.who.type must be equal to one of the allowed values'],
    [{ properties: { who: { type: 'string', pattern: '([' } } }, 'config.json: commandTools."x".parameters cannot be compiled as JSON Schema (Invalid regular expression'],
  ])('a command tool schema Ajv refuses (%j) is a config error, in the run and in argo tools', async (extra, message) => {
    const config: ToolsConfig = { commandTools: { x: { description: 'x', argv: ['sh'], parameters: { type: 'object', properties: { who: { type: 'string' } }, ...extra } } } };
    for (const attempt of [loadToolbox(['fs'], config), listAllTools(config)]) {
      const error = await attempt.then(() => null, (failure: unknown) => failure);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as Error).message).toContain(message);
    }
  });

  it('adds user toolsets, command tools and mcp:<server> toolsets', () => {
    const { catalog: built } = buildCatalog(
      { toolsets: { mine: { tools: ['git_log'], includes: ['fs'] } }, commandTools: { git_log: { description: 'log', argv: ['git', 'log'] } }, mcpServers: { files: { command: 'x' } } },
      builtinTools(),
    );
    expect(resolveTools(['mine'], built).tools).toEqual(['git_log', 'list_files', 'read_file', 'search_files']);
    expect(Object.keys(built.toolsets)).toContain('mcp:files');
  });
});

describe('loading a toolbox: graceful degradation', () => {
  it('drops a command tool whose binary is missing, with a reason; the rest stay', async () => {
    const box = await loadToolbox(['mine'], {
      toolsets: { mine: { tools: ['ghost_tool', 'there_tool'], includes: [] } },
      commandTools: {
        ghost_tool: { description: 'x', argv: ['argo-no-such-binary-xyz'] },
        there_tool: { description: 'y', argv: ['sh', '-c', 'true'], requires: ['sh'] },
      },
    });
    expect(box.tools.map((tool) => tool.name)).toEqual(['there_tool']);
    expect(box.unavailable).toEqual([{ name: 'ghost_tool', reason: '"argo-no-such-binary-xyz" is not on PATH' }]);
    await box.close();
  });

  it('an MCP server that does not start is unavailable, not a crash; its tools join in name order when it does', async () => {
    const box = await loadToolbox(['mcp:up', 'mcp:down', 'fs'], { mcpServers: { up: { command: 'a' }, down: { command: 'b' } } }, {
      connectMcp: (name) =>
        name === 'down'
          ? Promise.reject(new Error('MCP server "down" did not start (spawn b ENOENT)'))
          : Promise.resolve({
              tools: [
                { name: 'zeta', description: 'z', parameters: { type: 'object', properties: {} }, sideEffects: false, run: () => Promise.resolve({}) },
                { name: 'read_file', description: 'clash', parameters: { type: 'object', properties: {} }, sideEffects: false, run: () => Promise.resolve({}) },
              ],
              close: () => Promise.resolve(),
            }),
    });
    expect(box.tools.map((tool) => tool.name)).toEqual(['list_files', 'read_file', 'search_files', 'zeta']);
    expect(box.unavailable).toEqual([
      { name: 'mcp:down', reason: 'MCP server "down" did not start (spawn b ENOENT)' },
      { name: 'mcp:up/read_file', reason: '"read_file" is already a tool of the run; left out' },
    ]);
    await box.close();
  });

  it('each MCP tool whose name is not a plain name is left out with a note naming it, quoted and cleaned; the others stay', async () => {
    const odd = (name: string) => ({ name, description: 'x', parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
    const box = await loadToolbox(['mcp:odd'], { mcpServers: { odd: { command: 'a' } } }, {
      connectMcp: () => Promise.resolve({ tools: [odd('ok.tool-1'), odd('a/b'), odd('ünï'), odd('ev\u001b]0;T\u0007il')], close: () => Promise.resolve() }),
    });
    expect(box.tools.map((tool) => tool.name)).toEqual(['ok.tool-1']);
    const reason = 'its name is not 1 to 64 letters, digits, "_", "-" or "."; left out';
    expect(box.unavailable).toEqual([
      { name: 'mcp:odd/"a/b"', reason },
      { name: 'mcp:odd/"ev\\u001b]0;T\\u0007il"', reason },
      { name: 'mcp:odd/"ünï"', reason },
    ]);
    await box.close();
  });

  it.each([
    ['a plain name', 'env', 'mcp:s/env'],
    ['a slash', 'a/b', 'mcp:s/"a/b"'],
    ['a quote', 'a"b', 'mcp:s/"a\\"b"'],
    ['controls', 'x\u001b[2Jy\u009b', 'mcp:s/"x\\u001b[2Jy?"'],
    ['empty', '', 'mcp:s/""'],
    ['too long', 'x'.repeat(70), `mcp:s/"${'x'.repeat(64)}…"`],
  ])("a server's tool left out is named mcp:<server>/<tool>: %s", (_name, tool, shown) => {
    expect(serverToolName('s', tool)).toBe(shown);
  });

  it('a name two servers offer goes to the first; the loser is named by its server, never as the tool the run has', async () => {
    const offered = (name: string, description: string) => ({ name, description, parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
    const box = await loadToolbox(['mcp:a', 'mcp:b', 'fs'], { mcpServers: { a: { command: 'a' }, b: { command: 'b' } } }, {
      connectMcp: (name) => Promise.resolve({ tools: [offered('env', `env of ${name}`), ...(name === 'a' ? [offered('read_file', 'mcp read')] : [])], close: () => Promise.resolve() }),
    });
    const names = box.tools.map((tool) => tool.name);
    expect(names).toEqual(['env', 'list_files', 'read_file', 'search_files']);
    expect(box.tools.find((tool) => tool.name === 'env')?.description).toBe('env of a');
    expect(box.unavailable).toEqual([
      { name: 'mcp:a/read_file', reason: '"read_file" is already a tool of the run; left out' },
      { name: 'mcp:b/env', reason: '"env" is already offered by mcp:a; left out' },
    ]);
    for (const gone of box.unavailable) expect(names).not.toContain(gone.name);
    await box.close();
  });

  it("a tool the server's list could not describe is left out with its reason; its other tools stay", async () => {
    const offered = { name: 'good', description: 'g', parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) };
    const box = await loadToolbox(['mcp:s'], { mcpServers: { s: { command: 'a' } } }, {
      connectMcp: () => Promise.resolve({ tools: [offered], leftOut: [{ name: 'loose', reason: 'its definition does not follow MCP: inputSchema.type: invalid' }], close: () => Promise.resolve() }),
    });
    expect(box.tools.map((tool) => tool.name)).toEqual(['good']);
    expect(box.unavailable).toEqual([{ name: 'mcp:s/loose', reason: 'its definition does not follow MCP: inputSchema.type: invalid; left out' }]);
    await box.close();
  });

  it('a single MCP tool asked by name: only that tool of the server that offers it; a name none offers is refused', async () => {
    const offered = (name: string) => ({ name, description: name, parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
    const closed: string[] = [];
    const options = {
      connectMcp: (name: string) =>
        name === 'down'
          ? Promise.reject(new Error('MCP server "down" did not start (spawn b ENOENT)'))
          : Promise.resolve({ tools: name === 'gh' ? [offered('gh_search'), offered('gh_issue')] : [offered('lint')], close: () => (closed.push(name), Promise.resolve()) }),
    };
    const config = { mcpServers: { gh: { command: 'a' }, linter: { command: 'b' }, down: { command: 'c' } } };
    const box = await loadToolbox(['fs', 'gh_search'], config, options);
    expect(box.tools.map((tool) => tool.name)).toEqual(['gh_search', 'list_files', 'read_file', 'search_files']);
    expect(box.mcpToolsets.get('gh_search')).toBe('mcp:gh');
    expect(box.unavailable).toEqual([]);
    // The server that offered nothing asked for is closed at once; the other when the run ends.
    expect(closed).toEqual(['linter']);
    await box.close();
    expect(closed).toEqual(['linter', 'gh']);
    // A server taken away is not started, even to look for a tool asked by name.
    const started: string[] = [];
    const watching = { connectMcp: (name: string) => (started.push(name), options.connectMcp(name)) };
    const without = await loadToolbox(['gh_search', '-mcp:gh'], config, watching).catch((error: unknown) => error);
    expect(without).toBeInstanceOf(UsageError);
    expect(started).not.toContain('gh');
    const refused = await loadToolbox(['gh_serch'], config, options).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UsageError);
    expect((refused as Error).message).toMatch(/^unknown toolset or tool "gh_serch"; .*; no MCP server \(down, gh, linter\) offers it either; some MCP servers did not start \(MCP server "down" did not start \(spawn b ENOENT\)\)$/);
    expect(refused).not.toBeInstanceOf(ConfigError);
    // Listed by a toolset of config.json, the same name is the config's to fix.
    const listed = await loadToolbox(['mine'], { ...config, toolsets: { mine: { tools: ['gh_serch'] } } }, options).catch((error: unknown) => error);
    expect(listed).toBeInstanceOf(ConfigError);
    expect((listed as Error).message).toMatch(/^toolset "mine" lists unknown tool "gh_serch"; no MCP server \(down, gh, linter\) offers it either; some MCP servers did not start/);
  });

  it("a tool taken away by name is left out of what an MCP server offers; the server's others stay", async () => {
    const offered = (name: string) => ({ name, description: name, parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
    const box = await loadToolbox(['mcp:gh', '-gh_delete'], { mcpServers: { gh: { command: 'a' } } }, {
      connectMcp: () => Promise.resolve({ tools: [offered('gh_search'), offered('gh_delete')], close: () => Promise.resolve() }),
    });
    expect(box.tools.map((tool) => tool.name)).toEqual(['gh_search']);
    expect(box.takenAway).toEqual(['gh_delete']);
    await box.close();
  });

  it.each<[string, string[], string | null]>([
    // the names asked (servers: gh offers gh_search, gh_delete and leaves out gh_bad; down does not start) → the usage error, or null
    ['a misspelt -name beside a server', ['mcp:gh', '-gh_delet'], 'unknown toolset or tool "gh_delet"; toolsets: '],
    ['… and its message names the servers that listed theirs', ['mcp:gh', '-gh_delet'], "; the run's MCP servers (gh) do not offer it either"],
    ['a -name with no server in the run', ['fs', '-zzz'], '; the run starts no MCP server that could offer it'],
    ['a misspelt -mcp:<server>/<tool> of a server that started', ['mcp:gh', '-mcp:gh/gh_delet'], '"-mcp:gh/gh_delet" takes away nothing: MCP server "gh" offers no tool "gh_delet"'],
    ['a -name the server offers', ['mcp:gh', '-gh_delete'], null],
    ['a -name the server listed but left out', ['mcp:gh', '-gh_bad'], null],
    ['a -name of a tool asked by name', ['gh_search', '-gh_delete'], null],
    ['a -name when a server of the run did not start (it might have offered it)', ['mcp:gh', 'mcp:down', '-zzz'], null],
    ['a -mcp:<server>/<tool> of a server not in the run', ['fs', '-mcp:gh/zzz'], null],
  ])('a -name no toolset, tool or started server has is a usage error: %s', async (_case, names, message) => {
    const offered = (name: string) => ({ name, description: name, parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
    const closed: string[] = [];
    const loaded = await loadToolbox(names, { mcpServers: { gh: { command: 'a' }, down: { command: 'd' } } }, {
      connectMcp: (name) =>
        name === 'down'
          ? Promise.reject(new Error('MCP server "down" did not start (spawn d ENOENT)'))
          : Promise.resolve({ tools: [offered('gh_search'), offered('gh_delete')], leftOut: [{ name: 'gh_bad', reason: 'odd' }], close: () => (closed.push(name), Promise.resolve()) }),
    }).catch((error: unknown) => error);
    if (message === null) {
      expect(loaded).not.toBeInstanceOf(Error);
      await (loaded as Awaited<ReturnType<typeof loadToolbox>>).close();
      return;
    }
    expect(loaded).toBeInstanceOf(UsageError);
    expect(loaded).not.toBeInstanceOf(ConfigError);
    expect((loaded as Error).message).toContain(message);
    // Refused, the run closes the servers it started.
    if (names.includes('mcp:gh')) expect(closed).toEqual(['gh']);
  });

  it("a tool named as a toolset, none or -x is taken away by its server's name, -mcp:<server>/<tool>; another server's tool of that name stays", async () => {
    const offered = (name: string) => ({ name, description: name, parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
    const box = await loadToolbox(['mcp:gh', 'mcp:other', '-mcp:gh/none', '-mcp:gh/fs', '-mcp:gh/-dash'], { mcpServers: { gh: { command: 'a' }, other: { command: 'b' } } }, {
      connectMcp: (name) => Promise.resolve({ tools: (name === 'gh' ? ['none', 'fs', '-dash', 'search'] : ['-dash']).map(offered), close: () => Promise.resolve() }),
    });
    expect(box.tools.map((tool) => tool.name)).toEqual(['-dash', 'search']);
    expect(box.mcpToolsets.get('-dash')).toBe('mcp:other');
    expect(box.takenAway).toEqual(['mcp:gh/-dash', 'mcp:gh/fs', 'mcp:gh/none']);
    await box.close();
  });

  it.each<[string, string[], string[], string[]]>([
    // the names asked → the tools of the run, what was taken away
    ['a tool asked by name and taken away by name', ['add', 'shout', '-add'], ['shout'], []],
    ['a tool asked by name and taken away by its server', ['add', 'shout', '-mcp:srv/add'], ['shout'], ['mcp:srv/add']],
    ['the same with the server asked whole', ['mcp:srv', 'add', '-mcp:srv/add'], ['shout'], ['mcp:srv/add']],
    ["another server's tool of that name stays", ['add', '-mcp:srv/add', 'shout'], ['add', 'shout'], ['mcp:srv/add']],
  ])("%s: the run goes on without it", async (_case, names, tools, takenAway) => {
    const offered = (name: string) => ({ name, description: name, parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
    const servers = _case.startsWith('another') ? { srv: { command: 'a' }, other: { command: 'b' } } : { srv: { command: 'a' } };
    const box = await loadToolbox(names, { mcpServers: servers }, {
      connectMcp: (name) => Promise.resolve({ tools: (name === 'srv' ? ['add', 'shout'] : ['add']).map(offered), close: () => Promise.resolve() }),
    });
    expect(box.tools.map((tool) => tool.name)).toEqual(tools);
    expect(box.takenAway).toEqual(takenAway);
    if (tools.includes('add')) expect(box.mcpToolsets.get('add')).toBe('mcp:other');
    await box.close();
  });

  it.each<[string, string[], { toolset: string; tools: string[] }[]]>([
    // the names asked → each toolset of the expansion with its tools: an MCP server's as it listed them, sorted
    ['a server and a built-in toolset', ['mcp:b', 'fs'], [{ toolset: 'mcp:b', tools: ['aa', 'bad', 'zz'] }, { toolset: 'fs', tools: ['list_files', 'read_file', 'search_files'] }]],
    ['a tool taken away: still listed, as a built-in toolset lists its own', ['mcp:b', '-zz'], [{ toolset: 'mcp:b', tools: ['aa', 'bad', 'zz'] }]],
    ['a server that did not start: none', ['mcp:down', 'memo'], [{ toolset: 'mcp:down', tools: [] }, { toolset: 'memo', tools: ['memo'] }]],
    ['a server\'s tool asked by name: no toolset of it', ['aa'], []],
    ['a name the server listed twice: once', ['mcp:twice'], [{ toolset: 'mcp:twice', tools: ['aa', 'bad', 'zz'] }]],
  ])("the expansion (--explain) holds what each MCP server listed once it ran: %s", async (_case, names, expanded) => {
    const offered = (name: string) => ({ name, description: name, parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
    const twice = [{ name: 'zz', reason: 'listed twice by the server' }];
    const box = await loadToolbox(names, { mcpServers: { b: { command: 'a' }, down: { command: 'd' }, twice: { command: 't' } } }, {
      connectMcp: (name) =>
        name === 'down'
          ? Promise.reject(new Error('MCP server "down" did not start (spawn d ENOENT)'))
          : Promise.resolve({ tools: [offered('zz'), offered('aa')], leftOut: [{ name: 'bad', reason: 'its inputSchema does not follow MCP' }, ...(name === 'twice' ? twice : [])], close: () => Promise.resolve() }),
    });
    expect(box.expanded).toEqual(expanded);
    await box.close();
  });

  it('a signal aborted already: no server is started, and the load rejects as an interrupt (AbortError)', async () => {
    const started: string[] = [];
    const aborted = new AbortController();
    aborted.abort('stop');
    const loaded = await loadToolbox(['mcp:gh', 'fs'], { mcpServers: { gh: { command: 'a' } } }, {
      signal: aborted.signal,
      connectMcp: (name) => (started.push(name), Promise.reject(new Error('never'))),
    }).catch((error: unknown) => error);
    expect(loaded).toBeInstanceOf(ToolboxAborted);
    expect(loaded).toMatchObject({ name: 'AbortError', cause: 'stop' });
    expect(started).toEqual([]);
  });

  it('a signal aborted while a server starts: the load rejects at once as an interrupt; what did start is closed', async () => {
    const cut = new AbortController();
    const closed: string[] = [];
    const offered = { name: 'quick_tool', description: 'q', parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) };
    const loading = loadToolbox(['mcp:hang', 'mcp:quick'], { mcpServers: { hang: { command: 'a' }, quick: { command: 'b' } } }, {
      signal: cut.signal,
      connectMcp: (name, _config, signal) =>
        name === 'quick'
          ? Promise.resolve({ tools: [offered], close: () => (closed.push(name), Promise.resolve()) })
          : new Promise((_resolve, reject) => {
              signal?.addEventListener('abort', () => reject(Object.assign(new Error('cut'), { name: 'AbortError' })), { once: true });
              // Cut once the server is starting.
              cut.abort('SIGTERM');
            }),
    }).catch((error: unknown) => error);
    const loaded = await loading;
    expect(loaded).toBeInstanceOf(ToolboxAborted);
    expect(loaded).toMatchObject({ cause: 'SIGTERM' });
    expect(closed).toEqual(['quick']);
  });

  it('per-tool budgets and timeouts from config', async () => {
    const box = await loadToolbox(['read_file'], { toolBudgets: { read_file: 123 }, toolTimeouts: { read_file: 456 } });
    expect(box.tools[0]).toMatchObject({ name: 'read_file', resultBudget: 123, timeoutMs: 456 });
  });

  // config.json is parsed JSON: "__proto__" is an own key there, as any other.
  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'])('a command tool and a toolset named %s are config entries, never Object.prototype members', async (name) => {
    const config = JSON.parse(`{"commandTools": {"${name}": {"description": "x", "argv": ["sh"], "timeoutMs": 1234}}, "toolsets": {"${name}_set": {"tools": ["${name}"]}}, "toolBudgets": {}, "toolTimeouts": {}}`) as ToolsConfig;
    const box = await loadToolbox([`${name}_set`], config);
    expect(box.tools).toEqual([expect.objectContaining({ name, timeoutMs: 1234 })]);
    expect(box.tools[0]).not.toHaveProperty('resultBudget');
    await box.close();
    const sets = JSON.parse(`{"toolsets": {"${name}": {"tools": ["memo"]}}}`) as ToolsConfig;
    expect(resolveTools([name], buildCatalog(sets, builtinTools()).catalog).tools).toEqual(['memo']);
  });
});

describe('an MCP server starts in the run\'s root, as command tools run there', () => {
  it.each([
    ['no cwd: the root', undefined, '/work/project'],
    ['a relative cwd: from the root', 'servers/db', '/work/project/servers/db'],
    ['"." is the root', '.', '/work/project'],
    ['a cwd that climbs out: resolved, then checked when the server starts', '../other', '/work/other'],
    ['an absolute cwd as it is', '/srv/mcp', '/srv/mcp'],
  ])('%s', (_name, cwd, expected) => {
    expect(startedInRoot({ command: 'node', args: ['./server.mjs'], ...(cwd !== undefined ? { cwd } : {}) }, '/work/project')).toEqual({ command: 'node', args: ['./server.mjs'], cwd: expected });
  });

  it('loadToolbox hands each server its cwd from --root, not from where argo was started', async () => {
    const started: (string | undefined)[] = [];
    const box = await loadToolbox(['mcp:a', 'mcp:b'], { mcpServers: { a: { command: 'x' }, b: { command: 'y', cwd: 'sub' } } }, {
      root: '/work/project',
      connectMcp: (_name, config) => {
        started.push(config.cwd);
        return Promise.resolve({ tools: [], close: () => Promise.resolve() });
      },
    });
    expect(started).toEqual(['/work/project', '/work/project/sub']);
    await box.close();
  });
});

describe('argo tools: the listing', () => {
  const config: ToolsConfig = {
    toolsets: { mine: { tools: ['ghost_tool'], includes: ['fs'] }, loop_a: { tools: [], includes: ['loop_b'] }, loop_b: { tools: [], includes: ['loop_a'] }, typo: { tools: ['gerp'], includes: [] } },
    commandTools: { ghost_tool: { description: 'needs a binary', argv: ['argo-no-such-binary-xyz'] } },
    mcpServers: { up: { command: 'a' }, down: { command: 'b' }, also: { command: 'c' } },
  };
  const offered = (name: string, description: string, sideEffects = false) => ({ name, description, parameters: { type: 'object' as const, properties: {} }, sideEffects, run: () => Promise.resolve({}) });
  const connectMcp = (name: string) =>
    name === 'down'
      ? Promise.reject(new Error('MCP server "down" did not start (spawn b ENOENT)'))
      : Promise.resolve({ tools: [offered('zeta', `zeta of ${name}`), ...(name === 'up' ? [offered('read_file', 'mcp read', true)] : [])], close: () => Promise.resolve() });

  it('describes unavailable tools as they would be, names each MCP tool\'s toolset, and lists around a broken toolset', async () => {
    const listing = await listAllTools(config, { connectMcp });
    const row = (name: string) => listing.tools.find((tool) => tool.name === name);
    expect(row('ghost_tool')).toEqual({ name: 'ghost_tool', description: 'needs a binary', side_effects: true, asks: true, available: false, reason: '"argo-no-such-binary-xyz" is not on PATH', toolset: 'mine' });
    expect(row('memo')).toMatchObject({ side_effects: true, asks: false });
    // Servers start in name order: "also" offers zeta first.
    expect(row('zeta')).toMatchObject({ available: true, toolset: 'mcp:also', description: 'zeta of also' });
    expect(row('mcp:down')).toMatchObject({ available: false, toolset: 'mcp:down', reason: 'MCP server "down" did not start (spawn b ENOENT)' });
    expect(row('read_file')).toMatchObject({ available: true, toolset: 'fs' });
    expect(row('mcp:up/read_file')).toEqual({ name: 'mcp:up/read_file', description: 'mcp read', side_effects: true, asks: true, available: false, reason: '"read_file" is already a tool of the run; left out', toolset: 'mcp:up' });
    expect(row('mcp:up/zeta')).toMatchObject({ description: 'zeta of up', available: false, reason: '"zeta" is already offered by mcp:also; left out', toolset: 'mcp:up' });
    const problems = Object.fromEntries(listing.toolsets.map((set) => [set.name, set.problem]));
    expect(problems.typo).toBe('toolset "typo" lists unknown tool "gerp"; no MCP server (also, down, up) offers it either');
    expect(row('gerp')).toMatchObject({ available: false, reason: 'no toolset, built-in tool or MCP server (also, down, up) has it' });
    // An MCP server's toolset holds what it listed; one that did not start, nothing.
    const tools = Object.fromEntries(listing.toolsets.map((set) => [set.name, set.tools]));
    expect(tools).toMatchObject({ 'mcp:up': ['read_file', 'zeta'], 'mcp:also': ['zeta'], 'mcp:down': [] });
    expect(problems).toMatchObject({ fs: null, mine: null, 'mcp:up': null, loop_a: 'toolset cycle: loop_a → loop_b → loop_a; remove one of these includes in config.json', loop_b: expect.stringMatching(/^toolset cycle: loop_b → loop_a → loop_b/) as unknown });
  });
});
