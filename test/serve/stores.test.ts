// The server's view of Ollama gives up on a hung Ollama: /health must answer, and no request may
// keep a stopping server alive (an abandoned request no longer holds the process).
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ollamaInfo } from '../../src/serve/stores.js';

const open = new Set<Socket>();
// Accepts connections and never answers: an Ollama stuck loading.
const hung = createServer((socket) => {
  open.add(socket);
  socket.on('close', () => open.delete(socket));
});
let host = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  host = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of open) socket.destroy();
  await new Promise<void>((resolve) => hung.close(() => resolve()));
});

describe('ollamaInfo against an Ollama that never answers', () => {
  it.each([
    ['version', (info: ReturnType<typeof ollamaInfo>) => info.version(), { name: 'TimeoutError' }],
    ['models', (info: ReturnType<typeof ollamaInfo>) => info.models(), { message: expect.stringMatching(/^no answer from Ollama at http:\/\/127\.0\.0\.1:\d+ within 0\.15s \(a model loading, or Ollama stuck\); try again, or restart Ollama$/) as unknown }],
  ])('%s gives up after its bound', async (_name, call, failure) => {
    const info = ollamaInfo(host, { versionMs: 150, modelsMs: 150 });
    await expect(call(info)).rejects.toMatchObject(failure);
    expect(open.size).toBeGreaterThan(0);
  });
});

describe('ollamaInfo with nothing listening', () => {
  it('says why the models cannot be listed as a chat request does, naming argo serve\'s OLLAMA_HOST', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const down = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(ollamaInfo(down).models()).rejects.toThrow(
      `cannot reach Ollama at ${down} (connection refused); start it with "ollama serve", or set argo serve's OLLAMA_HOST (or "host" in its config.json) to where it runs`,
    );
  });
});
