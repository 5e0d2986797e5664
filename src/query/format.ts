// Pure: how turns, transcripts and stats look on screen. Colours come in as a chalk instance
// (level 0 when stdout is not a terminal), widths as numbers.
import type { ChalkInstance } from 'chalk';
import { format } from 'date-fns/format';
import type { LogEntry } from '../log/entry.js';
import { cutToWidth, textWidth } from '../output/cut-width.js';
import { plural } from '../output/count.js';
import { COLUMN_GAP, fitColumns } from './columns.js';
import type { Column, Fitted, Step } from './columns.js';
import type { ShownRecord } from '../sessions/store.js';
import { commandWithNames } from '../sessions/names.js';
import type { HistoryStats, Spread } from './stats.js';

export interface RenderOptions {
  color: ChalkInstance;
  /** The width rows are cut to (COLUMNS, else the terminal's); null when there is none (previews then keep a fixed length). */
  width: number | null;
  /**
   * A session's current name by its id (it may have been renamed since a line was written), or
   * undefined once no record has the id (removed). Turns are shown under it by turnSessionName.
   */
  currentName: (sessionId: string) => string | undefined;
  /** A removed session's last name by its id, when known (a rename after its turns was noted); else its turns' logged name is shown. */
  removedName?: (sessionId: string) => string | undefined;
  /** Whether no record has the id because the session's record is damaged (its id unreadable), not because it was removed. */
  damagedRecord?: (sessionId: string) => boolean;
  /**
   * Applied to every piece of text Argo did not write (prompts, answers, names, models, errors):
   * on a terminal it neutralizes control characters (see output/terminal-text.ts). Default: as is.
   */
  untrusted?: (text: string) => string;
}

const asIs = (text: string): string => text;
/**
 * A field parseEntry does not check, as text: an old or hand-edited line may hold anything there
 * (a number, nothing), and it is shown as it is rather than failing the whole listing.
 */
