import { describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { createServer } from 'node:net';
import stringWidth from 'string-width';
import { startInPty } from '../support/pty.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { screenRows } from '../support/screen.js';

// Every answer waits after its headers until the test releases it: the time before the first token.
const ollama = await fakeOllamaPerFile({ scenario: { holdAfter: 0 } });

/** A port nothing listens on (it was free a moment ago): Ollama there cannot be reached. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Lets the answer go on as soon as it is held, for tests that only need the wait to have happened. */
function releaseWhenHeld(): void {
  void ollama.waitForHold().then(() => {
    ollama.release();
  });
}

describe('argo on a terminal', () => {
  it('with --no-stdin and no prompt: the one line saying how to give one, no usage, exit 2', async () => {
    const terminal = startInPty(['--no-stdin'], { home: tempHome(), host: ollama.url });
    expect((await terminal.exited).code).toBe(2);
    expect(terminal.output).toBe('argo: no prompt: --no-stdin leaves standard input unread; pass the question as arguments (argo --no-stdin "why is the sky blue?"), or run argo chat\r\n');
  });

  it.each(['--explain', '--json'])('with %s and no prompt: one line saying to give one, exit 2; no chat starts, nothing is asked or logged', async (flag) => {
    const home = tempHome();
    const asked = ollama.requests.length;
    const terminal = startInPty([flag], { home, host: ollama.url });
    expect((await terminal.exited).code).toBe(2);
    expect(terminal.output).toBe(`argo: no prompt: ${flag} is for one question, not a chat; pass the question as arguments (argo ${flag} "why is the sky blue?") or pipe it on stdin\r\n`);
    expect(ollama.requests).toHaveLength(asked);
    expect(logLines(home)).toEqual([]);
  });

  it('shows a spinner on stderr while waiting for the first token, then erases it', async () => {
    const home = tempHome();
    const terminal = startInPty(['hello'], { home, host: ollama.url });
    await terminal.waitFor('asking argo');
    await ollama.waitForHold();
    ollama.release(); // the first token comes only after the spinner was on screen
    const { code } = await terminal.exited;
    const output = terminal.output;
    expect(code).toBe(0);
    expect(output).toMatch(/⠋ asking argo…/);
    expect(output).toContain('\r\x1b[K');
    expect(output.endsWith('You said: hello\r\n')).toBe(true);
  });

  it('a label wider than the terminal is cut: every frame fits one row, and none is left on screen', async () => {
    const model = 'hf.co/bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M';
    ollama.options.models = [{ name: 'argo:latest' }, { name: model }];
    try {
      const terminal = startInPty(['-m', model, 'hi'], { home: tempHome(), host: ollama.url, cols: 30 });
      await ollama.waitForHold();
      // Several frames, so a wrapped one would have left rows behind.
      await terminal.waitFor(/⠹[^\r]*\r[^]*⠸/);
      ollama.release();
      expect((await terminal.exited).code).toBe(0);
      const frames = terminal.output.split('\r').filter((piece) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]/.test(piece));
      expect(frames.length).toBeGreaterThan(3);
      for (const frame of frames) expect(stringWidth(frame.replace('\x1b[K', ''))).toBeLessThan(30);
      expect(frames[0]).toBe('⠋ asking hf.co/bartowski/Lla…\x1b[K');
      expect(screenRows(terminal.output, 30).filter((row) => row !== '')).toEqual(['You said: hi']);
    } finally {
      ollama.options.models = undefined;
    }
  });

  it("retry notes take the spinner's row, each on its own, and the spinner goes on below them", async () => {
    const port = await closedPort();
    const terminal = startInPty(['hi'], { home: tempHome(), host: `127.0.0.1:${port}`, cols: 200 });
    expect((await terminal.exited).code).toBe(1);
    const host = `http://127.0.0.1:${port}`;
    expect(screenRows(terminal.output, 200).filter((row) => row !== '')).toEqual([
      `argo: cannot reach Ollama at ${host}; retrying in 0.25s (attempt 2 of 3)`,
      `argo: cannot reach Ollama at ${host}; retrying in 0.50s (attempt 3 of 3)`,
      `argo: cannot reach Ollama at ${host} (connection refused); start it with "ollama serve", or set --host / OLLAMA_HOST to where it runs (logged as error)`,
    ]);
    // The spinner was drawn again after each note, on the row below it.
    expect(terminal.output).toMatch(/\(attempt 2 of 3\)\r\n\r[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] asking argo…/);
  });

  it('TERM=dumb: no spinner and no cursor control, only the answer', async () => {
    const home = tempHome();
    releaseWhenHeld();
    const terminal = startInPty(['hello'], { home, host: ollama.url, env: { TERM: 'dumb' } });
    expect((await terminal.exited).code).toBe(0);
    expect(terminal.output).toBe('You said: hello\r\n');
  });

  // The same decision as every command's output: only a terminal that asks for nothing else gets the dim note.
  it.each<[string, boolean, Record<string, string>, string[]]>([
    ['on a colour terminal', true, {}, []],
    ['NO_COLOR=1', false, { NO_COLOR: '1' }, []],
    ['--color never', false, {}, ['--color', 'never']],
    ['--no-color', false, {}, ['--no-color']],
    ['FORCE_COLOR=0', false, { FORCE_COLOR: '0' }, []],
    ['TERM=dumb', false, { TERM: 'dumb' }, []],
    ['TERM=dumb, --color always', true, { TERM: 'dumb' }, ['--color', 'always']],
  ])('the replay note, %s: dim %s', async (_case, dim, env, flags) => {
    const home = tempHome();
    releaseWhenHeld();
    expect((await runArgo(['-s', 'r', 'first question'], { home, host: ollama.url })).code).toBe(0);
    releaseWhenHeld();
    const terminal = startInPty(['-s', 'r', '-r', 'session', ...flags, 'follow up'], { home, host: ollama.url, env });
    expect((await terminal.exited).code).toBe(0);
    expect(terminal.output).toMatch(/replayed 1 of 1 turn/);
    expect(terminal.output.includes('\x1b[2m')).toBe(dim);
    // No colour of any kind either.
    if (!dim) expect(terminal.output).not.toMatch(/\[[0-9;]*m/);
  });

  it('the replay note counts the turns the budget dropped and says which it shortened', async () => {
    const home = tempHome();
    // The stand-in answers "You said: …": a long question makes a long answer too.
    for (const prompt of ['Explain closures', 'Write a counter', `Write a test for ${'every case '.repeat(25)}`]) {
      releaseWhenHeld();
      expect((await runArgo(['-s', 'b', prompt], { home, host: ollama.url })).code).toBe(0);
    }
    releaseWhenHeld();
    const terminal = startInPty(['-s', 'b', '-r', 'last:3', '--budget', '300', 'Add one more test'], { home, host: ollama.url });
    expect((await terminal.exited).code).toBe(0);
    const policy = logLines(home).at(-1)?.replay_policy as { decisions: { outcome: string }[] };
    expect(policy.decisions.map((turn) => turn.outcome)).toEqual(['trimmed', 'elided', 'elided']);
    expect(terminal.output).toMatch(/replayed 2 of 3 turns · \w+ · 1 turn over the 300-char budget, 2 shortened to fit · model /);
  });

  it('Ctrl-C typed during the answer keeps the partial text, logs it as interrupted, exit 130', async () => {
    const home = tempHome();
    ollama.setScenario({ holdAfter: 1 });
    try {
      const terminal = startInPty(['hello'], { home, host: ollama.url });
      const held = await ollama.waitForHold();
      await terminal.waitFor('You');
      terminal.write('\x03');
      expect((await terminal.exited).code).toBe(130);
      expect(terminal.output).toContain('argo: interrupted (logged as interrupted)');
      await held.settled;
      expect(held.clientAborted).toBe(true);
      expect(logLines(home)[0]).toMatchObject({ status: 'interrupted', model_response: 'You' });
    } finally {
      ollama.setScenario({ holdAfter: 0 });
    }
  });

  it('shows no spinner with --json', async () => {
    const home = tempHome();
    releaseWhenHeld();
    const terminal = startInPty(['--json', 'hello'], { home, host: ollama.url });
    const { code } = await terminal.exited;
    const output = terminal.output;
    expect(code).toBe(0);
    expect(output).not.toMatch(/asking argo/);
    expect(JSON.parse(output.trim())).toMatchObject({ response: 'You said: hello', status: 'ok' });
  });

  it('shows no spinner when stderr is not a terminal', async () => {
    const home = tempHome();
    releaseWhenHeld();
    const result = await runArgo(['hello'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: 'You said: hello\n' });
  });

  it('a terminal closed mid-answer (its window shut): writing to it fails, yet the turn is logged interrupted by SIGHUP, not lost', async () => {
    const home = tempHome();
    ollama.setScenario({ holdAfter: 1 });
    try {
      const terminal = startInPty(['tell me a story'], { home, host: ollama.url });
      await ollama.waitForHold();
      terminal.hangUp();
      // Its exit code is not asserted: Node 20 aborts at exit, restoring the closed terminal's mode (nodejs/node#58200).
      await terminal.exited;
      expect(logLines(home)).toMatchObject([{ status: 'interrupted', error: 'interrupted by SIGHUP (the terminal closed)' }]);
    } finally {
      ollama.setScenario({ holdAfter: 0 });
    }
  });

  it('Ctrl-C before the request (still reading piped input) exits 130 at once, writing nothing but the one line', async () => {
    const home = tempHome();
    const requestsBefore = ollama.requests.length;
    let interruptedAt: number | undefined;
    const result = await runArgo(['summarise this'], {
      home,
      host: ollama.url,
      // More than a pipe holds: 'drain' means argo is reading it, so its Ctrl-C handler is in place.
      stdin: 'partial input… '.repeat(20_000),
      keepStdinOpen: true,
      onSpawn: (child) =>
        child.stdin?.once('drain', () => {
          interruptedAt = Date.now();
          child.kill('SIGINT');
        }),
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toBe('argo: interrupted\n');
    // stdin never ends, so exiting at all shows argo did not wait for it; the clock runs from Ctrl-C, not from node's start.
    expect(Date.now() - (interruptedAt ?? Number.NaN)).toBeLessThan(5000);
    expect(ollama.requests).toHaveLength(requestsBefore);
    expect(logLines(home)).toEqual([]);
  });
});

describe('a [y/N] question before deleting history, on a terminal', () => {
  // The question's row is ended when its read ends without Enter: the line after starts at the left edge.
  it.each<[string, number, string, string[]]>([
    ['Ctrl-D answers no', 1, '\x04', ['argo: nothing deleted (not confirmed)']],
    ['Ctrl-C quits', 130, '\x03', ['argo: interrupted']],
  ])('%s: exit %i, the line after the question on a row of its own, nothing deleted', async (_case, code, keys, after) => {
    const home = tempHome();
    releaseWhenHeld();
    expect((await runArgo(['-s', 'work', 'keep me'], { home, host: ollama.url })).code).toBe(0);
    const terminal = startInPty(['logs', 'rm', '-s', 'work'], { home, host: ollama.url });
    await terminal.waitFor('[y/N] ');
    terminal.write(keys);
    expect((await terminal.exited).code).toBe(code);
    const shown = screenRows(terminal.output, 100);
    const question = shown.findIndex((row) => row.startsWith('delete '));
    expect(question).toBeGreaterThanOrEqual(0);
    expect(shown.slice(question + 1, question + 1 + after.length)).toEqual(after);
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['keep me']);
  });
});
