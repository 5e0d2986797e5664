// Fault scenarios: busy and runner errors before the stream, and where a stream breaks, stalls,
// pauses or goes bad.
import type { FakeScenario } from './types.js';
import { createdAt, goJson } from './wire.js';

export const BUSY_MESSAGE = 'server busy, please try again.  maximum pending requests exceeded';
// What Ollama passes on from a cloud model's rate limit (server/routes_generate_test.go, "status error streaming").
export const RATE_LIMIT_MESSAGE = 'rate limit exceeded';
export const RUNNER_ERROR_MESSAGE = 'an error was encountered while running the model';

export type Terminal =
  | { at: number; kind: 'error'; message: string }
  | { at: number; kind: 'drop' | 'hang' | 'truncate' };

export interface Malformed {
  at: number;
  line: string;
  then: 'continue' | 'end';
}

export function takeBusy(scenario: FakeScenario | undefined): boolean {
  if (!scenario?.busy || scenario.busy <= 0) return false;
  scenario.busy--;
  return true;
}

export function takeScenario(scenario: FakeScenario | undefined): FakeScenario {
  if (scenario?.times === undefined) return scenario ?? {};
  if (scenario.times <= 0) return {};
  scenario.times--;
  return scenario;
}

export function terminalOf(scenario: FakeScenario, total: number): Terminal | undefined {
  const clamp = (at: number): number => Math.min(Math.max(0, at), total);
  const found: Terminal[] = [];
  const error = scenario.errorMidStream;
  if (error !== undefined) {
    const { afterChunks, message } = typeof error === 'number' ? { afterChunks: error, message: undefined } : error;
    found.push({ at: clamp(afterChunks), kind: 'error', message: message ?? RUNNER_ERROR_MESSAGE });
  }
  if (scenario.dropAfter !== undefined) found.push({ at: clamp(scenario.dropAfter), kind: 'drop' });
  if (typeof scenario.hang === 'number') found.push({ at: clamp(scenario.hang), kind: 'hang' });
  const truncate = scenario.truncate;
  if (truncate !== undefined && truncate !== false) {
    found.push({ at: clamp(truncate === true ? total : truncate), kind: 'truncate' });
  }
  return found.sort((a, b) => a.at - b.at)[0];
}

export function malformedOf(scenario: FakeScenario, total: number, model: string): Malformed | undefined {
  const m = scenario.malformedAfter;
  if (m === undefined) return undefined;
  const spec = typeof m === 'number' ? { afterChunks: m } : m;
  // Default: a JSON object torn in the middle, as a broken write would leave it.
  const line = spec.line ?? `{"model":${goJson(model)},"created_at":"${createdAt()}","respo`;
  return { at: Math.min(Math.max(0, spec.afterChunks), total), line, then: spec.then ?? 'continue' };
}

// A pause point K (0 = right after the headers), clamped to the stream's length.
export function holdOf(scenario: FakeScenario, total: number): number | undefined {
  const at = scenario.holdAfter;
  return at === undefined ? undefined : Math.min(Math.max(0, at), total);
}
