/** Errors a user can act on. Only the CLI entry point turns them into messages and exit codes. */
export class ArgoError extends Error {
  override name = 'ArgoError';
}

/** Bad flag, value, name or config. */
export class UsageError extends ArgoError {
  override name = 'UsageError';
}

/** Something failed while doing the work (unreachable, read-only, full). */
export class RuntimeError extends ArgoError {
  override name = 'RuntimeError';
}

/** A usage error in config.json's definitions (a tool, a toolset): its message names the key, whatever list asked for it. */
export class ConfigError extends UsageError {
  override name = 'ConfigError';
}

const LINE_BREAKS = /[\n\v\f\r\x85\u2028\u2029]/g;

/**
 * A caught error's message made one line, as every message Argo prints is: JSON.parse's message
 * quotes the text it failed on, line breaks and all. Each break is written as an escape (`\n`, `\r`).
 */
export function messageLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(LINE_BREAKS, (char) => (char === '\n' ? '\\n' : char === '\r' ? '\\r' : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/**
 * A word from the user or a file as a message shows it: as typed when it is plain (letters, digits
 * and `._+=-`), else quoted as JSON, so that a line break or a blank in it cannot split or blur the
 * message.
 */
export function shownWord(text: string): string {
  return /^[\w.+=-]+$/.test(text) ? text : JSON.stringify(text);
}

/** A file path as a message shows it: as given, unless a control character (a line break) or an edge blank would split or hide it; then as JSON. */
export function shownPath(path: string): string {
  return /[\p{Cc}]|^\s|\s$/u.test(path) ? JSON.stringify(path) : path;
}
