// A turn whose log writer cannot be loaded when it is needed (a server out of file descriptors: Node
// then keeps that import failed for good) is rescued like any turn the log cannot take, not lost.
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { RuntimeError } from '../../src/errors.js';
import { portsFor } from '../support/turn-ports.js';

vi.mock('../../src/sessions/record-turn.js', () => {
  throw Object.assign(new Error("EMFILE: too many open files, open '/opt/argo/dist/cli/record-turn-ABC.js'"), { code: 'EMFILE' });
});

const { runTurn } = await import('../../src/turn/turn.js');

const ports = portsFor('turn00000009');

describe('a turn whose log writer cannot be loaded', () => {
  // A new session's record is not made either: the saved turn carries the id it was given, and the
  // message says to make the record before adding the turn back.
  it.each([
    ['a session that exists already', true, /^cannot write the log in .*\/logs \(.*\); the turn was saved to .*\/rescued\/unlogged-.*\.ndjson — /],
    ['a new session', false, /^cannot create session "work" in .*\/sessions \(.*\); the turn was saved to .*\/rescued\/unlogged-.*\.ndjson — .*, then make the session's record and add the saved turn back/],
  ])('%s: the turn is rescued and the error says where', async (_name, existing, said) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-no-module-'));
    const settings = loadSettings({ home, session: 'work' }, {});
    if (existing) {
      // The record exists: the session is read before the answer, so only the writer is missing.
      const { openSession } = await import('../../src/sessions/store.js');
      await openSession(settings.paths.sessions, 'work', '2025-03-04T05:00:00.000+00:00');
    }
    const error = await runTurn(settings, { prompt: 'keep me', replay: { kind: 'none' }, log: true, ollamaStream: true }, ports).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RuntimeError);
    // (vitest words the failed load its own way: the cause is not asserted.)
    expect((error as Error).message).toMatch(said);
    const [file] = readdirSync(join(home, 'rescued'));
    expect(JSON.parse(readFileSync(join(home, 'rescued', file ?? ''), 'utf8'))).toMatchObject({
      id: 'turn00000009',
      session: 'work',
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
      user_prompt: 'keep me',
      model_response: 'the answer',
    });
    // The journal spoke for the turn while it was answered; the rescued copy does now.
    expect(readdirSync(join(home, 'unfinished'))).toEqual([]);
  });
});
