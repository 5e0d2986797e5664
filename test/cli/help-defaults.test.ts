// `argo --help` says where each value comes from when the flag is not given, and what it says is
// what settings do: each row's help words, then the default and a config.json (or environment)
// value that wins over it.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { processIo } from '../../src/cli/io.js';
import { loadSettings } from '../../src/config/settings.js';
import type { Settings } from '../../src/config/settings.js';

function settings(config: unknown, env: Record<string, string> = {}): Settings {
  const home = mkdtempSync(join(tmpdir(), 'argo-help-'));
  writeFileSync(join(home, 'config.json'), JSON.stringify(config));
  return loadSettings({ home }, env);
}

describe('the help of the question options tells where their defaults come from', () => {
  it.each<[string, string, (s: Settings) => unknown, unknown, { config?: unknown; env?: Record<string, string> }, unknown]>([
    ['--model', '(default: the session\'s last model, then ARGO_MODEL, config, "argo")', (s) => s.model, 'argo', { config: { model: 'c' }, env: { ARGO_MODEL: 'e' } }, 'e'],
    ['--session', '(ARGO_SESSION, config, default "default")', (s) => s.session, 'default', { config: { session: 'c' } }, 'c'],
    ['--budget', '(config "replay.budget", default 5500)', (s) => s.replay.budget, 5500, { config: { replay: { budget: 900 } } }, 900],
    ['--persona', '(config, default "neutral")', (s) => s.persona, 'neutral', { config: { persona: 'teacher' } }, 'teacher'],
    ['--verbosity', '(config, default auto)', (s) => s.verbosity, 'auto', { config: { verbosity: 'short' } }, 'short'],
    ['--mode', '(config "mode", default none)', (s) => s.mode, null, { config: { mode: 'code' } }, 'code'],
    ['--api', '(config, default chat)', (s) => s.api, 'chat', { config: { api: 'generate' } }, 'generate'],
    ['--host', '(OLLAMA_HOST, config, default 127.0.0.1:11434)', (s) => s.host, 'http://127.0.0.1:11434', { config: { host: '10.0.0.2' } }, 'http://10.0.0.2:11434'],
    ['--max-iterations', '(config "maxIterations", default 10)', (s) => s.agent.maxIterations, 10, { config: { maxIterations: 4 } }, 4],
  ])('%s: %s', async (flag, words, pick, fallback, given, overridden) => {
    const program = await buildProgram(processIo(), () => undefined, []);
    const option = program.options.find((candidate) => candidate.long === flag);
    expect(option?.description).toContain(words);
    expect(pick(settings({}))).toEqual(fallback);
    expect(pick(settings(given.config ?? {}, given.env))).toEqual(overridden);
  });
});
