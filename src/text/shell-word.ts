// Text written as a POSIX shell reads it, for a command a message or a script tells someone to run.

/** `text` in single quotes, each `'` in it closed, escaped and reopened: one word, read literally. */
export function shellQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `text` as one shell word: bare when nothing in it means anything to a shell, else quoted. */
export function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : shellQuoted(text);
}
