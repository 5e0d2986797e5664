// The server's view of Ollama gives up on a hung Ollama: /health must answer, and no request may
// keep a stopping server alive (an abandoned request no longer holds the process). Its session
// store's title change takes the session's lock, as a turn finishing does.
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSessionLock } from '../../src/log/lock.js';
import type { LogEntry } from '../../src/log/entry.js';
import { ollamaInfo, sessionStore, turnForClients } from '../../src/serve/stores.js';
import { recordTurn } from '../../src/sessions/record-turn.js';
import { deleteSession, openSession, readSession, saveSession } from '../../src/sessions/store.js';
import { makeEntry, tempData } from '../query/helpers.js';

const open = new Set<Socket>();
// Accepts connections and never answers: an Ollama stuck loading.
const hung = createServer((socket) => {
  open.add(socket);
  socket.on('close', () => open.delete(socket));
});
let host = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  host = `http://127.0.0.1:${(hung.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const socket of open) socket.destroy();
  await new Promise<void>((resolve) => hung.close(() => resolve()));
});

describe('ollamaInfo against an Ollama that never answers', () => {
  it.each([
    ['version', (info: ReturnType<typeof ollamaInfo>) => info.version(), { name: 'TimeoutError' }],
    ['models', (info: ReturnType<typeof ollamaInfo>) => info.models(), { message: expect.stringMatching(/^no answer from Ollama at http:\/\/127\.0\.0\.1:\d+ within 0\.15s \(Ollama stuck, or its machine overloaded\); restart Ollama, or check that machine's load$/) as unknown }],
  ])('%s gives up after its bound', async (_name, call, failure) => {
    const info = ollamaInfo(host, { versionMs: 150, modelsMs: 150 });
    await expect(call(info)).rejects.toMatchObject(failure);
    expect(open.size).toBeGreaterThan(0);
  });
});

describe('ollamaInfo with nothing listening', () => {
  it('says why the models cannot be listed as a chat request does, naming argo serve\'s OLLAMA_HOST', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const down = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(ollamaInfo(down).models()).rejects.toThrow(
      `cannot reach Ollama at ${down} (connection refused); start it with "ollama serve", or set argo serve's OLLAMA_HOST (or "host" in its config.json) to where it runs`,
    );
  });
});

describe('sessionStore setTitle against turns finishing on the same session', () => {
  it('a PATCHed title and every turn\'s count both survive, whichever comes first', async () => {
    for (let round = 0; round < 10; round++) {
      const { paths } = tempData();
      const planned = await openSession(paths.sessions, 'work', '2025-01-02T00:00:00Z');
      const turn = (i: number): Promise<string> =>
        recordTurn(paths, planned, makeEntry({ id: `t-${round}-${i}`, session: 'work', session_id: planned.id, user_prompt: `question ${i}` }), '2025-01-02');
      // Started together (turns of one process may share one write): whatever the order, nothing is lost.
      // The next test holds the lock to prove the title waits for a turn being written.
      await Promise.all([turn(0), turn(1), sessionStore(paths).setTitle('work', 'Renamed by a client'), turn(2), turn(3)]);
      expect(await readSession(paths.sessions, 'work')).toMatchObject({ title: 'Renamed by a client', turns: 4 });
    }
  });

  it('waits for the session\'s lock, as a turn finishing does, and writes over nothing it did not read', async () => {
    const { paths } = tempData();
    const planned = await openSession(paths.sessions, 'work', '2025-01-02T00:00:00Z');
    let titled: Promise<unknown> = Promise.resolve(null);
    await withSessionLock(paths.logs, planned.id, async () => {
      // A turn being written: it read the record before the title was asked for, and saves its count after.
      const current = await readSession(paths.sessions, 'work');
      if (current === null) throw new Error('the session is gone');
      titled = sessionStore(paths).setTitle('work', 'Set meanwhile');
      await saveSession(paths.sessions, { ...current, turns: 7, last_turn_id: 'held' });
    });
    await expect(titled).resolves.toMatchObject({ title: 'Set meanwhile', turns: 7, last_turn_id: 'held' });
    expect(await readSession(paths.sessions, 'work')).toMatchObject({ title: 'Set meanwhile', turns: 7, last_turn_id: 'held' });
  });

  it('a session renamed or gone by the time its lock is had is not found (not brought back under the old name)', async () => {
    const { paths } = tempData();
    const planned = await openSession(paths.sessions, 'work', '2025-01-02T00:00:00Z');
    let titled: Promise<unknown> = Promise.resolve(undefined);
    await withSessionLock(paths.logs, planned.id, async () => {
      titled = sessionStore(paths).setTitle('work', 'Too late');
      await deleteSession(paths.sessions, 'work');
    });
    await expect(titled).resolves.toBeNull();
    expect(await readSession(paths.sessions, 'work')).toBeNull();
  });
});

describe('sessionStore show: what only the server\'s log keeps', () => {
  const failed = { id: 'c1', name: 'query', arguments: { q: 'x' }, outcome: 'failure' as const, round: 1, ms: 3, result_chars: 0, error: 'tool execution failed' };
  const succeeded = { id: 'c2', name: 'query', arguments: { q: 'y' }, outcome: 'success' as const, round: 1, ms: 2, result_chars: 2, result: 'ok' };
  const detail = 'McpError: connect ECONNREFUSED at /srv/private/db.js:42';
  it.each([
    ['a failed call: its raw detail is left out, its safe error kept', makeEntry({ tool_calls: [{ ...failed, error_detail: detail }, succeeded] }), makeEntry({ tool_calls: [failed, succeeded] })],
    ['calls without a detail: the turn as it is', makeEntry({ tool_calls: [failed, succeeded] }), makeEntry({ tool_calls: [failed, succeeded] })],
    ['a turn without tools', makeEntry(), makeEntry()],
    [
      'the data home in the turn\'s error or a call\'s: named <data home>',
      makeEntry({ status: 'error', error: 'cannot save the tool result tool-results/a.json in the data home (/srv/argo/tool-results is not a folder)', tool_calls: [{ ...failed, error: 'cannot read /srv/argo/memo.json' }] }),
      makeEntry({ status: 'error', error: 'cannot save the tool result tool-results/a.json in the data home (<data home>/tool-results is not a folder)', tool_calls: [{ ...failed, error: 'cannot read <data home>/memo.json' }] }),
    ],
  ])('%s', (_name, entry, shown) => {
    expect(turnForClients(entry, '/srv/argo')).toEqual(shown);
    // The log's own copy is not changed.
    if (entry.tool_calls?.[0]?.error_detail !== undefined) expect(entry.tool_calls[0].error_detail).toBe(detail);
  });

  it('GET /api/sessions/:name\'s text leaves out error_detail; the rest of each turn is the log\'s', async () => {
    const { paths } = tempData();
    const planned = await openSession(paths.sessions, 'work', '2025-01-02T00:00:00Z');
    const entry = makeEntry({ id: 't-detail', session: 'work', session_id: planned.id, tool_calls: [{ ...failed, error_detail: detail }, succeeded] });
    await recordTurn(paths, planned, entry, '2025-01-02');
    const shown = await sessionStore(paths).show('work');
    let text = '';
    await shown?.((piece) => {
      text += piece;
      return Promise.resolve(true);
    });
    expect(text).not.toContain('/srv/private');
    const body = JSON.parse(text) as { turns: LogEntry[] };
    expect(body.turns).toEqual([{ ...entry, tool_calls: [failed, succeeded] }]);
  });
});
