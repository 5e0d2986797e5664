// Log files with odd lines, for the readers that must agree on them (a checked-as-Latin-1 reading
// against the plain UTF-8 one): damaged JSON, bytes that are not UTF-8, white space of every kind,
// non-ASCII text where free text goes and where a fixed word goes, keys named like the prototype's.
import { makeEntry } from '../query/helpers.js';

/** A turn's line, newline included, with these fields changed or added. */
export const line = (id: string, overrides: Record<string, unknown> = {}): string => `${JSON.stringify({ ...makeEntry({ id }), ...overrides })}\n`;
const bytes = (text: string): Buffer => Buffer.from(text, 'latin1');

/** [what it is, the file's content]: a string is written as UTF-8, a Buffer as it is. */
export const ODD_LOG_FILES: [string, string | Buffer][] = [
  ['good lines only', line('a') + line('b')],
  ['an empty file', ''],
  ['a wrong type', line('a') + line('b', { persona: 7 }) + line('c')],
  ['not JSON, a blank line, an array, a number, null', `${line('a')}{"id":\n\n   \n[1]\n3\nnull\n${line('b')}`],
  ['a torn last line', line('a') + line('b').slice(0, 40)],
  ['a last line without its newline that is whole', line('a') + line('b').trimEnd()],
  ['a blank last line without its newline', `${line('a')}   `],
  ['a line that is not UTF-8 inside a string', bytes(line('a') + line('b').replace('Rayleigh', 'Ray\xff\xc3leigh'))],
  ['a byte that is not UTF-8 outside a string', bytes(line('a') + line('b').replace('{"id"', '{\xff"id"'))],
  ['a key that is not UTF-8', bytes(line('a').replace('"persona"', '"pers\xe9na"'))],
  ['an overlong slash and a lone continuation byte', bytes(`${line('a').replace('"argo"', '"ar\xc0\xafgo"')}\x80${line('b')}`)],
  ['NUL bytes', `${line('a')}\0\0\0\n${line('b')}`],
  ['words in any script', line('a', { user_prompt: '¿Qué? 日本語 🎉 "quoted" \\ back' }) + line('b', { model_response: 'ÿ\u0085\u00a0' })],
  ['free text fields in any script', line('a', { status: 'fertig ✓', model: 'モデル:7b', timestamp: 'maañana', session: 'ñ' })],
  ['a value of a fixed set written with non-ASCII letters', line('a', { entry_type: 'quéstion' }) + line('b', { verbosity: 'lóng' }) + line('c')],
  ['a value of a fixed set escaped as \\u', line('a').replace('"question"', '"qu\\u00e9stion"') + line('b').replace('"question"', '"\\u0071uestion"')],
  ['a sha256 with a non-ASCII digit', line('a', { request_sha256: `${'a'.repeat(63)}é` })],
  ['an empty id, and one of one non-ASCII letter', line('a', { id: '' }) + line('b', { id: 'é' })],
  ['a non-ASCII key where a field should be', line('a').replace('"persona"', '"persoña"') + line('b')],
  ['keys named __proto__ and constructor', line('a').replace('{"id"', '{"__proto__":{"id":1},"constructor":7,"id"') + line('b', { options: JSON.parse('{"__proto__":"x"}') as unknown })],
  ['a key given twice', line('a').replace('{"id":"a"', '{"id":7,"id":"a"') + line('b').replace('{"id":"b"', '{"id":"b","id":7')],
  ['non-ASCII white space alone on a line, or around a turn', `${line('a')}\u00a0\u2003\n\u00a0${line('b').trimEnd()}\u00a0\n\u0085\n\ufeff\n${line('c')}`],
  ['a byte order mark before a turn', `\ufeff${line('a')}${line('b')}`],
  ['a turn after leading white space, and one after a tab', ` \t${line('a')}\t${line('b')}`],
  ['lines ending in CR LF', line('a').replace('\n', '\r\n') + line('b').replace('\n', '\r\n')],
  ['a turn with white space after it', `${line('a').trimEnd()}  \t\n${line('b')}`],
  ['two turns on one line', `${line('a').trimEnd()}${line('b')}`],
  ['controls inside strings, escaped and raw', line('a', { user_prompt: '\u0001\u001f\u007f\u0085' }) + line('b').replace('"Rayleigh', '"Ray\tleigh')],
  ['lone surrogates, escaped', line('a').replace('"Rayleigh', '"\\ud800Rayleigh\\udc00')],
];
