// A quick double Ctrl-C (both keys in one read) quits at once, and keeps what had streamed: the
// `argo: interrupted` line starts a row of its own, and the next argo logs the turn as interrupted
// with its partial answer (docs/chat.md, "Ending a chat with a signal"; docs/cli.md).
import stripAnsi from 'strip-ansi';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { startInPty } from '../support/pty.js';
import type { PtySession } from '../support/pty.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { waitFor } from '../support/wait.js';
import { holdLogLock } from '../support/log-lock.js';

const ollama = await fakeOllamaPerFile();
beforeEach(() => {
  ollama.setScenario(undefined);
});

const screenOf = (pty: PtySession): string => stripAnsi(pty.output).replace(/\r/g, '');

/** The turn as logged once another argo has looked at the journal. */
async function loggedAfterNextArgo(home: string): Promise<Record<string, unknown>[]> {
  const next = await runArgo(['logs', '--json'], { home, host: ollama.url });
  expect(next.code).toBe(0);
  return logLines(home);
}

describe('a double Ctrl-C in one read during a streamed answer', () => {
  it('argo chat: exit 130, its line on a row of its own, and the partial answer logged by the next argo', async () => {
    const home = tempHome();
    const pty = startInPty(['chat', '-s', 'quit'], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: 120 });
    await waitFor(() => expect(screenOf(pty)).toContain('quit> '));
    // "You said: long story please", held after its first three tokens.
    ollama.setScenario({ holdAfter: 3, times: 1 });
    pty.write('long story please\r');
    await ollama.waitForHold();
    await waitFor(() => expect(screenOf(pty)).toContain('You said: long'));
    pty.write('\x03\x03');
    expect((await pty.exited).code).toBe(130);
    expect(screenOf(pty)).toMatch(/You said: long\nargo: interrupted\n$/);
    const [turn] = await loggedAfterNextArgo(home);
    expect(turn).toMatchObject({ user_prompt: 'long story please', status: 'interrupted', model_response: 'You said: long' });
    expect(turn?.error).toBe('interrupted by the user; argo then quit at once (a second Ctrl-C) before it could log the turn');
  });

  it('a one-liner: exit 130, its line on a row of its own, and the partial answer logged', async () => {
    const home = tempHome();
    ollama.setScenario({ holdAfter: 3, times: 1 });
    const pty = startInPty(['-s', 'quit', 'long story please'], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: 120 });
    await ollama.waitForHold();
    await waitFor(() => expect(screenOf(pty)).toContain('You said: long'));
    pty.write('\x03\x03');
    expect((await pty.exited).code).toBe(130);
    // The terminal echoes the key (^C) and may deliver both as one SIGINT: the turn is then logged at once.
    expect(screenOf(pty)).toMatch(/You said: long(?:\^C)*\nargo: interrupted(?: \(logged as interrupted\))?\n$/);
    const [turn] = await loggedAfterNextArgo(home);
    expect(turn).toMatchObject({ user_prompt: 'long story please', status: 'interrupted', model_response: 'You said: long' });
  });

  it('a one-liner whose stopped turn waits for the log (another argo holds it): a second Ctrl-C quits, and the cut answer is logged by the next argo', async () => {
    const home = tempHome({ timeouts: { lockWaitMs: 600_000 } });
    const lock = await holdLogLock(home);
    try {
      ollama.setScenario({ holdAfter: 3, times: 1 });
      const pty = startInPty(['-s', 'quit', 'long story please'], { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: 120 });
      await ollama.waitForHold();
      await waitFor(() => expect(screenOf(pty)).toContain('You said: long'));
      pty.write('\x03');
      await waitFor(() => expect(screenOf(pty)).toContain('waiting for the log in'));
      pty.write('\x03');
      expect((await pty.exited).code).toBe(130);
      // After the terminal's own echo of the key (^C), which argo does not write.
      expect(screenOf(pty)).toMatch(/\n(?:\^C)?argo: interrupted\n$/);
    } finally {
      await lock.letGo();
    }
    const [turn] = await loggedAfterNextArgo(home);
    expect(turn).toMatchObject({ user_prompt: 'long story please', status: 'interrupted', model_response: 'You said: long', error: 'interrupted by the user' });
  });
});
