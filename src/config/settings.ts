import { userInfo } from 'node:os';
import { lstatSync, readlinkSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { RuntimeError, UsageError, shownPath } from '../errors.js';
import { isPlainObject } from '../log/entry.js';
import { ForeignLinkError, NotRegularFileError, UntrustedFileError, closedFolder, errnoOf, fileKind, isMissing, readDataBytes } from '../log/fs.js';
import { DEFAULT_REPLAY_POLICY, DEFAULT_STYLE_POLICY, PolicyError, budgetFloor, checkReplayPolicy, configuredBudget } from '../replay/policy.js';
import type { ReplayPolicy, StylePolicy } from '../replay/policy.js';
import { checkStyleChoice } from '../replay/style.js';
import { THINK_LEVELS } from '../replay/prompt.js';
import type { ModelOptions, Think } from '../replay/prompt.js';
import { MAX_REPLAY_COUNT, isReplayCountTooLarge, readReplaySpec } from '../replay/spec.js';
import { ENDPOINTS, VERBOSITIES } from '../replay/types.js';
import type { Endpoint, ReplaySpec, Verbosity } from '../replay/types.js';
import { checkSessionName, hasRecord } from '../sessions/names.js';
import { CONTROLS, quotedName } from '../output/terminal-text.js';
import { parseOllamaHost } from './host.js';
import { checkShape, shownValue, valueHidden, whole } from './schema.js';
import { jsonFaultPlace } from '../text/json-syntax.js';
import { shellWord } from '../text/shell-word.js';
import { decodeUtf8, notUtf8 } from '../text/utf8.js';
import type { Shape } from './schema.js';
import { EXCLUDE_PREFIX, NO_TOOLS, takesAwayOnly } from './tool-list.js';

/**
 * The smallest result budget (characters): a result cut down to its budget carries a note of about
 * 200 characters (its length and the file it is saved in), and still needs a head worth reading.
 */
export const MIN_TOOL_BUDGET = 500;
/**
 * The floor before MIN_TOOL_BUDGET. A config.json written then may hold a budget between the two:
 * it is taken as MIN_TOOL_BUDGET rather than refused (which would stop every command).
 */
const EARLIER_MIN_TOOL_BUDGET = 100;

export interface Settings {
  home: string;
  paths: { logs: string; sessions: string; config: string };
  model: string;
  /** True when --model was given: it then wins over the session's last model. */
  modelFromFlag: boolean;
  session: string;
  /** Where `session` came from: `argo last` reads the most recently used session unless one was named. */
  sessionSource: 'flag' | 'env' | 'config' | 'default';
  host: string;
  api: Endpoint;
  persona: string;
  verbosity: Verbosity;
  mode: string | null;
  options: ModelOptions;
  keepAlive?: string | number;
  /** --think or config "think": sent as the request's `think` only when set. */
  think?: Think;
  /**
   * `think` came from config.json, a default for every model, not asked of this one: a model that
   * cannot think is not sent it (it would refuse every request), as Ollama relaxes it for its own clients.
   */
  thinkFromConfig?: boolean;
  /** --hide-thinking or config "hideThinking": a thinking model's reasoning is not shown as it streams. */
  hideThinking: boolean;
  replay: ReplayPolicy;
  style: StylePolicy;
  /** How streamed text is batched into writes (config key "stream"). */
  tokenBuffer: { flushChunks: number; flushMs: number };
  retries: { attempts: number; initialDelayMs: number };
  /** idleMs: silence before a stream is abandoned; lockWaitMs: the longest wait for another argo's lock. */
  timeouts: { idleMs: number; lockWaitMs: number };
  /** Where `model` came from (the session's last model, when used, is decided per turn; chat's /model is `chat`). */
  modelSource: 'flag' | 'env' | 'config' | 'default' | 'chat';
  /** Where options.num_ctx came from; null when neither --num-ctx nor config.json set it. */
  numCtxSource: 'flag' | 'config' | null;
  /** --system / --system-file: sent before Argo's own instructions. */
  system: string | null;
  /**
   * The replay in force when a request does not say: --replay (or the command's own, as a chat's
   * `session`), else ARGO_REPLAY, config "defaultReplay", else none. One overridden is not read.
   */
  defaultReplay: ReplaySpec;
  /** Where defaultReplay came from: a flag (or the command's own), ARGO_REPLAY, config "defaultReplay", or none given. */
  defaultReplaySource: 'flag' | 'env' | 'config' | 'default';
  serve: ServeSettings;
  agent: AgentSettings;
}

/** `argo serve`: config key "serve"; the key also from ARGO_API_KEY (an empty value counts as none). */
export interface ServeSettings {
  apiKey: string | null;
  /** Where apiKey comes from, for messages: ARGO_API_KEY, else config.json's "serve.apiKey". */
  apiKeySource: string;
  /** config.json holds a key (used or not, as ARGO_API_KEY wins): that file should be readable by this user alone. */
  apiKeyInConfig: boolean;
  maxBodyBytes: number;
  shutdownGraceMs: number;
  jobRetentionDays: number;
  /** Client connections open at once; one more is closed as it opens. */
  maxConnections: number;
}

/** Agent mode's settings (docs/agent.md): config.json's tool keys and the flags that override them. */
export interface AgentSettings {
  /** Toolsets and tools a run gets: --tools, else config "tools"; empty means no agent run. */
  tools: string[];
  /** Where --tools came from, for messages. */
  toolsSource: string;
  toolsets: Record<string, { tools?: string[]; includes?: string[] }>;
  commandTools: Record<string, CommandToolSettings>;
  mcpServers: Record<string, { command: string; args?: string[]; env?: Record<string, string>; cwd?: string; type?: string; startTimeoutMs?: number; url?: string; headers?: Record<string, string> }>;
  /** Result budgets in force, each at least MIN_TOOL_BUDGET. */
  toolBudgets: Record<string, number>;
  /** The tools whose toolBudgets value was under MIN_TOOL_BUDGET (an earlier version's floor) and counts as it. */
  raisedBudgets: string[];
  toolTimeouts: Record<string, number>;
  /** Variables with secret-looking names that shell and command tools still get (commandEnvironment). */
  passSecrets: string[];
  maxIterations: number;
}

/** A command-backed tool from config.json ("commandTools"). */
export interface CommandToolSettings {
  description: string;
  /** A JSON Schema with "type": "object" (checked when the catalog is built). */
  parameters?: Record<string, unknown>;
  /** ["git", "log", "-n", "{count}"]: `{name}` is replaced by that argument. */
  argv: string[];
  /** Binaries that must be on PATH for the tool to be offered (default: argv[0]). */
  requires?: string[];
  /** Default true: an unknown command may change anything, so it asks first. */
  sideEffects?: boolean;
  timeoutMs?: number;
}

/** Values given on the command line; each wins over the environment and config.json. */
export interface FlagOverrides {
  home?: string;
  model?: string;
  session?: string;
  host?: string;
  api?: string;
  persona?: string;
  verbosity?: string;
  mode?: string;
  budget?: number;
  temperature?: number;
  seed?: number;
  numCtx?: number;
  keepAlive?: string;
  think?: string;
  /** --hide-thinking (true) or --no-hide-thinking (false). */
  hideThinking?: boolean;
  /** --tools, already split into names. */
  tools?: string[];
  maxIterations?: number;
  /** `-o key=value` options, already checked against Ollama's names and types. */
  options?: Readonly<Record<string, number | boolean | string[]>>;
  system?: string;
  /** --replay, or the replay a command always uses (a chat's `session`): ARGO_REPLAY and config's go unread. */
  replay?: ReplaySpec;
}

export type Env = Readonly<Record<string, string | undefined>>;

const STRINGS: Shape = 'string[]';

/** The longest delay a Node timer takes: a longer one fires at once. */
export const TIMER_MAX_MS = 2_147_483_647;
/** A wait in ms a timer can keep. */
const TIMER_MS = whole(1, TIMER_MAX_MS);

const CONFIG_SHAPE: Shape = {
  fields: {
    model: 'string',
    session: 'string',
    host: 'string',
    think: 'boolean|string',
    hideThinking: 'boolean',
    api: 'string',
    persona: 'string',
    verbosity: 'string',
    mode: 'string|null',
    defaultReplay: 'string',
    // Only config's num_ctx is held to this here; --num-ctx is checked where it is parsed.
    options: { fields: { temperature: 'number', seed: 'integer', num_ctx: whole(1), keep_alive: 'string|integer' } },
    replay: {
      fields: {
        budget: 'integer',
        protectedTurns: 'integer',
        filters: { fields: { continuation: STRINGS, clarification: STRINGS, session: STRINGS } },
        strongMinTurns: 'integer',
        classify: {
          fields: { meta: STRINGS, correction: STRINGS, questionOpeners: STRINGS, instructionVerbs: STRINGS, politePrefixes: STRINGS },
        },
        clarification: STRINGS,
        confidence: { fields: { strong: 'string', moderate: 'string', weak: 'string' } },
      },
    },
    personas: { record: 'string' },
    modes: { record: 'string' },
    verbosityRules: { fields: { short: 'string', long: 'string', longPhrases: STRINGS, longInputChars: whole(1) } },
    stream: { fields: { flushChunks: whole(1), flushMs: whole(0, 60_000) } },
    // The retry delay doubles with each attempt; these bounds keep it within what a timer accepts.
    retries: { fields: { attempts: whole(1, 10), initialDelayMs: whole(0, 60_000) } },
    // Node's HTTP client gives up on its own after 300 s without data; a longer idle wait cannot be kept.
    timeouts: { fields: { idleMs: whole(100, 300_000), lockWaitMs: whole(0, 3_600_000) } },
    serve: { fields: { apiKey: 'string', maxBodyBytes: whole(1), shutdownGraceMs: whole(0, TIMER_MAX_MS), jobRetentionDays: whole(1), maxConnections: whole(1) } },
    tools: STRINGS,
    toolsets: { record: { fields: { tools: STRINGS, includes: STRINGS } } },
    commandTools: {
      record: { fields: { description: 'string', parameters: 'object', argv: STRINGS, requires: STRINGS, sideEffects: 'boolean', timeoutMs: TIMER_MS } },
    },
    // url and headers (a remote server's, as other tools' configs write it) are known to be refused in words.
    mcpServers: { record: { fields: { command: 'string', args: STRINGS, env: { record: 'string' }, cwd: 'string', type: 'string', startTimeoutMs: TIMER_MS, url: 'string', headers: { record: 'string' } } } },
    toolBudgets: { record: 'integer' },
    toolTimeouts: { record: TIMER_MS },
    passSecrets: STRINGS,
    // --max-iterations is checked where it is parsed.
    maxIterations: whole(1),
  },
};

export interface ConfigFile {
  think?: boolean | string;
  hideThinking?: boolean;
  model?: string;
  session?: string;
  host?: string;
  api?: string;
  persona?: string;
  verbosity?: string;
  mode?: string | null;
  defaultReplay?: string;
  options?: { temperature?: number; seed?: number; num_ctx?: number; keep_alive?: string | number };
  replay?: DeepPartial<ReplayPolicy>;
  personas?: Record<string, string>;
  modes?: Record<string, string>;
  verbosityRules?: Partial<StylePolicy['verbosity']>;
  stream?: Partial<Settings['tokenBuffer']>;
  retries?: Partial<Settings['retries']>;
  timeouts?: Partial<Settings['timeouts']>;
  serve?: Partial<ServeSettings>;
  tools?: string[];
  toolsets?: AgentSettings['toolsets'];
  commandTools?: AgentSettings['commandTools'];
  mcpServers?: AgentSettings['mcpServers'];
  toolBudgets?: Record<string, number>;
  toolTimeouts?: Record<string, number>;
  passSecrets?: string[];
  maxIterations?: number;
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K] };

