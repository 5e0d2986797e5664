// Writes a data home that has been used hard for two years, in argo's exact formats, for the scale
// audit (docs/performance.md, "Scale: a two-year data home"): ~700 daily log files over 730 days,
// 200,000 turns (some answers of 20–50 KB, agent turns with tool calls and their kept definitions),
// 3,000 sessions of which 150 are forks (some forks of forks) and one holds 20,000 turns, a full memo,
// 300 serve jobs, 1,000 lines of chat history and a config.json with 200 toolsets. Every turn goes
// through the real replay planner; index lines, records, jobs and the memo are made by argo's own
// encoders.
//
//   node --import tsx test/bench/generate-home.ts [--out DIR] [--turns N] [--sessions N] [--days N]
//        [--big-turns N] [--forks N] [--jobs N] [--memo N] [--toolsets N] [--end YYYY-MM-DD] [--seed N]
// It prints the data home's path (default /tmp/argo-two-years); a summary of what it wrote is in
// meta.json beside the home. The last day is today (UTC) unless --end says otherwise, so `--since`
// filters find recent turns.
import { mkdirSync, rmSync, writeFileSync, closeSync, openSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { definitionsDigest, definitionsText, DEFINITIONS_FOLDER } from '../../src/agent/definitions.js';
import { toolDefinitions } from '../../src/agent/request.js';
import type { LogEntry, ToolCallLog } from '../../src/log/entry.js';
import { logFileName } from '../../src/log/files.js';
import { rulesFingerprint } from '../../src/replay/classify.js';
import { DEFAULT_REPLAY_POLICY } from '../../src/replay/policy.js';
import type { Endpoint, HistoryTurn } from '../../src/replay/types.js';
import { jobFile } from '../../src/serve/jobs.js';
import type { JobRecord } from '../../src/serve/jobs.js';
import { encodeRecord, titleFrom } from '../../src/sessions/store.js';
import type { ParentLink, SessionRecord } from '../../src/sessions/store.js';
import { indexLine } from '../../src/sessions/turn-index.js';
import { builtinTools } from '../../src/tools/catalog.js';
import { MEMO_MAX_ENTRIES, MEMO_MAX_VALUE_CHARS, serializeMemo } from '../../src/tools/memo.js';
import { BUILTIN_TOOLSETS } from '../../src/tools/toolsets.js';
import { lengthAround, makePrompt, pick, responseText, seededRandom } from './corpus.js';
import type { Random } from './corpus.js';
import { count, isMain } from './options.js';
import { MODELS, RECENT_KEPT, partial, plannedEntry, replaySpecFor, sessionNames, statusFor, timestampOf, turnId, uuid } from './generate-history.js';

export interface HomeParams {
  days: number;
  turns: number;
  sessions: number;
  bigTurns: number;
  forks: number;
  jobs: number;
  memo: number;
  toolsets: number;
  chatLines: number;
  /** The last day (YYYY-MM-DD); the first is `days - 1` days before. */
  end: string;
  seed: number;
}

export { BIG_SESSION as BIG } from './generate-history.js';

export const TWO_YEARS: Omit<HomeParams, 'end'> = {
  days: 730,
  turns: 200_000,
  sessions: 3_000,
  bigTurns: 20_000,
  forks: 150,
  jobs: 300,
  memo: MEMO_MAX_ENTRIES,
  toolsets: 200,
  chatLines: 1_000,
  seed: 20241126,
};

/** What the audit needs to know about the home it times. */
export interface HomeMeta {
  params: HomeParams;
  files: number;
  bytes: number;
  turns: number;
  agentTurns: number;
  bigAnswers: number;
  sessions: number;
  forks: number;
  /** A fork of the big session. */
  bigFork: string | null;
  /** A session of 20 to 100 turns that is not a fork. */
  smallSession: string;
  /** The first plain (not agent) turn of the first day, for `argo rerun`. */
  oldestTurn: string;
  generatedSeconds: number;
}

const PRIVATE_DIR = 0o700;
const PRIVATE_FILE = 0o600;
const DAY_MS = 86_400_000;
const WRITE_BUFFER_BYTES = 8 * 1024 * 1024;
// As the writer does: each index line caches its type under the rules in force (the defaults here).
const RULES = rulesFingerprint(DEFAULT_REPLAY_POLICY.classify);
const AGENT_TOOLSETS = ['fs', 'fs', 'fs', 'dev', 'dev', 'history', 'memo', 'web'];
const SHELL_COMMANDS = ['npm test', 'git status', 'ls -la src', 'rg TODO', 'make build', 'cargo check', 'go vet ./...'];
const FILES = ['src/main.ts', 'README.md', 'package.json', 'src/lib/parse.rs', 'cmd/server/main.go', 'docs/notes.md', 'Makefile'];

interface Session {
  name: string;
  id: string;
  size: number;
  /** Where its turns sit in the timeline (0..1): a centre and a width. */
  centre: number;
  width: number;
  agentShare: number;
  model: string;
  /** A fork's parent (index into the sessions) and the parent's own turn it forks at (1-based). */
  parent?: { session: number; at: number };
  // Filled while writing:
  keys: number[];
  own: string[]; // index lines, JSON, in order
  ownIds: string[];
  record: SessionRecord | null;
  ok: number;
  recent: HistoryTurn[];
  /** The recent turns as they stood when each own turn was written, for forks taken there. */
  recentAt: Map<number, HistoryTurn[]>;
}

function dateOfTime(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}

/** The days that have a file: `days` calendar days up to `end`, about one in 25 skipped (holidays). */
function activeDays(params: HomeParams, random: Random): string[] {
  const end = Date.parse(`${params.end}T00:00:00Z`);
  const dates: string[] = [];
  for (let day = params.days - 1; day >= 0; day--) {
    if (day > 0 && random() < 0.04) continue;
    dates.push(dateOfTime(end - day * DAY_MS));
  }
  return dates;
}

/** Turns per day: weekdays busier than weekends, use growing over the two years, some noise. */
function turnsPerDay(dates: readonly string[], turns: number, random: Random): number[] {
  const weights = dates.map((date, i) => {
    const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
    const weekend = weekday === 0 || weekday === 6 ? 0.45 : 1;
    return weekend * (0.6 + (0.8 * i) / dates.length) * (0.6 + 0.8 * random());
  });
  const total = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.max(1, Math.floor((w / total) * turns)));
  let left = turns - sizes.reduce((a, b) => a + b, 0);
  for (let i = sizes.length - 1; left !== 0; i = i === 0 ? sizes.length - 1 : i - 1) {
    const size = sizes[i] ?? 1;
    if (left > 0) {
      sizes[i] = size + 1;
      left--;
    } else if (size > 1) {
      sizes[i] = size - 1;
      left++;
    }
  }
  return sizes;
}

