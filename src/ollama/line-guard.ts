// The ollama client only console.warns about a line that is not JSON and skips it, and takes any
// JSON value for a chunk (`null` makes it throw a TypeError). This guard sits in the response body,
// notices a line that is not a JSON object, and replaces it with an error line the client throws on,
// so the failure is reported in order, after every valid chunk before it. Blank lines (a proxy's
// keep-alive) are dropped: Ollama sends none, and the client would warn about each. A line that
// never ends (a broken proxy, not Ollama at that address) is cut at MAX_LINE_BYTES the same way,
// rather than held until memory runs out. A line is judged as the client will read it: JSON.parse
// takes only JSON's own whitespace around a value, and the client's streaming decoder drops a byte
// order mark only at the very start of the body.
import { clipText } from '../output/cut.js';

export const MALFORMED_PREFIX = 'argo: malformed line from Ollama: ';
export const OVERLONG_PREFIX = 'argo: overlong line from Ollama: ';

/**
 * The longest streamed line taken: 64 times what Ollama's own client takes (its scanner's 512 KB
 * buffer), room for a tool call carrying a whole file in its arguments.
 */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

/** JSON's whitespace (RFC 8259): all JSON.parse takes around a value. */
const JSON_BLANK = /^[ \t\n\r]*$/;
const JSON_EDGES = /^[ \t\n\r]+|[ \t\n\r]+$/g;
const BOM = '\uFEFF';

/**
 * `text` as a client reading it with JSON.parse takes it: null for a JSON object, '' for a blank line
 * (JSON whitespace only), else the text itself, without its JSON whitespace at either end.
 */
export function notAnObject(text: string): string | null {
  if (JSON_BLANK.test(text)) return '';
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return null;
  } catch {
    // not JSON at all
  }
  return text.replace(JSON_EDGES, '');
}

/**
 * `onErrorLine` is told of each `{"error": …}` line passed on: the error the client then throws is
 * the server's report, not the client's own complaint.
 */
