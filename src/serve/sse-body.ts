// A response body the handler writes to: text/event-stream for answers, JSON for a long session's
// transcript. One ReadableStream the server reads from directly: Hono's streamSSE puts a
// TransformStream, its writer and a second stream in between, and every piece of every answer paid
// for those hops.
import type { Context } from 'hono';

export class SseBody {
  readonly stream: ReadableStream<Uint8Array>;
  private controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  private readonly encoder = new TextEncoder();
  /** Resolves the write waiting for the client to take what was queued. */
  private taken: (() => void) | null = null;
  private closed = false;

  constructor() {
    this.stream = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
      pull: () => this.wake(),
      // The client is gone: later writes are dropped, as Hono's stream drops them.
      cancel: () => {
        this.closed = true;
        this.wake();
      },
    });
  }

  /** Queues `text`; resolves once the client has taken it (a slow client slows the writer, not the turn). */
  async write(text: string): Promise<void> {
    const controller = this.controller;
    if (this.closed || controller === null) return;
    controller.enqueue(this.encoder.encode(text));
    if ((controller.desiredSize ?? 0) > 0) return;
    await new Promise<void>((resolve) => (this.taken = resolve));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.controller?.close();
    this.wake();
  }

  /** False once the body has ended or the client has gone. */
  get open(): boolean {
    return !this.closed;
  }

  /** Ends the body as failed: the client's connection is cut, so a half-written JSON text is never taken for a whole one. */
  fail(reason: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.controller?.error(reason);
    this.wake();
  }

  private wake(): void {
    const taken = this.taken;
    this.taken = null;
    taken?.();
  }
}

/**
 * Answers with an event stream that `write` fills; the body ends when `write` returns. A failure
 * inside it goes to `onError` (the stream just ends: its status is long sent).
 */
export function sseResponse(c: Context, write: (body: SseBody) => Promise<void>, onError: (error: unknown) => void): Response {
  const body = new SseBody();
  // Framing and keep-alive are Node's to choose: chunked for HTTP/1.1, the connection's end for an
  // HTTP/1.0 client or one that asked to close (stating them here sent chunks and kept it open).
  c.header('Content-Type', 'text/event-stream');
  c.header('Cache-Control', 'no-cache');
  write(body).then(
    () => body.close(),
    (error: unknown) => {
      onError(error);
      body.close();
    },
  );
  return c.newResponse(body.stream);
}

/**
 * Answers with a JSON text that `write` gives piece by piece (a session of years is never one
 * string). A failure inside it goes to `onError` and cuts the response: its status is long sent.
 * `onEnd` hears when the body has ended, either way (the request's log line waits for it).
 */
export function jsonStreamResponse(c: Context, write: (give: (piece: string) => Promise<boolean>) => Promise<void>, onError: (error: unknown) => void, onEnd?: () => void): Response {
  const body = new SseBody();
  c.header('Content-Type', 'application/json');
  // `give` answers false once the client has gone: the rest is not read.
  write(async (piece) => {
    await body.write(piece);
    return body.open;
  })
    .then(
      () => body.close(),
      (error: unknown) => {
        onError(error);
        body.fail(error);
      },
    )
    .finally(() => onEnd?.());
  return c.newResponse(body.stream);
}
