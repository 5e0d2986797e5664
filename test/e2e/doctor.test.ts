// `argo doctor` end to end: the built binary against the Ollama stand-in.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Command, Option } from 'commander';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { format } from 'date-fns/format';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { DAY_PATTERN } from '../../src/log/timestamp.js';
import { thisProcess, writeUnfinished } from '../../src/log/unfinished.js';
import { makeDraft } from '../query/helpers.js';
import { MODELFILE } from '../../src/ollama/fix-hints.js';
import { doctor } from '../../src/cli/doctor.js';
import type { Io } from '../../src/cli/io.js';
import { CURRENT_VERSION } from '../support/fake-ollama.js';
import type { FakeModel } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { runArgo, tempHome } from '../support/run-argo.js';
import { at } from '../support/defined.js';

const ollama = await fakeOllamaPerFile();
afterEach(() => {
  ollama.options.models = undefined;
  ollama.options.showError = undefined;
});

/** Nothing listens here: a run that ignores --host fails to reach Ollama. */
const NOWHERE = 'http://127.0.0.1:9';
/** A privileged port no test binds, and not one fetch refuses outright (as 9): the connection is refused. */
const REFUSED = 'http://127.0.0.1:2';
const argo = (home: string, args: string[], host = ollama.url) => runArgo(args, { home, host });
/** The report lines as [status, check, detail]. */
const checks = (stdout: string): [string, string, string][] =>
  stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const match = /^(ok|warn|FAIL)\s+(\S+)\s+(.*)$/.exec(line);
      if (!match) throw new Error(`not a doctor line: ${line}`);
      return [at(match, 1), at(match, 2), at(match, 3)];
    });
/** `text` as a regular expression matching it literally. */
const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const check = (stdout: string, name: string): [string, string] | undefined => {
  const found = checks(stdout).find(([, what]) => what === name);
  return found && [found[0], found[2]];
};

