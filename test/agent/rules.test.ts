import { describe, expect, it } from 'vitest';
import { checkCall, isCutToolCall, judgeResponse, readToolCalls } from '../../src/agent/calls.js';
import { MIN_TOOL_BUDGET } from '../../src/config/settings.js';
import { headOf } from '../../src/output/cut.js';
import { DEFAULT_RESULT_BUDGET, SUMMARY_MIN_CHARS, savedResultPath, summarizeOlder, summaryOf, truncatedResult } from '../../src/agent/compaction.js';
import type { ResultMessage } from '../../src/agent/compaction.js';
import { buildAgentRequest, toolDefinitions } from '../../src/agent/request.js';
import { renderTrajectory, toolCallingPrompt } from '../../src/agent/sharegpt.js';
import { GENERIC_FAILURE, ONE_LINE_MAX, classifyResult, classifyThrown, parameterNames, requiredParameter } from '../../src/agent/taxonomy.js';
import { cleanLine } from '../../src/output/terminal-text.js';
import { quoting } from '../../src/tools/foreign-line.js';
import { ToolError } from '../../src/tools/types.js';
import type { ParametersSchema, Tool } from '../../src/tools/types.js';
import { validateArguments } from '../../src/tools/validate.js';

const echo: Tool = {
  name: 'echo',
  description: 'echo',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  sideEffects: false,
  run: () => Promise.resolve({}),
};
const tools = new Map([[echo.name, echo]]);

describe('reading tool calls', () => {
  it.each([
    ['object arguments, no id', [{ function: { name: 'echo', arguments: { text: 'a' } } }], 2, [{ id: 'call_2_0', name: 'echo', arguments: { text: 'a' }, unreadable: null, problem: null }]],
    ['string arguments', [{ function: { name: 'echo', arguments: '{"text":"b"}' } }], 1, [{ id: 'call_1_0', name: 'echo', arguments: { text: 'b' }, unreadable: null, problem: null }]],
    ['an id kept', [{ id: 'x9', function: { name: 'echo', arguments: {} } }], 1, [{ id: 'x9', name: 'echo', arguments: {}, unreadable: null, problem: null }]],
    ['an empty id replaced', [{ id: '', function: { name: 'echo', arguments: {} } }], 3, [{ id: 'call_3_0', name: 'echo', arguments: {}, unreadable: null, problem: null }]],
    ['absent arguments are {}', [{ function: { name: 'echo' } }], 1, [{ id: 'call_1_0', name: 'echo', arguments: {}, unreadable: null, problem: null }]],
    ['bad JSON', [{ function: { name: 'echo', arguments: '{' } }], 1, [{ id: 'call_1_0', name: 'echo', arguments: null, unreadable: '{', problem: 'the arguments are not valid JSON' }]],
    ['a JSON array', [{ function: { name: 'echo', arguments: '[]' } }], 1, [{ id: 'call_1_0', name: 'echo', arguments: null, unreadable: '[]', problem: 'the arguments are not a JSON object' }]],
    ['arguments neither an object nor a string', [{ function: { name: 'echo', arguments: [1, 2] } }], 1, [{ id: 'call_1_0', name: 'echo', arguments: null, unreadable: '[1,2]', problem: 'the arguments are not a JSON object' }]],
    ['no name', [{ function: { arguments: {} } }], 1, [{ id: 'call_1_0', name: '', arguments: {}, unreadable: null, problem: 'the call names no tool' }]],
    ['not an object at all', ['junk'], 1, [{ id: 'call_1_0', name: '', arguments: {}, unreadable: null, problem: 'the call names no tool' }]],
    [
      'indexes count every call, duplicates marked (kept for the log only)',
      [{ id: 'a', function: { name: 'echo', arguments: {} } }, { id: 'a', function: { name: 'echo', arguments: { text: 'dup' } } }, { function: { name: 'echo', arguments: {} } }],
      1,
      [
        { id: 'a', name: 'echo', arguments: {}, unreadable: null, problem: null },
        { id: 'a', name: 'echo', arguments: { text: 'dup' }, unreadable: null, problem: null, duplicate: true },
        { id: 'call_1_2', name: 'echo', arguments: {}, unreadable: null, problem: null },
      ],
    ],
    [
      'a made-up id never takes one the model sent later in the response',
      [{ function: { name: 'echo', arguments: { text: 'a' } } }, { id: 'call_1_0', function: { name: 'echo', arguments: { text: 'b' } } }],
      1,
      [{ id: 'call_1_0_2', name: 'echo', arguments: { text: 'a' }, unreadable: null, problem: null }, { id: 'call_1_0', name: 'echo', arguments: { text: 'b' }, unreadable: null, problem: null }],
    ],
    [
      'nor one the model sent earlier, nor another made-up one',
      [{ id: 'call_1_1', function: { name: 'echo', arguments: {} } }, { function: { name: 'echo', arguments: {} } }, { id: 'call_1_1_2', function: { name: 'echo', arguments: {} } }],
      1,
      [{ id: 'call_1_1', name: 'echo', arguments: {}, unreadable: null, problem: null }, { id: 'call_1_1_3', name: 'echo', arguments: {}, unreadable: null, problem: null }, { id: 'call_1_1_2', name: 'echo', arguments: {}, unreadable: null, problem: null }],
    ],
  ])('%s', (_name, raw, round, expected) => {
    expect(readToolCalls(raw, round)).toEqual(expected);
  });
});

