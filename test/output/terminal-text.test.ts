import { describe, expect, it } from 'vitest';
import { ControlNeutralizer, escapeJsonControls, joinLines, jsonTextFor, neutralizeControls, quotedName, untrustedTextFor } from '../../src/output/terminal-text.js';

describe('neutralizeControls: controls shown, never obeyed', () => {
  it.each([
    ['plain text', 'plain text'],
    ['lines\nand\ttabs', 'lines\nand\ttabs'],
    ['Windows\r\nline end', 'Windows\r\nline end'],
    ['multibyte: Straße, 日本語, 👍, e\u0301', 'multibyte: Straße, 日本語, 👍, e\u0301'],
    ['OSC 52 clipboard \u001b]52;c;cm0gLXJmIH4=\u0007', 'OSC 52 clipboard ^[]52;c;cm0gLXJmIH4=^G'],
    ['OSC 52 with ST \u001b]52;c;eA==\u001b\\', 'OSC 52 with ST ^[]52;c;eA==^[\\'],
    ['title \u001b]0;pwned\u0007', 'title ^[]0;pwned^G'],
    ['CSI erase \u001b[2J\u001b[H', 'CSI erase ^[[2J^[[H'],
    ['colour \u001b[31mred\u001b[0m', 'colour ^[[31mred^[[0m'],
    ['C1 CSI \u009b2J', 'C1 CSI \\x9b2J'],
    ['C1 OSC \u009d0;t\u009c', 'C1 OSC \\x9d0;t\\x9c'],
    ['lone ESC at the end \u001b', 'lone ESC at the end ^['],
    ['bell\u0007 backspace\b NUL\u0000 DEL\u007f', 'bell^G backspace^H NUL^@ DEL^?'],
    ['overwrite\rhidden', 'overwrite^Mhidden'],
    ['vertical tab\u000b form feed\u000c', 'vertical tab^K form feed^L'],
    ['\u0080 and \u009f bound C1', '\\x80 and \\x9f bound C1'],
    ['\u00a0 and \u00e9 are text', '\u00a0 and \u00e9 are text'],
    ['bidi override: invoice\u202Efdp.exe', 'bidi override: invoice\\u202efdp.exe'],
    ['isolates \u2066a\u2069 \u2067b\u2068 marks \u200e\u200f\u061c embeddings \u202a\u202b\u202c\u202d', 'isolates \\u2066a\\u2069 \\u2067b\\u2068 marks \\u200e\\u200f\\u061c embeddings \\u202a\\u202b\\u202c\\u202d'],
    ['joiners are text: 👩\u200d💻 e\u200bf', 'joiners are text: 👩\u200d💻 e\u200bf'],
  ])('%j', (text, shown) => {
    expect(neutralizeControls(text)).toBe(shown);
  });
});

describe('ControlNeutralizer: the same over a stream', () => {
  it.each([
    [['a\r', '\nb'], 'a\r\nb'],
    [['a\r', 'b'], 'a^Mb'],
    [['a\r'], 'a^M'],
    [['\u001b', ']0;t\u0007'], '^[]0;t^G'],
    [['\r', '\r', '\n'], '^M\r\n'],
  ])('%j → %j', (pieces, shown) => {
    const neutralizer = new ControlNeutralizer();
    expect(pieces.map((piece) => neutralizer.push(piece)).join('') + neutralizer.end()).toBe(shown);
  });
});

describe('untrustedTextFor: only a terminal is protected, and --raw opts out', () => {
  const hostile = 'x\u001b]52;c;eA==\u0007';
  it.each([
    [{ isTTY: true }, {}, 'x^[]52;c;eA==^G'],
    [{ isTTY: false }, {}, hostile],
    [{}, {}, hostile],
    [{ isTTY: true }, { raw: true }, hostile],
    [{ isTTY: true }, { raw: false }, 'x^[]52;c;eA==^G'],
  ])('%j %j', (stream, options, printed) => {
    expect(untrustedTextFor(stream, options)(hostile)).toBe(printed);
  });
});

