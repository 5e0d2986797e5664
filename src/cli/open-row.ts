// Whether a row of ours is open on the terminal's stderr: a question waiting for its answer, or a
// model's reasoning streaming. Its own module, free of readline: main.ts ends an open row before a
// signal's last line, and every command loads main.ts.

let open = false;

/** A question was written and waits for its answer on the same row (or streamed text left its row open). */
export function rowOpened(): void {
  open = true;
}

/** The answer ended the row (its Enter), or the streamed text did. */
export function rowEnded(): void {
  open = false;
}

/**
 * Ends an open row, so the line written next starts at the left edge: for what quits while a
 * question waits or reasoning streams (a signal's `argo: interrupted`), which cannot know of either.
 */
export function endOpenRow(stderr: { write(text: string): unknown }): void {
  if (!open) return;
  open = false;
  stderr.write('\n');
}