export function guardNdjson(body: ReadableStream<Uint8Array>, onMalformed: (line: string) => void, maxLineBytes = MAX_LINE_BYTES, onErrorLine?: () => void): ReadableStream<Uint8Array> {
  // The BOM kept: a non-streaming decode() would drop one at the start of every line, where the
  // client's JSON.parse meets it.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const encoder = new TextEncoder();
  const source = body.getReader();
  // The unfinished last line, in the chunks it came in (none of them holds a line end): joined once
  // its end arrives, so a long line costs one copy, not one per chunk.
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  // Until a line is passed on, the client's decoder drops a BOM at the start of what it gets.
  let passedAny = false;

  /** null for a chunk line, '' for a blank one, the bad line, or an error line to send in words. */
  const check = (line: Uint8Array): string | ErrorLine | null => {
    const decoded = decoder.decode(line);
    const text = passedAny || !decoded.startsWith(BOM) ? decoded : decoded.slice(1);
    const verdict = notAnObject(text);
    if (verdict !== null) return verdict;
    passedAny = true;
    // Parsed again only for a line that may be one: the client throws an error that is not a plain
    // string as "[object Object]" or "null".
    if (!text.includes('"error"')) return null;
    const value = JSON.parse(text) as Record<string, unknown>;
    if (!Object.hasOwn(value, 'error')) return null;
    onErrorLine?.();
    return oddError(value.error);
  };
  /** Passes on the error line as one the client reads in words, and ends the stream there, as Ollama's does. */
  const endWith = (controller: ReadableStreamDefaultController<Uint8Array>, line: ErrorLine): void => {
    controller.enqueue(encoder.encode(`${JSON.stringify({ error: line.error })}\n`));
    controller.close();
    source.cancel().catch(() => undefined);
  };
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, bad: string, prefix = MALFORMED_PREFIX): void => {
    onMalformed(bad);
    controller.enqueue(encoder.encode(`${JSON.stringify({ error: prefix + preview(bad) })}\n`));
    controller.close();
    source.cancel().catch(() => undefined);
  };
  /** Ends the stream if the unfinished line is past the limit; true then. */
  const overlong = (controller: ReadableStreamDefaultController<Uint8Array>): boolean => {
    if (pendingBytes <= maxLineBytes) return false;
    // Its start is enough to show (the message quotes a few characters of it).
    fail(controller, decoder.decode(joined(pending, pendingBytes, 200)), OVERLONG_PREFIX);
    pending = [];
    return true;
  };

  // Pulled straight from the body's reader, not piped through a TransformStream: every chunk of
  // every answer passes here, and a pipe's promise machinery cost more than the check itself.
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const { done, value: chunk } = await source.read();
        if (done) {
          if (pendingBytes > 0) {
            const last = joined(pending, pendingBytes);
            const bad = check(last);
            if (typeof bad === 'object' && bad !== null) {
              endWith(controller, bad);
              return;
            }
            if (bad !== null && bad !== '') {
              fail(controller, bad);
              return;
            }
            if (bad === null) controller.enqueue(last);
          }
          controller.close();
          return;
        }
        if (!chunk.includes(10)) {
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (overlong(controller)) return;
          continue;
        }
        // Only the chunk can hold a line end: the line before it had none.
        const carried = pendingBytes;
        const data = carried === 0 ? chunk : joined([...pending, chunk], carried + chunk.length);
        // Whole lines from `from` up to `start` go on together; a blank line ends such a run.
        let from = 0;
        let start = 0;
        let sent = false;
        for (let newline = data.indexOf(10, carried); newline !== -1; newline = data.indexOf(10, start)) {
          if (newline - start > maxLineBytes) {
            if (start > from) controller.enqueue(data.subarray(from, start));
            fail(controller, decoder.decode(data.subarray(start, start + 200)), OVERLONG_PREFIX);
            return;
          }
          const bad = check(data.subarray(start, newline));
          if (bad !== null) {
            if (start > from) {
              controller.enqueue(data.subarray(from, start));
              sent = true;
            }
            if (typeof bad === 'object') {
              endWith(controller, bad);
              return;
            }
            if (bad !== '') {
              fail(controller, bad);
              return;
            }
            from = newline + 1;
          }
          start = newline + 1;
        }
        const rest = data.slice(start);
        pending = rest.length === 0 ? [] : [rest];
        pendingBytes = rest.length;
        // Only whole lines go on; a chunk without a line end is read together with the next. The
        // whole lines before a tail too long to be one go on first, so the failure comes after them.
        const whole = start > from;
        if (whole) controller.enqueue(data.subarray(from, start));
        if (overlong(controller) || whole || sent) return;
      }
    },
    cancel(reason) {
      return source.cancel(reason);
    },
  });
}

/** The parts as one array of `length` bytes; `upTo` takes only their first bytes. */
function joined(parts: readonly Uint8Array[], length: number, upTo = length): Uint8Array {
  if (parts.length === 1 && parts[0] !== undefined) return parts[0].subarray(0, upTo);
  const whole = new Uint8Array(Math.min(length, upTo));
  let at = 0;
  for (const part of parts) {
    if (at >= whole.length) break;
    const taken = part.subarray(0, whole.length - at);
    whole.set(taken, at);
    at += taken.length;
  }
  return whole;
}

/** An `{"error"}` line whose error was not a plain string, in words. */
interface ErrorLine {
  error: string;
}

/** The line's error in words when it is not a non-empty string; null otherwise. */
function oddError(error: unknown): ErrorLine | null {
  return typeof error === 'string' && error !== '' ? null : { error: errorWords(error) };
}

/**
 * An error as a server sent it, in words: a string as it is; an object's `message` (OpenAI's and many
 * proxies' shape), else its JSON, cut short; nothing (null, '', absent) as "an empty error".
 */
export function errorWords(error: unknown): string {
  if (error === undefined || error === null || error === '') return 'an empty error';
  if (typeof error === 'string') return error;
  const message: unknown = typeof error === 'object' ? (error as { message?: unknown }).message : undefined;
  if (typeof message === 'string' && message.trim() !== '') return message;
  return clipText(JSON.stringify(error), 200);
}

/** The error a bad line becomes: the transport knows it by its prefix, and quotes the line's start. */
export function malformedLine(bad: string): string {
  return MALFORMED_PREFIX + preview(bad);
}

function preview(line: string): string {
  return clipText(line, 80);
}
