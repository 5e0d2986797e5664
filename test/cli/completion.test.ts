import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SHELLS, completionScript } from '../../src/cli/completion.js';
import type { CompletionSpec, ValueFlag } from '../../src/cli/completion.js';
import { startBashCompleter } from '../support/bash-completer.js';
import type { BashCompleter } from '../support/bash-completer.js';
import { defined } from '../support/defined.js';
import { installedShell } from '../support/shells.js';

const SESSION: ValueFlag = { flags: ['-s', '--session'], value: { names: 'sessions' } };
const MODEL: ValueFlag = { flags: ['-m', '--model'], value: { names: 'models' } };
const REPLAY: ValueFlag = { flags: ['-r', '--replay'], value: { choices: ['none', 'session', 'last:1', 'last:3', 'last:5'] } };
const THINK: ValueFlag = { flags: ['--think'], value: { choices: ['on', 'off', 'low', 'medium', 'high', 'max'] } };
const REASON: ValueFlag = { flags: ['--reason'], value: { choices: ['continuation', 'clarification', 'session'] } };
const HOME_FLAG: ValueFlag = { flags: ['--home'], value: 'folders' };
const HOST_FLAG: ValueFlag = { flags: ['--host'], value: 'text' };
const SPEC: CompletionSpec = {
  options: [
    '-m', '--model', '-s', '--session', '-r', '--replay', '--reason', '--think', '-c', '--continue', '--explain', '--json', '-q', '--quiet', '--home', '--host',
    '-o', '--option', '--system-file', '--temperature', '--root',
  ],
  values: [
    MODEL, SESSION, REPLAY, REASON, THINK, HOME_FLAG, HOST_FLAG, { flags: ['-o', '--option'], value: 'text' }, { flags: ['--system-file'], value: 'files' },
    { flags: ['--temperature'], value: 'text' }, { flags: ['--root'], value: 'folders' },
  ],
  valueFlags: ['-m', '--model', '-s', '--session', '-r', '--replay', '--reason', '--think', '--home', '--host', '-n', '--limit', '-o', '--option', '--output', '--system-file', '--temperature', '--root', '--format', '--grep'],
  commands: [
    { name: 'chat', description: 'talk in turns', options: ['-s', '--session', '--replay', '--reason', '--root'], values: [SESSION, REPLAY, REASON, { flags: ['--root'], value: 'folders' }] },
    {
      name: 'logs', description: 'query the log', options: ['--truncated', '--json', '-n', '-m', '--model', '--reason', '-q', '--grep'],
      values: [{ flags: ['-n'], value: 'text' }, MODEL, { flags: ['--reason'], value: 'text' }, { flags: ['-q', '--grep'], value: 'text' }],
      subcommands: [{ name: 'rm', description: 'delete a session\'s lines', options: ['-y', '--yes'] }],
    },
    { name: 'completion', description: 'print a completion script', options: [], words: ['bash', 'zsh', 'fish'] },
    { name: 'doctor', description: 'check', options: ['--home', '--api', '--json'], values: [HOME_FLAG, { flags: ['--api'], value: { choices: ['chat', 'generate'] } }] },
    {
      name: 'export', description: 'export sessions', options: ['--format', '-s', '--session', '-o', '--output'],
      values: [{ flags: ['--format'], value: { choices: ['sharegpt'] } }, SESSION, { flags: ['-o', '--output'], value: 'files' }],
    },
    {
      name: 'sessions',
      description: "list sessions: it's all here",
      options: ['--json', '--home'],
      values: [HOME_FLAG],
      subcommands: [
        { name: 'list', aliases: ['ls'], description: 'list sessions', options: ['--json'] },
        { name: 'show', description: 'print a transcript', options: ['-n', '--limit', '--home'], values: [{ flags: ['-n', '--limit'], value: 'text' }, HOME_FLAG], args: ['sessions'] },
        { name: 'rm', description: 'remove a session', options: ['-y', '--home'], values: [HOME_FLAG], args: ['sessions'] },
        { name: 'rename', description: 'rename a session', options: ['--home'], values: [HOME_FLAG], args: ['sessions', null] },
      ],
    },
  ],
};

