// argo --tools end to end: the built bin/argo against the Ollama stand-in scripting tool calls,
// real files in a temporary tree, a real shell, a real MCP server.
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, rmdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROLS } from '../../src/output/terminal-text.js';
import { alive } from '../support/alive.js';
import { defined } from '../support/defined.js';
import type { FakeToolCall, RequestBody } from '../support/fake-ollama.js';
import { scriptedOllamaPerFile } from '../support/fake-ollama-hooks.js';
import type { ScriptedRound } from '../support/fake-ollama-hooks.js';
import { TEST_MCP_SERVER } from '../support/mcp.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { waitFor } from '../support/wait.js';

const { ollama, play } = await scriptedOllamaPerFile();

const call = (name: string, args: Record<string, unknown> | string, id?: string): FakeToolCall => ({
  ...(id !== undefined ? { id } : {}),
  // A string is sent as a JSON string value, as some models do.
  function: { name, arguments: args },
});

function chatBodies(): RequestBody[] {
  return ollama.requests.filter((request) => request.path === '/api/chat').map((request) => JSON.parse(request.body) as RequestBody);
}

interface Message {
  role: string;
  content: string;
  thinking?: string;
  tool_calls?: { id?: string; function: { name: string; arguments: unknown } }[];
  tool_name?: string;
  tool_call_id?: string;
}
const messagesOf = (body: RequestBody | undefined): Message[] => (body?.messages ?? []) as Message[];

/** Runs `body` against an Ollama before 0.12.10, whose calls come without ids: Argo numbers them `call_<round>_<index>`. */
async function withoutCallIds<T>(body: () => Promise<T>): Promise<T> {
  ollama.options.version = '0.12.9';
  try {
    return await body();
  } finally {
    delete ollama.options.version;
  }
}

/** Ollama's own call ids (0.12.10+): `call_` and 8 random letters or digits. */
const OLLAMA_ID = /^call_[a-z0-9]{8}$/;

const hasGit = spawnSync('git', ['--version']).status === 0;
const hasSetsid = spawnSync('setsid', ['--version']).status === 0;

function tree(): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-agent-root-')));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'notes.txt'), 'first line\nsecond line\n');
  writeFileSync(join(root, 'src', 'main.ts'), 'export const main = 1;\n');
  return root;
}

function argo(args: string[], home: string, extra: Parameters<typeof runArgo>[1] extends infer O ? Partial<O> : never = {}) {
  return runArgo(args, { home, host: ollama.url, ...extra });
}

describe('argo --tools: file tools on a real tree', () => {
  it("a thinking model: --think goes with every round, and each round's reasoning goes back with its calls", async () => {
    const home = tempHome();
    const root = tree();
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools', 'thinking'] }];
    ollama.options.thinking = 'The notes file should say.';
    try {
      play.rounds = [{ calls: [call('read_file', { path: 'notes.txt', limit: 1 })] }, { reply: 'It says "first line".' }];
      const result = await argo(['-T', 'fs', '--root', root, '--think', 'high', 'what do the notes say?'], home);
      expect(result).toMatchObject({ code: 0, stdout: 'It says "first line".\n' });
      const [first, second] = chatBodies();
      expect([first?.think, second?.think]).toEqual(['high', 'high']);
      expect(messagesOf(second).slice(messagesOf(first).length)[0]).toEqual({
        role: 'assistant',
        content: '',
        thinking: 'The notes file should say.',
        tool_calls: [{ id: expect.stringMatching(OLLAMA_ID) as unknown, function: { name: 'read_file', arguments: { path: 'notes.txt', limit: 1 } } }],
      });
      // Logged per round and for the answer; exported as <think>…</think>, or left out when asked.
      expect(logLines(home)[0]).toMatchObject({ thinking: 'The notes file should say.', round_messages: [{ round: 1, content: '', thinking: 'The notes file should say.' }] });
      const exported = await argo(['export', '--format', 'sharegpt'], home);
      const gpt = (JSON.parse(exported.stdout) as { conversations: { from: string; value: string }[] }).conversations.filter((m) => m.from === 'gpt').map((m) => m.value);
      expect(gpt).toEqual([
        '<think>The notes file should say.</think>\n<tool_call>\n{"name":"read_file","arguments":{"path":"notes.txt","limit":1}}\n</tool_call>',
        '<think>The notes file should say.</think>\nIt says "first line".',
      ]);
      const plain = await argo(['export', '--format', 'sharegpt', '--no-thinking'], home);
      expect(plain.stdout).not.toContain('<think>');
    } finally {
      ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
      ollama.options.thinking = undefined;
    }
  });

  it('a gpt-oss model (harmony): its call comes in the done:true line with the end of its words, and it reasons though --think off asked it not to; the run goes on, its reasoning logged', async () => {
    const home = tempHome();
    const root = tree();
    ollama.options.models = [{ name: 'argo:latest', family: 'gptoss', capabilities: ['completion', 'tools', 'thinking'] }];
    ollama.options.thinking = 'The notes file should say.';
    ollama.options.textInDone = true;
    try {
      play.rounds = [{ reply: 'Reading the notes.', calls: [call('read_file', { path: 'notes.txt', limit: 1 })] }, { reply: 'It says "first line".' }];
      const result = await argo(['-T', 'fs', '--root', root, '--think', 'off', 'what do the notes say?'], home);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Reading the notes\.\s+It says "first line"\.\n$/);
      const [first, second] = chatBodies();
      expect(first?.think).toBe(false);
      const sent = messagesOf(second).slice(messagesOf(first).length);
      expect(sent[0]).toEqual({
        role: 'assistant',
        content: 'Reading the notes.',
        thinking: 'The notes file should say.',
        tool_calls: [{ id: expect.stringMatching(OLLAMA_ID) as unknown, function: { name: 'read_file', arguments: { path: 'notes.txt', limit: 1 } } }],
      });
      expect(sent[1]).toMatchObject({ role: 'tool', tool_name: 'read_file', tool_call_id: sent[0]?.tool_calls?.[0]?.id });
      expect(logLines(home)[0]).toMatchObject({
        status: 'ok',
        model_response: 'It says "first line".',
        thinking: 'The notes file should say.',
        round_messages: [{ round: 1, content: 'Reading the notes.', thinking: 'The notes file should say.' }],
      });
    } finally {
      ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
      ollama.options.thinking = undefined;
      delete ollama.options.textInDone;
    }
  });

  it("the trace shows a memo's key, and still masks a secret in a value by its shape", async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('memo', { operation: 'set', key: 'lang', value: 'GITHUB_TOKEN=ghp_abcdef1234567890' })] }, { reply: 'Noted.' }];
    const result = await argo(['-T', 'memo', 'remember it'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'Noted.\n' });
    expect(result.stderr.replace(/\(\d+ ms\)/g, '(N ms)')).toBe('argo: tool memo {"operation":"set","key":"lang","value":"GITHUB_TOKEN=***"}: success (N ms)\n');
  });

  it('runs a round of parallel calls, feeds back the results, answers, logs and exports the trajectory', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('read_file', '{"path":"notes.txt","limit":1}'), call('list_files', { pattern: '**/*.ts' })] }, { reply: 'The notes begin with "first line".' }];
    const result = await withoutCallIds(() => argo(['-T', 'fs', '--root', root, 'what do the notes say?'], home));
    expect(result.code).toBe(0);
    // Not a terminal (a cron or CI log): a line per call, as each ends.
    expect(result.stderr.replace(/\(\d+ ms\)/g, '(N ms)').split('\n').sort()).toEqual(['', 'argo: tool list_files {"pattern":"**/*.ts"}: success (N ms)', 'argo: tool read_file {"path":"notes.txt","limit":1}: success (N ms)']);
    expect(result.stdout).toBe('The notes begin with "first line".\n');

    const [first, second] = chatBodies();
    expect((first?.tools as { function: { name: string } }[]).map((tool) => tool.function.name)).toEqual(['list_files', 'read_file', 'search_files']);
    const added = messagesOf(second).slice(messagesOf(first).length);
    // Sent without ids and with string arguments: numbered call_<round>_<index>, sent back as objects.
    expect(added[0]).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'call_1_0', function: { name: 'read_file', arguments: { path: 'notes.txt', limit: 1 } } },
        { id: 'call_1_1', function: { name: 'list_files', arguments: { pattern: '**/*.ts' } } },
      ],
    });
    expect(added.slice(1)).toEqual([
      { role: 'tool', tool_name: 'read_file', tool_call_id: 'call_1_0', content: JSON.stringify({ path: 'notes.txt', from_line: 1, to_line: 1, content: 'first line' }) },
      { role: 'tool', tool_name: 'list_files', tool_call_id: 'call_1_1', content: JSON.stringify({ count: 1, files: ['src/main.ts'] }) },
    ]);

    const [entry] = logLines(home);
    expect(entry).toMatchObject({ status: 'ok', tools: ['list_files', 'read_file', 'search_files'], iterations: 1, all_failure_rounds: 0, stop_reason: 'answered', tools_unavailable: [], compacted: [] });
    expect((entry?.tool_calls as { name: string; outcome: string; round: number }[]).map((c) => [c.name, c.outcome, c.round])).toEqual([['read_file', 'success', 1], ['list_files', 'success', 1]]);

    const found = await argo(['logs', '--tool', 'read_file', '--json'], home);
    expect(found.stdout.trim().split('\n')).toHaveLength(1);
    const exported = await argo(['export', '--format', 'sharegpt'], home);
    const trajectory = JSON.parse(exported.stdout) as { conversations: { from: string; value: string }[] };
    expect(trajectory.conversations.map((m) => m.from)).toEqual(['system', 'human', 'gpt', 'tool', 'gpt']);
    expect(trajectory.conversations[0]?.value).toContain('<tools>[{"type":"function","function":{"name":"list_files"');
    expect(trajectory.conversations[2]?.value).toContain('<tool_call>\n{"name":"read_file","arguments":{"path":"notes.txt","limit":1}}\n</tool_call>');
    expect(trajectory.conversations[3]?.value).toContain('<tool_response>');
  });

  it('export streams agent runs only (--all adds plain turns), to stdout or to a private file, the same bytes; --tool finds a run by a tool it called', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('read_file', '{"path":"notes.txt","limit":1}')] }, { reply: 'It says "first line".' }];
    expect(await argo(['-T', 'fs', '--root', root, 'what do the notes say?'], home)).toMatchObject({ code: 0 });
    play.rounds = [{ reply: 'A plain answer.' }];
    play.next = 0;
    expect(await argo(['a plain question, with "tools" in it'], home)).toMatchObject({ code: 0 });

    const runs = await argo(['export', '--format', 'sharegpt'], home);
    expect(runs).toMatchObject({ code: 0, stderr: '' });
    expect(runs.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { conversations: { value: string }[] }).conversations[1]?.value)).toEqual(['what do the notes say?']);
    const all = await argo(['export', '--format', 'sharegpt', '--all'], home);
    expect(all.stdout.trim().split('\n')).toHaveLength(2);

    const file = join(tempHome(), 'runs.jsonl');
    writeFileSync(file, 'an older export, longer than the new one '.repeat(1000));
    chmodSync(file, 0o644);
    const written = await argo(['export', '--format', 'sharegpt', '-o', file], home);
    expect(written).toMatchObject({ code: 0, stdout: '', stderr: `argo: wrote 1 trajectory to ${file}\n` });
    expect(readFileSync(file, 'utf8')).toBe(runs.stdout);
    // It replaces the earlier file with its permissions, as writing into it kept them.
    expect(statSync(file).mode & 0o777).toBe(0o644);
    // Written beside and renamed over, so a failed export would have left the older one whole: nothing else is left there.
    expect(readdirSync(dirname(file))).toEqual(['runs.jsonl']);
    // A link: the file it points to is written, the link kept.
    const link = join(dirname(file), 'latest.jsonl');
    symlinkSync(file, link);
    writeFileSync(file, 'older');
    expect(await argo(['export', '--format', 'sharegpt', '-o', link], home)).toMatchObject({ code: 0 });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(runs.stdout);
    // Not a regular file (a device, a pipe): written to as it is.
    expect(await argo(['export', '--format', 'sharegpt', '-o', '/dev/null'], home)).toMatchObject({ code: 0, stderr: 'argo: wrote 1 trajectory to /dev/null\n' });
    const fresh = join(tempHome(), 'fresh.jsonl');
    expect(await argo(['export', '--format', 'sharegpt', '--all', '-o', fresh], home)).toMatchObject({ code: 0, stderr: `argo: wrote 2 trajectories to ${fresh}\n` });
    expect(readFileSync(fresh, 'utf8')).toBe(all.stdout);
    expect(statSync(fresh).mode & 0o777).toBe(0o600);

    expect((await argo(['logs', '--tool', 'read_file', '--json'], home)).stdout.trim().split('\n')).toHaveLength(1);
    // Offered but not called: not a match, though its name is in the line.
    expect(await argo(['logs', '--tool', 'search_files', '--json'], home)).toMatchObject({ code: 0, stdout: '' });
  });

  it('with Ollama 0.12.10+, which names every call itself, the model\'s ids are kept and sent back', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('read_file', { path: 'notes.txt' }), call('list_files', { pattern: '*.txt' })] }, { reply: 'done' }];
    expect((await argo(['-T', 'fs', '--root', tree(), 'look'], home)).code).toBe(0);
    const logged = (logLines(home)[0]?.tool_calls as { id: string }[]).map((c) => c.id);
    expect(logged).toEqual([expect.stringMatching(OLLAMA_ID), expect.stringMatching(OLLAMA_ID)]);
    const sent = messagesOf(chatBodies()[1]).find((m) => m.role === 'assistant');
    expect(sent?.tool_calls?.map((c) => c.id)).toEqual(logged);
  });

  it.each<[string, string[], boolean]>([
    ['piped stderr (cron, CI): a line per call', [], true],
    ['--json: none, its tool_calls say it', ['--json'], false],
    ['-q: none', ['-q'], false],
  ])('the tool trace, %s', async (_case, flags, traced) => {
    const home = tempHome();
    const root = tree();
    // The model's arguments are hostile: an OSC 52 clipboard write and a bidi override.
    play.rounds = [{ calls: [call('read_file', { path: 'missing.txt\u001b]52;c;aGk=\u0007\u202e' })] }, { calls: [call('read_file', { path: 'notes.txt', limit: 1 })] }, { reply: 'It says "first line".' }];
    const result = await argo(['-T', 'fs', '--root', root, ...flags, 'what do the notes say?'], home);
    expect(result.code).toBe(0);
    // The path's controls shown as they are, not deleted: it reads as the path the model gave.
    const failed = 'argo: tool read_file failed: file "missing.txt^[]52;c;aGk=^G\\u202e" does not exist';
    const lines = result.stderr.replace(/\(\d+ ms\)/g, '(N ms)').split('\n').filter((line) => line !== '');
    expect(lines).toEqual(
      traced
        ? ['argo: tool read_file {"path":"missing.txt\\u001b]52;c;aGk=\\u0007\\u202e"}: failure (N ms)', failed, 'argo: tool read_file {"path":"notes.txt","limit":1}: success (N ms)']
        : [failed],
    );
    expect(result.stderr.replace(/\n/g, '').match(CONTROLS)).toBeNull();
  });

  it.each<[string, string, Record<string, unknown>, string]>([
    ['a clipboard write, an 8-bit CSI and a bidi override', 'read_file', { path: '\u001b]52;c;Zm9v\u0007\u009b2J\u202e.txt' }, 'argo: tool read_file failed: file "^[]52;c;Zm9v^G\\x9b2J\\u202e.txt" does not exist'],
    ['a screen erase ending a path through a link out of the root', 'write_file', { path: 'out/\u001b[2J', content: 'x' }, 'argo: tool write_file failed: path "out/^[[2J" is outside the root directory; use a path inside it'],
  ])('a failure quoting a path with controls (%s) shows them, the same in the log', async (_case, tool, args, line) => {
    const home = tempHome();
    const root = tree();
    symlinkSync(mkdtempSync(join(tmpdir(), 'argo-agent-out-')), join(root, 'out'));
    play.rounds = [{ calls: [call(tool, args)] }, { reply: 'ok' }];
    const result = await argo(['-T', 'fs,edit', '--yes', '--root', root, '-q', 'go'], home);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`${line}\n`);
    expect(result.stderr.replace(/\n/g, '').match(CONTROLS)).toBeNull();
    expect(logLines(home)[0]?.tool_calls).toMatchObject([{ name: tool, arguments: args, outcome: 'failure', error: line.replace(/^argo: tool \w+ failed: /, '') }]);
  });

  it('refuses paths outside the root: a failure, never sent back to the model', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('read_file', { path: '../../../etc/passwd' }), call('read_file', { path: 'notes.txt' })] }, { reply: 'ok' }];
    const result = await argo(['-T', 'read_file', '--root', root, '-q', 'read'], home);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('argo: tool read_file failed: path "../../../etc/passwd" is outside the root directory; use a path inside it\n');
    const second = chatBodies()[1];
    expect(JSON.stringify(second)).not.toContain('passwd');
    expect(messagesOf(second).filter((m) => m.role === 'tool')).toHaveLength(1);
  });
});

