// config.json and the environment, for generated files near a full one: settings are loaded, or
// refused with one UsageError line naming what was wrong, never a TypeError or a stack.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { UsageError } from '../../src/errors.js';
import { hostileText, runs } from '../support/property.js';
import { mutationsOf, showValue } from '../support/schema-agreement.js';

/** A config.json with every key set to a value it takes (docs/configuration.md, docs/agent.md). */
const FULL = {
  model: 'llama3.2',
  session: 'work',
  host: 'http://127.0.0.1:11434',
  think: 'high',
  api: 'chat',
  persona: 'teacher',
  verbosity: 'auto',
  mode: 'code',
  defaultReplay: 'last:3',
  options: { temperature: 0.2, seed: 42, num_ctx: 8192, keep_alive: '10m' },
  replay: {
    budget: 4000,
    protectedTurns: 2,
    filters: { continuation: ['question', 'instruction'], clarification: ['question'], session: ['instruction'] },
    strongMinTurns: 2,
    classify: { meta: ['recap'], correction: ['actually'], questionOpeners: ['what'], instructionVerbs: ['write'], politePrefixes: ['please'] },
    clarification: ['what do you mean'],
    confidence: { strong: 'Answer.', moderate: 'Careful.', weak: 'Unsure.' },
  },
  personas: { pirate: 'Talk like a pirate.' },
  modes: { sql: 'You write SQL.' },
  verbosityRules: { short: 'Short.', long: 'Long.', longPhrases: ['explain'], longInputChars: 200 },
  stream: { flushChunks: 5, flushMs: 20 },
  retries: { attempts: 2, initialDelayMs: 100 },
  timeouts: { idleMs: 60_000, lockWaitMs: 5_000 },
  serve: { apiKey: 'secret', maxBodyBytes: 1_000_000, shutdownGraceMs: 5_000, jobRetentionDays: 7 },
  tools: ['fs', 'git-log'],
  toolsets: { mine: { tools: ['read_file'], includes: ['fs'] } },
  commandTools: { 'git-log': { description: 'Recent commits', argv: ['git', 'log', '-n', '{count}'], parameters: { type: 'object', properties: { count: { type: 'integer' } } }, requires: ['git'], sideEffects: false, timeoutMs: 10_000 } },
  mcpServers: { github: { command: 'npx', args: ['-y', 'server'], env: { TOKEN: 'x' }, cwd: '/tmp', type: 'stdio' } },
  toolBudgets: { read_file: 20_000 },
  toolTimeouts: { shell: 30_000 },
  passSecrets: ['GITHUB_TOKEN'],
  maxIterations: 8,
};

/** Words the settings take somewhere, so that a change may also be right. */
const WORDS = ['chat', 'generate', 'auto', 'short', 'long', 'none', 'session', 'last:2', 'last:0', 'on', 'off', 'max', 'neutral', 'code', 'stdio', 'http', '10m', '-1', '~', '~user', '-shell', 'mcp:x', 'a,b', 'fs', 'question', 'meta', 'riddle', 'http://[::1]:80', 'user@host', '{count}'];
const FIELDS = [...Object.keys(FULL), 'budget', 'protectedTurns', 'filters', 'tools', 'includes', 'argv', 'description', 'command', 'type', 'timeoutMs', 'keep_alive', 'num_ctx', 'a\nb', '__proto__', 'constructor'];

const dir = mkdtempSync(join(tmpdir(), 'argo-settings-property-'));

/** Settings loaded from `text` as config.json, or the error that refused it. */
function loaded(text: string, env: Record<string, string>): { settings: unknown } | { error: unknown } {
  const home = mkdtempSync(join(dir, 'home-'));
  writeFileSync(join(home, 'config.json'), text);
  try {
    return { settings: loadSettings({ home }, env) };
  } catch (error) {
    return { error };
  }
}

/** Refused with a UsageError of one line, or loaded. */
function expectCleanRefusal(result: { settings: unknown } | { error: unknown }, shown: string): void {
  if (!('error' in result)) return;
  expect(result.error, `${shown}: ${String(result.error)}`).toBeInstanceOf(UsageError);
  expect((result.error as Error).message, shown).not.toMatch(/[\n\r]/);
}

const env = fc.record(
  {
    ARGO_MODEL: fc.oneof(fc.constantFrom('qwen3', 'a b', ''), hostileText(2)),
    ARGO_SESSION: fc.oneof(fc.constantFrom('work', '.x', ''), hostileText(2)),
    ARGO_REPLAY: fc.oneof(fc.constantFrom('session', 'last:2', 'all', ''), hostileText(2)),
    OLLAMA_HOST: fc.oneof(fc.constantFrom(':1234', 'ollama.com', 'ftp://x', 'u:p@h', ''), hostileText(2)),
    ARGO_API_KEY: hostileText(2),
  },
  { requiredKeys: [] },
);

describe('config.json', () => {
  it('the full example loads', () => {
    expect('settings' in loaded(JSON.stringify(FULL), {})).toBe(true);
  });

  it('loads, or refuses on one line with a UsageError, a config one to three changes away from a full one', () => {
    fc.assert(
      fc.property(mutationsOf(fc.constant(FULL), WORDS, FIELDS), env, (config, vars) => {
        const text = JSON.stringify(config) as string | undefined;
        if (text === undefined) return;
        expectCleanRefusal(loaded(text, vars), `${showValue(config)} ${JSON.stringify(vars)}`);
      }),
      runs(300),
    );
  });

  it('refuses any other JSON value or text the same way', () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)), hostileText(8), fc.constant('\ufeff{}')), (text) => {
        expectCleanRefusal(loaded(text, {}), JSON.stringify(text));
      }),
      runs(150),
    );
  });
});
