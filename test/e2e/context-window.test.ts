// Ollama's answer end to end: the built bin/argo against the stand-in.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOllama } from '../support/fake-ollama.js';
import type { FakeOllama } from '../support/fake-ollama.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

let ollama: FakeOllama;

beforeAll(async () => {
  ollama = await startFakeOllama();
});
afterAll(async () => {
  await ollama.close();
});
afterEach(() => {
  ollama.setScenario(undefined);
  ollama.requests.length = 0;
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
