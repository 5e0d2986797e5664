// Whether a question's row is open on the terminal. Its own module, free of readline: main.ts ends
// an open row before a signal's last line, and every command loads main.ts.

let open = false;

/** A question was written and waits for its answer on the same row. */
export function rowOpened(): void {
  open = true;
}

/** The answer ended the row (its Enter). */
export function rowEnded(): void {
  open = false;
}

/**
 * Ends an open question's row, so the line written next starts at the left edge: for what quits
 * while the question waits (a signal's `argo: interrupted`), which cannot know a question was asked.
 */
export function endOpenRow(stderr: { write(text: string): unknown }): void {
  if (!open) return;
  open = false;
  stderr.write('\n');
}