// search_files' results: read_file fits its own to its budget, a line at a time.
describe('argo --tools: results over budget', () => {
  const bigRun = (home: string, root: string) => {
    play.rounds = [{ calls: [call('search_files', { pattern: 'line', glob: 'big.txt' })] }, { reply: 'read it' }];
    play.next = 0;
    return argo(['-s', 'work', '-T', 'fs', '--root', root, 'read big.txt'], home);
  };

  it('are saved whole, one folder per turn: two turns of a session keep both, though their calls have one id', async () => {
    const home = tempHome({ toolBudgets: { search_files: 1000 } });
    const root = tree();
    writeFileSync(join(root, 'big.txt'), 'a long line of text\n'.repeat(200));
    expect(await withoutCallIds(() => bigRun(home, root))).toMatchObject({ code: 0 });
    writeFileSync(join(root, 'big.txt'), 'another long line\n'.repeat(200));
    expect(await withoutCallIds(() => bigRun(home, root))).toMatchObject({ code: 0 });
    const saved = logLines(home).map((entry) => (entry.tool_calls as { saved_as?: string }[])[0]?.saved_as ?? '');
    expect(saved).toEqual([expect.stringMatching(/^tool-results\/[^/]+\/[^/]+\/r1-call_1_0\.json$/), expect.stringMatching(/^tool-results\/[^/]+\/[^/]+\/r1-call_1_0\.json$/)]);
    expect(saved[0]).not.toBe(saved[1]);
    expect((JSON.parse(readFileSync(join(home, saved[0] ?? ''), 'utf8')) as { matches: { text: string }[] }).matches[199]?.text).toBe('a long line of text');
    expect((JSON.parse(readFileSync(join(home, saved[1] ?? ''), 'utf8')) as { matches: { text: string }[] }).matches[199]?.text).toBe('another long line');
    expect(statSync(join(home, saved[1] ?? '')).mode & 0o777).toBe(0o600);
  });

  it('that cannot be saved end the run as an error, still logged, with one line saying why', async () => {
    const home = tempHome({ toolBudgets: { search_files: 1000 } });
    const root = tree();
    writeFileSync(join(root, 'big.txt'), 'a long line of text\n'.repeat(200));
    // A file where the folder should be: the save fails (ENOTDIR or EEXIST), as on a full or read-only disk.
    writeFileSync(join(home, 'tool-results'), '');
    const result = await bigRun(home, root);
    expect(result.code).toBe(1);
    // The reason names its own fix: no other is added.
    expect(result.stderr).toMatch(/^argo: cannot save the tool result tool-results\/\S+\/r1-call_[a-z0-9]{8}\.json in the data home \(\S+\/tool-results is not a folder; remove it, and Argo makes the folder again\) \(logged as error\)$/m);
    expect(logLines(home)).toEqual([expect.objectContaining({ status: 'error', stop_reason: 'result_not_saved', model_response: 'read it', error: expect.stringContaining('cannot save the tool result') as unknown })]);
    // No file was kept, so none is named: the call and its compaction step say the rest was not kept.
    const [entry] = logLines(home);
    expect(entry?.tool_calls).toEqual([expect.not.objectContaining({ saved_as: expect.anything() as unknown })]);
    expect(entry?.compacted).toEqual([expect.objectContaining({ id: expect.stringMatching(OLLAMA_ID) as unknown, kind: 'truncated' })]);
    expect(entry?.compacted).toEqual([expect.not.objectContaining({ saved_as: expect.anything() as unknown })]);
  });
});

describe('argo --tools: compaction is deterministic and exact, export uses the run\'s tools', () => {
  const big = (text: string, lines: number): string => `${text}\n`.repeat(lines);
  const toolMessages = (index: number): Message[] => messagesOf(chatBodies()[index]).filter((m) => m.role === 'tool');

  it('the note the model gets names the call id and full length, never a path with random parts: the first request is the same run to run', async () => {
    const root = tree();
    writeFileSync(join(root, 'big.txt'), big('a long line of text', 200));
    const full = JSON.stringify({ matches: Array.from({ length: 200 }, (_, index) => ({ file: 'big.txt', line: index + 1, text: 'a long line of text' })) }).length;
    const note = (id: string, kept: string): string => `truncated: the first part of the ${full} characters of call ${id} (${kept}); for more, call the tool again for a narrower part`;
    const run = async (flags: string[]) => {
      ollama.requests.length = 0;
      const home = tempHome({ toolBudgets: { search_files: 500 } });
      play.rounds = [{ calls: [call('search_files', { pattern: 'line', glob: 'big.txt' })] }, { reply: 'read it' }];
      play.next = 0;
      expect(await argo([...flags, '-T', 'fs', '--root', root, 'read big.txt'], home)).toMatchObject({ code: 0 });
      if (flags.length > 0) expect(existsSync(join(home, 'tool-results'))).toBe(false);
      const [first, second] = ollama.requests.filter((request) => request.path === '/api/chat').map((request) => request.body);
      const id = defined(messagesOf(chatBodies()[1]).find((m) => m.role === 'assistant')?.tool_calls?.[0]?.id, 'the call id sent back');
      return { first, second, id, note: (JSON.parse(toolMessages(1)[0]?.content ?? '') as { note: string }).note };
    };
    for (const flags of [[], ['--no-log']]) {
      const [one, two] = [await run(flags), await run(flags)];
      expect(two.first).toBe(one.first);
      // Ollama names each call afresh, so what follows the first request carries another id each run.
      expect([one.id, two.id]).toEqual([expect.stringMatching(OLLAMA_ID), expect.stringMatching(OLLAMA_ID)]);
      expect(two.id).not.toBe(one.id);
      const kept = flags.length > 0 ? 'the rest was not kept' : 'saved whole for the user';
      expect([one.note, two.note]).toEqual([note(one.id, kept), note(two.id, kept)]);
      // Calls without ids are numbered by Argo: then every request is the same run to run.
      const three = await withoutCallIds(() => run(flags));
      const four = await withoutCallIds(() => run(flags));
      expect([three.first, four.second]).toEqual([one.first, three.second]);
      expect(three.note).toBe(note('call_1_0', kept));
    }
  });

  it('a call id repeated in every round: each result is saved apart, logged apart, sent back under its own id and exported', async () => {
    const home = tempHome({ toolBudgets: { search_files: 500 } });
    const root = tree();
    writeFileSync(join(root, 'one.txt'), big('the first file', 100));
    writeFileSync(join(root, 'two.txt'), big('the second file', 100));
    play.rounds = [{ calls: [call('search_files', { pattern: 'file', glob: 'one.txt' }, 'call_0')] }, { calls: [call('search_files', { pattern: 'file', glob: 'two.txt' }, 'call_0')] }, { reply: 'both read' }];
    expect(await argo(['-T', 'fs', '--root', root, 'read both'], home)).toMatchObject({ code: 0 });
    const [entry] = logLines(home);
    const calls = entry?.tool_calls as { id: string; round: number; saved_as?: string }[];
    expect(calls.map((c) => [c.id, c.round])).toEqual([['call_0', 1], ['call_0', 2]]);
    expect(calls[0]?.saved_as).toMatch(/^tool-results\/[^/]+\/[^/]+\/r1-call_0\.json$/);
    expect(calls[1]?.saved_as).toMatch(/^tool-results\/[^/]+\/[^/]+\/r2-call_0\.json$/);
    expect(readFileSync(join(home, calls[0]?.saved_as ?? ''), 'utf8')).toContain('the first file');
    expect(readFileSync(join(home, calls[1]?.saved_as ?? ''), 'utf8')).toContain('the second file');
    expect((entry?.compacted as { id: string; round: number; kind: string }[]).map((c) => [c.id, c.round, c.kind])).toEqual([
      ['call_0', 1, 'saved'],
      ['call_0', 2, 'saved'],
      ['call_0', 1, 'summarized'],
    ]);
    const assistant = messagesOf(chatBodies()[2]).filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => m.tool_calls?.map((c) => c.id))).toEqual([['call_0'], ['call_0']]);
    const exported = JSON.parse((await argo(['export', '--format', 'sharegpt'], home)).stdout) as { conversations: { from: string; value: string }[] };
    expect(exported.conversations.map((m) => m.from)).toEqual(['system', 'human', 'gpt', 'tool', 'gpt', 'tool', 'gpt']);
    expect(exported.conversations[4]?.value).toContain('two.txt');
  });

  it("an older round's summary gives the full result's length, and so does the log", async () => {
    const home = tempHome({ toolBudgets: { search_files: 500 } });
    const root = tree();
    writeFileSync(join(root, 'big.txt'), big('x'.repeat(40), 150));
    play.rounds = [{ calls: [call('search_files', { pattern: 'x', glob: 'big.txt' })] }, { calls: [call('list_files', { pattern: '*.txt' })] }, { reply: 'done' }];
    expect(await argo(['-T', 'fs', '--root', root, 'read'], home)).toMatchObject({ code: 0 });
    const full = JSON.stringify({ matches: Array.from({ length: 150 }, (_, index) => ({ file: 'big.txt', line: index + 1, text: 'x'.repeat(40) })) }).length;
    const [summary] = toolMessages(2);
    expect((JSON.parse(summary?.content ?? '') as { summary: string }).summary).toMatch(new RegExp(`^search_files\\(\\{"pattern":"x","glob":"big.txt"\\}\\) returned ${full} characters: \\{"matches":\\[\\{"file":"big.txt"`));
    const compacted = logLines(home)[0]?.compacted as { kind: string; chars_before: number; chars_after: number }[];
    expect(compacted.map((c) => [c.kind, c.chars_before])).toEqual([['saved', full], ['summarized', full]]);
  });

  it('export uses the tool definitions the run sent, even after the tool is gone from config', async () => {
    const greet = { description: 'Greets someone', parameters: { type: 'object', properties: { who: { type: 'string' } }, required: ['who'] }, argv: ['echo', 'hello', '{who}'], sideEffects: false };
    const home = tempHome({ commandTools: { greet } });
    play.rounds = [{ calls: [call('greet', { who: 'Ada' })] }, { reply: 'greeted' }];
    expect(await argo(['-T', 'greet', '--root', tree(), 'greet Ada'], home)).toMatchObject({ code: 0 });
    const digest = logLines(home)[0]?.tool_definitions_sha256 as string;
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(join(home, 'tool-definitions', `${digest}.json`)).mode & 0o777).toBe(0o600);
    writeFileSync(join(home, 'config.json'), '{}');
    const exported = await argo(['export', '--format', 'sharegpt'], home);
    expect(exported).toMatchObject({ code: 0, stderr: '' });
    const system = (JSON.parse(exported.stdout) as { conversations: { value: string }[] }).conversations[0]?.value ?? '';
    expect(system).toContain(JSON.stringify([{ type: 'function', function: { name: 'greet', description: 'Greets someone', parameters: greet.parameters } }]));
    expect(await argo(['logs', 'check'], home)).toMatchObject({ code: 0 });

    // A line from before definitions were kept: today's config, the removed tool left out, said once.
    const day = readdirSync(join(home, 'logs')).find((name) => name.endsWith('.log')) ?? '';
    const logged = readFileSync(join(home, 'logs', day), 'utf8');
    writeFileSync(join(home, 'logs', day), logged.replace(/,"tool_definitions_sha256":"[0-9a-f]{64}"/, ''));
    const older = await argo(['export', '--format', 'sharegpt'], home);
    expect(older.stderr).toBe("argo: 1 turn was logged before Argo kept each run's tool definitions; its system prompt lists the tools as config.json defines them today, leaving out 1 tool config.json no longer defines (greet)\n");
    expect(older.stdout).toContain('<tools>[]</tools>');
    writeFileSync(join(home, 'logs', day), logged);

    rmSync(join(home, 'tool-definitions', `${digest}.json`));
    const missing = await argo(['export', '--format', 'sharegpt'], home);
    expect(missing.code).toBe(0);
    expect(missing.stderr).toBe(`argo: 1 turn's tool definitions (tool-definitions/${digest}.json) are missing from the data home; its system prompt lists the tools as config.json defines them today, leaving out 1 tool config.json no longer defines (greet)\n`);
    expect(missing.stdout).not.toContain('"description":""');
  });

  it('a tool-results link in the data home is refused, not followed out of it', async () => {
    const home = tempHome({ toolBudgets: { search_files: 500 } });
    const outside = mkdtempSync(join(tmpdir(), 'argo-outside-'));
    symlinkSync(outside, join(home, 'tool-results'));
    const root = tree();
    writeFileSync(join(root, 'big.txt'), big('a long line of text', 200));
    play.rounds = [{ calls: [call('search_files', { pattern: 'line', glob: 'big.txt' })] }, { reply: 'read it' }];
    const result = await argo(['-T', 'fs', '--root', root, 'read big.txt'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`argo: cannot save the tool result tool-results/`);
    expect(result.stderr).toContain('is a symbolic link; Argo does not follow links in its data home');
    expect(readdirSync(outside)).toEqual([]);
  });
});