/** Own turns per session: the big one exactly, forks a few each (some none yet), the rest log-normal. */
function sessionSizes(params: HomeParams, random: Random): number[] {
  const bases = params.sessions - params.forks;
  const forks = Array.from({ length: params.forks }, () => (random() < 0.06 ? 0 : lengthAround(random, 6, 1, 1, 300)));
  const rest = params.turns - params.bigTurns - forks.reduce((a, b) => a + b, 0);
  const weights = Array.from({ length: bases - 1 }, () => lengthAround(random, 30, 1.3, 1, 1_000_000));
  const total = weights.reduce((a, b) => a + b, 0);
  const cap = params.bigTurns - 1;
  const sizes = weights.map((w) => Math.min(cap, Math.max(1, Math.floor((w / total) * rest))));
  let left = rest - sizes.reduce((a, b) => a + b, 0);
  for (let i = 0; left !== 0; i = (i + 1) % sizes.length) {
    const size = sizes[i] ?? 1;
    if (left > 0 && size < cap) {
      sizes[i] = size + 1;
      left--;
    } else if (left < 0 && size > 1) {
      sizes[i] = size - 1;
      left++;
    }
  }
  return [params.bigTurns, ...sizes, ...forks];
}

function makeSessions(params: HomeParams, random: Random): Session[] {
  const names = sessionNames(params.sessions - params.forks, random);
  const sizes = sessionSizes(params, random);
  const sessions: Session[] = [];
  const blank = (name: string, size: number): Session => ({
    name,
    id: uuid(random),
    size,
    centre: random(),
    width: Math.min(1, lengthAround(random, 0.01, 1.2, 0.0005, 1)),
    agentShare: random() < 0.2 ? 0.5 : 0.03,
    model: pick(random, MODELS),
    keys: [],
    own: [],
    ownIds: [],
    record: null,
    ok: 0,
    recent: [],
    recentAt: new Map(),
  });
  names.forEach((name, i) => {
    const session = blank(name, sizes[i] ?? 1);
    // The big session and "default" are used all along.
    if (i < 2) Object.assign(session, { centre: 0.5, width: 1 });
    session.keys = Array.from({ length: session.size }, () => Math.min(1, Math.max(0, session.centre + session.width * (random() - 0.5)))).sort((a, b) => a - b);
    sessions.push(session);
  });
  // Forks: of a session with a few turns (three of the big one), one in five of an earlier fork.
  const forkSizes = sizes.slice(names.length);
  const taken = new Set(names);
  forkSizes.forEach((size, f) => {
    const forks = sessions.slice(names.length).filter((s) => s.size >= 2);
    const parentIndex = f < 3 ? 0 : random() < 0.2 && forks.length > 0 ? sessions.indexOf(pick(random, forks)) : pickParent(sessions, names.length, random);
    const parent = sessions[parentIndex];
    if (parent === undefined) throw new Error('no parent for a fork');
    const at = 1 + Math.floor(random() * parent.size);
    const from = parent.keys[at - 1] ?? 0;
    let name = `${parent.name}-try`;
    for (let n = 2; taken.has(name) || name.length > 64; n++) name = `${parent.name.slice(0, 50)}-try${n}`;
    taken.add(name);
    const fork = blank(name, size);
    fork.model = parent.model;
    fork.parent = { session: parentIndex, at };
    // After the fork point (never at it: the parent's turn is written first).
    const span = Math.min(1 - from, fork.width);
    fork.keys = Array.from({ length: size }, () => from + span * (0.0001 + 0.9999 * random())).sort((a, b) => a - b);
    sessions.push(fork);
  });
  return sessions;
}