describe('tool call arguments nested too deep to walk', () => {
  const nested = (depth: number): string => `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
  const TOO_DEEP = 'the arguments nest arrays and objects more than 100 levels deep';
  it.each<[string, unknown, Partial<ReturnType<typeof readToolCalls>[number]>]>([
    // the arguments as sent → what is read of them
    ['100 levels, as an object', JSON.parse(nested(100)), { problem: null, unreadable: null }],
    ['101 levels, as an object: not kept, a note in their place', JSON.parse(nested(101)), { arguments: null, problem: TOO_DEEP, unreadable: '[arguments nested more than 100 levels deep: not kept]' }],
    ['5000 levels, as an object', JSON.parse(nested(5000)), { arguments: null, problem: TOO_DEEP, unreadable: '[arguments nested more than 100 levels deep: not kept]' }],
    ['5000 levels, as a JSON string: the string is kept', nested(5000), { arguments: null, problem: TOO_DEEP, unreadable: nested(5000) }],
  ])('%s', (_name, args, expected) => {
    const [read] = readToolCalls([{ function: { name: 'echo', arguments: args } }], 1);
    expect(read).toMatchObject(expected);
    // Whatever was read can be written out (the log line, the trace).
    expect(() => JSON.stringify(read)).not.toThrow();
  });
});

describe('a tool call the token limit cut short, as Ollama passes it on (tool tag { or [)', () => {
  it.each<[string, string, boolean]>([
    ['a call cut in its arguments', '{"name":"read_file","arguments":{"pa', true],
    ['cut after its name', '{"name":"read_file",', true],
    ['blank lines before it (Ollama sends them as words first)', '\n  {"name": "x"', true],
    ['a list of calls cut', '[{"name":"read_file","arguments":{}}, {"name":', true],
    ['only the opening brace', '{', true],
    ['whole JSON: not cut', '{"answer":42}', false],
    ['a whole list', '[1, 2]', false],
    ['whole JSON and blank lines', ' {}\n', false],
    ['words first: Ollama took it all as words', 'Here it is: {"name":', false],
    ['plain words', 'The notes say hello.', false],
    ['nothing', '', false],
  ])('%s: %s', (_name, text, cut) => {
    expect(isCutToolCall(text)).toBe(cut);
  });
});

describe('checking calls and judging a response', () => {
  const parsed = (name: string, args: Record<string, unknown> | null, problem: string | null = null) => ({ id: 'c', name, arguments: args, unreadable: null, problem });
  it.each([
    ['valid', parsed('echo', { text: 'a' }), 'ok'],
    ['unknown tool', parsed('nope', {}), 'invalid'],
    ['unreadable', parsed('echo', null, 'the arguments are not valid JSON'), 'invalid'],
    ['missing required', parsed('echo', {}), 'missing'],
    ['null for a required one', parsed('echo', { text: null }), 'missing'],
    ['wrong type', parsed('echo', { text: 3 }), 'invalid'],
  ])('%s → %s', (_name, call, kind) => {
    expect(checkCall(call, tools, validateArguments).kind).toBe(kind);
  });

  it('a missing parameter wins over invalid calls; invalid wins over valid ones; a duplicate counts for nothing', () => {
    const ok = checkCall(parsed('echo', { text: 'a' }), tools, validateArguments);
    const bad = checkCall(parsed('nope', {}), tools, validateArguments);
    const missing = checkCall(parsed('echo', {}), tools, validateArguments);
    // Not checked: an unknown tool under a repeated id makes nothing invalid.
    const duplicate = checkCall({ ...parsed('nope', {}), duplicate: true }, tools, validateArguments);
    expect(duplicate.kind).toBe('duplicate');
    expect(judgeResponse([ok, bad, missing]).kind).toBe('needs_input');
    expect(judgeResponse([ok, bad])).toMatchObject({ kind: 'invalid', reasons: ['unknown tool "nope"'] });
    expect(judgeResponse([ok]).kind).toBe('run');
    // Every verdict keeps every call, in order, for the log.
    expect(judgeResponse([ok, duplicate])).toEqual({ kind: 'run', calls: [ok], checked: [ok, duplicate] });
    expect(judgeResponse([duplicate, bad]).checked).toEqual([duplicate, bad]);
  });
});

describe('the error taxonomy', () => {
  /** The parameters of the tool the classified calls are of. */
  const PARAMETERS = ['city', 'command', 'q'];

  // The message → the tool's parameters → the parameter it names, or null (then it is the tool's own failure).
  it.each<[string, string[], string | null]>([
    ['location is required', ['location'], 'location'],
    ['Missing value: "city" is required', ['city', 'units'], 'city'],
    ['The parameter `q` is required', ['q'], 'q'],
    ['key is required for get', ['operation', 'key', 'value'], 'key'],
    ['path parameter is required', ['path'], 'path'],
    ['disk full', ['path'], null],
    ['a subscription is required', ['subscription'], 'subscription'],
    // A word that is not one of the tool's parameters is no missing parameter: the error is the tool's.
    ['a subscription is required', ['plan'], null],
    ['Authentication is required to read acme/app', ['repo'], null],
    ['location is required', [], null],
    // A sentence capitalizes the name: matched whatever its case, only against the tool's own names, spelled as the tool does.
    ['Path is required.', ['path'], 'path'],
    ['City is required', ['city'], 'city'],
    ['"PATH" is required', ['path', 'mode'], 'path'],
    ['FilePath is required', ['filepath'], 'filepath'],
    ['path is required', ['filePath'], null],
    ['Path is required', ['path', 'Path'], 'Path'],
    ['path is required', ['Path', 'path'], 'path'],
    ['Authentication is required', ['repo', 'auth'], null],
    // The first that is a parameter, past a word that is not.
    ['Authentication is required; repo is required too', ['repo'], 'repo'],
    // A name counts only where a word starts: the tail of a path, an assignment or an address is not one.
    ['the file /tmp/out is required', ['out'], null],
    ['C:\\work\\name is required', ['name'], null],
    ['the value of path=foo is required', ['foo'], null],
    ['mail@host is required', ['host'], null],
    ['an id (token is required)', ['token'], 'token'],
    // What a message quotes is a value, not its words: a file named so is no missing parameter.
    ['file "path is required.md" does not exist', ['path'], null],
    ["cannot open 'path is required'", ['path'], null],
    ['the value `q is required` was refused', ['q'], null],
    ['no match for "x": q is required', ['q'], 'q'],
    // An apostrophe opens no quote.
    ["can't search: q is required", ['q'], 'q'],
    ["the query's text: 'q is required'", ['q'], null],
  ])('requiredParameter(%j, %j) = %j', (message, parameters, parameter) => {
    expect(requiredParameter(message, parameters)).toBe(parameter);
  });

  it.each<[string, ParametersSchema, string[]]>([
    ['its properties, in order', { type: 'object', properties: { repo: {}, state: {} } }, ['repo', 'state']],
    ['none', { type: 'object', properties: {} }, []],
    // An MCP server may send an object schema without properties.
    ['no properties at all', { type: 'object' } as unknown as ParametersSchema, []],
  ])('parameterNames: %s', (_name, schema, names) => {
    expect(parameterNames(schema)).toEqual(names);
  });

  it.each([
    ['a plain result', { data: 1 }, { kind: 'success', result: { data: 1 } }],
    ['error: null is success', { error: null, data: 1 }, { kind: 'success', result: { error: null, data: 1 } }],
    ['error: false is success', { error: false, data: 1 }, { kind: 'success', result: { error: false, data: 1 } }],
    ['a required parameter', { error: 'city is required' }, { kind: 'needs_input', parameter: 'city', message: 'city is required' }],
    ['a required parameter, capitalized as a sentence', { error: 'City is required.' }, { kind: 'needs_input', parameter: 'city', message: 'City is required.' }],
    ['a retryable failure', { error: 'busy' }, { kind: 'failure', message: 'busy', retryable: true, detail: null }],
    ['a permanent failure', { error: 'gone', retryable: false }, { kind: 'failure', message: 'gone', retryable: false, detail: null }],
    ['an error that is not text', { error: { code: 5 } }, { kind: 'failure', message: GENERIC_FAILURE, retryable: true, detail: null }],
    ['control characters removed', { error: 'bad\u0007\nthing' }, { kind: 'failure', message: 'bad thing', retryable: true, detail: null }],
    ['whole escape sequences removed', { error: 'bad \u001b[31mred \u001b[0m line2\u001b]0;title\u0007!' }, { kind: 'failure', message: 'bad red line2!', retryable: true, detail: null }],
    ['a secret in the message masked', { error: 'cannot connect to postgres://app:hunter2@db/prod' }, { kind: 'failure', message: 'cannot connect to postgres://app:***@db/prod', retryable: true, detail: null }],
    ['a required parameter, its message one masked line', { error: 'city is required\nAPI_KEY=abc123 was set' }, { kind: 'needs_input', parameter: 'city', message: 'city is required API_KEY=*** was set' }],
    ['bounded', { error: 'x'.repeat(400) }, { kind: 'failure', message: `${'x'.repeat(ONE_LINE_MAX)}…`, retryable: true, detail: null }],
    ['"is required" naming no parameter of the tool: its own failure, its message shown', { error: 'Authentication is required to read acme/app' }, { kind: 'failure', message: 'Authentication is required to read acme/app', retryable: true, detail: null }],
    ['the same, permanent', { error: 'a subscription is required', retryable: false }, { kind: 'failure', message: 'a subscription is required', retryable: false, detail: null }],
    ['"is required" only inside a quoted value', { error: 'cannot open "city is required.txt"' }, { kind: 'failure', message: 'cannot open "city is required.txt"', retryable: true, detail: null }],
  ])('classifyResult: %s', (_name, result, expected) => {
    expect(classifyResult(result, PARAMETERS)).toEqual(expected);
  });

  it.each([
    ['ToolError', new ToolError('no such file'), { kind: 'failure', message: 'no such file', retryable: true, detail: null }],
    ['ToolError with colours', new ToolError('boom \u001b[31mred\u001b[0m'), { kind: 'failure', message: 'boom red', retryable: true, detail: null }],
    ['permanent ToolError', new ToolError('refused', false), { kind: 'failure', message: 'refused', retryable: false, detail: null }],
    ['ToolError naming a required parameter', new ToolError('command is required for start'), { kind: 'needs_input', parameter: 'command', message: 'command is required for start' }],
    ['ToolError with a token', new ToolError('auth failed for ghp_abcdefghijklmnopqrstuvwxyz0123456789'), { kind: 'failure', message: 'auth failed for ***', retryable: true, detail: null }],
    // Built from text masked as it was read (an MCP server's stderr): not masked again, which would take its closing bracket.
    ['ToolError masked before it was wrapped', new ToolError('MCP server "gh" exited (exit code 1; it said: GITHUB_TOKEN=***)', false, { masked: true }), { kind: 'failure', message: 'MCP server "gh" exited (exit code 1; it said: GITHUB_TOKEN=***)', retryable: false, detail: null }],
    ['ToolError masked before it was wrapped, still one clean line', new ToolError('exited (it said:\n\u001b[31mno\u001b[0m)', false, { masked: true }), { kind: 'failure', message: 'exited (it said: no)', retryable: false, detail: null }],
    ['ToolError not marked masked: masked whole', new ToolError('exited (it said: GITHUB_TOKEN=hunter2 refused)'), { kind: 'failure', message: 'exited (it said: GITHUB_TOKEN=*** refused)', retryable: true, detail: null }],
    ['an exception with a secret keeps its detail masked', new Error('connect to redis://:s3cret@cache failed'), { kind: 'failure', message: GENERIC_FAILURE, retryable: true, detail: 'Error: connect to redis://:***@cache failed' }],
    ['any other exception', new RangeError('boom at /x.js:1'), { kind: 'failure', message: GENERIC_FAILURE, retryable: true, detail: 'RangeError: boom at /x.js:1' }],
    ['a thrown string', 'oops', { kind: 'failure', message: GENERIC_FAILURE, retryable: true, detail: 'oops' }],
    ['ToolError naming no parameter of the tool', new ToolError('Authentication is required to read acme/app'), { kind: 'failure', message: 'Authentication is required to read acme/app', retryable: true, detail: null }],
    ['an exception saying a parameter is required: still unexpected', new Error('city is required'), { kind: 'failure', message: GENERIC_FAILURE, retryable: true, detail: 'Error: city is required' }],
    // Built by `quoting`: only Argo's words are read, whatever quotes a value holds.
    ['ToolError quoting a value that says so', new ToolError(quoting`file "${'city is required.md'}" does not exist`), { kind: 'failure', message: 'file "city is required.md" does not exist', retryable: true, detail: null }],
    ['ToolError quoting a value with a quote in it', new ToolError(quoting`file "${'a" city is required.md'}" does not exist`), { kind: 'failure', message: 'file "a" city is required.md" does not exist', retryable: true, detail: null }],
    ["ToolError whose own words say so, beside a value", new ToolError(quoting`city is required for ${'q is required'}`), { kind: 'needs_input', parameter: 'city', message: 'city is required for q is required' }],
    ['ToolError with plain text quoting a value (an MCP server)', new ToolError('no file "city is required.md"'), { kind: 'failure', message: 'no file "city is required.md"', retryable: true, detail: null }],
  ])('classifyThrown: %s', (_name, error, expected) => {
    expect(classifyThrown(error, PARAMETERS)).toEqual(expected);
  });

  it.each<[string, string, string]>([
    ['bounded', 'a'.repeat(400), `${'a'.repeat(ONE_LINE_MAX)}…`],
    ['whole escape sequences removed, then controls', 'bad \u001b[31mred\u001b[0m\nline2\u0007', 'bad red line2'],
    ['an OSC sequence', 'x\u001b]0;title\u0007y', 'xy'],
    ['bidi controls', 'txt\u202eexe', 'txt exe'],
  ])('a failure line is cleaned: %s', (_name, text, expected) => {
    expect(cleanLine(text, ONE_LINE_MAX)).toBe(expected);
  });
});

