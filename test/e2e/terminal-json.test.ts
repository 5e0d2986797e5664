// Request bodies and JSON on a terminal: logged prompts and answers keep no control a terminal
// would obey (C1 such as U+009B CSI, bidi overrides), escaped as \uXXXX so the JSON is still equal;
// piped, the same output is byte-exact.
import { describe, expect, it } from 'vitest';
import { startFakeOllama } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { startInPty } from '../support/pty.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const HOSTILE = 'esc \u001b]0;PWN\u0007 csi \u009b2J bidi invoice\u202efdp.exe end';
const RAW = ['\u001b]0;PWN', '\u009b', '\u202e'];
const obeyable = (output: string): string[] => RAW.filter((control) => output.includes(control));

const ollama = await fakeOllamaPerFile({ reply: HOSTILE });

/** A home whose session "work" holds one turn answered with HOSTILE. */
async function homeWithTurn(): Promise<string> {
  const home = tempHome();
  expect((await runArgo(['--session', 'work', 'question'], { home, host: ollama.url })).code).toBe(0);
  return home;
}

async function onTerminal(args: string[], home: string): Promise<{ code: number; output: string }> {
  const terminal = startInPty(args, { home, host: ollama.url, cols: 400 });
  const { code } = await terminal.exited;
  return { code, output: terminal.output };
}

/** Runs `args` on a terminal: it succeeds, and shows HOSTILE's C1 and bidi controls escaped, none raw. */
async function expectEscapedOnTerminal(args: string[], home: string): Promise<void> {
  const { code, output } = await onTerminal(args, home);
  expect(code).toBe(0);
  expect(output).toContain('csi \\u009b2J bidi invoice\\u202efdp.exe');
  expect(obeyable(output)).toEqual([]);
}

describe('--explain on a terminal shows replayed text without obeying it', () => {
  it.each([
    ['--explain', ['--session', 'work', '--replay', 'session', '--explain', 'again']],
    ['--explain --json', ['--session', 'work', '--replay', 'session', '--explain', '--json', 'again']],
  ])('%s', async (_label, args) => {
    const home = await homeWithTurn();
    await expectEscapedOnTerminal(args, home);
  });

  it.each([[[]], [['--json']]])('rerun --explain %j', async (flags) => {
    const home = await homeWithTurn();
    expect((await runArgo(['--session', 'work', '--replay', 'session', 'again'], { home, host: ollama.url })).code).toBe(0);
    const id = String(logLines(home)[1]?.id);
    await expectEscapedOnTerminal(['rerun', id, '--explain', ...flags], home);
  });

  it('piped, --explain --json is byte-exact JSON', async () => {
    const home = await homeWithTurn();
    const piped = await runArgo(['--session', 'work', '--replay', 'session', '--explain', '--json', 'again'], { home, host: ollama.url });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain('\u009b2J');
    expect(JSON.stringify(JSON.parse(piped.stdout))).toContain(JSON.stringify(HOSTILE).slice(1, -1));
  });
});

describe('JSON on a terminal is equal JSON with nothing to obey; piped it is byte-exact', () => {
  it.each([
    ['a turn with --json', ['--session', 'work', '--json', 'again']],
    ['logs --json', ['logs', '--json']],
    ['logs --json -n 5', ['logs', '--json', '-n', '5']],
    ['last --json', ['last', '-s', 'work', '--json']],
    ['sessions show --json', ['sessions', 'show', 'work', '--json']],
    ['export --all', ['export', '--format', 'sharegpt', '--all']],
  ])('%s', async (_label, args) => {
    const home = await homeWithTurn();
    await expectEscapedOnTerminal(args, home);
  });

  it('doctor --json quotes the server escaped', async () => {
    const hostile = await startFakeOllama({ version: '0.12.0\u009b2J\u202e' });
    try {
      const terminal = startInPty(['doctor', '--json'], { home: tempHome(), host: hostile.url, cols: 400 });
      await terminal.exited;
      expect(terminal.output).toContain('0.12.0\\u009b2J\\u202e');
      expect(obeyable(terminal.output)).toEqual([]);
    } finally {
      await hostile.close();
    }
  });

  it.each([
    ['logs --json --raw', ['logs', '--json', '--raw']],
    ['export --all --raw', ['export', '--format', 'sharegpt', '--all', '--raw']],
    ['memo --json --raw', ['memo', '--json', '--raw']],
    ['memo get k --json --raw', ['memo', 'get', 'k', '--json', '--raw']],
  ])('on a terminal, %s keeps the characters as stored', async (_label, args) => {
    const home = await homeWithTurn();
    expect((await runArgo(['memo', 'set', 'k', 'csi \u009b2J bidi invoice\u202efdp.exe'], { home })).code).toBe(0);
    const { code, output } = await onTerminal(args, home);
    expect(code).toBe(0);
    expect(output).toContain('csi \u009b2J bidi invoice\u202efdp.exe');
  });

  it.each([
    ['logs --json', ['logs', '--json']],
    ['last --json', ['last', '-s', 'work', '--json']],
    ['export --all', ['export', '--format', 'sharegpt', '--all']],
  ])('piped, %s keeps the characters as stored', async (_label, args) => {
    const home = await homeWithTurn();
    const piped = await runArgo(args, { home, host: ollama.url });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toContain('csi \u009b2J bidi invoice\u202efdp.exe');
  });
});