function pickParent(sessions: readonly Session[], bases: number, random: Random): number {
  for (;;) {
    const i = 1 + Math.floor(random() * (bases - 1));
    if ((sessions[i]?.size ?? 0) >= 3) return i;
  }
}

/** The tools arrays agent runs sent, by toolset, as their kept definitions file has them. */
function definitionsByToolset(): Map<string, { tools: string[]; digest: string; text: string }> {
  const builtins = builtinTools();
  const expand = (name: string): string[] => {
    const set = BUILTIN_TOOLSETS[name];
    return set ? [...set.tools, ...set.includes.flatMap(expand)] : [name];
  };
  const found = new Map<string, { tools: string[]; digest: string; text: string }>();
  for (const set of new Set(AGENT_TOOLSETS)) {
    const names = [...new Set(expand(set))].sort();
    const text = definitionsText(toolDefinitions(builtins.filter((tool) => names.includes(tool.name)).sort((a, b) => (a.name < b.name ? -1 : 1))));
    found.set(set, { tools: names, digest: definitionsDigest(text), text });
  }
  return found;
}

function argumentsFor(tool: string, random: Random): Record<string, unknown> {
  switch (tool) {
    case 'read_file':
      return { path: pick(random, FILES) };
    case 'list_files':
      return { pattern: pick(random, ['**/*.ts', 'src/**', '*', '**/*.md']) };
    case 'search_files':
      return { pattern: pick(random, ['TODO', 'export function', 'unwrap()', 'fetch(']), path: 'src' };
    case 'write_file':
      return { path: pick(random, FILES), content: responseText(random, 300) };
    case 'edit_file':
      return { path: pick(random, FILES), old: 'retries: 1', new: 'retries: 3' };
    case 'run_command':
      return { command: pick(random, SHELL_COMMANDS) };
    case 'fetch_url':
      return { url: `https://example.com/docs/${Math.floor(random() * 1000)}` };
    case 'memo':
      return { action: 'get', key: `project-${Math.floor(random() * 100)}` };
    case 'search_history':
      return { query: pick(random, ['retry', 'timeout', 'borrow checker', 'migration']) };
    default:
      return {};
  }
}

