import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHELLS, completionScript } from '../../src/cli/completion.js';
import type { CompletionSpec } from '../../src/cli/completion.js';
import { installedShell } from '../support/shells.js';

const SPEC: CompletionSpec = {
  options: ['-m', '--model', '-s', '--session', '-r', '--replay', '-c', '--continue', '--explain', '--json', '-q', '--quiet', '--home', '--host'],
  valueFlags: ['-m', '--model', '-s', '--session', '-r', '--replay', '--home', '--host', '-n', '--limit'],
  commands: [
    { name: 'chat', description: 'talk in turns', options: ['-s', '--session', '--replay'] },
    { name: 'logs', description: 'query the log', options: ['--truncated', '--json', '-n', '-m'] },
    { name: 'completion', description: 'print a completion script', options: [], words: ['bash', 'zsh', 'fish'] },
    {
      name: 'sessions',
      description: "list sessions: it's all here",
      options: ['--json', '--home'],
      subcommands: [
        { name: 'list', aliases: ['ls'], description: 'list sessions', options: ['--json'] },
        { name: 'show', description: 'print a transcript', options: ['-n', '--limit', '--home'], args: ['sessions'] },
        { name: 'rm', description: 'remove a session', options: ['-y', '--home'], args: ['sessions'] },
        { name: 'rename', description: 'rename a session', options: ['--home'], args: ['sessions', null] },
      ],
    },
  ],
};

const dir = mkdtempSync(join(tmpdir(), 'argo-completion-'));
const scripts = { bash: join(dir, 'argo.bash'), zsh: join(dir, 'argo.zsh'), fish: join(dir, 'argo.fish') };
for (const shell of SHELLS) writeFileSync(scripts[shell], completionScript(shell, SPEC));

/**
 * A stand-in `argo` on PATH: `argo __complete WHAT [--home DIR] [--host FILE]` prints the names in
 * DIR/WHAT (DIR: $STUB_HOME unless given) or, with --host, in FILE, as the real one prints those of
 * a data home or an Ollama.
 */
const bin = join(dir, 'bin');
mkdirSync(bin);
writeFileSync(
  join(bin, 'argo'),
  `#!/bin/bash
[[ $1 == __complete ]] || exit 0
what=$2; shift 2; home=$STUB_HOME; from=""
while (($#)); do case $1 in --home) home=$2 ;; --host) from=$2 ;; *) exit 3 ;; esac; shift 2; done
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
const defaultHome = home('default', { sessions: ['work', 'writing', 'play'], models: ['llama3:8b', 'argo:latest'] });
const otherHome = home('other home', { sessions: ['wide', 'other'], models: ['qwen3:4b'] });
const marker = join(dir, 'ran');
const HOSTILE = [`$(touch ${marker})`, '*', 'has space', "qu'ote", '`id`', '"dq"'];
const hostileHome = home('hostile', { sessions: HOSTILE, models: HOSTILE });
const hostModels = join(dir, 'host-models');
writeFileSync(hostModels, 'mistral:7b\n');
const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, STUB_HOME: defaultHome };

/** A command line as words, the cursor at the end of the last; a string is split on spaces. */
type Line = string | string[];
const wordsOf = (line: Line): string[] => (typeof line === 'string' ? line.split(' ') : line);
const quoteForShell = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;

/** Runs the bash completion function as bash's completion would (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT). */
function completeInBash(line: Line): string[] {
  const words = wordsOf(line);
  const text = words.join(' ');
  const script = [
    `source ${scripts.bash}`,
    `COMP_WORDS=(${words.map(quoteForShell).join(' ')}); COMP_CWORD=${words.length - 1}; COMP_WORDBREAKS=$' \\t\\n"\\'><=;|&(:'`,
    `COMP_LINE=${quoteForShell(text)}; COMP_POINT=${text.length}`,
    '_argo; printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  return execFileSync('bash', ['-c', script], { encoding: 'utf8', env }).split('\n').filter((word) => word !== '');
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
  const out = execFileSync('fish', ['--no-config', '-c', `source ${scripts.fish}; complete -C ${quoteForShell(text)}`], { encoding: 'utf8', env });
  return out
    .split('\n')
    .filter((entry) => entry !== '')
    .map((entry) => entry.split('\t')[0] ?? '');
}

const COMPLETERS = { bash: completeInBash, zsh: completeInZsh, fish: completeInFish };
const sorted = (words: string[]): string[] => [...words].sort();

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
    ['argo -q sess', ['sessions']],
    ['argo completion ', ['bash', 'zsh', 'fish']],
    ['argo help se', ['sessions']],
    [['argo', '--home', otherHome.replaceAll(' ', '\\ '), 'sessions', 'show', ''], ['wide', 'other']],
    [['argo', '--home', `'${otherHome}'`, 'sessions', 'rm', ''], ['wide', 'other']],
    [['argo', 'sessions', 'show', '--home', `"${otherHome}"`, 'o'], ['other']],
    [['argo', `--home='${otherHome}'`, '-s', ''], ['wide', 'other']],
    [['argo', '--host', hostModels, '-m', ''], ['mistral:7b']],
    ['argo why is the sky b', []],
  ])('%j → %j', (line, expected) => {
    // fish offers `complete -a` candidates in its own order.
    expect(shell === 'fish' ? sorted(complete(line)) : complete(line)).toEqual(shell === 'fish' ? sorted(expected) : expected);
  });

  it('offers no subcommand once one is typed', () => {
    for (const line of ['argo sessions show ', 'argo sessions show work ', 'argo sessions rename work ']) {
      expect(complete(line)).not.toContain('show');
      expect(complete(line)).not.toContain('list');
    }
  });

  it('takes names as text: nothing in a name is run or expanded', () => {
    const offered = complete(['argo', '--home', hostileHome, 'sessions', 'show', '']);
    expect(offered).toHaveLength(HOSTILE.length);
    if (shell !== 'bash') expect(sorted(offered)).toEqual(sorted(HOSTILE));
    expect(complete(['argo', '--home', hostileHome, '-m', ''])).toHaveLength(HOSTILE.length);
    expect(existsSync(marker)).toBe(false);
  });

  it('is valid syntax', () => {
    expect(() => execFileSync(shell, ['-n', scripts[shell]])).not.toThrow();
  });
});