const dir = mkdtempSync(join(tmpdir(), 'argo-completion-'));
const scripts = { bash: join(dir, 'argo.bash'), zsh: join(dir, 'argo.zsh'), fish: join(dir, 'argo.fish') };
for (const shell of SHELLS) writeFileSync(scripts[shell], completionScript(shell, SPEC));

/**
 * A stand-in `argo` on PATH: `argo __complete WHAT [--home DIR] [--host URL]` prints the names in
 * DIR/WHAT (DIR: $STUB_HOME unless given) or, with --host, the models of that URL (hostFile), as
 * the real one prints those of a data home or an Ollama.
 */
const bin = join(dir, 'bin');
mkdirSync(bin);
const hosts = join(dir, 'hosts');
mkdirSync(hosts);
/** Where the stand-in finds the models of an Ollama at `url`: each character but a letter, digit or dot made _. */
const hostFile = (url: string): string => join(hosts, url.replace(/[^A-Za-z0-9.]/g, '_'));
writeFileSync(
  join(bin, 'argo'),
  `#!/bin/bash
[[ $1 == __complete ]] || exit 0
what=$2; shift 2; home=$STUB_HOME; from=""
while (($#)); do case $1 in --home) home=$2 ;; --host) from='${hosts}'/\${2//[^A-Za-z0-9.]/_} ;; *) exit 3 ;; esac; shift 2; done
cat "\${from:-$home/$what}" 2>/dev/null
`,
  { mode: 0o755 },
);
function home(name: string, names: { sessions?: string[]; models?: string[] }): string {
  const path = join(dir, name);
  mkdirSync(path);
  for (const [what, list] of Object.entries(names)) writeFileSync(join(path, what), list.map((entry) => `${entry}\n`).join(''));
  return path;
}
/** -dash: a session name may start with -, which the command takes for a flag unless it follows --. */
const defaultHome = home('default', { sessions: ['work', 'writing', 'play', '-dash'], models: ['llama3:8b', 'argo:latest'] });
const otherHome = home('other home', { sessions: ['wide', 'other'], models: ['qwen3:4b'] });
/** A data home whose path holds a colon, which bash splits words on. */
const colonHome = home('at:colon', { sessions: ['far', 'near'] });
const marker = join(dir, 'ran');
const HOSTILE = [`$(touch ${marker})`, '*', 'has space', "qu'ote", '`id`', '"dq"', `tag:$(touch ${marker})`];
const hostileHome = home('hostile', { sessions: HOSTILE, models: HOSTILE });
const HOST = 'http://127.0.0.1:41020';
for (const url of [HOST, '127.0.0.1:41020']) writeFileSync(hostFile(url), 'mistral:7b\n');
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, STUB_HOME: defaultHome };
/** The folder the shells complete in: a file and a folder whose names a path flag's value may take. */
const workDir = join(dir, 'work');
mkdirSync(join(workDir, 'afolder'), { recursive: true });
writeFileSync(join(workDir, 'afile.txt'), '');

/** A command line as words, the cursor at the end of the last; a string is split on spaces. */
type Line = string | string[];
const wordsOf = (line: Line): string[] => (typeof line === 'string' ? line.split(' ') : line);
const quoteForShell = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;

const bash = installedShell('bash');
/** A bash running the script's _argo for the lines it is given (COMP_WORDBREAKS: bash's own unless given). */
const startBash = (wordbreaks?: string): Promise<BashCompleter> =>
  startBashCompleter(defined(bash, 'bash'), {
    script: scripts.bash, fn: '_argo', command: 'argo', env: { PATH: env.PATH, STUB_HOME: defaultHome }, ...(wordbreaks === undefined ? {} : { wordbreaks }),
  });
let bashCompleter: Promise<BashCompleter> | undefined;
afterAll(async () => {
  await (await bashCompleter)?.close();
});

