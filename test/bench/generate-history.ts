// Writes synthetic argo history in the exact on-disk formats: daily NDJSON logs (LogEntry), session
// records (SessionRecord) and per-session indexes (IndexLine). Every turn goes through the real
// replay planner, so entry types, verbosity, replay_policy and replayed_ids are what argo would log.
//
//   node --import tsx test/bench/generate-history.ts [--turns N] [--sessions N] [--days N]
//        [--big-turns N] [--seed N] [--out DIR]
// The default size is the issue's: 1,000,000 turns (~1 GB), 1,000 sessions, 30 days, "big" = 10,000.
import { createHash } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { LogEntry, TurnStatus } from '../../src/log/entry.js';
import { logFileName } from '../../src/log/files.js';
import { rulesFingerprint } from '../../src/replay/classify.js';
import { DEFAULT_REPLAY_POLICY, DEFAULT_STYLE_POLICY } from '../../src/replay/policy.js';
import { planTurn } from '../../src/replay/plan.js';
import type { Endpoint, HistoryTurn, ReplaySpec } from '../../src/replay/types.js';
import { titleFrom } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { indexLine } from '../../src/sessions/turn-index.js';
import { NEEDLE, lengthAround, makePrompt, pick, plantInResponse, responseText, seededRandom } from './corpus.js';
import type { Random } from './corpus.js';
import { historyParamsFrom, isMain } from './options.js';
import type { HistoryParams } from './options.js';
import { at } from '../support/defined.js';

export const BIG_SESSION = 'big';
export const DEFAULT_SESSION = 'default';

/** What the bench needs to know about generated data, to check argo's answers against it. */
export interface HistoryMeta {
  key: string;
  params: HistoryParams;
  bytes: number;
  files: string[];
  turns: number;
  generatedSeconds: number;
  sessions: Record<string, { turns: number; ok: number }>;
  /** Turns whose prompt or response holds NEEDLE in any case (what `argo logs -q` must print). */
  needleTurns: number;
  /** Log lines holding NEEDLE in lower case (what `grep -c` counts). */
  needleLinesExact: number;
  meanPromptChars: number;
  meanResponseChars: number;
}

export interface History {
  home: string;
  meta: HistoryMeta;
  reused: boolean;
}

// The generator's own files, plus what argo's code makes of a fixed sample (an index line, a title,
// a replay plan): a change to the generator or to a format regenerates the cache, an unrelated edit
// in src/ does not.
const KEY_FILES = ['generate-history.ts', 'corpus.ts'];

function formatFingerprint(): string {
  const history: HistoryTurn[] = [
    { id: 'aaaaaaaaaaaa', prompt: 'Explain back-pressure', response: 'It is flow control.' },
    { id: 'bbbbbbbbbbbb', prompt: 'actually I meant in Node', response: 'Streams pause when full.' },
  ];
  const plan = planTurn({
    input: 'and in Go?',
    spec: { kind: 'last', count: 2 },
    history,
    policy: DEFAULT_REPLAY_POLICY,
    style: DEFAULT_STYLE_POLICY,
    mode: null,
    persona: 'neutral',
    verbosity: 'auto',
    request: { endpoint: 'chat', model: 'argo', stream: true, options: {} },
  });
  return JSON.stringify([indexLine('aaaaaaaaaaaa', '/x/2026-01-05.log', 0, 10, 'ok', 'question', 'rules'), titleFrom('x '.repeat(40)), plan]);
}

export function cacheKey(params: HistoryParams): string {
  const hash = createHash('sha256').update(JSON.stringify(params)).update(formatFingerprint());
  for (const file of KEY_FILES) hash.update(readFileSync(join(import.meta.dirname, file)));
  return hash.digest('hex').slice(0, 16);
}

