// search_files' regular expression runs in a worker thread. JavaScript's engine backtracks, so a
// pattern such as ^(a+)+$ on a long line can run for minutes, and on the main thread it would hold
// the whole process: no other request, no timer, no signal handler. A worker can be stopped mid-match
// (terminate); the main thread cannot. V8's fallback to its linear engine
// (--enable-experimental-regexp-engine-on-excessive-backtracks) is no guard: it skips patterns with
// lookarounds or backreferences, which backtrack just as badly.
import { Worker } from 'node:worker_threads';

/** A line of the batch's file `file` (its index in the batch) that matched, cut to its head. */
export interface LineMatch {
  file: number;
  line: number;
  text: string;
}

interface Batch {
  source: string;
  files: { buffer: ArrayBuffer; length: number }[];
  /** Stop after this many matches. */
  most: number;
}

/** Characters of a matching line sent back; the tool cuts it shorter still. */
const LINE_HEAD_CHARS = 1000;
/** Workers kept for the next search (a new one costs ~50 ms to start). */
const KEPT_IDLE = 2;

/** The pattern ran longer than its limit on one batch and was stopped. */
export class PatternTooSlowError extends Error {
  override name = 'PatternTooSlowError';
}

/**
 * The worker's code, run from this text (eval): a second file would need a path that holds both in
 * the bundle and in the tests, and a function's own source is not safe to send (a transpiler may add
 * helpers it calls). It takes a batch (Batch), answers its matches (LineMatch[]), and waits for the next.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
// A leading byte order mark is dropped (the decoder's default), as read_file drops it: "^#!" matches line 1.
const decoder = new TextDecoder('utf-8');
function search(batch, regex, found) {
  for (let file = 0; file < batch.files.length; file++) {
    const { buffer, length } = batch.files[file];
    const lines = decoder.decode(new Uint8Array(buffer, 0, length)).split('\\n');
    for (let index = 0; index < lines.length; index++) {
      // A CRLF line without its CR, as read_file shows it: "^three$" matches it.
      const line = lines[index].endsWith('\\r') ? lines[index].slice(0, -1) : lines[index];
      if (!regex.test(line)) continue;
      found.push({ file, line: index + 1, text: line.slice(0, ${LINE_HEAD_CHARS}) });
      if (found.length >= batch.most) return;
    }
  }
}
parentPort.on('message', (batch) => {
  const found = [];
  search(batch, new RegExp(batch.source), found);
  parentPort.postMessage(found);
});
`;

const idle: Worker[] = [];

function startWorker(): Worker {
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  // An idle worker that fails is dropped; a busy one's failure is its batch's (matchLines).
  worker.on('error', () => forget(worker));
  worker.on('exit', () => forget(worker));
  return worker;
}

function forget(worker: Worker): void {
  const at = idle.indexOf(worker);
  if (at !== -1) idle.splice(at, 1);
}

function release(worker: Worker): void {
  if (idle.length >= KEPT_IDLE) {
    void worker.terminate();
    return;
  }
  // Kept for the next search, without keeping the process alive.
  worker.unref();
  idle.push(worker);
}

/**
 * The lines of `files` (UTF-8 bytes, each its own ArrayBuffer, handed over to the worker: the
 * caller must not use them again) that `source` matches, at most `most`. The match runs in a
 * worker; past `limitMs`, or when `signal` aborts, the worker is stopped and this rejects
 * (PatternTooSlowError, or the signal's reason).
 */
export function matchLines(source: string, files: readonly Uint8Array<ArrayBuffer>[], most: number, limitMs: number, signal: AbortSignal): Promise<LineMatch[]> {
  signal.throwIfAborted();
  const worker = idle.pop() ?? startWorker();
  // Busy, it keeps the process alive as the work it does for a caller.
  worker.ref();
  const batch: Batch = { source, files: files.map((bytes) => ({ buffer: bytes.buffer, length: bytes.byteLength })), most };
  return new Promise((resolve, reject) => {
    const finish = (error: unknown, matches?: LineMatch[]): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      worker.off('message', onMessage).off('error', onFailure).off('exit', onFailure);
      if (matches !== undefined) {
        release(worker);
        resolve(matches);
        return;
      }
      void worker.terminate();
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    const onMessage = (matches: LineMatch[]): void => finish(null, matches);
    const onFailure = (error?: unknown): void => finish(error instanceof Error ? error : new Error('the search worker stopped'));
    const onAbort = (): void => finish(signal.reason);
    const timer = setTimeout(() => finish(new PatternTooSlowError(`the pattern ran over ${limitMs / 1000} s`)), limitMs);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.on('message', onMessage).on('error', onFailure).on('exit', onFailure);
    try {
      worker.postMessage(batch, batch.files.map((file) => file.buffer));
    } catch (error) {
      finish(error);
    }
  });
}