/** `--think` / config "think": on or off (true, false), or a level for the models that take one. */
export function parseThink(value: string | boolean, source: string): Think {
  if (typeof value === 'boolean') return value;
  const word = value.trim().toLowerCase();
  if (word === 'on' || word === 'true') return true;
  if (word === 'off' || word === 'false') return false;
  const level = THINK_LEVELS.find((known) => known === word);
  if (level !== undefined) return level;
  throw new UsageError(`${source} must be on, off, low, medium, high or max, got ${shownValue(value)}`);
}

export function defaultHome(env: Env): string {
  const given = variable(env, 'ARGO_HOME');
  return given !== undefined ? expandHome(given, 'ARGO_HOME', env) : join(userHome(env), '.argo');
}

/** $HOME, else (unset or blank: cron, `env -i`) the account's home in the system's user list, as getent shows it. */
function userHome(env: Env): string {
  const given = variable(env, 'HOME');
  if (given !== undefined) return checkHomePath(given, 'HOME', 'set it to your home folder, or set ARGO_HOME to the data folder');
  // Not os.homedir(): that returns HOME as it is, empty or not.
  let system = '';
  try {
    system = userInfo().homedir;
  } catch {
    // No entry for this account (a container's uid): said below.
  }
  if (system === '') throw new UsageError('HOME is unset or empty and this account has no home folder in the system\'s user list: set ARGO_HOME (or --home) to the data folder');
  return system;
}

