// An agent turn whose answering throws (a fault of Argo's own, not a tool's failure) is logged with
// what the run did before it: the calls that ran, the iterations, the rounds' words.
import { mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentAnswerer } from '../../src/agent/answer.js';
import { loadSettings } from '../../src/config/settings.js';
import { unfinishedDir } from '../../src/log/unfinished.js';
import type { StreamOutcome } from '../../src/ollama/transport.js';
import { readFileTool } from '../../src/tools/fs.js';
import type { Tool } from '../../src/tools/types.js';
import { UNANSWERED_ERROR, UNANSWERED_STOP_REASON, runTurn } from '../../src/turn/turn.js';
import type { TurnPorts } from '../../src/turn/turn.js';
import { logLines } from '../support/run-argo.js';

const METRICS = { total_duration: 1, load_duration: 0, prompt_eval_count: 1, prompt_eval_duration: 1, eval_count: 1, eval_count_total: 1, eval_duration: 1, done_reason: 'stop' };

let root: string;
let home: string;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-unanswered-root-')));
  home = mkdtempSync(join(tmpdir(), 'argo-unanswered-home-'));
  writeFileSync(join(root, 'a.txt'), 'hello\n');
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** A tool whose argument check has a bug: it throws instead of saying why. */
const broken: Tool = {
  name: 'greet',
  description: 'Greet someone',
  parameters: { type: 'object', properties: { who: { type: 'string' } } },
  sideEffects: false,
  refuse: () => {
    throw new TypeError("Cannot read properties of undefined (reading 'startsWith')");
  },
  run: () => Promise.resolve({ ok: true }),
};

/** Round 1 reads a file, round 2 calls the broken tool; a third request would answer. */
let requests = 0;
const transport: TurnPorts['transport'] = {
  stream: (_request, hooks) => {
    const round = ++requests;
    const calls = round === 1 ? [{ function: { name: 'read_file', arguments: { path: 'a.txt' } } }] : round === 2 ? [{ function: { name: 'greet', arguments: {} } }] : [];
    hooks.onText(round === 1 ? 'Reading it first.' : 'Done.');
    const outcome: StreamOutcome = { status: 'ok', failure: null, metrics: METRICS, attempts: 1, toolCalls: calls };
    return Promise.resolve(outcome);
  },
  installedModels: () => Promise.resolve([]),
};

describe('an agent turn whose answering throws after a round ran', () => {
  it('is logged as an error with the calls, iterations and round words it had', async () => {
    const settings = loadSettings({ home, session: 'work', model: 'argo' }, {});
    let tick = 0;
    const answer = agentAnswerer({ tools: [broken, readFileTool], unavailable: [], root, home, logged: true, maxIterations: 5, ephemeralSystem: null, yes: true, confirm: () => Promise.resolve('no-terminal'), emit: () => undefined, sessionId: () => Promise.resolve('S1'), isStopped: () => false, abortedByStop: () => false });
    const running = runTurn(settings, { prompt: 'read a.txt then greet', replay: { kind: 'none' }, log: true, ollamaStream: true }, {
      transport,
      now: () => new Date('2025-03-04T05:06:07.000Z'),
      clock: () => (tick += 10),
      newId: () => 'turn00000001',
      rescue: () => Promise.reject(new Error('no rescue expected')),
      answer,
      draftFields: { tools: ['greet', 'read_file'] },
    });
    await expect(running).rejects.toThrow("reading 'startsWith'");
    const [line, ...more] = logLines(home);
    expect(more).toEqual([]);
    expect(line).toMatchObject({
      status: 'error',
      error: UNANSWERED_ERROR,
      stop_reason: UNANSWERED_STOP_REASON,
      iterations: 1,
      all_failure_rounds: 0,
      tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' }, outcome: 'success', round: 1 }],
      round_messages: [{ round: 1, content: 'Reading it first.' }],
      user_prompt: 'read a.txt then greet',
    });
    // Logged: nothing is left for the next argo to log again.
    expect(readdirSync(unfinishedDir(home))).toEqual([]);
  });

  it('one that throws in its first round says so too, with no calls and no rounds', async () => {
    const firstHome = mkdtempSync(join(tmpdir(), 'argo-unanswered-first-'));
    try {
      const settings = loadSettings({ home: firstHome, session: 'work', model: 'argo' }, {});
      const answer = agentAnswerer({ tools: [broken, readFileTool], unavailable: [], root, home: firstHome, logged: true, maxIterations: 5, ephemeralSystem: null, yes: true, confirm: () => Promise.resolve('no-terminal'), emit: () => undefined, sessionId: () => Promise.resolve('S1'), isStopped: () => false, abortedByStop: () => false });
      const greetFirst: TurnPorts['transport'] = {
        stream: () => Promise.resolve({ status: 'ok', failure: null, metrics: METRICS, attempts: 1, toolCalls: [{ function: { name: 'greet', arguments: {} } }] } satisfies StreamOutcome),
        installedModels: () => Promise.resolve([]),
      };
      const running = runTurn(settings, { prompt: 'greet', replay: { kind: 'none' }, log: true, ollamaStream: true }, {
        transport: greetFirst,
        now: () => new Date('2025-03-04T05:06:07.000Z'),
        clock: () => 0,
        newId: () => 'turn00000002',
        rescue: () => Promise.reject(new Error('no rescue expected')),
        answer,
        draftFields: { tools: ['greet', 'read_file'] },
      });
      await expect(running).rejects.toThrow("reading 'startsWith'");
      expect(logLines(firstHome)).toEqual([expect.objectContaining({ status: 'error', error: UNANSWERED_ERROR, stop_reason: UNANSWERED_STOP_REASON, iterations: 0, tool_calls: [] })]);
    } finally {
      rmSync(firstHome, { recursive: true, force: true });
    }
  });
});
