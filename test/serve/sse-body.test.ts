// The event-stream body: a write waits for the client to take it; once the client is gone, writes
// are dropped without failing the writer.
import { describe, expect, it } from 'vitest';
import { SseBody } from '../../src/serve/sse-body.js';

const text = (chunk: Uint8Array | undefined): string => new TextDecoder().decode(chunk);

describe('SseBody', () => {
  it('hands the client each write in order and ends when closed', async () => {
    const body = new SseBody();
    const reader = body.stream.getReader();
    const writing = (async () => {
      await body.write('data: a\n\n');
      await body.write('data: b\n\n');
      body.close();
    })();
    expect(text((await reader.read()).value)).toBe('data: a\n\n');
    expect(text((await reader.read()).value)).toBe('data: b\n\n');
    expect((await reader.read()).done).toBe(true);
    await writing;
  });

  it('a write waits until the client has taken what is queued', async () => {
    const body = new SseBody();
    const reader = body.stream.getReader();
    let taken = false;
    const writing = body.write('data: a\n\n').then(() => (taken = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(taken).toBe(false);
    await reader.read();
    await writing;
    expect(taken).toBe(true);
  });

  it('after the client cancels, a waiting write and later ones resolve and nothing more is queued', async () => {
    const body = new SseBody();
    const reader = body.stream.getReader();
    const waiting = body.write('data: a\n\n');
    await reader.cancel();
    await waiting;
    await body.write('data: b\n\n');
    body.close();
    expect((await reader.closed.then(() => 'closed'))).toBe('closed');
  });
});
