// A bash completion function run by bash itself: an interactive bash on a pseudo-terminal, where
// each line is typed and Tab pressed. So the function sees COMP_WORDS, COMP_CWORD, COMP_LINE,
// COMP_POINT and COMP_WORDBREAKS as bash builds them (llama3:8b split into llama3, : and 8b; quotes
// kept), not as a test would guess them, and runs inside a completion (compopt works). What it puts
// in COMPREPLY is read back; nothing is inserted into the line.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProgramInPty } from './pty.js';
import type { PtySession } from './pty.js';
import { waitFor } from './wait.js';

export interface BashCompleter {
  /** The candidates the completion function offers for `line`, typed whole, the cursor at its end. */
  complete(line: string): Promise<string[]>;
  close(): Promise<void>;
}

export interface BashCompleterOptions {
  /** A file defining `fn`, sourced by the shell. */
  script: string;
  /** The completion function, and the command it completes. */
  fn: string;
  command: string;
  /** The shell's environment (PATH and what the function's commands need). */
  env: Record<string, string>;
  /** COMP_WORDBREAKS, when not bash's own (some take the : out of it). */
  wordbreaks?: string;
}

const READY = 'completer-ready> ';
/** Ctrl-U: the typed line is dropped before the next. */
const CLEAR_LINE = '\x15';

export async function startBashCompleter(bash: string, options: BashCompleterOptions): Promise<BashCompleter> {
  const dir = mkdtempSync(join(tmpdir(), 'argo-bash-completer-'));
  const reply = join(dir, 'reply');
  const init = join(dir, 'init.bash');
  // The reply is written aside and moved into place, so it is read whole: its count, then each
  // candidate, NUL-separated (a candidate may hold any other byte).
  writeFileSync(
    init,
    `PS1='${READY}'
unset HISTFILE
${options.wordbreaks === undefined ? '' : `COMP_WORDBREAKS='${options.wordbreaks.replaceAll("'", "'\\''")}'`}
source '${options.script}'
__test_reply() {
  ${options.fn} "$@"
  printf '%s\\0' "\${#COMPREPLY[@]}" "\${COMPREPLY[@]}" > '${reply}.part' && mv '${reply}.part' '${reply}'
  COMPREPLY=()
}
complete -F __test_reply ${options.command}
`,
  );
  // INPUTRC: no /etc/inputrc, whose settings would change what Tab does.
  const shell: PtySession = startProgramInPty(bash, ['--norc', '--noprofile', '-i'], { home: dir, env: { INPUTRC: '/dev/null', ...options.env }, cols: 500 });
  shell.write(`source '${init}'\r`);
  await shell.waitFor(READY);
  // One line at a time: the reply file is the one answer in flight.
  let queue: Promise<unknown> = Promise.resolve();
  const completeOne = async (line: string): Promise<string[]> => {
    shell.write(`${line}\t`);
    const fields = await waitFor(() => {
      if (!existsSync(reply)) throw new Error(`no completion reply yet for ${JSON.stringify(line)}`);
      return readFileSync(reply, 'utf8').split('\0').slice(0, -1);
    });
    rmSync(reply);
    shell.write(CLEAR_LINE);
    const [count, ...candidates] = fields;
    if (Number(count) !== candidates.length) throw new Error(`a reply of ${count ?? '?'} candidates held ${candidates.length}`);
    return candidates;
  };
  return {
    complete(line) {
      const next = queue.then(() => completeOne(line));
      queue = next.catch(() => undefined);
      return next;
    },
    async close() {
      shell.hangUp();
      await shell.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
