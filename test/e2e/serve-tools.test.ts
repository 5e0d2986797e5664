// End-to-end: the `tools` Argo field runs the CLI's agent loop on the server — the built
// `bin/argo serve` against the Ollama stand-in scripting tool-call rounds.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import type { FakeRound } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { TEST_MCP_SERVER } from '../support/mcp.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';
import { ssePayloads, startServe } from '../support/run-serve.js';
import type { ServeProcess } from '../support/run-serve.js';
import { waitFor } from '../support/wait.js';

interface Message {
  role: string;
  content: string;
  tool_name?: string;
  tool_call_id?: string;
  tool_calls?: { id?: string }[];
}

/** Set by a test: the STOP file the model "writes" while it answers (as `argo stop` would from elsewhere). */
let stopDuringRound: string | null = null;

/** Round 1 calls the tool the prompt names; once a tool result is in, the model answers in text. */
function script(body: { messages?: Message[] }): FakeRound {
  const messages = body.messages ?? [];
  const last = messages.at(-1);
  const prompt = messages.find((message) => message.role === 'user')?.content ?? '';
  if (prompt.includes('halt') && stopDuringRound !== null) {
    writeFileSync(stopDuringRound, `${new Date().toISOString()}\n`);
    return { reply: 'partial answer before the tool', toolCalls: [{ id: 'h1', function: { name: 'read_file', arguments: { path: 'notes.txt' } } }] };
  }
  // A model that never stops calling tools.
  if (prompt.includes('loop')) return { toolCalls: [{ function: { name: 'read_file', arguments: { path: 'notes.txt' } } }] };
  // Ollama fails in the round after the tool ran.
  if (prompt.includes('crash')) {
    return last?.role === 'tool' ? { scenario: { errorMidStream: { afterChunks: 0, message: 'model runner crashed' } } } : { toolCalls: [{ id: 'c1', function: { name: 'run_command', arguments: { command: 'echo ran >> counter.txt' } } }] };
  }
  if (last?.role === 'tool') return { reply: `The tool said: ${last.content}` };
  if (prompt.includes('no tool needed')) return { reply: 'Answered from what I know.' };
  // Words in the round that calls a tool, then the answer.
  if (prompt.includes('narrate')) return { reply: 'Checking the notes.', toolCalls: [{ id: 'r1', function: { name: 'read_file', arguments: { path: 'notes.txt' } } }] };
  if (prompt.includes('sum')) return { toolCalls: [{ id: 'a1', function: { name: 'add', arguments: { a: 2, b: 40 } } }] };
  if (prompt.includes('nap')) return { toolCalls: [{ id: 'n1', function: { name: 'run_command', arguments: { command: 'sleep 30' } } }] };
  if (prompt.includes('write')) return { toolCalls: [{ id: 'w1', function: { name: 'write_file', arguments: { path: 'out.txt', content: 'written' } } }] };
  // A result the loop cuts to its budget (read_file fits its own).
  if (prompt.includes('search')) return { toolCalls: [{ id: 'r1', function: { name: 'search_files', arguments: { pattern: 'heron' } } }] };
  return { toolCalls: [{ id: 'r1', function: { name: 'read_file', arguments: { path: 'notes.txt' } } }] };
}

const ollama = await fakeOllamaPerFile({ models: [{ name: 'argo', capabilities: ['completion', 'tools'] }], rounds: (body) => script(body) });
const servers: ServeProcess[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

/** Every request sends it; a server that lets tools have side effects needs it (any local user could reach one without). */
const KEY = 'sk-serve-tools';

async function server(config: Record<string, unknown> = {}, args: string[] = []): Promise<{ serve: ServeProcess; home: string; root: string }> {
  const home = tempHome({ retries: { attempts: 2, initialDelayMs: 10 }, ...config });
  const root = mkdtempSync(join(tmpdir(), 'argo-serve-root-'));
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, 'notes.txt'), 'the secret word is heron\n');
  const env = args.includes('--allow-side-effects') ? { ARGO_API_KEY: KEY } : {};
  const serve = await startServe({ home, host: ollama.url, args: ['--root', root, ...args], env });
  servers.push(serve);
  return { serve, home, root };
}