describe('argo --tools: what the model is sent after each kind of failure', () => {
  it('an invalid response is asked again with the same conversation, then rolled back: invalid_response, exit 1', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('no_such_tool', {})] }];
    const result = await argo(['-T', 'fs', 'go'], home);
    expect(result.code).toBe(1);
    const bodies = chatBodies();
    expect(bodies).toHaveLength(4);
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    expect(result.stderr.match(/asking again \(\d of 3\)/g)).toEqual(['asking again (1 of 3)', 'asking again (2 of 3)', 'asking again (3 of 3)']);
    expect(result.stderr).toContain('argo: the model\'s tool calls were still invalid after 3 re-asks (unknown tool "no_such_tool"); try another model or fewer tools (logged as invalid_response)');
    expect(logLines(home)[0]).toMatchObject({ status: 'invalid_response', stop_reason: 'invalid_response', iterations: 0 });
  });

  it('every call the model sent is in the log, run or not: a valid call of a response asked again, a repeated id, each attempt told apart', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [
      { calls: [call('read_file', { path: 'notes.txt' }, 'A'), call('nope', {}, 'B'), call('read_file', { path: 5 }, 'C')] },
      { calls: [call('read_file', { path: 'notes.txt' }, 'c'), call('list_files', { pattern: '*' }, 'c')] },
      { reply: 'It says "first line".' },
    ];
    const result = await argo(['-T', 'fs', '--root', root, '-q', 'what do the notes say?'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'It says "first line".\n' });
    const calls = (logLines(home)[0]?.tool_calls ?? []) as { id: string; name: string; outcome: string; round: number; attempt?: number; error?: string }[];
    expect(calls.map(({ id, name, outcome, round, attempt, error }) => ({ id, name, outcome, round, attempt, error }))).toEqual([
      { id: 'A', name: 'read_file', outcome: 'not_run', round: 1, attempt: undefined, error: 'not run: another call of the response was invalid' },
      { id: 'B', name: 'nope', outcome: 'invalid', round: 1, attempt: undefined, error: 'unknown tool "nope"' },
      { id: 'C', name: 'read_file', outcome: 'invalid', round: 1, attempt: undefined, error: expect.stringContaining('read_file: "path"') as unknown },
      { id: 'c', name: 'read_file', outcome: 'success', round: 1, attempt: 2, error: undefined },
      { id: 'c', name: 'list_files', outcome: 'not_run', round: 1, attempt: 2, error: 'not run: an earlier call of the response has the same id' },
    ]);
    // A call that never ran is still a call of the turn: --tool finds it.
    const found = await argo(['logs', '--tool', 'list_files', '--json'], home);
    expect(JSON.parse(found.stdout)).toMatchObject({ tool_calls: expect.arrayContaining([expect.objectContaining({ name: 'list_files', outcome: 'not_run' })]) as unknown });
  });

  it("a round with a success counts in iterations though a tool's own needs_input ends the run there", async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('read_file', { path: 'notes.txt' }), call('memo', { operation: 'set', key: 'k' }), call('read_file', { path: 'missing.txt' })] }, { reply: 'never' }];
    const result = await argo(['-T', 'fs,memo', '--root', root, '-q', 'note it'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('argo: tool memo needs "value", which the model did not give; ask again with it in your question (logged as needs_input)\n');
    const logged = logLines(home)[0];
    expect(logged).toMatchObject({ status: 'needs_input', iterations: 1 });
    expect((logged?.tool_calls as { outcome: string }[] | undefined)?.map((c) => c.outcome)).toEqual(['success', 'needs_input', 'failure']);
  });

  it('a missing required parameter stops at once: needs_input, nothing sent back, exit 1, found by --status', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('read_file', { offset: 2 })] }, { reply: 'never' }];
    const result = await argo(['-T', 'fs', '-q', 'read it'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('argo: tool read_file needs "path", which the model did not give; ask again with it in your question (logged as needs_input)\n');
    expect(chatBodies()).toHaveLength(1);
    const listed = await argo(['logs', '--status', 'needs_input', '--json'], home);
    expect(JSON.parse(listed.stdout)).toMatchObject({ status: 'needs_input', stop_reason: 'required_parameter' });
  });

  it.each<[string, Record<string, unknown>, number, string]>([
    // the schema of the required "title" → exit code, the call's outcome
    ['takes null (a required Optional, as Pydantic and FastMCP write it)', { anyOf: [{ type: 'string' }, { type: 'null' }] }, 0, 'success'],
    ['refuses null', { type: 'string' }, 1, 'needs_input'],
  ])('a required parameter the model sends as null, its schema %s', async (_case, title, code, outcome) => {
    const greet = { description: 'Greet', argv: ['printf', '[%s]', '{name}', '{title}'], sideEffects: false, parameters: { type: 'object', properties: { name: { type: 'string' }, title }, required: ['name', 'title'] } };
    const home = tempHome({ commandTools: { greet } });
    play.rounds = [{ calls: [call('greet', { name: 'bob', title: null })] }, { reply: 'Greeted.' }];
    const result = await argo(['-T', 'greet', '--root', tree(), '-q', 'greet bob'], home);
    expect(result.code).toBe(code);
    expect(logLines(home)[0]?.tool_calls).toMatchObject([{ name: 'greet', arguments: { name: 'bob', title: null }, outcome }]);
    if (outcome === 'needs_input') {
      expect(result.stderr).toBe('argo: tool greet needs "title", which the model did not give; ask again with it in your question (logged as needs_input)\n');
      return;
    }
    // Run as an absent one: the command got no element for it.
    expect(result.stdout).toBe('Greeted.\n');
    const sent = messagesOf(chatBodies()[1]).find((message) => message.role === 'tool');
    expect(JSON.parse(sent?.content ?? '{}')).toMatchObject({ exit_code: 0, stdout: '[bob]' });
  });

  it('a file named "path is required.md" that is not there is a failure of read_file, not a missing parameter', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('read_file', { path: 'path is required.md' })] }, { reply: 'It is not there.' }];
    const result = await argo(['-T', 'fs', '--root', tree(), '-q', 'read it'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'It is not there.\n', stderr: 'argo: tool read_file failed: file "path is required.md" does not exist\n' });
    expect(logLines(home)[0]).toMatchObject({ status: 'ok', all_failure_rounds: 1, tool_calls: [{ outcome: 'failure', error: 'file "path is required.md" does not exist' }] });
  });

  it("a round whose calls all failed: what the model said is logged, but neither sent back nor exported", async () => {
    const home = tempHome();
    play.rounds = [
      { reply: 'Reading missing.txt first.', calls: [call('read_file', { path: 'missing.txt' })] },
      { reply: 'Then notes.txt.', calls: [call('read_file', { path: 'notes.txt', limit: 1 })] },
      { reply: 'It says "first line".' },
    ];
    const result = await argo(['-T', 'fs', '--root', tree(), '-q', 'what do the notes say?'], home);
    expect(result.code).toBe(0);
    expect(logLines(home)[0]).toMatchObject({
      status: 'ok',
      all_failure_rounds: 1,
      round_messages: [
        { round: 1, content: 'Reading missing.txt first.' },
        { round: 2, content: 'Then notes.txt.' },
      ],
    });
    const [first, second, third] = chatBodies();
    expect(second).toEqual(first);
    expect(JSON.stringify(third)).not.toContain('missing');
    const exported = await argo(['export', '--format', 'sharegpt'], home);
    const gpt = (JSON.parse(exported.stdout) as { conversations: { from: string; value: string }[] }).conversations.filter((m) => m.from === 'gpt').map((m) => m.value);
    expect(gpt).toEqual(['Then notes.txt.\n<tool_call>\n{"name":"read_file","arguments":{"path":"notes.txt","limit":1}}\n</tool_call>', 'It says "first line".']);
  });

  it('three all-failure rounds stop the loop: tool_failures; the model saw none of them', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('read_file', { path: 'missing.txt' })] }];
    const result = await argo(['-T', 'fs', '--root', tree(), '--json', 'read'], home);
    expect(result.code).toBe(1);
    expect(result.stderr.match(/argo: tool read_file failed: file "missing.txt" does not exist/g)).toHaveLength(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'tool_failures', stop_reason: 'all_failure_rounds', all_failure_rounds: 3, iterations: 0 });
    const bodies = chatBodies();
    expect(bodies).toHaveLength(3);
    expect(bodies[2]).toEqual(bodies[0]);
    expect(logLines(home)[0]).toMatchObject({ status: 'tool_failures', stop_reason: 'all_failure_rounds', all_failure_rounds: 3 });
  });

  it('a model that only reasons is asked again, then stops invalid_response; nothing is logged as an answer', async () => {
    const home = tempHome();
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools', 'thinking'] }];
    ollama.options.thinking = 'Thinking and never saying.';
    try {
      play.rounds = [{ reply: '' }];
      const result = await argo(['-T', 'fs', '--root', tree(), 'well?'], home);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain("argo: the model's response was invalid (no answer: the response was empty, or only reasoning); asking again (3 of 3)");
      expect(result.stderr).toContain('argo: the model still gave no answer after 3 re-asks');
      expect(chatBodies()).toHaveLength(4);
      expect(logLines(home)[0]).toMatchObject({ status: 'invalid_response', model_response: '' });
      const replayed = await argo(['--replay', 'last:5', '--explain', '--json', 'again'], home);
      expect(JSON.stringify(JSON.parse(replayed.stdout))).not.toContain('well?');
    } finally {
      ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
      ollama.options.thinking = undefined;
    }
  });

  it("a llama-style model's call cut by num_predict, which Ollama passes on as text: invalid_response at once, the unfinished call neither logged as the answer nor replayed", async () => {
    const home = tempHome();
    const root = tree();
    // Tool tag {: Ollama holds a bare JSON call and, cut short, hands it back as the done line's text.
    ollama.options.models = [{ name: 'argo:latest', toolTag: '{', capabilities: ['completion', 'tools'] }];
    try {
      play.rounds = [{ calls: [call('read_file', { path: 'notes.txt', limit: 1 })] }, { reply: 'It says "first line".' }];
      const result = await argo(['-T', 'fs', '--root', root, '-o', 'num_predict=6', 'what do the notes say?'], home);
      expect(result).toMatchObject({ code: 1, stdout: '{"name":"read_file","arg\n' });
      expect(result.stderr).toBe('argo: the model reached its token limit in the middle of a tool call (Ollama passed the unfinished call on as text); raise num_predict (logged as invalid_response)\n');
      expect(chatBodies()).toHaveLength(1);
      expect(logLines(home)[0]).toMatchObject({ status: 'invalid_response', stop_reason: 'invalid_response', model_response: '', done_reason: 'length' });
      // With room, the same call runs.
      ollama.requests.length = 0;
      play.next = 0;
      expect(await argo(['-T', 'fs', '--root', root, 'what do the notes say?'], home)).toMatchObject({ code: 0, stdout: 'It says "first line".\n' });
    } finally {
      ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    }
  });

  it.each<[string, string[], string]>([
    // A tagged call the limit cuts is dropped by Ollama: nothing comes, and no reasoning was spent.
    ['a model that does not think', [], 'the model reached its token limit before answering (it may have been cut while writing a tool call); raise num_predict'],
    ['asked to reason (--think)', ['--think', 'high'], 'the model reached its token limit before answering (a thinking model reasons first); raise num_predict, or ask for less reasoning (think)'],
  ])("a tagged model's call cut by num_predict, %s: invalid_response at once, the line says what spent the limit", async (_case, flags, line) => {
    const home = tempHome();
    ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools', 'thinking'] }];
    try {
      play.rounds = [{ calls: [call('read_file', { path: 'a-very-long-file-name-to-cut.txt' })] }, { reply: 'never' }];
      const result = await argo(['-T', 'fs', '--root', tree(), '-o', 'num_predict=5', ...flags, 'go'], home);
      expect(result).toMatchObject({ code: 1, stdout: '', stderr: `argo: ${line} (logged as invalid_response)\n` });
      expect(chatBodies()).toHaveLength(1);
      expect(logLines(home)[0]).toMatchObject({ status: 'invalid_response', error: line, tool_calls: [] });
    } finally {
      ollama.options.models = [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }];
    }
  });

  it("a tagged model's JSON answer cut by num_predict (qwen's <tool_call>: Ollama streams it as words) is its real answer: ok, the text kept and logged", async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ reply: '{"answer": "the notes say first line, and more after it"}' }];
    const result = await argo(['-T', 'fs', '--root', root, '-o', 'num_predict=4', 'what do the notes say? answer in JSON'], home);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^\{"answer"/);
    expect(result.stderr).toContain('argo: the answer was cut at the token limit (num_predict); raise it with -o num_predict=N\n');
    expect(chatBodies()).toHaveLength(1);
    const [line] = logLines(home);
    expect(line).toMatchObject({ status: 'ok', done_reason: 'length', model_response: result.stdout.trimEnd() });
  });

  it('argo chat takes --tools, --root and --yes as the one-liner does: each message is an agent turn in the chosen tree', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('write_file', { path: 'made.txt', content: 'by chat' })] }, { reply: 'Written.' }, { calls: [call('list_files', { pattern: '*.txt' })] }, { reply: 'Two.' }];
    // -T before and after the name adds up, as -T given twice does.
    const result = await argo(['-T', 'fs', 'chat', '-T', 'edit', '--root', root, '--yes'], home, { stdin: 'write it\nlist them\n' });
    expect(result).toMatchObject({ code: 0, stdout: 'Written.\nTwo.\n' });
    expect(readFileSync(join(root, 'made.txt'), 'utf8')).toBe('by chat');
    const lines = logLines(home);
    expect(lines.map((line) => line.status)).toEqual(['ok', 'ok']);
    expect(lines[1]?.tool_calls).toEqual([expect.objectContaining({ name: 'list_files', result: JSON.stringify({ count: 2, files: ['made.txt', 'notes.txt'] }) })]);
  });

  it('a chat whose agent runs STOP cut exits 1, as argo -T does: a STOP is a failure of the turn, not an interruption', async () => {
    const home = tempHome();
    expect((await runArgo(['stop'], { home })).code).toBe(0);
    const result = await argo(['chat', '-T', 'fs', '--root', tree()], home, { stdin: 'one\ntwo\n' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('argo: stopped by the STOP signal; run "argo stop --clear" to allow runs again (logged as stopped)');
    expect(logLines(home).map((line) => [line.user_prompt, line.status])).toEqual([
      ['one', 'stopped'],
      ['two', 'stopped'],
    ]);
  });

  it.each([
    [['--ephemeral-system', 'be terse', 'hi'], '--ephemeral-system'],
    [['--root', '/tmp', 'hi'], '--root'],
    [['--yes', 'hi'], '--yes'],
    [['--max-iterations', '3', 'hi'], '--max-iterations'],
    [['chat', '--root', '/tmp'], '--root'],
  ])('%j without tools is a usage error, not a flag dropped in silence', async (args, flag) => {
    const home = tempHome();
    expect(await argo(args, home, { stdin: 'hello\n' })).toMatchObject({ code: 2, stderr: `argo: ${flag} is for agent mode: add --tools (e.g. --tools fs), or "tools" in config.json\n` });
    expect(chatBodies()).toHaveLength(0);
  });

  it.each([
    [['--since', ''], /^argo: --since: cannot read "" as a time/],
    [['--until', ''], /^argo: --until: cannot read "" as a time/],
    [['-s', ''], /^argo: --session needs a name/],
  ])('export %j is a usage error, not an export of everything', async (args, message) => {
    const result = await argo(['export', '--format', 'sharegpt', ...args], tempHome());
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(message);
  });

  it('export -o into the data home is refused before anything is written: the day\'s log is never replaced by the export', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('list_files', { pattern: '*' })] }, { reply: 'Two files.' }];
    expect(await argo(['-T', 'fs', '--root', tree(), 'what is here?'], home)).toMatchObject({ code: 0 });
    const day = readdirSync(join(home, 'logs')).find((name) => name.endsWith('.log')) ?? '';
    const before = readFileSync(join(home, 'logs', day), 'utf8');
    const result = await argo(['export', '--format', 'sharegpt', '-o', join(home, 'logs', day)], home);
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: `argo: --output ${join(home, 'logs', day)} is inside Argo's data home (${home}); write the export somewhere else\n` });
    expect(readFileSync(join(home, 'logs', day), 'utf8')).toBe(before);
    // A link to a file not made yet in the home would create it there: refused the same.
    const link = join(mkdtempSync(join(tmpdir(), 'argo-out-')), 'runs.jsonl');
    symlinkSync(join(home, 'memo.json'), link);
    expect(await argo(['export', '--format', 'sharegpt', '-o', link], home)).toMatchObject({ code: 2, stdout: '', stderr: `argo: --output ${link} is inside Argo's data home (${home}); write the export somewhere else\n` });
    expect(existsSync(join(home, 'memo.json'))).toBe(false);
  });

  it('--yes with --tools none says the two disagree', async () => {
    expect(await argo(['-T', 'none', '--yes', 'hi'], tempHome())).toMatchObject({ code: 2, stderr: 'argo: --yes is for agent mode, and --tools none turns the tools off: drop one of them\n' });
  });

  it('argo rerun refuses an agent turn, naming the tools to ask again with: one request again is not the run', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('list_files', { pattern: '*' })] }, { reply: 'Two files.' }];
    expect(await argo(['-T', 'fs', '--root', tree(), 'what is here?'], home)).toMatchObject({ code: 0 });
    const turn = logLines(home)[0];
    const requests = chatBodies().length;
    expect(await argo(['rerun', String(turn?.id)], home)).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `argo: cannot rerun: turn ${String(turn?.id)} was an agent run (tools list_files, read_file, search_files), and rerun sends one request, not a tool loop (its request_sha256 is of the run's first request, with the memo of that moment, which the log does not keep); ask it again with --tools list_files,read_file,search_files\n`,
    });
    expect(chatBodies()).toHaveLength(requests);
    expect(logLines(home)).toHaveLength(1);
    // An agent turn that had no tool available (its MCP server did not start) is an agent turn too.
    const noTools = tempHome({ mcpServers: { broken: { command: '/nonexistent/server' } } });
    play.rounds = [{ reply: 'Without tools.' }];
    expect(await argo(['-T', 'mcp:broken', 'hi'], noTools)).toMatchObject({ code: 0 });
    const bare = logLines(noTools)[0];
    expect(bare).toMatchObject({ tools: [] });
    expect(await argo(['rerun', String(bare?.id)], noTools)).toMatchObject({
      code: 1,
      stderr: `argo: cannot rerun: turn ${String(bare?.id)} was an agent run (no tool was available), and rerun sends one request, not a tool loop (its request_sha256 is of the run's first request, with the memo of that moment, which the log does not keep); ask it again with the --tools it was asked with\n`,
    });
  });

  it('max_iterations logs the words shown last as the response, and counts every round that ran', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ reply: 'Looking at notes.', calls: [call('read_file', { path: 'notes.txt' })] }];
    const result = await argo(['-T', 'fs', '--max-iterations', '1', '--root', root, '--json', 'what do the notes say?'], home);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'max_iterations', response: 'Looking at notes.' });
    expect(logLines(home)[0]).toMatchObject({ status: 'max_iterations', model_response: 'Looking at notes.', error: 'stopped after 1 tool round without a final answer; raise --max-iterations or ask a narrower question' });

    // A round whose every call failed ran, but does not count toward the limit: the line says both.
    play.rounds = [{ calls: [call('read_file', { path: 'notes.txt' })] }, { calls: [call('read_file', { path: 'missing.txt' })] }, { reply: 'Again.', calls: [call('read_file', { path: 'notes.txt' })] }];
    play.next = 0;
    const mixed = await argo(['-T', 'fs', '--max-iterations', '2', '--root', root, 'loop'], home);
    expect(mixed.stdout).toBe('Again.\n');
    expect(mixed.stderr).toContain('argo: stopped after 3 tool rounds, 2 of them with a successful call (the most allowed), without a final answer; raise --max-iterations or ask a narrower question (logged as max_iterations)\n');
  });

  it('max_iterations ends a loop that keeps calling', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('list_files', { pattern: '*' })] }];
    const result = await argo(['-T', 'fs', '--max-iterations', '2', '--root', tree(), 'loop'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('stopped after 2 tool rounds without a final answer');
    expect(logLines(home)[0]).toMatchObject({ status: 'max_iterations', iterations: 2 });
  });
});

