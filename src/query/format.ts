// Pure: how turns, transcripts and stats look on screen. Colours come in as a chalk instance
// (level 0 when stdout is not a terminal), widths as numbers.
import type { ChalkInstance } from 'chalk';
import { format } from 'date-fns/format';
import stringWidth from 'string-width';
import type { LogEntry } from '../log/entry.js';
import { headOf } from '../output/cut.js';
import { plural } from '../output/count.js';
import type { ShownRecord } from '../sessions/store.js';
import type { HistoryStats, Spread } from './stats.js';

export interface RenderOptions {
  color: ChalkInstance;
  /** Terminal width; null when not a terminal (previews then keep a fixed length). */
  width: number | null;
  /** The session's current name (it may have been renamed since the line was written). */
  sessionName: (entry: LogEntry) => string;
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

// The id column fits the 12-character ids Argo writes (what `fork`, `rerun` and `show` take).
const COLUMNS = { time: 16, id: 12, session: 14, type: 11, strength: 8 };
const PREVIEW_WITHOUT_TERMINAL = 80;
const MIN_PREVIEW = 20;

export function localTime(timestamp: string, seconds = false): string {
  const time = Date.parse(timestamp);
  if (Number.isNaN(time)) return timestamp.slice(0, seconds ? 19 : 16);
  return format(time, seconds ? 'yyyy-MM-dd HH:mm:ss' : 'yyyy-MM-dd HH:mm');
}

const graphemes = new Intl.Segmenter();
/**
 * Segmenting costs about the square of the length of what is segmented (a 90k-character prompt
 * took seconds), so text is segmented a short window at a time, and only a prefix of it is looked
 * at: UNITS_PER_COLUMN code units per column, enough for any common text (an emoji sequence is up
 * to ~11 units for 2 columns).
 */
const WINDOW = 32;
const UNITS_PER_COLUMN = 8;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The graphemes of `text`, a window at a time; a window's last one may be cut short, so it is left for the next. */
function* graphemesOf(text: string): Generator<string> {
  let from = 0;
  let size = WINDOW;
  while (from < text.length) {
    const window = headOf(text.slice(from), size); // never half a surrogate pair
    const end = from + window.length;
    const pieces = Array.from(graphemes.segment(window), (piece) => piece.segment);
    if (end === text.length) {
      yield* pieces;
      return;
    }
    if (pieces.length < 2) {
      size *= 2; // one grapheme longer than the window
      continue;
    }
    for (const piece of pieces.slice(0, -1)) {
      yield piece;
      from += piece.length;
    }
    size = WINDOW;
  }
}

/**
 * Cuts to `max` terminal columns, ending with an ellipsis when something was cut. Widths are
 * measured (CJK and emoji take two columns), and a grapheme is never split. Only a prefix of
 * `text` is measured, so the cost does not grow with its length; a text that is still no wider
 * than `max` after that prefix (thousands of zero-width characters) is cut at it.
 */
export function truncate(text: string, max: number): string {
  const head = headOf(text, (Math.max(0, max) + 2) * UNITS_PER_COLUMN);
  const whole = head.length === text.length;
  if (PRINTABLE_ASCII.test(head)) return text.length <= max ? text : `${head.slice(0, Math.max(0, max - 1))}…`;
  let kept = '';
  let width = 0;
  let full = false;
  let pending: string | undefined;
  for (const segment of graphemesOf(head)) {
    // The prefix's last grapheme may be cut short: it is only counted once the next one starts.
    if (pending !== undefined) {
      width += stringWidth(pending);
      if (width > max) return `${kept}…`;
      full ||= width > max - 1;
      if (!full) kept += pending;
    }
    pending = segment;
  }
  if (!whole) return `${kept}…`;
  return pending === undefined || width + stringWidth(pending) <= max ? text : `${kept}…`;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function pad(text: string, width: number): string {
  const cut = truncate(text, width);
  return cut + ' '.repeat(Math.max(0, width - stringWidth(cut)));
}

export function tableHeader(options: RenderOptions): string {
  const { time, id, session, type, strength } = COLUMNS;
  return options.color.dim(`${pad('TIME', time)}  ${pad('ID', id)}  ${pad('SESSION', session)}  ${pad('TYPE', type)}  ${pad('STRENGTH', strength)}  PROMPT`) + '\n';
}

export function tableRow(entry: LogEntry, options: RenderOptions): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const strength = entry.replay_policy?.context_strength ?? '-';
  const fixed = COLUMNS.time + COLUMNS.id + COLUMNS.session + COLUMNS.type + COLUMNS.strength + 10;
  const room = options.width === null ? PREVIEW_WITHOUT_TERMINAL : Math.max(MIN_PREVIEW, options.width - fixed - 1);
  const status = entry.status === 'ok' ? '' : `[${t(entry.status)}] `;
  const preview = truncate(status + oneLine(t(entry.user_prompt)), room);
  const shown = status === '' ? preview : statusColor(c, entry.status)(preview.slice(0, status.length)) + preview.slice(status.length);
  return [
    // The timestamp is shown as written when it is not a time.
    c.dim(pad(t(localTime(entry.timestamp)), COLUMNS.time)),
    // Never cut: an id is copied whole.
    c.yellow(t(entry.id).padEnd(COLUMNS.id)),
    c.cyan(pad(t(options.sessionName(entry)), COLUMNS.session)),
    pad(t(unchecked(entry.entry_type)), COLUMNS.type),
    strengthColor(c, strength)(pad(strength, COLUMNS.strength)),
    shown,
  ].join('  ') + '\n';
}

/** One turn in full: a header line, the prompt, the response. */
export function fullBlock(entry: LogEntry, options: RenderOptions, label = 'Assistant'): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const policy = entry.replay_policy;
  const facts = [
    t(localTime(entry.timestamp, true)),
    c.cyan(t(options.sessionName(entry))),
    t(unchecked(entry.entry_type)),
    policy ? `${strengthColor(c, policy.context_strength)(policy.context_strength)} (${policy.reason}, ${policy.entries_used} turns, ${policy.chars_used} chars${policy.trimmed ? ', trimmed' : ''})` : 'no replay',
    statusColor(c, entry.status)(t(entry.status)),
    t(unchecked(entry.model)),
    c.dim(`id ${t(entry.id)}`),
  ];
  const lines = [c.dim('── ') + facts.join(c.dim(' · ')), `${c.bold('User:')} ${t(entry.user_prompt)}`, `${c.bold(`${label}:`)} ${t(entry.model_response)}`];
  if (entry.error) lines.push(c.red(`(${t(entry.error)})`));
  return `${lines.join('\n')}\n\n`;
}