const ask = (content: string, argo: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ model: 'argo', messages: [{ role: 'user', content }], argo, ...extra });
const AUTH = { authorization: `Bearer ${KEY}` };
const post = (url: string, body: unknown): Promise<Response> =>
  fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...AUTH }, body: JSON.stringify(body) });
async function logged(home: string, id: string) {
  await waitFor(() => expect(logLines(home).filter((line) => line.id === id)).toHaveLength(1));
  return logLines(home).find((line) => line.id === id);
}

describe('MCP toolsets on the server', () => {
  it('start each MCP server once: later requests reuse it, and shutting down ends it', async () => {
    const starts = join(mkdtempSync(join(tmpdir(), 'argo-mcp-starts-')), 'pids');
    const { serve } = await server({ mcpServers: { calc: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_STARTS: starts } } } });
    for (const session of ['m1', 'm2', 'm1']) {
      const response = await post(serve.url, ask('sum two numbers', { tools: 'mcp:calc', session }));
      expect(response.status).toBe(200);
      const answer = (await response.json()) as { choices: { message: { content: string } }[] };
      expect(answer.choices[0]?.message.content).toMatch(/^The tool said: .*42/);
    }
    const pids = readFileSync(starts, 'utf8').trim().split('\n');
    expect(pids).toHaveLength(1);
    expect((await serve.stop()).code).toBe(0);
    await waitFor(() => expect(() => process.kill(Number(pids[0]), 0)).toThrow());
  });
});