describe('argo --tools: the shell', () => {
  it('commands run without the variables that look like secrets (by name or value), unless config passes them; the server key never', async () => {
    const env = { ARGO_API_KEY: 'sk-server-1', GITHUB_TOKEN: 'gh-2', OPENAI_API_KEY: 'sk-3', PGPASSWORD: 'pw-4', DATABASE_URL: 'postgres://app:pw-5@db/app', SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/hook-6', T_NOTIFY_URL: 'https://api.example.com/notify?token=hook-7', EDITOR: 'vi' };
    const run = async (config: Record<string, unknown>) => {
      const home = tempHome(config);
      play.rounds = [{ calls: [call('run_command', { command: 'env' })] }, { reply: 'done' }];
      play.next = 0;
      expect((await argo(['-T', 'shell', '--yes', '--root', tree(), 'show env'], home, { env })).code).toBe(0);
      return JSON.stringify(logLines(home)[0]?.tool_calls);
    };
    const plain = await run({});
    expect(plain).toContain('EDITOR=vi');
    for (const secret of ['sk-server-1', 'gh-2', 'sk-3', 'pw-4', 'pw-5', 'hook-6', 'hook-7']) expect(plain).not.toContain(secret);
    const passed = await run({ passSecrets: ['GITHUB_TOKEN', 'DATABASE_URL', 'ARGO_API_KEY'] });
    expect(passed).toContain('GITHUB_TOKEN=gh-2');
    expect(passed).toContain('DATABASE_URL=postgres://app:pw-5@db/app');
    expect(passed).not.toContain('hook-6');
    expect(passed).not.toContain('hook-7');
    expect(passed).not.toContain('sk-server-1');
  });

  it('a round of 12 calls runs without a MaxListenersExceededWarning', async () => {
    const home = tempHome();
    const calls = Array.from({ length: 12 }, (_, index) => call('run_command', { command: `echo ${index}` }));
    play.rounds = [{ calls }, { reply: 'done' }];
    const result = await argo(['-T', 'shell', '--yes', '--root', tree(), 'twelve'], home);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain('MaxListenersExceededWarning');
  });

  it('runs a real command with --yes and feeds back its output', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('run_command', { command: 'echo hello > out.txt && cat out.txt && pwd' })] }, { reply: 'done' }];
    const result = await argo(['-T', 'shell', '--yes', '--root', root, 'make a file'], home);
    expect(result.code).toBe(0);
    expect(readFileSync(join(root, 'out.txt'), 'utf8')).toBe('hello\n');
    const [sent, fed] = messagesOf(chatBodies()[1]).slice(-2);
    expect(fed).toEqual({ role: 'tool', tool_name: 'run_command', tool_call_id: sent?.tool_calls?.[0]?.id, content: JSON.stringify({ exit_code: 0, stdout: `hello\n${root}\n`, stderr: '' }) });
    expect(fed?.tool_call_id).toMatch(OLLAMA_ID);
  });

  it('without --yes and a terminal, process calls that only look run; its start is refused, asking for --yes', async () => {
    const root = tree();
    play.rounds = [
      { calls: [call('process', { operation: 'list' }), call('process', { operation: 'status', handle: 'proc_9' })] },
      { calls: [call('process', { operation: 'start', command: 'touch started' })] },
      { reply: 'never' },
    ];
    const home = tempHome();
    const result = await argo(['-T', 'shell', '--root', root, 'look around'], home);
    expect(result.code).toBe(1);
    const calls = (logLines(home)[0]?.tool_calls ?? []) as { outcome: string; error?: string }[];
    expect(calls.map(({ outcome }) => outcome)).toEqual(['success', 'failure', 'failure']);
    expect(calls[1]?.error).toContain('no process with handle "proc_9"');
    expect(calls[2]?.error).toContain('pass --yes');
    expect(existsSync(join(root, 'started'))).toBe(false);
  });

  it('output past the budget: the model gets the exit code, stderr and the newest output, each result within the budget; a read says what it did not show', async () => {
    const root = tree();
    const logged = 'for i in $(seq 1 2000); do echo line $i; done; echo FATAL: build failed >&2; touch finished; exit 2';
    // Waits for the started command to be done (its marker), not for a fixed time.
    const compile = "while [ ! -e finished ]; do sleep 0.05; done; seq 1 3000; echo 'error TS2304: Cannot find name foo' >&2; exit 2";
    play.rounds = [
      { calls: [call('process', { operation: 'start', command: logged })] },
      { calls: [call('run_command', { command: compile })] },
      { calls: [call('process', { operation: 'read_output', handle: 'proc_1' })] },
      { calls: [call('process', { operation: 'read_output', handle: 'proc_1' })] },
      { reply: 'done' },
    ];
    const home = tempHome();
    const result = await argo(['-T', 'shell', '--yes', '--root', root, 'build it'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'done\n' });
    // Each round's result as the next request carries it, before an older round is summarized.
    const [compiled = '', firstRead = '', secondRead = ''] = [2, 3, 4].map((request) => messagesOf(chatBodies()[request]).at(-1)?.content ?? '');
    for (const content of [compiled, firstRead, secondRead]) expect(content.length).toBeLessThanOrEqual(4000);
    expect(JSON.parse(compiled)).toMatchObject({
      exit_code: 2,
      stdout_truncated: expect.stringMatching(/^showing the last [\d,]+ characters of 13,893 bytes; narrow the output/) as unknown,
      stdout: expect.stringMatching(/\n2999\n3000\n$/) as unknown,
      stderr: 'error TS2304: Cannot find name foo\n',
    });
    const read = JSON.parse(firstRead) as Record<string, unknown>;
    expect(read).toMatchObject({ handle: 'proc_1', stdout: expect.stringMatching(/\nline 2000\n$/) as unknown, stderr: 'FATAL: build failed\n' });
    const gone = Number(/^([\d,]+) characters of older output, not shown and not readable again/.exec(String(read.stdout_dropped))?.[1]?.replace(/,/g, ''));
    expect(gone + String(read.stdout).length).toBe(Array.from({ length: 2000 }, (_, i) => `line ${i + 1}\n`).join('').length);
    expect(JSON.parse(secondRead)).toMatchObject({ stdout: '', stderr: '' });
    expect(JSON.parse(secondRead)).not.toHaveProperty('stdout_dropped');
    // What the model was not shown is the user's still: each fitted result is saved whole.
    const [entry] = logLines(home);
    const readCall = (entry?.tool_calls as { name: string; round: number; saved_as?: string }[] | undefined)?.find((each) => each.round === 3);
    const savedRead = JSON.parse(readFileSync(join(home, readCall?.saved_as ?? 'missing'), 'utf8')) as { stdout: string };
    expect(savedRead.stdout).toBe(Array.from({ length: 2000 }, (_, i) => `line ${i + 1}\n`).join(''));
  });

  it('a command tool from config.json that fails after 3,000 lines: the model gets its exit code, its stderr and the end of its stdout, within the budget', async () => {
    const root = tree();
    writeFileSync(join(root, 'build.sh'), "#!/bin/sh\nseq 1 3000\necho 'error TS2304: Cannot find name foo' >&2\nexit 2\n", { mode: 0o755 });
    const home = tempHome({ commandTools: { build: { description: 'Build the project', argv: ['./build.sh'], sideEffects: false } } });
    play.rounds = [{ calls: [call('build', {})] }, { reply: 'done' }];
    expect(await argo(['-T', 'build', '--root', root, 'build it'], home)).toMatchObject({ code: 0, stdout: 'done\n' });
    const fed = messagesOf(chatBodies()[1]).at(-1);
    expect(fed?.role).toBe('tool');
    expect(fed?.content.length).toBeLessThanOrEqual(4000);
    expect(JSON.parse(fed?.content ?? '{}')).toEqual({
      exit_code: 2,
      stdout_truncated: expect.stringMatching(/^showing the last [\d,]+ characters of 13,893 bytes$/) as unknown,
      stdout: expect.stringMatching(/^\d+\n[\s\S]*\n2999\n3000\n$/) as unknown,
      stderr: 'error TS2304: Cannot find name foo\n',
    });
  });

  it.each<[string, string[], ScriptedRound[], boolean, string | null, string]>([
    ['answered', ['-T', 'fs'], [{ reply: 'Hi.' }], false, null, 'ok'],
    ['a side-effecting call with no terminal and no --yes', ['-T', 'shell'], [{ calls: [call('run_command', { command: 'touch x' })] }], false, 'confirmation_needed', 'tool_failures'],
    ['every call failing three rounds', ['-T', 'fs'], [{ calls: [call('read_file', { path: 'missing.txt' })] }], false, 'tool_failures', 'tool_failures'],
    ['a required parameter missing', ['-T', 'fs'], [{ calls: [call('read_file', {})] }], false, 'needs_input', 'needs_input'],
    ['out of rounds', ['-T', 'fs', '--max-iterations', '1'], [{ calls: [call('list_files', { pattern: '*' })] }], false, 'max_iterations', 'max_iterations'],
    ['invalid calls after the re-asks', ['-T', 'fs'], [{ calls: [call('grep', {})] }], false, 'invalid_response', 'invalid_response'],
    ['STOP set', ['-T', 'fs'], [{ reply: 'Hi.' }], true, 'stopped', 'stopped'],
  ])('--json error_code of an agent run, %s: %s', async (_case, args, rounds, stop, code, status) => {
    const home = tempHome();
    if (stop) expect((await argo(['stop'], home)).code).toBe(0);
    play.rounds = rounds;
    const result = await argo([...args, '--root', tree(), '--json', 'go'], home);
    expect(result.code).toBe(code === null ? 0 : 1);
    expect(JSON.parse(result.stdout)).toMatchObject({ status, error_code: code });
  });

  it('without a terminal and without --yes, a side-effecting call is a permanent failure that stops at once', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('run_command', { command: 'touch made.txt' })] }, { reply: 'never' }];
    const result = await argo(['-T', 'shell', '--root', root, 'make a file'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('argo: tool run_command failed: it has side effects and needs confirmation: pass --yes (there is no terminal to ask on)');
    expect(existsSync(join(root, 'made.txt'))).toBe(false);
    expect(chatBodies()).toHaveLength(1);
    expect(logLines(home)[0]).toMatchObject({ status: 'tool_failures', stop_reason: 'permanent_failure' });
  });

  it('--no-log: the permanent failure points to no log line, as none is written', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('run_command', { command: 'touch made.txt' })] }, { reply: 'never' }];
    const result = await argo(['-T', 'shell', '--root', tree(), '--no-log', '-q', 'make a file'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'argo: tool run_command failed: it has side effects and needs confirmation: pass --yes (there is no terminal to ask on)\n' +
        'argo: tool run_command failed and retrying cannot help (it has side effects and needs confirmation: pass --yes (there is no terminal to ask on)); fix the cause and ask again\n',
    );
    expect(logLines(home)).toEqual([]);
  });

  it.each([
    ['SIGINT', 130, 'argo: interrupted (logged as interrupted)\n', 'interrupted by the user'],
    ['SIGTERM', 143, 'argo: terminated (SIGTERM) (logged as interrupted)\n', 'interrupted by SIGTERM'],
    ['SIGHUP', 129, 'argo: hung up (SIGHUP) (logged as interrupted)\n', 'interrupted by SIGHUP (the terminal closed)'],
  ] as const)('%s during a tool kills its process group and exits %i, logged as interrupted', async (signal, code, told, error) => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('run_command', { command: 'echo $$ > started; sleep 30' })] }];
    const started = Date.now();
    const result = await argo(['-T', 'shell', '--yes', '--root', root, 'wait'], home, {
      onSpawn: (child) => {
        void waitFor(() => expect(existsSync(join(root, 'started'))).toBe(true)).then(() => child.kill(signal));
      },
    });
    expect(result.code).toBe(code);
    expect(result.stderr.endsWith(told)).toBe(true);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(logLines(home)[0]).toMatchObject({ status: 'interrupted', error });
    const shell = Number(readFileSync(join(root, 'started'), 'utf8'));
    expect(() => process.kill(shell, 0)).toThrow();
  });

  it('SIGTERM to a piped chat during a tool kills its process group, logs the turn interrupted and ends the chat with 143', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('run_command', { command: 'sleep 30 & echo $! > sleeper; echo $$ > started; wait' })] }];
    const started = Date.now();
    const result = await argo(['chat', '-T', 'shell', '--yes', '--root', root], home, {
      stdin: 'wait\nnever sent\n',
      keepStdinOpen: true,
      onSpawn: (child) => {
        void waitFor(() => expect(existsSync(join(root, 'started'))).toBe(true)).then(() => child.kill('SIGTERM'));
      },
    });
    expect(result.code).toBe(143);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(logLines(home).map((line) => [line.user_prompt, line.status, line.error])).toEqual([['wait', 'interrupted', 'interrupted by SIGTERM']]);
    expect(chatBodies()).toHaveLength(1);
    for (const name of ['started', 'sleeper']) {
      const pid = Number(readFileSync(join(root, name), 'utf8'));
      await waitFor(() => expect(alive(pid)).toBe(false));
    }
  });
});

