// A thinking model's reasoning at a terminal: streamed on standard error as it comes, between
// "Thinking…" and "…done thinking.", dim when colour is on; hidden with --hide-thinking or config;
// never on standard output, which holds the answer alone.
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { scriptRounds } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { startInPty, startProgramInPty } from '../support/pty.js';
import { ARGO_BIN, logLines, runArgo, tempHome } from '../support/run-argo.js';
import { screenRows } from '../support/screen.js';

const COLUMNS = 100;
const REASONING = 'Pondering deeply.';

const ollama = await fakeOllamaPerFile({
  models: [{ name: 'qwen3:latest', capabilities: ['completion', 'tools', 'thinking'] }, { name: 'gpt-oss:20b', family: 'gptoss', capabilities: ['completion', 'tools', 'thinking'] }],
  thinking: REASONING,
});
beforeEach(() => {
  ollama.setScenario(undefined);
  ollama.options.thinking = REASONING;
  ollama.options.rounds = undefined;
});

/** The rows a reader sees, without the empty ones after the last line. */
function rowsOf(output: string): string[] {
  const rows = screenRows(output, COLUMNS);
  while (rows.at(-1) === '') rows.pop();
  return rows;
}

const SHOWN = ['Thinking…', REASONING, '…done thinking.', '', 'You said: hello'];

