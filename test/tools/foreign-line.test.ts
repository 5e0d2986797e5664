import { describe, expect, it } from 'vitest';
import { classifyThrown } from '../../src/agent/taxonomy.js';
import { UNAVAILABLE_REASON_CHARS, clipped, foreignLine, quoting } from '../../src/tools/foreign-line.js';
import type { QuotingMessage } from '../../src/tools/foreign-line.js';
import { ToolError } from '../../src/tools/types.js';

const token = `ghp_${'a1B2'.repeat(9)}`;

describe('foreignLine: what a server wrote, as one harmless line', () => {
  it.each<[string, string, number, string]>([
    ['plain text stays', 'cannot open the database', 80, 'cannot open the database'],
    ['lines become one', 'starting\nlistening\r\nfailed: no config', 80, 'starting listening failed: no config'],
    ['colour sequences go whole, not only their ESC', '\u001b[31mcannot open\u001b[0m the database', 80, 'cannot open the database'],
    ['a title or clipboard sequence goes too', 'x\u001b]0;pwned\u0007y\u001b]52;c;ZXZpbA==\u0007z', 80, 'xyz'],
    ['lone controls, C1 and bidirectional marks become spaces', 'a\u0008b\u0085c\u202ed\u0007e', 80, 'a b c d e'],
    ['a token by its shape', `auth failed for ${token}`, 80, 'auth failed for ***'],
    ['NAME=value for a secret name', 'GITHUB_TOKEN=abc123def is not valid', 80, 'GITHUB_TOKEN=*** is not valid'],
    ['a bearer token', 'retried with Bearer abcdef123456: 401', 80, 'retried with Bearer ***: 401'],
    ["a URL's password", 'cannot reach postgres://app:hunter22@db:5432/main', 80, 'cannot reach postgres://app:***@db:5432/main'],
    ['names that only look like secrets stay', 'KEYBOARD=us AUTHOR=me TOKENIZERS_PARALLELISM=false', 80, 'KEYBOARD=us AUTHOR=me TOKENIZERS_PARALLELISM=false'],
    ['cut at the length, then …', 'x'.repeat(120), 100, `${'x'.repeat(100)}…`],
    // Masked before the cut: the cut would leave a piece of it too short to look like a token.
    ['a secret across the cut is masked, not left in part', `${'x'.repeat(90)} ${token}`, 100, `${'x'.repeat(90)} ***`],
    ['never half an emoji at the cut', `${'x'.repeat(9)}😀`, 10, `${'x'.repeat(9)}…`],
    ['blank is empty', ' \n\t\u001b[0m ', 80, ''],
  ])('%s', (_case, text, max, line) => {
    expect(foreignLine(text, max)).toBe(line);
  });

  it('a megabyte of stderr is read only as far as the line goes', () => {
    const line = foreignLine(`${'y '.repeat(500_000)}${token}`, UNAVAILABLE_REASON_CHARS);
    expect(line).toHaveLength(UNAVAILABLE_REASON_CHARS + 1);
    expect(line.endsWith('…')).toBe(true);
  });

  it('is the same line again: a reason cleaned twice does not change', () => {
    const once = foreignLine(`${'z'.repeat(600)} ${token}`, UNAVAILABLE_REASON_CHARS);
    expect(foreignLine(once, UNAVAILABLE_REASON_CHARS)).toBe(once);
  });
});