describe('argo doctor', () => {
  it('a healthy setup passes every check', async () => {
    const home = tempHome();
    const result = await argo(home, ['doctor']);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(checks(result.stdout).map(([status, what]) => `${status} ${what}`)).toEqual(['ok config', 'ok data', 'ok unfinished', 'ok ollama', 'ok model', 'ok endpoint']);
    expect(check(result.stdout, 'config')?.[1]).toBe(`${join(home, 'config.json')} (or defaults)`);
    expect(check(result.stdout, 'ollama')?.[1]).toBe(`Ollama ${CURRENT_VERSION} at ${ollama.url}`);
  });

  it('honours --home, --host, --model and --api given before "doctor" as well as after it; after wins', async () => {
    ollama.options.models = [{ name: 'argo' }, { name: 'other:7b' }];
    const envHome = tempHome();
    const home = tempHome({ model: 'missing' });
    const expectChosen = (result: { code: number | null; stdout: string; stderr: string }): void => {
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(check(result.stdout, 'config')).toEqual(['ok', `${join(home, 'config.json')} (or defaults)`]);
      expect(check(result.stdout, 'ollama')).toEqual(['ok', `Ollama ${CURRENT_VERSION} at ${ollama.url}`]);
      expect(check(result.stdout, 'model')).toEqual(['ok', 'other:7b is installed']);
    };
    expectChosen(await argo(envHome, ['--home', home, '--host', ollama.url, '--model', 'other:7b', 'doctor'], NOWHERE));
    expectChosen(await argo(envHome, ['--home', home, '--host', ollama.url, '-m', 'other:7b', 'doctor'], NOWHERE));
    expectChosen(await argo(envHome, ['doctor', '--home', home, '--host', ollama.url, '--model', 'other:7b'], NOWHERE));
    expectChosen(await argo(envHome, ['--home', envHome, '--host', NOWHERE, '-m', 'argo', 'doctor', '--home', home, '--host', ollama.url, '-m', 'other:7b'], NOWHERE));
    for (const [args, endpoint] of [
      [['--api', 'generate', 'doctor'], '/api/generate'],
      [['doctor', '--api', 'generate'], '/api/generate'],
      [['--api', 'generate', 'doctor', '--api', 'chat'], '/api/chat'],
    ] as const) {
      expect(check((await argo(envHome, [...args], ollama.url)).stdout, 'endpoint')?.[1]).toMatch(new RegExp(`^${endpoint} `));
    }
  });

  it('doctor(flags, io, command) reads the options given to the commands above it', async () => {
    // Mirrors how main.ts registers the command; the data directory and host come only from flags.
    const saved = { ARGO_HOME: process.env.ARGO_HOME, OLLAMA_HOST: process.env.OLLAMA_HOST, ARGO_MODEL: process.env.ARGO_MODEL };
    const envHome = mkdtempSync(join(tmpdir(), 'argo-doctor-'));
    process.env.ARGO_HOME = envHome;
    process.env.OLLAMA_HOST = NOWHERE;
    delete process.env.ARGO_MODEL;
    try {
      const home = tempHome();
      let out = '';
      const io = { stdout: { write: (text: string) => (out += text) } } as unknown as Io;
      const codes: string[] = [];
      const program = new Command('argo')
        .argument('[prompt...]')
        .option('-m, --model <name>')
        .addOption(new Option('--api <endpoint>').choices(['chat', 'generate']))
        .option('--host <url>')
        .option('--home <dir>')
        .action(() => undefined);
      program.enablePositionalOptions();
      program
        .command('doctor')
        .option('--home <dir>')
        .option('--host <url>')
        .option('-m, --model <name>')
        .action(async (flags: object, command: Command) => {
          codes.push(await doctor(flags, io, command));
        });
      await program.parseAsync(['--home', home, '--host', ollama.url, '-m', 'argo', 'doctor'], { from: 'user' });
      expect(codes).toEqual(['ok']);
      expect(check(out, 'config')?.[1]).toBe(`${join(home, 'config.json')} (or defaults)`);
      expect(check(out, 'ollama')?.[0]).toBe('ok');
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) Reflect.deleteProperty(process.env, key);
        else process.env[key] = value;
      }
    }
  });

  it.each<[string, FakeModel[], 'ok' | 'FAIL']>([
    ['chat', [{ name: 'argo' }], 'ok'],
    ['generate', [{ name: 'argo' }], 'ok'],
    ['chat', [{ name: 'argo', capabilities: ['embedding'] }], 'FAIL'],
    ['generate', [{ name: 'argo', capabilities: ['embedding'] }], 'FAIL'],
  ])('the endpoint check needs the completion capability for /api/%s (%j → %s)', async (api, models, status) => {
    ollama.options.models = models;
    const home = tempHome({ api });
    const result = await argo(home, ['doctor']);
    expect(result.code).toBe(status === 'ok' ? 0 : 1);
    const [got, detail] = check(result.stdout, 'endpoint') ?? [];
    expect(got).toBe(status);
    if (status === 'ok') expect(detail).toBe(`/api/${api} (model capabilities: completion)`);
    else expect(detail).toBe(`/api/${api} needs the "completion" capability, which argo does not have (model capabilities: embedding); choose another model with --model`);
  });

  it.each<[string, FakeModel[], boolean]>([
    ['argo', [{ name: 'argo' }], true],
    ['ARGO', [{ name: 'argo' }], true],
    ['argo:latest', [{ name: 'argo' }], true],
    ['library/argo', [{ name: 'argo' }], true],
    ['Library/Argo:Latest', [{ name: 'argo' }], true],
    ['registry.ollama.ai/library/argo:latest', [{ name: 'argo' }], true],
    ['https://registry.ollama.ai/library/argo', [{ name: 'argo' }], true],
    ['registry:5000/team/x', [{ name: 'registry:5000/team/x' }], true],
    ['registry:5000/team/x:latest', [{ name: 'registry:5000/team/x' }], true],
    ['me/argo', [{ name: 'me/argo:v2' }, { name: 'argo' }], false],
    ['argo', [{ name: 'argo:7b' }], false],
    ['argo:7b', [{ name: 'argo' }], false],
    ['registry:5000/team/x', [{ name: 'team/x' }], false],
  ])('--model %s with %j installed: found = %s', async (model, models, found) => {
    ollama.options.models = models;
    const result = await argo(tempHome(), ['doctor', '--model', model]);
    expect(result.code).toBe(found ? 0 : 1);
    const [status, detail] = check(result.stdout, 'model') ?? [];
    expect(status).toBe(found ? 'ok' : 'FAIL');
    expect(detail).toMatch(found ? `${model} is installed` : `${model} is not installed (installed: `);
    expect(check(result.stdout, 'endpoint')?.[0]).toBe(found ? 'ok' : undefined);
  });
});

