// Argo's own lines on standard error while a turn waits, and the spinner below them on a terminal.
// One writer knows whether a spinner is on screen, so a note (a retry, a warning) clears it first
// and the spinner goes on on the row below: nothing is written onto the spinner's row, and no frame
// is drawn over a note. Streamed text (a model's reasoning) stops the spinner, and a row it leaves
// open is ended before a note or a spinner takes the next.

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
/** The frame and the space after it. */
const FRAME_COLUMNS = 2;
/** When a terminal does not say how wide it is. */
const DEFAULT_COLUMNS = 80;

/** Cuts text to a number of columns, by display width (output/cut-width.ts's cutToWidth). */
export type CutToWidth = (text: string, columns: number) => string;

/**
 * One frame of the spinner on a terminal `columns` wide: it always fits one row, since `\r` returns
 * only to the start of the last row a wrapped frame took (the rows above would stay on screen, one
 * per frame). One column is left free: some terminals wrap as soon as the last one is written.
 * A label of n UTF-16 units is at most 2n columns wide; a longer one needs `cut` to be measured,
 * and null is returned while it is not there yet.
 */
export function spinnerFrame(index: number, label: string, columns: number, cut: CutToWidth | null): string | null {
  const frame = FRAMES[index % FRAMES.length] ?? '⠋';
  const room = columns - FRAME_COLUMNS - 1;
  if (room <= 0) return frame;
  if (label.length * 2 <= room) return `${frame} ${label}`;
  return cut === null ? null : `${frame} ${cut(label, room)}`;
}

/**
 * Writes Argo's lines to a stream (a terminal's standard error) and, when `controls` says the
 * stream is a terminal that obeys cursor controls (not TERM=dumb), runs a spinner below them.
 */
export class StderrLines {
  private label: string | null = null;
  private index = 0;
  private timer: NodeJS.Timeout | null = null;
  private drawn = false;
  /** Streamed text left its row without a newline. */
  private rowOpen = false;
  private cut: CutToWidth | null = null;
  private loading = false;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly controls: boolean,
  ) {}

  /** One whole line (`text` without its newline): it takes the spinner's row, and the spinner the next. */
  line(text: string): void {
    if (this.drawn) this.erase();
    this.endRow();
    this.stream.write(`${text}\n`);
    if (this.label !== null) this.draw();
  }

  /** Text that need not end its row (a model's reasoning as it streams): the spinner stops first. */
  text(text: string): void {
    if (text === '') return;
    this.stopSpinner();
    this.stream.write(text);
    this.rowOpen = !text.endsWith('\n');
  }

  /** Starts the spinner with `label`, or changes its label; nothing without cursor controls. */
  spin(label: string): void {
    if (!this.controls) return;
    this.endRow();
    // A label is one row: a tab or a newline in a name would break it.
    this.label = label.replace(/[\t\n]/g, ' ');
    this.draw();
    if (this.timer === null) {
      this.timer = setInterval(() => this.draw(), 80);
      this.timer.unref();
    }
  }

  /** Changes the label of a spinner on screen; starts none. */
  relabel(label: string): void {
    if (this.label !== null && this.label !== label) this.spin(label);
  }

  /** Stops the spinner and erases it; a line written after starts where it was. */
  stopSpinner(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.label = null;
    if (this.drawn) this.erase();
  }

  private draw(): void {
    if (this.label === null) return;
    // Read on every frame: the window may have been resized.
    const frame = spinnerFrame(this.index, this.label, this.stream.columns || DEFAULT_COLUMNS, this.cut);
    if (frame === null) {
      this.loadCut();
      return;
    }
    this.index++;
    // Cleared after the frame, not before, so it does not flicker; a shorter label leaves nothing behind.
    this.stream.write(`\r${frame}\x1b[K`);
    this.drawn = true;
  }

  private endRow(): void {
    if (!this.rowOpen) return;
    this.stream.write('\n');
    this.rowOpen = false;
  }

  private erase(): void {
    this.stream.write('\r\x1b[K');
    this.drawn = false;
  }

  // string-width is loaded only for a label that may not fit: a plain question does not pay for it.
  private loadCut(): void {
    if (this.loading) return;
    this.loading = true;
    void import('./cut-width.js').then(({ cutToWidth }) => {
      this.cut = cutToWidth;
      this.draw();
    });
  }
}