describe('microcompaction rules', () => {
  it.each([
    [1, 'call_1_0', /^tool-results\/S\/T\/r1-call_1_0\.json$/],
    [3, 'call_0', /^tool-results\/S\/T\/r3-call_0\.json$/],
    [1, '../../config', /^tool-results\/S\/T\/r1-______config-[0-9a-f]{12}\.json$/],
    [1, 'a/b', /^tool-results\/S\/T\/r1-a_b-[0-9a-f]{12}\.json$/],
    [1, 'a.b', /^tool-results\/S\/T\/r1-a_b-[0-9a-f]{12}\.json$/],
    [1, '..', /^tool-results\/S\/T\/r1-__-[0-9a-f]{12}\.json$/],
    [1, '', /^tool-results\/S\/T\/r1--[0-9a-f]{12}\.json$/],
  ])('the saved path for round %i, call id %j stays a plain name in tool-results/<session>/<turn>/', (round, id, path) => {
    expect(savedResultPath('S', 'T', round, id)).toMatch(path);
    expect(savedResultPath('S', 'T', round, id)).toBe(savedResultPath('S', 'T', round, id));
  });

  it.each<[string, [string, string, number, string], [string, string, number, string]]>([
    ['ids differing only in unsafe characters', ['S', 'T', 1, 'a/b'], ['S', 'T', 1, 'a.b']],
    ['the same id in two turns', ['S', 'T1', 1, 'call_1_0'], ['S', 'T2', 1, 'call_1_0']],
    ['the same id in two rounds of a turn', ['S', 'T', 1, 'call_0'], ['S', 'T', 2, 'call_0']],
  ])('%s are saved apart', (_name, one, two) => {
    expect(savedResultPath(...one)).not.toBe(savedResultPath(...two));
  });

  it('the default budget', () => {
    expect(DEFAULT_RESULT_BUDGET).toBe(4000);
  });

  it.each([
    [300, true, 'saved whole for the user'],
    [1000, true, 'saved whole for the user'],
    [4000, false, 'the rest was not kept'],
  ])('a truncated result is JSON within a budget of %i, naming the call and full length (kept: %s)', (budget, kept, where) => {
    const content = JSON.stringify({ text: '"quoted"\n'.repeat(2000) });
    const out = truncatedResult(content, budget, 'call_2_1', kept);
    expect(out.length).toBeLessThanOrEqual(budget);
    const parsed = JSON.parse(out) as { truncated: boolean; note: string; head: string };
    expect(parsed.note).toBe(`truncated: the first part of the ${content.length} characters of call call_2_1 (${where}); for more, call the tool again for a narrower part`);
    expect(content.startsWith(parsed.head)).toBe(true);
  });

  it('the note names nothing of the data home: the same result and call give the same text whatever the session or turn', () => {
    const content = 'z'.repeat(5000);
    expect(truncatedResult(content, 1000, 'call_1_0', true)).toBe(truncatedResult(content, 1000, 'call_1_0', true));
    expect(truncatedResult(content, 1000, 'call_1_0', true)).not.toContain('tool-results');
  });

  it('a call id past 64 characters is cut in the note, so it cannot eat the budget', () => {
    const note = (JSON.parse(truncatedResult('z'.repeat(5000), 1000, 'i'.repeat(500), true)) as { note: string }).note;
    expect(note).toContain(`call ${'i'.repeat(64)}… (saved`);
  });

  it.each([
    ['a head ending on an emoji keeps it whole or drops it', 'a😀b'.repeat(3000)],
    ['emoji only', '😀'.repeat(3000)],
  ])('truncation never leaves half a surrogate pair: %s', (_name, text) => {
    for (let budget = 300; budget < 340; budget++) {
      const head = (JSON.parse(truncatedResult(text, budget, 'c', true)) as { head: string }).head;
      expect(head).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      expect(text.startsWith(head)).toBe(true);
    }
  });

  it('at the smallest budget config allows, a result saved under real ids still keeps a head worth reading', () => {
    const content = 'x'.repeat(100_000);
    const out = truncatedResult(content, MIN_TOOL_BUDGET, 'call_12_3', true);
    expect(out.length).toBeLessThanOrEqual(MIN_TOOL_BUDGET);
    expect((JSON.parse(out) as { head: string }).head.length).toBeGreaterThanOrEqual(250);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['the full length and head', { path: 'x' }, 'y'.repeat(11_946), `read_file({"path":"x"}) returned 11946 characters: ${'y'.repeat(100)}…`],
    ['whitespace flattened', { path: 'x' }, 'a\n\n  b', 'read_file({"path":"x"}) returned 6 characters: a b'],
    ['an emoji at the cut is kept whole or left out', { path: 'x' }, `${'y'.repeat(99)}😀tail`, `read_file({"path":"x"}) returned 105 characters: ${'y'.repeat(99)}…`],
    ['long arguments cut on a code point', { qq: '😀'.repeat(60) }, 'r', `read_file({"qq":"${'😀'.repeat(36)}…) returned 1 characters: r`],
    ['exactly the head, then only whitespace', { path: 'x' }, `${'y'.repeat(100)}${' '.repeat(5000)}`, `read_file({"path":"x"}) returned 5100 characters: ${'y'.repeat(100)}`],
    ['one past the head, then only whitespace', { path: 'x' }, `${'y'.repeat(101)}${'\n'.repeat(5000)}`, `read_file({"path":"x"}) returned 5101 characters: ${'y'.repeat(100)}…`],
    ['a whitespace run longer than the head before the words', { path: 'x' }, `${' '.repeat(10_000)}a b`, 'read_file({"path":"x"}) returned 10003 characters: a b'],
    ['words spread over a long run of blank lines', { path: 'x' }, `a${'\n'.repeat(3000)}b${' '.repeat(3000)}c`, 'read_file({"path":"x"}) returned 6003 characters: a b c'],
  ])('summaryOf: %s', (_name, args, full, summary) => {
    expect(JSON.parse(summaryOf('read_file', args, full))).toEqual({ summary });
  });

  it('summaryOf flattens only a head, and says what flattening the whole result would', () => {
    const whole = (full: string): string => {
      const line = full.replace(/\s+/g, ' ').trim();
      return line.length > 100 ? `${headOf(line, 100)}…` : line;
    };
    const pieces = ['a', 'bb', ' ', '\n', '\t\t', '😀', 'x'.repeat(37), ' '.repeat(41)];
    let seed = 7;
    const next = (): number => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let i = 0; i < 2000; i++) {
      const full = Array.from({ length: next() % 60 }, () => pieces[next() % pieces.length]).join('');
      const summary = (JSON.parse(summaryOf('t', {}, full)) as { summary: string }).summary;
      expect(summary).toBe(`t({}) returned ${full.length} characters: ${whole(full)}`);
    }
  });

  const result = (callId: string, content: string, round: number, full = content): ResultMessage => ({
    callId,
    name: 'read_file',
    content,
    fullChars: full.length,
    summary: summaryOf('read_file', { path: callId }, full),
    round,
    summarized: false,
  });

  it('summaries: one line, older rounds only, long results only, once; the record gives the round and full length', () => {
    const results = [result('a', 'y'.repeat(500), 1), result('b', 'short', 1), result('c', 'y'.repeat(500), 2), result('d', 'y'.repeat(400), 1, 'y'.repeat(11_946))];
    const records = summarizeOlder(results, 2);
    expect(records).toEqual([
      { id: 'a', round: 1, kind: 'summarized', chars_before: 500, chars_after: results[0]?.content.length },
      { id: 'd', round: 1, kind: 'summarized', chars_before: 11_946, chars_after: results[3]?.content.length },
    ]);
    expect(results[0]?.content).toBe(summaryOf('read_file', { path: 'a' }, 'y'.repeat(500)));
    expect(results[0]?.content).not.toContain('\n');
    expect(results[3]?.content).toContain('returned 11946 characters');
    expect(results[1]?.content).toBe('short');
    expect(results[2]?.content).toBe('y'.repeat(500));
    expect(summarizeOlder(results, 2)).toEqual([]);
  });

  it.each<[number, boolean]>([
    // length of an older round's result, summarized
    [SUMMARY_MIN_CHARS - 1, false],
    [SUMMARY_MIN_CHARS, false],
    [SUMMARY_MIN_CHARS + 1, true],
  ])('an older result of %i characters is summarized: %s (a summary\'s size or less is left alone)', (length, summarized) => {
    const results = [result('a', 'y'.repeat(length), 1)];
    // The summary would be shorter: only the length rule decides.
    expect(results[0]?.summary.length).toBeLessThan(length);
    const records = summarizeOlder(results, 2);
    expect(records.map((record) => record.chars_before)).toEqual(summarized ? [length] : []);
    expect(results[0]?.content).toBe(summarized ? results[0]?.summary : 'y'.repeat(length));
  });

  it('a result whose summary would not be shorter is left as it is', () => {
    // Past the summary size, but quotes double in the summary's JSON: the "summary" would be the longer text.
    const content = '"'.repeat(SUMMARY_MIN_CHARS + 1);
    const args = { path: '"'.repeat(60) };
    expect(summaryOf('read_file', args, content).length).toBeGreaterThanOrEqual(content.length);
    const results: ResultMessage[] = [{ callId: 'q', name: 'read_file', content, fullChars: content.length, summary: summaryOf('read_file', args, content), round: 1, summarized: false }];
    const before = structuredClone(results);
    expect(summarizeOlder(results, 2)).toEqual([]);
    expect(results).toEqual(before);
  });
});