/**
 * Runs the bash completion function in bash itself, on the line as typed (the words joined by
 * spaces): bash splits it into COMP_WORDS at its COMP_WORDBREAKS, as at a terminal.
 */
async function completeInBash(line: Line): Promise<string[]> {
  bashCompleter ??= startBash();
  return (await bashCompleter).complete(wordsOf(line).join(' '));
}

/**
 * Runs the zsh completion function on words/CURRENT/PREFIX as zsh's completion system sets them,
 * with compadd and _describe standing in (they print the candidates matching PREFIX): zsh's own
 * widgets need a terminal, so this checks the script's logic, not zsh's insertion and quoting.
 */
function completeInZsh(line: Line): string[] {
  const harness = join(dir, 'harness.zsh');
  writeFileSync(
    harness,
    `compdef() { : }
compadd() { while [[ $1 != -- ]]; do shift; done; shift; local w; for w in "$@"; do [[ $w == "$PREFIX"* ]] && print -r -- "$w"; done }
_describe() { local w; for w in "\${(@P)2}"; do w=\${w%%:*}; [[ $w == "$PREFIX"* ]] && print -r -- "$w"; done }
_files() { print -r -- "(files after $PREFIX)" }
_path_files() { [[ $1 == -/ ]] && print -r -- "(folders after $PREFIX)" }
source $1; shift
words=("$@"); CURRENT=$#words; PREFIX=\${words[CURRENT]}
_argo; true
`,
  );
  return execFileSync('zsh', ['-f', harness, scripts.zsh, ...wordsOf(line)], { encoding: 'utf8', env }).split('\n').filter((word) => word !== '');
}

/** Asks fish itself (`complete -C`) for the candidates of a command line. */
function completeInFish(line: Line): string[] {
  const text = wordsOf(line).join(' ');
  const out = execFileSync('fish', ['--no-config', '-c', `source ${scripts.fish}; complete -C ${quoteForShell(text)}`], { encoding: 'utf8', env, cwd: workDir });
  return out
    .split('\n')
    .filter((entry) => entry !== '')
    .map((entry) => entry.split('\t')[0] ?? '');
}

const COMPLETERS: Record<(typeof SHELLS)[number], (line: Line) => Promise<string[]>> = {
  bash: completeInBash,
  zsh: (line) => Promise.resolve(completeInZsh(line)),
  fish: (line) => Promise.resolve(completeInFish(line)),
};
const sorted = (words: string[]): string[] => [...words].sort();

/**
 * A session named -dash: as an argument, only after -- (before it, the command would take it for a
 * flag); as a flag's value, anywhere.
 */
const DASH_NAMES: [Line, string[]][] = [
  ['argo sessions show -', ['-n', '--limit', '--home']],
  ['argo sessions show -- ', ['work', 'writing', 'play', '-dash']],
  ['argo sessions show -- -', ['-dash']],
  ['argo sessions show -n 2 -- w', ['work', 'writing']],
  ['argo sessions rm -y -- -d', ['-dash']],
  ['argo sessions rename -- ', ['work', 'writing', 'play', '-dash']],
  ['argo sessions rename -- -dash ', []],
  ['argo sessions show -- -dash ', []],
  ['argo -s -', ['-dash']],
  ['argo export -s -', ['-dash']],
  ['argo -- -', []],
];