describe('escapeJsonControls: JSON on a terminal stays equal JSON with nothing to obey', () => {
  it.each([
    [{ a: 'plain', n: 1 }, '{"a":"plain","n":1}'],
    [{ a: 'esc \u001b]0;t\u0007' }, '{"a":"esc \\u001b]0;t\\u0007"}'],
    [{ a: 'C1 CSI \u009b2J' }, '{"a":"C1 CSI \\u009b2J"}'],
    [{ a: '\u0080..\u009f DEL\u007f' }, '{"a":"\\u0080..\\u009f DEL\\u007f"}'],
    [{ a: 'invoice\u202efdp.exe' }, '{"a":"invoice\\u202efdp.exe"}'],
    [{ a: '\u2066\u2069\u200e\u200f\u061c\u202a' }, '{"a":"\\u2066\\u2069\\u200e\\u200f\\u061c\\u202a"}'],
    [{ 'key\u202e': 'x' }, '{"key\\u202e":"x"}'],
    [{ a: 'text stays: Straße 日本語 👩\u200d💻 \u00a0' }, '{"a":"text stays: Straße 日本語 👩\u200d💻 \u00a0"}'],
    [{ a: 'backslash \\u009b is text' }, '{"a":"backslash \\\\u009b is text"}'],
  ])('%j', (value, shown) => {
    const escaped = escapeJsonControls(JSON.stringify(value));
    expect(escaped).toBe(shown);
    expect(JSON.parse(escaped)).toEqual(value);
  });

  it('NDJSON: every line stays one JSON value', () => {
    const lines = [{ a: '\u009b' }, { b: '\u202e' }].map((value) => JSON.stringify(value)).join('\n');
    expect(escapeJsonControls(lines).split('\n').map((line) => JSON.parse(line) as unknown)).toEqual([{ a: '\u009b' }, { b: '\u202e' }]);
  });
});

describe('jsonTextFor: only a terminal gets escapes, piped JSON and --raw are byte-exact', () => {
  const json = JSON.stringify({ a: '\u009b\u202e' });
  it.each([
    [{ isTTY: true }, {}, '{"a":"\\u009b\\u202e"}'],
    [{ isTTY: false }, {}, json],
    [{}, {}, json],
    [{ isTTY: true }, { raw: true }, json],
  ])('%j %j', (stream, options, printed) => {
    expect(jsonTextFor(stream, options)(json)).toBe(printed);
  });
});

describe('quotedName: a name from config or a server, on one line', () => {
  it.each([
    ['a plain name', 'git_log', '"git_log"'],
    ['ESC, as JSON writes it', 'a\u001b[31mb', '"a\\u001b[31mb"'],
    ['C1 and bidi controls as ?', 'a\u009bb\u202ec', '"a?b?c"'],
    ['a line break, as JSON writes it', 'a\nb', '"a\\nb"'],
    ['the line and paragraph separators, which JSON leaves raw, as ?', 'a\u2028b\u2029c', '"a?b?c"'],
    ['NEL, a C1 control, as ?', 'a\u0085b', '"a?b"'],
    ['cut at 64, with …', 'x'.repeat(70), `"${'x'.repeat(64)}…"`],
    ['never half an emoji', `${'x'.repeat(63)}😀`, `"${'x'.repeat(63)}…"`],
  ])('%s', (_case, name, shown) => {
    expect(quotedName(name)).toBe(shown);
  });
});

describe('joinLines: a server\'s words on one line, its spacing within a line kept', () => {
  it.each([
    ['boom\r\nargo: fake line', 'boom argo: fake line'],
    ['<html>\r\r\n<head>  \n  <title>', '<html> <head> <title>'],
    ['a lone\rCR', 'a lone CR'],
    ['line\u2028separator\u0085next', 'line separator next'],
    ['form\ffeed and\vtab', 'form feed and tab'],
    ['server busy, please try again.  maximum pending requests exceeded', 'server busy, please try again.  maximum pending requests exceeded'],
    ['a\tb', 'a\tb'],
    ['\n trailing and leading \r\n', 'trailing and leading'],
    ['bad\u001b]52;c;eA==\u0007model', 'bad\u001b]52;c;eA==\u0007model'],
  ])('%j → %j', (text, expected) => {
    expect(joinLines(text)).toBe(expected);
  });
});