/** The fields an agent run adds to its line: tools, definitions, one to four rounds of calls. */
function agentFields(random: Random, definitions: { tools: string[]; digest: string }): Partial<LogEntry> {
  const rounds = 1 + Math.floor(random() * random() * 4);
  const calls: ToolCallLog[] = [];
  for (let round = 1; round <= rounds; round++) {
    const count = 1 + Math.floor(random() * random() * 3);
    for (let c = 0; c < count; c++) {
      const name = pick(random, definitions.tools);
      const roll = random();
      const outcome = roll < 0.9 ? 'success' : roll < 0.97 ? 'failure' : 'invalid';
      const result = outcome === 'success' ? JSON.stringify({ path: pick(random, FILES), content: responseText(random, lengthAround(random, 800, 1, 20, 7_500)) }) : JSON.stringify({ error: 'ENOENT: no such file or directory' });
      calls.push({
        id: `call_${turnId(random).slice(0, 8).toLowerCase()}`,
        name,
        arguments: argumentsFor(name, random),
        outcome,
        round,
        ms: Math.floor(2 + random() * 400),
        result_chars: result.length,
        result,
        ...(outcome === 'success' ? {} : { error: outcome === 'failure' ? 'no such file or directory' : 'arguments do not match the schema' }),
      });
    }
  }
  return {
    tools: definitions.tools,
    tools_unavailable: [],
    ephemeral_system: null,
    tool_definitions_sha256: definitions.digest,
    tool_calls: calls,
    iterations: rounds,
    all_failure_rounds: 0,
    stop_reason: 'answered',
    compacted: [],
  };
}

const hex = (random: Random, length: number): string => Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join('');

function writePrivate(path: string, text: string): void {
  writeFileSync(path, text, { mode: PRIVATE_FILE });
}

