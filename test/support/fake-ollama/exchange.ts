// One request/response pair, the server's shared state, and the plain ways to answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResolvedModel } from './models.js';
import type { FakeOllamaOptions, RecordedRequest } from './types.js';
import { JSON_TYPE, goJson } from './wire.js';

export interface ServerState {
  options: FakeOllamaOptions;
  requests: RecordedRequest[];
  loaded: Map<string, { model: ResolvedModel; expiresAt: number; contextLength: number }>;
  checkHost: boolean;
  closing: boolean;
  rounds: number; // chat rounds answered so far
  callIdsMade: number; // ids given with callIds 'seeded' so far: the next is the sequence's next
  // Called on every change a test may wait for: a request arriving, a stream reaching its hold.
  listeners: Set<() => void>;
  releases: Set<() => void>; // wakes each held stream
}

export function notify(state: ServerState): void {
  for (const listener of [...state.listeners]) listener();
}

// Resolves with the first non-undefined result of `probe`, checked now and after every change.
export function whenever<T>(state: ServerState, probe: () => T | undefined): Promise<T> {
  const now = probe();
  if (now !== undefined) return Promise.resolve(now);
  return new Promise((resolve) => {
    const listener = (): void => {
      const found = probe();
      if (found === undefined) return;
      state.listeners.delete(listener);
      resolve(found);
    };
    state.listeners.add(listener);
  });
}

export class Exchange {
  gone = false; // the response is over, for whatever reason
  dropped = false; // we cut the connection on purpose
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly goneWaiters: (() => void)[] = [];

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly record: RecordedRequest,
    private readonly state: ServerState,
    onClose: () => void,
  ) {
    res.on('close', () => {
      this.gone = true;
      if (!res.writableFinished && !this.dropped && !state.closing) record.clientAborted = true;
      clearTimeout(this.timer);
      this.wake?.();
      for (const resolve of this.goneWaiters) resolve();
      onClose();
      notify(state);
    });
  }

  // Sleeps, but wakes up at once if the client leaves.
  wait(ms: number | undefined): Promise<void> {
    if (!ms || ms <= 0 || this.gone) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  untilGone(): Promise<void> {
    return this.gone ? Promise.resolve() : new Promise((resolve) => this.goneWaiters.push(resolve));
  }

  // Parks the response until the test releases it or the client leaves; true if still wanted.
  async hold(): Promise<boolean> {
    if (this.gone) return false;
    this.record.held = true;
    await new Promise<void>((resolve) => {
      const release = (): void => {
        this.state.releases.delete(release);
        resolve();
      };
      this.state.releases.add(release);
      this.goneWaiters.push(release);
      notify(this.state);
    });
    this.record.held = false;
    return !this.gone;
  }

  // Writes one line; waits for the socket to drain so slow readers get back-pressure.
  async writeLine(line: string): Promise<void> {
    if (this.gone) return;
    this.record.linesWritten++;
    if (this.res.write(line)) return;
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      this.res.once('drain', resolve);
    });
  }

  drop(): void {
    this.dropped = true;
    this.res.socket?.destroy();
  }
}

export function sendBody(ctx: Exchange, status: number, body: string, type: string | undefined): void {
  if (ctx.gone) return;
  const headers: Record<string, string | number> = { 'Content-Length': Buffer.byteLength(body) };
  if (type) headers['Content-Type'] = type;
  ctx.record.status = status;
  ctx.res.writeHead(status, headers).end(body);
}

export const sendJson = (ctx: Exchange, status: number, value: unknown, type = JSON_TYPE): void => {
  sendBody(ctx, status, goJson(value), type);
};

export const sendError = (ctx: Exchange, status: number, message: string, type = JSON_TYPE): void => {
  sendJson(ctx, status, { error: message }, type);
};

export type Handler = (state: ServerState, ctx: Exchange) => void | Promise<void>;