function unchecked(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

const PREVIEW_WITHOUT_TERMINAL = 80;
/** The fewest columns the prompt (or title) gets while another column can still give way. */
const MIN_FREE = 20;

const TIME_PATTERNS = { minutes: 'yyyy-MM-dd HH:mm', seconds: 'yyyy-MM-dd HH:mm:ss', short: 'MM-dd HH:mm' } as const;
export type TimeStyle = keyof typeof TIME_PATTERNS;
const SHORT_TIME = TIME_PATTERNS.short.length;

export function localTime(timestamp: string, style: TimeStyle = 'minutes'): string {
  const pattern = TIME_PATTERNS[style];
  const time = Date.parse(timestamp);
  if (Number.isNaN(time)) return timestamp.slice(0, pattern.length);
  return format(time, pattern);
}

/** The time at a column's width: the short form once the column is narrowed to it. */
function timeIn(timestamp: string, width: number): string {
  return localTime(timestamp, width < TIME_PATTERNS.minutes.length ? 'short' : 'minutes');
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function pad(text: string, width: number): string {
  const cut = cutToWidth(text, width);
  return cut + ' '.repeat(Math.max(0, width - textWidth(cut)));
}

/**
 * A cell off a terminal without COLUMNS (no width): whole, for scripts, however long (a longer
 * one pushes the rest of its row right); padded to the column when shorter.
 */
function padOrKeep(text: string, width: number, options: RenderOptions): string {
  return options.width === null ? text + ' '.repeat(Math.max(0, width - textWidth(text))) : pad(text, width);
}

/**
 * The columns a table row may use: the terminal's last one is left empty, as a line that fills it
 * wraps early on some terminals.
 */
function usableOf(width: number): number {
  return Math.max(1, width - 1);
}

/** `lead` then `text`, cut together to `room` columns; what is left of `lead` painted with `paint`. */
function afterLead(lead: string, text: string, room: number, paint: (text: string) => string): string {
  const cut = cutToWidth(lead + text, room);
  return lead === '' ? cut : paint(cut.slice(0, lead.length)) + cut.slice(lead.length);
}

/** A row: its cells and, when shown, the free column, two spaces apart. */
function joinRow(cells: readonly string[], free: string | null): string {
  return (free === null ? cells : [...cells, free]).join(' '.repeat(COLUMN_GAP));
}

export type LogColumn = 'time' | 'id' | 'session' | 'type' | 'strength';
// The id column fits the 12-character ids Argo writes (what `fork`, `rerun` and `show` take).
const LOG_COLUMNS: readonly Column<LogColumn>[] = [
  { key: 'time', width: TIME_PATTERNS.minutes.length },
  { key: 'id', width: 12 },
  { key: 'session', width: 14 },
  { key: 'type', width: 11 },
  { key: 'strength', width: 8 },
];
/**
 * What gives way, in this order, when the prompt would get fewer than MIN_FREE columns: the
 * strength, the type, the year (time as MM-dd HH:mm), the session name (cut to 8 columns with `…`),
 * the session, the time. The id stays: it is what `rerun`, `fork` and `show` take.
 */
const LOG_STEPS: readonly Step<LogColumn>[] = [
  { drop: 'strength' },
  { drop: 'type' },
  { narrow: 'time', to: SHORT_TIME },
  { cut: 'session', floor: 8 },
  { drop: 'session' },
  { drop: 'time' },
];

/** The columns of `argo logs` at a width (null off a terminal: every column, and 80 for the prompt). */
export function logColumns(width: number | null): Fitted<LogColumn> {
  if (width === null) return { columns: [...LOG_COLUMNS], free: PREVIEW_WITHOUT_TERMINAL };
  return fitColumns(LOG_COLUMNS, LOG_STEPS, usableOf(width), MIN_FREE);
}

// A listing sizes every row alike: the layout is worked out again only when the width changes.
let lastLogLayout: { width: number | null; fitted: Fitted<LogColumn> } | undefined;
function logLayout(width: number | null): Fitted<LogColumn> {
  if (lastLogLayout?.width !== width) lastLogLayout = { width, fitted: logColumns(width) };
  return lastLogLayout.fitted;
}

const LOG_LABELS: Record<LogColumn, string> = { time: 'TIME', id: 'ID', session: 'SESSION', type: 'TYPE', strength: 'STRENGTH' };

export function tableHeader(options: RenderOptions): string {
  const { columns, free } = logLayout(options.width);
  return options.color.dim(joinRow(columns.map((column) => pad(LOG_LABELS[column.key], column.width)), free > 0 ? cutToWidth('PROMPT', free) : null)) + '\n';
}

export function tableRow(entry: LogEntry, options: RenderOptions): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const { columns, free } = logLayout(options.width);
  const cellOf = (column: Column<LogColumn>): string => {
    switch (column.key) {
      // The timestamp is shown as written when it is not a time.
      case 'time':
        return c.dim(pad(t(timeIn(entry.timestamp, column.width)), column.width));
      // An id Argo wrote fits whole. Only with a width is a longer, hand-edited one (or any, when
      // the width is narrower than an id) cut, as is a session name longer than its column.
      case 'id':
        return c.yellow(padOrKeep(t(entry.id), column.width, options));
      case 'session':
        return c.cyan(padOrKeep(t(turnSessionName(entry, options)), column.width, options));
      case 'type':
        return pad(t(unchecked(entry.entry_type)), column.width);
      case 'strength': {
        const strength = entry.replay_policy?.context_strength ?? '-';
        return strengthColor(c, strength)(pad(strength, column.width));
      }
    }
  };
  const status = entry.status === 'ok' ? '' : `[${t(entry.status)}] `;
  const prompt = free > 0 ? afterLead(status, oneLine(t(entry.user_prompt)), free, statusColor(c, entry.status)) : null;
  return joinRow(columns.map(cellOf), prompt) + '\n';
}

/**
 * The session a turn is shown under: its current name, or, once the session is removed, the last
 * name it had (else the name the turn was logged under), marked: another session may have that name
 * now (`argo logs -s` by name finds that one's turns, not these). A session whose record is damaged
 * is marked so: it is there, to be removed with `argo sessions rm`.
 */
function turnSessionName(entry: LogEntry, options: Pick<RenderOptions, 'currentName' | 'removedName' | 'damagedRecord'>): string {
  const current = options.currentName(entry.session_id);
  if (current !== undefined) return current;
  const mark = options.damagedRecord?.(entry.session_id) === true ? 'damaged record' : 'removed';
  return `${options.removedName?.(entry.session_id) ?? entry.session} (${mark})`;
}

/** One turn in full: a header line, the prompt, the reasoning if any, the response. */
export function fullBlock(entry: LogEntry, options: RenderOptions, label = 'Assistant'): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const policy = entry.replay_policy;
  const facts = [
    t(localTime(entry.timestamp, 'seconds')),
    c.cyan(t(turnSessionName(entry, options))),
    t(unchecked(entry.entry_type)),
    policy ? `${strengthColor(c, policy.context_strength)(policy.context_strength)} (${policy.reason}, ${policy.entries_used} turns, ${policy.chars_used} chars${policy.trimmed ? ', trimmed' : ''})` : 'no replay',
    statusColor(c, entry.status)(t(entry.status)),
    t(unchecked(entry.model)),
    c.dim(`id ${t(entry.id)}`),
  ];
  const lines = [c.dim('── ') + facts.join(c.dim(' · ')), `${c.bold('User:')} ${t(entry.user_prompt)}`];
  // A thinking model's reasoning, dimmed, before the answer it led to.
  if (typeof entry.thinking === 'string' && entry.thinking !== '') lines.push(c.dim(`Thinking: ${t(entry.thinking)}`));
  lines.push(`${c.bold(`${label}:`)} ${t(entry.model_response)}`);
  if (entry.error) lines.push(c.red(`(${t(entry.error)})`));
  return `${lines.join('\n')}\n\n`;
}

