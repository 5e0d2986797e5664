import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_RESULT_BUDGET } from '../../src/agent/compaction.js';
import { DEFAULT_TOOL_TIMEOUT_MS, MAX_ALL_FAILURE_ROUNDS, MAX_REASKS } from '../../src/agent/loop.js';
import type { Io } from '../../src/cli/io.js';
import { registerServe } from '../../src/cli/serve.js';
import { loadSettings, parseKeepAlive, parseThink } from '../../src/config/settings.js';
import type { ReplaySpec } from '../../src/replay/types.js';
import type { FlagOverrides } from '../../src/config/settings.js';
import { UsageError } from '../../src/errors.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import { thrown } from '../support/thrown.js';

const DOCS = resolve(import.meta.dirname, '../../docs');

function home(config?: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'argo-settings-'));
  if (config !== undefined) writeFileSync(join(dir, 'config.json'), typeof config === 'string' ? config : JSON.stringify(config));
  return dir;
}

function load(config: unknown, flags: FlagOverrides = {}, env: Record<string, string> = {}) {
  return loadSettings({ home: home(config), ...flags }, env);
}

describe('loadSettings precedence: flags > environment > config.json > defaults', () => {
  it('uses the documented defaults with no config', () => {
    const s = load(undefined);
    expect(s).toMatchObject({
      model: 'argo',
      modelFromFlag: false,
      session: 'default',
      host: 'http://127.0.0.1:11434',
      api: 'chat',
      persona: 'neutral',
      verbosity: 'auto',
      mode: null,
      options: {},
      tokenBuffer: { flushChunks: 10, flushMs: 50 },
      retries: { attempts: 3, initialDelayMs: 250 },
      timeouts: { idleMs: 120_000 },
    });
    expect(s.replay).toEqual(DEFAULT_REPLAY_POLICY);
    expect(s.keepAlive).toBeUndefined();
  });

  // Each default as the code has it, and as the page a user reads it on says it.
  const defaults = load(undefined);
  const serveCommand = (): Command => {
    const program = new Command();
    registerServe(program, {} as Io, () => undefined);
    const serve = program.commands.find((command) => command.name() === 'serve');
    if (serve === undefined) throw new Error('no serve command');
    return serve;
  };
  const flagDefault = (flag: string): unknown => serveCommand().options.find((option) => option.long === flag)?.defaultValue;
  it.each([
    ['agent.maxIterations', 10, 'configuration.md', '| `maxIterations` | whole ≥ 1 | most tool rounds of an agent run (default 10) |', defaults.agent.maxIterations],
    ['agent.maxIterations', 10, 'agent.md', 'most tool rounds before stopping (default 10, config `"maxIterations"`)', defaults.agent.maxIterations],
    ['tool result budget', 4000, 'agent.md', '(4,000 characters by default; `toolBudgets` per tool)', DEFAULT_RESULT_BUDGET],
    ['tool timeout (ms)', 30_000, 'agent.md', 'A call is abandoned after 30 s', DEFAULT_TOOL_TIMEOUT_MS],
    ['re-asks of an invalid response', 3, 'agent.md', 'still invalid after 3 re-asks', MAX_REASKS],
    ['all-failure rounds before the loop stops', 3, 'agent.md', '*all-failure round*; 3 of them stop the loop', MAX_ALL_FAILURE_ROUNDS],
    ['serve.maxBodyBytes', 10 * 1024 * 1024, 'serve.md', '| `maxBodyBytes` | 10485760 |', defaults.serve.maxBodyBytes],
    ['serve.maxBodyBytes', 10 * 1024 * 1024, 'configuration.md', 'larger request bodies get 413 (default 10 MiB)', defaults.serve.maxBodyBytes],
    ['serve.shutdownGraceMs', 10_000, 'serve.md', '| `shutdownGraceMs` | 10000 |', defaults.serve.shutdownGraceMs],
    ['serve.shutdownGraceMs', 10_000, 'configuration.md', 'running answers may finish this long (default 10000)', defaults.serve.shutdownGraceMs],
    ['serve.jobRetentionDays', 30, 'serve.md', '| `jobRetentionDays` | 30 |', defaults.serve.jobRetentionDays],
    ['serve.jobRetentionDays', 30, 'configuration.md', 'removed at start (default 30)', defaults.serve.jobRetentionDays],
    ['serve.maxConnections', 512, 'serve.md', '| `maxConnections` | 512 |', defaults.serve.maxConnections],
    ['serve.maxConnections', 512, 'configuration.md', '(default 512, Ollama\'s own queue length)', defaults.serve.maxConnections],
    ['serve.apiKey', null, 'serve.md', '| `apiKey` | none |', defaults.serve.apiKey],
    ['timeouts.lockWaitMs', 30_000, 'configuration.md', '| `timeouts.lockWaitMs` | whole, 0 to 3600000 (default 30000) |', defaults.timeouts.lockWaitMs],
    ['argo serve --port', 10007, 'serve.md', '| `--port` | `10007` |', flagDefault('--port')],
    ['argo serve --port', 10007, 'cli.md', '| `--port <n>` | port; `0` picks a free one | `10007` |', flagDefault('--port')],
    ['argo serve --host', '127.0.0.1', 'serve.md', '| `--host` | `127.0.0.1` |', flagDefault('--host')],
    ['argo serve --allow-side-effects', false, 'serve.md', '| `--allow-side-effects` | off |', flagDefault('--allow-side-effects')],
  ])('%s is %j, as docs/%s says', (_name, expected, page, words, actual) => {
    expect(actual).toEqual(expected);
    expect(readFileSync(join(DOCS, page), 'utf8')).toContain(words);
  });

  it.each([
    ['model', { model: 'cfg' }, {}, { ARGO_MODEL: 'env' }, 'env'],
    ['model', { model: 'cfg' }, { model: 'flag' }, { ARGO_MODEL: 'env' }, 'flag'],
    ['model', { model: 'cfg' }, {}, {}, 'cfg'],
    ['session', { session: 'cfg' }, {}, { ARGO_SESSION: 'env' }, 'env'],
    ['session', { session: 'cfg' }, { session: 'flag' }, { ARGO_SESSION: 'env' }, 'flag'],
    ['host', { host: ':1111' }, {}, { OLLAMA_HOST: ':2222' }, 'http://127.0.0.1:2222'],
    ['host', { host: ':1111' }, { host: ':3333' }, { OLLAMA_HOST: ':2222' }, 'http://127.0.0.1:3333'],
    ['host', { host: ':1111' }, {}, {}, 'http://127.0.0.1:1111'],
  ] as const)('%s: config %j, flags %j, env %j → %s', (key, config, flags, env, expected) => {
    expect(load(config, flags, env)[key]).toBe(expected);
  });

  it('treats an empty environment variable as unset', () => {
    expect(load({ model: 'cfg' }, {}, { ARGO_MODEL: '' }).model).toBe('cfg');
  });

  // Empty or only blanks: unset, so config.json's value (else the default) applies.
  const fromConfig = { model: 'cfg', session: 'cfg', host: ':1111', defaultReplay: 'last:2' };
  it.each([
    ['ARGO_MODEL', ' ', 'model', 'cfg'],
    ['ARGO_MODEL', '\t\n', 'model', 'cfg'],
    ['ARGO_SESSION', '  ', 'session', 'cfg'],
    ['ARGO_REPLAY', ' ', 'defaultReplay', { kind: 'last', count: 2 }],
    ['OLLAMA_HOST', ' ', 'host', 'http://127.0.0.1:1111'],
    // OLLAMA_HOST as Ollama reads it (envconfig.Var): blanks, then quotes, trimmed from both ends.
    ['OLLAMA_HOST', '""', 'host', 'http://127.0.0.1:1111'],
    ['OLLAMA_HOST', '"127.0.0.1:2222"', 'host', 'http://127.0.0.1:2222'],
    ['OLLAMA_HOST', "'127.0.0.1:2222'", 'host', 'http://127.0.0.1:2222'],
    ['OLLAMA_HOST', ' "http://h:2222/x/" ', 'host', 'http://h:2222/x'],
    ['OLLAMA_HOST', '"\' :2222 \'"', 'host', 'http://127.0.0.1:2222'],
    ['OLLAMA_HOST', '"h:2222', 'host', 'http://h:2222'],
  ] as const)('%s=%j → %s %j', (name, value, key, expected) => {
    expect(load(fromConfig, {}, { [name]: value })[key]).toEqual(expected);
  });

  it('merges replay policy overrides deeply; arrays replace', () => {
    const s = load({ replay: { budget: 3000, filters: { session: ['instruction'] }, confidence: { weak: 'Say you are unsure.' } } });
    expect(s.replay.budget).toBe(3000);
    expect(s.replay.filters).toEqual({ ...DEFAULT_REPLAY_POLICY.filters, session: ['instruction'] });
    expect(s.replay.confidence.weak).toBe('Say you are unsure.');
    expect(s.replay.confidence.strong).toBe(DEFAULT_REPLAY_POLICY.confidence.strong);
  });

  it('--budget wins over config', () => {
    expect(load({ replay: { budget: 3000 } }, { budget: 900 }).replay.budget).toBe(900);
  });

  it('adds personas and modes from config next to the built-in ones', () => {
    const s = load({ personas: { pirate: 'Talk like a pirate.' }, modes: { sql: 'You write SQL.' } });
    expect(s.style.personas.pirate).toBe('Talk like a pirate.');
    expect(s.style.personas.neutral).toBe('Use a neutral, professional tone.');
    expect(s.style.modes.sql).toBe('You write SQL.');
  });

  it('passes model options and keep_alive', () => {
    const s = load({ options: { temperature: 0.2, seed: 7, num_ctx: 4096, keep_alive: '10m' } }, { temperature: 0.5 });
    expect(s.options).toEqual({ temperature: 0.5, seed: 7, num_ctx: 4096 });
    expect(s.keepAlive).toBe('10m');
  });
});

