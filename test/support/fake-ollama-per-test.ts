// For the stand-in's own tests: a fresh stand-in per call, all of them closed after each test.
import { afterEach } from 'vitest';
import { startFakeOllama } from './fake-ollama.js';
import type { FakeOllama, FakeOllamaOptions } from './fake-ollama.js';

/** Registers the after-each close (call once per test file) and returns the starter. */
export function fakeOllamaPerTest(): (options?: FakeOllamaOptions) => Promise<FakeOllama> {
  const running: FakeOllama[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((fake) => fake.close()));
  });
  return async (options) => {
    const fake = await startFakeOllama(options);
    running.push(fake);
    return fake;
  };
}
