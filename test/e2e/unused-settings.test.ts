// A bad ARGO_SESSION, ARGO_REPLAY or ARGO_MODEL stops only the commands that use it (docs/configuration.md).
import { beforeAll, describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile({ models: [{ name: 'argo:latest' }] });
const home = tempHome();
let turnId = '';

beforeAll(async () => {
  expect(await runArgo(['-s', 'work', 'Hello'], { home, host: ollama.url })).toMatchObject({ code: 0 });
  turnId = String(logLines(home)[0]?.id);
});

const BAD = {
  ARGO_SESSION: { value: 'bad name', message: 'argo: ARGO_SESSION: invalid session name "bad name"' },
  ARGO_REPLAY: { value: 'bogus', message: 'argo: ARGO_REPLAY must be none, session or last:N, got "bogus"' },
  ARGO_MODEL: { value: 'a b', message: 'argo: ARGO_MODEL: a model name has no spaces or control characters' },
} as const;
type Variable = keyof typeof BAD;

/** The command, then the exit code under each bad variable. ID stands for the logged turn's id. */
const TABLE: readonly [string[], Record<Variable, number>][] = [
  [['logs', '-n', '1'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['logs', 'check'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['sessions'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['sessions', 'show', 'work'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['memo'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['tools'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['stop', '--status'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['export', '--format', 'sharegpt', '--all'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  // -s names the session; without it `last` reads ARGO_SESSION.
  [['last', '-s', 'work'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['last'], { ARGO_SESSION: 2, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  // The logged turn gives its session, model and replay.
  [['rerun', 'ID', '--explain'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  // A question uses each one that no flag overrides.
  [['--explain', 'q'], { ARGO_SESSION: 2, ARGO_REPLAY: 2, ARGO_MODEL: 2 }],
  [['-s', 'work', '--replay', 'none', '-m', 'argo', '--explain', 'q'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  // A Tab's completion reads none of them: the names still come.
  [['__complete', 'sessions'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  [['__complete', 'models'], { ARGO_SESSION: 0, ARGO_REPLAY: 0, ARGO_MODEL: 0 }],
  // doctor reports it as its failed config check.
  [['doctor'], { ARGO_SESSION: 1, ARGO_REPLAY: 1, ARGO_MODEL: 1 }],
];

describe('a bad ARGO_SESSION, ARGO_REPLAY or ARGO_MODEL', () => {
  const cases = TABLE.flatMap(([args, codes]) => (Object.keys(BAD) as Variable[]).map((variable) => [args.join(' '), variable, codes[variable], args] as const));
  it.each(cases)('argo %s with %s bad exits %i', async (_shown, variable, code, args) => {
    const result = await runArgo(
      args.map((arg) => (arg === 'ID' ? turnId : arg)),
      { home, host: ollama.url, env: { [variable]: BAD[variable].value } },
    );
    expect(result.code, result.stderr).toBe(code);
    // Stopped by the variable, the command names it; otherwise it is not mentioned.
    if (code === 0) expect(result.stderr).not.toContain(variable);
    else expect(result.stderr).toContain(BAD[variable].message.slice('argo: '.length));
    if (args[0] === '__complete') expect(result.stdout).toBe(args[1] === 'sessions' ? 'work\n' : 'argo:latest\n');
  });
});