describe('config.json errors name the key', () => {
  it.each([
    [{ modle: 'x' }, /unknown key "modle"/],
    [{ replay: { budjet: 1 } }, /unknown key "replay.budjet"/],
    [{ replay: { budget: 'big' } }, /"replay.budget" must be a whole number/],
    [{ replay: { budget: 10 } }, /"replay.budget" must be a whole number of characters, at least 200/],
    [{ replay: { filters: { session: ['questions'] } } }, /"replay.filters.session".*unknown entry type "questions"/],
    [{ replay: { classify: { meta: 'repeat' } } }, /"replay.classify.meta" must be an array of strings/],
    // A single-word list's entry of several words (or none) could never match: refused, not ignored.
    [{ replay: { classify: { politePrefixes: ['could you'], instructionVerbs: ['explain'] } } }, /config\.json: "replay\.classify\.politePrefixes" entry "could you" is 2 words; this list takes single words, skipped one at a time: list "could" and "you" apart \(phrases go in "replay\.classify\.meta", "replay\.classify\.correction" or "replay\.clarification"\)$/],
    [{ replay: { classify: { questionOpeners: ['what', 'can you'] } } }, /config\.json: "replay\.classify\.questionOpeners" entry "can you" is 2 words; this list takes single words, read against a prompt's first word: list "can" /],
    [{ replay: { classify: { instructionVerbs: ['write', ''] } } }, /config\.json: "replay\.classify\.instructionVerbs" entry "" has no word in it \(no letter or digit\): remove it$/],
    [{ api: 'completions' }, /"api" must be chat or generate/],
    [{ verbosity: 'loud' }, /"verbosity" must be auto, short or long/],
    [{ session: 'has space' }, /invalid session name "has space"/],
    [{ retries: { attempts: 0 } }, /"retries.attempts" must be at least 1/],
    [{ timeouts: { idleMs: 5 } }, /"timeouts.idleMs" must be at least 100/],
    // Under 100, what no version took: refused with this version's floor.
    [{ toolBudgets: { read_file: 99 } }, /"toolBudgets.read_file" must be at least 100 \(100 to 499 count as 500\), got 99$/],
    // A Node timer past 2^31-1 ms fires at once: every call would time out before it started.
    [{ toolTimeouts: { read_file: 99_999_999_999 } }, /"toolTimeouts.read_file" must be at most 2147483647, got 99999999999$/],
    [{ commandTools: { lint: { description: 'd', argv: ['x'], timeoutMs: 0 } } }, /"commandTools.lint.timeoutMs" must be at least 1, got 0$/],
    [{ serve: { shutdownGraceMs: 3_000_000_000 } }, /"serve.shutdownGraceMs" must be at most 2147483647/],
    [{ serve: { maxConnections: 0 } }, /"serve.maxConnections" must be at least 1, got 0$/],
    [{ serve: { maxConnections: 'many' } }, /"serve.maxConnections" must be a whole number/],
    [{ options: { num_ctx: -5 } }, /"options.num_ctx" must be at least 1, got -5$/],
    // Past 2^53 a number is too large, not a fraction: the limit is said, the key's own where it has one.
    [{ options: { seed: 1e300 } }, /"options.seed" must be at most 9007199254740991 \(2\^53 - 1, the largest whole number kept exact\), got 1e\+300$/],
    [{ options: { seed: -1e23 } }, /"options.seed" must be at least -9007199254740991, got -1e\+23$/],
    [{ replay: { budget: 1e23 } }, /"replay.budget" must be at most 9007199254740991 \(2\^53 - 1, .*\), got 1e\+23$/],
    [{ timeouts: { idleMs: 1e308 } }, /"timeouts.idleMs" must be at most 300000, got 1e\+308$/],
    [{ commandTools: { lint: { description: 'd', argv: ['x'], timeoutMs: 1e20 } } }, /"commandTools.lint.timeoutMs" must be at most 2147483647, got 100000000000000000000$/],
    [{ options: { keep_alive: 1e23 } }, /"options.keep_alive" must be at most 9007199254740991 .*, got 1e\+23$/],
    [{ options: { keep_alive: 1.5 } }, /"options.keep_alive" must be a string or a whole number, got 1.5$/],
    // JSON.parse reads 1e400 as Infinity.
    ['{"maxIterations": 1e400}', /"maxIterations" must be at most 9007199254740991 .*, got Infinity$/],
    [{ maxIterations: 0 }, /"maxIterations" must be at least 1, got 0$/],
    [{ stream: { flushChunks: 2.5 } }, /"stream.flushChunks" must be a whole number, got 2.5$/],
    [{ options: { keep_alive: 'forever' } }, /"options.keep_alive" must be seconds or a duration/],
    [{ personas: { x: 3 } }, /"personas.x" must be a string/],
    [{ persona: 'pirate' }, /\/config\.json: "persona": unknown persona "pirate" \(known: critic, expert, friendly, neutral, teacher\); add it under "personas" in config\.json$/],
    [{ mode: 'poetry' }, /\/config\.json: "mode": unknown mode "poetry" \(known: code, review, shell, writing\); add it under "modes" in config\.json$/],
    [{ mode: 5 }, /\/config\.json: "mode" must be a string or null, got 5$/],
    [{ commandTools: { lint: { description: 'd', argv: ['x'], sideEffects: 'yes' } } }, /\/config\.json: "commandTools\.lint\.sideEffects" must be true or false, got "yes"$/],
    [{ commandTools: { lint: { description: 'd', argv: ['x'], parameters: [] } } }, /\/config\.json: "commandTools\.lint\.parameters" must be an object, got an array$/],
    [{ mcpServers: { gh: { type: 'http', command: 'x' } } }, /"mcpServers\.gh\.type" is "http": only stdio servers \(a command Argo starts\) are supported$/],
    [{ mcpServers: { gh: { type: 'sse', command: 'x' } } }, /"mcpServers\.gh\.type" is "sse": only stdio servers/],
    // A remote server's config as other tools write it: said as such, not as an unknown key.
    [{ mcpServers: { gh: { type: 'http', url: 'https://mcp.example.com/mcp' } } }, /"mcpServers\.gh\.type" is "http": only stdio servers/],
    [{ mcpServers: { gh: { url: 'https://mcp.example.com/mcp' } } }, /"mcpServers\.gh\.url" is a remote server's: only stdio servers \(a command Argo starts\) are supported; give "command" and "args" instead$/],
    [{ mcpServers: { gh: { command: 'x', headers: { Authorization: 'Bearer t' } } } }, /"mcpServers\.gh\.headers" is a remote server's: only stdio servers/],
    [{ mcpServers: { gh: { command: '   ' } } }, /"mcpServers\.gh\.command" is blank: name the program that starts the server$/],
    [{ mcpServers: { gh: { command: ' node' } } }, /"mcpServers\.gh\.command" " node" starts or ends with a blank: remove it/],
    [{ mcpServers: { gh: { type: 1, command: 'x' } } }, /"mcpServers\.gh\.type" must be a string/],
    [{ mcpServers: { gh: { command: 'x', startTimeoutMs: 0 } } }, /"mcpServers\.gh\.startTimeoutMs" must be at least 1, got 0$/],
    [{ mcpServers: { gh: { command: 'x', startTimeoutMs: '30s' } } }, /"mcpServers\.gh\.startTimeoutMs" must be a whole number/],
    // Relative to the tools root: an empty one would quietly be the root itself.
    [{ mcpServers: { gh: { command: 'x', cwd: '' } } }, /config\.json: "mcpServers\.gh\.cwd" is empty: name the folder the server starts in, or leave "cwd" out for the tools root$/],
    [{ mcpServers: { gh: { command: 'x', cwd: ' ' } } }, /"mcpServers\.gh\.cwd" is blank: /],
    [{ mcpServers: { gh: { command: 'x', cwd: 'srv ' } } }, /config\.json: "mcpServers\.gh\.cwd" "srv " starts or ends with a blank: remove it \(check the quotes around the value\)$/],
    ['{not json', /is not valid JSON/],
    [[], /config\.json: the top level must be an object, got an array/],
    // Found by test/config/settings.property.test.ts: what the file says is quoted, so the error stays one line.
    ['\r}', /is not valid JSON at line 1, column 2: expected a value, found "}"; fix or remove it$/],
    [{ replay: { filters: { continuation: ['question', '\r\n'] } } }, /"replay.filters.continuation" unknown entry type "\\r\\n" \(use /],
    [{ 'mo\ndel': 'x' }, /unknown key "mo\\ndel" \(known keys: /],
    [{ personas: { 'a\nb': 'x' }, persona: 'pirate' }, /unknown persona "pirate" \(known: "a\\nb", critic, expert, friendly, neutral, teacher\)/],
    [{ toolBudgets: { 'a\nb': 1 } }, /"toolBudgets.a\\nb" must be at least 100 \(100 to 499 count as 500\), got 1$/],
    // A long value is cut before a surrogate pair, not through it.
    [{ stream: { flushMs: `${'x'.repeat(39)}😀y` } }, new RegExp(`"stream.flushMs" must be a whole number, got "${'x'.repeat(39)}…"$`)],
  ])('%j', (config, message) => {
    expect(() => load(config)).toThrow(UsageError);
    expect(() => load(config)).toThrow(message);
  });

  const tool = { description: 'd', argv: ['x'] };
  it.each([
    [{ toolsets: { none: {} } }, /config\.json: toolsets\."none": "none" means no tools in --tools and "tools"; choose another name$/],
    [{ commandTools: { none: tool } }, /config\.json: commandTools\."none": "none" means no tools/],
    [{ toolsets: { '': {} } }, /config\.json: toolsets\."" has an empty name; name it/],
    [{ toolsets: { '-x': {} } }, /config\.json: toolsets\."-x": a name is 1 to 64 letters, digits, ".", "_" or "-", not starting with "-" or "." \(a leading "-" takes a name away in --tools\); rename it$/],
    [{ toolsets: { 'a,b': {} } }, /toolsets\."a,b": a name is .* \("," separates names in --tools\); rename it$/],
    [{ toolsets: { 'mcp:x': {} } }, /toolsets\."mcp:x": names starting with "mcp:" are MCP servers/],
    [{ commandTools: { 'git log': tool } }, /commandTools\."git log": a name is .* \(it is typed in --tools and sent to the model\)/],
    [{ commandTools: { 'a\u001b[31mb': tool } }, /commandTools\."a\\u001b\[31mb": a name is/],
    [{ commandTools: { 'a\nb': tool } }, /commandTools\."a\\nb": a name is/],
    [{ commandTools: { 'a\u009bb': tool } }, /commandTools\."a\?b": a name is/],
    [{ commandTools: { 'a.b': tool } }, /commandTools\."a\.b": a name is/],
    [{ commandTools: { ['x'.repeat(65)]: tool } }, /commandTools\."x{64}…": a name is/],
    [{ mcpServers: { 'git hub': { command: 'x' } } }, /mcpServers\."git hub": a name is/],
    [{ mcpServers: { '-gh': { command: 'x' } } }, /mcpServers\."-gh": a name is/],
    [{ mcpServers: { '.gh': { command: 'x' } } }, /mcpServers\."\.gh": a name is 1 to 64 letters, digits, ".", "_" or "-", not starting with "-" or "." \(it is typed in --tools\)/],
    [{ commandTools: { t: { description: 'd', argv: [''] } } }, /config\.json: "commandTools\.t\.argv" starts with an empty string; its first element names the command, e\.g\. \["git", "log"\]$/],
    [{ commandTools: { t: { description: 'd', argv: ['{cmd}', 'x'] } } }, /config\.json: "commandTools\.t\.argv" has a placeholder in its first element, which names the command; write the program itself there/],
    [{ commandTools: { t: { description: 'd', argv: ['/usr/bin/{cmd}'] } } }, /"commandTools\.t\.argv" has a placeholder in its first element/],
    [{ commandTools: { t: { description: 'd', argv: ['git'], requires: ['git', ''] } } }, /config\.json: "commandTools\.t\.requires" has an empty string; list binary names or paths/],
  ])('a name a toolset, command tool or MCP server cannot have: %j', (config, message) => {
    expect(() => load(config)).toThrow(UsageError);
    expect(() => load(config)).toThrow(message);
  });

  it.each(['git_log', 'Git-Log2', '_x', 'x'.repeat(64), 'constructor', '__proto__'])('%s is a name config.json may give', (name) => {
    const config = JSON.parse(`{"toolsets": {"${name}": {}}, "commandTools": {"t${name.slice(1)}": {"description": "d", "argv": ["x"]}}, "mcpServers": {"${name}": {"command": "x"}}}`) as unknown;
    expect(Object.keys(load(config).agent.toolsets)).toEqual([name]);
  });

  it('a "." is fine in a toolset or MCP server name, which is never sent to the model', () => {
    const settings = load({ toolsets: { 'team.review': { tools: ['read_file'] } }, mcpServers: { 'github.com': { command: 'x' } } });
    expect([Object.keys(settings.agent.toolsets), Object.keys(settings.agent.mcpServers)]).toEqual([['team.review'], ['github.com']]);
  });

  // Versions before the floor of 500 took 100: such a config.json still works, at 500.
  it.each([
    [{ read_file: 100 }, { read_file: 500 }, ['read_file']],
    [{ read_file: 499, fetch_url: 500 }, { read_file: 500, fetch_url: 500 }, ['read_file']],
    [{ fetch_url: 20000 }, { fetch_url: 20000 }, []],
    [JSON.parse('{"__proto__": 200}') as Record<string, number>, JSON.parse('{"__proto__": 500}') as Record<string, number>, ['__proto__']],
  ])('toolBudgets %j are %j in force, raised: %j', (budgets, inForce, raised) => {
    const { agent } = load({ toolBudgets: budgets });
    expect([agent.toolBudgets, agent.raisedBudgets]).toEqual([inForce, raised]);
    expect(Object.getPrototypeOf(agent.toolBudgets)).toBe(Object.prototype);
  });

  // Versions before the floor of 21 per protected turn took 20: such a config.json still works, at the floor.
  it.each<[Record<string, number>, number]>([
    [{ protectedTurns: 10, budget: 200 }, 210],
    [{ protectedTurns: 12, budget: 245 }, 252],
    [{ protectedTurns: 10, budget: 5500 }, 5500],
    [{ protectedTurns: 2, budget: 200 }, 200],
  ])('replay %j has the budget %i in force', (replay, budget) => {
    expect(load({ replay }).replay.budget).toBe(budget);
  });

  it.each<[Record<string, number>, FlagOverrides, RegExp]>([
    // Under 20 per protected turn, what no version took: refused with this version's floor.
    [{ protectedTurns: 11, budget: 200 }, {}, /"replay.protectedTurns" 11 protected turns need a budget of at least 231 \(budget is 200\)$/],
    // A budget given now is held to the floor now, and the flag is named, not config.json.
    [{ protectedTurns: 10 }, { budget: 200 }, /^--budget 200 is too small: 10 protected turns need a budget of at least 210 \(budget is 200\); give --budget 210 or more$/],
    [{ protectedTurns: 10, budget: 200 }, { budget: 209 }, /^--budget 209 is too small: 10 protected turns need a budget of at least 210 /],
    // A config.json wrong on its own is named whatever the flag says.
    [{ protectedTurns: -1 }, { budget: 5000 }, /"replay.protectedTurns" must be a whole number, 0 or more$/],
  ])('replay %j with flags %j is refused', (replay, flags, message) => {
    expect(() => load({ replay }, flags)).toThrow(message);
  });

  it('an MCP server entry may say "type": "stdio", as other tools\' configs do', () => {
    expect(load({ mcpServers: { gh: { type: 'stdio', command: 'npx' } } }).agent.mcpServers.gh).toEqual({ type: 'stdio', command: 'npx' });
  });

  it('names --budget when the flag is the bad value', () => {
    expect(() => load(undefined, { budget: 50 })).toThrow(/^--budget must be/);
  });
});

describe('config.json errors never show a secret it holds', () => {
  const SECRET = 'sk-abc123';
  it.each<[string, string, string]>([
    // V8's message quotes the text around the fault; the line and column say where it is instead.
    ['a single-quoted key', `{"serve": {"apiKey": '${SECRET}'}}`, 'is not valid JSON at line 1, column 22: expected a value, found "\'" (text goes in "double quotes"); fix or remove it'],
    ['a missing comma after the key', `{\n  "serve": {\n    "apiKey": "${SECRET}"\n  }\n  "model": "x"\n}`, `is not valid JSON at line 5, column 3: expected "," or "}", found '"'; fix or remove it`],
    ['a key never closed', `{"serve": {"apiKey": "${SECRET}`, 'is not valid JSON at line 1, column 32: expected the closing " of a string, found the end of the file; fix or remove it'],
    ['a line break in the key', `{"serve": {"apiKey": "sk-\n${SECRET}"}}`, 'is not valid JSON at line 1, column 26: a control character inside a string (write a line break as \\n, a tab as \\t); fix or remove it'],
    ['an unquoted key', `{"mcpServers": {"gh": {"command": "x", "env": {"TOKEN": ${SECRET}}}}}`, 'is not valid JSON at line 1, column 57: expected a value (text goes in "double quotes"); fix or remove it'],
  ])('not JSON, %s: where it is, not what is there', (_case, text, message) => {
    const error = thrown(() => load(text));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(/\/config\.json is not valid JSON/);
    expect((error as UsageError).message.endsWith(message)).toBe(true);
    expect((error as UsageError).message).not.toContain('abc123');
    expect((error as UsageError).cause).toBeUndefined();
  });

  it.each<[string, unknown, string]>([
    ['serve.apiKey as a number', { serve: { apiKey: 12_345_678_901_234 } }, '"serve.apiKey" must be a string, got a number'],
    ['serve.apiKey as an array', { serve: { apiKey: [SECRET] } }, '"serve.apiKey" must be a string, got an array'],
    ['a variable of an MCP server', { mcpServers: { gh: { command: 'x', env: { PIN: 12_345_678 } } } }, '"mcpServers.gh.env.PIN" must be a string, got a number'],
    ['a variable of no secret-looking name', { mcpServers: { gh: { command: 'x', env: { REGION: 12_345_678 } } } }, '"mcpServers.gh.env.REGION" must be a string, got a number'],
    ['all of env', { mcpServers: { gh: { command: 'x', env: SECRET } } }, '"mcpServers.gh.env" must be an object, got a string'],
    ['a secret-named persona', { personas: { token: 12_345_678 } }, '"personas.token" must be a string, got a number'],
    ['a secret-looking value under any key', { stream: { flushMs: `ghp_${'a'.repeat(36)}` } }, '"stream.flushMs" must be a whole number, got a string'],
    ['true under a secret key (no secret)', { serve: { apiKey: true } }, '"serve.apiKey" must be a string, got true'],
  ])('a wrong type, %s: said by its type', (_case, config, message) => {
    const error = thrown(() => load(config));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(new RegExp(`/config\\.json: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect((error as UsageError).message).not.toMatch(/abc123|12345678|aaaa/);
  });

  it.each<[string, unknown, string]>([
    ['a model', { model: 5 }, '"model" must be a string, got 5'],
    ['a persona', { personas: { pirate: 5 } }, '"personas.pirate" must be a string, got 5'],
    ['a string where a number goes', { stream: { flushMs: 'soon' } }, '"stream.flushMs" must be a whole number, got "soon"'],
  ])('a wrong type of no secret key, %s: its value is shown', (_case, config, message) => {
    expect(thrown(() => load(config))).toHaveProperty('message', expect.stringMatching(new RegExp(`${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)) as unknown);
  });

  const TOKEN = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  const SK = 'sk-proj-abcdefghijklmnopqrstuvwx';
  it.each<[string, unknown, string]>([
    // A wrong value of the right type: a token-shaped one said by its type, like a wrong type's.
    ['defaultReplay', { defaultReplay: TOKEN }, '"defaultReplay" must be none, session or last:N, got a value shaped like a key or token (not shown)'],
    ['think', { think: TOKEN }, '"think" must be on, off, low, medium, high or max, got a value shaped like a key or token (not shown)'],
    ['api', { api: SK }, '"api" must be chat or generate, got a value shaped like a key or token (not shown)'],
    ['verbosity', { verbosity: 'Bearer abcdefgh12345678' }, '"verbosity" must be auto, short or long, got a value shaped like a key or token (not shown)'],
    ['options.keep_alive', { options: { keep_alive: TOKEN } }, '"options.keep_alive" must be seconds or a duration like 10m, 1h or -1, got a value shaped like a key or token (not shown)'],
    ['persona', { persona: TOKEN }, '"persona": unknown persona a value shaped like a key or token (not shown) (known: critic, expert, friendly, neutral, teacher); add it under "personas" in config.json'],
    ['mode', { mode: SK }, '"mode": unknown mode a value shaped like a key or token (not shown) (known: code, review, shell, writing); add it under "modes" in config.json'],
    ['mcpServers.*.type', { mcpServers: { gh: { command: 'x', type: TOKEN } } }, '"mcpServers.gh.type" is a value shaped like a key or token (not shown): only stdio servers (a command Argo starts) are supported'],
    ['mcpServers.*.command with a blank', { mcpServers: { gh: { command: `${TOKEN} ` } } }, '"mcpServers.gh.command" starts or ends with a blank: remove it (check the quotes around the value)'],
  ])('a wrong value, %s, shaped like a token: said by its type', (_case, config, message) => {
    const error = thrown(() => load(config, { tools: ['mcp:gh'] }));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(new RegExp(`/config\\.json: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    expect((error as UsageError).message).not.toMatch(/abcdefgh/);
  });

  it.each<[string, unknown, string]>([
    ['defaultReplay', { defaultReplay: 'bogus' }, '"defaultReplay" must be none, session or last:N, got "bogus"'],
    ['think', { think: 'loud' }, '"think" must be on, off, low, medium, high or max, got "loud"'],
    ['api', { api: 'completions' }, '"api" must be chat or generate, got "completions"'],
    ['verbosity', { verbosity: 'terse' }, '"verbosity" must be auto, short or long, got "terse"'],
    ['options.keep_alive', { options: { keep_alive: 'forever' } }, '"options.keep_alive" must be seconds or a duration like 10m, 1h or -1, got "forever"'],
    ['options.keep_alive, too long', { options: { keep_alive: 9_223_372_037 } }, '"options.keep_alive" 9223372037 is longer than Ollama takes (9223372036 seconds at most); use -1 to keep the model loaded'],
    ['persona', { persona: 'pirat' }, '"persona": unknown persona "pirat" (known: critic, expert, friendly, neutral, teacher); add it under "personas" in config.json'],
    ['mcpServers.*.type', { mcpServers: { gh: { command: 'x', type: 'http' } } }, '"mcpServers.gh.type" is "http": only stdio servers (a command Argo starts) are supported'],
    ['mcpServers.*.command with a blank', { mcpServers: { gh: { command: ' npx' } } }, '"mcpServers.gh.command" " npx" starts or ends with a blank: remove it (check the quotes around the value)'],
    // Cut to 40 characters, as a wrong type's value is.
    ['a long value', { api: 'x'.repeat(100) }, `"api" must be chat or generate, got "${'x'.repeat(40)}…"`],
  ])('a wrong value, %s, of no secret shape: quoted', (_case, config, message) => {
    expect(thrown(() => load(config, { tools: ['mcp:gh'] }))).toHaveProperty('message', expect.stringMatching(new RegExp(`/config\\.json: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)) as unknown);
  });
});

describe('a string-array key names the element that is not a string', () => {
  const tool = { description: 'd' };
  it.each<[string, (items: unknown[]) => unknown]>([
    ['replay.filters.continuation', (items) => ({ replay: { filters: { continuation: items } } })],
    ['replay.filters.clarification', (items) => ({ replay: { filters: { clarification: items } } })],
    ['replay.filters.session', (items) => ({ replay: { filters: { session: items } } })],
    ['replay.classify.meta', (items) => ({ replay: { classify: { meta: items } } })],
    ['replay.classify.correction', (items) => ({ replay: { classify: { correction: items } } })],
    ['replay.classify.questionOpeners', (items) => ({ replay: { classify: { questionOpeners: items } } })],
    ['replay.classify.instructionVerbs', (items) => ({ replay: { classify: { instructionVerbs: items } } })],
    ['replay.classify.politePrefixes', (items) => ({ replay: { classify: { politePrefixes: items } } })],
    ['replay.clarification', (items) => ({ replay: { clarification: items } })],
    ['verbosityRules.longPhrases', (items) => ({ verbosityRules: { longPhrases: items } })],
    ['tools', (items) => ({ tools: items })],
    ['toolsets.dev.tools', (items) => ({ toolsets: { dev: { tools: items } } })],
    ['toolsets.dev.includes', (items) => ({ toolsets: { dev: { includes: items } } })],
    ['commandTools.lint.argv', (items) => ({ commandTools: { lint: { ...tool, argv: items } } })],
    ['commandTools.lint.requires', (items) => ({ commandTools: { lint: { ...tool, argv: ['x'], requires: items } } })],
    ['mcpServers.s.args', (items) => ({ mcpServers: { s: { command: 'x', args: items } } })],
    ['passSecrets', (items) => ({ passSecrets: items })],
  ])('%s', (key, config) => {
    for (const [items, got] of [
      [['a', 12_345], 'a number'],
      [['a', 'b', null], 'null'],
      [[true], 'true'],
      [['a', ['b']], 'an array'],
      [[{}], 'an object'],
    ] as const) {
      const index = items.length - 1;
      expect(thrown(() => load(config([...items])))).toHaveProperty('message', expect.stringMatching(new RegExp(`/config\\.json: "${key.replace(/\./g, '\\.')}\\[${index}\\]" must be a string, got ${got}$`)) as unknown);
    }
    expect(thrown(() => load(config('a' as unknown as unknown[])))).toHaveProperty('message', expect.stringMatching(new RegExp(`"${key.replace(/\./g, '\\.')}" must be an array of strings, got (?:"a"|a string)$`)) as unknown);
  });
});

describe('config.json is read only from a regular file (a link to one is followed)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-config-kinds-'));
  const file = join(dir, 'dotfiles.json');
  writeFileSync(file, JSON.stringify({ model: 'from-link' }));
  mkdirSync(join(dir, 'folder'));
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  const socket = createServer().listen(join(dir, 'socket'));
  afterAll(() => socket.close());

  // [case, what is at config.json: a link's target or a kind to make, the model read or the error]
  it.each<[string, (at: string) => void, string | RegExp]>([
    ['a regular file', (at) => writeFileSync(at, '{"model": "plain"}'), 'plain'],
    ['a link to a regular file', (at) => symlinkSync(file, at), 'from-link'],
    ['nothing there', () => undefined, 'argo'],
    // A file kept elsewhere and lost: said, not read as the defaults (host, model and key dropped unsaid).
    ['a dangling link', (at) => symlinkSync(join(dir, 'gone.json'), at), /^\/.*\/config\.json is a link to \/.*\/gone\.json, which does not exist: put the file back there, or remove the link to use the defaults$/],
    ['a dangling relative link, named where it points', (at) => symlinkSync('../dotfiles/argo.json', at), /config\.json is a link to \/.*\/dotfiles\/argo\.json, which does not exist/],
    ['a link through a file', (at) => symlinkSync(join(file, 'argo.json'), at), /config\.json is a link to \/.*\/dotfiles\.json\/argo\.json, which does not exist/],
    // Never waited on: a named pipe nobody writes to would hang every command for good.
    ['a named pipe', (at) => execFileSync('mkfifo', [at]), /^\/.*\/config\.json is a named pipe; config\.json must be a file or a link to one \(move it out of the way\)$/],
    ['a link to a named pipe', (at) => symlinkSync(join(dir, 'pipe'), at), /config\.json is a named pipe; config\.json must be a file/],
    ['a folder', (at) => mkdirSync(at), /config\.json is a folder; config\.json must be a file or a link to one \(move it out of the way\)$/],
    ['a link to a folder', (at) => symlinkSync(join(dir, 'folder'), at), /config\.json is a folder; /],
    ['a link to a device', (at) => symlinkSync('/dev/zero', at), /config\.json is a device; config\.json must be a file/],
    ['a link to a socket', (at) => symlinkSync(join(dir, 'socket'), at), /config\.json is a socket; config\.json must be a file/],
  ])('%s', async (_case, make, expected) => {
    await new Promise((done) => (socket.listening ? done(null) : socket.once('listening', done)));
    const dataHome = home();
    make(join(dataHome, 'config.json'));
    if (typeof expected === 'string') {
      expect(loadSettings({ home: dataHome }, {}).model).toBe(expected);
      return;
    }
    let error: unknown;
    try {
      loadSettings({ home: dataHome }, {});
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(expected);
  });
});

describe('a data home that cannot be a folder names what is in the way', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-home-file-'));
  const file = join(dir, 'file');
  writeFileSync(file, 'x');
  execFileSync('mkfifo', [join(dir, 'pipe')]);
  it.each([
    [file, `the data home ${file} is a file, not a folder: set ARGO_HOME or --home to a folder`],
    [join(file, 'sub'), `the data home ${file}/sub cannot be made: ${file} is a file, not a folder; set ARGO_HOME or --home to a folder elsewhere`],
    [join(file, 'a', 'b'), `the data home ${file}/a/b cannot be made: ${file} is a file, not a folder; set ARGO_HOME or --home to a folder elsewhere`],
    [join(dir, 'pipe', 'sub'), `the data home ${dir}/pipe/sub cannot be made: ${dir}/pipe is a named pipe, not a folder; set ARGO_HOME or --home to a folder elsewhere`],
  ])('%s', (dataHome, message) => {
    const error = thrown(() => loadSettings({ home: dataHome }, {}));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(message);
  });
});

describe('parseKeepAlive', () => {
  it.each([
    ['10m', '10m'],
    ['1h30m', '1h30m'],
    ['300', 300],
    ['-1', -1],
    ['0', 0],
    ['1.5h', '1.5h'],
    [60, 60],
  ] as const)('%j → %j', (input, expected) => {
    expect(parseKeepAlive(input, '--keep-alive')).toBe(expected);
  });

  it.each(['forever', '10 minutes', 'm10', ''])('rejects %j', (input) => {
    expect(() => parseKeepAlive(input, '--keep-alive')).toThrow(/--keep-alive must be seconds or a duration/);
  });

  // Go's time.ParseDuration (Ollama's reading) stops at int64 nanoseconds: 2562047h47m16.854775807s.
  it.each([
    ['2562047h', '2562047h'],
    ['2562047h47m16s', '2562047h47m16s'],
    ['-2562047h', '-2562047h'],
  ])('takes %j, within what Ollama reads', (input, expected) => {
    expect(parseKeepAlive(input, '--keep-alive')).toBe(expected);
  });

  it.each(['2562048h', '99999999999h', '2562047h48m', '153722867281m'])('refuses %j, longer than Ollama reads', (input) => {
    expect(() => parseKeepAlive(input, '--keep-alive')).toThrow(new UsageError(`--keep-alive "${input}" is longer than Ollama takes (2562047h at most); use -1 to keep the model loaded`));
  });

  // A number is seconds, which Ollama multiplies into int64 nanoseconds as a float64 (api.Duration.UnmarshalJSON):
  // past 9223372036.85 s it overflows. Digit strings are sent as numbers, so the same bound applies.
  it.each([
    [9223372036, 9223372036],
    ['9223372036', 9223372036],
    [-99999999999, -99999999999],
    ['-99999999999', -99999999999],
  ] as const)('takes %j seconds, within what Ollama reads', (input, expected) => {
    expect(parseKeepAlive(input, '--keep-alive')).toBe(expected);
  });

  it.each([
    [9223372037, '9223372037'],
    [99999999999, '99999999999'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    ['9223372037', '"9223372037"'],
    [' 99999999999 ', '" 99999999999 "'],
    ['99999999999999999999999', '"99999999999999999999999"'],
  ] as const)('refuses %j seconds, longer than Ollama reads', (input, shown) => {
    expect(() => parseKeepAlive(input, 'config.json: "options.keep_alive"')).toThrow(
      new UsageError(`config.json: "options.keep_alive" ${shown} is longer than Ollama takes (9223372036 seconds at most); use -1 to keep the model loaded`),
    );
  });

  // Found by test/cli/parse.property.test.ts: the value is quoted as JSON, so the error is one line.
  it('names a value with a line break on one line, as --think does', () => {
    expect(() => parseKeepAlive('1\nm', '--keep-alive')).toThrow(new UsageError('--keep-alive must be seconds or a duration like 10m, 1h or -1, got "1\\nm"'));
    expect(() => parseThink('o\nn', '--think')).toThrow(new UsageError('--think must be on, off, low, medium, high or max, got "o\\nn"'));
  });
});

describe('the everyday companion settings: default replay, model source, -o options, system prompt', () => {
  it.each([
    [undefined, {}, { kind: 'none' }],
    [{ defaultReplay: 'last:3' }, {}, { kind: 'last', count: 3 }],
    [{ defaultReplay: 'last:3' }, { ARGO_REPLAY: 'session' }, { kind: 'session' }],
    [undefined, { ARGO_REPLAY: 'none' }, { kind: 'none' }],
    [{ defaultReplay: 'session' }, { ARGO_REPLAY: '' }, { kind: 'session' }],
  ])('config %j, env %j → default replay %j', (config, env, spec) => {
    expect(load(config, {}, env).defaultReplay).toEqual(spec);
  });

  // Where it came from, for a message about it (a session replay and --reason).
  it.each<[Record<string, unknown> | undefined, Record<string, string>, ReplaySpec | undefined, string]>([
    [undefined, {}, undefined, 'default'],
    [{ defaultReplay: 'session' }, {}, undefined, 'config'],
    [{ defaultReplay: 'session' }, { ARGO_REPLAY: 'session' }, undefined, 'env'],
    [{ defaultReplay: 'session' }, { ARGO_REPLAY: '' }, undefined, 'config'], // an empty variable is unset
    [undefined, { ARGO_REPLAY: 'none' }, undefined, 'env'],
    [{ defaultReplay: 'session' }, { ARGO_REPLAY: 'session' }, { kind: 'session' }, 'flag'],
  ])('config %j, env %j, replay given %j → source %s', (config, env, replay, source) => {
    expect(load(config, replay === undefined ? {} : { replay }, env).defaultReplaySource).toBe(source);
  });

  // As for --session: a value overridden is not read, so a bad one stops only what would use it.
  it.each<[Record<string, unknown> | undefined, Record<string, string>, ReplaySpec]>([
    [undefined, { ARGO_REPLAY: 'bogus' }, { kind: 'none' }],
    [{ defaultReplay: 'bogus' }, {}, { kind: 'session' }],
    [{ defaultReplay: 'last:3' }, { ARGO_REPLAY: 'session' }, { kind: 'last', count: 1 }],
  ])('config %j, env %j, with a replay given: %j wins, the others unread', (config, env, replay) => {
    expect(load(config, { replay }, env).defaultReplay).toEqual(replay);
  });

  it.each([
    [undefined, {}, null, false],
    [{ serve: { apiKey: 'sk-config' } }, {}, 'sk-config', true],
    [{ serve: { apiKey: 'sk-config' } }, { ARGO_API_KEY: 'sk-env' }, 'sk-env', true],
    [{ serve: { apiKey: 'sk-config' } }, { ARGO_API_KEY: '' }, 'sk-config', true],
    [{ serve: { apiKey: '' } }, {}, null, false],
    [undefined, { ARGO_API_KEY: 'sk-env' }, 'sk-env', false],
    // A blank one is kept, to be refused as argo serve starts (checkApiKey), not dropped for the next.
    [{ serve: { apiKey: 'sk-config' } }, { ARGO_API_KEY: ' ' }, ' ', true],
    [{ serve: { apiKey: ' ' } }, {}, ' ', true],
  ])('config %j, env %j → serve key %j (one in config.json: %j)', (config, env, key, inConfig) => {
    expect(load(config, {}, env).serve).toMatchObject({ apiKey: key, apiKeyInConfig: inConfig });
  });

  it.each([
    [{ serve: { apiKey: 'sk-config' } }, { ARGO_API_KEY: 'sk-env' }, 'ARGO_API_KEY'],
    [{ serve: { apiKey: 'sk-config' } }, {}, /^\/.*\/config\.json: "serve\.apiKey"$/],
  ])('config %j, env %j: the key is named %s', (config, env, source) => {
    expect(load(config, {}, env).serve.apiKeySource).toMatch(source);
  });

  it.each([
    [undefined, 512],
    [{ serve: { maxConnections: 64 } }, 64],
  ])('config %j → serve.maxConnections %i (Ollama\'s own queue length by default)', (config, max) => {
    expect(load(config, {}, {}).serve.maxConnections).toBe(max);
  });

  it.each([
    [undefined, undefined, [], 'config'],
    [{ tools: ['dev'] }, undefined, ['dev'], 'config'],
    [{ tools: ['dev'] }, ['fs'], ['fs'], '--tools'],
    [{ tools: ['dev'] }, ['fs', '-read_file'], ['fs', '-read_file'], '--tools'],
    [{ tools: ['dev'] }, ['-shell'], ['dev', '-shell'], 'config and --tools'],
    [{ tools: ['dev'] }, ['none'], ['none'], '--tools'],
  ])('config %j, --tools %j → tools %j (from %s)', (config, tools, expected, from) => {
    const agent = load(config, tools === undefined ? {} : { tools }).agent;
    expect(agent.tools).toEqual(expected);
    const source = { config: /config\.json: "tools"$/, '--tools': /^--tools$/, 'config and --tools': /config\.json: "tools" and --tools$/ }[from];
    expect(agent.toolsSource).toMatch(source ?? /never/);
  });

  it('reads a config.json that starts with a byte order mark, as some editors write it', () => {
    expect(load('\uFEFF{"model":"bom-model"}').model).toBe('bom-model');
  });

  it.each([[undefined], [{ tools: [] }]])('with config %j, a --tools that only takes away is a usage error naming what to do', (config) => {
    expect(() => load(config, { tools: ['-shell'] })).toThrow(/^--tools -shell only takes tools away, and .*config\.json has no "tools" to take them from; name what to keep too, e\.g\. --tools dev,-shell$/);
  });

  it.each([
    [undefined, {}, undefined],
    [{ think: false }, {}, false],
    [{ think: 'high' }, {}, 'high'],
    [{ think: true }, { think: 'off' }, false],
    [undefined, { think: 'on' }, true],
    [undefined, { think: 'TRUE' }, true],
    [undefined, { think: 'Low' }, 'low'],
    [{ think: 'max' }, {}, 'max'],
  ])('config %j, flags %j → think %j', (config, flags, think) => {
    expect(load(config, flags).think).toBe(think);
  });

  it.each<[unknown, FlagOverrides, boolean]>([
    [undefined, {}, false],
    [{ hideThinking: true }, {}, true],
    [{ hideThinking: false }, {}, false],
    [undefined, { hideThinking: true }, true],
    // --no-hide-thinking shows it for one run whatever config.json says.
    [{ hideThinking: true }, { hideThinking: false }, false],
    [{ hideThinking: false }, { hideThinking: true }, true],
  ])('config %j, flags %j → hideThinking %j', (config, flags, hidden) => {
    expect(load(config, flags).hideThinking).toBe(hidden);
  });

  it.each([
    [{ hideThinking: 'yes' }, {}, /config\.json: "hideThinking" must be true or false, got "yes"$/],
    [{ think: 'maybe' }, {}, /config\.json: "think" must be on, off, low, medium, high or max, got "maybe"$/],
    [{ think: 3 }, {}, /"think" must be true, false or a string, got 3/],
    [undefined, { think: 'x' }, /^--think must be on, off, low, medium, high or max, got "x"/],
    [undefined, { model: '' }, /^--model is empty: name a model/],
    [{ model: ' ' }, {}, /config\.json: "model" is empty: name a model/],
    [undefined, { model: 'llama 3' }, /^--model: a model name has no spaces or control characters/],
    [undefined, { model: 'llama3\u001b[2J' }, /^--model: a model name has no spaces or control characters/],
    [{ model: 'qwen\u202e3' }, {}, /config\.json: "model": a model name has no spaces or control characters/],
  ])('config %j, flags %j is refused', (config, flags, message) => {
    expect(() => load(config, flags)).toThrow(message);
  });

  it.each([
    [{ defaultReplay: 'always' }, {}, /config\.json: "defaultReplay" must be none, session or last:N, got "always"/],
    [undefined, { ARGO_REPLAY: 'last:0' }, /^ARGO_REPLAY must be none, session or last:N, got "last:0"/],
    [undefined, { ARGO_REPLAY: 'last:9007199254740992' }, /^ARGO_REPLAY must be none, session or last:N with N of at most 9007199254740991, got "last:9007199254740992"$/],
    [{ defaultReplay: 'last:99999999999999999999' }, {}, /"defaultReplay" must be none, session or last:N with N of at most 9007199254740991, got "last:99999999999999999999"$/],
    [undefined, { ARGO_MODEL: 'two words' }, /^ARGO_MODEL: a model name has no spaces or control characters/],
  ])('config %j, env %j is refused', (config, env, message) => {
    expect(() => load(config, {}, env)).toThrow(message);
  });

  it.each([
    // uses, config, env → loaded or the refusal
    [[], { session: 'bad name' }, { ARGO_SESSION: 'bad name', ARGO_REPLAY: 'bogus', ARGO_MODEL: 'a b' }, null],
    [[], { defaultReplay: 'always', model: 'a b' }, {}, null],
    [['replay', 'model'], {}, { ARGO_SESSION: 'bad name' }, null],
    [['session', 'model'], {}, { ARGO_REPLAY: 'bogus' }, null],
    [['session', 'replay'], { model: 'a b' }, { ARGO_MODEL: 'a b' }, null],
    [['session'], {}, { ARGO_SESSION: 'bad name' }, /^ARGO_SESSION: invalid session name "bad name"/],
    [['session'], { session: 'bad name' }, {}, /config\.json: "session": invalid session name "bad name"/],
    [['replay'], {}, { ARGO_REPLAY: 'bogus' }, /^ARGO_REPLAY must be none, session or last:N, got "bogus"/],
    [['model'], {}, { ARGO_MODEL: 'a b' }, /^ARGO_MODEL: a model name has no spaces/],
  ] as const)('a command using %j, config %j, env %j: %s', (uses, config, env, refusal) => {
    const loaded = () => loadSettings({ home: home(config) }, env, uses);
    if (refusal === null) expect(loaded).not.toThrow();
    else expect(loaded).toThrow(refusal);
  });

  it.each([
    ['session', ['session', 'sessionSource']],
    ['replay', ['defaultReplay', 'defaultReplaySource']],
    ['model', ['model', 'modelSource', 'modelFromFlag']],
  ] as const)('a command not using %s fails loudly if it reads %j, and a spread leaves them out', (setting, fields) => {
    const uses = (['session', 'replay', 'model'] as const).filter((other) => other !== setting);
    const settings = loadSettings({ home: home({ session: 'c', defaultReplay: 'session', model: 'm' }) }, { ARGO_SESSION: 'e', ARGO_REPLAY: 'none', ARGO_MODEL: 'e' }, uses);
    for (const field of fields) {
      expect(() => settings[field], field).toThrow(`settings.${field} was read by a command that does not use it`);
      expect(Object.keys({ ...settings }), field).not.toContain(field);
    }
  });

  it.each([
    [undefined, {}, {}, 'default'],
    [{ model: 'm' }, {}, {}, 'config'],
    [{ model: 'm' }, {}, { ARGO_MODEL: 'e' }, 'env'],
    [{ model: 'm' }, { model: 'f' }, { ARGO_MODEL: 'e' }, 'flag'],
  ])('config %j, flags %j, env %j → model from %s', (config, flags, env, source) => {
    expect(load(config, flags, env).modelSource).toBe(source);
  });

  it.each([
    [undefined, {}, {}, 'default', 'default'],
    [undefined, {}, { ARGO_SESSION: '' }, 'default', 'default'],
    [{ session: 'c' }, {}, {}, 'c', 'config'],
    [{ session: 'c' }, {}, { ARGO_SESSION: 'e' }, 'e', 'env'],
    [{ session: 'c' }, { session: 'f' }, { ARGO_SESSION: 'e' }, 'f', 'flag'],
  ])('config %j, flags %j, env %j → session %s, from %s', (config, flags, env, session, source) => {
    expect(load(config, flags, env)).toMatchObject({ session, sessionSource: source });
  });

  it('-o options join the named ones (and win over them); num_ctx remembers where it came from; --system is kept', () => {
    const s = load({ options: { num_ctx: 8192, temperature: 0.5 } }, { options: { top_p: 0.9, temperature: 0.1 }, system: 'Be brief.' });
    expect(s.options).toEqual({ temperature: 0.1, num_ctx: 8192, top_p: 0.9 });
    expect(s.numCtxSource).toBe('config');
    expect(s.system).toBe('Be brief.');
    expect(load(undefined, { numCtx: 2048 }).numCtxSource).toBe('flag');
    expect(load(undefined, { options: { num_ctx: 2048 } }).numCtxSource).toBe('flag');
    expect(load(undefined).numCtxSource).toBeNull();
  });
});
