// The ollama client only console.warns about a line that is not JSON and skips it, and takes any
// JSON value for a chunk (`null` makes it throw a TypeError). This guard sits in the response body,
// notices a line that is not a JSON object, and replaces it with an error line the client throws on,
// so the failure is reported in order, after every valid chunk before it. Blank lines (a proxy's
// keep-alive) are dropped: Ollama sends none, and the client would warn about each.
import { clipText } from '../output/cut.js';

export const MALFORMED_PREFIX = 'argo: malformed line from Ollama: ';

export function guardNdjson(body: ReadableStream<Uint8Array>, onMalformed: (line: string) => void): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const source = body.getReader();
  let pending = new Uint8Array(0);

  /** null for a chunk line, '' for a blank one, else the bad line. */
  const check = (line: Uint8Array): string | null => {
    const text = decoder.decode(line).trim();
    if (text === '') return '';
    try {
      const value: unknown = JSON.parse(text);
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? null : text;
    } catch {
      return text;
    }
  };
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, bad: string): void => {
    onMalformed(bad);
    controller.enqueue(encoder.encode(`${JSON.stringify({ error: MALFORMED_PREFIX + preview(bad) })}\n`));
    controller.close();
    source.cancel().catch(() => undefined);
  };

  // Pulled straight from the body's reader, not piped through a TransformStream: every chunk of
  // every answer passes here, and a pipe's promise machinery cost more than the check itself.
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value: chunk } = await source.read();
        if (done) {
          if (pending.length > 0) {
            const bad = check(pending);
            if (bad !== null && bad !== '') {
              fail(controller, bad);
              return;
            }
            if (bad === null) controller.enqueue(pending);
          }
          controller.close();
          return;
        }
        const data = pending.length === 0 ? chunk : concat(pending, chunk);
        // Whole lines from `from` up to `start` go on together; a blank line ends such a run.
        let from = 0;
        let start = 0;
        let sent = false;
        for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10, start)) {
          const bad = check(data.subarray(start, newline));
          if (bad !== null) {
            if (start > from) {
              controller.enqueue(data.subarray(from, start));
              sent = true;
            }
            if (bad !== '') {
              fail(controller, bad);
              return;
            }
            from = newline + 1;
          }
          start = newline + 1;
        }
        pending = data.slice(start);
        // Only whole lines go on; a chunk without a line end is read together with the next.
        if (start > from) {
          controller.enqueue(data.subarray(from, start));
          return;
        }
        if (sent) return;
      }
    },
    cancel(reason) {
      return source.cancel(reason);
    },
  });
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const joined = new Uint8Array(a.length + b.length);
  joined.set(a, 0);
  joined.set(b, a.length);
  return joined;
}

function preview(line: string): string {
  return clipText(line, 80);
}
