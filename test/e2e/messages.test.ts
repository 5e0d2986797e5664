// Argo's own messages quote what the user typed: each stays one line, and on a terminal nothing in
// it is obeyed, whoever wrote the message (commander's usage errors included).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startInPty } from '../support/pty.js';
import { runArgo, tempHome } from '../support/run-argo.js';

describe('a usage error commander writes, on a terminal: the value it quotes is shown, not obeyed', () => {
  it.each([
    [['last', '\x1b]0;X\x07'], "argo: command-argument value '^[]0;X^G' is invalid for argument 'n'. use a whole number, 0 or more. (see argo last --help)\r\n"],
    [['logs', '-n', '\x1b[2Jx'], "argo: option '-n, --limit <n>' argument '^[[2Jx' is invalid. use a whole number, 0 or more. (see argo logs --help)\r\n"],
    [['completion', 'zsh\x1b[31m'], "argo: command-argument value 'zsh^[[31m' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish. (see argo completion --help)\r\n"],
  ])('%j', async (args, line) => {
    const terminal = startInPty(args, { home: tempHome() });
    expect((await terminal.exited).code).toBe(2);
    expect(terminal.output).toBe(line);
  });
});

describe('a value from the user in a message is one line', () => {
  it.each([
    [['memo', 'get', 'k\nx'], 1, '', 'argo: no memo entry "k\\nx" (argo memo lists them)\n'],
    [['memo', 'rm', 'k\nx'], 1, '', 'argo: no memo entry "k\\nx" (argo memo lists them)\n'],
    [['tools', 'a\nb'], 2, '', 'argo: "tools" takes no word like "a\\nb" (argo tools --help)\n'],
  ])('%j', async (args, code, stdout, stderr) => {
    expect(await runArgo(args, { home: tempHome() })).toMatchObject({ code, stdout, stderr });
  });

  it('argo stop --home with a line break is refused in one line, the path as a JSON string', async () => {
    const home = join(tempHome(), 'a\nb');
    for (const args of [['stop'], ['stop', '--status']]) {
      expect(await runArgo([...args, '--home', home], { home })).toMatchObject({ code: 2, stdout: '', stderr: `argo: --home ${JSON.stringify(home)} holds a control or direction character: give the path without it\n` });
    }
  });
});