describe('the agent request', () => {
  const base = { model: 'argo', messages: [{ role: 'user' as const, content: 'hi' }], stream: true, options: { temperature: 0 } };
  it('is byte-identical for equal inputs, tools in the given order, key order fixed', () => {
    const one = JSON.stringify(buildAgentRequest({ base, tools: [echo], ephemeralSystem: null, memo: { b: '2', a: '1' }, added: [] }));
    const two = JSON.stringify(buildAgentRequest({ base, tools: [echo], ephemeralSystem: null, memo: { a: '1', b: '2' }, added: [] }));
    expect(one).toBe(two);
    expect(one).toBe(
      '{"endpoint":"/api/chat","body":{"model":"argo","messages":[{"role":"system","content":"Memo (notes kept with the memo tool):\\n- a: \\"1\\"\\n- b: \\"2\\""},{"role":"user","content":"hi"}],' +
        '"tools":[{"type":"function","function":{"name":"echo","description":"echo","parameters":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}}],"stream":true,"options":{"temperature":0}}}',
    );
  });

  it("carries the turn's think setting (a thinking model reasons in every round as in the first)", () => {
    for (const think of [false, true, 'high'] as const) {
      expect(buildAgentRequest({ base: { ...base, think }, tools: [], ephemeralSystem: null, memo: {}, added: [] }).body.think).toBe(think);
    }
    expect('think' in buildAgentRequest({ base, tools: [], ephemeralSystem: null, memo: {}, added: [] }).body).toBe(false);
  });

  it('has no system message when there is nothing to say', () => {
    expect(buildAgentRequest({ base, tools: [], ephemeralSystem: null, memo: {}, added: [] }).body.messages).toEqual([{ role: 'user', content: 'hi' }]);
  });
});

