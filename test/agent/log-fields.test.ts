import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { agentDraftFields, agentLogFields } from '../../src/agent/answer.js';
import type { AgentResult } from '../../src/agent/loop.js';
import { entryProblem, parseEntry, serializeEntry } from '../../src/log/entry.js';
import { EMPTY_QUERY, STATUS_CHOICES, matchesQuery, parseChoices } from '../../src/query/query.js';
import { makeEntry } from '../query/helpers.js';

const call = { id: 'call_1_0', name: 'run_command', arguments: { command: 'ls' }, outcome: 'success' as const, round: 1, ms: 12, result_chars: 30, result: '{"exit_code":0}' };
const agentEntry = makeEntry({
  status: 'needs_input',
  tools: ['read_file', 'run_command'],
  tool_calls: [call, { id: 'call_2_0', name: 'read_file', arguments: {}, outcome: 'needs_input', round: 2, ms: 0, result_chars: 0, error: 'path is required' }],
  iterations: 1,
  all_failure_rounds: 0,
  stop_reason: 'required_parameter',
  tools_unavailable: [{ name: 'fetch_url', reason: 'no network interface is up' }],
  compacted: [{ id: 'call_1_0', round: 1, kind: 'saved', chars_before: 9000, chars_after: 4000, saved_as: 'tool-results/S/T/r1-call_1_0.json' }],
  tool_definitions_sha256: 'a'.repeat(64),
  ephemeral_system: 'be terse',
});

describe('the log line of an agent turn', () => {
  it('round-trips through the codec with every agent field', () => {
    expect(parseEntry(serializeEntry(agentEntry))).toEqual(agentEntry);
  });

  it.each([
    [{ tool_calls: [{ ...call, outcome: 7 }] }, 'tool_calls.0.outcome'],
    [{ iterations: -1 }, 'iterations'],
    [{ tools: 'fs' }, 'tools'],
    [{ compacted: [{ id: 'x', kind: 'saved' }] }, 'compacted.0.chars_before'],
    [{ compacted: [{ id: 'x', round: -1, kind: 'saved', chars_before: 1, chars_after: 1 }] }, 'compacted.0.round'],
    [{ compacted: [{ id: 'x', kind: 'cut', chars_before: 1, chars_after: 1 }] }, 'compacted.0.kind'],
    [{ tool_definitions_sha256: 'abc' }, 'tool_definitions_sha256'],
    [{ round_messages: [{ round: 1 }] }, 'round_messages.0.content'],
    [{ round_messages: [{ round: 1, content: '', thinking: 3 }] }, 'round_messages.0.thinking'],
    [{ thinking: null }, 'thinking'],
  ])('rejects a wrong agent field %j, naming it', async (overrides, field) => {
    expect(await entryProblem({ ...agentEntry, ...overrides })).toContain(`field "${field}"`);
  });

  it('a plain turn has none of them and still parses', () => {
    const plain = makeEntry();
    expect(parseEntry(serializeEntry(plain))).toEqual(plain);
    expect(plain.tools).toBeUndefined();
  });

  it('agentLogFields: the contract fields, with the stop message as error for the agent\'s own endings', () => {
    const result = { status: 'max_iterations', stopReason: 'max_iterations', message: 'stopped after 2 tool rounds', text: '', thinking: '', roundMessages: [], calls: [call], iterations: 2, allFailureRounds: 1, compacted: [], modelFailure: null, firstRequest: null } as unknown as AgentResult;
    expect(agentLogFields(result, { tools: [{ name: 'run_command' } as never], unavailable: [], ephemeralSystem: null })).toEqual({
      tools: ['run_command'],
      tool_calls: [call],
      iterations: 2,
      all_failure_rounds: 1,
      stop_reason: 'max_iterations',
      tools_unavailable: [],
      compacted: [],
      ephemeral_system: null,
      error: 'stopped after 2 tool rounds',
    });
    expect(agentLogFields({ ...result, status: 'ok' }, { tools: [], unavailable: [], ephemeralSystem: null })).not.toHaveProperty('error');
    // A round's words and reasoning, when any round had them.
    const said = [{ round: 1, content: 'Let me look.', thinking: 'The file first.' }];
    expect(agentLogFields({ ...result, roundMessages: said }, { tools: [], unavailable: [], ephemeralSystem: null })).toMatchObject({ round_messages: said });
    expect(agentLogFields(result, { tools: [], unavailable: [], ephemeralSystem: null })).not.toHaveProperty('round_messages');
    // An error of the agent's own (a result it could not save) says why; a model failure is the turn's to word.
    expect(agentLogFields({ ...result, status: 'error', message: 'cannot save the tool result …' }, { tools: [], unavailable: [], ephemeralSystem: null })).toMatchObject({ error: 'cannot save the tool result …' });
    const modelFailure = { kind: 'http' as const, message: 'Ollama answered HTTP 500' };
    expect(agentLogFields({ ...result, status: 'error', modelFailure }, { tools: [], unavailable: [], ephemeralSystem: null })).not.toHaveProperty('error');
  });
});

