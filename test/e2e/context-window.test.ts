// Ollama's answer and the questions about its models end to end: the built bin/argo (and argo
// serve) against the stand-in.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama } from '../support/fake-ollama.js';
import type { FakeOllama, RecordedRequest } from '../support/fake-ollama.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { startServe } from '../support/run-serve.js';

let ollama: FakeOllama;

beforeAll(async () => {
  ollama = await startFakeOllama();
});
afterAll(async () => {
  await ollama.close();
});
afterEach(() => {
  ollama.options.stallShow = undefined;
  ollama.setScenario(undefined);
  ollama.requests.length = 0;
});

/** `n` words: the stand-in counts one token each, Argo's estimate about half a token each. */
const words = (n: number): string => Array.from({ length: n }, () => 'a').join(' ');
const isShow = (request: RecordedRequest): boolean => request.path === '/api/show';

describe('a stalled /api/show', () => {
  it('holds a turn no longer than timeouts.idleMs: the turn goes on unchecked', async () => {
    ollama.options.stallShow = true;
    const home = tempHome({ timeouts: { idleMs: 300 } });
    const result = await runArgo([words(2000)], { home, host: ollama.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('You said:');
    expect(logLines(home)[0]).toMatchObject({ status: 'ok', num_ctx: null, truncation_suspected: false });
    const show = ollama.requests.find(isShow);
    await show?.settled;
    expect(show?.clientAborted).toBe(true);
  });

  it('Ctrl-C while waiting for it ends the turn at once: exit 130, logged as interrupted', async () => {
    ollama.options.stallShow = true;
    const home = tempHome();
    const result = await runArgo([words(2000)], {
      home,
      host: ollama.url,
      onSpawn: (child) => void ollama.waitForRequest(isShow).then(() => child.kill('SIGINT')),
    });
    expect(result.code).toBe(130);
    expect(logLines(home)[0]).toMatchObject({ status: 'interrupted' });
    expect(ollama.requests.some((request) => request.path === '/api/chat')).toBe(false);
  });

  it('argo serve: a client that goes away cancels the lookup', async () => {
    ollama.options.stallShow = true;
    const home = tempHome();
    const serve = await startServe({ home, host: ollama.url });
    try {
      const client = new AbortController();
      const sent = fetch(`${serve.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'argo', stream: true, messages: [{ role: 'user', content: words(2000) }] }),
        signal: client.signal,
      }).catch(() => null);
      const show = await ollama.waitForRequest(isShow);
      client.abort();
      await sent;
      await show.settled;
      expect(show.clientAborted).toBe(true);
    } finally {
      await serve.stop();
    }
  });
});

describe('--no-stream', () => {
  it('a whole answer without done:true fails as a cut stream does: exit 1, status error', async () => {
    ollama.setScenario({ truncate: true });
    const home = tempHome();
    const result = await runArgo(['--no-stream', 'hi'], { home, host: ollama.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('argo: the stream from Ollama ended without its final chunk; the answer is incomplete');
    expect(logLines(home)[0]).toMatchObject({ status: 'error', ollama_stream: false, error: 'the stream from Ollama ended without its final chunk; the answer is incomplete' });
  });
});