describe('argo doctor when /api/show fails for an installed model', () => {
  it('reports the model once, installed, and the endpoint as not checkable, saying why; --json has one entry per check', async () => {
    ollama.options.showError = 'show exploded';
    const detail = `/api/chat cannot be checked: the capabilities of argo are unknown, as /api/show failed (Ollama at ${ollama.url} answered HTTP 500: show exploded); "ollama show argo" says why, and if it fails there too, create it with "ollama create argo -f ${MODELFILE}" again`;
    const home = tempHome();
    const result = await argo(home, ['doctor']);
    expect(result.code).toBe(1);
    expect(checks(result.stdout).map(([status, what]) => `${status} ${what}`)).toEqual(['ok config', 'ok data', 'ok unfinished', 'ok ollama', 'ok model', 'FAIL endpoint']);
    expect(check(result.stdout, 'model')).toEqual(['ok', 'argo is installed']);
    expect(check(result.stdout, 'endpoint')).toEqual(['FAIL', detail]);
    expect(result.stderr).toBe(`argo: doctor: the endpoint check failed: ${detail}\n`);
    const json = await argo(home, ['doctor', '--json']);
    const report = JSON.parse(json.stdout) as { checks: { check: string; ok: boolean; detail: string }[] };
    expect(report.checks.map(({ check: name, ok }) => [name, ok])).toEqual([['config', true], ['data', true], ['unfinished', true], ['ollama', true], ['model', true], ['endpoint', false]]);
    expect(report.checks.at(-1)?.detail).toBe(detail);
  });
});

describe("argo doctor checks config.json's tools as a question would", () => {
  it.each<[string, unknown, string | null]>([
    ['no tools in config: no line', {}, null],
    ['a list that resolves', { tools: ['fs', 'memo'] }, 'ok config.json: "tools" gives list_files, memo, read_file, search_files'],
    ['definitions, no list', { toolsets: { mine: { tools: ['read_file'] } } }, 'ok its definitions are sound; none is used without --tools'],
    ['a toolset named like a built-in tool', { tools: ['fs'], toolsets: { read_file: { tools: ['list_files'] } } }, 'FAIL config.json: toolsets."read_file" has the name of a built-in tool; choose another name'],
    ['an unknown name', { tools: ['nosuch'] }, 'FAIL config.json: "tools": unknown toolset or tool "nosuch";'],
    ['a command tool whose schema is broken', { commandTools: { count: { description: 'count lines', argv: ['wc', '-l'], parameters: { type: 'object', properties: {}, required: 'count' } } } }, 'FAIL config.json: commandTools."count".parameters'],
  ])('%s', async (_case, config, expected) => {
    // A model that can call tools: the endpoint check passes whenever the tools do.
    ollama.options.models = [{ name: 'argo', capabilities: ['completion', 'tools'] }];
    const home = tempHome();
    writeFileSync(join(home, 'config.json'), JSON.stringify(config));
    const result = await argo(home, ['doctor']);
    const line = check(result.stdout, 'tools');
    if (expected === null) {
      expect(line).toBeUndefined();
      expect(result.code).toBe(0);
      return;
    }
    const shown = line === undefined ? '' : `${line[0]} ${line[1].replace(`${home}/`, '')}`;
    expect(shown.startsWith(expected), shown).toBe(true);
    expect(result.code).toBe(expected.startsWith('ok') ? 0 : 1);
  });
});

