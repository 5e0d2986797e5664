// What a quit at once (a second Ctrl-C) saves first: the registry of synchronous saves, the
// synchronous atomic write under it, and a turn's draft written with the answer so far.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { SymlinkRefusedError, runLastSaves, saveBeforeQuitting, writeFileAtomicNow } from '../../src/log/fs.js';
import { unfinishedDir, writeUnfinishedNow } from '../../src/log/unfinished.js';
import type { UnfinishedTurn } from '../../src/log/unfinished.js';
import { EMPTY_METRICS } from '../../src/ollama/transport.js';
import { recoverUnfinished } from '../../src/turn/recover.js';
import { quitFields, runTurn } from '../../src/turn/turn.js';
import type { Answer, AnswerContext, TurnPorts } from '../../src/turn/turn.js';
import { makeDraft } from '../query/helpers.js';
import { logLines } from '../support/run-argo.js';
import { answerPorts } from '../support/turn-ports.js';
import { waitFor } from '../support/wait.js';

const folder = (): string => mkdtempSync(join(tmpdir(), 'argo-quit-save-'));
const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe('saveBeforeQuitting and runLastSaves', () => {
  it('runs every save with the signal, passes over one that throws, forgets them all after; a removed one is not run', () => {
    const heard: string[] = [];
    saveBeforeQuitting((signal) => heard.push(`a ${signal}`));
    saveBeforeQuitting(() => {
      throw new Error('disk full');
    });
    saveBeforeQuitting((signal) => heard.push(`c ${signal}`));
    const remove = saveBeforeQuitting(() => heard.push('removed'));
    remove();
    runLastSaves('SIGINT');
    expect(heard).toEqual(['a SIGINT', 'c SIGINT']);
    runLastSaves('SIGTERM');
    expect(heard).toHaveLength(2);
  });
});

describe('writeFileAtomicNow', () => {
  it.each([
    ['a new file, replacing', false, null, true, 'new\n'],
    ['a new file, exclusive', true, null, true, 'new\n'],
    ['over a file, replacing', false, 'old\n', true, 'new\n'],
    ['over a file, exclusive: left as it was', true, 'old\n', false, 'old\n'],
  ])('%s', (_case, exclusive, before, placed, after) => {
    const dir = folder();
    const target = join(dir, 'draft.json');
    if (before !== null) writeFileSync(target, before, { mode: 0o600 });
    expect(writeFileAtomicNow(target, 'new\n', { exclusive })).toBe(placed);
    expect(readFileSync(target, 'utf8')).toBe(after);
    expect(modeOf(target)).toBe(0o600);
    // No temporary file left beside it.
    expect(readdirSync(dir)).toEqual(['draft.json']);
  });

  it.each([false, true])('refuses a symbolic link at the target (exclusive: %s), and writes nothing through it', (exclusive) => {
    const dir = folder();
    const elsewhere = join(dir, 'elsewhere.txt');
    writeFileSync(elsewhere, 'theirs\n');
    symlinkSync(elsewhere, join(dir, 'draft.json'));
    expect(() => writeFileAtomicNow(join(dir, 'draft.json'), 'new\n', { exclusive })).toThrow(SymlinkRefusedError);
    expect(readFileSync(elsewhere, 'utf8')).toBe('theirs\n');
    expect(readdirSync(dir).sort()).toEqual(['draft.json', 'elsewhere.txt']);
  });
});

describe('writeUnfinishedNow', () => {
  const turn = (id: string, response: string): UnfinishedTurn => ({ owner: { pid: 100, host: 'box', boot: null }, day: '2025-03-04', session: { id: null, name: 'work' }, entry: { ...makeDraft(id), model_response: response } });

  it('makes the journal folder (0700) and the file (0600) with the turn; replacing puts the new one in place, exclusive does not', () => {
    const home = folder();
    expect(writeUnfinishedNow(home, turn('abc', 'first'), false)).toBe(true);
    const file = join(unfinishedDir(home), 'abc.json');
    expect(modeOf(unfinishedDir(home))).toBe(0o700);
    expect(modeOf(file)).toBe(0o600);
    expect((JSON.parse(readFileSync(file, 'utf8')) as UnfinishedTurn).entry.model_response).toBe('first');
    expect(writeUnfinishedNow(home, turn('abc', 'second'), false)).toBe(false);
    expect((JSON.parse(readFileSync(file, 'utf8')) as UnfinishedTurn).entry.model_response).toBe('first');
    expect(writeUnfinishedNow(home, turn('abc', 'third'), true)).toBe(true);
    expect((JSON.parse(readFileSync(file, 'utf8')) as UnfinishedTurn).entry.model_response).toBe('third');
  });

  it('refuses a journal folder that is a link, or open to others, and a turn id that cannot name a file', () => {
    const linked = folder();
    mkdirSync(join(linked, 'real'), { mode: 0o700 });
    symlinkSync(join(linked, 'real'), unfinishedDir(linked));
    expect(() => writeUnfinishedNow(linked, turn('abc', 'x'), true)).toThrow(SymlinkRefusedError);
    expect(readdirSync(join(linked, 'real'))).toEqual([]);
    const open = folder();
    mkdirSync(unfinishedDir(open), { mode: 0o755 });
    expect(() => writeUnfinishedNow(open, turn('abc', 'x'), true)).toThrow(/not a private folder/);
    expect(() => writeUnfinishedNow(folder(), turn('../x', 'x'), true)).toThrow(/cannot name a file/);
  });
});