describe('bash completion', () => {
  it.each([
    ['argo ch', ['chat']],
    ['argo c', ['chat', 'completion']],
    ['argo h', ['help']],
    ['argo help l', ['logs']],
    ['argo --ex', ['--explain']],
    ['argo --session ', ['work', 'writing', 'play']],
    ['argo chat -s p', ['play']],
    ['argo -m llama3:', ['8b']],
    ['argo -r l', ['last:1', 'last:3', 'last:5']],
    ['argo -m llama3 logs --tr', ['--truncated']],
    ['argo sessions s', ['show']],
    ['argo -- ch', []],
  ])('%j → %j', (line, expected) => {
    expect(completeInBash(line)).toEqual(expected);
  });

  it('offers each name quoted for the line', () => {
    expect(completeInBash(['argo', '--home', hostileHome, '-s', ''])).toEqual([`\\$\\(touch\\ ${marker}\\)`, '\\*', 'has\\ space', "qu\\'ote", '\\`id\\`', '\\"dq\\"']);
    // --home=DIR reaches bash as three words: --home, =, DIR.
    expect(completeInBash(['argo', '--home', '=', hostileHome, 'sessions', 'show', 'has'])).toEqual(['has\\ space']);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('zsh and fish scripts', () => {
  it.each(['zsh', 'fish'] as const)('%s names every command and asks argo for session and model names with the line\'s --home and --host', (shell) => {
    const script = completionScript(shell, SPEC);
    for (const command of SPEC.commands) expect(script).toContain(command.name);
    expect(script).toMatch(shell === 'zsh' ? /argo __complete \$1 "\$\{where\[@\]\}"/ : /argo __complete \$argv \$__argo_where/);
    expect(script).toContain('--truncated'.slice(shell === 'fish' ? 2 : 0));
  });

  it('quotes descriptions with apostrophes and colons safely', () => {
    expect(completionScript('zsh', SPEC)).toContain(`'sessions:list sessions\\: it'\\''s all here'`);
    expect(completionScript('fish', SPEC)).toContain(`-a sessions -d 'list sessions: it'\\''s all here'`);
  });
});
