// An HTTP stand-in for the Ollama daemon, built from /work/shared/spec/ollama-protocol.md and
// ollama/ollama server/routes.go. Used by end-to-end tests and benchmarks. The parts live in
// ./fake-ollama/: server.ts (routes, recording, the handle), models.ts (registry, /api/show,
// context window), faults.ts (scenarios), tool-calls.ts (chat rounds), stream.ts (writing an
// answer), reply.ts (tokens), logprobs.ts (log probabilities), wire.ts (Go's JSON, binding,
// durations), host-check.ts, versions.ts (what each release lacks: `{ version: '0.3.0' }` answers as
// 0.3.0 did).
// Standalone: node --import tsx test/support/fake-ollama.ts --port 0 --tokens 1000 --delay-ms 0
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startFakeOllama } from './fake-ollama/server.js';
import type { FakeOllama, FakeRound } from './fake-ollama/types.js';

export { startFakeOllama } from './fake-ollama/server.js';
export { BUSY_MESSAGE, RUNNER_ERROR_MESSAGE } from './fake-ollama/faults.js';
export { SIGNIN_URL } from './fake-ollama/server.js';
export { DEFAULT_NUM_CTX } from './fake-ollama/models.js';
export { estimatePromptTokens, splitTokens } from './fake-ollama/reply.js';
export { seededCallId } from './fake-ollama/tool-calls.js';
export { NOT_AN_OBJECT } from './fake-ollama/tool-binding.js';
export { CURRENT_VERSION, profileOf } from './fake-ollama/versions.js';
export type { VersionProfile } from './fake-ollama/versions.js';
export { fakeLogprob, fakeLogprobValue } from './fake-ollama/logprobs.js';
export type { FakeLogprob, FakeTokenLogprob } from './fake-ollama/logprobs.js';
export type {
  Endpoint, FakeModel, FakeOllama, FakeOllamaOptions, FakeRound, FakeScenario, FakeStreamFaults,
  FakeToolArguments, FakeToolCall, RecordedRequest, RequestBody,
} from './fake-ollama/types.js';

/** Scripts the next chat rounds of a running stand-in: its next chat request gets rounds[0], and so on. */
export function scriptRounds(fake: FakeOllama, rounds: FakeRound[]): void {
  const start = fake.rounds;
  fake.options.rounds = (_body, index) => rounds[index - start];
}

// ---------------------------------------------------------------------------------------------
// Standalone mode, for benchmarks

function benchmarkTokens(count: number): string[] {
  const words = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit'];
  return Array.from({ length: count }, (_, i) => `${i === 0 ? '' : ' '}${words[i % words.length]}`);
}

async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      tokens: { type: 'string' },
      'delay-ms': { type: 'string' },
      'first-chunk-delay-ms': { type: 'string' },
    },
  });
  const tokenCount = Number(values.tokens ?? 0);
  const fake = await startFakeOllama({
    host: values.host,
    port: Number(values.port ?? 0),
    tokens: tokenCount > 0 ? benchmarkTokens(tokenCount) : undefined,
    scenario: {
      delayMs: Number(values['delay-ms'] ?? 0),
      firstChunkDelayMs: Number(values['first-chunk-delay-ms'] ?? 0),
    },
  });
  console.log(`listening ${fake.url}`);
  const stop = (): void => void fake.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function isMain(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (isMain()) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
