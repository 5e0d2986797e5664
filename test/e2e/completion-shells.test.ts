// Tab in real interactive shells on a pseudo-terminal: bash (--norc), zsh (zsh -f, then compinit)
// and fish (--no-config), each loading the script the built `argo completion <shell>` prints, with
// session names from data homes the built argo wrote and model names from Ollama stand-ins.
// test/cli/completion.test.ts checks the scripts' logic case by case with stand-ins; this checks
// what the shells themselves insert and list.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import stripAnsi from 'strip-ansi';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defined } from '../support/defined.js';
import { startFakeOllama } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { startProgramInPty } from '../support/pty.js';
import { installedShell } from '../support/shells.js';
import type { PtySession } from '../support/pty.js';
import { ARGO_BIN, runArgo, tempHome } from '../support/run-argo.js';
import { waitFor } from '../support/wait.js';

type ShellName = 'bash' | 'zsh' | 'fish';
const SHELLS: Record<ShellName, string | null> = {
  bash: installedShell('bash'),
  zsh: installedShell('zsh'),
  fish: installedShell('fish'),
};

/** The built argo first, then node (bin/argo runs `env node`), then the system's tools: nothing of the user's. */
const PATH = `${dirname(ARGO_BIN)}:${dirname(process.execPath)}:/usr/bin:/bin`;
const READY = 'shell-ready> ';
/** What lists the candidates when they share no start: bash's readline needs Tab twice. */
const LIST: Record<ShellName, string> = { bash: '\t\t', zsh: '\t', fish: '\t' };
/** Ctrl-U: the line being edited is dropped. */
const CLEAR_LINE = '\x15';
/** Ctrl-X Ctrl-B: bound below to print the line being edited as `buffer:[…]`. */
const SHOW_BUFFER = '\x18\x02';

// What a shell inserts is read from its own buffer, not the screen: its line editor redraws by
// moving the cursor and writing only what changed, and fish greys in an autosuggestion after the
// cursor, so the stream of bytes is not the line. A key bound to print the buffer is exact.
const INIT: Record<ShellName, string> = {
  bash: `PS1='${READY}'
unset HISTFILE
eval "$(argo completion bash)"
argo_test_show_buffer() { echo "buffer:[$READLINE_LINE]"; }
bind -x '"\\C-x\\C-b": argo_test_show_buffer'
`,
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
/** A third, its path holding a colon (bash splits words there), with only "delta". */
const colonHome = mkdtempSync(join(tmpdir(), 'argo-colon:home-'));
/** The Ollama the shells' OLLAMA_HOST names, and another, reached through --host on the line. */
const models = await fakeOllamaPerFile({ models: [{ name: 'llama3:8b' }, { name: 'qwen3:4b' }] });
const otherOllama = await fakeOllamaPerFile({ models: [{ name: 'mistral:7b' }] });
const otherPort = new URL(otherOllama.url).port;
beforeAll(async () => {
  const ollama = await startFakeOllama();
  try {
    // -x: a name starting with -, which a command takes for a flag unless it follows --.
    for (const [name, where] of [['alpha', home], ['beta', home], ['gamma', otherHome], ['delta', colonHome], ['-x', home]] as const) {
      expect((await runArgo([`--session=${name}`, 'hi'], { home: where, host: ollama.url })).code).toBe(0);
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

/**
 * An interactive shell with argo's completion loaded and none of the user's files, at its prompt;
 * `extra` is more of its start-up file (`set -u`, as a user's rc may hold).
 */
async function openShell(shell: ShellName, extra = ''): Promise<PtySession> {
  const init = join(home, `init.${shell}`);
  writeFileSync(init, `${INIT[shell]}${extra}`);
  const args = { bash: ['--norc', '--noprofile', '-i'], zsh: ['-f', '-i'], fish: ['--no-config', '--interactive'] }[shell];
  // HOME, INPUTRC (bash), ZDOTDIR (zsh), XDG_* (fish) point into the temp home or nowhere: no dotfiles
  // or /etc/inputrc read, nothing written elsewhere.
  const env = { PATH, INPUTRC: '/dev/null', ZDOTDIR: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'data'), fish_history: '' };
  const session = startProgramInPty(defined(SHELLS[shell]), args, { home, host: models.url, env, cols: 120 });
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
      [`argo --home ${colonHome} sessions show `, `argo --home ${colonHome} sessions show delta `],
      // Model names hold a colon, which bash splits words on; the URL after --host too.
      ['argo -m llama3:', 'argo -m llama3:8b '],
      ['argo -m llama3:8', 'argo -m llama3:8b '],
      ['argo -m q', 'argo -m qwen3:4b '],
      ['argo -r la', 'argo -r last:'],
      ['argo -r last:3', 'argo -r last:3 '],
      [`argo --host ${otherOllama.url} -m mi`, `argo --host ${otherOllama.url} -m mistral:7b `],
      [`argo --host 127.0.0.1:${otherPort} -m mi`, `argo --host 127.0.0.1:${otherPort} -m mistral:7b `],
      [`argo --host=${otherOllama.url} -m mi`, `argo --host=${otherOllama.url} -m mistral:7b `],
      [`argo --host ${otherOllama.url} -m mistral:`, `argo --host ${otherOllama.url} -m mistral:7b `],
    ])('%j, Tab → %j', async (typed, inserted) => {
      const session = await openShell(shell);
      session.write(`${typed}\t`);
      expect(await bufferOf(session)).toBe(inserted);
    });

    it('lists the session names when they share no start, and leaves the line as it was', async () => {
      const session = await openShell(shell);
      const from = session.output.length;
      session.write(`argo sessions show ${LIST[shell]}`);
      await waitFor(() => expect(screenFrom(session, from)).toMatch(/alpha\s+beta/));
      expect(await bufferOf(session)).toBe('argo sessions show ');
    });

    it('completes the value after --model=', async () => {
      const session = await openShell(shell);
      session.write('argo --model=ll\t');
      expect(await bufferOf(session)).toBe('argo --model=llama3:8b ');
    });

    it('offers no file name where a model, session or replay choice is wanted', async () => {
      const session = await openShell(shell);
      // A folder holding one file, which a fallback to file names would put on the line.
      const folder = mkdtempSync(join(tmpdir(), 'argo-one-file-'));
      writeFileSync(join(folder, 'afile'), '');
      const from = session.output.length;
      session.write(`cd '${folder}'\r`);
      await session.waitFor(READY, from);
      for (const typed of ['argo -m nosuch:', 'argo -m nosuch', 'argo -r last:9', 'argo sessions show zz', 'argo -s zz']) {
        session.write(`${typed}\t`);
        expect(await bufferOf(session)).toBe(typed);
        session.write(CLEAR_LINE);
      }
    });

    it('lists the replay choices after last: and leaves the line as it was', async () => {
      const session = await openShell(shell);
      const from = session.output.length;
      session.write(`argo -r last:${LIST[shell]}`);
      await waitFor(() => expect(screenFrom(session, from)).toMatch(/(last:)?1\s+(last:)?3\s+(last:)?5/));
      expect(await bufferOf(session)).toBe('argo -r last:');
    });
  });
}