describe("argo doctor checks the model against what config.json turns on, as a turn would be refused", () => {
  it.each<[string, Record<string, unknown>, string[], [string, string], RegExp | null]>([
    [
      'tools on, a model without them: every turn is refused',
      { tools: ['fs'] },
      ['completion'],
      ['FAIL', 'tools are on (config.json: "tools") and need the "tools" capability, which argo does not have (model capabilities: completion); choose a model that has it with --model ("ollama show MODEL" lists its capabilities), or remove "tools" from config.json'],
      /does not support tools/,
    ],
    ['tools on, a model that has them', { tools: ['fs'] }, ['completion', 'tools'], ['ok', '/api/chat with tools (model capabilities: completion, tools)'], null],
    [
      'tools on, /api/generate',
      { tools: ['fs'], api: 'generate' },
      ['completion', 'tools'],
      ['FAIL', 'tools are on (config.json: "tools") and need /api/chat, not /api/generate: drop --api generate (or "api" in config.json), or remove "tools" from config.json'],
      /--tools needs the chat endpoint/,
    ],
    // config.json's "think" is a default for every model: one that cannot think is not sent it.
    ['"think" on, a model that cannot think: it is not sent', { think: 'high' }, ['completion'], ['ok', '/api/chat (model capabilities: completion)'], null],
  ])('%s', async (_case, config, capabilities, endpoint, refused) => {
    ollama.options.models = [{ name: 'argo', capabilities }];
    const home = tempHome();
    writeFileSync(join(home, 'config.json'), JSON.stringify(config));
    const result = await argo(home, ['doctor']);
    const [status = '', detail = ''] = check(result.stdout, 'endpoint') ?? [];
    expect([status, detail.replace(`${home}/`, '')]).toEqual(endpoint);
    expect(result.code).toBe(endpoint[0] === 'ok' ? 0 : 1);
    // What doctor said is what a question finds.
    const asked = await argo(home, ['hello']);
    if (refused === null) expect(asked).toMatchObject({ code: 0, stderr: '' });
    else expect(asked.stderr).toMatch(refused);
  });
});

describe('a failing argo doctor ends with one argo: line on stderr', () => {
  it('names the failed check and its fix; the report stays on stdout; exit 1', async () => {
    const result = await argo(tempHome(), ['doctor', '-m', 'nope']);
    expect(result.code).toBe(1);
    expect(checks(result.stdout).map(([status, what]) => `${status} ${what}`)).toEqual(['ok config', 'ok data', 'ok unfinished', 'ok ollama', 'FAIL model']);
    expect(result.stderr).toBe(`argo: doctor: the model check failed: ${check(result.stdout, 'model')?.[1] ?? ''}\n`);
    expect(result.stderr).toMatch(/; pull it with "ollama pull nope", or use an installed one \(--model argo:latest\)\n$/);
  });

  it('with several failures, counts and names them all, and gives the first one’s fix', async () => {
    const home = tempHome();
    // logs/ taken by a file: the data check fails, and the run goes on to the model.
    writeFileSync(join(home, 'logs'), '');
    const result = await argo(home, ['doctor', '-m', 'nope']);
    expect(result.code).toBe(1);
    expect(checks(result.stdout).filter(([status]) => status === 'FAIL').map(([, what]) => what)).toEqual(['data', 'model']);
    expect(result.stderr).toBe(`argo: doctor: 2 checks failed (data, model); data: ${check(result.stdout, 'data')?.[1] ?? ''}\n`);
    expect(result.stderr).toMatch(/logs is not a folder; Argo keeps its data in folders \(set ARGO_HOME or --home to one\)\n$/);
  });

  it('a check that stops the run (Ollama unreachable) is the one named', async () => {
    const result = await argo(tempHome(), ['doctor'], REFUSED);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`argo: doctor: the ollama check failed: cannot reach Ollama at ${REFUSED} (connection refused); start it with "ollama serve", or set --host / OLLAMA_HOST to where it runs\n`);
  });

  it('--json: the object alone on stdout, the one line on stderr', async () => {
    const result = await argo(tempHome(), ['doctor', '--json', '-m', 'nope']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: { check: string; ok: boolean }[] };
    expect(report).toMatchObject({ ok: false, checks: [{ check: 'config', ok: true }, { check: 'data', ok: true }, { check: 'unfinished', ok: true }, { check: 'ollama', ok: true }, { check: 'model', ok: false }] });
    expect(result.stderr).toMatch(/^argo: doctor: the model check failed: nope is not installed [^\n]+\n$/);
  });

  it('a passing doctor writes nothing on stderr', async () => {
    expect(await argo(tempHome(), ['doctor', '--json'])).toMatchObject({ code: 0, stderr: '' });
  });
});