describe('argo --tools killed with SIGKILL mid-run', () => {
  it('the next argo logs the turn with the calls of the rounds that ended: a file written is in its tool_calls', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [
      { calls: [call('write_file', { path: 'created-by-agent.txt', content: 'hi' })] },
      { calls: [call('run_command', { command: 'echo $$ > started; sleep 30' })] },
      { reply: 'never' },
    ];
    const journal = join(home, 'unfinished');
    /** The draft's fields once its first round is in it. */
    const draft = (): Record<string, unknown> => {
      const [name] = readdirSync(journal).filter((file) => file.endsWith('.json'));
      return (JSON.parse(readFileSync(join(journal, name ?? ''), 'utf8')) as { entry: Record<string, unknown> }).entry;
    };
    const killed = await argo(['-T', 'dev', '--yes', '--root', root, 'make a file, then wait'], home, {
      onSpawn: (child) => {
        void waitFor(() => {
          expect(existsSync(join(root, 'started'))).toBe(true);
          expect(draft().iterations).toBe(1);
        }).then(() => child.kill('SIGKILL'));
      },
    });
    expect(killed.signal).toBe('SIGKILL');
    // Its command outlives it (argo had no time to end it): ended here.
    process.kill(-Number(readFileSync(join(root, 'started'), 'utf8')), 'SIGKILL');
    expect(readFileSync(join(root, 'created-by-agent.txt'), 'utf8')).toBe('hi');
    expect(logLines(home)).toEqual([]);

    const logs = await argo(['logs', '--json'], home);
    expect(logs).toMatchObject({ code: 0, stderr: 'argo: logged 1 turn an earlier argo left unfinished (killed or crashed): argo logs --status interrupted\n' });
    const [line] = logLines(home);
    expect(line).toMatchObject({
      status: 'interrupted',
      tools: ['edit_file', 'list_files', 'process', 'read_file', 'run_command', 'search_files', 'write_file'],
      iterations: 1,
      all_failure_rounds: 0,
      stop_reason: 'interrupted',
      compacted: [],
      tool_calls: [{ name: 'write_file', arguments: { path: 'created-by-agent.txt', content: 'hi' }, outcome: 'success', round: 1 }],
    });
    expect(line?.error).toMatch(/^argo ended before this turn was logged/);
    expect(line?.request_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(line?.tool_definitions_sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

// fetch_url is offered only where the web answers: this makes its check pass offline too.
const web = { NODE_OPTIONS: `--import ${fileURLToPath(new URL('../support/web-reachable.mjs', import.meta.url))}` };

/** A web server on 127.0.0.1 for the describe block it is made in; `base()` is its URL once listening. */
function pageServer(handler: RequestListener): { base: () => string } {
  const pages = createServer(handler);
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((listening) => pages.listen(0, '127.0.0.1', listening));
    base = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    pages.closeAllConnections();
    pages.close();
  });
  return { base: () => base };
}

describe('argo --tools: fetch_url', () => {
  const pages = pageServer((request, response) => {
    if (request.url === '/open') {
      // Its words, then the connection held open: a long poll, a server that never finishes.
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('word '.repeat(4000));
    } else response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  });

  it('a page that stays open gives the piece its budget shows as soon as it has sent that much', async () => {
    play.rounds = [{ calls: [call('fetch_url', { url: `${pages.base()}/open` })] }, { reply: 'read it' }];
    const result = await argo(['-T', 'web', 'read it'], tempHome({ toolTimeouts: { fetch_url: 5000 } }), { env: web });
    expect(result).toMatchObject({ code: 0, stdout: 'read it\n' });
    const fed = JSON.parse(messagesOf(chatBodies()[1]).at(-1)?.content ?? '{}') as Record<string, unknown>;
    expect(fed).toMatchObject({ truncated: true, text: expect.stringMatching(/^word word /) as unknown });
  });

  it.each<[string, string, string]>([
    // case, url, the failure
    ['a port fetch refuses', 'http://127.0.0.1:6000/', `127.0.0.1:6000: Node's fetch refuses to connect to that port`],
    ['a page that is not text', '/image.png', 'sent image/png, which is not text'],
  ])('%s is a permanent failure: the run stops at once, the URL fetched once', async (_case, url, failure) => {
    play.rounds = [{ calls: [call('fetch_url', { url: url.startsWith('/') ? `${pages.base()}${url}` : url })] }, { reply: 'never' }];
    const result = await argo(['-T', 'web', 'read it'], tempHome(), { env: web });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`argo: tool fetch_url failed and retrying cannot help (`);
    expect(result.stderr).toContain(failure);
    expect(chatBodies()).toHaveLength(1);
  });
});

describe('argo --tools: memo and replay', () => {
  it('search_history names a renamed session as it is named now, which its session argument then takes', async () => {
    const home = tempHome();
    play.rounds = [{ reply: 'noted' }];
    expect(await argo(['-s', 'alpha', 'the password is hunter2'], home)).toMatchObject({ code: 0 });
    expect(await argo(['sessions', 'rename', 'alpha', 'gamma'], home)).toMatchObject({ code: 0 });
    play.next = 0;
    play.rounds = [{ calls: [call('search_history', { query: 'hunter2' })] }, { calls: [call('search_history', { query: 'hunter2', session: 'gamma' })] }, { reply: 'found' }];
    ollama.requests.length = 0;
    expect(await argo(['-T', 'history', 'where did I say it?'], home)).toMatchObject({ code: 0, stdout: 'found\n' });
    const found = [1, 2].map((request) => (JSON.parse(messagesOf(chatBodies()[request]).at(-1)?.content ?? '{}') as { turns: unknown }).turns);
    expect(found).toEqual([[expect.objectContaining({ session: 'gamma', prompt: 'the password is hunter2' })], [expect.objectContaining({ session: 'gamma' })]]);
  });

  it('the memo tool writes memo.json, and the next request of the run already carries it in its system prompt', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('memo', { operation: 'set', key: 'lang', value: 'TypeScript' })] }, { reply: 'noted' }];
    expect((await argo(['-T', 'memo', 'remember TypeScript'], home)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(home, 'memo.json'), 'utf8'))).toEqual({ lang: 'TypeScript' });
    const [first, second] = chatBodies().map((body) => messagesOf(body)[0]?.content ?? '');
    expect(first).not.toContain('lang');
    expect(second).toContain('Memo (notes kept with the memo tool):\n- lang: "TypeScript"');
  });

  it.each([
    ['broken before the run: it ends before its first request', false],
    ['broken by hand while a round ran (here by its command): the calls that ran are logged', true],
  ])('a memo.json %s, with its reason said and logged, --json giving error_code', async (_case, midRun) => {
    const home = tempHome();
    const root = tree();
    const memo = join(home, 'memo.json');
    expect((await argo(['memo', 'set', 'lang', 'TS'], home)).code).toBe(0);
    if (!midRun) writeFileSync(memo, '{"lang": ');
    const breakIt = `printf '{"lang": ' > '${memo}'`;
    play.rounds = [{ reply: 'On it.', calls: [call('write_file', { path: 'made.txt', content: 'important' }), call('run_command', { command: breakIt })] }, { reply: 'Done.' }];
    const reason = `${memo} is not valid JSON; fix it by hand or delete it (the memo then starts empty)`;
    const result = await argo(['-T', 'dev', '--root', root, '--yes', '--json', 'x'], home);
    expect(result).toMatchObject({ code: 1, stderr: `argo: ${reason} (logged as error)\n` });
    const ran = midRun ? [expect.objectContaining({ name: 'write_file', outcome: 'success' }), expect.objectContaining({ name: 'run_command', outcome: 'success' })] : [];
    const fields = { status: 'error', error: reason, stop_reason: 'memo_unreadable', tool_calls: ran, iterations: midRun ? 1 : 0, response: midRun ? 'On it.' : '' };
    const { response, ...logged } = fields;
    expect(JSON.parse(result.stdout)).toMatchObject({ ...fields, all_failure_rounds: 0, error_code: 'argo_error' });
    expect(logLines(home)).toEqual([expect.objectContaining({ ...logged, model_response: response, all_failure_rounds: 0, compacted: [] })]);
    expect(chatBodies()).toHaveLength(midRun ? 1 : 0);
    expect(existsSync(join(root, 'made.txt'))).toBe(midRun);
  });

  it('a memo.json edited past the limits: a run refuses it naming the limit and the fix; argo memo list, set and rm still work on it, so it can be mended', async () => {
    const home = tempHome();
    const memo = join(home, 'memo.json');
    writeFileSync(memo, JSON.stringify(Object.fromEntries(Array.from({ length: 105 }, (_, i) => [`k${String(i).padStart(3, '0')}`, 'v']))), { mode: 0o600 });
    play.rounds = [{ reply: 'never' }];
    const reason = `${memo} holds 105 entries, more than the 100 allowed; remove 5 with "argo memo rm KEY" (argo memo lists them), then ask again`;
    expect(await argo(['-T', 'memo', 'x'], home)).toMatchObject({ code: 1, stderr: `argo: ${reason} (logged as error)\n` });
    expect(logLines(home)).toEqual([expect.objectContaining({ status: 'error', stop_reason: 'memo_unreadable', error: reason })]);
    expect(await argo(['-T', 'memo', '--explain', 'x'], home)).toMatchObject({ code: 1, stderr: `argo: ${reason}\n` });
    expect(chatBodies()).toHaveLength(0);
    expect((await argo(['memo', 'list', '--json'], home)).stdout).toContain('"k104":"v"');
    expect(await argo(['memo', 'set', 'newkey', 'v'], home)).toMatchObject({ code: 2, stderr: 'argo: the memo is full (it holds 105 entries, more than the 100 allowed); remove 6 first (argo memo rm KEY)\n' });
    for (const key of ['k100', 'k101', 'k102', 'k103']) expect((await argo(['memo', 'rm', key], home)).code).toBe(0);
    expect(await argo(['memo', 'set', 'k000', 'v'.repeat(2000)], home)).toMatchObject({ code: 2 });
    expect((await argo(['memo', 'rm', 'k104'], home)).code).toBe(0);
    play.rounds = [{ reply: 'Hi.' }];
    expect(await argo(['-T', 'memo', 'x'], home)).toMatchObject({ code: 0, stdout: 'Hi.\n' });
  });

  it("a memo set and a get of its key in one round run in call order: the get returns the set's value", async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('memo', { operation: 'set', key: 'lang', value: 'TypeScript' }), call('memo', { operation: 'get', key: 'lang' })] }, { reply: 'noted' }];
    expect((await argo(['-T', 'memo', 'remember TypeScript'], home)).code).toBe(0);
    const [, got] = (logLines(home)[0]?.tool_calls ?? []) as unknown[];
    expect(got).toMatchObject({ name: 'memo', outcome: 'success', result: '{"key":"lang","value":"TypeScript"}' });
  });

  it('argo memo from the shell: set, list, get, rm; a missing key is exit 1 with one line naming it and where to look', async () => {
    const home = tempHome();
    expect(await argo(['memo'], home)).toMatchObject({ code: 0, stdout: '', stderr: 'argo: the memo is empty (argo memo set KEY VALUE adds an entry)\n' });
    expect((await argo(['memo', 'set', 'style', 'tabs, no semicolons'], home)).code).toBe(0);
    expect((await argo(['memo', 'set', 'lang', 'TypeScript'], home)).code).toBe(0);
    expect(await argo(['memo'], home)).toMatchObject({ code: 0, stdout: 'lang\t"TypeScript"\nstyle\t"tabs, no semicolons"\n' });
    expect(await argo(['memo', 'get', 'style'], home)).toMatchObject({ code: 0, stdout: 'tabs, no semicolons\n', stderr: '' });
    expect(JSON.parse((await argo(['memo', 'list', '--json'], home)).stdout)).toEqual({ style: 'tabs, no semicolons', lang: 'TypeScript' });
    expect(await argo(['memo', 'rm', 'style'], home)).toMatchObject({ code: 0, stderr: '' });
    for (const verb of ['get', 'rm']) {
      expect(await argo(['memo', verb, 'style'], home)).toMatchObject({ code: 1, stdout: '', stderr: 'argo: no memo entry "style" (argo memo lists them)\n' });
    }
    expect(JSON.parse(readFileSync(join(home, 'memo.json'), 'utf8'))).toEqual({ lang: 'TypeScript' });
  });

  it('replay sends an agent turn as its prompt and final answer only; a needs_input turn is never replayed', async () => {
    const home = tempHome();
    play.rounds = [{ calls: [call('list_files', { pattern: '*' })] }, { reply: 'There are two files.' }];
    expect((await argo(['-s', 'work', '-T', 'fs', '--root', tree(), 'what files are there?'], home)).code).toBe(0);
    play.rounds = [{ calls: [call('read_file', {})] }];
    play.next = 0;
    expect((await argo(['-s', 'work', '-T', 'fs', 'read one'], home)).code).toBe(1);
    const explained = await argo(['-s', 'work', '--replay', 'last:5', '--explain', '--json', 'and now?'], home);
    const messages = (JSON.parse(explained.stdout) as { request: { body: { messages: Message[] } } }).request.body.messages;
    expect(messages.slice(1)).toEqual([
      { role: 'user', content: 'what files are there?' },
      { role: 'assistant', content: 'There are two files.' },
      { role: 'user', content: 'and now?' },
    ]);
  });
});

