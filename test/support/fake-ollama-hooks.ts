// The stand-in's lifetime in a test file: started by the file, closed by vitest's hooks.
import { afterAll, afterEach } from 'vitest';
import { startFakeOllama } from './fake-ollama.js';
import type { FakeOllama, FakeOllamaOptions } from './fake-ollama.js';

/**
 * One stand-in for the whole file, closed after its last test. Awaited at the top of the file, so
 * every test and hook sees it started; a later `afterAll` (a server using it) runs before the close.
 */
export async function fakeOllamaPerFile(options?: FakeOllamaOptions): Promise<FakeOllama> {
  const fake = await startFakeOllama(options);
  afterAll(async () => {
    await fake.close();
  });
  return fake;
}

/** Registers the after-each close (call once per test file) and returns the starter: a fresh stand-in per call. */
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