export function generateHome(home: string, params: HomeParams, progress: (message: string) => void): HomeMeta {
  const started = performance.now();
  const random = seededRandom(params.seed);
  rmSync(home, { recursive: true, force: true });
  for (const dir of ['', 'logs', 'sessions', 'jobs', 'unfinished', 'locks', DEFINITIONS_FOLDER]) mkdirSync(join(home, dir), { recursive: true, mode: PRIVATE_DIR });

  const sessions = makeSessions(params, random);
  // The timeline: every turn by its key, sessions interleaved as they were used.
  const slots: { session: number; key: number }[] = [];
  sessions.forEach((session, i) => {
    for (const key of session.keys) slots.push({ session: i, key });
  });
  slots.sort((a, b) => a.key - b.key);
  // Which own turn of a session forks are taken at: its recent turns then are the fork's start.
  const forkPoints = new Map<number, Set<number>>();
  for (const session of sessions) if (session.parent) (forkPoints.get(session.parent.session) ?? forkPoints.set(session.parent.session, new Set()).get(session.parent.session))?.add(session.parent.at);

  const definitions = definitionsByToolset();
  for (const { digest, text } of definitions.values()) writePrivate(join(home, DEFINITIONS_FOLDER, `${digest}.json`), text);

  const dates = activeDays(params, random);
  const perDay = turnsPerDay(dates, params.turns, random);
  const buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  let bytes = 0;
  let slot = 0;
  let agentTurns = 0;
  let bigAnswers = 0;
  let oldestTurn = '';
  const recentTurns: { id: string; session: string; model: string; response: string; timestamp: string }[] = [];

  for (const [day, date] of dates.entries()) {
    const fileName = logFileName(date);
    const fd = openSync(join(home, 'logs', fileName), 'w', PRIVATE_FILE);
    let fileOffset = 0;
    let used = 0;
    const count = perDay[day] ?? 0;
    for (let position = 0; position < count; position++, slot++) {
      const sessionIndex = slots[slot]?.session ?? 0;
      const session = sessions[sessionIndex];
      if (session === undefined) throw new Error('a turn without a session');
      if (session.own.length === 0 && session.parent) session.recent = [...(sessions[session.parent.session]?.recentAt.get(session.parent.at) ?? [])];
      const timestamp = timestampOf(date, position, count);
      const prompt = makePrompt(random, false);
      const status = statusFor(random);
      const big = status === 'ok' && random() < 0.015;
      let response = big ? responseText(random, 20_000 + Math.floor(random() * 30_000)) : responseText(random, lengthAround(random, 900, 1, 2, 12_000));
      if (status !== 'ok') response = partial(response, random);
      if (big) bigAnswers++;
      const agent = random() < session.agentShare;
      const spec = agent ? { kind: 'none' as const } : replaySpecFor(random, session.ok);
      const endpoint: Endpoint = agent || random() < 0.95 ? 'chat' : 'generate';
      // The prompt Ollama read: the question and what was replayed.
      const promptTokens = (plan: { replayPolicy: { chars_used: number } | null }): number => Math.ceil((prompt.length + (plan.replayPolicy?.chars_used ?? 0)) / 4) + 30;
      const { entry: planned, plan } = plannedEntry(random, { session, name: session.name, id: session.id, timestamp, prompt, response, status, spec, endpoint }, promptTokens);
      const entry: LogEntry = {
        ...planned,
        request_sha256: hex(random, 64),
        ollama_stream: true,
        num_ctx: null,
        truncation_suspected: false,
        prompt_tokens_estimate: promptTokens(plan),
      };
      if (!agent && oldestTurn === '') oldestTurn = entry.id;
      if (agent) {
        const set = definitions.get(pick(random, AGENT_TOOLSETS));
        if (set) Object.assign(entry, agentFields(random, set));
        agentTurns++;
      }
      const line = JSON.stringify(entry);
      if (used + line.length * 3 + 1 > buffer.length) {
        writeSync(fd, buffer, 0, used);
        used = 0;
      }
      const length = buffer.write(line, used, 'utf8');
      buffer[used + length] = 10;
      used += length + 1;
      session.own.push(JSON.stringify(indexLine(entry.id, fileName, fileOffset, length, entry.status, entry.entry_type, RULES)));
      session.ownIds.push(entry.id);
      fileOffset += length + 1;

      session.record ??= {
        name: session.name,
        id: session.id,
        title: titleFrom(prompt),
        turns: 0,
        created_at: timestamp,
        last_used_at: timestamp,
        last_model: session.model,
      };
      session.record.turns++;
      session.record.last_used_at = timestamp;
      session.record.last_model = session.model;
      if (status === 'ok') {
        session.ok++;
        session.recent.push({ id: entry.id, prompt, response });
        if (session.recent.length > RECENT_KEPT) session.recent.shift();
      }
      if (forkPoints.get(sessionIndex)?.has(session.own.length)) session.recentAt.set(session.own.length, [...session.recent]);
      recentTurns.push({ id: entry.id, session: session.name, model: session.model, response: response.slice(0, 4000), timestamp });
      if (recentTurns.length > params.jobs) recentTurns.shift();
    }
    if (used > 0) writeSync(fd, buffer, 0, used);
    closeSync(fd);
    bytes += fileOffset;
    if ((day + 1) % 100 === 0) progress(`${day + 1} of ${dates.length} days, ${slot.toLocaleString('en-US')} turns, ${(bytes / 1e6).toFixed(0)} MB`);
  }

  writeSessions(home, sessions);
  writeMemo(home, params.memo, random);
  writeJobs(home, recentTurns, random);
  writeConfig(home, params.toolsets, random);
  writeChatHistory(home, params.chatLines, random);

  const bigFork = sessions.find((session) => session.parent?.session === 0 && session.size > 0)?.name ?? null;
  const smallSession = sessions.find((session) => !session.parent && session.size >= 20 && session.size <= 100)?.name ?? 'default';
  return {
    params,
    files: dates.length,
    bytes,
    turns: params.turns,
    agentTurns,
    bigAnswers,
    sessions: sessions.length,
    forks: params.forks,
    bigFork,
    smallSession,
    oldestTurn,
    generatedSeconds: Math.round((performance.now() - started) / 100) / 10,
  };
}