describe('argo --tools: MCP, STOP, config', () => {
  it('calls a real MCP server\'s tool through the SDK', async () => {
    const home = tempHome({ mcpServers: { calc: TEST_MCP_SERVER } });
    play.rounds = [{ calls: [call('add', { a: 2, b: 40 })] }, { reply: 'It is 42.' }];
    const result = await argo(['-T', 'mcp:calc', 'add 2 and 40'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'It is 42.\n' });
    const first = chatBodies()[0];
    expect((first?.tools as { function: { name: string } }[]).map((tool) => tool.function.name)).toEqual(['add', 'attach', 'crash', 'shout']);
    const [sent, fed] = messagesOf(chatBodies()[1]).slice(-2);
    expect(fed).toEqual({ role: 'tool', tool_name: 'add', tool_call_id: sent?.tool_calls?.[0]?.id, content: '{"content":"42"}' });
    expect(fed?.tool_call_id).toMatch(OLLAMA_ID);
  });

  it('an MCP server behind a launcher that leaves a child holding its pipe does not keep argo running after the answer', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'argo-mcp-launcher-'));
    const pidFile = join(scratch, 'lingering.pid');
    // The launcher starts a process that keeps the server's stdout open and never exits, then becomes the server.
    const linger = `${JSON.stringify(process.execPath)} -e 'require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(process.pid)); setInterval(() => {}, 1000)' &`;
    const launcher = { command: '/bin/sh', args: ['-c', `${linger} exec ${JSON.stringify(TEST_MCP_SERVER.command)} ${JSON.stringify(TEST_MCP_SERVER.args[0] ?? '')}`] };
    const home = tempHome({ mcpServers: { calc: launcher } });
    play.rounds = [{ calls: [call('add', { a: 2, b: 3 })] }, { reply: 'It is 5.' }];
    try {
      // runArgo waits for the process to exit: before the fix it never did.
      expect(await argo(['-T', 'mcp:calc', 'add 2 and 3'], home)).toMatchObject({ code: 0, stdout: 'It is 5.\n' });
      expect(existsSync(pidFile)).toBe(true);
    } finally {
      if (existsSync(pidFile)) process.kill(Number(readFileSync(pidFile, 'utf8')));
    }
  });

  it('an MCP server named by a path relative to --root starts wherever argo is started from', async () => {
    const root = tree();
    // The server's file lives in the project; config names it as command tools name theirs, from the root.
    writeFileSync(join(root, 'calc-server.mjs'), `import ${JSON.stringify(TEST_MCP_SERVER.args[0] ?? '')};\n`);
    const home = tempHome({ mcpServers: { calc: { command: TEST_MCP_SERVER.command, args: ['./calc-server.mjs'] } } });
    for (const cwd of [root, tmpdir()]) {
      const explained = await argo(['-T', 'mcp:calc', '--root', root, '--explain', '--json', 'add 2 and 40'], home, { cwd });
      expect(explained.code).toBe(0);
      const tools = (JSON.parse(explained.stdout) as { request: { body: { tools: { function: { name: string } }[] } } }).request.body.tools;
      expect(tools.map((tool) => tool.function.name)).toEqual(['add', 'attach', 'crash', 'shout']);
    }
  });

  it("--explain and argo tools show an MCP server's toolset with the tools it listed, not as empty", async () => {
    const home = tempHome({ mcpServers: { b: TEST_MCP_SERVER }, tools: ['mcp:b', 'fs'] });
    const explained = await argo(['--explain', 'go'], home);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('  mcp:b        → add, attach, crash, shout\n');
    const json = JSON.parse((await argo(['--explain', '--json', 'go'], home)).stdout) as { tools: { expanded: { toolset: string; tools: string[] }[] } };
    expect(json.tools.expanded).toEqual([
      { toolset: 'mcp:b', tools: ['add', 'attach', 'crash', 'shout'] },
      { toolset: 'fs', tools: ['list_files', 'read_file', 'search_files'] },
    ]);
    const listed = await argo(['tools'], home);
    expect(listed.stdout).toContain('  mcp:b          add, attach, crash, shout  (config)\n');
    expect((JSON.parse((await argo(['tools', '--json'], home)).stdout) as { toolsets: { name: string; tools: string[] }[] }).toolsets.find((set) => set.name === 'mcp:b')?.tools).toEqual(['add', 'attach', 'crash', 'shout']);
    expect(chatBodies()).toHaveLength(0);
  });

  it('a single MCP tool asked by name: only that tool goes to the model', async () => {
    const home = tempHome({ mcpServers: { calc: TEST_MCP_SERVER } });
    play.rounds = [{ calls: [call('add', { a: 1, b: 2 })] }, { reply: 'It is 3.' }];
    const result = await argo(['-T', 'fs,add', 'add 1 and 2'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'It is 3.\n' });
    expect((chatBodies()[0]?.tools as { function: { name: string } }[]).map((tool) => tool.function.name)).toEqual(['add', 'list_files', 'read_file', 'search_files']);
    const typo = await argo(['-T', 'ad', 'x'], home);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/unknown toolset or tool "ad".*no MCP server \(calc\) offers it either/);
  });

  it("an MCP tool whose schema Ollama cannot read is left out with a note naming where; the run goes on with the server's other tools", async () => {
    const home = tempHome({ mcpServers: { calc: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_UNREADABLE: '1' } } } });
    play.rounds = [{ calls: [call('add', { a: 2, b: 40 })] }, { reply: 'It is 42.' }];
    const result = await argo(['-T', 'mcp:calc', '-q', 'add 2 and 40'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'It is 42.\n' });
    expect(result.stderr).toBe('argo: tool mcp:calc/lookup is unavailable (Ollama cannot read its input schema: properties.key.required must be a list of names; left out); going on without it\n');
    // Sent, its schema would have been a 400 for every request of the run (the stand-in binds tools as Ollama does).
    expect(chatBodies().map((body) => (body.tools as { function: { name: string } }[]).map((tool) => tool.function.name))).toEqual([['add'], ['add']]);
    expect(logLines(home)[0]).toMatchObject({ status: 'ok', tools: ['add'], tools_unavailable: [{ name: 'mcp:calc/lookup', reason: 'Ollama cannot read its input schema: properties.key.required must be a list of names; left out' }] });
    const listed = await argo(['tools', '--json'], home);
    expect((JSON.parse(listed.stdout) as { tools: { name: string; available: boolean; reason: string | null }[] }).tools.find((tool) => tool.name === 'mcp:calc/lookup')).toMatchObject({ available: false, reason: expect.stringContaining('properties.key.required') as unknown });
  });

  it.each([
    // what the tool's error says → the line shown, the call's outcome
    ['Authentication is required to read acme/app', 'argo: tool shout failed: Authentication is required to read acme/app\n', 'failure'],
    ['text is required', 'argo: tool shout needs "text", which the model did not give; ask again with it in your question (logged as needs_input)\n', 'needs_input'],
  ])('an MCP tool\'s error %j: needs_input only when it names one of the tool\'s parameters', async (says, line, outcome) => {
    const home = tempHome({ mcpServers: { gh: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_SHOUT_SAYS: says } } } });
    play.rounds = [{ calls: [call('shout', { text: 'hi', fail: true })] }, { reply: 'Sign in first.' }];
    const result = await argo(['-T', 'mcp:gh', '--yes', '-q', 'shout hi'], home);
    expect(result.stderr).toBe(line);
    expect(logLines(home)[0]?.tool_calls).toMatchObject([{ name: 'shout', outcome, error: says }]);
  });

  it('an MCP server that does not start is left out with a note; the rest still work', async () => {
    const home = tempHome({ mcpServers: { broken: { command: '/nonexistent/server' } } });
    play.rounds = [{ reply: 'fine' }];
    const result = await argo(['-T', 'mcp:broken,memo', 'hi'], home);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^argo: tool mcp:broken is unavailable \(MCP server "broken" did not start/);
    expect(logLines(home)[0]).toMatchObject({ tools: ['memo'], tools_unavailable: [{ name: 'mcp:broken' }] });
  });

  it('an MCP server that exits mid-run fails the call as permanent: the loop stops at once, saying it exited', async () => {
    const home = tempHome({ mcpServers: { calc: TEST_MCP_SERVER } });
    play.rounds = [{ calls: [call('crash', {})] }, { calls: [call('add', { a: 1, b: 2 })] }, { reply: 'never' }];
    const result = await argo(['-T', 'mcp:calc', 'crash it'], home);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('argo: tool crash failed: MCP server "calc" exited (exit code 7)\n');
    expect(chatBodies()).toHaveLength(1);
    expect(logLines(home)[0]).toMatchObject({ status: 'tool_failures', stop_reason: 'permanent_failure' });
  });

  it("servers that exit at start or offer a taken name: notes name the server's last stderr line and the losing tool, never a tool the run has", async () => {
    const home = tempHome({ mcpServers: { calc: TEST_MCP_SERVER, copy: TEST_MCP_SERVER, failing: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_FAIL: '1' } } } });
    play.rounds = [{ reply: 'fine' }];
    const result = await argo(['-T', 'mcp:calc,mcp:copy,mcp:failing', 'hi'], home);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('argo: tool mcp:copy/add is unavailable ("add" is already offered by mcp:calc; left out); going on without it\n');
    expect(result.stderr).toMatch(/argo: tool mcp:failing is unavailable \(MCP server "failing" did not start \(.*; exit code 3; it said: cannot open the database\)\)/);
    expect(result.stderr).not.toContain('\u001b');
    const line = defined(logLines(home)[0]);
    const tools = line.tools as string[];
    const gone = (line.tools_unavailable as { name: string }[]).map((entry) => entry.name);
    expect(tools).toEqual(['add', 'attach', 'crash', 'shout']);
    expect(gone).toEqual(['mcp:copy/add', 'mcp:copy/attach', 'mcp:copy/crash', 'mcp:copy/shout', 'mcp:failing']);
  });

  it.each([
    ['inside its line', ' was refused', /^MCP server "gh" did not start \(.*; exit code 3; it said: GH_TOKEN=\*\*\* was refused\)$/],
    // Masked before Argo wrapped it: Argo's closing bracket is not taken for part of the token.
    ['at the end of its line', '', /^MCP server "gh" did not start \(.*; exit code 3; it said: GH_TOKEN=\*\*\*\)$/],
  ])("a server's stderr quoted in a reason, its token %s: the log line, the note and argo tools say the same one line, the token masked", async (_where, after, expected) => {
    const token = `ghp_${'Q'.repeat(36)}`;
    const home = tempHome({ mcpServers: { gh: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_FAIL: '1', ARGO_TEST_MCP_FAIL_SAYS: `\u001b[31mbad credentials\u001b[0m\r\nGH_TOKEN=${token}${after}\n` } } } });
    play.rounds = [{ reply: 'fine' }];
    const result = await argo(['-T', 'mcp:gh,memo', 'hi'], home);
    expect(result.code).toBe(0);
    const reason = defined((logLines(home)[0]?.tools_unavailable as { name: string; reason: string }[] | undefined)?.[0]).reason;
    expect(reason).toMatch(expected);
    expect(result.stderr).toContain(`argo: tool mcp:gh is unavailable (${reason}); going on without it\n`);
    const listed = await argo(['tools', '--json'], home);
    expect(listed.stdout).toContain(JSON.stringify(reason));
    expect(`${result.stderr}${listed.stdout}${JSON.stringify(logLines(home))}`).not.toContain(token.slice(0, 10));
  });

  it('argo stop halts a running answer within a chunk and keeps its partial text', async () => {
    const home = tempHome();
    play.rounds = [{ reply: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ') }];
    ollama.setScenario({ delayMs: 20 });
    let stopped = false;
    const result = await argo(['-T', 'memo', 'talk'], home, {
      onStdout: () => {
        if (stopped) return;
        stopped = true;
        void runArgo(['stop'], { home });
      },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('argo: stopped by the STOP signal; run "argo stop --clear" to allow runs again (logged as stopped)');
    const [entry] = logLines(home);
    expect(entry).toMatchObject({ status: 'stopped', stop_reason: 'stop_signal' });
    expect(String(entry?.model_response)).toMatch(/^ ?w0/);
    expect(String(entry?.model_response).length).toBeLessThan(200 * 4);
    // Set, it stops the next run before any request.
    ollama.requests.length = 0;
    expect((await argo(['-T', 'memo', 'again'], home)).code).toBe(1);
    expect(chatBodies()).toHaveLength(0);
  });

  it.each<[string, 'stop' | 'ctrl-c' | 'error', number, string, string]>([
    // how the response is cut after its calls came → exit code, status, each call's error
    ['argo stop', 'stop', 1, 'stopped', 'not run: the STOP signal ended the run first'],
    ['Ctrl-C', 'ctrl-c', 130, 'interrupted', 'not run: the run was interrupted first'],
    ['an error line from Ollama', 'error', 1, 'error', 'not run: the model request failed before the response ended'],
  ])('the calls of a response cut short after they came (%s) are logged not_run, never run', async (_case, how, code, status, error) => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ reply: 'Hi.', calls: [call('write_file', { path: 'made.txt', content: 'x' }), call('read_file', { path: 'notes.txt' })] }, { reply: 'never' }];
    // The words, then the calls' chunk: held, or failed, after both.
    ollama.setScenario(how === 'error' ? { errorMidStream: { afterChunks: 2, message: 'runner crashed' } } : { holdAfter: 2 });
    const result = await argo(['-T', 'fs,edit', '--yes', '--root', root, '-q', 'go'], home, {
      onSpawn: (child) => {
        if (how === 'error') return;
        // The words on stdout: argo has read the stream up to the calls, written just after them.
        let out = '';
        const shown = new Promise<void>((resolve) => {
          child.stdout?.on('data', (data: Buffer) => {
            out += data.toString();
            if (out.includes('Hi.')) resolve();
          });
        });
        void Promise.all([ollama.waitForHold(), shown]).then(async () => {
          if (how === 'stop') await runArgo(['stop'], { home });
          else child.kill('SIGINT');
        });
      },
    });
    expect(result).toMatchObject({ code, stdout: 'Hi.\n' });
    expect(logLines(home)[0]).toMatchObject({
      status,
      tool_calls: [
        { name: 'write_file', arguments: { path: 'made.txt', content: 'x' }, outcome: 'not_run', round: 1, error },
        { name: 'read_file', arguments: { path: 'notes.txt' }, outcome: 'not_run', round: 1, error },
      ],
    });
    expect(existsSync(join(root, 'made.txt'))).toBe(false);
    expect(chatBodies()).toHaveLength(1);
  });

  it('with STOP set, --explain shows the real tools and first request, says STOP is set, and its hash is the one the run sends once STOP is cleared', async () => {
    const home = tempHome();
    const root = tree();
    expect((await argo(['stop'], home)).code).toBe(0);
    const text = await argo(['-T', 'fs', '--root', root, '--explain', 'x'], home);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('  fs           → list_files, read_file, search_files\n');
    expect(text.stdout).toContain('resolved   list_files, read_file, search_files\n');
    expect(text.stdout).toContain('stop       set: a run now stops before its first request; "argo stop --clear" allows runs again\n');
    const stopped = await argo(['-T', 'fs', '--root', root, '--explain', '--json', 'x'], home);
    const explained = JSON.parse(stopped.stdout) as { stop?: boolean; request_sha256: string; request: { body: { tools: { function: { name: string } }[] } }; tools: { tools: string[] } };
    expect(explained.stop).toBe(true);
    expect(explained.tools.tools).toEqual(['list_files', 'read_file', 'search_files']);
    expect(explained.request.body.tools.map((tool) => tool.function.name)).toEqual(['list_files', 'read_file', 'search_files']);
    expect(chatBodies()).toHaveLength(0);
    expect((await argo(['stop', '--clear'], home)).code).toBe(0);
    const cleared = JSON.parse((await argo(['-T', 'fs', '--root', root, '--explain', '--json', 'x'], home)).stdout) as { stop?: boolean; request_sha256: string };
    expect(cleared.stop).toBeUndefined();
    expect(cleared.request_sha256).toBe(explained.request_sha256);
    expect((await argo(['-T', 'fs', '--root', root, '--explain', 'x'], home)).stdout).not.toContain('stop ');
  });

  it('a run STOP ended before it began logs the tools its names resolve to, and keeps no empty definitions file', async () => {
    const home = tempHome();
    expect((await argo(['stop'], home)).code).toBe(0);
    const result = await argo(['-T', 'fs,-search_files', '--root', tree(), 'hello'], home);
    expect(result.code).toBe(1);
    const [line] = logLines(home);
    expect(line).toMatchObject({ status: 'stopped', stop_reason: 'stop_signal', tools: ['list_files', 'read_file'], tool_calls: [] });
    expect(line?.tool_definitions_sha256).toBeUndefined();
    expect(existsSync(join(home, 'tool-definitions'))).toBe(false);
    expect(chatBodies()).toHaveLength(0);
  });

  it('argo stop cuts a tool that is running: its process group is killed, exit 1, logged stopped', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ calls: [call('run_command', { command: 'echo $$ > started; sleep 30' })] }, { reply: 'never' }];
    const started = Date.now();
    const result = await argo(['-T', 'shell', '--yes', '--root', root, 'wait'], home, {
      onSpawn: () => {
        void waitFor(() => expect(existsSync(join(root, 'started'))).toBe(true)).then(() => runArgo(['stop'], { home }));
      },
    });
    expect(result.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(result.stderr).toContain('argo: stopped by the STOP signal; run "argo stop --clear" to allow runs again (logged as stopped)');
    expect(chatBodies()).toHaveLength(1);
    expect(logLines(home)[0]).toMatchObject({ status: 'stopped', stop_reason: 'stop_signal' });
    const shell = Number(readFileSync(join(root, 'started'), 'utf8'));
    expect(() => process.kill(shell, 0)).toThrow();
  });

  it.each<[string, string[]]>([
    ['logged', []],
    ['--no-log', ['--no-log']],
  ])('argo stop cuts a running tool when the data home did not exist as the run began (%s)', async (_case, extra) => {
    const home = join(tempHome(), 'fresh');
    const root = tree();
    play.rounds = [{ calls: [call('run_command', { command: 'echo $$ > started; sleep 30' })] }, { reply: 'never' }];
    const started = Date.now();
    const result = await argo(['-T', 'shell', '--yes', '--root', root, ...extra, 'wait'], home, {
      onSpawn: () => {
        void waitFor(() => expect(existsSync(join(root, 'started'))).toBe(true)).then(() => runArgo(['stop'], { home }));
      },
    });
    expect(result.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(8000);
    expect(result.stderr).toContain('argo: stopped by the STOP signal');
    const shell = Number(readFileSync(join(root, 'started'), 'utf8'));
    expect(() => process.kill(shell, 0)).toThrow();
  });

  it('argo stop says what is at STOP when it is not the signal: a link or a folder, set again, cleared', async () => {
    const home = tempHome();
    const stop = join(home, 'STOP');
    const run = async (args: string[]): Promise<[number | null, string]> => {
      const result = await runArgo(['stop', ...args], { home });
      return [result.code, result.stdout + result.stderr];
    };
    symlinkSync(join(home, 'gone'), stop);
    expect(await run([])).toEqual([1, `argo: ${stop} is a symbolic link, not a file, so STOP is not set; remove it, then run "argo stop" again\n`]);
    expect(await run(['--status'])).toEqual([0, `STOP is not set: ${stop} is a symbolic link, and only a regular file counts; "argo stop --clear" removes it\n`]);
    expect(await run(['--clear'])).toEqual([0, `STOP was not set; removed ${stop} (a symbolic link, which does not count)\n`]);
    expect((await run([]))[0]).toBe(0);
    const [code, said] = await run([]);
    expect([code, said]).toEqual([0, expect.stringMatching(/^STOP was already set \(.*STOP, since \d{4}-.*Z\); "argo stop --clear" lets agent runs go on\n$/)]);
    expect(await run(['--clear'])).toEqual([0, 'STOP cleared; agent runs may go on\n']);
    mkdirSync(join(stop, 'inside'), { recursive: true });
    // --status offers --clear only for what it removes: a folder with files in it is the user's to move.
    expect(await run(['--status'])).toEqual([0, `STOP is not set: ${stop} is a folder with files in it, not the STOP signal; move or delete it yourself\n`]);
    expect(await run(['--clear'])).toEqual([1, `argo: ${stop} is a folder with files in it, not the STOP signal; move or delete it yourself\n`]);
    rmdirSync(join(stop, 'inside'));
    expect(await run(['--status'])).toEqual([0, `STOP is not set: ${stop} is a folder, and only a regular file counts; "argo stop --clear" removes it\n`]);
    expect(await run(['--clear'])).toEqual([0, `STOP was not set; removed ${stop} (a folder, which does not count)\n`]);
    expect(await run(['--status'])).toEqual([0, 'STOP is not set\n']);
  });

  it.each<[string, (path: string) => Promise<() => void>]>([
    [
      'a named pipe',
      (path) => {
        execFileSync('mkfifo', [path]);
        return Promise.resolve(() => undefined);
      },
    ],
    [
      'a socket',
      (path) =>
        new Promise((resolve) => {
          const server = createServer().listen(path, () => resolve(() => server.close()));
        }),
    ],
  ])('argo stop says what is at STOP when it is %s: one plain sentence each for set, --status and --clear', async (kind, plant) => {
    const home = tempHome();
    const stop = join(home, 'STOP');
    const end = await plant(stop);
    try {
      const run = async (args: string[]): Promise<[number | null, string]> => {
        const result = await runArgo(['stop', ...args], { home });
        return [result.code, result.stdout + result.stderr];
      };
      expect(await run([])).toEqual([1, `argo: ${stop} is ${kind}, not a file, so STOP is not set; remove it, then run "argo stop" again\n`]);
      expect(await run(['--status'])).toEqual([0, `STOP is not set: ${stop} is ${kind}, and only a regular file counts; "argo stop --clear" removes it\n`]);
      expect(await run(['--clear'])).toEqual([0, `STOP was not set; removed ${stop} (${kind}, which does not count)\n`]);
      expect(existsSync(stop)).toBe(false);
    } finally {
      end();
    }
  });

  it('argo stop --json: the state after the call as {stop, since, path}, exit 0 set or not (scripts read "stop"); what blocks STOP is still exit 1', async () => {
    const home = tempHome();
    const path = join(home, 'STOP');
    const run = async (args: string[]) => {
      const result = await runArgo(['stop', ...args, '--json'], { home });
      return { code: result.code, stderr: result.stderr, json: result.stdout === '' ? null : (JSON.parse(result.stdout) as unknown) };
    };
    const unset = { code: 0, stderr: '', json: { stop: false, since: null, path } };
    expect(await run(['--status'])).toEqual(unset);
    const set = await run([]);
    expect(set).toEqual({ code: 0, stderr: '', json: { stop: true, since: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/) as string, path } });
    // The file's time, as --status says it; set again, it is left as it was.
    const since = statSync(path).mtime.toISOString();
    expect((set.json as { since: string }).since).toBe(since);
    expect(await run(['--status'])).toEqual({ code: 0, stderr: '', json: { stop: true, since, path } });
    expect(await run([])).toEqual({ code: 0, stderr: '', json: { stop: true, since, path } });
    expect(await run(['--clear'])).toEqual(unset);
    expect(await run(['--clear'])).toEqual(unset);
    mkdirSync(path);
    expect(await run(['--status'])).toEqual(unset);
    expect(await run([])).toEqual({ code: 1, stderr: `argo: ${path} is a folder, not a file, so STOP is not set; remove it, then run "argo stop" again\n`, json: null });
    const both = await runArgo(['stop', '--clear', '--status', '--json'], { home });
    expect([both.code, both.stderr]).toEqual([2, 'argo: --clear and --status: choose one\n']);
  });

  it.each([
    [{ toolsets: { a: { includes: ['b'] }, b: { includes: ['a'] } } }, ['-T', 'a'], 'toolset cycle: a → b → a'],
    [{ tools: ['fss'] }, [], 'config.json: "tools": unknown toolset or tool "fss"'],
    [{ commandTools: { x: { description: 'x', argv: ['ls'], parameters: { type: 'string' } } } }, ['-T', 'x'], 'commandTools."x".parameters must be a JSON Schema object'],
    [{ mcpServers: { m: { args: ['x'] } } }, ['-T', 'fs'], '"mcpServers.m.command" is missing'],
    [{ commandTools: { x: { argv: ['ls'] } } }, ['-T', 'fs'], '"commandTools.x" needs "description" and "argv"'],
    [{ maxIterations: 0 }, ['-T', 'fs'], '"maxIterations" must be at least 1'],
    [{ commandTools: { x: { description: 'x', argv: ['ls'], parameters: { type: 'object', properties: {}, required: 'who' } } } }, ['-T', 'x'], 'argo: config.json: commandTools."x".parameters.required must be array, as JSON Schema says; fix the tool\'s parameters\n'],
    [{ commandTools: { shell: { description: 'x', argv: ['ls'] } } }, ['-T', 'shell'], 'argo: config.json: commandTools."shell" has the name of a toolset (built-in); choose another name\n'],
    [{ toolsets: { read_file: { tools: ['run_command'] } } }, ['-T', 'read_file'], 'argo: config.json: toolsets."read_file" has the name of a built-in tool; choose another name\n'],
    [{ toolsets: { none: { tools: ['read_file'] } } }, ['-T', 'fs'], 'toolsets."none": "none" means no tools in --tools and "tools"; choose another name\n'],
  ])('bad config %j is a usage error (exit 2) naming it', async (config, args, message) => {
    const result = await argo([...args, '--explain', 'hi'], tempHome(config));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it.each<[string, object, string[], number]>([
    ['a plain question: answered', {}, ['--explain', 'hi'], 0],
    ['-T: refused, exit 2', {}, ['-T', 'fs', '--explain', 'hi'], 2],
    ['config "tools": refused, exit 2', { tools: ['fs'] }, ['--explain', 'hi'], 2],
    ['argo tools: refused, exit 2', {}, ['tools'], 2],
    ['argo export: refused, exit 2', {}, ['export', '--format', 'sharegpt', '--all'], 2],
  ])('a toolset named like a built-in tool is refused when tools are resolved, not before (docs/agent.md): %s', async (_case, extra, args, code) => {
    const result = await argo(args, tempHome({ toolsets: { read_file: { tools: ['list_files'] } }, ...extra }));
    expect(result.code).toBe(code);
    expect(result.stderr).toBe(code === 0 ? '' : 'argo: config.json: toolsets."read_file" has the name of a built-in tool; choose another name\n');
  });

  it('a file tool path with a NUL byte is an invalid call: the model is asked again, never a failure of the tool', async () => {
    const root = tree();
    const home = tempHome();
    play.rounds = [{ calls: [call('read_file', { path: 'a\u0000b' })] }, { reply: 'done' }];
    const result = await argo(['-T', 'fs', '--root', root, 'hi'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'done\n' });
    expect(result.stderr).toContain(`argo: the model's response was invalid (read_file: path "a\\0b" contains a NUL byte, which no file name can; give it without one); asking again (1 of 3)`);
    expect(result.stderr).not.toContain('failed');
  });

  it('a command tool value that would be an option is invalid (asked again, never run); after a literal "--" it is passed as is; a tool named constructor runs', async () => {
    const root = tree();
    const home = tempHome({
      commandTools: {
        show: { description: 'x', argv: ['printf', '[%s]', '{ref}'], parameters: { type: 'object', properties: { ref: { type: 'string' } } }, sideEffects: false },
        after: { description: 'x', argv: ['printf', '[%s]', '--', '{ref}'], parameters: { type: 'object', properties: { ref: { type: 'string' } } }, sideEffects: false },
        constructor: { description: 'x', argv: ['printf', 'built'], sideEffects: false },
      },
    });
    play.rounds = [{ calls: [call('show', { ref: '--output=x' })] }, { calls: [call('show', { ref: 'main' }), call('after', { ref: '--output=x' }), call('constructor', {})] }, { reply: 'done' }];
    const result = await argo(['-T', 'show,after,constructor', '--root', root, 'hi'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'done\n' });
    expect(result.stderr).toContain(`argo: the model's response was invalid (show: "ref" starts with "-", which the command would read as an option; give it without the leading "-"); asking again (1 of 3)`);
    const results = messagesOf(chatBodies()[2]).filter((message) => message.role === 'tool').map((message) => (JSON.parse(message.content) as { stdout: string }).stdout);
    expect(results).toEqual(['[main]', '[--][--output=x]', 'built']);
    expect(readdirSync(root)).not.toContain('x');
  });

  it.runIf(hasGit)('git log {ref}..HEAD: a ref that would be an option (--output=FILE) is invalid and git never runs with it; a ref runs', async () => {
    const root = tree();
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=argo', '-c', 'user.email=argo@example.invalid', ...args], { cwd: root, env: { PATH: process.env.PATH ?? '' } });
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'first');
    git('commit', '-q', '--allow-empty', '-m', 'second');
    const outside = join(realpathSync(mkdtempSync(join(tmpdir(), 'argo-outside-'))), 'written-by-git');
    const home = tempHome({
      commandTools: {
        git_log: { description: 'commits since a ref', argv: ['git', 'log', '--oneline', '{ref}..HEAD'], parameters: { type: 'object', properties: { ref: { type: 'string' } }, required: ['ref'] }, sideEffects: false },
      },
    });
    play.rounds = [{ calls: [call('git_log', { ref: `--output=${outside}` })] }, { calls: [call('git_log', { ref: 'HEAD~1' })] }, { reply: 'done' }];
    const result = await argo(['-T', 'git_log', '--root', root, 'what changed?'], home);
    expect(result).toMatchObject({ code: 0, stdout: 'done\n' });
    expect(result.stderr).toContain(`argo: the model's response was invalid (git_log: "ref" starts with "-", which the command would read as an option; give it without the leading "-"); asking again (1 of 3)`);
    expect(existsSync(outside)).toBe(false);
    const [ran] = messagesOf(chatBodies()[2]).filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content) as { exit_code: number; stdout: string });
    expect(ran).toMatchObject({ exit_code: 0, stdout: expect.stringMatching(/^[0-9a-f]+ second\n$/) as unknown });
  });

  it.runIf(hasSetsid)('processes a command moved out of its group (setsid) keep neither the call nor argo waiting; the result says so', async () => {
    const root = tree();
    const escaped = (name: string) => `setsid sh -c 'echo $$ > ${name}; exec sleep 60' &`;
    play.rounds = [
      { calls: [call('run_command', { command: `${escaped('one.pid')} echo started` }), call('process', { operation: 'start', command: `${escaped('two.pid')} sleep 60` })] },
      { reply: 'done' },
    ];
    const result = await argo(['-T', 'shell', '--yes', '--root', root, 'start them'], tempHome());
    const pids = ['one.pid', 'two.pid'].map((name) => Number(readFileSync(join(root, name), 'utf8')));
    try {
      expect(result).toMatchObject({ code: 0, stdout: 'done\n' });
      const [ran] = messagesOf(chatBodies()[1]).filter((message) => message.role === 'tool');
      expect(JSON.parse(ran?.content ?? '{}')).toMatchObject({ exit_code: 0, stdout: 'started\n', detached: expect.stringContaining('left its process group (setsid, a daemon)') as unknown });
      // Not stopped: docs/agent.md says so.
      expect(pids.map((pid) => alive(pid))).toEqual([true, true]);
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGKILL');
    }
  });

  it('argo tools lists every toolset and tool, available or not and why; a broken toolset is listed, then exit 2', async () => {
    const good = await argo(['tools'], tempHome({ commandTools: { ghost_tool: { description: 'needs a binary', argv: ['argo-no-such-binary-xyz'] } } }));
    expect(good).toMatchObject({ code: 0, stderr: '' });
    expect(good.stdout).toMatch(/^ {2}dev +\+fs, \+edit, \+shell$/m);
    expect(good.stdout).toMatch(/^ {2}run_command +available, asks first$/m);
    expect(good.stdout).toMatch(/^ {2}memo +available, changes only Argo's own data$/m);
    expect(good.stdout).toMatch(/^ {2}ghost_tool +unavailable: "argo-no-such-binary-xyz" is not on PATH$/m);
    const broken = await argo(['tools', '--json'], tempHome({ toolsets: { loop_a: { includes: ['loop_b'] }, loop_b: { includes: ['loop_a'] } } }));
    expect(broken.code).toBe(2);
    expect(broken.stderr).toBe('argo: config.json: toolsets."loop_a": toolset cycle: loop_a → loop_b → loop_a; remove one of these includes in config.json; also unusable: "loop_b" (each is listed with its problem)\n');
    const listing = JSON.parse(broken.stdout) as { toolsets: { name: string; problem: string | null }[]; tools: { name: string; available: boolean }[] };
    expect(listing.toolsets.filter((set) => set.problem !== null).map((set) => set.name)).toEqual(['loop_a', 'loop_b']);
    expect(listing.tools.find((tool) => tool.name === 'read_file')).toMatchObject({ available: true });
  });

  it('a toolset includes chain 5,000 deep resolves in argo tools, --tools and --explain; closed by a cycle at its foot, each toolset names that cycle', async () => {
    const depth = 5_000;
    const chain = (foot: string[]): Record<string, { tools?: string[]; includes: string[] }> =>
      Object.fromEntries(Array.from({ length: depth }, (_, i) => [`t${i}`, i + 1 < depth ? { includes: [`t${i + 1}`] } : { tools: ['read_file'], includes: foot }]));
    const home = tempHome({ toolsets: chain([]) });
    const listed = await argo(['tools', '--json'], home);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const sets = (JSON.parse(listed.stdout) as { toolsets: { name: string; problem: string | null }[] }).toolsets;
    expect(sets.filter((set) => set.name.startsWith('t'))).toHaveLength(depth);
    expect(sets.filter((set) => set.problem !== null)).toEqual([]);
    const explained = await argo(['--tools', 't0', '--explain', '--json', 'hi'], home);
    expect(explained.code).toBe(0);
    const { tools } = JSON.parse(explained.stdout) as { tools: { expanded: { toolset: string; tools: string[] }[]; tools: string[] } };
    expect(tools.expanded.map((entry) => entry.toolset)).toEqual(Array.from({ length: depth }, (_, i) => `t${i}`));
    expect(tools.expanded.at(-1)).toEqual({ toolset: `t${depth - 1}`, tools: ['read_file'] });
    expect(tools.tools).toEqual(['read_file']);

    const looped = tempHome({ toolsets: chain([`t${depth - 2}`]) });
    const broken = await argo(['tools', '--json'], looped);
    expect(broken.code).toBe(2);
    const cycle = `toolset cycle: t${depth - 2} → t${depth - 1} → t${depth - 2}; remove one of these includes in config.json`;
    expect(broken.stderr).toBe(`argo: config.json: toolsets."t0": ${cycle}; also unusable: "t1", "t10", "t100" and 4,996 more (each is listed with its problem)\n`);
    const problems = (JSON.parse(broken.stdout) as { toolsets: { name: string; problem: string | null }[] }).toolsets.filter((set) => set.problem !== null);
    expect(problems).toHaveLength(depth);
    expect(problems.find((set) => set.name === 't0')?.problem).toBe(cycle);
    expect(problems.find((set) => set.name === `t${depth - 1}`)?.problem).toBe(`toolset cycle: t${depth - 1} → t${depth - 2} → t${depth - 1}; remove one of these includes in config.json`);
    expect(await argo(['--tools', 't0', '--explain', 'hi'], looped)).toMatchObject({ code: 2, stderr: `argo: ${cycle}\n` });
    expect(chatBodies()).toHaveLength(0);
  });

  it('--explain --json prints the resolution and the exact first request, byte-identical run to run; nothing runs', async () => {
    const home = tempHome({ tools: ['fs'] });
    const one = await argo(['--tools', 'dev,memo', '--explain', '--json', '--root', '/', 'hi'], home);
    const two = await argo(['--tools', 'dev,memo', '--explain', '--json', '--root', '/', 'hi'], home);
    expect(one.code).toBe(0);
    expect(one.stdout).toBe(two.stdout);
    const explained = JSON.parse(one.stdout) as { tools: { tools: string[] }; request: { body: { tools: unknown[] } } };
    expect(explained.tools.tools).toEqual(['edit_file', 'list_files', 'memo', 'process', 'read_file', 'run_command', 'search_files', 'write_file']);
    expect(explained.request.body.tools).toHaveLength(8);
    expect(chatBodies()).toHaveLength(0);
    // --tools none turns config's default off: a plain explanation, no tools.
    const plain = JSON.parse((await argo(['--tools', 'none', '--explain', '--json', 'hi'], home)).stdout) as { request: { body: Record<string, unknown> } };
    expect(plain.request.body.tools).toBeUndefined();
  });

  it('--explain with tools is the plain explanation extended: the replay decision, model and window of the first request, then the resolution', async () => {
    const home = tempHome();
    const root = tree();
    play.rounds = [{ reply: 'Noted.' }];
    expect((await argo(['-s', 'work', 'we use TypeScript'], home)).code).toBe(0);
    expect((await argo(['memo', 'set', 'lang', 'TypeScript'], home)).code).toBe(0);
    const args = ['-s', 'work', '-r', 'session', '-T', 'fs', '--root', root, '--ephemeral-system', 'be terse'];
    const plainJson = JSON.parse((await argo(['-s', 'work', '-r', 'session', '--explain', '--json', 'list files'], home)).stdout) as Record<string, unknown>;
    const explained = await argo([...args, '--explain', '--json', 'list files'], home);
    expect(explained.code).toBe(0);
    const agentJson = JSON.parse(explained.stdout) as Record<string, unknown> & { context: { prompt_tokens_estimate: number }; replayed_ids: string[]; request: { body: unknown } };
    expect(Object.keys(agentJson)).toEqual(['model', 'model_source', 'context', 'request_sha256', 'replay_policy', 'replayed_ids', 'turns', 'tools', 'root', 'max_iterations', 'request']);
    for (const key of ['model', 'model_source', 'replay_policy', 'replayed_ids', 'turns']) expect(agentJson[key]).toEqual(plainJson[key]);
    expect(agentJson.replayed_ids).toHaveLength(1);
    // The window is judged by the first request, which the tool definitions, memo and guidance make longer.
    expect(agentJson.context.prompt_tokens_estimate).toBeGreaterThan((plainJson.context as { prompt_tokens_estimate: number }).prompt_tokens_estimate + 100);
    const text = await argo([...args, '--explain', 'list files'], home);
    expect(text.stdout).toMatch(/^session {4}work\nmodel {6}argo \(.+\)\nentry type .+\nverbosity .+\ncontext {4}about \d+ prompt tokens of a \d+-token window .+\nreplay {5}1 ok turns loaded, reason .+\n/);
    expect(text.stdout).toMatch(/^tools {6}fs \(from --tools\)\n {2}fs +→ list_files, read_file, search_files\nresolved {3}list_files, read_file, search_files\nroot {7}.+\nmax {8}10 iterations\nrequest {4}POST http:\/\/.+\/api\/chat \(sha256 [0-9a-f]{64}\)$/m);
    expect(chatBodies()).toHaveLength(1);
    // What the run then sends first is, byte for byte, the explained request.
    play.rounds = [{ reply: 'Two files.' }];
    play.next = 0;
    expect((await argo([...args, 'list files'], home)).code).toBe(0);
    const sent = ollama.requests.filter((request) => request.path === '/api/chat');
    expect(sent[1]?.body).toBe(JSON.stringify(agentJson.request.body));
  });

  it("an agent turn's request_sha256 is its first request's as sent, the hash --explain shows: logged, in --json, and of the body Ollama got", async () => {
    const home = tempHome();
    const root = tree();
    expect((await argo(['memo', 'set', 'lang', 'TypeScript'], home)).code).toBe(0);
    const args = ['-s', 'shaT', '-T', 'fs', '--root', root, '--ephemeral-system', 'be terse'];
    const explained = JSON.parse((await argo([...args, '--explain', '--json', 'list files'], home)).stdout) as { request_sha256: string; request: { body: unknown } };
    play.rounds = [{ calls: [call('list_files', { pattern: '*' })] }, { reply: 'Two files.' }];
    const ran = await argo([...args, '--json', 'list files'], home);
    expect(ran.code).toBe(0);
    const sent = ollama.requests.filter((request) => request.path === '/api/chat');
    expect(sent).toHaveLength(2);
    const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
    const hashes = [explained.request_sha256, sha256(JSON.stringify(explained.request.body)), (JSON.parse(ran.stdout) as { request_sha256: string }).request_sha256, logLines(home)[0]?.request_sha256];
    expect(hashes).toEqual(Array<string>(4).fill(sha256(defined(sent[0]).body)));
  });

  it('argo chat checks its tools and root once, at its start: a typo is a usage error before any message, not a failure of each', async () => {
    const home = tempHome();
    const typo = await argo(['chat', '-T', 'fss'], home, { stdin: 'one\ntwo\n' });
    expect(typo).toMatchObject({ code: 2, stdout: '' });
    expect(typo.stderr).toMatch(/^argo: --tools: unknown toolset or tool "fss"; [^\n]+\n$/);
    expect(await argo(['chat', '-T', 'fs', '--root', '/no/such/dir'], home, { stdin: 'one\n' })).toMatchObject({ code: 2, stderr: 'argo: --root /no/such/dir does not exist; give a directory the tools may use\n' });
    expect(chatBodies()).toHaveLength(0);
    expect(logLines(home)).toHaveLength(0);
  });

  it('-T is repeatable (the lists add up); an empty --root is a usage error, not the working directory', async () => {
    const home = tempHome();
    const explained = JSON.parse((await argo(['-T', 'fs', '-T', 'memo', '--explain', '--json', 'hi'], home)).stdout) as { tools: { requested: string[]; tools: string[] } };
    expect(explained.tools).toMatchObject({ requested: ['fs', 'memo'], tools: ['list_files', 'memo', 'read_file', 'search_files'] });
    expect(await argo(['-T', 'fs', '--root', '', 'hi'], home)).toMatchObject({ code: 2, stderr: 'argo: --root is empty: name the directory the tools may use, or leave --root out for the working directory\n' });
  });

  it('-NAME takes a toolset or tool away; a list of only those trims config\'s "tools"; --explain shows what went', async () => {
    const home = tempHome({ tools: ['dev'] });
    interface Explained { tools: { requested: string[]; excluded: string[]; tools: string[] }; request: { body: { tools: { function: { name: string } }[] } } }
    const trimmed = JSON.parse((await argo(['-T', '-shell', '--explain', '--json', 'hi'], home)).stdout) as Explained;
    expect(trimmed.tools).toMatchObject({ requested: ['dev', '-shell'], excluded: ['process', 'run_command'], tools: ['edit_file', 'list_files', 'read_file', 'search_files', 'write_file'] });
    expect(trimmed.request.body.tools.map((tool) => tool.function.name)).toEqual(trimmed.tools.tools);
    const text = await argo(['-T', 'fs,-search_files', '--explain', 'hi'], home);
    expect(text.stdout).toMatch(/^ {2}taken away {3}→ search_files$/m);
    expect(text.stdout).toMatch(/^resolved {3}list_files, read_file$/m);
    expect(await argo(['-T', 'fs,-', 'hi'], home)).toMatchObject({ code: 2, stderr: 'argo: --tools: "-" takes nothing away; write -NAME with a toolset or tool, e.g. dev,-shell\n' });
  });
});