describe('a thinking model on a terminal', () => {
  it('streams the reasoning as it arrives, set apart from the answer; no colour with NO_COLOR', async () => {
    // Held after the first thought: it must be on screen before the rest is even sent.
    ollama.setScenario({ holdAfter: 1 });
    const terminal = startInPty(['-m', 'qwen3', 'hello'], { home: tempHome(), host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    await ollama.waitForHold();
    await terminal.waitFor('Thinking…\r\nPondering');
    ollama.release();
    expect((await terminal.exited).code).toBe(0);
    expect(rowsOf(terminal.output)).toEqual(SHOWN);
    // The spinner was erased before the reasoning took its row.
    expect(terminal.output).toContain('\r\x1b[KThinking…');
    // No colour of any kind: no CSI … m.
    expect(terminal.output.split('\x1b[').slice(1).filter((sequence) => /^[0-9;]*m/.test(sequence))).toEqual([]);
  });

  it('dims the reasoning when colour is on, each write on its own, the answer not', async () => {
    const terminal = startInPty(['-m', 'qwen3', 'hello'], { home: tempHome(), host: ollama.url, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    expect(rowsOf(terminal.output)).toEqual(SHOWN);
    expect(terminal.output).toContain('\x1b[2mThinking…');
    expect(terminal.output).toContain('\x1b[2m\r\n…done thinking.\x1b[22m');
    expect(terminal.output.split('\x1b[2m').length).toBe(terminal.output.split('\x1b[22m').length);
    expect(terminal.output.endsWith('\x1b[22m\r\n\r\nYou said: hello\r\n')).toBe(true);
  });

  // The decision every colour takes (docs/cli.md), judged by standard error.
  it.each<[string, Record<string, string>, string[], boolean]>([
    ['--color never', {}, ['--color', 'never'], false],
    ['--no-color', {}, ['--no-color'], false],
    ['FORCE_COLOR=0', { FORCE_COLOR: '0' }, [], false],
    ['TERM=dumb, --color always', { TERM: 'dumb' }, ['--color', 'always'], true],
  ])('%s: dim %s, the same rows', async (_case, env, flags, dim) => {
    const terminal = startInPty(['-m', 'qwen3', ...flags, 'hello'], { home: tempHome(), host: ollama.url, env, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    expect(rowsOf(terminal.output)).toEqual(SHOWN);
    expect(terminal.output.includes('\x1b[2mThinking…')).toBe(dim);
  });

  it('TERM=dumb: the header and footer, no cursor control and no colour', async () => {
    const terminal = startInPty(['-m', 'qwen3', 'hello'], { home: tempHome(), host: ollama.url, env: { TERM: 'dumb' }, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    expect(terminal.output).toBe(`Thinking…\r\n${REASONING}\r\n…done thinking.\r\n\r\nYou said: hello\r\n`);
  });

  it.each<[string, string[], unknown]>([
    ['--hide-thinking', ['--hide-thinking'], undefined],
    ['config "hideThinking": true', [], { hideThinking: true }],
  ])('%s: only the spinner says the model is thinking', async (_case, flags, config) => {
    ollama.setScenario({ holdAfter: 1 });
    const terminal = startInPty(['-m', 'qwen3', ...flags, 'hello'], { home: tempHome(config), host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    await ollama.waitForHold();
    await terminal.waitFor('qwen3 is thinking…');
    ollama.release();
    expect((await terminal.exited).code).toBe(0);
    expect(rowsOf(terminal.output)).toEqual(['You said: hello']);
    expect(terminal.output).not.toContain('Pondering');
  });

  // gpt-oss answers through Ollama's harmony parser, which keeps its reasoning whatever think says.
  it.each<[string, string, string[], string[]]>([
    ['qwen3 stops reasoning', 'qwen3', [], ['You said: hello']],
    ['gpt-oss reasons anyway: shown as any reasoning is', 'gpt-oss:20b', [], SHOWN],
    ['gpt-oss with --hide-thinking: not shown', 'gpt-oss:20b', ['--hide-thinking'], ['You said: hello']],
  ])('--think off: %s', async (_case, model, flags, rows) => {
    const home = tempHome();
    const terminal = startInPty(['-m', model, '--think', 'off', ...flags, 'hello'], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    expect(rowsOf(terminal.output)).toEqual(rows);
    expect(logLines(home)[0]?.thinking ?? '').toBe(model === 'qwen3' ? '' : REASONING);
  });

  it('--no-hide-thinking shows it whatever config.json says', async () => {
    const terminal = startInPty(['-m', 'qwen3', '--no-hide-thinking', 'hello'], { home: tempHome({ hideThinking: true }), host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    expect(rowsOf(terminal.output)).toEqual(SHOWN);
  });

  it('never reaches standard output: redirected to a file, the file has the answer alone and the terminal the reasoning', async () => {
    const home = tempHome();
    const file = join(home, 'answer.txt');
    const command = `exec '${process.execPath}' '${ARGO_BIN}' -m qwen3 hello > '${file}'`;
    const terminal = startProgramInPty('/bin/sh', ['-c', command], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe('You said: hello\n');
    expect(rowsOf(terminal.output)).toEqual(['Thinking…', REASONING, '…done thinking.']);
  });

  it('piped both ways (a script): the answer alone on stdout, nothing on stderr; the reasoning is logged', async () => {
    const home = tempHome();
    const result = await runArgo(['-m', 'qwen3', 'hello'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 0, stdout: 'You said: hello\n', stderr: '' });
    expect(logLines(home)[0]).toMatchObject({ thinking: REASONING });
  });

  it("its escape sequences are shown, not obeyed, as an answer's are; --raw writes them as sent", async () => {
    ollama.options.thinking = 'Copy \x1b]52;c;ZXZpbA==\x07 then \u202eclear.';
    const terminal = startInPty(['-m', 'qwen3', 'hello'], { home: tempHome(), host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    expect(terminal.output).toContain('Copy ^[]52;c;ZXZpbA==^G then \\u202eclear.');
    expect(terminal.output).not.toContain('\x1b]52');
    expect(terminal.output).not.toContain('\u202e');

    const raw = startInPty(['-m', 'qwen3', '--raw', 'hello'], { home: tempHome(), host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await raw.exited).code).toBe(0);
    expect(raw.output).toContain('Copy \x1b]52;c;ZXZpbA==\x07 then \u202eclear.');
  });

  it('Ctrl-C while it reasons: the row is ended (no "done thinking", no colour left on), the turn logged as interrupted', async () => {
    const home = tempHome();
    ollama.setScenario({ holdAfter: 1 });
    const terminal = startInPty(['-m', 'qwen3', 'hello'], { home, host: ollama.url, cols: COLUMNS });
    const held = await ollama.waitForHold();
    await terminal.waitFor('Pondering');
    terminal.write('\x03');
    expect((await terminal.exited).code).toBe(130);
    await held.settled;
    // ^C is the terminal's echo of the key.
    expect(rowsOf(terminal.output)).toEqual(['Thinking…', 'Pondering^C', 'argo: interrupted (logged as interrupted)']);
    expect(terminal.output.split('\x1b[2m').length).toBe(terminal.output.split('\x1b[22m').length);
    expect(logLines(home)[0]).toMatchObject({ status: 'interrupted', thinking: 'Pondering', model_response: '' });
  });

  it('--json: no reasoning on the terminal; the JSON has it as "thinking", absent when there was none', async () => {
    const terminal = startInPty(['-m', 'qwen3', '--json', 'hello'], { home: tempHome(), host: ollama.url, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    expect(terminal.output).not.toContain('Thinking…');
    expect(JSON.parse(terminal.output.trim())).toMatchObject({ response: 'You said: hello', thinking: REASONING, status: 'ok' });
    // No reasoning, no field.
    const plain = await runArgo(['-m', 'qwen3', '--think', 'off', '--json', 'hello'], { home: tempHome(), host: ollama.url });
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).not.toHaveProperty('thinking');
  });
});

describe('argo chat with a thinking model on a terminal', () => {
  it('/thinking hide leaves the spinner for the answers after it, /thinking show brings the reasoning back', async () => {
    const home = tempHome();
    const terminal = startInPty(['chat', '-m', 'qwen3', '-s', 'muse'], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    await terminal.waitFor('muse> ');
    terminal.write('one\r');
    await terminal.waitFor('You said: one');
    terminal.write('/thinking hide\r');
    await terminal.waitFor('thinking hidden (still logged)');
    // Held after the first thought: the spinner, not the reasoning, is what shows meanwhile.
    ollama.setScenario({ holdAfter: 1 });
    const hidden = terminal.output.length;
    terminal.write('two\r');
    await ollama.waitForHold();
    await terminal.waitFor('qwen3 is thinking…', hidden);
    ollama.release();
    await terminal.waitFor('You said: two', hidden);
    ollama.setScenario(undefined);
    terminal.write('/thinking show\r');
    await terminal.waitFor('thinking shown\r\n', hidden);
    const shown = terminal.output.length;
    terminal.write('three\r');
    await terminal.waitFor('You said: three', shown);
    terminal.write('/bye\r');
    expect((await terminal.exited).code).toBe(0);
    const [first, second, third] = [terminal.output.slice(0, hidden), terminal.output.slice(hidden, shown), terminal.output.slice(shown)];
    expect([first, second, third].map((part) => part.includes(`Thinking…\r\n${REASONING}`))).toEqual([true, false, true]);
    expect(second).not.toContain('Pondering');
    // Hidden or shown, every turn's reasoning is logged.
    expect(logLines(home).map((entry) => entry.thinking)).toEqual([REASONING, REASONING, REASONING]);
  });
});

describe('argo rerun of a thinking model on a terminal', () => {
  it('shows the new reasoning as a question does; --hide-thinking leaves the spinner', async () => {
    const home = tempHome();
    expect((await runArgo(['-m', 'qwen3', 'hello'], { home, host: ollama.url })).code).toBe(0);
    const id = String(logLines(home)[0]?.id);
    const shown = startInPty(['rerun', id], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await shown.exited).code).toBe(0);
    expect(rowsOf(shown.output)).toEqual(SHOWN);

    ollama.setScenario({ holdAfter: 1 });
    const hidden = startInPty(['rerun', id, '--hide-thinking'], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    await ollama.waitForHold();
    await hidden.waitFor('qwen3 is thinking…');
    ollama.release();
    expect((await hidden.exited).code).toBe(0);
    expect(rowsOf(hidden.output)).toEqual(['You said: hello']);
  });

  it('--raw writes the new answer and its reasoning as sent, as a question does', async () => {
    const home = tempHome();
    ollama.options.thinking = 'Copy \x1b]52;c;ZXZpbA==\x07 now.';
    expect((await runArgo(['-m', 'qwen3', 'tint \x1b[31mred'], { home, host: ollama.url })).code).toBe(0);
    const id = String(logLines(home)[0]?.id);
    const shown = startInPty(['rerun', id], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await shown.exited).code).toBe(0);
    expect(shown.output).toContain('Copy ^[]52;c;ZXZpbA==^G now.');
    expect(shown.output).toContain('You said: tint ^[[31mred');
    const raw = startInPty(['rerun', id, '--raw'], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await raw.exited).code).toBe(0);
    expect(raw.output).toContain('Copy \x1b]52;c;ZXZpbA==\x07 now.');
    expect(raw.output).toContain('You said: tint \x1b[31mred');
  });
});

describe('a thinking model in an agent run on a terminal', () => {
  it("each round's reasoning is a block of its own, the tool lines between them; the answer right after the blank line", async () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'argo-think-tty-')));
    writeFileSync(join(dir, 'notes.txt'), 'first line\n');
    scriptRounds(ollama, [{ reply: 'Let me look.', toolCalls: [{ function: { name: 'read_file', arguments: { path: 'notes.txt' } } }] }, { reply: 'It says "first line".' }]);
    const terminal = startInPty(['-m', 'qwen3', '-T', 'fs', '--root', dir, 'what do the notes say?'], { home: tempHome(), host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    expect((await terminal.exited).code).toBe(0);
    const rows = rowsOf(terminal.output);
    expect(rows.map((row) => row.replace(/\(\d+ ms\)/, '(N ms)'))).toEqual([
      'Thinking…',
      REASONING,
      '…done thinking.',
      '',
      'Let me look.',
      'argo: ran read_file (N ms)',
      'Thinking…',
      REASONING,
      '…done thinking.',
      '',
      'It says "first line".',
    ]);
  });
});

describe('a thinking model in argo chat', () => {
  it('shows the reasoning before each answer, in the same style', async () => {
    const home = tempHome();
    const terminal = startInPty(['chat', '-m', 'qwen3', '-s', 'think'], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLUMNS });
    await terminal.waitFor('think> ');
    terminal.write('hello\r');
    // The next prompt: the answer is whole.
    await terminal.waitFor(/You said: hello[^]*think> /);
    terminal.write('/bye\r');
    expect((await terminal.exited).code).toBe(0);
    const rows = rowsOf(terminal.output);
    const asked = rows.indexOf('think> hello');
    expect(rows.slice(asked, asked + 7)).toEqual(['think> hello', ...SHOWN, 'think> /bye']);
  });
});