describe('the tools Argo field', () => {
  it('streams: read_file runs on the server, its result reaches the model, tool_status goes to the client, the turn logs tool_calls', async () => {
    const { serve, home } = await server();
    const before = ollama.chatBodies().length;
    const response = await post(serve.url, ask('what is in the notes?', { tools: 'fs', session: 's' }, { stream: true }));
    expect(response.status).toBe(200);
    const id = response.headers.get('x-argo-turn-id') ?? '';
    const payloads = ssePayloads(await response.text());
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((payload) => JSON.parse(payload) as Record<string, unknown> & { choices: { delta?: { content?: string }; finish_reason?: string | null }[] });

    // Round 1 offered the fs tools; round 2 carried the file's content back to the model.
    const bodies = ollama.chatBodies().slice(before) as { tools?: { function: { name: string } }[]; messages: Message[] }[];
    expect(bodies).toHaveLength(2);
    expect(bodies[0]?.tools?.map((tool) => tool.function.name)).toContain('read_file');
    const result = bodies[1]?.messages.find((message) => message.role === 'tool');
    // Paired with its call by the id the assistant message gave it.
    const sentCall = bodies[1]?.messages.find((message) => message.role === 'assistant')?.tool_calls?.[0];
    expect(result).toMatchObject({ role: 'tool', tool_name: 'read_file', tool_call_id: sentCall?.id });
    expect(result?.tool_call_id).toEqual(expect.any(String));
    expect(result?.content).toContain('the secret word is heron');

    // The client got the final answer, with the tool's progress in between.
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toContain('The tool said:');
    expect(text).toContain('heron');
    const statuses = chunks.flatMap((chunk) => (chunk.tool_status ? [chunk.tool_status] : []));
    expect(statuses).toEqual([
      { type: 'tool_status', id: 'r1', name: 'read_file', status: 'running' },
      { type: 'tool_status', id: 'r1', name: 'read_file', status: 'success', ms: expect.any(Number) as number },
    ]);
    const last = chunks.at(-1);
    expect(last?.choices[0]?.finish_reason).toBe('stop');
    expect(last?.argo).toMatchObject({ turn_id: id, status: 'ok', stop_reason: 'answered', iterations: 1, tool_calls: 1 });

    const entry = await logged(home, id);
    expect(entry).toMatchObject({ session: 's', status: 'ok', user_prompt: 'what is in the notes?', stop_reason: 'answered' });
    expect(entry?.tool_calls).toEqual([expect.objectContaining({ id: 'r1', name: 'read_file', arguments: { path: 'notes.txt' }, outcome: 'success', round: 1 })]);
    expect(String(entry?.model_response)).toContain('heron');
  });

  it('tools left out are named in the argo field, streamed or not, as the log has them, also when none is left', async () => {
    const { serve, home } = await server({ mcpServers: { gone: { command: '/nonexistent/argo-mcp-server' } } });
    const whole = await post(serve.url, ask('read the notes', { tools: 'fs,mcp:gone', session: 'u1' }));
    const reply = (await whole.json()) as { choices: { message: { content: string } }[]; argo: { tools_unavailable: { name: string; reason: string }[] } };
    expect(reply.choices[0]?.message.content).toContain('heron');
    expect(reply.argo.tools_unavailable).toEqual([{ name: 'mcp:gone', reason: expect.stringMatching(/^MCP server "gone" did not start \(.*ENOENT/) as string }]);
    const entry = await logged(home, whole.headers.get('x-argo-turn-id') ?? '');
    expect(entry?.tools_unavailable).toEqual(reply.argo.tools_unavailable);

    // Nothing asked is left: the answer is tool-less, and the field says why.
    const streamed = await post(serve.url, ask('no tool needed', { tools: 'mcp:gone', session: 'u2' }, { stream: true }));
    const last = JSON.parse(ssePayloads(await streamed.text()).at(-2) ?? '{}') as { argo?: { status: string; tools_unavailable: unknown } };
    expect(last.argo).toMatchObject({ status: 'ok', tools_unavailable: reply.argo.tools_unavailable });
  });

  it("a run's words in every round are its answer's content, streamed or not, as a job's output has them", async () => {
    const { serve } = await server();
    const whole = (await (await post(serve.url, ask('narrate the notes', { tools: 'fs', session: 'n1' }))).json()) as { choices: { message: { content: string } }[] };
    const streamed = ssePayloads(await (await post(serve.url, ask('narrate the notes', { tools: 'fs', session: 'n2' }, { stream: true }))).text())
      .filter((payload) => payload !== '[DONE]')
      .map((payload) => (JSON.parse(payload) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? '')
      .join('');
    expect(whole.choices[0]?.message.content).toMatch(/^Checking the notes\.[\s\S]*The tool said: /);
    expect(whole.choices[0]?.message.content).toBe(streamed);
  });

  it('the openai client (extra body fields) and the X-Argo-Tools header both run the loop', async () => {
    const { serve, home } = await server();
    const client = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'argo', messages: [{ role: 'user', content: 'read the notes' }], argo: { tools: ['fs'], session: 'sdk' } } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(data.choices[0]?.message.content).toContain('heron');
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect((await logged(home, response.headers.get('x-argo-turn-id') ?? ''))?.tool_calls).toHaveLength(1);

    const viaHeader = await fetch(`${serve.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-argo-tools': 'fs', 'x-argo-session': 'hdr' },
      body: JSON.stringify({ model: 'argo', messages: [{ role: 'user', content: 'read the notes' }] }),
    });
    expect(viaHeader.status).toBe(200);
    expect(((await viaHeader.json()) as { argo: unknown }).argo).toMatchObject({ status: 'ok', tool_calls: 1 });
  });

  it('side effects without --allow-side-effects fail as permanent: nothing written, status tool_failures', async () => {
    const { serve, home, root } = await server();
    const response = await post(serve.url, ask('write a file', { tools: 'fs,edit', session: 'w' }, { stream: true }));
    const payloads = ssePayloads(await response.text());
    expect(payloads.at(-1)).toBe('[DONE]');
    const chunks = payloads.slice(0, -1).map((payload) => JSON.parse(payload) as Record<string, unknown> & { choices: { finish_reason?: string | null }[] });
    expect(chunks.some((chunk) => chunk.tool_status !== undefined && (chunk.tool_status as { status: string }).status === 'failure')).toBe(true);
    expect(chunks.find((chunk) => chunk.tool_execution_error !== undefined)?.tool_execution_error).toMatchObject({ type: 'tool_execution_error', id: 'w1', name: 'write_file', message: expect.stringMatching(/--allow-side-effects/) as string });
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)?.argo).toMatchObject({ status: 'tool_failures', stop_reason: 'permanent_failure' });
    expect(existsSync(join(root, 'out.txt'))).toBe(false);
    const entry = await logged(home, response.headers.get('x-argo-turn-id') ?? '');
    expect(entry).toMatchObject({ status: 'tool_failures', tool_calls: [expect.objectContaining({ name: 'write_file', outcome: 'failure' })] });
  });

  it('a whole answer and a job say where the failed calls\' errors are: the log, the job\'s stream as it ran; none was streamed to them', async () => {
    const { serve } = await server();
    const whole = (await (await post(serve.url, ask('write a file', { tools: 'edit', session: 'j5' }))).json()) as { argo: { status: string; message: string } };
    expect(whole.argo.status).toBe('tool_failures');
    expect(whole.argo.message).toMatch(/; each call's error is in the turn's log line on the server \(argo logs --status tool_failures\); a streamed request gets each as a tool_execution_error event$/);
    const started = await fetch(`${serve.url}/api/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask('write a file', { tools: 'edit', session: 'j5' })) });
    const { job_id: id } = (await started.json()) as { job_id: string };
    await waitFor(async () => expect(await (await fetch(`${serve.url}/api/jobs/${id}`)).json()).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/; each call's error was sent as a tool_execution_error event to any client following the job's stream \(GET \/api\/jobs\/ID\/stream\) as it ran, and is in the turn's log line on the server \(argo logs --status tool_failures\)$/) as string,
    }));
  });

  it('with --allow-side-effects the write runs inside --root', async () => {
    const { serve, root } = await server({}, ['--allow-side-effects']);
    const response = await post(serve.url, ask('write a file', { tools: 'fs,edit', session: 'w' }));
    const body = (await response.json()) as { argo: unknown; choices: { message: { content: string } }[] };
    expect(body.argo).toMatchObject({ status: 'ok', tool_calls: 1 });
    expect(existsSync(join(root, 'out.txt'))).toBe(true);
  });

  it("a memo.json that cannot be read: 500 argo_error naming it without the server's paths, the turn logged memo_unreadable", async () => {
    const { serve, home } = await server({});
    writeFileSync(join(home, 'memo.json'), '{"lang": ');
    const response = await post(serve.url, ask('what is in the notes?', { tools: 'fs', session: 'm' }));
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { message: string; code: string } };
    expect(body.error).toEqual(expect.objectContaining({ code: 'argo_error', message: '<data home>/memo.json is not valid JSON; fix it by hand or delete it (the memo then starts empty)' }));
    await waitFor(() => expect(logLines(home)).toEqual([expect.objectContaining({ session: 'm', status: 'error', stop_reason: 'memo_unreadable', tool_calls: [], error: `${home}/memo.json is not valid JSON; fix it by hand or delete it (the memo then starts empty)` })]));
  });

  it('a result over budget that cannot be saved: 500 argo_error saying why without the server\'s paths, the turn still logged', async () => {
    const { serve, home, root } = await server({ toolBudgets: { search_files: 500 } });
    writeFileSync(join(root, 'notes.txt'), 'the secret word is heron\n'.repeat(40));
    // A file where the folder should be: the save fails, as on a full or read-only disk.
    writeFileSync(join(home, 'tool-results'), '');
    const response = await post(serve.url, ask('search the notes', { tools: 'fs', session: 'r' }));
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { message: string; code: string } };
    expect(body.error).toMatchObject({
      code: 'argo_error',
      message: expect.stringMatching(/^cannot save the tool result tool-results\/\S+\/r1-r1\.json in the data home \(<data home>\/tool-results is not a folder; remove it, and Argo makes the folder again\)$/) as string,
    });
    await waitFor(() => expect(logLines(home)).toEqual([expect.objectContaining({ session: 'r', status: 'error', stop_reason: 'result_not_saved', error: expect.stringContaining(`(${home}/tool-results is not a folder`) as string })]));
    // The log line names the folder, for the operator; a job's error, a stream and the session's turns do not.
    const started = await fetch(`${serve.url}/api/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask('search the notes', { tools: 'fs', session: 'r' })) });
    const { job_id: id } = (await started.json()) as { job_id: string };
    await waitFor(async () => expect(await (await fetch(`${serve.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'failed', error: expect.stringContaining('(<data home>/tool-results is not a folder') as string }));
    const streamed = await post(serve.url, ask('search the notes', { tools: 'fs', session: 'r' }, { stream: true }));
    for (const text of [await (await fetch(`${serve.url}/api/jobs/${id}`)).text(), await streamed.text(), await (await fetch(`${serve.url}/api/sessions/r`)).text()]) {
      expect(text).toContain('<data home>/tool-results');
      expect(text).not.toContain(home);
    }
  });

  it('max_iterations ends with finish_reason length and says so in the argo field', async () => {
    const { serve, home } = await server({ maxIterations: 1 });
    const response = await post(serve.url, ask('loop forever', { tools: 'fs', session: 'm' }));
    const body = (await response.json()) as { argo: Record<string, unknown>; choices: { finish_reason: string }[] };
    expect(body.choices[0]?.finish_reason).toBe('length');
    expect(body.argo).toMatchObject({ status: 'max_iterations', stop_reason: 'max_iterations' });
    expect(body.argo.message).toMatch(/stopped after 1 tool round without a final answer/);
    expect(await logged(home, String(body.argo.turn_id))).toMatchObject({ status: 'max_iterations' });
  });

  it('STOP set while the model answers ends the loop: no tool runs, finish_reason stop, [DONE], logged stopped', async () => {
    const { serve, home } = await server();
    stopDuringRound = join(home, 'STOP');
    try {
      const response = await post(serve.url, ask('halt please', { tools: 'fs', session: 'h' }, { stream: true }));
      const payloads = ssePayloads(await response.text());
      expect(payloads.at(-1)).toBe('[DONE]');
      const chunks = payloads.slice(0, -1).map((payload) => JSON.parse(payload) as Record<string, unknown> & { choices: { finish_reason?: string | null }[] });
      expect(chunks.some((chunk) => chunk.tool_status !== undefined)).toBe(false);
      expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
      expect(chunks.at(-1)?.argo).toMatchObject({ status: 'stopped' });
      const entry = await logged(home, response.headers.get('x-argo-turn-id') ?? '');
      expect(entry).toMatchObject({ status: 'stopped', session: 'h' });
      // STOP is seen before the call's chunk is read (nothing logged) or after (logged not_run): never run.
      for (const call of (entry?.tool_calls ?? []) as unknown[]) expect(call).toMatchObject({ name: 'read_file', outcome: 'not_run' });
    } finally {
      stopDuringRound = null;
    }
  });

  it('STOP while a tool runs kills it and ends the run as stopped, stop_signal, with a fix a client can use', async () => {
    const { serve, home } = await server({}, ['--allow-side-effects']);
    const response = await post(serve.url, ask('take a nap', { tools: 'shell', session: 'n' }, { stream: true }));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readAll = (async () => {
      for (let part = await reader.read(); !part.done; part = await reader.read()) text += decoder.decode(part.value, { stream: true });
    })();
    await waitFor(() => expect(text).toContain('"status":"running"'));
    expect((await fetch(`${serve.url}/api/stop`, { method: 'POST', headers: AUTH })).status).toBe(200);
    await readAll;
    const payloads = ssePayloads(text);
    expect(payloads.at(-1)).toBe('[DONE]');
    const last = JSON.parse(payloads.at(-2) ?? '{}') as { argo?: Record<string, unknown> };
    expect(last.argo).toMatchObject({ status: 'stopped', stop_reason: 'stop_signal', message: 'stopped by the STOP signal; DELETE /api/stop (or removing STOP from the server\'s data home) allows runs again' });
    expect(await logged(home, response.headers.get('x-argo-turn-id') ?? '')).toMatchObject({ status: 'stopped', stop_reason: 'stop_signal', session: 'n' });
  });

  it('a run that fails after its tool ran is not sent again by the openai client (default retries): the tool ran once, one turn logged', async () => {
    const { serve, home, root } = await server({}, ['--allow-side-effects']);
    const client = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: KEY });
    const before = ollama.chatBodies().length;
    const failed = await client.chat.completions
      .create({ model: 'argo', messages: [{ role: 'user', content: 'crash after a command' }], argo: { tools: 'shell', session: 'crash' } } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .then(() => null, (error: unknown) => error);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    const { status, headers } = failed as InstanceType<typeof OpenAI.APIError>;
    expect(status).toBe(502);
    expect(headers?.get('x-should-retry')).toBe('false');
    // The round that ran the tool, and the one after it that failed: nothing more.
    expect(ollama.chatBodies().length - before).toBe(2);
    expect(readFileSync(join(root, 'counter.txt'), 'utf8')).toBe('ran\n');
    expect(await logged(home, headers?.get('x-argo-turn-id') ?? '')).toMatchObject({ session: 'crash', status: 'error', tool_calls: [expect.objectContaining({ name: 'run_command', outcome: 'success' })] });
    expect(logLines(home)).toHaveLength(1);
  });

  it('a run asked while STOP is set: 503 argo_stopped, nothing run, the turn logged stopped (stop_signal)', async () => {
    const { serve, home, root } = await server({}, ['--allow-side-effects']);
    expect((await fetch(`${serve.url}/api/stop`, { method: 'POST', headers: AUTH })).status).toBe(200);
    const response = await post(serve.url, ask('write it down', { tools: 'edit', session: 'held' }, { stream: true }));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ error: { code: 'argo_stopped', type: 'server_error' } });
    expect(await logged(home, response.headers.get('x-argo-turn-id') ?? '')).toMatchObject({ status: 'stopped', stop_reason: 'stop_signal', session: 'held', user_prompt: 'write it down' });
    expect(existsSync(join(root, 'out.txt'))).toBe(false);
  });

  it('a job runs the loop in the background; client tools with argo.tools are refused; a toolset config.json breaks is the server\'s 500', async () => {
    const { serve, home } = await server({ toolsets: { loop_a: { includes: ['loop_b'] }, loop_b: { includes: ['loop_a'] } } });
    const started = await fetch(`${serve.url}/api/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask('read the notes', { tools: 'fs', session: 'job' })) });
    expect(started.status).toBe(202);
    const { job_id: id } = (await started.json()) as { job_id: string };
    let record: { state: string; output: string; turn_id: string | null } = { state: 'pending', output: '', turn_id: null };
    await waitFor(async () => {
      record = (await (await fetch(`${serve.url}/api/jobs/${id}`)).json()) as typeof record;
      expect(record.state).toBe('completed');
    });
    expect(record.output).toContain('heron');
    expect((await logged(home, record.turn_id ?? ''))?.tool_calls).toHaveLength(1);

    const both = await post(serve.url, ask('x', { tools: 'fs' }, { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }] }));
    expect(both.status).toBe(400);
    expect(await both.json()).toMatchObject({ error: { param: 'argo.tools', code: 'tools_conflict' } });

    // `none` is no server-side tools: client tools pass on, and the answer is a plain Argo-mode one.
    const none = await post(serve.url, ask('x', { tools: 'none' }, { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }] }));
    expect(none.status).toBe(200);
    expect(Object.keys(((await none.json()) as { argo: object }).argo).sort()).toEqual(['log', 'replay_policy', 'status', 'turn_id']);

    const broken = await post(serve.url, ask('x', { tools: 'loop_a' }));
    expect([broken.status, broken.headers.get('x-should-retry')]).toEqual([500, 'false']);
    expect(await broken.json()).toMatchObject({ error: { type: 'server_error', param: null, code: 'tool_config_invalid', message: expect.stringContaining('toolset cycle: loop_a → loop_b → loop_a') as string } });
  });
});

describe('a tool failure\'s raw detail stays in the server\'s log', () => {
  it('the log line has it; the answer, its stream, the job (file, record and stream) and GET /api/sessions/:name do not; argo sessions show --json does', async () => {
    const raw = 'connect ECONNREFUSED postgres://app:hunter2@db at /srv/private/db.js:42';
    const { serve, home } = await server({ mcpServers: { calc: { ...TEST_MCP_SERVER, env: { ARGO_TEST_MCP_RAW_ERROR: raw } } } });
    const seen: string[] = [];
    const whole = await post(serve.url, ask('sum two numbers', { tools: 'mcp:calc', session: 'leaky' }));
    seen.push(await whole.text());
    const entry = await logged(home, whole.headers.get('x-argo-turn-id') ?? '');
    expect(entry).toMatchObject({ status: 'tool_failures' });
    expect((entry?.tool_calls as Record<string, unknown>[] | undefined)?.[0]).toMatchObject({ name: 'add', outcome: 'failure', error: 'tool execution failed', error_detail: expect.stringContaining('/srv/private/db.js:42') as string });
    const streamed = await post(serve.url, ask('sum two numbers', { tools: 'mcp:calc', session: 'leaky' }, { stream: true }));
    seen.push(await streamed.text());
    expect(seen[1]).toContain('"tool_execution_error"');

    const started = await fetch(`${serve.url}/api/jobs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ask('sum two numbers', { tools: 'mcp:calc', session: 'leaky' })) });
    const { job_id: id } = (await started.json()) as { job_id: string };
    await waitFor(async () => expect(await (await fetch(`${serve.url}/api/jobs/${id}`)).json()).toMatchObject({ state: 'failed' }));
    seen.push(await (await fetch(`${serve.url}/api/jobs/${id}`)).text(), await (await fetch(`${serve.url}/api/jobs/${id}/stream`)).text(), readFileSync(join(home, 'jobs', `${id}.json`), 'utf8'));

    const session = await fetch(`${serve.url}/api/sessions/leaky`);
    seen.push(await session.text());
    const turns = (JSON.parse(seen.at(-1) ?? '') as { turns: { tool_calls?: Record<string, unknown>[] }[] }).turns;
    expect(turns).toHaveLength(3);
    expect(turns[0]?.tool_calls?.[0]).toMatchObject({ name: 'add', outcome: 'failure', error: 'tool execution failed' });
    for (const text of seen) {
      expect(text).not.toContain('/srv/private');
      expect(text).not.toContain('error_detail');
    }
    // The log is the CLI user's own: sessions show --json prints it whole.
    const shown = await runArgo(['sessions', 'show', 'leaky', '--json'], { home, host: ollama.url });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('/srv/private/db.js:42');
    // Yet a secret in it never reached the log.
    expect(JSON.stringify(logLines(home))).not.toContain('hunter2');
    expect(shown.stdout).toContain('postgres://app:***@db');
  });
});