/** Records and indexes: a fork's index is its parent's history up to the fork point, then its own lines. */
function writeSessions(home: string, sessions: readonly Session[]): void {
  const histories = new Map<number, { lines: string[]; ids: string[] }>();
  const historyOf = (i: number): { lines: string[]; ids: string[] } => {
    const known = histories.get(i);
    if (known) return known;
    const session = sessions[i];
    if (session === undefined) throw new Error(`no session ${i}`);
    let lines = session.own;
    let ids = session.ownIds;
    if (session.parent) {
      const parent = historyOf(session.parent.session);
      const forkId = sessions[session.parent.session]?.ownIds[session.parent.at - 1];
      const cut = parent.ids.indexOf(forkId ?? '');
      lines = [...parent.lines.slice(0, cut + 1), ...session.own];
      ids = [...parent.ids.slice(0, cut + 1), ...session.ownIds];
    }
    const history = { lines, ids };
    histories.set(i, history);
    return history;
  };
  const linkOf = (i: number): ParentLink | undefined => {
    const session = sessions[i];
    if (!session?.parent) return undefined;
    const parent = sessions[session.parent.session];
    if (parent === undefined) return undefined;
    const grand = linkOf(session.parent.session);
    return { session_id: parent.id, name: parent.name, turn_id: parent.ownIds[session.parent.at - 1] ?? '', ...(grand ? { parent: grand } : {}) };
  };
  sessions.forEach((session, i) => {
    const { lines, ids } = historyOf(i);
    const parent = session.parent ? sessions[session.parent.session] : undefined;
    const link = linkOf(i);
    let record: SessionRecord;
    if (parent?.record && link) {
      const createdAt = session.record?.created_at ?? parent.record.last_used_at;
      record = {
        name: session.name,
        id: session.id,
        title: parent.record.title,
        turns: session.own.length,
        created_at: createdAt,
        last_used_at: session.record?.last_used_at ?? createdAt,
        last_model: session.record?.last_model ?? parent.record.last_model,
        parent: link,
      };
    } else if (session.record) {
      record = session.record;
    } else {
      return;
    }
    const last = ids.at(-1);
    if (last !== undefined) record.last_turn_id = last;
    writePrivate(join(home, 'sessions', `${session.name}.json`), encodeRecord(record));
    if (lines.length > 0) writePrivate(join(home, 'sessions', `${session.name}.idx`), `${lines.join('\n')}\n`);
  });
}

function writeMemo(home: string, count: number, random: Random): void {
  if (count === 0) return;
  const memo: Record<string, string> = {};
  for (let i = 0; i < count; i++) memo[`project-${i}`] = responseText(random, lengthAround(random, 200, 0.8, 10, MEMO_MAX_VALUE_CHARS)).replace(/\s+/g, ' ').slice(0, MEMO_MAX_VALUE_CHARS);
  writePrivate(join(home, 'memo.json'), serializeMemo(memo));
}

/** Jobs of the last weeks (inside the 30 days a server keeps them), each naming a turn of the log. */
function writeJobs(home: string, turns: readonly { id: string; session: string; model: string; response: string }[], random: Random): void {
  const now = Date.now();
  turns.forEach((turn, i) => {
    const created = new Date(now - (turns.length - i) * 0.09 * DAY_MS);
    const roll = random();
    const state = roll < 0.85 ? 'completed' : roll < 0.95 ? 'failed' : 'cancelled';
    const record: JobRecord = {
      id: turnId(random) + turnId(random).slice(0, 9),
      state,
      created_at: created.toISOString(),
      updated_at: new Date(created.getTime() + 20_000).toISOString(),
      session: turn.session,
      model: turn.model,
      output: state === 'completed' ? turn.response : partial(turn.response, random),
      error: state === 'failed' ? 'the stream from Ollama ended without its final chunk; the answer is incomplete' : state === 'cancelled' ? 'cancelled by the client' : null,
      turn_id: turn.id,
      tool_calls: [],
      finish_reason: state === 'completed' ? 'stop' : null,
    };
    writePrivate(join(home, 'jobs', `${record.id}.json`), jobFile.encode(record));
  });
}

