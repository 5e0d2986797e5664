import { describe, expect, it } from 'vitest';
import { UNAVAILABLE_REASON_CHARS, foreignLine } from '../../src/tools/foreign-line.js';

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