/** A folder holding the file init.txt and the folder config/, for a path flag's value. */
const pathsFolder = mkdtempSync(join(tmpdir(), 'argo-paths-'));
mkdirSync(join(pathsFolder, 'config'));
writeFileSync(join(pathsFolder, 'init.txt'), '');

/** Where the flag's value completes: files, folders, its choices; a name starting with - after --. */
const IN_PATHS_FOLDER: [string, string, ShellName[]?][] = [
  // A file's or a folder's name where the value is a path; only folders for a folder.
  ['argo --system-file in', 'argo --system-file init.txt '],
  ['argo --home con', 'argo --home config/'],
  ['argo --home=con', 'argo --home=config/'],
  ['argo chat --root con', 'argo chat --root config/'],
  ['argo export -o in', 'argo export -o init.txt '],
  ['argo --home in', 'argo --home in'],
  // The choices, never a file's name (config/ would be one).
  ['argo chat --reason cl', 'argo chat --reason clarification '],
  ['argo chat --reason c', 'argo chat --reason c'],
  ['argo --verbosity sh', 'argo --verbosity short '],
  ['argo --api c', 'argo --api chat '],
  ['argo doctor --api g', 'argo doctor --api generate '],
  ['argo --color c', 'argo --color c'],
  ['argo --color al', 'argo --color always '],
  ['argo --think of', 'argo --think off '],
  ['argo --temperature c', 'argo --temperature c'],
  // A command's own flags only: doctor takes no --think, completion no --replay.
  ['argo doctor --th', 'argo doctor --th'],
  ['argo completion --r', 'argo completion --raw '],
  // A session named -x: as an argument after -- only; as a flag's value, anywhere (fish takes a word
  // starting with - for a flag even there: --session=- it completes).
  ['argo sessions show -- -', 'argo sessions show -- -x '],
  ['argo sessions rm -y -- -', 'argo sessions rm -y -- -x '],
  ['argo --session=-', 'argo --session=-x '],
  ['argo -s -', 'argo -s -x ', ['bash', 'zsh']],
];

for (const shell of Object.keys(SHELLS) as ShellName[]) {
  describe.skipIf(SHELLS[shell] === null)(`Tab in an interactive ${shell}, in a folder with init.txt and config/`, () => {
    it.each(IN_PATHS_FOLDER.filter(([, , shells]) => shells?.includes(shell) ?? true))('%j, Tab → %j', async (typed, inserted) => {
      const session = await openShell(shell);
      const from = session.output.length;
      session.write(`cd '${pathsFolder}'\r`);
      await session.waitFor(READY, from);
      session.write(`${typed}\t`);
      expect(await bufferOf(session)).toBe(inserted);
    });
  });
}

/** How each shell is told that reading an unset variable is an error, and what it then says. */
const NOUNSET: Partial<Record<ShellName, { option: string; error: RegExp }>> = {
  bash: { option: 'set -u\n', error: /unbound variable/ },
  zsh: { option: 'setopt nounset\n', error: /parameter not set/ },
};

for (const [shell, nounset] of Object.entries(NOUNSET) as [ShellName, { option: string; error: RegExp }][]) {
  describe.skipIf(SHELLS[shell] === null)(`Tab in an interactive ${shell} that treats unset variables as errors`, () => {
    it.each([
      ['argo ch', 'argo chat '],
      ['argo -m q', 'argo -m qwen3:4b '],
      // Names that share no start: the line stays as it was.
      ['argo -m ', 'argo -m '],
      ['argo sessions show b', 'argo sessions show beta '],
      ['argo sessions show ', 'argo sessions show '],
      ['argo logs pr', 'argo logs prune '],
      ['argo logs ', 'argo logs '],
      [`argo --home '${otherHome}' sessions rm `, `argo --home '${otherHome}' sessions rm gamma `],
    ])('%j, Tab → %j, with no error', async (typed, inserted) => {
      const session = await openShell(shell, nounset.option);
      const from = session.output.length;
      session.write(`${typed}\t`);
      expect(await bufferOf(session)).toBe(inserted);
      expect(screenFrom(session, from)).not.toMatch(nounset.error);
    });
  });
}
