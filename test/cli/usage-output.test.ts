import { describe, expect, it } from 'vitest';
import { usageErrorOutput } from '../../src/cli/usage-output.js';

/** The line usageErrorOutput writes for commander's `text`, on a terminal or not. */
function lineFor(command: string, text: string, isTTY = false): string {
  let written = '';
  usageErrorOutput(command, { isTTY })(text, (line) => (written += line));
  return written;
}

describe("commander's usage errors as Argo's one line", () => {
  it.each([
    ['argo', "error: unknown option '--jsn'\n(Did you mean --json?)\n", `argo: unknown option '--jsn' (did you mean "--json"?) (see argo --help)\n`],
    ['argo logs', "error: unknown option '--sesion'\n(Did you mean --session?)\n", `argo: unknown option '--sesion' (did you mean "--session"?) (see argo logs --help)\n`],
    ['argo', "error: unknown option '--ful'\n(Did you mean one of --full, --json?)\n", `argo: unknown option '--ful' (did you mean "--full" or "--json"?) (see argo --help)\n`],
    ['argo', "error: unknown option '--frobnicate'\n", "argo: unknown option '--frobnicate' (see argo --help)\n"],
    // Any line break in a quoted value keeps the message one line: \r and U+2028 as \n is.
    ['argo last', "error: command-argument value 'a\rb\u2028c' is invalid for argument 'n'.\n", "argo: command-argument value 'a b c' is invalid for argument 'n'. (see argo last --help)\n"],
    ['argo rerun', "error: unknown option '-xY3abcdefgh'\n", `argo: unknown option '-xY3abcdefgh'; if it is a turn id, put "--" before it (argo rerun -- -xY3abcdefgh) (see argo rerun --help)\n`],
  ])('%s: %j', (command, text, line) => {
    expect(lineFor(command, text)).toBe(line);
  });
});

describe('a value commander quotes as typed is shown, not obeyed, on a terminal', () => {
  const refused = "error: command-argument value '\x1b]0;X\x07' is invalid for argument 'n'. use a whole number, 0 or more.\n";
  it.each<[string, boolean, string]>([
    ['on a terminal: ESC and BEL made visible', true, "argo: command-argument value '^[]0;X^G' is invalid for argument 'n'. use a whole number, 0 or more. (see argo last --help)\n"],
    ['piped: byte-exact, as every message', false, "argo: command-argument value '\x1b]0;X\x07' is invalid for argument 'n'. use a whole number, 0 or more. (see argo last --help)\n"],
  ])('%s', (_case, isTTY, line) => {
    expect(lineFor('argo last', refused, isTTY)).toBe(line);
  });
});
