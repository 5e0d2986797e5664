import stripAnsi from 'strip-ansi';

/** Model output and logged text are hostile on a terminal: no escape sequences or control characters but newline and tab. */
export function terminalSafe(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return stripAnsi(text).replace(/[\x00-\x08\x0b-\x1f\x7f\x9b]/g, '');
}