/** The header of `argo sessions show`. */
export function sessionHeader(record: ShownRecord, entries: readonly LogEntry[], options: RenderOptions, limited = false): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const inherited = entries.filter((entry) => entry.session_id !== record.id).length;
  const facts = [`${c.bold(t(record.name))} ${c.dim(t(record.id))}`, `${limited ? 'newest ' : ''}${plural(entries.length, 'turn')}${inherited > 0 ? ` (${inherited} inherited)` : ''}`];
  if (record.parent) facts.push(t(`forked from ${record.parent.name}@${record.parent.turn_id}${record.parent.removed ? ' (removed)' : ''}`));
  const lines = [
    facts.join(c.dim(' · ')),
    c.dim(t(`created ${localTime(record.created_at)} · last used ${localTime(record.last_used_at)}${record.last_model ? ` · model ${record.last_model}` : ''}`)),
  ];
  return `${lines.join('\n')}\n\n`;
}

/** `argo sessions` as a table. */
export function sessionsTable(records: readonly ShownRecord[], options: RenderOptions): string {
  const c = options.color;
  const t = options.untrusted ?? asIs;
  const nameWidth = Math.max(4, ...records.map((record) => stringWidth(record.name)));
  const header = c.dim(`${pad('NAME', nameWidth)}  ${'TURNS'.padStart(5)}  ${pad('LAST USED', 16)}  ${pad('MODEL', 14)}  TITLE`);
  const room = options.width === null ? PREVIEW_WITHOUT_TERMINAL : Math.max(MIN_PREVIEW, options.width - nameWidth - 45);
  const rows = records.map((record) => {
    const fork = record.parent ? c.dim(t(`(fork of ${record.parent.name}@${record.parent.turn_id}${record.parent.removed ? ', removed' : ''}) `)) : '';
    return [
      c.cyan(pad(t(record.name), nameWidth)),
      String(record.turns).padStart(5),
      c.dim(pad(t(localTime(record.last_used_at)), 16)),
      pad(t(record.last_model ?? '-'), 14),
      fork + truncate(t(record.title), room),
    ].join('  ');
  });
  return [header, ...rows].join('\n') + '\n';
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
  return status === 'ok' ? c.green : status === 'interrupted' ? c.yellow : c.red;
}
