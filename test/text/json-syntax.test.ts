import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonFault } from '../../src/text/json-syntax.js';
import { runs } from '../support/property.js';

describe('jsonFault: where JSON text stops being JSON, quoting none of it', () => {
  it.each<[string, string, number, number, string]>([
    ['a single-quoted value', `{"serve": {"apiKey": 'sk-abc123'}}`, 1, 22, `expected a value, found "'" (text goes in "double quotes")`],
    ['a word where a value goes', '{"a": secret}', 1, 7, 'expected a value (text goes in "double quotes")'],
    ['a misspelt true', '{"a": tru}', 1, 7, 'expected a value (text goes in "double quotes")'],
    ['a number starting with "."', '{"a": .5}', 1, 7, 'expected a value'],
    ['a leading zero', '{"a": 01}', 1, 8, 'expected "," or "}"'],
    ['a comma after the last entry', '{"a": 1,}', 1, 9, 'expected a key (no "," after the last entry), found "}"'],
    ['a comma after the last element', '[1, 2,]', 1, 7, 'expected a value (no "," after the last one), found "]"'],
    ['two commas', '[1,,2]', 1, 4, 'expected a value (no "," after the last one), found ","'],
    ['an unquoted key', '{apiKey: "x"}', 1, 2, 'expected a key or "}" (text goes in "double quotes")'],
    ['a key without its colon', '{"a" 1}', 1, 6, 'expected ":" after the key'],
    ['a missing comma, lines later', '{\n  "serve": {\n    "apiKey": "sk-abc123"\n  }\n  "x": 1}', 5, 3, `expected "," or "}", found '"'`],
    ['a missing comma after a string', '{"apiKey": "sk-verylongsecretvalue12345678901234567890abcdef" "x": 1}', 1, 63, `expected "," or "}", found '"'`],
    ['an array closed by "}"', '{"a": [1, 2}', 1, 12, 'expected "," or "]", found "}"'],
    ['text after the object', '{"a": 1} x', 1, 10, 'expected nothing after the closing "}"'],
    ['a second value', '"x" "y"', 1, 5, `expected nothing after the value, found '"'`],
    ['a line break inside a string', '{"apiKey": "sk-\nabc"}', 1, 16, 'a control character inside a string (write a line break as \\n, a tab as \\t)'],
    ['a tab inside a string', '{"a": "x\ty"}', 1, 9, 'a control character inside a string (write a line break as \\n, a tab as \\t)'],
    ['an unknown escape', '{"a": "\\q"}', 1, 8, 'an escape a string cannot hold (after "\\" come ", \\, /, b, f, n, r, t or u and four hex digits)'],
    ['a short \\u escape', '{"a": "\\u12"}', 1, 8, 'an escape a string cannot hold (after "\\" come ", \\, /, b, f, n, r, t or u and four hex digits)'],
    ['a string never closed', '{"apiKey": "sk-abc', 1, 19, 'expected the closing " of a string, found the end of the file'],
    ['an object never closed', '{"a": 1', 1, 8, 'expected "," or "}", found the end of the file'],
    ['an empty file', '', 1, 1, 'expected a value, found the end of the file'],
    ['only blanks', ' \n ', 2, 2, 'expected a value, found the end of the file'],
    ['a file of "["', '['.repeat(100_000), 1, 100_001, 'expected a value or "]", found the end of the file'],
    ['CRLF line ends', '{\r\n"a": x}', 2, 6, 'expected a value (text goes in "double quotes")'],
    ['a column after wide characters, in UTF-16 units', '{"é😀": x}', 1, 9, 'expected a value (text goes in "double quotes")'],
    ['an unnamed character', '{"a": 1 +}', 1, 9, 'expected "," or "}"'],
  ])('%s', (_case, text, line, column, problem) => {
    expect(() => JSON.parse(text) as unknown).toThrow(SyntaxError);
    expect(jsonFault(text)).toEqual({ line, column, problem });
  });

  it.each(['{}', '[]', '{"a":{"b":[true,false,null,-1.5e+3,0,"\\u00e9\\n\\"",{}]}}', ' 1 ', '"x"', '{"a":"\ud800"}'])('%j is JSON: no fault', (text) => {
    expect(jsonFault(text)).toBeNull();
  });

  it('finds a fault exactly when JSON.parse refuses the text, and quotes no letter or digit of it', () => {
    const piece = fc.constantFrom('{', '}', '[', ']', ':', ',', '"', '"k"', '"sk-SECRET9"', '1', '-2.5e3', 'true', 'nul', "'", '\\', '\\n', ' ', '\n', 'SECRET9', '.');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join('');
        let parses = true;
        try {
          JSON.parse(text);
        } catch {
          parses = false;
        }
        const fault = jsonFault(text);
        expect(fault === null).toBe(parses);
        if (fault !== null) expect(fault.problem).not.toMatch(/SECRET|9/);
      }),
      runs(2000),
    );
  });

  it('finds no fault in any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(undefined, 2), (value, indent) => {
        expect(jsonFault(JSON.stringify(value, null, indent))).toBeNull();
      }),
      runs(500),
    );
  });
});