describe('quitFields', () => {
  const signal = (reason?: string): AbortSignal => {
    const controller = new AbortController();
    controller.abort(reason);
    return controller.signal;
  };
  it.each([
    ['Ctrl-C, then a second', { response: 'Hello, wor', thinking: '' }, signal('interrupted by the user'), 'SIGINT', { model_response: 'Hello, wor', error: 'interrupted by the user; argo then quit at once (a second Ctrl-C) before it could log the turn' }],
    ['SIGTERM, then a second', { response: 'Hi', thinking: 'hmm' }, signal('interrupted by SIGTERM'), 'SIGTERM', { model_response: 'Hi', thinking: 'hmm', error: 'interrupted by SIGTERM; argo then quit at once (SIGTERM) before it could log the turn' }],
    ['reasoning inline, split off', { response: '<think>plan</think>Answer so', thinking: '' }, signal(), 'SIGINT', { model_response: 'Answer so', thinking: 'plan' }],
    ['a later round of an agent run: its paragraph break is no word of it', { response: '\n\nThe tree has', thinking: '', afterRound: true }, signal('interrupted by the user'), 'SIGINT', { model_response: 'The tree has' }],
    ['not cut first', { response: '', thinking: '' }, undefined, 'SIGINT', { model_response: '', error: 'interrupted; argo then quit at once (a second Ctrl-C) before it could log the turn' }],
  ])('%s', (_case, streamed, cut, quit, expected) => {
    const fields = quitFields(streamed, cut, quit, 340);
    expect(fields).toMatchObject(expected);
    if (!('thinking' in expected)) expect(fields).not.toHaveProperty('thinking');
    expect(fields.timings).toMatchObject({ first_token_ms: null, total_ms: 340 });
  });
});

describe('a turn being answered when argo quits at once', () => {
  it("an agent run's draft holds its latest round's words and reasoning, the rounds before in its progress", async () => {
    const home = folder();
    let context: AnswerContext | undefined;
    const controller = new AbortController();
    void runTurn(loadSettings({ home, session: 'work' }, {}), { prompt: 'look', replay: { kind: 'none' }, log: true, ollamaStream: true }, answerPorts({
      answer: (_request, given) => {
        context = given;
        return new Promise<Answer>(() => undefined);
      },
      signal: controller.signal,
    })).catch(() => undefined);
    await waitFor(() => expect(readdirSync(unfinishedDir(home))).toEqual(['turn00000001.json']));
    // What the agent loop sends: round 1's reasoning and words, its progress, then round 2 after a paragraph break.
    context?.onThinking?.('plan one');
    context?.onText('Let me look first.');
    context?.onProgress?.({ round_messages: [{ round: 1, content: 'Let me look first.', thinking: 'plan one' }], iterations: 1 });
    context?.onThinking?.('plan two');
    context?.onText('\n\n');
    context?.onText('The tree has');
    controller.abort('interrupted by the user');
    runLastSaves('SIGINT');
    const { entry } = JSON.parse(readFileSync(join(unfinishedDir(home), 'turn00000001.json'), 'utf8')) as { entry: Record<string, unknown> };
    expect(entry).toMatchObject({ model_response: 'The tree has', thinking: 'plan two', round_messages: [{ round: 1, content: 'Let me look first.', thinking: 'plan one' }], iterations: 1 });
  });

  const ports = (answer: TurnPorts['answer']): TurnPorts => answerPorts(answer ? { answer } : {});

  it('its draft takes the text so far at once; the next argo logs it interrupted with that text, not as lost', async () => {
    const home = folder();
    const settings = loadSettings({ home, session: 'work' }, {});
    let context: AnswerContext | undefined;
    let finish: (answer: Answer) => void = () => undefined;
    const controller = new AbortController();
    const running = runTurn(settings, { prompt: 'Explain closures', replay: { kind: 'none' }, log: true, ollamaStream: true }, {
      ...ports((_request, given) => {
        context = given;
        return new Promise<Answer>((resolve) => (finish = resolve));
      }),
      signal: controller.signal,
    });
    const file = join(unfinishedDir(home), 'turn00000001.json');
    // The first write done, its temporary file gone.
    await waitFor(() => expect(readdirSync(unfinishedDir(home))).toEqual(['turn00000001.json']));
    context?.onThinking?.('Let me think');
    context?.onText('A closure ');
    context?.onText('captures');
    controller.abort('interrupted by the user');
    runLastSaves('SIGINT');
    const draft = JSON.parse(readFileSync(file, 'utf8')) as UnfinishedTurn;
    expect(draft.entry).toMatchObject({ status: 'interrupted', model_response: 'A closure captures', thinking: 'Let me think', error: 'interrupted by the user; argo then quit at once (a second Ctrl-C) before it could log the turn' });
    expect(modeOf(file)).toBe(0o600);
    // No temporary file of its own left beside it.
    expect(readdirSync(unfinishedDir(home))).toEqual(['turn00000001.json']);

    // As the next argo finds it (this process playing another one).
    const recovered = await recoverUnfinished(settings, { me: { pid: process.pid + 1, host: draft.owner.host, boot: draft.owner.boot }, kill: () => {
      const error = Object.assign(new Error('no such process'), { code: 'ESRCH' });
      throw error;
    } });
    expect(recovered.recovered).toEqual(['turn00000001']);
    expect(logLines(home)).toMatchObject([{ id: 'turn00000001', status: 'interrupted', model_response: 'A closure captures', thinking: 'Let me think' }]);

    // Once the turn is over, nothing of it is saved at a quit.
    finish({ status: 'interrupted', response: 'A closure captures', failure: null, metrics: EMPTY_METRICS, largestPromptEvalCount: null, firstTokenMs: 10 });
    await running.catch(() => undefined);
    runLastSaves('SIGINT');
    expect(existsSync(file)).toBe(false);
  });
});