describe.runIf(process.platform === 'linux')('argo doctor on a data home whose modes keep a turn from writing in it', () => {
  // Root writes whatever a mode says: as root, argo runs as nobody, in a home that is nobody's.
  const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
  const PERMISSIONS = 'check the path and its permissions (the data home is ARGO_HOME or --home)';
  /** A home with these folders, then these modes (the home's own as ''). */
  const homeWith = (folders: string[], modes: Record<string, number>): string => {
    const home = tempHome();
    for (const folder of folders) mkdirSync(join(home, folder), { mode: 0o700 });
    if (user !== undefined) {
      // The run's temporary folder is root's: nobody may pass through it, not list it.
      chmodSync(dirname(home), statSync(dirname(home)).mode | 0o001);
      for (const path of [home, ...folders.map((folder) => join(home, folder))]) chownSync(path, user.uid, user.gid);
    }
    for (const [folder, mode] of Object.entries(modes)) chmodSync(join(home, folder), mode);
    return home;
  };
  const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);

  it.each<[string, string[], Record<string, number>, (home: string) => [data: [string, string], unfinished: [string, string]]]>([
    ['a home anyone may use', [], {}, (home) => [['ok', `${home} is writable`], ['ok', 'no turn left unfinished']]],
    [
      'a home of 0500 whose logs/ and sessions/ are 0700: locks/ and unfinished/ cannot be made',
      ['logs', 'sessions'],
      { '': 0o500 },
      (home) => [
        ['FAIL', `${home} is not writable (permission denied): locks/, unfinished/ cannot be made in it, nor the memo or chat history saved; ${PERMISSIONS}`],
        ['FAIL', `${join(home, 'unfinished')} cannot be used, so a turn is not kept there while it is answered and would be lost if argo were killed first; the data check says why`],
      ],
    ],
    [
      'a home of 0500 that has every folder a turn writes',
      ['logs', 'sessions', 'locks', 'unfinished'],
      { '': 0o500 },
      (home) => [['FAIL', `${home} is not writable (permission denied): the memo and chat history cannot be saved in it; ${PERMISSIONS}`], ['ok', 'no turn left unfinished']],
    ],
    [
      'a logs/ made read-only (0555)',
      ['logs'],
      { logs: 0o555 },
      (home) => [['FAIL', `${join(home, 'logs')} is not writable (permission denied); ${PERMISSIONS}`], ['ok', 'no turn left unfinished']],
    ],
    [
      'an unfinished/ of 0500',
      ['unfinished'],
      { unfinished: 0o500 },
      (home) => [
        ['FAIL', `${join(home, 'unfinished')} is not writable (permission denied); ${PERMISSIONS}`],
        ['FAIL', `${join(home, 'unfinished')} cannot be used, so a turn is not kept there while it is answered and would be lost if argo were killed first; the data check says why`],
      ],
    ],
  ])('%s', async (_case, folders, modes, expected) => {
    const home = homeWith(folders, modes);
    const result = await runArgo(['doctor'], { home, host: ollama.url, ...(user !== undefined ? { user } : {}) });
    const [data, unfinished] = expected(home);
    expect([check(result.stdout, 'data'), check(result.stdout, 'unfinished')]).toEqual([data, unfinished]);
    const failed = [data, unfinished].filter(([status]) => status === 'FAIL').length;
    expect(result.code).toBe(failed === 0 ? 0 : 1);
    if (failed > 0) expect(result.stderr).toBe(`argo: doctor: ${failed === 1 ? 'the data check failed' : '2 checks failed (data, unfinished); data'}: ${data[1]}\n`);
    // Closed to others, never opened to its owner: a read-only folder stays read-only.
    if (modes.logs !== undefined) expect(mode(join(home, 'logs'))).toBe('500');
    if (data[0] === 'ok') expect(['logs', 'sessions', 'locks', 'unfinished'].map((folder) => mode(join(home, folder)))).toEqual(['700', '700', '700', '700']);
  });
});

