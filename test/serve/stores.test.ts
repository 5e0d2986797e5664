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
    ['version', (info: ReturnType<typeof ollamaInfo>) => info.version()],
    ['models', (info: ReturnType<typeof ollamaInfo>) => info.models()],
  ])('%s gives up after its bound', async (_name, call) => {
    const info = ollamaInfo(host, { versionMs: 150, modelsMs: 150 });
    await expect(call(info)).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(open.size).toBeGreaterThan(0);
  });
});
