import { describe, expect, it } from 'vitest';
import { runningLabel, traceLine } from '../../src/cli/agent.js';
import type { AgentEvent } from '../../src/agent/loop.js';

type Status = Extract<AgentEvent, { type: 'tool_status' }>;
const status = (name: string, args: Status['args'], outcome: Status['status'], ms?: number): Status => ({ type: 'tool_status', id: 'call_1_0', name, status: outcome, args, ...(ms !== undefined ? { ms } : {}) });

describe("traceLine: an agent call's line when stderr is not a terminal", () => {
  it.each<[string, Status, string]>([
    ['a call that ran', status('read_file', { path: 'notes.txt', limit: 1 }, 'success', 3), 'argo: tool read_file {"path":"notes.txt","limit":1}: success (3 ms)\n'],
    ['a call that failed', status('run_command', { command: 'make' }, 'failure', 0), 'argo: tool run_command {"command":"make"}: failure (0 ms)\n'],
    ['a parameter missing', status('read_file', {}, 'needs_input', 0), 'argo: tool read_file {}: needs_input (0 ms)\n'],
    ['arguments that could not be read: the raw text, quoted', status('read_file', '{"path": "a\nb"', 'needs_input', 0), 'argo: tool read_file "{\\"path\\": \\"a\\nb\\"": needs_input (0 ms)\n'],
    ['no arguments at all', status('memo', null, 'success'), 'argo: tool memo: success (0 ms)\n'],
    // A CI log is read by others: what looks like a secret is masked, the rest of the call kept.
    ['a token in a command', status('run_command', { command: 'GITHUB_TOKEN=ghp_abcdef1234567890 true' }, 'success', 4), 'argo: tool run_command {"command":"GITHUB_TOKEN=*** true"}: success (4 ms)\n'],
    ['a secret-named argument', status('mcp_login', { user: 'me', password: 'hunter2' }, 'success', 1), 'argo: tool mcp_login {"user":"me","password":"***"}: success (1 ms)\n'],
    ['a bearer token in raw arguments', status('fetch', '{"h": "Bearer abcdef123456"', 'needs_input', 0), 'argo: tool fetch "{\\"h\\": \\"Bearer ***\\"": needs_input (0 ms)\n'],
    // JSON escapes C0; what it leaves raw (C1, bidi, DEL) is shown, not obeyed.
    ['controls in the arguments', status('read_file', { path: '\u001b]52;c;aGk=\u0007\u202etxt.exe\u009b\u007f' }, 'success', 1), 'argo: tool read_file {"path":"\\u001b]52;c;aGk=\\u0007\\u202etxt.exe\\x9b^?"}: success (1 ms)\n'],
    ["an MCP server's name with a line break and an escape: one row", status('evil\n\u001b[2Jtool', {}, 'success', 1), 'argo: tool evil ^[[2Jtool {}: success (1 ms)\n'],
  ])('%s', (_case, event, line) => {
    expect(traceLine(event)).toBe(line);
  });

  it('long arguments are cut, never through a character', () => {
    // The cut falls between the two halves of an emoji: the whole emoji goes.
    const line = traceLine(status('list_files', { pattern: `a${'😀'.repeat(100)}` }, 'success', 2));
    expect(line).toMatch(/^argo: tool list_files \{"pattern":"a(😀){53}…: success \(2 ms\)\n$/u);
    expect(line.length).toBeLessThan(200);
    expect(line).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

describe('runningLabel: the spinner\'s words while calls run', () => {
  it.each<[string[], string]>([
    [['run_command'], 'running run_command…'],
    [['read_file', 'run_command'], 'running read_file and run_command…'],
    [['read_file', 'read_file'], 'running read_file…'],
    [['read_file', 'grep', 'run_command'], 'running read_file, grep and 1 more…'],
    [['a', 'b', 'c', 'd', 'a'], 'running a, b and 2 more…'],
    [['x'.repeat(100)], `running ${'x'.repeat(64)}……`],
  ])('%j → %j', (names, label) => {
    expect(runningLabel(names)).toBe(label);
  });
});
