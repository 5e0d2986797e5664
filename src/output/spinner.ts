const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A one-line activity indicator on a terminal's stderr; stop() erases it. */
export function startSpinner(stream: NodeJS.WriteStream, label: string): () => void {
  let frame = 0;
  const draw = (): void => {
    stream.write(`\r${FRAMES[frame % FRAMES.length]} ${label}`);
    frame++;
  };
  draw();
  const timer = setInterval(draw, 80);
  timer.unref();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    stream.write('\r\x1b[K');
  };
}