/** The history for `params` under `dataDir`, generated only when no matching copy is there. */
export function ensureHistory(dataDir: string, params: HistoryParams, progress: (message: string) => void): History {
  const dir = join(dataDir, `history-${params.turns}`);
  const key = cacheKey(params);
  const metaPath = join(dir, 'meta.json');
  if (existsSync(metaPath)) {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8')) as HistoryMeta;
    if (meta.key === key) return { home: join(dir, 'home'), meta, reused: true };
    progress(`history in ${dir} was made with other parameters or an older generator; regenerating`);
  }
  rmSync(dir, { recursive: true, force: true });
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  const meta = generateHistory(join(partial, 'home'), params, key, progress);
  writeFileSync(join(partial, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
  renameSync(partial, dir);
  return { home: join(dir, 'home'), meta, reused: false };
}

interface SessionState {
  record: SessionRecord;
  model: string;
  ok: number;
  recent: HistoryTurn[]; // the newest ok turns, enough for any replay spec generated here
  index: string; // index lines not yet appended to the .idx file
  indexPath: string;
}

export const RECENT_KEPT = 30;
const INDEX_FLUSH_CHARS = 64 * 1024;
const WRITE_BUFFER_BYTES = 8 * 1024 * 1024;
const FIRST_DAY_UTC = Date.UTC(2026, 0, 5); // a Monday; fixed so the bytes do not depend on today
export const MODELS = ['argo', 'argo', 'llama3.1:8b', 'qwen2.5-coder:7b', 'mistral:latest', 'gemma2:9b'];
export const PERSONAS = ['neutral', 'neutral', 'neutral', 'neutral', 'neutral', 'friendly', 'teacher', 'expert', 'critic'];
export const MODES: (string | null)[] = [null, null, null, null, null, null, 'code', 'code', 'review', 'shell', 'writing'];
export const LAST_COUNTS = [1, 2, 3, 3, 3, 5, 5, 5, 5, 8, 10];
const NAME_WORDS = [
  'rust', 'k8s', 'infra', 'blog', 'thesis', 'api', 'db', 'ci', 'shell', 'sql', 'react', 'go', 'ml',
  'notes', 'review', 'release', 'oncall', 'perf', 'auth', 'email', 'billing', 'docs', 'migration', 'ios',
];
const NAME_TOPICS = [
  'borrowck', 'ingress', 'terraform', 'draft', 'chapter', 'pagination', 'indexes', 'flaky-tests',
  'aliases', 'joins', 'hooks', 'channels', 'tuning', 'standup', 'rfc', 'v2', 'alerts', 'latency',
  'oauth', 'templates', 'invoices', 'style', 'backfill', 'swiftui', 'scratch', 'ideas',
];
const ID_ALPHABET = 'useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict';
export const ERRORS = [
  'the connection to Ollama at http://127.0.0.1:11434 dropped mid-answer; the answer is incomplete',
  'Ollama reported an error mid-answer: an error was encountered while running the model',
  'no data from Ollama at http://127.0.0.1:11434 for 120s; the stream was aborted (raise timeouts.idleMs in config.json if the model is slow to load)',
  'the stream from Ollama ended without its final chunk; the answer is incomplete',
];

export function turnId(random: Random): string {
  let id = '';
  for (let i = 0; i < 12; i++) id += ID_ALPHABET.charAt(Math.floor(random() * 64));
  return id;
}

export function uuid(random: Random): string {
  let hex = '';
  for (let i = 0; i < 32; i++) hex += Math.floor(random() * 16).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${'89ab'[Math.floor(random() * 4)]}${hex.slice(17, 20)}-${hex.slice(20)}`;
}

export function sessionNames(count: number, random: Random): string[] {
  const names = new Set([BIG_SESSION, DEFAULT_SESSION]);
  while (names.size < count) {
    const base = `${pick(random, NAME_WORDS)}-${pick(random, NAME_TOPICS)}`;
    let name = base;
    for (let n = 2; names.has(name); n++) name = `${base}-${n}`;
    names.add(name);
  }
  return [...names];
}

/** Turns per session: "big" exactly, "default" an average one, the rest log-normally spread. */
function sessionSizes(params: HistoryParams, random: Random): number[] {
  const { turns, sessions, bigTurns } = params;
  const others = sessions - 1;
  const rest = turns - bigTurns;
  const average = Math.round(rest / others);
  const sizes = [bigTurns, average];
  const weights = Array.from({ length: others - 1 }, () => lengthAround(random, 1000, 0.8, 1, 1_000_000));
  const total = weights.reduce((a, b) => a + b, 0);
  const spread = rest - average;
  const cap = Math.max(1, bigTurns - 1);
  let assigned = 0;
  for (const weight of weights) {
    const size = Math.min(cap, Math.max(1, Math.floor((weight / total) * spread)));
    sizes.push(size);
    assigned += size;
  }
  // Hand out (or take back) the rounding remainder one turn at a time, never past the cap or below
  // one; what none of them can take ("big" is the cap for few sessions) goes to "default".
  let left = spread - assigned;
  for (let moved = true; left !== 0 && moved; ) {
    moved = false;
    for (let i = 2; i < sizes.length && left !== 0; i++) {
      const size = sizes[i] ?? 0;
      if (left > 0 && size < cap) {
        sizes[i] = size + 1;
        left--;
        moved = true;
      } else if (left < 0 && size > 1) {
        sizes[i] = size - 1;
        left++;
        moved = true;
      }
    }
  }
  sizes[1] = average + left;
  return sizes;
}

/** Turns per day: weekdays busier than weekends. */
function daySizes(turns: number, days: number): number[] {
  const weights = Array.from({ length: days }, (_, day) => (day % 7 >= 5 ? 0.45 : 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const sizes = weights.map((w) => Math.floor((w / total) * turns));
  sizes[sizes.length - 1] = (sizes.at(-1) ?? 0) + turns - sizes.reduce((a, b) => a + b, 0);
  return sizes;
}

const two = (n: number): string => String(n).padStart(2, '0');

function dateOf(day: number): string {
  const date = new Date(FIRST_DAY_UTC + day * 86_400_000);
  return `${date.getUTCFullYear()}-${two(date.getUTCMonth() + 1)}-${two(date.getUTCDate())}`;
}

// Turns of a day spread from 07:00 to 23:00, in order (the file is append-only, so time only grows).
export function timestampOf(date: string, position: number, count: number): string {
  const ms = Math.floor(7 * 3_600_000 + (position / count) * 16 * 3_600_000);
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  return `${date}T${two(h)}:${two(m)}:${two(s)}.${String(ms % 1000).padStart(3, '0')}+00:00`;
}

export function replaySpecFor(random: Random, okTurns: number): ReplaySpec {
  const roll = random();
  if (roll < 0.65) return { kind: 'none' };
  // Whole-session replay on long sessions would log a decision per turn; people use it on short threads.
  if (roll < 0.73 && okTurns <= RECENT_KEPT) return { kind: 'session' };
  return { kind: 'last', count: pick(random, LAST_COUNTS) };
}

export function statusFor(random: Random): TurnStatus {
  const roll = random();
  return roll < 0.955 ? 'ok' : roll < 0.985 ? 'error' : 'interrupted';
}

/** Cuts a partial answer at a space, as a stream cut mid-answer leaves it (never mid-character). */
/** A generated turn's facts before its log line: what the session and the draws so far made. */
export interface TurnDraft {
  /** Its model may change (one turn in a hundred), and its recent ok turns are what replay sees. */
  session: { model: string; recent: HistoryTurn[] };
  name: string;
  id: string;
  timestamp: string;
  prompt: string;
  response: string;
  status: TurnStatus;
  spec: ReplaySpec;
  endpoint: Endpoint;
}

/**
 * The log line of a generated turn, planned as Argo plans it (mode, persona and model drawn, the
 * replay planned, timings made up), and the plan; `promptTokens` counts the prompt Ollama read. Both
 * generators use it, so their lines have one shape and one order of draws.
 */
export function plannedEntry(random: Random, turn: TurnDraft, promptTokens: (plan: ReturnType<typeof planTurn>) => number): { entry: LogEntry; plan: ReturnType<typeof planTurn> } {
  const { session, prompt, response, status, spec, endpoint } = turn;
  const mode = pick(random, MODES);
  const persona = pick(random, PERSONAS);
  if (random() < 0.01) session.model = pick(random, MODELS);
  const plan = planTurn({
    input: prompt,
    spec,
    history: spec.kind === 'none' ? [] : session.recent,
    policy: DEFAULT_REPLAY_POLICY,
    style: DEFAULT_STYLE_POLICY,
    mode,
    persona,
    verbosity: 'auto',
    request: { endpoint, model: session.model, stream: true, options: {} },
  });
  const evalCount = status === 'ok' ? Math.ceil(response.length / 4) : null;
  const firstTokenMs = Math.floor(60 + random() * 900);
  const totalMs = firstTokenMs + Math.ceil(response.length / 4) * 22;
  const entry: LogEntry = {
    id: turnId(random),
    timestamp: turn.timestamp,
    session: turn.name,
    session_id: turn.id,
    status,
    entry_type: plan.entryType,
    model: session.model,
    endpoint,
    active_mode: mode,
    persona,
    verbosity: plan.verbosity,
    replay: { enabled: spec.kind !== 'none', count: spec.kind === 'last' ? spec.count : null, session: spec.kind === 'session' },
    user_prompt: prompt,
    model_response: response,
    replay_policy: plan.replayPolicy,
    replayed_ids: plan.replayedIds,
    timings: {
      first_token_ms: response === '' ? null : firstTokenMs,
      total_ms: totalMs,
      total_duration_ns: evalCount === null ? null : totalMs * 1_000_000,
      load_duration_ns: evalCount === null ? null : 12_000_000,
      prompt_eval_count: evalCount === null ? null : promptTokens(plan),
      prompt_eval_duration_ns: evalCount === null ? null : 40_000_000,
      eval_count: evalCount,
      eval_duration_ns: evalCount === null ? null : evalCount * 22_000_000,
    },
    done_reason: status === 'ok' ? 'stop' : null,
    error: status === 'ok' ? null : status === 'interrupted' ? 'interrupted by the user' : pick(random, ERRORS),
  };
  return { entry, plan };
}

export function partial(text: string, random: Random): string {
  const cut = text.lastIndexOf(' ', Math.floor(text.length * random()));
  return cut <= 0 ? '' : text.slice(0, cut);
}

export function generateHistory(home: string, params: HistoryParams, key: string, progress: (message: string) => void): HistoryMeta {
  const started = performance.now();
  const random = seededRandom(params.seed);
  const logsDir = join(home, 'logs');
  const sessionsDir = join(home, 'sessions');
  mkdirSync(logsDir, { recursive: true, mode: 0o700 });
  mkdirSync(sessionsDir, { recursive: true, mode: 0o700 });

  const names = sessionNames(params.sessions, random);
  const sizes = sessionSizes(params, random);
  const sessions: SessionState[] = names.map((name) => ({
    record: { name, id: uuid(random), title: '', turns: 0, created_at: '', last_used_at: '', last_model: null },
    model: pick(random, MODELS),
    ok: 0,
    recent: [],
    index: '',
    indexPath: join(sessionsDir, `${name}.idx`),
  }));

  // The global timeline: which session each turn belongs to, shuffled so sessions interleave.
  const owner = new Uint16Array(params.turns);
  let filled = 0;
  sizes.forEach((size, session) => owner.fill(session, filled, (filled += size)));
  for (let i = owner.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = owner[i] ?? 0;
    owner[i] = owner[j] ?? 0;
    owner[j] = t;
  }

  const buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  const files: string[] = [];
  let bytes = 0;
  let turn = 0;
  let needleTurns = 0;
  let needleLinesExact = 0;
  let promptChars = 0;
  let responseChars = 0;
  const days = daySizes(params.turns, params.days);

  for (let day = 0; day < days.length; day++) {
    const date = dateOf(day);
    const fileName = logFileName(date);
    const fd = openSync(join(logsDir, fileName), 'w', 0o600);
    files.push(fileName);
    let fileOffset = 0;
    let used = 0;
    const count = days[day] ?? 0;
    for (let position = 0; position < count; position++, turn++) {
      const session = at(sessions, owner[turn] ?? 0);
      const timestamp = timestampOf(date, position, count);
      const plant = random() < 0.005;
      const plantInPrompt = plant && random() < 0.5;
      const prompt = makePrompt(random, plantInPrompt);
      let response = responseText(random, lengthAround(random, 80, 1.1, 2, 12_000));
      if (plant && !plantInPrompt) response = plantInResponse(response, random);
      const status = statusFor(random);
      if (status !== 'ok') response = partial(response, random);
      const spec = replaySpecFor(random, session.ok);
      const endpoint: Endpoint = random() < 0.9 ? 'chat' : 'generate';
      const { entry } = plannedEntry(random, { session, name: session.record.name, id: session.record.id, timestamp, prompt, response, status, spec, endpoint }, () => Math.ceil(prompt.length / 4) + 30);
      const line = JSON.stringify(entry);

      // Encode straight into one big buffer: its return value is the line's byte length.
      if (used + line.length * 3 + 1 > buffer.length) {
        writeSync(fd, buffer, 0, used);
        used = 0;
      }
      let length: number;
      if (line.length * 3 + 1 > buffer.length) {
        const encoded = Buffer.from(`${line}\n`);
        writeSync(fd, encoded);
        length = encoded.length - 1;
        index(session, entry, fileName, fileOffset, length);
      } else {
        length = buffer.write(line, used, 'utf8');
        buffer[used + length] = 10;
        index(session, entry, fileName, fileOffset, length);
        used += length + 1;
      }
      fileOffset += length + 1;

      const record = session.record;
      if (record.turns === 0) {
        record.title = titleFrom(prompt);
        record.created_at = timestamp;
      }
      record.turns++;
      record.last_used_at = timestamp;
      record.last_model = session.model;
      record.last_turn_id = entry.id;
      if (status === 'ok') {
        session.ok++;
        session.recent.push({ id: entry.id, prompt, response });
        if (session.recent.length > RECENT_KEPT) session.recent.shift();
      }
      const lower = prompt.includes(NEEDLE) || response.includes(NEEDLE);
      if (lower) needleLinesExact++;
      if (lower || /argonaut/i.test(prompt) || /argonaut/i.test(response)) needleTurns++;
      promptChars += prompt.length;
      responseChars += response.length;
      if ((turn + 1) % 100_000 === 0) {
        progress(`generated ${(turn + 1).toLocaleString('en-US')} of ${params.turns.toLocaleString('en-US')} turns (${((bytes + fileOffset) / 1e9).toFixed(2)} GB)`);
      }
    }
    if (used > 0) writeSync(fd, buffer, 0, used);
    closeSync(fd);
    bytes += fileOffset;
  }

  const summary: HistoryMeta['sessions'] = {};
  for (const session of sessions) {
    flushIndex(session);
    writeFileSync(join(sessionsDir, `${session.record.name}.json`), `${JSON.stringify(session.record, null, 2)}\n`, { mode: 0o600 });
    if (session.record.name === BIG_SESSION || session.record.name === DEFAULT_SESSION) {
      summary[session.record.name] = { turns: session.record.turns, ok: session.ok };
    }
  }
  return {
    key,
    params,
    bytes,
    files,
    turns: params.turns,
    generatedSeconds: Math.round((performance.now() - started) / 100) / 10,
    sessions: summary,
    needleTurns,
    needleLinesExact,
    meanPromptChars: Math.round(promptChars / params.turns),
    meanResponseChars: Math.round(responseChars / params.turns),
  };
}

// As the writer does: each index line caches its type under the rules in force (the defaults here).
const RULES = rulesFingerprint(DEFAULT_REPLAY_POLICY.classify);

function index(session: SessionState, entry: LogEntry, file: string, offset: number, length: number): void {
  session.index += `${JSON.stringify(indexLine(entry.id, file, offset, length, entry.status, entry.entry_type, RULES))}\n`;
  if (session.index.length > INDEX_FLUSH_CHARS) flushIndex(session);
}

function flushIndex(session: SessionState): void {
  if (session.index === '') return;
  appendFileSync(session.indexPath, session.index, { mode: 0o600 });
  session.index = '';
}

if (isMain(import.meta.filename)) {
  const { values } = parseArgs({
    options: {
      turns: { type: 'string' },
      sessions: { type: 'string' },
      days: { type: 'string' },
      'big-turns': { type: 'string' },
      seed: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const params = historyParamsFrom(values, process.env);
  const out = resolve(values.out ?? join(import.meta.dirname, '.data'));
  const history = ensureHistory(out, params, (message) => console.error(`generate: ${message}`));
  console.error(`generate: ${history.reused ? 'reused' : 'wrote'} ${(history.meta.bytes / 1e9).toFixed(2)} GB, ${history.meta.turns} turns`);
  console.log(history.home);
}
