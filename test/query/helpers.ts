// Fixtures for history tests: log entries, data directories, sessions with real index files.
import { appendFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogEntry } from '../../src/log/entry.js';
import { UNFINISHED_ERROR } from '../../src/log/unfinished.js';
import { recordTurn } from '../../src/sessions/record-turn.js';
import type { DataPaths } from '../../src/log/writer.js';
import type { ReplayPolicyLog } from '../../src/replay/types.js';
import { openSession, readSession } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { defined } from '../support/defined.js';

export function makeEntry(overrides: Partial<LogEntry> = {}): LogEntry {
  return {
    id: 'turn-0000001',
    timestamp: '2025-01-02T10:00:00.000+00:00',
    session: 'work',
    session_id: '00000000-0000-4000-8000-000000000001',
    status: 'ok',
    entry_type: 'question',
    model: 'argo',
    endpoint: 'chat',
    active_mode: null,
    persona: 'neutral',
    verbosity: 'short',
    replay: { enabled: false, count: null, session: false },
    user_prompt: 'why is the sky blue?',
    model_response: 'Rayleigh scattering.',
    replay_policy: null,
    replayed_ids: [],
    timings: {
      first_token_ms: 100,
      total_ms: 1000,
      total_duration_ns: 1_000_000_000,
      load_duration_ns: 0,
      prompt_eval_count: 10,
      prompt_eval_duration_ns: 10_000_000,
      eval_count: 50,
      eval_duration_ns: 1_000_000_000,
    },
    done_reason: 'stop',
    error: null,
    ...overrides,
  };
}

/** A turn's line as the journal of unfinished turns keeps it before its answer (and a recovered turn is logged). */
export function makeDraft(id: string, overrides: Partial<LogEntry> = {}): LogEntry {
  return makeEntry({
    id,
    timestamp: '2025-03-04T05:06:07.000+00:00',
    session_id: '',
    status: 'interrupted',
    user_prompt: `prompt of ${id}`,
    model_response: '',
    timings: { first_token_ms: null, total_ms: 0, total_duration_ns: null, load_duration_ns: null, prompt_eval_count: null, prompt_eval_duration_ns: null, eval_count: null, eval_duration_ns: null },
    done_reason: null,
    error: UNFINISHED_ERROR,
    ...overrides,
  });
}

export function policy(overrides: Partial<ReplayPolicyLog> = {}): ReplayPolicyLog {
  return {
    entries_available: 2,
    entries_filtered: 0,
    filtered_types: [],
    entries_used: 2,
    chars_used: 100,
    trimmed: false,
    reason: 'continuation',
    context_strength: 'strong',
    budget: 5500,
    decisions: [],
    decisions_omitted: 0,
    ...overrides,
  };
}

export interface Home {
  home: string;
  paths: DataPaths;
}

export function tempData(): Home {
  const home = mkdtempSync(join(tmpdir(), 'argo-history-'));
  const paths = { logs: join(home, 'logs'), sessions: join(home, 'sessions') };
  mkdirSync(paths.logs, { recursive: true });
  mkdirSync(paths.sessions, { recursive: true });
  return { home, paths };
}

/** Appends raw text to a daily file (for corrupt lines and hand-made fixtures). */
export function appendRaw(paths: DataPaths, date: string, text: string): string {
  const file = join(paths.logs, `${date}.log`);
  appendFileSync(file, text);
  return file;
}

export function writeEntries(paths: DataPaths, date: string, entries: readonly LogEntry[]): string {
  return appendRaw(paths, date, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
}

let counter = 0;

/**
 * Records `count` turns in the session through the real writer (log line, index line, record),
 * one per minute from `start`; `shape` adjusts each entry.
 */
export async function recordTurns(
  paths: DataPaths,
  name: string,
  count: number,
  options: { date?: string; start?: string; shape?: (i: number) => Partial<LogEntry> } = {},
): Promise<{ session: SessionRecord; entries: LogEntry[] }> {
  const date = options.date ?? '2025-01-02';
  const start = Date.parse(options.start ?? `${date}T10:00:00.000Z`);
  const session = await openSession(paths.sessions, name, new Date(start).toISOString());
  const entries: LogEntry[] = [];
  for (let i = 0; i < count; i++) {
    counter++;
    const entry = makeEntry({
      id: `t${String(counter).padStart(11, '0')}`,
      timestamp: new Date(start + i * 60_000).toISOString(),
      session: name,
      session_id: session.id,
      user_prompt: `${name} prompt ${i + 1}`,
      model_response: `${name} answer ${i + 1}`,
      ...options.shape?.(i),
    });
    await recordTurn(paths, session, entry, date);
    entries.push(entry);
  }
  return { session: defined(await readSession(paths.sessions, name), `session ${name}`), entries };
}