// A shell that is not installed shows as skipped.
for (const shell of SHELLS) describe.skipIf(installedShell(shell) === null)(`${shell} completion`, () => {
  const complete = COMPLETERS[shell];
  it.each<[Line, string[]]>([
    ['argo sessions show ', ['work', 'writing', 'play']],
    ['argo sessions show w', ['work', 'writing']],
    ['argo sessions rm p', ['play']],
    ['argo sessions rename ', ['work', 'writing', 'play']],
    ['argo sessions show -n 3 w', ['work', 'writing']],
    ['argo sessions ls --j', ['--json']],
    ['argo sessions show work --l', ['--limit']],
    ['argo sessions r', ['rm', 'rename']],
    ['argo -s w', ['work', 'writing']],
    ['argo logs -m ll', ['llama3:8b']],
    ['argo -m llama3:8b logs -m a', ['argo:latest']],
    ['argo -r l', ['last:1', 'last:3', 'last:5']],
    ['argo -q sess', ['sessions']],
    ['argo completion ', ['bash', 'zsh', 'fish']],
    ['argo help se', ['sessions']],
    [['argo', '--home', otherHome.replaceAll(' ', '\\ '), 'sessions', 'show', ''], ['wide', 'other']],
    [['argo', '--home', `'${otherHome}'`, 'sessions', 'rm', ''], ['wide', 'other']],
    [['argo', 'sessions', 'show', '--home', `"${otherHome}"`, 'o'], ['other']],
    [['argo', `--home='${otherHome}'`, '-s', ''], ['wide', 'other']],
    // A value with a colon is one word: the URL's port and the path are kept.
    [['argo', '--host', HOST, '-m', ''], ['mistral:7b']],
    [['argo', '--host', '127.0.0.1:41020', '-m', 'm'], ['mistral:7b']],
    [['argo', `--host=${HOST}`, '-m', 'm'], ['mistral:7b']],
    [['argo', '--host', HOST, 'logs', '-m', ''], ['mistral:7b']],
    [['argo', '--home', colonHome, 'sessions', 'show', ''], ['far', 'near']],
    [['argo', '--home', colonHome, '-s', 'n'], ['near']],
    ['argo why is the sky b', []],
  ])('%j → %j', async (line, expected) => {
    // fish offers `complete -a` candidates in its own order.
    const offered = await complete(line);
    expect(shell === 'fish' ? sorted(offered) : offered).toEqual(shell === 'fish' ? sorted(expected) : expected);
  });

  // A command's own flags, and no other's.
  it.each<[Line, string[]]>([
    ['argo doctor --', ['--home', '--api', '--json']],
    ['argo doctor --s', []],
    ['argo completion --', []],
    ['argo chat --re', ['--replay', '--reason']],
    ['argo sessions show --', ['--limit', '--home']],
  ])('flags: %j → %j', async (line, expected) => {
    const offered = await complete(line);
    expect(shell === 'fish' ? sorted(offered) : offered).toEqual(shell === 'fish' ? sorted(expected) : expected);
  });

  // A flag's value: its choices where it has them (in that command: logs' --reason is free text),
  // nothing for text, a number or a URL.
  it.each<[Line, string[]]>([
    ['argo chat --reason c', ['continuation', 'clarification']],
    ['argo --reason ', ['continuation', 'clarification', 'session']],
    ['argo -m x chat --reason s', ['session']],
    ['argo doctor --api ', ['chat', 'generate']],
    ['argo export --format ', ['sharegpt']],
    ['argo --think m', ['medium', 'max']],
    ['argo -r n', ['none']],
    ['argo logs --reason ', []],
    ['argo logs -q ', []],
    ['argo -o ', []],
    ['argo --temperature ', []],
    ['argo --host ', []],
  ])('values: %j → %j', async (line, expected) => {
    const offered = await complete(line);
    expect(shell === 'fish' ? sorted(offered) : offered).toEqual(shell === 'fish' ? sorted(expected) : expected);
  });

  // fish itself offers flags for a word starting with -, even as a flag's value: there, --session=- (below).
  it.each(DASH_NAMES.filter(([line]) => shell !== 'fish' || !wordsOf(line).join(' ').endsWith(' -s -')))('names starting with -: %j → %j', async (line, expected) => {
    const offered = await complete(line);
    expect(shell === 'fish' ? sorted(offered) : offered).toEqual(shell === 'fish' ? sorted(expected) : expected);
  });

  // Whether a flag takes the next word is the command's own say: -q is --quiet for a question and
  // --grep TEXT for logs, so `argo logs -q rm` greps for rm and `argo -q logs` runs logs.
  it.each<[Line, string[]]>([
    ['argo logs -q rm --', ['--truncated', '--json', '--model', '--reason', '--grep']],
    ['argo logs rm --', ['--yes']],
    ['argo logs --grep rm -- -', []],
    ['argo -q logs rm -', ['-y', '--yes']],
    ['argo -q sessions show w', ['work', 'writing']],
    ['argo logs -n 3 r', ['rm']],
  ])('scan: %j → %j', async (line, expected) => {
    const offered = await complete(line);
    expect(shell === 'fish' ? sorted(offered) : offered).toEqual(shell === 'fish' ? sorted(expected) : expected);
  });

  it('offers no subcommand once one is typed', async () => {
    for (const line of ['argo sessions show ', 'argo sessions show work ', 'argo sessions rename work ']) {
      const offered = await complete(line);
      expect(offered).not.toContain('show');
      expect(offered).not.toContain('list');
    }
  });

  it('takes names as text: nothing in a name is run or expanded', async () => {
    const offered = await complete(['argo', '--home', hostileHome, 'sessions', 'show', '']);
    expect(offered).toHaveLength(HOSTILE.length);
    if (shell !== 'bash') expect(sorted(offered)).toEqual(sorted(HOSTILE));
    expect(await complete(['argo', '--home', hostileHome, '-m', ''])).toHaveLength(HOSTILE.length);
    expect(await complete(['argo', '--home', hostileHome, '-m', 'tag:'])).toHaveLength(1);
    expect(existsSync(marker)).toBe(false);
  });

  it('is valid syntax', () => {
    expect(() => execFileSync(shell, ['-n', scripts[shell]])).not.toThrow();
  });
});