describe("argo doctor checks the day's log file a turn appends to, and counts the turns saved aside", () => {
  const today = format(new Date(), DAY_PATTERN);
  it("a link where the day's log goes: the turn is saved aside, and doctor fails on the link and warns of the saved turn", async () => {
    const home = tempHome();
    mkdirSync(join(home, 'logs'), { mode: 0o700 });
    const dayLog = join(home, 'logs', `${today}.log`);
    symlinkSync(join(mkdtempSync(join(tmpdir(), 'argo-elsewhere-')), 'x.log'), dayLog);
    const before = await argo(home, ['doctor']);
    const link = `${dayLog} is a symbolic link; Argo does not follow links in its data home (remove the link and try again)`;
    expect([before.code, check(before.stdout, 'data'), check(before.stdout, 'rescued')]).toEqual([1, ['FAIL', link], undefined]);
    expect((await argo(home, ['hi'])).stderr).toContain(`cannot write the log: ${dayLog} is a symbolic link`);
    const after = await argo(home, ['doctor', '--json']);
    const report = JSON.parse(after.stdout) as { checks: { check: string; ok: boolean; detail: string; warning?: true }[] };
    expect(report.checks.filter((one) => one.check === 'data' || one.check === 'rescued')).toEqual([
      { check: 'data', ok: false, detail: link },
      {
        check: 'rescued',
        ok: true,
        warning: true,
        detail: `1 file in ${join(home, 'rescued')} holds a turn the log could not take: add it back to the log as docs/troubleshooting.md says ("cannot write the log"), then remove it`,
      },
    ]);
  });
});

describe('argo doctor on a turn an earlier argo saved to rescued/ and was killed before it cleared its journal', () => {
  it('is told once, on the unfinished line, not again as a rescued file; a later doctor warns of the file', async () => {
    const home = tempHome();
    // An owner on this machine whose process is gone: a child that has exited.
    const gone = spawnSync('true').pid;
    const draft = makeDraft('t0000000dead');
    await writeUnfinished(home, { owner: { ...thisProcess(), pid: gone, start: null }, day: format(new Date(), DAY_PATTERN), session: { id: null, name: 'default' }, entry: draft });
    mkdirSync(join(home, 'rescued'), { mode: 0o700 });
    writeFileSync(join(home, 'rescued', 'turns-1.ndjson'), `${JSON.stringify(draft)}\n`, { mode: 0o600 });
    const result = await argo(home, ['doctor']);
    expect(check(result.stdout, 'unfinished')).toEqual(['ok', `1 turn an earlier argo left unfinished is saved in ${join(home, 'rescued', 'turns-1.ndjson')}, not in the log: add it back as docs/troubleshooting.md says`]);
    expect(check(result.stdout, 'rescued')).toBeUndefined();
    expect(check((await argo(home, ['doctor'])).stdout, 'rescued')).toEqual(['warn', `1 file in ${join(home, 'rescued')} holds a turn the log could not take: add it back to the log as docs/troubleshooting.md says ("cannot write the log"), then remove it`]);
  });
});

describe.runIf(process.platform === 'linux')("argo doctor on a day's log file made read-only", () => {
  // Root writes whatever a mode says: as root, argo runs as nobody, in a home that is nobody's.
  const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
  it('fails naming the file and chmod 600, as the turn that could not be logged does; the file is left as it was', async () => {
    const home = tempHome();
    const logs = join(home, 'logs');
    mkdirSync(logs, { mode: 0o700 });
    const dayLog = join(logs, `${format(new Date(), DAY_PATTERN)}.log`);
    writeFileSync(dayLog, '');
    if (user !== undefined) {
      chmodSync(dirname(home), statSync(dirname(home)).mode | 0o001);
      for (const path of [home, logs, dayLog]) chownSync(path, user.uid, user.gid);
    }
    chmodSync(dayLog, 0o400);
    const as = { home, host: ollama.url, ...(user !== undefined ? { user } : {}) };
    const fix = `make it writable (chmod 600 ${dayLog})`;
    const doctorRun = await runArgo(['doctor'], as);
    expect([doctorRun.code, check(doctorRun.stdout, 'data')]).toEqual([1, ['FAIL', `${dayLog} cannot be written (permission denied); ${fix}`]]);
    expect(statSync(dayLog).mode & 0o777).toBe(0o400);
    const turn = await runArgo(['hi'], as);
    expect(turn.code).toBe(1);
    expect(turn.stderr).toMatch(new RegExp(`^argo: cannot write the log: ${escaped(dayLog)} cannot be written \\(permission denied\\); the turn was saved to \\S+ — ${escaped(fix)}, then add the saved turn back \\(docs/troubleshooting\\.md\\)\\n$`));
  });
});

