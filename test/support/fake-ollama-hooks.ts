// The stand-in's lifetime in a test file: started by the file, closed by vitest's hooks.
import { afterAll, afterEach, beforeEach } from 'vitest';
import { startFakeOllama } from './fake-ollama.js';
import type { FakeOllama, FakeOllamaOptions, FakeToolCall } from './fake-ollama.js';

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

/** One round of a scripted agent run: the model's words and its tool calls. */
export interface ScriptedRound {
  reply?: string;
  calls?: FakeToolCall[];
}

/** What a scripted stand-in plays: its rounds, and the index of the one the next request gets. */
export interface ScriptedPlay {
  rounds: ScriptedRound[];
  next: number;
}

/**
 * A stand-in for the whole file whose model, able to call tools, answers each request with the
 * next of `play.rounds` (the last again once they run out); the rounds, the requests and the
 * scenario start empty in each test.
 */
export async function scriptedOllamaPerFile(): Promise<{ ollama: FakeOllama; play: ScriptedPlay }> {
  const play: ScriptedPlay = { rounds: [], next: 0 };
  let current: ScriptedRound = {};
  const ollama = await fakeOllamaPerFile({
    models: [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }],
    // Called once per request, before toolCalls: it picks the round.
    reply: () => {
      current = play.rounds[Math.min(play.next++, play.rounds.length - 1)] ?? {};
      return current.reply ?? '';
    },
    toolCalls: () => current.calls,
  });
  beforeEach(() => {
    ollama.setScenario(undefined);
    ollama.requests.length = 0;
    play.rounds = [];
    play.next = 0;
  });
  return { ollama, play };
}