/** The header of `argo sessions show`. */
/** The head of `sessions show`: the record, and how many turns follow (`inherited`: a fork's, of other sessions). */
export function sessionHeader(record: ShownRecord, turns: { count: number; inherited: number }, options: RenderOptions, limited = false): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const { count, inherited } = turns;
  const facts = [`${c.bold(t(record.name))} ${c.dim(t(record.id))}`, `${limited ? 'newest ' : ''}${plural(count, 'turn')}${inherited > 0 ? ` (${inherited} inherited)` : ''}`];
  if (record.parent) facts.push(t(`forked from ${record.parent.name}@${record.parent.turn_id}${record.parent.removed ? ' (removed)' : ''}`));
  const plainFacts = [`${t(record.name)} ${t(record.id)}`, ...facts.slice(1)];
  const times = t(`created ${localTime(record.created_at)} · last used ${localTime(record.last_used_at)}${record.last_model ? ` · model ${record.last_model}` : ''}`);
  const lines = [fitted(facts.join(c.dim(' · ')), plainFacts.join(' · '), options.width), fitted(c.dim(times), times, options.width)];
  return `${lines.join('\n')}\n\n`;
}

/** A header line as drawn when it fits the width, else its plain text cut to it (a colour is never cut open). */
function fitted(drawn: string, plain: string, width: number | null): string {
  if (width === null) return drawn;
  const cut = cutToWidth(plain, usableOf(width));
  return cut === plain ? drawn : cut;
}

export type SessionColumn = 'name' | 'turns' | 'used' | 'model';
/**
 * What gives way, in this order, when the title would get fewer than MIN_FREE columns: the model,
 * the turn count, the year (last used as MM-dd HH:mm), the name (cut to 8 columns with `…`), the
 * last-used time.
 */
const SESSION_STEPS: readonly Step<SessionColumn>[] = [
  { drop: 'model' },
  { drop: 'turns' },
  { narrow: 'used', to: SHORT_TIME },
  { cut: 'name', floor: 8 },
  { drop: 'used' },
];

/**
 * The columns of `argo sessions` at a width: the name column as wide as the widest name (at least 4),
 * the turns column as the longest count (at least TURNS): a count is dropped whole, never cut.
 */
export function sessionColumns(width: number | null, nameWidth: number, turnsWidth = 0): Fitted<SessionColumn> {
  const full: Column<SessionColumn>[] = [
    { key: 'name', width: Math.max(4, nameWidth) },
    { key: 'turns', width: Math.max(SESSION_LABELS.turns.length, turnsWidth) },
    { key: 'used', width: TIME_PATTERNS.minutes.length },
    { key: 'model', width: 14 },
  ];
  if (width === null) return { columns: full, free: PREVIEW_WITHOUT_TERMINAL };
  return fitColumns(full, SESSION_STEPS, usableOf(width), MIN_FREE);
}

const SESSION_LABELS: Record<SessionColumn, string> = { name: 'NAME', turns: 'TURNS', used: 'LAST USED', model: 'MODEL' };

/**
 * `argo sessions` as a table; a damaged record (named in `damaged`) is a row after it, saying how to
 * remove it. The header row is drawn only when `header` (on a terminal, as for `argo logs`).
 */
