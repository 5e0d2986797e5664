import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeExplainText } from '../../src/cli/ask.js';
import type { Explained } from '../../src/cli/ask.js';
import type { TransportRequest } from '../../src/ollama/transport.js';
import { loadSettings } from '../../src/config/settings.js';
import { MODEL_SOURCE_WORDS } from '../../src/output/turn-notes.js';
import { planTurn } from '../../src/replay/plan.js';
import type { ReplayPlan } from '../../src/replay/plan.js';
import type { HistoryTurn, ReplaySpec } from '../../src/replay/types.js';
import { checkContext, requestSha256 } from '../../src/turn/request-facts.js';
import type { ContextCheck } from '../../src/turn/request-facts.js';
import type { PreparedTurn } from '../../src/turn/turn.js';
import { makePlanInput } from '../support/plan-input.js';
import { windowFix } from '../../src/ollama/context-window.js';
import type { WindowFixes } from '../../src/ollama/context-window.js';
import { CHAT_HINTS } from '../../src/ollama/fix-hints.js';

const WINDOW_SOURCES = { flag: 'from --num-ctx or -o num_ctx', config: 'from config.json', model: "the model's num_ctx", default: "Ollama's default", loaded: 'as Ollama loaded the model' } as const;

/** `--explain` as it was made before it was streamed: the whole text as one string (the oracle). */
function explainAsOneString({ plan, model, modelSource, request }: Explained, context: ContextCheck, session: string, host: string, added: string[]): string {
  const window = context.window;
  const lines = [
    `session    ${session}`,
    `model      ${model} (${MODEL_SOURCE_WORDS[modelSource]})`,
    `entry type ${plan.entryType}`,
    `verbosity  ${plan.verbosity}`,
    `context    about ${context.estimate} prompt tokens${window ? ` of a ${window.tokens}-token window (${WINDOW_SOURCES[window.source]})${context.before !== null ? ` — too long: ${windowFix(context.estimate, window.tokens)}` : ''}` : ''}`,
  ];
  const policy = plan.replayPolicy;
  if (policy === null) {
    lines.push('replay     none');
  } else {
    lines.push(
      `replay     ${policy.entries_available} ok turns loaded, reason ${policy.reason}`,
      `filtered   ${policy.entries_filtered}${policy.filtered_types.length ? ` (${policy.filtered_types.join(', ')})` : ''}`,
      `budget     ${policy.chars_used} of ${policy.budget} chars, ${policy.entries_used} turns used${policy.trimmed ? ', trimmed' : ''}`,
      `strength   ${policy.context_strength}`,
    );
    for (const turn of policy.decisions) {
      lines.push(`  ${turn.id.padEnd(14)} ${turn.entry_type.padEnd(12)} ${turn.outcome.padEnd(9)} ${String(turn.chars).padStart(6)} chars${turn.protected ? '  protected' : ''}`);
    }
  }
  lines.push(...added, `request    POST ${host}${request.endpoint} (sha256 ${requestSha256(request)})`, JSON.stringify(request.body, null, 2));
  return `${lines.join('\n')}\n`;
}

const PROMPTS = ['what is a monad?', 'fix the parser', 'actually, that is wrong', 'repeat that', 'hello there', 'explain the café menu …'];
const IDS = (i: number): string => [`t${i}`, `turn-${String(i).padStart(20, '0')}`, `ü${i}…`, `😀${i}`][i % 4] ?? `t${i}`;

/** A long session: every type, ids short, long and not ASCII, words with two-, three- and four-byte characters. */
function history(count: number): HistoryTurn[] {
  return Array.from({ length: count }, (_, i) => ({
    id: IDS(i),
    prompt: `${PROMPTS[i % PROMPTS.length] ?? ''} (${i})`,
    response: i % 7 === 0 ? `Answer ${i}: ${'long words é… '.repeat(60)}` : `Answer ${i} 😀.`,
  }));
}

/** An agent run's explanation: its resolution's lines, and a first request with a tool and a memo in its system prompt. */
interface AgentPart {
  lines: string[];
  extend: (request: ReplayPlan['request']) => TransportRequest;
}