describe("quoting: Argo's words wrapping outside ones, each outside value masked on its own", () => {
  const secret = 'GITHUB_TOKEN=hunter2';
  it.each<[string, QuotingMessage, string]>([
    ['a value without secrets is quoted as it is', quoting`file "${'a.txt'}" does not exist`, 'file "a.txt" does not exist'],
    ["a secret ending a value keeps Argo's closing bracket", quoting`could not connect to x (${`refused: ${secret}`})`, 'could not connect to x (refused: GITHUB_TOKEN=***)'],
    ["a secret with an open quote keeps Argo's closing quote", quoting`"${'GITHUB_TOKEN="hunter2'}" is a binary file`, '"GITHUB_TOKEN=***" is a binary file'],
    ['each value on its own: a secret in one does not run into the next', quoting`(${secret}) and (${'b'})`, '(GITHUB_TOKEN=***) and (b)'],
    ["Argo's words are not masked: a sign of Argo's is no value's", quoting`${'token.example.com'}: refused (${'ECONNREFUSED'})`, 'token.example.com: refused (ECONNREFUSED)'],
    ['a token by its shape', quoting`auth failed (${token})`, 'auth failed (***)'],
    ['a value on one line, its controls shown, not deleted', quoting`"${'a\nb\u001b[31mc'}" is a file`, '"a b^[[31mc" is a file'],
    ['an OSC sequence, a C1 CSI and a bidirectional mark, each visible', quoting`file "${'\u001b]52;c;Zm9v\u0007\u009b2J\u202e.txt'}" does not exist`, 'file "^[]52;c;Zm9v^G\\x9b2J\\u202e.txt" does not exist'],
    ['a path ending in a control is not another path', quoting`path "${'sub/inner/\u001b[2J'}" is outside the root`, 'path "sub/inner/^[[2J" is outside the root'],
    ['tabs and line breaks are one space each run', quoting`"${'a\t\r\n b'}"`, '"a b"'],
    ['a secret next to a control is masked', quoting`(${'GITHUB_TOKEN=hunter2\u0007'})`, '(GITHUB_TOKEN=***)'],
    ["a value's spaces at its ends are kept: they are part of a path", quoting`file "${' a.txt '}" does not exist`, 'file " a.txt " does not exist'],
    ['a number as it is', quoting`timed out after ${30} s`, 'timed out after 30 s'],
    ['a clipped value is cut after its secret is masked, so none is left in part', quoting`pattern "${clipped(`${'x'.repeat(90)} ${token}`, 100)}" expands`, `pattern "${'x'.repeat(90)} ***" expands`],
    ['a clipped value past its length ends in …', quoting`pattern "${clipped('y'.repeat(120), 100)}" expands`, `pattern "${'y'.repeat(100)}…" expands`],
    ['a value of a megabyte is kept to a bounded quote', quoting`(${'z'.repeat(1_000_000)})`, `(${'z'.repeat(1000)}…)`],
  ])('%s', (_case, message, text) => {
    expect(message.text).toBe(text);
  });

  it.each<[string, QuotingMessage, string]>([
    ['each value as …', quoting`file "${'a.txt'}" does not exist`, 'file "…" does not exist'],
    ['whatever the value holds', quoting`file "${'a" path is required'}" does not exist`, 'file "…" does not exist'],
    ['values at the ends', quoting`${'h'}: refused (${'ECONNREFUSED'})`, '…: refused (…)'],
    ['no value', quoting`the command was interrupted`, 'the command was interrupted'],
  ])("ownWords, Argo's words alone: %s", (_case, message, words) => {
    expect(message.ownWords).toBe(words);
    expect(new ToolError(message).ownWords).toBe(words);
  });

  it('a ToolError from plain text has no words known apart', () => {
    expect(new ToolError('command is required for start').ownWords).toBeNull();
  });

  it('a ToolError built from it is marked masked, and the taxonomy keeps its words as they are', () => {
    const error = new ToolError(quoting`could not connect to h (${`refused: ${secret}`})`);
    expect(error).toMatchObject({ message: 'could not connect to h (refused: GITHUB_TOKEN=***)', masked: true, retryable: true });
    expect(classifyThrown(error, [])).toEqual({ kind: 'failure', message: 'could not connect to h (refused: GITHUB_TOKEN=***)', retryable: true, detail: null });
    expect(new ToolError(quoting`no session named "${secret}"`, false)).toMatchObject({ masked: true, retryable: false });
  });

  it("a plain message is masked whole, as before: a secret's value there takes the bracket after it", () => {
    const error = new ToolError(`could not connect to h (refused: ${secret})`);
    expect(error.masked).toBe(false);
    expect(classifyThrown(error, [])).toMatchObject({ message: 'could not connect to h (refused: GITHUB_TOKEN=***' });
  });
});
