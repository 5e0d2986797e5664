// The turns `argo rerun` cannot rebuild, and the one line that says why (test/e2e/rerun covers rebuilt ones).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import type { LogEntry } from '../../src/log/entry.js';
import { QUEUED_ERROR } from '../../src/log/unfinished.js';
import { rebuildTurn } from '../../src/turn/rerun.js';
import { runTurn } from '../../src/turn/turn.js';
import { makeEntry } from '../query/helpers.js';
import { portsFor } from '../support/turn-ports.js';

const settings = loadSettings({ home: mkdtempSync(join(tmpdir(), 'argo-rerun-')) }, {});

describe('rebuildTurn refuses what one request cannot be', () => {
  it.each<[string, Partial<LogEntry>, string]>([
    ['an agent run', { tools: ['read_file', 'list_files'] }, "turn T1 was an agent run (tools read_file, list_files), and rerun sends one request, not a tool loop (its request_sha256 is of the run's first request, with the memo of that moment, which the log does not keep); ask it again with --tools read_file,list_files"],
    ['an agent run with no tool available', { tools: [] }, "turn T1 was an agent run (no tool was available), and rerun sends one request, not a tool loop (its request_sha256 is of the run's first request, with the memo of that moment, which the log does not keep); ask it again with the --tools it was asked with"],
    ["a serve turn with the client's one message", { client_messages: 1 }, "turn T1 was asked through argo serve with the client's own message, which is not logged, so its request cannot be rebuilt; send it again from the client"],
    ["a serve turn with the client's messages", { client_messages: 3 }, "turn T1 was asked through argo serve with the client's own 3 messages, which are not logged, so its request cannot be rebuilt; send it again from the client"],
    ["a serve turn with the client's field", { client_fields: ['tools'] }, "turn T1 was asked through argo serve with the client's tools, which is not logged, so its request cannot be rebuilt; send it again from the client"],
    ["a serve turn with the client's fields", { client_fields: ['tools', 'format'] }, "turn T1 was asked through argo serve with the client's tools, format, which are not logged, so its request cannot be rebuilt; send it again from the client"],
    ["a serve job's turn that waited in its session's queue when the server ended", { request_sha256: undefined, status: 'interrupted', error: QUEUED_ERROR }, "turn T1 was never sent to the model (argo serve ended while it waited in its session's queue), so there is no request to rebuild; ask it again"],
    ['a turn logged before requests were hashed', { request_sha256: undefined }, 'turn T1 was logged before Argo kept a hash of each request, so its request cannot be proved'],
  ])('%s', (_case, fields, reason) => {
    expect(rebuildTurn(makeEntry({ id: 'T1', ...fields }), new Map(), settings)).toEqual({ ok: false, reason });
  });
});

describe('an empty system prompt (--system "", an empty --system-file) is none', () => {
  const asked = async (system: string) => {
    const home = mkdtempSync(join(tmpdir(), 'argo-rerun-system-'));
    const settings = loadSettings({ home, system }, {});
    const { entry } = await runTurn(settings, { prompt: 'Hello', replay: { kind: 'none' }, log: false, ollamaStream: true }, portsFor('sys000000001'));
    return { settings, entry };
  };

  it('is not logged, and the turn is proved again', async () => {
    const { settings, entry } = await asked('');
    expect(entry).not.toHaveProperty('system');
    expect(rebuildTurn(entry, new Map(), settings)).toMatchObject({ ok: true, sha256: entry.request_sha256 });
  });

  it('a line an earlier version logged with "system": "" (nothing sent) is proved too', async () => {
    const { settings, entry } = await asked('');
    expect(rebuildTurn({ ...entry, system: '' }, new Map(), settings)).toMatchObject({ ok: true, sha256: entry.request_sha256 });
  });

  it('a system prompt of words is still sent first, logged and proved', async () => {
    const { settings, entry } = await asked('Be exact.');
    expect(entry.system).toBe('Be exact.');
    expect(rebuildTurn(entry, new Map(), settings)).toMatchObject({ ok: true, sha256: entry.request_sha256 });
  });
});