describe('argo doctor tells apart nothing listening, something that is not Ollama, and an Ollama that does not answer', () => {
  /** What the server at `notOllama` answers /api/version with, and /api/tags; null: nothing, ever (a stuck Ollama). */
  type Answer = { status: number; type: string; body: string } | null;
  let answer: Answer = null;
  let tags: Answer = null;
  const server = createServer((request, response) => {
    const given = request.url === '/api/tags' ? tags : answer;
    if (given === null) return;
    response.writeHead(given.status, { 'content-type': given.type }).end(given.body);
  });
  let notOllama = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    notOllama = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const CHECK_HOST = 'check that --host / OLLAMA_HOST points at Ollama';

  it.each<[string, Answer, (host: string) => string]>([
    ['a web page', { status: 200, type: 'text/html', body: '<!DOCTYPE html><html><body>my site</body></html>' }, (host) => `something at ${host} answered, but not as Ollama does (its answer is not JSON); ${CHECK_HOST}`],
    ['a 404 page', { status: 404, type: 'text/html', body: '<html><h1>404 Not Found</h1></html>' }, (host) => `something at ${host} answered, but not as Ollama does (HTTP 404); ${CHECK_HOST}`],
    ['JSON of another server', { status: 200, type: 'application/json', body: '{"status":"up"}' }, (host) => `something at ${host} answered, but not as Ollama does (its answer names no version); ${CHECK_HOST}`],
    // Bounded as a turn's question is (5 s, or timeouts.idleMs when shorter), then said as such.
    ['no answer at all', null, (host) => `no answer from Ollama at ${host} within 0.3s (Ollama stuck, or its machine overloaded); restart Ollama, or check that machine's load`],
  ])('%s', async (_case, given, detail) => {
    answer = given;
    const result = await argo(tempHome({ timeouts: { idleMs: 300 } }), ['doctor'], notOllama);
    expect(result.code).toBe(1);
    expect(check(result.stdout, 'ollama')).toEqual(['FAIL', detail(notOllama)]);
    expect(result.stderr).toBe(`argo: doctor: the ollama check failed: ${detail(notOllama)}\n`);
  });

  it('a version, then a model list that is not Ollama\'s: the model check says so, once', async () => {
    answer = { status: 200, type: 'application/json', body: JSON.stringify({ version: CURRENT_VERSION }) };
    tags = { status: 404, type: 'text/html', body: '<html><h1>404 Not Found</h1></html>' };
    const result = await argo(tempHome(), ['doctor'], notOllama);
    expect(result.code).toBe(1);
    const detail = `cannot list the installed models: something at ${notOllama} answered, but not as Ollama does (HTTP 404); ${CHECK_HOST}`;
    expect(checks(result.stdout).map(([status, what]) => `${status} ${what}`)).toEqual(['ok config', 'ok data', 'ok unfinished', 'ok ollama', 'FAIL model']);
    expect(check(result.stdout, 'model')).toEqual(['FAIL', detail]);
  });

  it('a version, then no model list at all: the wait is bounded and said', async () => {
    answer = { status: 200, type: 'application/json', body: JSON.stringify({ version: CURRENT_VERSION }) };
    tags = null;
    const result = await argo(tempHome({ timeouts: { idleMs: 300 } }), ['doctor'], notOllama);
    expect(result.code).toBe(1);
    expect(check(result.stdout, 'model')).toEqual(['FAIL', `cannot list the installed models: no answer from Ollama at ${notOllama} within 0.3s (Ollama stuck, or its machine overloaded); restart Ollama, or check that machine's load`]);
  });
});
