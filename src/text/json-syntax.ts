// Where JSON text stops being JSON, and why, in words that quote none of it: V8's SyntaxError gives
// an excerpt of the text around the fault (a secret next to it with it) and, for an unexpected
// character, no position at all. Read only after JSON.parse has refused the text.

/** The first fault in a JSON text: its line and column (both from 1) and what was wrong there. */
export interface JsonFault {
  line: number;
  column: number;
  problem: string;
}

/** Where a value or key goes, a word or a single quote: text not in double quotes. */
const UNQUOTED = /^[A-Za-z_']$/;
/** Characters a fault may name: punctuation, which can be no part of a secret worth hiding. */
const NAMED = /^[{}[\]:,'"=;]$/;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

type Want = 'value' | 'value-or-]' | 'key' | 'key-or-}' | 'colon' | 'comma-or-close' | 'end';

/**
 * The first fault in `text`, null when it is JSON. An explicit stack rather than recursion: a file
 * of a million "[" is a fault to name, not a stack to overflow.
 */
export function jsonFault(text: string): JsonFault | null {
  const closers: string[] = [];
  let at = 0;
  let want: Want = 'value';
  let afterComma = false;
  /** `textGoes`: where a value or key goes, a word or a single quote there is text left unquoted. */
  const fault = (offset: number, expected: string, textGoes = false): JsonFault => {
    const char = text.charAt(offset);
    const found = offset >= text.length ? ', found the end of the file' : NAMED.test(char) ? `, found ${char === '"' ? `'"'` : `"${char}"`}` : '';
    const hint = textGoes && UNQUOTED.test(char) ? ' (text goes in "double quotes")' : '';
    return { ...lineAndColumn(text, offset), problem: `expected ${expected}${found}${hint}` };
  };
  const close = (): void => {
    closers.pop();
    at++;
    want = closers.length === 0 ? 'end' : 'comma-or-close';
  };
  for (;;) {
    while (at < text.length && ' \t\n\r'.includes(text.charAt(at))) at++;
    const char = text.charAt(at);
    switch (want) {
      case 'end':
        if (at === text.length) return null;
        return fault(at, text.trimStart().startsWith('{') ? 'nothing after the closing "}"' : 'nothing after the value');
      case 'colon':
        if (char !== ':') return fault(at, '":" after the key');
        at++;
        want = 'value';
        continue;
      case 'comma-or-close': {
        const closer = closers.at(-1) ?? '';
        if (char === closer) {
          close();
          continue;
        }
        if (char !== ',') return fault(at, `"," or "${closer}"`);
        at++;
        afterComma = true;
        want = closer === '}' ? 'key' : 'value';
        continue;
      }
      case 'key-or-}':
      case 'key': {
        if (want === 'key-or-}' && char === '}') {
          close();
          continue;
        }
        if (char !== '"') return fault(at, want === 'key-or-}' ? 'a key or "}"' : afterComma ? 'a key (no "," after the last entry)' : 'a key', true);
        const end = stringEnd(text, at);
        if (typeof end !== 'number') return { ...lineAndColumn(text, end.offset), problem: end.problem };
        at = end;
        afterComma = false;
        want = 'colon';
        continue;
      }
      case 'value-or-]':
      case 'value': {
        if (want === 'value-or-]' && char === ']') {
          close();
          continue;
        }
        const expected = want === 'value-or-]' ? 'a value or "]"' : afterComma && closers.at(-1) === ']' ? 'a value (no "," after the last one)' : 'a value';
        afterComma = false;
        if (char === '{' || char === '[') {
          closers.push(char === '{' ? '}' : ']');
          at++;
          want = char === '{' ? 'key-or-}' : 'value-or-]';
          continue;
        }
        const end = char === '"' ? stringEnd(text, at) : literalEnd(text, at);
        if (end === null) return fault(at, expected, true);
        if (typeof end !== 'number') return { ...lineAndColumn(text, end.offset), problem: end.problem };
        at = end;
        want = closers.length === 0 ? 'end' : 'comma-or-close';
        continue;
      }
    }
  }
}

/** Just past the string that opens at `start`, or where and why it is no string. */
function stringEnd(text: string, start: number): number | { offset: number; problem: string } {
  let at = start + 1;
  while (at < text.length) {
    const code = text.charCodeAt(at);
    if (code === 0x22) return at + 1;
    if (code < 0x20) return { offset: at, problem: 'a control character inside a string (write a line break as \\n, a tab as \\t)' };
    if (code === 0x5c) {
      ESCAPE.lastIndex = at;
      if (!ESCAPE.test(text)) return { offset: at, problem: 'an escape a string cannot hold (after "\\" come ", \\, /, b, f, n, r, t or u and four hex digits)' };
      at = ESCAPE.lastIndex;
      continue;
    }
    at++;
  }
  return { offset: text.length, problem: 'expected the closing " of a string, found the end of the file' };
}

/** Just past the number, true, false or null at `start`; null when none is there. */
function literalEnd(text: string, start: number): number | null {
  for (const word of ['true', 'false', 'null']) if (text.startsWith(word, start)) return start + word.length;
  NUMBER.lastIndex = start;
  return NUMBER.test(text) ? NUMBER.lastIndex : null;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  // In UTF-16 units, as JavaScript counts (an emoji is two).
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

/**
 * Where `text` (which JSON.parse refused) stops being JSON, as words to follow "is not valid JSON":
 * ` at line 3, column 7: expected "," or "}"`, or nothing when no fault is found.
 */
export function jsonFaultPlace(text: string): string {
  const fault = jsonFault(text);
  return fault === null ? '' : ` at line ${fault.line}, column ${fault.column}: ${fault.problem}`;
}
