// runTurn keeps its turn in the journal of unfinished turns while the answer streams.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { UNFINISHED_ERROR, bootId, machineId, processStartTime, unfinishedDir } from '../../src/log/unfinished.js';
import type { UnfinishedTurn } from '../../src/log/unfinished.js';
import { EMPTY_METRICS } from '../../src/ollama/transport.js';
import { recoverUnfinished } from '../../src/turn/recover.js';
import { UNANSWERED_ERROR, runTurn } from '../../src/turn/turn.js';
import type { Answer, Answerer, TurnInput } from '../../src/turn/turn.js';
import { waitFor } from '../support/wait.js';
import { logLines } from '../support/run-argo.js';
import { answerPorts } from '../support/turn-ports.js';

const METRICS = { ...EMPTY_METRICS, eval_count: 2, prompt_eval_count: 5, done_reason: 'stop' };
const ANSWER: Answer = { status: 'ok', response: 'Hello there', failure: null, metrics: METRICS, largestPromptEvalCount: 5, firstTokenMs: 10, fields: { tools: ['fs'] } };

/** An answer step that answers only when the test says so. */
function heldAnswer(): { answer: Answerer; release: (answer?: Answer) => void; fail: (error: Error) => void; started: Promise<void> } {
  let release: (answer?: Answer) => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  let began: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (began = resolve));
  const answered = new Promise<Answer>((resolve, reject) => {
    release = (answer = ANSWER) => resolve(answer);
    fail = reject;
  });
  return {
    answer: () => {
      began();
      return answered;
    },
    release: (answer) => release(answer),
    fail: (error) => fail(error),
    started,
  };
}

const ports = answerPorts;

const home = (): string => mkdtempSync(join(tmpdir(), 'argo-turn-journal-'));
const input = (extra: Partial<TurnInput> = {}): TurnInput => ({ prompt: 'Explain closures', replay: { kind: 'none' }, log: true, ollamaStream: true, ...extra });
const journalFile = (dir: string): string => join(unfinishedDir(dir), 'turn00000001.json');