export function sessionsTable(records: readonly ShownRecord[], options: RenderOptions, damaged: readonly string[] = [], { header: withHeader = true } = {}): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const names = [...records.map((record) => record.name), ...damaged];
  const { columns, free } = sessionColumns(
    options.width,
    Math.max(0, ...names.map((name) => textWidth(t(name)))),
    Math.max(0, ...records.map((record) => String(record.turns).length)),
  );
  const title = (text: string): string | null => (free > 0 ? text : null);
  const header = joinRow(
    columns.map((column) => (column.key === 'turns' ? SESSION_LABELS.turns.padStart(column.width) : pad(SESSION_LABELS[column.key], column.width))),
    title(cutToWidth('TITLE', free)),
  );
  const rows = records.map((record) => {
    const cellOf = (column: Column<SessionColumn>): string => {
      switch (column.key) {
        case 'name':
          return c.cyan(pad(t(record.name), column.width));
        case 'turns':
          return pad(String(record.turns).padStart(column.width), column.width);
        case 'used':
          return c.dim(pad(t(timeIn(record.last_used_at, column.width)), column.width));
        case 'model':
          return padOrKeep(t(record.last_model ?? '-'), column.width, options);
      }
    };
    const fork = record.parent ? t(`(fork of ${record.parent.name}@${record.parent.turn_id}${record.parent.removed ? ', removed' : ''}) `) : '';
    // Off a terminal the title keeps its 80 columns after the fork note, as it always has.
    const room = options.width === null ? free + textWidth(fork) : free;
    return joinRow(columns.map(cellOf), title(afterLead(fork, t(record.title), room, c.dim)));
  });
  // The note takes the room of every column after the name: on a narrow terminal it is cut too.
  const [nameColumn] = columns;
  const noteRoom = options.width === null ? null : usableOf(options.width) - (nameColumn === undefined ? 0 : nameColumn.width + COLUMN_GAP);
  const damagedRows = damaged.map((name) => {
    const note = t(`(damaged record: run ${commandWithNames('argo sessions rm', name)})`);
    const cells = nameColumn === undefined ? [] : [c.cyan(pad(t(name), nameColumn.width))];
    return noteRoom === null || noteRoom > 0 ? joinRow(cells, c.red(noteRoom === null ? note : cutToWidth(note, noteRoom))) : joinRow(cells, null);
  });
  return [...(withHeader ? [c.dim(header)] : []), ...rows, ...damagedRows].join('\n') + '\n';
}

export function statsText(stats: HistoryStats, options: RenderOptions): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const counts = (record: Record<string, number>): string =>
    Object.entries(record)
      .map(([key, value]) => `${t(key)} ${c.bold(String(value))}`)
      .join(c.dim(' · ')) || '-';
  const spread = (value: Spread, unit = ''): string => (value.mean === null ? '-' : `mean ${value.mean}${unit} · p95 ${value.p95}${unit}`);
  const span = stats.first && stats.last ? `  ${c.dim(t(`${localTime(stats.first)} → ${localTime(stats.last)}`))}` : '';
  const rows: [string, string][] = [
    ['turns', `${c.bold(String(stats.turns))}${span}`],
    ['type', counts(stats.by_type)],
    ['status', counts(stats.by_status)],
    ['strength', counts(stats.by_strength)],
    ['reason', counts(stats.by_reason)],
    ['model', counts(stats.by_model)],
    [
      'trimmed',
      stats.trimmed_rate === null ? `- (no replayed turns)` : `${stats.trimmed} of ${stats.replayed} replayed turns (${(stats.trimmed_rate * 100).toFixed(1)}%)`,
    ],
    ['chars_used', spread(stats.chars_used)],
    ['first token', spread(stats.first_token_ms, ' ms')],
    ['speed', stats.tokens_per_second === null ? '-' : `${stats.tokens_per_second} tokens/s (${stats.eval_tokens} tokens)`],
  ];
  return rows.map(([label, value]) => `${label.padEnd(12)}${value}`).join('\n') + '\n';
}

function strengthColor(c: ChalkInstance, strength: string): (text: string) => string {
  return strength === 'strong' ? c.green : strength === 'moderate' ? c.yellow : strength === 'weak' ? c.red : c.dim;
}

function statusColor(c: ChalkInstance, status: string): (text: string) => string {
  // A turn answered with a client's tool calls did not fail: its answer was the calls.
  return status === 'ok' ? c.green : status === 'interrupted' ? c.yellow : status === 'tool_calls' ? c.cyan : c.red;
}
