// Text Argo did not write (model answers, logged prompts, session names, messages from a server) may
// carry terminal controls: OSC 52 sets the clipboard, OSC 0 retitles the window, CSI moves the cursor
// and erases lines, a lone CR overwrites what was printed. On a terminal every control character
// except newline and tab is shown as visible text instead (ESC becomes `^[`), which leaves the rest
// of any sequence inert and shows the reader that something was there. Piped output is not touched.
//
// strip-ansi is not used for shown text: it deletes the sequences it recognises and lets lone
// controls (BEL, CR, backspace, an unterminated ESC) through, and deleting hides what the text
// really held. cleanLine uses it, then removes every control, for text that is cleaned, not shown.
import stripAnsi from 'strip-ansi';
import { clipText } from './cut.js';

// C0 except tab and newline, DEL, the C1 range (which holds the 8-bit CSI U+009B and OSC U+009D),
// and the bidirectional controls, which reorder what a line shows (U+202E makes "txt.exe" read
// "exe.txt"). Surrogate pairs and every other character, joiners included, fall outside it.
function isControl(code: number): boolean {
  return (code < 0x20 && code !== 0x09 && code !== 0x0a) || (code >= 0x7f && code <= 0x9f) || isBidiControl(code);
}

function isBidiControl(code: number): boolean {
  return code === 0x061c || code === 0x200e || code === 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

/**
 * The same set as a pattern, for text that is cleaned rather than shown and kept to one line (a log
 * line's path, a quoted name, a memo key), with the line and paragraph separators U+2028 and U+2029:
 * editors, viewers and JavaScript end a line at them. Shown text (neutralizeControls) keeps them, as
 * it keeps a newline: a terminal does not obey them as it does a control.
 */
export const CONTROLS = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu;

/** A name from config or a server, quoted for one line: cut at `max` (code-point safe), controls shown as "?". */
export function quotedName(name: string, max = 64): string {
  return JSON.stringify(clipText(name, max)).replace(CONTROLS, '?');
}

const LINE_BREAK = /[\n\v\f\r\x85\u2028\u2029]/;

/**
 * A server's words (an error message, a proxy's page) on one line, to follow `argo: ` and be logged:
 * each run of whitespace holding a line break becomes one space; spacing within a line is kept as
 * written, and so are other controls (shown, not obeyed, on a terminal: untrustedTextFor).
 */
export function joinLines(text: string): string {
  // NEL (U+0085), a line break to some terminals, is no \s to JavaScript.
  return text.replace(/[\s\x85]+/g, (run) => (LINE_BREAK.test(run) ? ' ' : run)).trim();
}

/**
 * Foreign text as one line, escape sequences gone, every control and run of whitespace one space,
 * its ends kept: a quoted path's trailing space is part of it (cleanLine trims a whole line). Whole
 * escape sequences go first: removing only their ESC would leave fragments such as `[31m`.
 */
export function flatLine(text: string): string {
  return stripAnsi(text).replace(CONTROLS, ' ').replace(/\s+/g, ' ');
}

/**
 * Foreign text (a tool's error, a server's stderr) as one clean line of at most `max` characters,
 * for a message that is logged and sent, not shown as it was.
 */
export function cleanLine(text: string, max: number): string {
  return clipText(flatLine(text).trim(), max);
}

function visible(code: number): string {
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`; // caret notation, as `cat -v`
  if (code === 0x7f) return '^?';
  return code <= 0xff ? `\\x${code.toString(16)}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control character except `\n` and `\t` rendered visibly; CR before LF is kept. */
export function neutralizeControls(text: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!isControl(code)) continue;
    if (code === 0x0d && text.charCodeAt(i + 1) === 0x0a) continue; // CR LF is a line ending
    out += text.slice(from, i) + visible(code);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * The same, for text that arrives in pieces (a streamed answer): a CR at the end of a piece is held
 * until the next piece shows whether a newline follows it.
 */
export class ControlNeutralizer {
  private heldCr = false;

  push(piece: string): string {
    let text = this.heldCr ? `\r${piece}` : piece;
    this.heldCr = text.endsWith('\r');
    if (this.heldCr) text = text.slice(0, -1);
    return neutralizeControls(text);
  }

  /** What is still held at the end of the stream. */
  end(): string {
    const rest = this.heldCr ? visible(0x0d) : '';
    this.heldCr = false;
    return rest;
  }
}

/**
 * How to print untrusted text on `stream`: neutralized on a terminal, byte-exact when piped or
 * when the user asked for raw output (`--raw`).
 */
export function untrustedTextFor(stream: { isTTY?: boolean }, options: { raw?: boolean } = {}): (text: string) => string {
  return stream.isTTY === true && options.raw !== true ? neutralizeControls : (text) => text;
}

// What JSON.stringify leaves raw: it escapes C0 controls but not DEL, C1 (U+009B is a CSI on many
// terminals) or the bidirectional controls. In valid JSON they can only stand inside strings, where
// `\uXXXX` means the same character: the text stays valid JSON that parses to the same value.
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** JSON text (one document or NDJSON lines) with the controls JSON.stringify keeps written as `\uXXXX`. */
export function escapeJsonControls(json: string): string {
  return json.replace(RAW_IN_JSON, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * How to print JSON on `stream`: on a terminal every control is escaped (equal JSON, nothing for the
 * terminal to obey); piped, or with `--raw`, byte-exact.
 */
export function jsonTextFor(stream: { isTTY?: boolean }, options: { raw?: boolean } = {}): (json: string) => string {
  return stream.isTTY === true && options.raw !== true ? escapeJsonControls : (json) => json;
}