describe('runTurn and the journal of unfinished turns', () => {
  it('the request goes out first; the draft is written while the answer streams, and removed once the turn is logged', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'work' }, {});
    const held = heldAnswer();
    const seenAtRequest: boolean[] = [];
    const running = runTurn(settings, input(), ports({ answer: (request, context) => (seenAtRequest.push(existsSync(journalFile(dir))), held.answer(request, context)) }));
    await held.started;
    // Not waiting on the journal: the answer step was called before anything was written.
    expect(seenAtRequest).toEqual([false]);
    const written = await waitFor(() => JSON.parse(readFileSync(journalFile(dir), 'utf8')) as UnfinishedTurn);
    expect(written).toMatchObject({
      owner: { pid: process.pid, host: hostname(), boot: bootId(), machine: machineId(), start: processStartTime(process.pid) },
      day: '2025-03-04',
      session: { id: null, name: 'work' },
      entry: { id: 'turn00000001', status: 'interrupted', user_prompt: 'Explain closures', model_response: '', done_reason: null, error: UNFINISHED_ERROR },
    });
    expect(written.entry.timings).toEqual({ first_token_ms: null, total_ms: 0, total_duration_ns: null, load_duration_ns: null, prompt_eval_count: null, prompt_eval_duration_ns: null, eval_count: null, eval_duration_ns: null });
    held.release();
    const result = await running;
    expect(existsSync(journalFile(dir))).toBe(false);
    // The logged line is the draft completed by the answer: same fields in the same order, the answer's added.
    const [line] = logLines(dir);
    expect(Object.keys(line ?? {})).toEqual([...Object.keys(written.entry), 'tools']);
    const answered = new Set(['status', 'model_response', 'timings', 'done_reason', 'error', 'num_ctx', 'truncation_suspected', 'tools', 'session_id']);
    for (const [key, value] of Object.entries(written.entry)) if (!answered.has(key)) expect(line?.[key], key).toEqual(value);
    expect(line).toMatchObject({ status: 'ok', model_response: 'Hello there', error: null, done_reason: 'stop', session_id: result.entry.session_id });
  });

  it("an answer step's fields known before it runs (an agent run's tools) are in the draft; its own fields win in the line", async () => {
    const dir = home();
    const held = heldAnswer();
    const running = runTurn(loadSettings({ home: dir, session: 'work' }, {}), input(), ports({ answer: held.answer, draftFields: { tools: ['fs', 'edit'], ephemeral_system: null } }));
    const written = await waitFor(() => JSON.parse(readFileSync(journalFile(dir), 'utf8')) as UnfinishedTurn);
    expect(written.entry).toMatchObject({ tools: ['fs', 'edit'], ephemeral_system: null });
    held.release();
    await running;
    expect(logLines(dir)).toMatchObject([{ tools: ['fs'], ephemeral_system: null }]);
  });

  it("the answer's progress (an agent run's rounds) replaces the draft, in order, its fields as they were when told", async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'work' }, {});
    const held = heldAnswer();
    let progress: ((fields: Record<string, unknown>) => void) | undefined;
    const running = runTurn(settings, input(), ports({ draftFields: { tools: ['write_file'] }, answer: (request, context) => ((progress = context.onProgress), held.answer(request, context)) }));
    await held.started;
    const draft = (): UnfinishedTurn['entry'] => (JSON.parse(readFileSync(journalFile(dir), 'utf8')) as UnfinishedTurn).entry;
    const calls: Record<string, unknown>[] = [{ id: 'c1', name: 'write_file', outcome: 'success' }];
    progress?.({ tool_calls: calls, iterations: 1, stop_reason: 'interrupted' });
    // Changed after it was told: the draft keeps what was told.
    calls.push({ id: 'late', name: 'x', outcome: 'success' });
    await waitFor(() => expect(draft().iterations).toBe(1));
    expect(draft()).toMatchObject({ tools: ['write_file'], status: 'interrupted', error: UNFINISHED_ERROR, stop_reason: 'interrupted', tool_calls: [{ id: 'c1' }] });
    expect(draft().tool_calls).toHaveLength(1);
    // Told one after the other: the later one is what stays.
    progress?.({ tool_calls: [...calls], iterations: 2 });
    progress?.({ tool_calls: [...calls], iterations: 3 });
    await waitFor(() => expect(draft().iterations).toBe(3));
    expect(draft().tool_calls).toHaveLength(2);
    progress?.({ iterations: 4 });
    held.fail(new Error('a bug in the loop'));
    await expect(running).rejects.toThrow('a bug in the loop');
    // The turn is logged, and no update put its file back after it was removed.
    expect(readdirSync(unfinishedDir(dir))).toEqual([]);
  });

  it('progress told to a turn killed after it: the next argo logs the turn with its calls', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'work' }, {});
    mkdirSync(join(settings.paths.logs, '2025-03-04.log'), { recursive: true });
    const held = heldAnswer();
    const running = runTurn(settings, input(), ports({
      draftFields: { tools: ['write_file'] },
      rescue: () => Promise.reject(new Error('disk full')),
      answer: (request, context) => {
        context.onProgress?.({ tool_calls: [{ id: 'c1', name: 'write_file', arguments: { path: 'a.txt', content: 'hi' }, outcome: 'success', round: 1, ms: 3, result_chars: 10 }], iterations: 1, all_failure_rounds: 0, stop_reason: 'interrupted', compacted: [] });
        return held.answer(request, context);
      },
    }));
    await held.started;
    await waitFor(() => expect((JSON.parse(readFileSync(journalFile(dir), 'utf8')) as UnfinishedTurn).entry.iterations).toBe(1));
    // Neither the log nor the rescue takes it: the journal's file is what is left, as after a kill.
    held.fail(new Error('a bug in the loop'));
    await expect(running).rejects.toThrow('a bug in the loop');
    rmSync(join(settings.paths.logs, '2025-03-04.log'), { recursive: true });
    const gone = (): void => {
      throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    };
    const recovery = await recoverUnfinished(settings, { me: { pid: process.pid + 1, host: hostname(), boot: bootId() }, kill: gone });
    expect(recovery.recovered).toEqual(['turn00000001']);
    expect(logLines(dir)).toMatchObject([{ status: 'interrupted', iterations: 1, all_failure_rounds: 0, stop_reason: 'interrupted', tool_calls: [{ name: 'write_file', outcome: 'success' }] }]);
  });

  it('a turn not logged hears no progress', async () => {
    const dir = home();
    const heard: boolean[] = [];
    await runTurn(loadSettings({ home: dir, session: 'work' }, {}), input({ log: false }), ports({ answer: (_request, context) => (heard.push(context.onProgress !== undefined), Promise.resolve(ANSWER)) }));
    expect(heard).toEqual([false]);
  });

  it('a turn not logged (--no-log) keeps no journal either', async () => {
    const dir = home();
    const held = heldAnswer();
    const running = runTurn(loadSettings({ home: dir, session: 'work' }, {}), input({ log: false }), ports({ answer: held.answer }));
    await held.started;
    held.release();
    await running;
    expect(existsSync(unfinishedDir(dir))).toBe(false);
  });

  it('an answer step that throws: the turn is logged as an error naming it, no journal file is left, and the error still reaches the caller', async () => {
    const dir = home();
    const held = heldAnswer();
    const running = runTurn(loadSettings({ home: dir, session: 'work' }, {}), input(), ports({ answer: held.answer }));
    await waitFor(() => expect(existsSync(journalFile(dir))).toBe(true));
    held.fail(new Error('a bug in the loop\nat line 2'));
    await expect(running).rejects.toThrow('a bug in the loop');
    expect(readdirSync(unfinishedDir(dir))).toEqual([]);
    // Not the thrown text, which may hold anything: the caller shows that where argo runs.
    expect(logLines(dir)).toMatchObject([{ id: 'turn00000001', status: 'error', user_prompt: 'Explain closures', model_response: '', error: UNANSWERED_ERROR }]);
  });

  it('a hook after the answer that throws: the answered turn is logged as answered', async () => {
    const dir = home();
    const held = heldAnswer();
    const running = runTurn(loadSettings({ home: dir, session: 'work' }, {}), input(), ports({ answer: held.answer, onEntry: () => {
      throw new Error('the hook failed');
    } }));
    await held.started;
    held.release();
    await expect(running).rejects.toThrow('the hook failed');
    expect(logLines(dir)).toMatchObject([{ status: 'ok', model_response: 'Hello there', error: null }]);
    expect(readdirSync(unfinishedDir(dir))).toEqual([]);
  });

  it('an answer step that throws once the turn was cancelled: logged as interrupted, with the reason given', async () => {
    const dir = home();
    const held = heldAnswer();
    const cancel = new AbortController();
    const running = runTurn(loadSettings({ home: dir, session: 'work' }, {}), input(), ports({ answer: held.answer, signal: cancel.signal }));
    await held.started;
    cancel.abort('interrupted by SIGTERM');
    held.fail(new Error('aborted'));
    await expect(running).rejects.toThrow('aborted');
    expect(logLines(dir)).toMatchObject([{ status: 'interrupted', error: 'interrupted by SIGTERM', user_prompt: 'Explain closures' }]);
  });

  it('an answer step that throws and a log that cannot take the turn: its journal file is kept for the next argo', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'work' }, {});
    mkdirSync(join(settings.paths.logs, '2025-03-04.log'), { recursive: true });
    const held = heldAnswer();
    const running = runTurn(settings, input(), ports({ answer: held.answer, rescue: () => Promise.reject(new Error('disk full')) }));
    await held.started;
    held.fail(new Error('a bug in the loop'));
    await expect(running).rejects.toThrow('a bug in the loop');
    expect(readdirSync(unfinishedDir(dir))).toEqual(['turn00000001.json']);
  });

  it('a turn the log cannot take is rescued as before, and its journal file removed', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'work' }, {});
    mkdirSync(join(settings.paths.logs, '2025-03-04.log'), { recursive: true });
    const rescued: string[] = [];
    const held = heldAnswer();
    const running = runTurn(settings, input(), ports({ answer: held.answer, rescue: (text) => (rescued.push(text), Promise.resolve('/saved/here')) }));
    await held.started;
    held.release();
    await expect(running).rejects.toThrow(/the turn was saved to \/saved\/here/);
    expect(rescued).toHaveLength(1);
    expect(readdirSync(unfinishedDir(dir))).toEqual([]);
  });

  it('a turn neither the log nor the rescue can take keeps its journal file, the error says where, and a later argo logs it from there', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'work' }, {});
    const dayFile = join(settings.paths.logs, '2025-03-04.log');
    mkdirSync(dayFile, { recursive: true });
    const held = heldAnswer();
    const running = runTurn(settings, input(), ports({ answer: held.answer, rescue: () => Promise.reject(new Error('disk full')) }));
    await held.started;
    held.release();
    await expect(running).rejects.toThrow(
      `the turn could not be saved either (disk full); its prompt and settings, not its answer, are still in ${journalFile(dir)}, which the next argo logs as interrupted once this one has ended`,
    );
    expect(readdirSync(unfinishedDir(dir))).toEqual(['turn00000001.json']);
    // This argo has ended (its pid no longer answers), and the log takes lines again.
    rmSync(dayFile, { recursive: true });
    const gone = (): void => {
      throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    };
    const recovery = await recoverUnfinished(settings, { me: { pid: process.pid + 1, host: hostname(), boot: bootId() }, kill: gone });
    expect(recovery.recovered).toEqual(['turn00000001']);
    expect(logLines(dir)).toMatchObject([{ id: 'turn00000001', status: 'interrupted', user_prompt: 'Explain closures', error: UNFINISHED_ERROR }]);
  });

  it('a journal that cannot be written costs the turn nothing but one notice, once per process', async () => {
    const dir = home();
    const settings = loadSettings({ home: dir, session: 'work' }, {});
    // A file where the folder goes.
    writeFileSync(unfinishedDir(dir), 'not a folder');
    const notices: string[] = [];
    let id = 0;
    const turnPorts = ports({ onNotice: (line) => notices.push(line), newId: () => `turn0000000${++id}` });
    const first = await runTurn(settings, input(), { ...turnPorts, answer: () => Promise.resolve(ANSWER) });
    const second = await runTurn(settings, input(), { ...turnPorts, answer: () => Promise.resolve(ANSWER) });
    expect([first.entry.status, second.entry.status]).toEqual(['ok', 'ok']);
    expect(logLines(dir).map((line) => line.id)).toEqual(['turn00000001', 'turn00000002']);
    expect(notices).toEqual([
      `argo: cannot keep this turn in ${unfinishedDir(dir)} while it is answered (${unfinishedDir(dir)} is not a folder; remove it, and Argo makes the folder again); it is logged as usual when it ends, but would be lost if argo were killed first (argo doctor checks the data home)`,
    ]);
  });
});