describe('ShareGPT trajectories', () => {
  const turn = {
    id: 't1',
    session: 'default',
    model: 'argo',
    timestamp: '2026-01-01T00:00:00.000+00:00',
    user_prompt: 'what is in a.txt?',
    model_response: 'It says hello.',
    tool_calls: [
      { id: 'call_1_0', name: 'echo', arguments: { text: 'a' }, outcome: 'success', round: 1, result: '{"ok":1}' },
      { id: 'call_1_1', name: 'echo', arguments: { text: 'b' }, outcome: 'failure', round: 1 },
      { id: 'call_1_0', name: 'echo', arguments: { text: 'a' }, outcome: 'success', round: 1, result: '{"ok":1}' },
      { id: 'call_2_0', name: 'echo', arguments: { text: 'c' }, outcome: 'success', round: 2, result: 'not json' },
    ],
  };
  it('renders system, human, gpt/tool per round (successes only, each id once a round) and the final gpt', () => {
    const defs = toolDefinitions([echo]);
    expect(renderTrajectory(turn, defs)).toEqual({
      id: 't1',
      session: 'default',
      model: 'argo',
      timestamp: '2026-01-01T00:00:00.000+00:00',
      conversations: [
        { from: 'system', value: toolCallingPrompt(defs) },
        { from: 'human', value: 'what is in a.txt?' },
        { from: 'gpt', value: '<tool_call>\n{"name":"echo","arguments":{"text":"a"}}\n</tool_call>' },
        { from: 'tool', value: '<tool_response>\n{"tool_call_id":"call_1_0","name":"echo","content":{"ok":1}}\n</tool_response>' },
        { from: 'gpt', value: '<tool_call>\n{"name":"echo","arguments":{"text":"c"}}\n</tool_call>' },
        { from: 'tool', value: '<tool_response>\n{"tool_call_id":"call_2_0","name":"echo","content":"not json"}\n</tool_response>' },
        { from: 'gpt', value: 'It says hello.' },
      ],
    });
  });

  const success = (id: string, round: number, text: string) => ({ id, name: 'echo', arguments: { text }, outcome: 'success', round, result: `"${text}"` });
  it.each<[string, ReturnType<typeof success>[], string[]]>([
    ['the same id in every round: each round kept', [success('call_0', 1, 'a'), success('call_0', 2, 'b'), success('call_0', 3, 'c')], ['a', 'b', 'c']],
    ['a true repeat in a round: dropped', [success('call_0', 1, 'a'), success('call_0', 1, 'a'), success('call_1', 1, 'b')], ['a', 'b']],
    ['no round (an older line): one round', [{ ...success('x', 1, 'a'), round: undefined as unknown as number }, success('y', 1, 'b')], ['a', 'b']],
  ])('deduplication: %s', (_name, calls, texts) => {
    const rendered = renderTrajectory({ ...turn, tool_calls: calls }, []).conversations;
    const sent = rendered.filter((m) => m.from === 'gpt').slice(0, -1).flatMap((m) => [...m.value.matchAll(/"text":"(\w)"/g)].map((match) => match[1]));
    expect(sent).toEqual(texts);
    expect(rendered.filter((m) => m.from === 'tool').flatMap((m) => [...m.value.matchAll(/"content":"(\w)"/g)].map((match) => match[1]))).toEqual(texts);
  });

  const call = (round: number) => `<tool_call>\n{"name":"echo","arguments":{"text":"${round}"}}\n</tool_call>`;
  const reasoned = {
    ...turn,
    thinking: 'Both files read.',
    tool_calls: [success('call_1_0', 1, '1'), success('call_2_0', 2, '2'), { ...success('call_3_0', 3, '3'), outcome: 'failure' }],
    model_response: 'Done.',
  };
  it.each<[string, Partial<typeof reasoned> & { round_messages?: { round: number; content: string; thinking?: string }[] }, { thinking?: boolean }, string[]]>([
    ['no reasoning logged (an older line, a model that does not think)', { thinking: '' }, {}, [call(1), call(2), 'Done.']],
    [
      'reasoning and words of each round, before its calls; the final answer after its reasoning',
      { round_messages: [{ round: 1, content: 'Let me look.', thinking: 'Read a first.' }, { round: 2, content: '', thinking: 'Now b.' }] },
      {},
      [`<think>Read a first.</think>\nLet me look.\n${call(1)}`, `<think>Now b.</think>\n${call(2)}`, '<think>Both files read.</think>\nDone.'],
    ],
    ['words without reasoning', { thinking: '', round_messages: [{ round: 2, content: 'And b.' }] }, {}, [call(1), `And b.\n${call(2)}`, 'Done.']],
    ['a round whose calls all failed is not in it, nor its words', { round_messages: [{ round: 3, content: 'Try c.', thinking: 'c?' }] }, {}, [call(1), call(2), '<think>Both files read.</think>\nDone.']],
    ['--no-thinking: reasoning left out, words kept', { round_messages: [{ round: 1, content: 'Let me look.', thinking: 'Read a first.' }] }, { thinking: false }, [`Let me look.\n${call(1)}`, call(2), 'Done.']],
  ])('reasoning: %s', (_name, change, options, gpt) => {
    const rendered = renderTrajectory({ ...reasoned, ...change }, [], options).conversations;
    expect(rendered.filter((m) => m.from === 'gpt').map((m) => m.value)).toEqual(gpt);
  });

  // The turn's own system prompt (--system) is what the model was told first: it opens the system message.
  it.each<[string, string | undefined, string]>([
    ['none logged', undefined, ''],
    ['an empty one', '', ''],
    ['blanks only', ' \n', ''],
    ['--system "Answer in French."', 'Answer in French.', 'Answer in French.\n\n'],
    ['several lines, kept as written', 'Be brief.\nCite files.', 'Be brief.\nCite files.\n\n'],
  ])("system message: the turn's own system prompt, %s", (_name, system, opening) => {
    const defs = toolDefinitions([echo]);
    expect(renderTrajectory({ ...turn, system }, defs).conversations[0]).toEqual({ from: 'system', value: `${opening}${toolCallingPrompt(defs)}` });
  });

  it('the system prompt lists the tools inside <tools>…</tools>', () => {
    expect(toolCallingPrompt(toolDefinitions([echo]))).toContain('<tools>[{"type":"function","function":{"name":"echo"');
  });

  it('a turn without tools is system, human, gpt', () => {
    expect(renderTrajectory({ ...turn, tool_calls: [] }, []).conversations.map((m) => m.from)).toEqual(['system', 'human', 'gpt']);
  });
});