describe('files written straight in the data home leave the home as the user made it', () => {
  const mode = (path: string): number => statSync(path).mode & 0o777;

  it.each([
    ['memo set', [['memo', 'set', 'k', 'v']], ['memo.json'], ['locks']],
    ['stop', [['stop']], ['STOP'], []],
    ['memo set, then stop and stop --clear', [['memo', 'set', 'k', 'v'], ['stop'], ['stop', '--clear']], ['memo.json'], ['locks']],
  ])('%s: a 0755 home stays 0755; the file is 0600 and the folders Argo makes are 0700', async (_case, commands, files, folders) => {
    const home = tempHome();
    chmodSync(home, 0o755);
    for (const args of commands) expect((await argo(args, home)).code).toBe(0);
    expect(mode(home)).toBe(0o755);
    for (const file of files) expect(mode(join(home, file))).toBe(0o600);
    for (const folder of folders) expect(mode(join(home, folder))).toBe(0o700);
  });

  it('an agent run, which keeps its tool definitions and saves a long result, leaves a 0755 home as it is', async () => {
    const home = tempHome();
    chmodSync(home, 0o755);
    const root = tree();
    writeFileSync(join(root, 'long.txt'), 'x\n'.repeat(3000));
    play.rounds = [{ calls: [call('search_files', { pattern: 'x', glob: 'long.txt' })] }, { reply: 'read' }];
    expect((await argo(['-T', 'fs', '--root', root, 'read long.txt'], home)).code).toBe(0);
    expect(mode(home)).toBe(0o755);
    for (const folder of ['tool-definitions', 'tool-results', 'logs']) expect(mode(join(home, folder))).toBe(0o700);
  });

  it('a home that does not exist yet is made private', async () => {
    const home = join(mkdtempSync(join(tmpdir(), 'argo-new-home-')), 'home');
    expect((await argo(['stop'], home)).code).toBe(0);
    expect([mode(home), mode(join(home, 'STOP'))]).toEqual([0o700, 0o600]);
  });
});

