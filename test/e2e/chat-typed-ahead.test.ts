// argo chat on a pseudo-terminal: what is typed while an answer streams, and Ctrl-C twice in one read.
import stripAnsi from 'strip-ansi';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { startInPty } from '../support/pty.js';
import type { PtySession } from '../support/pty.js';
import { logLines, tempHome } from '../support/run-argo.js';
import { screenRows } from '../support/screen.js';
import { waitFor } from '../support/wait.js';

const ollama = await fakeOllamaPerFile();
beforeEach(() => {
  ollama.setScenario(undefined);
});

const COLS = 120;

function openTerminal(args: string[], home: string): { pty: PtySession; screen: () => string } {
  const pty = startInPty(args, { home, host: ollama.url, env: { NO_COLOR: '1' }, cols: COLS });
  return { pty, screen: () => stripAnsi(pty.output).replace(/\r/g, '') };
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('argo chat: text typed while an answer streams', () => {
  it('each line typed ahead is sent at its own prompt, and what follows its Enter is kept for the next prompt, editable at its end', async () => {
    const home = tempHome();
    const term = openTerminal(['chat', '-s', 'pty'], home);
    await waitFor(() => expect(term.screen()).toContain('pty> '));
    ollama.setScenario({ holdAfter: 1, times: 1 });
    term.pty.write('q1\r');
    await ollama.waitForHold();
    term.pty.write('ahead\rabc');
    ollama.release();
    await waitFor(() => expect(term.screen()).toContain('You said: ahead'));
    // The third prompt, with what was typed after the second line on it.
    await waitFor(() => expect(term.screen()).toMatch(/You said: ahead\n(.*\n)?pty> abc$/));
    term.pty.write('X\r');
    await waitFor(() => expect(term.screen()).toContain('You said: abcX'));
    term.pty.write('/bye\r');
    expect((await term.pty.exited).code).toBe(0);
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['q1', 'ahead', 'abcX']);
    const rows = screenRows(term.pty.output, COLS).filter((row) => row !== '');
    const at = rows.indexOf('pty> ahead');
    expect(rows.slice(at, at + 2)).toEqual(['pty> ahead', 'You said: ahead']);
    expect(rows).toContain('pty> abcX');
    expect(rows[rows.indexOf('pty> abcX') + 1]).toBe('You said: abcX');
    expect(count(term.screen(), 'pty> ')).toBe(4);
  });
});
