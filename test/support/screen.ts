// What a terminal `columns` wide shows after the output of a pty: its rows as a reader sees them,
// for tests about where lines start and what is left on screen. It knows what Argo and Node's
// readline write: text (wide characters take two columns; a full row wraps), CR, LF, backspace,
// and the CSI sequences that move the cursor (A B C D G) or erase (K to the end of the row, J to
// the end of the screen); others (colours) change nothing shown.
import stringWidth from 'string-width';

const graphemes = new Intl.Segmenter();
// eslint-disable-next-line no-control-regex -- splitting out control characters is the point
const PIECES = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.?|\r|\n|\x08|[^\x1b\r\n\x08]+/gs;

export function screenRows(output: string, columns: number): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let column = 0;
  // A character written in the last column leaves the cursor there; the next one wraps (as xterm).
  let pendingWrap = false;
  const cells = (): string[] => (rows[row] ??= []);
  const put = (char: string): void => {
    const width = stringWidth(char);
    if (width === 0) return;
    if (pendingWrap || column + width > columns) {
      row++;
      column = 0;
      pendingWrap = false;
    }
    const line = cells();
    while (line.length < column) line.push(' ');
    line[column] = char;
    // The second cell of a wide character shows nothing of its own.
    if (width === 2) line[column + 1] = '';
    column += width;
    if (column >= columns) {
      column = columns - 1;
      pendingWrap = true;
    }
  };
  for (const [piece] of output.matchAll(PIECES)) {
    if (piece === '\r') {
      column = 0;
      pendingWrap = false;
    } else if (piece === '\n') {
      // A pty turns LF into CR LF (ONLCR).
      row++;
      column = 0;
      pendingWrap = false;
      cells();
    } else if (piece === '\x08') {
      column = Math.max(0, column - 1);
      pendingWrap = false;
    } else if (piece.startsWith('\x1b[')) {
      const count = Number(/\d+/.exec(piece)?.[0] ?? '1');
      pendingWrap = false;
      switch (piece.at(-1)) {
        case 'K':
          cells().length = Math.min(cells().length, column);
          break;
        case 'J':
          cells().length = Math.min(cells().length, column);
          rows.length = row + 1;
          break;
        case 'G':
          column = Math.min(columns - 1, Math.max(0, count - 1));
          break;
        case 'C':
          column = Math.min(columns - 1, column + count);
          break;
        case 'D':
          column = Math.max(0, column - count);
          break;
        case 'A':
          row = Math.max(0, row - count);
          break;
        case 'B':
          row += count;
          cells();
          break;
      }
    } else if (!piece.startsWith('\x1b')) {
      for (const { segment } of graphemes.segment(piece)) put(segment);
    }
  }
  return rows.map((line) => line.join('').trimEnd());
}
