// The agent loop as a turn's answer step, over the real file tools and a real data home: a round of
// parallel search_files calls whose results are past their budget (read_file fits its own).
import { mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentAnswerer } from '../../src/agent/answer.js';
import type { AgentSetup } from '../../src/agent/answer.js';
import type { AgentEvent } from '../../src/agent/loop.js';
import type { AgentChatBody, StreamOutcome } from '../../src/ollama/transport.js';
import { readFileTool, searchFilesTool } from '../../src/tools/fs.js';
import type { AnswerContext } from '../../src/turn/turn.js';

const METRICS = { total_duration: 1, load_duration: 0, prompt_eval_count: 1, prompt_eval_duration: 1, eval_count: 1, eval_duration: 1, done_reason: 'stop' };
const FILES = Array.from({ length: 8 }, (_, index) => `file${String(index)}.txt`);

let root: string;
let home: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-answer-root-')));
  home = mkdtempSync(join(tmpdir(), 'argo-answer-home-'));
  // Different sizes, all past the default 4,000-character budget.
  FILES.forEach((file, index) => writeFileSync(join(root, file), `${file} line\n`.repeat(100 + index * 10)));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

/** A model that asks for every file at once, then answers; it keeps the requests it was sent. */
function transport(bodies: AgentChatBody[]): AnswerContext['transport'] {
  return {
    stream: (request, hooks) => {
      bodies.push(JSON.parse(JSON.stringify(request.body)) as AgentChatBody);
      const calls = bodies.length === 1 ? FILES.map((glob) => ({ function: { name: 'search_files', arguments: { pattern: 'line', glob } } })) : [];
      if (calls.length === 0) hooks.onText('read them all');
      const outcome: StreamOutcome = { status: 'ok', failure: null, metrics: METRICS, attempts: 1, toolCalls: calls };
      return Promise.resolve(outcome);
    },
    installedModels: () => Promise.resolve([]),
  };
}

/** The answer step over the file tools in the test tree, asking nothing (no terminal). */
const answerer = (overrides: Pick<AgentSetup, 'emit' | 'sessionId'>) =>
  agentAnswerer({ tools: [readFileTool, searchFilesTool], unavailable: [], root, home, logged: true, maxIterations: 3, ephemeralSystem: null, yes: false, confirm: () => Promise.resolve('no-terminal'), ...overrides });

const request = { endpoint: '/api/chat' as const, body: { model: 'argo', messages: [{ role: 'user' as const, content: 'read' }], stream: true } };

describe('agentAnswerer', () => {
  it('runs a round of 8 search_files calls, feeds them back in call order and has every result saved once it returns', async () => {
    const bodies: AgentChatBody[] = [];
    const events: AgentEvent[] = [];
    let sessionAsked = 0;
    const answer = answerer({
      emit: (event) => events.push(event),
      sessionId: () => {
        sessionAsked++;
        return Promise.resolve('S1');
      },
    });
    const result = await answer(request, { turnId: 'T1', transport: transport(bodies), clock: () => 0, onText: () => undefined });

    expect(result).toMatchObject({ status: 'ok', response: 'read them all' });
    // Every call was running before the first one ended.
    const statuses = events.flatMap((event) => (event.type === 'tool_status' ? [event.status] : []));
    expect(statuses.slice(0, 8)).toEqual(Array.from({ length: 8 }, () => 'running'));
    const sent = bodies[1]?.messages.slice(1) ?? [];
    expect(sent[0]?.tool_calls?.map((call) => call.function.arguments)).toEqual(FILES.map((glob) => ({ pattern: 'line', glob })));
    expect(sent.slice(1).map((message) => (JSON.parse(message.content) as { note: string }).note)).toEqual(
      FILES.map((_, index) => expect.stringContaining(`characters of call call_1_${String(index)} (saved whole for the user)`) as unknown),
    );
    // One session id for the turn, however many results were saved in it.
    expect(sessionAsked).toBe(1);
    for (const [index, file] of FILES.entries()) {
      const saved = join(home, 'tool-results', 'S1', 'T1', `r1-call_1_${String(index)}.json`);
      expect((JSON.parse(readFileSync(saved, 'utf8')) as { matches: unknown[] }).matches).toEqual(Array.from({ length: 100 + index * 10 }, (_, line) => ({ file, line: line + 1, text: `${file} line` })));
      expect(statSync(saved).mode & 0o777).toBe(0o600);
    }
  });

  it("hands the turn's window check each request as it is sent (the first adds the tools the turn's own check left out)", async () => {
    const bodies: AgentChatBody[] = [];
    const checked: unknown[] = [];
    const answer = answerer({ emit: () => undefined, sessionId: () => Promise.resolve('S3') });
    const checkWindow = (body: unknown): Promise<void> => (checked.push(JSON.parse(JSON.stringify(body))), Promise.resolve());
    await answer(request, { turnId: 'T3', transport: transport(bodies), clock: () => 0, onText: () => undefined, checkWindow });
    // The first carries the tool definitions; the second the eight results too.
    expect(checked).toEqual([bodies[0], bodies[1]]);
  });

  it("shows each response's reasoning as a new paragraph after the previous one's; the model gets each back as it was", async () => {
    const bodies: AgentChatBody[] = [];
    const thoughts = ['Need the file.', 'It says hi.'];
    const shown: string[] = [];
    const thinking: AnswerContext['transport'] = {
      stream: (request, hooks) => {
        bodies.push(JSON.parse(JSON.stringify(request.body)) as AgentChatBody);
        hooks.onThinking?.(thoughts[bodies.length - 1] ?? '');
        const calls = bodies.length === 1 ? [{ function: { name: 'read_file', arguments: { path: 'file0.txt', limit: 1 } } }] : [];
        if (calls.length === 0) hooks.onText('It says hi.');
        return Promise.resolve({ status: 'ok', failure: null, metrics: METRICS, attempts: 1, toolCalls: calls });
      },
      installedModels: () => Promise.resolve([]),
    };
    const answer = answerer({ emit: () => undefined, sessionId: () => Promise.resolve('S2') });
    await answer(request, { turnId: 'T2', transport: thinking, clock: () => 0, onText: () => undefined, onThinking: (text) => shown.push(text) });
    expect(shown).toEqual(['Need the file.', '\n\n', 'It says hi.']);
    expect(bodies[1]?.messages[1]).toMatchObject({ role: 'assistant', thinking: 'Need the file.' });
  });
});