describe("an agent turn's request_sha256", () => {
  const first = { endpoint: '/api/chat' as const, body: { model: 'argo', messages: [{ role: 'system' as const, content: 'be terse\n\nmemo' }, { role: 'user' as const, content: 'hi' }], tools: [], stream: true } };
  const base = { status: 'ok', stopReason: 'answered', message: null, text: 'hi', thinking: '', roundMessages: [], calls: [], iterations: 0, allFailureRounds: 0, compacted: [], modelFailure: null } as unknown as AgentResult;
  const setup = { tools: [], unavailable: [], ephemeralSystem: null };

  it.each<[string, AgentResult['firstRequest'], string | undefined]>([
    ['the first request sent: the hash of its body as sent', first, createHash('sha256').update(JSON.stringify(first.body)).digest('hex')],
    ['none sent (a STOP set before it): no hash, not the planned request\'s', null, undefined],
  ])('%s', (_case, firstRequest, expected) => {
    expect(agentLogFields({ ...base, firstRequest }, setup).request_sha256).toBe(expected);
  });

  it("the draft, written before the run builds its first request, leaves the planned request's hash out", () => {
    const draft = { ...makeEntry({ request_sha256: 'b'.repeat(64) }), ...agentDraftFields(setup) };
    expect(JSON.parse(serializeEntry(draft))).not.toHaveProperty('request_sha256');
  });
});

describe("an agent turn's tools as logged", () => {
  const tool = (name: string) => ({ name, description: name, parameters: { type: 'object' as const, properties: {} }, sideEffects: false, run: () => Promise.resolve({}) });
  it.each<[string, Parameters<typeof agentDraftFields>[0], string[]]>([
    ['loaded: the available tools, by name', { tools: [tool('list_files'), tool('read_file')], unavailable: [], ephemeralSystem: null }, ['list_files', 'read_file']],
    ['none loaded (STOP set before they were ready): what the names resolve to', { tools: [], unavailable: [], ephemeralSystem: null, unloadedTools: ['list_files', 'read_file'] }, ['list_files', 'read_file']],
    ['none loaded, only MCP servers asked for: none known', { tools: [], unavailable: [], ephemeralSystem: null, unloadedTools: [] }, []],
  ])('%s', (_case, setup, expected) => {
    expect(agentDraftFields(setup).tools).toEqual(expected);
  });
});

describe('argo logs filters for agent turns', () => {
  it.each([
    [['run_command'], true],
    [['read_file'], true],
    [['write_file'], false],
  ])('--tool %j', (names, expected) => {
    expect(matchesQuery(agentEntry, { ...EMPTY_QUERY, tools: new Set(names) })).toBe(expected);
  });

  it('--tool never matches a plain turn', () => {
    expect(matchesQuery(makeEntry(), { ...EMPTY_QUERY, tools: new Set(['read_file']) })).toBe(false);
  });

  it.each(['stopped', 'needs_input', 'tool_failures', 'max_iterations', 'invalid_response'])('--status %s is a valid choice', (status) => {
    const statuses = parseChoices([status], STATUS_CHOICES, '--status');
    expect(matchesQuery(makeEntry({ status: status as never }), { ...EMPTY_QUERY, statuses })).toBe(true);
  });
});