const AGENT: AgentPart = {
  lines: ['tools      fs (from --tools)', '  fs           → list_files, read_file', 'resolved   list_files, read_file', 'root       /tmp', 'max        10 iterations'],
  extend: (request) => {
    if (request.endpoint !== '/api/chat') throw new Error('a chat request was planned');
    const tool = { type: 'function' as const, function: { name: 'read_file', description: 'Reads a file', parameters: { type: 'object' } } };
    return { endpoint: '/api/chat', body: { ...request.body, messages: [{ role: 'system', content: 'memo: lang=TypeScript' }, ...request.body.messages], tools: [tool] } };
  },
};

async function explained(spec: ReplaySpec, turns: number, numCtx?: number, agent?: AgentPart): Promise<{ writes: string[]; oracle: string }> {
  const settings = loadSettings({ home: mkdtempSync(join(tmpdir(), 'argo-explain-')), session: 'big' }, {});
  const plan = planTurn(makePlanInput({
    input: 'what changed in the parser',
    spec,
    history: history(turns),
    verbosity: 'short',
    request: { endpoint: 'chat', model: 'argo', stream: true, options: numCtx === undefined ? {} : { num_ctx: numCtx } },
  }));
  const prepared: PreparedTurn = { session: null, model: 'argo', modelSource: 'default', plan };
  const request = agent ? agent.extend(plan.request) : plan.request;
  const context = await checkContext(settings, request, undefined, { always: true });
  const writes: string[] = [];
  writeExplainText({ write: (text: string) => writes.push(text) }, { ...prepared, request }, context, settings, agent?.lines);
  return { writes, oracle: explainAsOneString({ ...prepared, request }, context, settings.session, settings.host, agent?.lines ?? []) };
}

describe('--explain text, written in chunks', () => {
  it.each<[string, ReplaySpec, number, number | undefined, AgentPart | undefined]>([
    ['a long session (a line per turn)', { kind: 'session' }, 5000, undefined, undefined],
    ['a short replay', { kind: 'last', count: 3 }, 20, undefined, undefined],
    ['no replay', { kind: 'none' }, 0, undefined, undefined],
    ['a prompt too long for its window', { kind: 'session' }, 50, 64, undefined],
    ["an agent run: the plain lines, its resolution, then its first request", { kind: 'last', count: 3 }, 20, undefined, AGENT],
  ])('%s: the same bytes as the whole text at once', async (_name, spec, turns, numCtx, agent) => {
    const { writes, oracle } = await explained(spec, turns, numCtx, agent);
    expect(Buffer.from(writes.join(''))).toEqual(Buffer.from(oracle));
  });

  it.each<[string, WindowFixes, RegExp]>([
    ['a question, turns replayed', { replayed: true }, /— too long: raise --num-ctx \(e\.g\. --num-ctx \d+\) or lower --budget$/],
    ['a question, nothing replayed', { replayed: false }, /— too long: raise --num-ctx \(e\.g\. --num-ctx \d+\) or shorten the prompt$/],
    ["a chat's /explain, turns replayed", { hints: CHAT_HINTS, replayed: true }, /— too long: start argo chat again with --num-ctx \d+ or replay less \(\/replay last:1 or \/replay none\)$/],
  ])('a prompt too long for its window, %s: the fixes that can be used there', async (_case, fixes, tooLong) => {
    const settings = loadSettings({ home: mkdtempSync(join(tmpdir(), 'argo-explain-')), session: 'big' }, {});
    const plan = planTurn(makePlanInput({ input: 'what changed', spec: { kind: 'session' }, history: history(50), verbosity: 'short', request: { endpoint: 'chat', model: 'argo', stream: true, options: { num_ctx: 64 } } }));
    const context = await checkContext(settings, plan.request, undefined, { always: true });
    const writes: string[] = [];
    writeExplainText({ write: (text: string) => writes.push(text) }, { session: null, model: 'argo', modelSource: 'default', plan, request: plan.request }, context, settings, [], fixes);
    expect(writes.join('').split('\n').find((line) => line.startsWith('context '))).toMatch(tooLong);
  });

  it('never holds a long session whole: many writes, each ending on a line', async () => {
    const { writes, oracle } = await explained({ kind: 'session' }, 5000);
    expect(writes.length).toBeGreaterThan(10);
    for (const chunk of writes) {
      expect(chunk.endsWith('\n')).toBe(true);
      expect(chunk.length).toBeLessThan(oracle.length / 10);
    }
  });
});