describe("argo --tools: a failure quoting outside words ending in a secret keeps Argo's punctuation", () => {
  // Answers /type/<the secret> with that secret at the end of a content type that is not text.
  const pages = pageServer((request, response) => {
    response.writeHead(200, { 'content-type': `image/${decodeURIComponent((request.url ?? '').replace(/^\/type\//, ''))}` }).end('x');
  });

  const MASKED = 'GITHUB_TOKEN=***';
  // Bare, a value runs to the next space: masked whole, it took Argo's ")". With an open quote it runs
  // to a closing quote: masked whole, it took Argo's closing '"'.
  it.each([['GITHUB_TOKEN=hunter2'], ['GITHUB_TOKEN="hunter2']])('%s: every tool, in the line shown and the log line', async (secret) => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-quoted-')));
    for (const folder of ['bin', 'dir', 'latin', 'text', 'fifo', 'run']) mkdirSync(join(root, folder));
    writeFileSync(join(root, 'bin', secret), Buffer.from([0x41, 0x00, 0x42]));
    mkdirSync(join(root, 'dir', secret));
    writeFileSync(join(root, 'latin', secret), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    writeFileSync(join(root, 'text', secret), 'twice and twice\n');
    execFileSync('mkfifo', [join(root, 'fifo', secret)]);
    symlinkSync('loop', join(root, 'loop'));
    // Runs, but its interpreter does not exist: spawn fails (ENOENT), which Argo says in its own words.
    writeFileSync(join(root, 'run', secret), '#!/nonexistent/interpreter\n', { mode: 0o755 });
    // The data home in the root, named by the secret: the file tools refuse it, quoting its path.
    const home = join(root, secret);
    mkdirSync(home);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ commandTools: { launch: { description: 'launch it', argv: [`./run/${secret}`] } } }));
    const host = pages.base().slice('http://'.length);
    const failures: [string, Record<string, unknown>, string][] = [
      ['read_file', { path: `nope/${secret}` }, `file "nope/${MASKED}" does not exist`],
      ['read_file', { path: `bin/${secret}` }, `"bin/${MASKED}" is a binary file`],
      ['read_file', { path: `dir/${secret}` }, `"dir/${MASKED}" is not a file`],
      ['read_file', { path: `loop/${secret}` }, `cannot open "loop/${MASKED}": too many symbolic links`],
      ['read_file', { path: `../${secret}` }, `path "../${MASKED}" is outside the root directory; use a path inside it`],
      ['read_file', { path: secret }, `path "${MASKED}" is inside Argo's data home (${root}/${MASKED}), which the file tools may not use; use a path outside it (or run with a --root that does not hold the data home)`],
      ['list_files', { pattern: '*', path: `nope/${secret}` }, `directory "nope/${MASKED}" does not exist`],
      ['list_files', { pattern: '*', path: `bin/${secret}` }, `"bin/${MASKED}" is not a directory`],
      ['list_files', { pattern: `../${secret}` }, `pattern "../${MASKED}" must stay inside the root (no "..", no leading "/")`],
      ['list_files', { pattern: `${'{a,b}'.repeat(7)}/${secret}` }, `pattern "${'{a,b}'.repeat(7)}/${MASKED}" expands to more than 100 patterns (each {…,…} multiplies them); use fewer brace alternatives`],
      ['search_files', { pattern: `(${secret}` }, `"(${MASKED}" is not a valid regular expression`],
      ['write_file', { path: `bin/${secret}`, content: 'x', mode: 'create' }, `"bin/${MASKED}" already exists; use mode "overwrite" to replace it`],
      ['write_file', { path: `bin/${secret}`, content: 'x', mode: 'append' }, `"bin/${MASKED}" is a binary file; it cannot be edited as text`],
      ['write_file', { path: `fifo/${secret}`, content: 'x' }, `"fifo/${MASKED}" is not a regular file (a named pipe, a device or a socket); the file tools read and write only regular files`],
      ['edit_file', { path: `latin/${secret}`, old: 'a', new: 'b' }, `"latin/${MASKED}" is not valid UTF-8; it cannot be edited as text without corrupting it`],
      ['edit_file', { path: `nope/${secret}`, old: 'a', new: 'b' }, `file "nope/${MASKED}" does not exist; create it with write_file`],
      ['edit_file', { path: `text/${secret}`, old: 'absent', new: 'b' }, `the text to replace was not found in "text/${MASKED}"; read the file and copy it exactly`],
      ['edit_file', { path: `text/${secret}`, old: 'twice', new: 'b' }, `the text to replace occurs more than once in "text/${MASKED}"; include more surrounding lines`],
      ['run_command', { command: 'true', cwd: `nope/${secret}` }, `directory "nope/${MASKED}" does not exist`],
      ['run_command', { command: 'true', cwd: `bin/${secret}` }, `"bin/${MASKED}" is not a directory`],
      ['process', { operation: 'status', handle: secret }, `no process with handle "${MASKED}"; list them with operation "list"`],
      ['search_history', { query: 'x', session: secret }, `there is no session named "${MASKED}"; there are no sessions yet`],
      ['fetch_url', { url: `${pages.base()}/type/${secret}` }, `${host} sent image/${MASKED}, which is not text`],
      ['launch', {}, `the command "./run/${MASKED}" did not start (spawn ENOENT): it is not there, or the interpreter its #! line names is not; fix commandTools."launch".argv in config.json`],
    ];
    play.rounds = [{ calls: failures.map(([name, args], index) => call(name, args, `call_${index}`)) }, { reply: 'never' }];
    const result = await argo(['-T', 'fs,edit,shell,web,history,launch', '--yes', '--root', root, 'try them all'], home, { env: web });
    expect(result.code).toBe(1);
    // The first call that retrying cannot help ends the run, its message quoted once more, not masked again.
    expect(result.stderr).toContain(`argo: tool fetch_url failed and retrying cannot help (${host} sent image/${MASKED}, which is not text); `);
    const shown = result.stderr.split('\n').filter((line) => line.includes(' failed: '));
    expect(shown).toEqual(failures.map(([name, , error]) => `argo: tool ${name} failed: ${error}`));
    const calls = (logLines(home)[0]?.tool_calls ?? []) as Record<string, unknown>[];
    expect(calls.map(({ name, outcome, error }) => ({ name, outcome, error }))).toEqual(failures.map(([name, , error]) => ({ name, outcome: 'failure', error })));
    // A command that did not start is named in Argo's words: nothing of Node's is left for error_detail.
    expect(calls.at(-1)).not.toHaveProperty('error_detail');
    expect(result.stderr).not.toContain('hunter2');
    expect(JSON.stringify(calls.map(({ error, error_detail }) => [error, error_detail]))).not.toContain('hunter2');
  });
});
