// Tab in real interactive shells on a pseudo-terminal: zsh (zsh -f, then compinit) and fish
// (--no-config), each sourcing the script the built `argo completion <shell>` prints, with session
// names from data homes the built argo wrote. test/cli/completion.test.ts checks the scripts' logic
// case by case with stand-ins; this checks what the shells themselves insert and list.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import stripAnsi from 'strip-ansi';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defined } from '../support/defined.js';
import { startFakeOllama } from '../support/fake-ollama.js';
import { startProgramInPty } from '../support/pty.js';
import { installedShell } from '../support/shells.js';
import type { PtySession } from '../support/pty.js';
import { ARGO_BIN, runArgo, tempHome } from '../support/run-argo.js';
import { waitFor } from '../support/wait.js';

type ShellName = 'zsh' | 'fish';
const SHELLS: Record<ShellName, string | null> = {
  zsh: installedShell('zsh'),
  fish: installedShell('fish'),
};

/** The built argo first, then node (bin/argo runs `env node`), then the system's tools: nothing of the user's. */
const PATH = `${dirname(ARGO_BIN)}:${dirname(process.execPath)}:/usr/bin:/bin`;
const READY = 'shell-ready> ';
/** Ctrl-X Ctrl-B: bound below to print the line being edited as `buffer:[…]`. */
const SHOW_BUFFER = '\x18\x02';

// What a shell inserts is read from its own buffer, not the screen: its line editor redraws by
// moving the cursor and writing only what changed, and fish greys in an autosuggestion after the
// cursor, so the stream of bytes is not the line. A key bound to print the buffer is exact.
const INIT: Record<ShellName, string> = {
  zsh: `PS1='${READY}'
autoload -U compinit && compinit -u
source <(argo completion zsh)
argo-test-show-buffer() { zle -M "buffer:[$BUFFER]" }
zle -N argo-test-show-buffer
bindkey '^X^B' argo-test-show-buffer
`,
  fish: `function fish_prompt; echo -n '${READY}'; end
argo completion fish | source
bind \\cx\\cb 'echo; echo "buffer:["(commandline)"]"; commandline -f repaint'
`,
};

/** The shells' home and argo's data home, with sessions alpha and beta. */
const home = tempHome();
/** A second data home, named with a space, holding only "gamma": reached through --home on the line. */
const otherHome = mkdtempSync(join(tmpdir(), 'argo other home '));
beforeAll(async () => {
  const ollama = await startFakeOllama();
  try {
    for (const [name, where] of [['alpha', home], ['beta', home], ['gamma', otherHome]] as const) {
      expect((await runArgo(['-s', name, 'hi'], { home: where, host: ollama.url })).code).toBe(0);
    }
  } finally {
    await ollama.close();
  }
});

const opened: PtySession[] = [];
afterEach(async () => {
  for (const shell of opened.splice(0)) {
    shell.hangUp();
    await shell.exited;
  }
});

/** An interactive shell with argo's completion loaded and none of the user's files, at its prompt. */
async function openShell(shell: ShellName): Promise<PtySession> {
  const init = join(home, `init.${shell}`);
  writeFileSync(init, INIT[shell]);
  const args = shell === 'zsh' ? ['-f', '-i'] : ['--no-config', '--interactive'];
  // HOME and ZDOTDIR (zsh), XDG_* (fish) point into the temp home: no dotfiles read, nothing written elsewhere.
  const env = { PATH, ZDOTDIR: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), fish_history: '' };
  const session = startProgramInPty(defined(SHELLS[shell]), args, { home, env, cols: 120 });
  opened.push(session);
  session.write(`source ${init}\r`);
  await session.waitFor(READY);
  return session;
}

/** The screen's text from `from` on, escapes taken out. */
const screenFrom = (shell: PtySession, from: number): string => stripAnsi(shell.output.slice(from)).replaceAll('\r', '');

/** Presses the show-buffer key and reads the line being edited. */
async function bufferOf(shell: PtySession): Promise<string> {
  const from = shell.output.length;
  shell.write(SHOW_BUFFER);
  return waitFor(() => defined(/buffer:\[([^\]\n]*)\]/.exec(screenFrom(shell, from))?.[1], 'the buffer shown'));
}

// A shell that is not installed shows as skipped, not as passed.
for (const shell of Object.keys(SHELLS) as ShellName[]) {
  describe.skipIf(SHELLS[shell] === null)(`Tab in an interactive ${shell}`, () => {
    it.each([
      ['argo --th', 'argo --think '],
      ['argo sess', 'argo sessions '],
      ['argo sessions show b', 'argo sessions show beta '],
      // The names of the data home that --home names on the line, its quotes taken off.
      [`argo --home '${otherHome}' sessions rm `, `argo --home '${otherHome}' sessions rm gamma `],
    ])('%j, Tab → %j', async (typed, inserted) => {
      const session = await openShell(shell);
      session.write(`${typed}\t`);
      expect(await bufferOf(session)).toBe(inserted);
    });

    it('lists the session names when they share no start, and leaves the line as it was', async () => {
      const session = await openShell(shell);
      const from = session.output.length;
      session.write('argo sessions show \t');
      await waitFor(() => expect(screenFrom(session, from)).toMatch(/alpha\s+beta/));
      expect(await bufferOf(session)).toBe('argo sessions show ');
    });
  });
}
