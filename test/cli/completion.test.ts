import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { completionScript } from '../../src/cli/completion.js';
import type { CompletionSpec } from '../../src/cli/completion.js';

const SPEC: CompletionSpec = {
  options: ['-m', '--model', '-s', '--session', '-r', '--replay', '-c', '--continue', '--explain', '--json'],
  commands: [
    { name: 'chat', description: 'talk in turns', options: ['-s', '--session', '--replay'] },
    { name: 'logs', description: 'query the log', options: ['--truncated', '--json', '-n'] },
    { name: 'completion', description: 'print a completion script', options: [], words: ['bash', 'zsh', 'fish'] },
    { name: 'sessions', description: "list sessions: it's all here", options: ['--json'], words: ['show', 'rm'] },
  ],
};

const dir = mkdtempSync(join(tmpdir(), 'argo-completion-'));
const bashFile = join(dir, 'argo.bash');
writeFileSync(bashFile, completionScript('bash', SPEC));

/** Runs the bash completion function on a command line (the cursor at its end) with a stub argo. */
function completeInBash(line: string, sessions = 'work\\nwriting\\nplay\\n'): string[] {
  const words = line.split(' ');
  const script = [
    `argo() { case "$1 $2" in '__complete sessions') printf '%b' '${sessions}' ;; '__complete models') printf 'llama3:8b\\nargo:latest\\n' ;; esac; }`,
    `source ${bashFile}`,
    `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; COMP_WORDBREAKS=$' \\t\\n"\\'><=;|&(:'`,
    '_argo; printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  return execFileSync('bash', ['-c', script], { encoding: 'utf8' }).split('\n').filter((word) => word !== '');
}

describe('bash completion', () => {
  it.each([
    ['argo ch', ['chat']],
    ['argo c', ['chat', 'completion']],
    ['argo h', ['help']],
    ['argo help l', ['logs']],
    ['argo --ex', ['--explain']],
    ['argo -s w', ['work', 'writing']],
    ['argo --session ', ['work', 'writing', 'play']],
    ['argo chat -s p', ['play']],
    ['argo -m ll', ['llama3:8b']],
    ['argo -m llama3:', ['8b']],
    ['argo -r l', ['last:1', 'last:3', 'last:5']],
    ['argo completion ', ['bash', 'zsh', 'fish']],
    ['argo -m llama3 logs --tr', ['--truncated']],
    ['argo sessions s', ['show']],
    ['argo -- ch', []],
    ['argo why is the sky b', []],
  ])('%j → %j', (line, expected) => {
    expect(completeInBash(line)).toEqual(expected);
  });

  it('takes names as text: nothing in a name is run or expanded, and each is offered quoted for the line', () => {
    const marker = join(dir, 'ran');
    const hostile = [`$(touch ${marker})`, '*', 'has space', "qu'ote", '`id`'];
    const names = hostile.map((name) => name.replaceAll('\\', '\\\\').replaceAll("'", "'\\''")).join('\\n');
    expect(completeInBash('argo -s ', `${names}\\n`)).toEqual([`\\$\\(touch\\ ${marker.replaceAll('/', '/')}\\)`, '\\*', 'has\\ space', "qu\\'ote", '\\`id\\`']);
    expect(existsSync(marker)).toBe(false);
  });

  it('is valid bash', () => {
    expect(() => execFileSync('bash', ['-n', bashFile])).not.toThrow();
  });
});

describe('zsh and fish scripts', () => {
  it.each(['zsh', 'fish'] as const)('%s names every command and asks argo for session and model names', (shell) => {
    const script = completionScript(shell, SPEC);
    for (const command of SPEC.commands) expect(script).toContain(command.name);
    expect(script).toContain('argo __complete sessions');
    expect(script).toContain('argo __complete models');
    expect(script).toContain('--truncated'.slice(shell === 'fish' ? 2 : 0));
  });

  it('quotes descriptions with apostrophes and colons safely', () => {
    expect(completionScript('zsh', SPEC)).toContain(`'sessions:list sessions\\: it'\\''s all here'`);
    expect(completionScript('fish', SPEC)).toContain(`-a sessions -d 'list sessions: it'\\''s all here'`);
  });

  it('fish completes session and model values from argo', () => {
    const script = completionScript('fish', SPEC);
    expect(script).toContain(`complete -c argo -s s -l session -x -a '(argo __complete sessions 2>/dev/null)'`);
    expect(script).toContain(`complete -c argo -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'`);
  });
});