/** 200 toolsets: built-in tools and toolsets, and includes of toolsets defined after them (no cycle). */
function writeConfig(home: string, count: number, random: Random): void {
  const builtinNames = builtinTools().map((tool) => tool.name);
  const builtinSets = Object.keys(BUILTIN_TOOLSETS);
  const toolsets: Record<string, { tools: string[]; includes: string[] }> = {};
  for (let i = 0; i < count; i++) {
    const later = Array.from({ length: Math.floor(random() * 3) }, () => i + 1 + Math.floor(random() * (count - i - 1))).filter((j) => j < count);
    toolsets[`set-${i}`] = {
      tools: [...new Set(Array.from({ length: Math.floor(random() * 3) }, () => pick(random, builtinNames)))],
      includes: [...new Set([...later.map((j) => `set-${j}`), ...(random() < 0.3 ? [pick(random, builtinSets)] : [])])],
    };
  }
  writePrivate(join(home, 'config.json'), `${JSON.stringify({ personas: { pirate: 'Answer like a friendly pirate.' }, modes: { sql: 'You write PostgreSQL.' }, toolsets }, null, 2)}\n`);
}

function writeChatHistory(home: string, count: number, random: Random): void {
  const lines = Array.from({ length: count }, () => makePrompt(random, false).replace(/\s+/g, ' ').slice(0, 200));
  writePrivate(join(home, 'chat_history'), `${lines.join('\n')}\n`);
}

if (isMain(import.meta.filename)) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' },
      turns: { type: 'string' },
      sessions: { type: 'string' },
      days: { type: 'string' },
      'big-turns': { type: 'string' },
      forks: { type: 'string' },
      jobs: { type: 'string' },
      memo: { type: 'string' },
      toolsets: { type: 'string' },
      end: { type: 'string' },
      seed: { type: 'string' },
    },
  });
  const params: HomeParams = {
    days: count(values.days, '--days', TWO_YEARS.days),
    turns: count(values.turns, '--turns', TWO_YEARS.turns),
    sessions: count(values.sessions, '--sessions', TWO_YEARS.sessions, 3),
    bigTurns: count(values['big-turns'], '--big-turns', TWO_YEARS.bigTurns),
    forks: count(values.forks, '--forks', TWO_YEARS.forks, 0),
    jobs: count(values.jobs, '--jobs', TWO_YEARS.jobs, 0),
    memo: count(values.memo, '--memo', TWO_YEARS.memo, 0),
    toolsets: count(values.toolsets, '--toolsets', TWO_YEARS.toolsets, 0),
    chatLines: TWO_YEARS.chatLines,
    end: values.end ?? new Date().toISOString().slice(0, 10),
    seed: count(values.seed, '--seed', TWO_YEARS.seed),
  };
  if (!/^\d{4}-\d{2}-\d{2}$/.test(params.end)) throw new Error(`--end must be a date (YYYY-MM-DD), got "${params.end}"`);
  if (params.forks >= params.sessions - 2) throw new Error('--forks must leave at least two sessions that are not forks');
  if (params.turns < params.bigTurns + params.sessions * 10) throw new Error(`--turns ${params.turns} is too small for ${params.sessions} sessions with one of ${params.bigTurns} turns`);
  const home = resolve(values.out ?? '/tmp/argo-two-years');
  const meta = generateHome(home, params, (message) => console.error(`generate-home: ${message}`));
  writeFileSync(`${home}.meta.json`, `${JSON.stringify(meta, null, 2)}\n`);
  console.error(`generate-home: ${meta.files} day files, ${(meta.bytes / 1e6).toFixed(0)} MB, ${meta.turns.toLocaleString('en-US')} turns (${meta.agentTurns.toLocaleString('en-US')} agent, ${meta.bigAnswers} answers of 20–50 KB), ${meta.sessions} sessions (${meta.forks} forks) in ${meta.generatedSeconds} s`);
  console.log(home);
}
