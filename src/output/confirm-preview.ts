// A confirmation's preview is the model's text (a command, a diff of what it would write): it must
// not hide what it asks for. Blank rows can push a command's start off the screen above "Allow?",
// so runs of them are told, not printed, and a preview taller than the screen says so.
import { textWidth } from './cut-width.js';

/** This many blank lines in a row, or spaces in a line, are told as a count instead. */
const BLANK_LINES_TOLD = 3;
const SPACES_TOLD = 40;

const LONG_SPACE = new RegExp(`[ \\t]{${SPACES_TOLD},}`, 'g');

/** A line that shows nothing: whitespace, or characters of no width (zero-width spaces, joiners). */
function blank(line: string): boolean {
  return textWidth(line.replace(/\s/g, '')) === 0;
}

/**
 * The preview as shown before "Allow?": runs of blank lines and long runs of spaces told as counts,
 * and a last line saying where it starts when it is taller than `rows` at `columns`. `preview` has
 * had its controls made visible already.
 */
export function confirmationPreview(preview: string, screen: { rows?: number | undefined; columns?: number | undefined } = {}): string {
  const lines = preview.trimEnd().replace(LONG_SPACE, (run) => ` [… ${run.length} spaces …] `).split(/\r?\n/);
  const shown: string[] = [];
  for (let i = 0; i < lines.length; ) {
    let end = i;
    while (end < lines.length && blank(lines[end] ?? '')) end++;
    const run = end - i;
    if (run >= BLANK_LINES_TOLD) {
      shown.push(`[… ${run} blank lines …]`);
      i = end;
    } else if (run > 0) {
      shown.push(...lines.slice(i, end));
      i = end;
    } else {
      shown.push(lines[i] ?? '');
      i++;
    }
  }
  // A terminal that reports 0 (`stty rows 0 cols 0`) does not know its size: 0 is unknown, not no room.
  const columns = screen.columns === undefined || screen.columns === 0 ? 80 : screen.columns;
  const tall = shown.reduce((sum, line) => sum + Math.max(1, Math.ceil(textWidth(line) / columns)), 0);
  // The header above it and the question below it take a row each.
  if (screen.rows !== undefined && screen.rows > 0 && tall > screen.rows - 2) shown.push(`[the preview is ${tall} rows tall; scroll up to read it from its start]`);
  return shown.join('\n');
}