/**
 * An environment variable as settings read it: empty, or only blanks, counts as unset (as
 * `export ARGO_MODEL=` is meant). ARGO_API_KEY is read apart: a blank key is refused, not dropped.
 */
function variable(env: Env, name: string): string | undefined {
  return blankAsUnset(env[name]);
}

/**
 * One of Ollama's variables, as Ollama reads it (envconfig.Var): blanks, then quotes, trimmed from
 * both ends, so `OLLAMA_HOST='"127.0.0.1:11434"'` means to Argo what it means to Ollama.
 */
function ollamaVariable(env: Env, name: string): string | undefined {
  return blankAsUnset(env[name]?.trim().replace(/^["']+|["']+$/g, ''));
}

function blankAsUnset(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * A path as given (`where`: --home, ARGO_HOME, --root, a config key): an empty one would quietly
 * mean the current directory, and a blank at either end is a slip of quoting (`" ~/argo"`), never
 * the folder meant. `fix` says what to give instead of an empty one.
 */
export function checkGivenPath(value: string, where: string, fix: string): string {
  if (value.trim() === '') throw new UsageError(`${where} is ${value === '' ? 'empty' : 'blank'}: ${fix}`);
  // Quoted whole (not cut as shownValue cuts it): the blank is at one of its ends.
  if (value.trim() !== value) throw new UsageError(`${where}${valueHidden(value) ? '' : ` ${JSON.stringify(value)}`} starts or ends with a blank: remove it (check the quotes around the value)`);
  return value;
}

/**
 * checkGivenPath for the data home (or the home it is under): no control or direction character
 * either, since every message that names a file of it (the rescue line, a bad config) would carry them.
 */
function checkHomePath(value: string, where: string, fix: string): string {
  checkGivenPath(value, where, fix);
  if (new RegExp(CONTROLS.source, 'u').test(value)) {
    throw new UsageError(`${where} ${quotedName(value, 200)} holds a control or direction character: give the path without it`);
  }
  return value;
}

/**
 * A data directory as given, with a leading `~` or `~/` expanded as a shell would (a quoted
 * `ARGO_HOME="~/argo"` reaches us unexpanded, and would otherwise become a folder named `~` in the
 * current directory). `~user` forms are refused: they name another user's home.
 */
export function expandHome(given: string, where: string, env: Env): string {
  const value = checkHomePath(given, where, `name the data folder (e.g. ~/argo-work), or leave ${where} out for ${where === '--home' ? 'ARGO_HOME or ' : ''}~/.argo`);
  if (value === '~' || value.startsWith('~/')) return resolve(join(userHome(env), value.slice(1)));
  if (value.startsWith('~')) {
    throw new UsageError(`${where} ${JSON.stringify(value)}: only "~" and "~/…" are expanded (your own home); give the full path instead`);
  }
  return resolve(value);
}

/**
 * The settings a turn needs that other commands do not read: the session, the default replay and the
 * model. A command says which of them it uses; the others are neither read (their variable, their
 * config key) nor checked, so a bad ARGO_SESSION does not stop `argo logs`.
 */
export type TurnSetting = 'session' | 'replay' | 'model';
export const TURN_SETTINGS: readonly TurnSetting[] = ['session', 'replay', 'model'];

/** The fields of Settings each turn setting decides. */
const TURN_FIELDS = {
  session: ['session', 'sessionSource'],
  replay: ['defaultReplay', 'defaultReplaySource'],
  model: ['model', 'modelSource', 'modelFromFlag'],
} as const satisfies Record<TurnSetting, readonly (keyof Settings)[]>;

/** Reads config.json (the I/O) and resolves the settings from it (pure). */
export function loadSettings(flags: FlagOverrides, env: Env, uses: readonly TurnSetting[] = TURN_SETTINGS): Settings {
  const home = flags.home !== undefined ? expandHome(flags.home, '--home', env) : defaultHome(env);
  const path = join(home, 'config.json');
  const sessions = join(home, 'sessions');
  return resolveSettings(env, { path, config: readConfigFile(path), hasSession: (name) => hasRecord(sessions, name) }, { ...flags, home }, uses);
}

function policyHolds(policy: ReplayPolicy): boolean {
  try {
    checkReplayPolicy(policy);
    return true;
  } catch (error) {
    if (error instanceof PolicyError) return false;
    throw error;
  }
}

/** config.json as read: where it is, and its validated contents ({} when there is none). */
export interface ConfigSource {
  path: string;
  config: ConfigFile;
  /** Whether sessions/ holds a record of this name (loadSettings looks): a dot name's refusal then names the rename. */
  hasSession?: (name: string) => boolean;
}

/** Decides every setting from defaults ← config.json ← environment ← flags. Pure: no file, no process. */
export function resolveSettings(env: Env, file: ConfigSource, flags: FlagOverrides & { home: string }, uses: readonly TurnSetting[] = TURN_SETTINGS): Settings {
  const { home } = flags;
  const { path: configPath } = file;
  const config = withoutUnused(file.config, uses);
  const source = configPath;
  // The variable of a setting the command does not use is not read, as one a flag overrides.
  const envOf = (setting: TurnSetting, name: string): string | undefined => (uses.includes(setting) ? variable(env, name) : undefined);

  const replay = mergeDeep(DEFAULT_REPLAY_POLICY, config.replay ?? {});
  const configBudget = configuredBudget(replay);
  replay.budget = flags.budget ?? configBudget;
  try {
    checkReplayPolicy(replay);
  } catch (error) {
    if (!(error instanceof PolicyError)) throw error;
    // A config.json that holds on its own is not to blame for what --budget broke (its protected turns' floor).
    const problem = error.message.slice(error.key.length + 2);
    if (flags.budget !== undefined && policyHolds({ ...replay, budget: configBudget })) {
      throw new UsageError(error.key === 'replay.budget' ? `--budget ${problem}` : `--budget ${flags.budget} is too small: ${problem}; give --budget ${budgetFloor(replay.protectedTurns)} or more`);
    }
    throw new UsageError(`${source}: "${error.key}" ${problem}`);
  }

  const style: StylePolicy = {
    personas: { ...DEFAULT_STYLE_POLICY.personas, ...config.personas },
    modes: { ...DEFAULT_STYLE_POLICY.modes, ...config.modes },
    verbosity: { ...DEFAULT_STYLE_POLICY.verbosity, ...config.verbosityRules },
  };

  const envSession = envOf('session', 'ARGO_SESSION');
  const session = flags.session ?? envSession ?? config.session ?? 'default';
  const sessionSource = flags.session !== undefined ? 'flag' : envSession !== undefined ? 'env' : config.session !== undefined ? 'config' : 'default';
  const configKey = nonEmpty(config.serve?.apiKey ?? undefined);
  // Only an empty key is none: a blank one is refused as argo serve starts (checkApiKey), not dropped.
  const envKey = nonEmpty(env.ARGO_API_KEY);
  const sessionWhere = sessionSource === 'flag' ? '--session' : sessionSource === 'env' ? 'ARGO_SESSION' : `${source}: "session"`;
  checkSessionName(session, sessionWhere, file.hasSession);

  const api = flags.api ?? config.api ?? 'chat';
  if (!(ENDPOINTS as readonly string[]).includes(api)) {
    throw new UsageError(`${flags.api !== undefined ? '--api' : `${source}: "api"`} must be chat or generate, got ${shownValue(api)}`);
  }
  const verbosity = flags.verbosity ?? config.verbosity ?? 'auto';
  if (!(VERBOSITIES as readonly string[]).includes(verbosity)) {
    throw new UsageError(`${flags.verbosity !== undefined ? '--verbosity' : `${source}: "verbosity"`} must be auto, short or long, got ${shownValue(verbosity)}`);
  }

  const envReplay = envOf('replay', 'ARGO_REPLAY');
  const replayText = envReplay ?? config.defaultReplay;
  const defaultReplay = flags.replay ?? (replayText === undefined ? { kind: 'none' as const } : readReplaySpec(replayText));
  if (defaultReplay === null) {
    const limit = replayText !== undefined && isReplayCountTooLarge(replayText) ? ` with N of at most ${MAX_REPLAY_COUNT}` : '';
    throw new UsageError(`${envReplay !== undefined ? 'ARGO_REPLAY' : `${source}: "defaultReplay"`} must be none, session or last:N${limit}, got ${shownValue(replayText)}`);
  }
  const envModel = envOf('model', 'ARGO_MODEL');
  const modelSource = flags.model !== undefined ? 'flag' : envModel !== undefined ? 'env' : config.model !== undefined ? 'config' : 'default';
  const envHost = ollamaVariable(env, 'OLLAMA_HOST');

  const keepAliveRaw = flags.keepAlive ?? config.options?.keep_alive;
  const settings: Settings = {
    home,
    paths: { logs: join(home, 'logs'), sessions: join(home, 'sessions'), config: configPath },
    model: flags.model ?? envModel ?? config.model ?? 'argo',
    modelFromFlag: flags.model !== undefined,
    session,
    sessionSource,
    host: parseOllamaHost(flags.host ?? envHost ?? config.host, flags.host !== undefined ? '--host' : envHost !== undefined ? 'OLLAMA_HOST' : `${source}: "host"`),
    api: api as Endpoint,
    persona: flags.persona ?? config.persona ?? 'neutral',
    verbosity: verbosity as Verbosity,
    mode: flags.mode ?? config.mode ?? null,
    options: {
      ...optional('temperature', flags.temperature ?? config.options?.temperature),
      ...optional('seed', flags.seed ?? config.options?.seed),
      ...optional('num_ctx', flags.numCtx ?? config.options?.num_ctx),
      ...flags.options,
    },
    hideThinking: flags.hideThinking ?? config.hideThinking ?? false,
    replay,
    style,
    tokenBuffer: { flushChunks: 10, flushMs: 50, ...config.stream },
    retries: { attempts: 3, initialDelayMs: 250, ...config.retries },
    timeouts: { idleMs: 120_000, lockWaitMs: 30_000, ...config.timeouts },
    modelSource,
    numCtxSource: flags.options?.num_ctx !== undefined || flags.numCtx !== undefined ? 'flag' : config.options?.num_ctx !== undefined ? 'config' : null,
    // An empty one is none: it is not sent, so it must not be logged as sent.
    system: nonEmpty(flags.system) ?? null,
    defaultReplay,
    defaultReplaySource: flags.replay !== undefined ? 'flag' : envReplay !== undefined ? 'env' : replayText !== undefined ? 'config' : 'default',
    serve: {
      maxBodyBytes: 10 * 1024 * 1024,
      shutdownGraceMs: 10_000,
      jobRetentionDays: 30,
      // Ollama's own queue (OLLAMA_MAX_QUEUE): more answers at once than that it refuses anyway.
      maxConnections: 512,
      ...config.serve,
      apiKey: envKey ?? configKey ?? null,
      apiKeySource: envKey !== undefined ? 'ARGO_API_KEY' : `${source}: "serve.apiKey"`,
      apiKeyInConfig: configKey !== undefined,
    },
    agent: {
      tools: toolsOf(flags.tools, config.tools, source),
      toolsSource: flags.tools === undefined ? `${source}: "tools"` : takesAwayOnly(flags.tools) ? `${source}: "tools" and --tools` : '--tools',
      toolsets: config.toolsets ?? {},
      commandTools: config.commandTools ?? {},
      mcpServers: config.mcpServers ?? {},
      ...toolBudgetsOf(config.toolBudgets ?? {}, source),
      toolTimeouts: config.toolTimeouts ?? {},
      passSecrets: config.passSecrets ?? [],
      maxIterations: flags.maxIterations ?? config.maxIterations ?? 10,
    },
  };
  checkModelName(settings.model, modelSource === 'flag' ? '--model' : modelSource === 'env' ? 'ARGO_MODEL' : `${source}: "model"`);
  const thinkRaw = flags.think ?? config.think;
  if (thinkRaw !== undefined) settings.think = parseThink(thinkRaw, flags.think !== undefined ? '--think' : `${source}: "think"`);
  if (flags.think === undefined && config.think !== undefined) settings.thinkFromConfig = true;
  if (keepAliveRaw !== undefined) {
    settings.keepAlive = parseKeepAlive(keepAliveRaw, flags.keepAlive !== undefined ? '--keep-alive' : `${source}: "options.keep_alive"`);
  }
  checkToolDefinitions(settings, source);
  // Checked here, before any file is read or written, rather than when the prompt is built.
  const unknownStyle = checkStyleChoice(style, settings, shownValue);
  if (unknownStyle) {
    const given = unknownStyle.key === 'mode' ? flags.mode !== undefined : flags.persona !== undefined;
    throw new UsageError(`${given ? `--${unknownStyle.key}` : `${source}: "${unknownStyle.key}"`}: ${unknownStyle.message.slice(unknownStyle.key.length + 2)}`);
  }
  for (const setting of TURN_SETTINGS) if (!uses.includes(setting)) markUnread(settings, TURN_FIELDS[setting]);
  return settings;
}

/** config.json without the keys of the turn settings a command does not use. */
function withoutUnused(config: ConfigFile, uses: readonly TurnSetting[]): ConfigFile {
  const { session, defaultReplay, model, ...rest } = config;
  return {
    ...rest,
    ...(uses.includes('session') && session !== undefined ? { session } : {}),
    ...(uses.includes('replay') && defaultReplay !== undefined ? { defaultReplay } : {}),
    ...(uses.includes('model') && model !== undefined ? { model } : {}),
  };
}

/**
 * A field of a setting the command said it does not use holds a default, never the value meant: read
 * anyway, it fails loudly rather than act on that default. Not enumerable, so a spread leaves it out.
 */
function markUnread(settings: Settings, fields: readonly (keyof Settings)[]): void {
  for (const field of fields) {
    Object.defineProperty(settings, field, {
      enumerable: false,
      get(): never {
        throw new Error(`settings.${field} was read by a command that does not use it (name it in the command's TurnSetting list)`);
      },
    });
  }
}

/** config.json's toolBudgets in force: one under MIN_TOOL_BUDGET that an earlier version took counts as MIN_TOOL_BUDGET. */
function toolBudgetsOf(budgets: Readonly<Record<string, number>>, source: string): Pick<AgentSettings, 'toolBudgets' | 'raisedBudgets'> {
  const entries = Object.entries(budgets);
  for (const [tool, chars] of entries) {
    if (chars < EARLIER_MIN_TOOL_BUDGET) throw new UsageError(`${source}: ${JSON.stringify(`toolBudgets.${tool}`)} must be at least ${EARLIER_MIN_TOOL_BUDGET} (${EARLIER_MIN_TOOL_BUDGET} to ${MIN_TOOL_BUDGET - 1} count as ${MIN_TOOL_BUDGET}), got ${chars}`);
  }
  return {
    // fromEntries, not assignment: a tool named __proto__ keeps its budget.
    toolBudgets: Object.fromEntries(entries.map(([tool, chars]) => [tool, Math.max(chars, MIN_TOOL_BUDGET)])),
    raisedBudgets: entries.filter(([, chars]) => chars < MIN_TOOL_BUDGET).map(([tool]) => tool),
  };
}

/** --tools replaces config's list, except one that only takes away (`-T -shell`): that trims it. */
function toolsOf(flags: readonly string[] | undefined, config: readonly string[] | undefined, source: string): string[] {
  if (flags === undefined) return [...(config ?? [])];
  if (!takesAwayOnly(flags)) return [...flags];
  if (config === undefined || config.length === 0) {
    throw new UsageError(`--tools ${flags.join(',')} only takes tools away, and ${source} has no "tools" to take them from; name what to keep too, e.g. --tools dev,-shell`);
  }
  return [...config, ...flags];
}

/**
 * A model name as the user gave it (`where`: --model, ARGO_MODEL, config's "model", chat's /model):
 * sent and logged as is, so an empty one, or one with a space or a control character (a slip,
 * never a model Ollama has), is a usage error.
 */
export function checkModelName(name: string, where: string): string {
  if (name.trim() === '') throw new UsageError(`${where} is empty: name a model (ollama list shows them), or leave it out for "argo"`);
  if (/\s/.test(name) || name.search(CONTROLS) !== -1) {
    throw new UsageError(`${where}: a model name has no spaces or control characters (ollama list shows the names, e.g. llama3.2)`);
  }
  return name;
}

/** Reads and validates config.json; {} when there is none. */
export function readConfigFile(path: string): ConfigFile {
  let bytes: Buffer;
  try {
    // A link is followed (dotfiles are often links), when it and the file are the user's own; a named pipe is never waited on.
    bytes = readDataBytes(path, { followLink: true });
  } catch (error) {
    if (isMissing(error) || errnoOf(error) === 'ENOTDIR') {
      // A link to nothing is a file kept elsewhere and lost (a moved dotfiles folder): never the defaults unsaid.
      const target = linkTarget(path);
      if (target !== null) throw new UsageError(`${path} is a link to ${shownPath(target)}, which does not exist: put the file back there, or remove the link to use the defaults`, { cause: error });
      if (isMissing(error)) return {};
      throw new UsageError(notAFolder(dirname(path)), { cause: error });
    }
    if (error instanceof NotRegularFileError) throw new UsageError(`${path} is ${error.kind}; config.json must be a file or a link to one (move it out of the way)`, { cause: error });
    // Another user's config.json would run their commands as this user: said as a config problem.
    if (error instanceof UntrustedFileError || error instanceof ForeignLinkError) throw new UsageError(error.message, { cause: error });
    // A data home this user cannot enter is the home's trouble, not its config.json's.
    const closed = errnoOf(error) === 'EACCES' ? closedFolder(dirname(path)) : null;
    if (closed !== null) throw new RuntimeError(closedHome(dirname(path), closed), { cause: error });
    throw new UsageError(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    const line = bytes.subarray(0, decoded.offset).filter((byte) => byte === 0x0a).length + 1;
    throw new UsageError(notUtf8(`line ${line} of ${path}`, decoded, `iconv -f latin1 -t utf-8 ${shellWord(path)} > config.utf8 && mv config.utf8 ${shellWord(path)}`));
  }
  const text = decoded.text;
  let parsed: unknown;
  // Some editors start a UTF-8 file with a byte order mark; JSON.parse would refuse it, invisibly.
  const json = text.replace(/^\uFEFF/, '');
  try {
    parsed = JSON.parse(json);
  } catch {
    // Not V8's message, nor the error as a cause: it quotes the text around the fault, an API key with it.
    throw new UsageError(`${path} is not valid JSON${jsonFaultPlace(json)}; fix or remove it`);
  }
  checkShape(parsed, CONFIG_SHAPE, '', path);
  return parsed as ConfigFile;
}

/** The line for a data home this user cannot enter (closedFolder), with the fix. */
function closedHome(home: string, closed: Exclude<ReturnType<typeof closedFolder>, null>): string {
  const elsewhere = 'set ARGO_HOME or --home to a folder of your own';
  if (closed === 'above') return `the data home ${shownPath(home)} cannot be reached: a folder above it is closed to you; ${elsewhere}`;
  const mode = closed.mode.toString(8);
  if (closed.owner === process.getuid?.()) return `the data home ${shownPath(home)} is closed to you (mode ${mode}); open it (chmod u+rwx ${shellWord(home)}), or ${elsewhere}`;
  return `the data home ${shownPath(home)} is not open to you: it belongs to another user (uid ${closed.owner}, mode ${mode}); ${elsewhere}`;
}

/** Where the link at `path` points (made absolute), or null when `path` is no link. */
function linkTarget(path: string): string | null {
  try {
    return lstatSync(path).isSymbolicLink() ? resolve(dirname(path), readlinkSync(path)) : null;
  } catch {
    return null;
  }
}

/** Why the data home cannot be a folder (ENOTDIR): it, or the nearest of its parents there, is something else. */
function notAFolder(home: string): string {
  const fix = 'set ARGO_HOME or --home to a folder';
  for (let folder = home; ; folder = dirname(folder)) {
    let stats;
    try {
      stats = statSync(folder);
    } catch {
      // Not there, or under what is not a folder: look one level up.
      if (dirname(folder) === folder) break;
      continue;
    }
    if (stats.isDirectory()) break;
    const kind = stats.isFile() ? 'a file' : fileKind(stats);
    return folder === home ? `the data home ${shownPath(home)} is ${kind}, not a folder: ${fix}` : `the data home ${shownPath(home)} cannot be made: ${shownPath(folder)} is ${kind}, not a folder; ${fix} elsewhere`;
  }
  return `the data home ${shownPath(home)} cannot be made: a part of its path is not a folder; ${fix}`;
}

/** The tool definitions of config.json (their numbers are held to their bounds by CONFIG_SHAPE). */
function checkToolDefinitions(settings: Settings, source: string): void {
  for (const [key, names] of [['toolsets', settings.agent.toolsets], ['commandTools', settings.agent.commandTools], ['mcpServers', settings.agent.mcpServers]] as const) {
    for (const name of Object.keys(names)) checkDefinedName(key, name, source);
  }
  for (const [name, server] of Object.entries(settings.agent.mcpServers)) {
    // Other tools' configs often say "type": "stdio"; a remote server (http, sse) is not supported.
    if (server.type !== undefined && server.type !== 'stdio') throw new UsageError(`${source}: "mcpServers.${name}.type" is ${shownValue(server.type)}: only stdio servers (a command Argo starts) are supported`);
    for (const remote of ['url', 'headers'] as const) {
      if (server[remote] !== undefined) throw new UsageError(`${source}: "mcpServers.${name}.${remote}" is a remote server's: only stdio servers (a command Argo starts) are supported; give "command" and "args" instead`);
    }
    if (typeof server.command !== 'string' || server.command === '') throw new UsageError(`${source}: "mcpServers.${name}.command" is missing: name the program that starts the server`);
    checkGivenPath(server.command, `${source}: "mcpServers.${name}.command"`, 'name the program that starts the server');
    // Relative to the tools root: an empty one would be the root itself, unasked.
    if (server.cwd !== undefined) checkGivenPath(server.cwd, `${source}: "mcpServers.${name}.cwd"`, 'name the folder the server starts in, or leave "cwd" out for the tools root');
  }
  for (const [name, tool] of Object.entries(settings.agent.commandTools)) {
    if (typeof tool.description !== 'string' || !Array.isArray(tool.argv)) throw new UsageError(`${source}: "commandTools.${name}" needs "description" and "argv"`);
    // An empty name would count as found and fail only when the model calls the tool.
    if (tool.argv[0] === '') throw new UsageError(`${source}: "commandTools.${name}.argv" starts with an empty string; its first element names the command, e.g. ["git", "log"]`);
    // The program is the user's choice, never the model's: a placeholder there would let it run anything.
    if (ARGV_PLACEHOLDER.test(tool.argv[0] ?? '')) throw new UsageError(`${source}: "commandTools.${name}.argv" has a placeholder in its first element, which names the command; write the program itself there, e.g. ["git", "log", "{ref}"]`);
    if (tool.requires?.includes('') === true) throw new UsageError(`${source}: "commandTools.${name}.requires" has an empty string; list binary names or paths, e.g. ["git"]`);
  }
}

/** A placeholder in a command tool's argv (`{name}`), filled from the model's arguments. */
export const ARGV_PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/;

/**
 * What a command tool may be named: OpenAI's rule for function names (its name is sent to the model
 * as one), typed in --tools, printed by argo tools.
 */
const DEFINED_NAME = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;
/** A toolset or MCP server name is never sent to the model: a "." is fine there (an MCP server named github.com). */
const LISTED_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;

function checkDefinedName(key: 'toolsets' | 'commandTools' | 'mcpServers', name: string, source: string): void {
  const where = `${source}: ${key}.${quotedName(name)}`;
  if (name === '') throw new UsageError(`${where} has an empty name; name it (letters, digits, "_", "-")`);
  if (name === NO_TOOLS) throw new UsageError(`${where}: "${NO_TOOLS}" means no tools in --tools and "tools"; choose another name`);
  if (key === 'toolsets' && name.startsWith('mcp:')) throw new UsageError(`${where}: names starting with "mcp:" are MCP servers (define it under mcpServers)`);
  const toModel = key === 'commandTools';
  if ((toModel ? DEFINED_NAME : LISTED_NAME).test(name)) return;
  const why = name.startsWith(EXCLUDE_PREFIX) ? `a leading "${EXCLUDE_PREFIX}" takes a name away in --tools` : name.includes(',') ? '"," separates names in --tools' : toModel ? 'it is typed in --tools and sent to the model' : 'it is typed in --tools';
  throw new UsageError(`${where}: a name is 1 to 64 letters, digits, ${toModel ? '' : '".", '}"_" or "-", not starting with "-" or "." (${why}); rename it`);
}

const DURATION = /^-?(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
const NANOSECONDS: Readonly<Record<string, number>> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 6e10, h: 3.6e12 };
/** Go's time.ParseDuration refuses a duration past int64 nanoseconds (about 2562047h, 292 years): Ollama then refuses every request. */
const LONGEST_DURATION_NS = 2 ** 63 - 1;

/**
 * The most whole seconds Ollama reads as a number: api.Duration.UnmarshalJSON multiplies them into
 * int64 nanoseconds as a float64, which overflows past 2^63 (9223372036.85 s), and the model is then
 * unloaded after every request.
 */
const LONGEST_SECONDS = 9223372036;

/** Ollama takes seconds as a number or a Go duration string ("10m", "1h30m"); negative keeps the model loaded. */
export function parseKeepAlive(value: string | number, where: string): string | number {
  if (typeof value === 'number') return withinSeconds(value, value, where);
  const text = value.trim();
  if (/^-?\d+$/.test(text)) return withinSeconds(Number(text), value, where);
  if (DURATION.test(text)) {
    const nanoseconds = [...text.matchAll(DURATION_PART)].reduce((sum, [, amount = '0', unit = 's']) => sum + Number(amount) * (NANOSECONDS[unit] ?? 1), 0);
    if (nanoseconds > LONGEST_DURATION_NS) throw new UsageError(`${where} ${shownValue(value)} is longer than Ollama takes (2562047h at most); use -1 to keep the model loaded`);
    return text;
  }
  throw new UsageError(`${where} must be seconds or a duration like 10m, 1h or -1, got ${shownValue(value)}`);
}

/** Whole seconds as Ollama can read them, or the refusal naming the bound. */
function withinSeconds(seconds: number, value: string | number, where: string): number {
  if (seconds > LONGEST_SECONDS) {
    throw new UsageError(`${where} ${shownValue(value)} is longer than Ollama takes (${LONGEST_SECONDS} seconds at most); use -1 to keep the model loaded`);
  }
  return seconds;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}

function mergeDeep<T>(base: T, override: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(override)) return (override === undefined ? structuredClone(base) : override) as T;
  const result: Record<string, unknown> = structuredClone(base);
  for (const [key, value] of Object.entries(override)) {
    result[key] = Object.hasOwn(result, key) ? mergeDeep(result[key], value) : value;
  }
  return result as T;
}