// bash splits words at : and = (COMP_WORDBREAKS) and replaces only the text after the last of them:
// a candidate is what follows it (8b after llama3:).
describe.skipIf(bash === null)('bash completion', () => {
  it.each<[Line, string[]]>([
    ['argo ch', ['chat']],
    ['argo c', ['chat', 'completion']],
    ['argo h', ['help']],
    ['argo help l', ['logs']],
    ['argo --ex', ['--explain']],
    ['argo --session ', ['work', 'writing', 'play', '-dash']],
    ['argo chat -s p', ['play']],
    ['argo -m llama3:', ['8b']],
    ['argo -m llama3:8', ['8b']],
    ['argo -m llama3:9', []],
    ['argo --model llama3:', ['8b']],
    ['argo logs -m llama3:', ['8b']],
    ['argo --model=', ['llama3:8b', 'argo:latest']],
    ['argo --model=ll', ['llama3:8b']],
    ['argo --model=llama3:', ['8b']],
    ['argo --session=w', ['work', 'writing']],
    ['argo --think=h', ['high']],
    ['argo -r last:', ['1', '3', '5']],
    ['argo -r last:3', ['3']],
    ['argo --replay=last:', ['1', '3', '5']],
    ['argo -m llama3:8b -r last:', ['1', '3', '5']],
    ['argo -m llama3:8b sess', ['sessions']],
    ['argo -m llama3:8b sessions show w', ['work', 'writing']],
    ['argo -r last:3 sessions r', ['rm', 'rename']],
    [['argo', '--host', HOST, '-m', 'mistral:'], ['7b']],
    [['argo', `--host=${HOST}`, '-m', 'mistral:'], ['7b']],
    [['argo', '--host', HOST, '--model=mi'], ['mistral:7b']],
    ['argo -m llama3 logs --tr', ['--truncated']],
    ['argo sessions s', ['show']],
    ['argo -- ch', []],
  ])('%j → %j', async (line, expected) => {
    expect(await completeInBash(line)).toEqual(expected);
  });

  it('offers each name quoted for the line', async () => {
    const quoted = [`\\$\\(touch\\ ${marker}\\)`, '\\*', 'has\\ space', "qu\\'ote", '\\`id\\`', '\\"dq\\"', `tag:\\$\\(touch\\ ${marker}\\)`];
    expect(await completeInBash(['argo', '--home', hostileHome, '-s', ''])).toEqual(quoted);
    // Only what follows the colon: bash keeps the tag: typed.
    expect(await completeInBash(['argo', '--home', hostileHome, '-m', 'tag:'])).toEqual([`\\$\\(touch\\ ${marker}\\)`]);
    expect(await completeInBash(['argo', `--home=${hostileHome}`, 'sessions', 'show', 'has'])).toEqual(['has\\ space']);
    expect(existsSync(marker)).toBe(false);
  });
});

// A path's value: zsh's _files, or _path_files -/ for a folder (_files -/ falls back to files when
// no folder matches; both stood in for: they need a terminal), fish's own file and folder names.
// bash's come from its own default (complete -o default, and -o dirnames for a folder), which
// test/e2e/completion-shells.test.ts checks at a terminal.
const PATH_VALUES: [Line, { zsh: string[]; fish: string[] }][] = [
  ['argo --system-file a', { zsh: ['(files after a)'], fish: ['afile.txt', 'afolder/'] }],
  ['argo --home a', { zsh: ['(folders after a)'], fish: ['afolder/'] }],
  ['argo chat --root a', { zsh: ['(folders after a)'], fish: ['afolder/'] }],
  ['argo sessions show --home ', { zsh: ['(folders after )'], fish: ['afolder/'] }],
  ['argo export -o a', { zsh: ['(files after a)'], fish: ['afile.txt', 'afolder/'] }],
  ['argo -o a', { zsh: [], fish: [] }],
];
for (const shell of ['zsh', 'fish'] as const) {
  describe.skipIf(installedShell(shell) === null)(`${shell} completion of a path`, () => {
    it.each(PATH_VALUES)('%j → %j', async (line, expected) => {
      expect(sorted(await COMPLETERS[shell](line))).toEqual(expected[shell]);
    });
  });
}

describe.skipIf(installedShell('fish') === null)('fish completion of a value after =', () => {
  it.each<[Line, string[]]>([
    ['argo --home=a', ['--home=afolder/']],
    ['argo --system-file=afi', ['--system-file=afile.txt']],
    ['argo --session=-', ['--session=-dash']],
  ])('%j → %j', (line, expected) => {
    expect(completeInFish(line)).toEqual(expected);
  });
});

// Some take : out of COMP_WORDBREAKS (bash's FAQ E13): then bash keeps llama3:8 whole and replaces all of it.
describe.skipIf(bash === null)('bash completion, : not a word break', () => {
  let completer: Promise<BashCompleter> | undefined;
  afterAll(async () => {
    await (await completer)?.close();
  });
  it.each<[Line, string[]]>([
    ['argo -m llama3:', ['llama3:8b']],
    ['argo --model=llama3:', ['llama3:8b']],
    ['argo -r last:', ['last:1', 'last:3', 'last:5']],
    [['argo', '--host', HOST, '-m', 'm'], ['mistral:7b']],
  ])('%j → %j', async (line, expected) => {
    completer ??= startBash(' \t\n"\'><=;|&(');
    expect(await (await completer).complete(wordsOf(line).join(' '))).toEqual(expected);
  });
});

describe('zsh and fish scripts', () => {
  it.each(['zsh', 'fish'] as const)('%s names every command and asks argo for session and model names with the line\'s --home and --host', (shell) => {
    const script = completionScript(shell, SPEC);
    for (const command of SPEC.commands) expect(script).toContain(command.name);
    expect(script).toMatch(shell === 'zsh' ? /argo __complete \$1 "\$\{where\[@\]\}"/ : /argo __complete \$argv\[1\] \$__argo_where/);
    expect(script).toContain('--truncated'.slice(shell === 'fish' ? 2 : 0));
  });

  it('quotes descriptions with apostrophes and colons safely', () => {
    expect(completionScript('zsh', SPEC)).toContain(`'sessions:list sessions\\: it'\\''s all here'`);
    expect(completionScript('fish', SPEC)).toContain(`-a sessions -d 'list sessions: it'\\''s all here'`);
  });
});
