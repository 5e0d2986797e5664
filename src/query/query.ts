// Pure rules for `argo logs`: which turns a query keeps, and how flag values become a query.
// No fs, env or clock here: `now` is passed in.
import { addDays } from 'date-fns/addDays';
import { endOfDay } from 'date-fns/endOfDay';
import { format } from 'date-fns/format';
import { isValid } from 'date-fns/isValid';
import { parseISO } from 'date-fns/parseISO';
import { startOfDay } from 'date-fns/startOfDay';
import type { Duration } from 'date-fns';
import { UsageError } from '../errors.js';
import { DAY_PATTERN, TURN_STATUSES } from '../log/entry.js';
import type { LogEntry, TurnStatus } from '../log/entry.js';
import type { Needle } from '../log/needle.js';
import { fullModelName, fullModelPath, namesTag } from '../ollama/model-name.js';
import { CONTEXT_STRENGTHS, ENTRY_TYPES, REPLAY_REASONS } from '../replay/types.js';
import type { EntryType } from '../replay/types.js';

/** `none` selects turns logged without replay (replay_policy null). */
export const STRENGTH_FILTERS = [...CONTEXT_STRENGTHS, 'none'] as const;
export type StrengthFilter = (typeof STRENGTH_FILTERS)[number];
export const REASON_FILTERS = [...REPLAY_REASONS, 'none'] as const;
export type ReasonFilter = (typeof REASON_FILTERS)[number];

export interface Query {
  /** Turns whose session_id is one of these (names are resolved to ids by the caller). */
  sessionIds: ReadonlySet<string> | null;
  /** Inclusive bounds, epoch milliseconds. */
  since: number | null;
  until: number | null;
  types: ReadonlySet<EntryType> | null;
  strengths: ReadonlySet<StrengthFilter> | null;
  reasons: ReadonlySet<ReasonFilter> | null;
  statuses: ReadonlySet<TurnStatus> | null;
  /** A name with a tag matches exactly; a name without one matches every tag of that model. */
  models: readonly string[] | null;
  /** Case-insensitive text to find in the prompt or the response. */
  grep: string | null;
  /** Turns that called one of these tools (`--tool`): an agent run's calls, or a client's of argo serve (`client_tool_calls`). */
  tools?: ReadonlySet<string> | null;
  /** true: only agent runs, the turns whose line has a `tools` field (`argo export` without --all). */
  agentRuns?: true | null;
  /** true: only turns whose prompt was probably cut to the context window (truncation_suspected). */
  truncated: true | null;
}

export const EMPTY_QUERY: Query = {
  sessionIds: null,
  since: null,
  until: null,
  types: null,
  strengths: null,
  reasons: null,
  statuses: null,
  models: null,
  grep: null,
  truncated: null,
};

/** True when the query keeps every turn (no filter given). */
export function isUnfiltered(query: Query): boolean {
  return Object.entries(query).every(([key, value]) => value === null || value === undefined || value === EMPTY_QUERY[key as keyof Query]);
}

// ---------------------------------------------------------------------------------------------
// Flag values

const UNITS = new Map<string, keyof Duration>([
  ['s', 'seconds'],
  ['m', 'minutes'],
  ['h', 'hours'],
  ['d', 'days'],
  ['w', 'weeks'],
]);
const DURATION = /^(?:\d+[smhdw])+$/;
const DURATION_PART = /(\d+)([smhdw])/g;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/**
 * The whole of a date and time Argo reads: hours and minutes, optional seconds and fraction, then
 * nothing, Z, or an offset (`+02:00`, `-0500`, `+14`). parseISO takes an offset it cannot read
 * (`-5`, `+01:00[Europe/Berlin]`) for UTC, so nothing else reaches it.
 */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|([+-])(\d{2})(?::?(\d{2}))?)?$/;
/** No time zone is further from UTC than 14:00 (Kiribati, +14:00). */
const MAX_OFFSET_MINUTES = 14 * 60;

/** `2d`, `3h`, `1d12h`, `90m`, `1w` as a date-fns Duration; null when it is not one. */
export function parseDuration(value: string): Duration | null {
  const text = value.trim();
  if (!DURATION.test(text)) return null;
  const duration: Duration = {};
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) {
    // DURATION_PART captures a number and one of UNITS' letters, so every part has its unit.
    const key = UNITS.get(unit ?? '');
    if (key) duration[key] = (duration[key] ?? 0) + Number(amount);
  }
  return duration;
}

/** Milliseconds in each unit: a day is 24 hours and a week 7 of them, whatever a clock change does to the calendar. */
const UNIT_MS: Readonly<Record<string, number>> = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000, weeks: 604_800_000 };

/** A parsed duration's length: its parts added up (a clock change shortens no day). */
export function durationMs(duration: Duration): number {
  return Object.entries(duration).reduce((total, [unit, amount]) => total + (UNIT_MS[unit] ?? 0) * (typeof amount === 'number' ? amount : 0), 0);
}

/**
 * A point in time from a flag: a duration ago (`2d`, `3h`, `30m`: elapsed time, so `1d` is 24 hours
 * even across a clock change), a local date (`2025-01-31`), a date and time (`2025-01-31T14:00`,
 * offset allowed), or `now`, `today`, `yesterday`. A bare date or day word means the start of that
 * day for `edge: 'start'` and its end for `edge: 'end'`, so `--since 2025-01-31 --until 2025-01-31`
 * is that whole day.
 */
export function parseWhen(value: string, now: Date, edge: 'start' | 'end', where: string): Date {
  const text = value.trim();
  const day = (date: Date): Date => (edge === 'start' ? startOfDay(date) : endOfDay(date));
  if (text === 'now') return now;
  if (text === 'today') return day(now);
  if (text === 'yesterday') return day(addDays(now, -1));
  const duration = parseDuration(text);
  if (duration) {
    const date = new Date(now.getTime() - durationMs(duration));
    // Past about 270,000 years a date cannot be represented: say so rather than match nothing.
    if (!isValid(date)) throw new UsageError(`${where}: ${JSON.stringify(value)} reaches further back than a date can go; use a shorter duration (e.g. 52w) or a date (2025-01-31)`);
    return date;
  }
  const dateTime = DATE_TIME.exec(text);
  if (DATE.test(text) || dateTime !== null) {
    const [, sign, hours, minutes] = dateTime ?? [];
    // parseISO takes any two digits of hours (+99:00): no time zone is that far from UTC.
    if (sign !== undefined && Number(hours) * 60 + Number(minutes ?? 0) > MAX_OFFSET_MINUTES) {
      throw new UsageError(`${where}: ${JSON.stringify(value)} is ${sign}${hours ?? ''}:${minutes ?? '00'} from UTC, and no time zone is more than 14:00 from it; give an offset such as +02:00, -05:00 or Z`);
    }
    const date = parseISO(text);
    if (isValid(date)) return DATE.test(text) ? day(date) : date;
  }
  throw new UsageError(
    `${where}: cannot read ${JSON.stringify(value)} as a time; use a duration ago (30m, 3h, 2d, 1w, 1d12h), a date (2025-01-31), a date and time (2025-01-31T14:00, 2025-01-31 14:00:30), one with an offset (Z, +02:00, -0500 or +14) or now/today/yesterday`,
  );
}

/** A comma-separated (or repeated) list of known values. */
export function parseChoices<T extends string>(values: readonly string[], valid: readonly T[], where: string): Set<T> {
  const chosen = new Set<T>();
  for (const raw of values.flatMap((value) => value.split(','))) {
    const value = raw.trim().toLowerCase();
    if (value === '') continue;
    const choice = valid.find((each) => each === value);
    if (choice === undefined) {
      throw new UsageError(`${where}: unknown value ${JSON.stringify(raw.trim())}; use ${valid.join(', ')} (several separated by commas)`);
    }
    chosen.add(choice);
  }
  if (chosen.size === 0) throw new UsageError(`${where}: give at least one of ${valid.join(', ')}`);
  return chosen;
}

export function splitList(values: readonly string[]): string[] {
  return values.flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value !== '');
}

export const TYPE_CHOICES = ENTRY_TYPES;
export const STATUS_CHOICES = TURN_STATUSES;

// ---------------------------------------------------------------------------------------------
// Matching

export function matchesQuery(entry: LogEntry, query: Query, grep: RegExp | null = grepMatcher(query.grep)): boolean {
  if (query.sessionIds && !query.sessionIds.has(entry.session_id)) return false;
  if (query.since !== null || query.until !== null) {
    const time = Date.parse(entry.timestamp);
    if (Number.isNaN(time)) return false;
    if (query.since !== null && time < query.since) return false;
    if (query.until !== null && time > query.until) return false;
  }
  if (query.types && !query.types.has(entry.entry_type)) return false;
  if (query.statuses && !query.statuses.has(entry.status)) return false;
  const policy = entry.replay_policy;
  if (query.strengths && !query.strengths.has(policy ? policy.context_strength : 'none')) return false;
  if (query.reasons && !query.reasons.has(policy ? policy.reason : 'none')) return false;
  if (query.models && !query.models.some((model) => modelMatches(entry.model, model))) return false;
  if (grep && !grep.test(entry.user_prompt) && !grep.test(entry.model_response)) return false;
  const tools = query.tools;
  if (tools && !(entry.tool_calls ?? []).some((call) => tools.has(call.name)) && !(entry.client_tool_calls ?? []).some((call) => tools.has(call.name))) return false;
  if (query.agentRuns && entry.tools === undefined) return false;
  if (query.truncated && entry.truncation_suspected !== true) return false;
  return true;
}

/**
 * Whether a turn's model is the one `wanted` names, as Ollama matches names (fullModelName:
 * case-insensitive, registry.ollama.ai/, library/ and :latest filled in), so `llama3:8b` finds
 * `library/llama3:8b`; a name without a tag takes every tag of that model.
 */
export function modelMatches(model: string | undefined, wanted: string): boolean {
  if (typeof model !== 'string') return false;
  return namesTag(wanted) ? fullModelName(model) === fullModelName(wanted) : fullModelPath(model) === fullModelPath(wanted);
}

/**
 * Case-insensitive search, as JavaScript's `i` flag defines it (simple case folding; ASCII letters
 * only match ASCII letters). The same rule drives the raw-line prefilter, so the two always agree.
 */
export function grepMatcher(text: string | null): RegExp | null {
  return text === null ? null : new RegExp(escapeRegExp(text), 'i');
}

/**
 * What every line holding a turn the query keeps must contain (see readLines' `needle`), or null
 * when nothing is cheap and safe. Session ids are exact JSON strings; grep text is searched as JSON
 * stores it (escaped), using its longest ASCII run: the `i` flag folds ASCII letters only to ASCII
 * letters, so ignoring their case in the UTF-8 bytes finds what it finds in the decoded text. A
 * called tool's name is a JSON string of its line (`"name":"read_file"`), and an agent run's line
 * has the key `"tools"`: both are searched only when nothing above is, as they are common.
 */
export function rawNeedle(query: Query): Needle | null {
  if (query.sessionIds && query.sessionIds.size > 0) return { kind: 'json-string', values: [...query.sessionIds] };
  const run = query.grep === null ? null : longestAsciiRun(jsonEscaped(query.grep));
  if (run) return { kind: 'text', text: run, caseless: true };
  if (query.tools && query.tools.size > 0) return { kind: 'json-string', values: [...query.tools] };
  return query.agentRuns ? { kind: 'json-string', values: ['tools'] } : null;
}

/**
 * A per-line test for what rawNeedle could not cover (grep text when session ids were searched, or
 * non-ASCII text). A line holding a `\u` escape is let through to be decoded: another writer may
 * store the text's non-ASCII characters that way (Python's json.dumps: "caf\u00e9"), which the
 * text as JSON.stringify escapes it does not match. Argo's own lines have one only for a control.
 */
export function linePrefilter(query: Query): ((text: string) => boolean) | null {
  if (query.grep === null) return null;
  const escaped = jsonEscaped(query.grep);
  const re = new RegExp(escapeRegExp(escaped), 'i');
  const searchedRaw = !(query.sessionIds && query.sessionIds.size > 0) && longestAsciiRun(escaped) === escaped;
  return searchedRaw ? null : (text) => re.test(text) || text.includes(UNICODE_ESCAPE);
}

const UNICODE_ESCAPE = '\\u';

// A file is named for the writer's local day, the range in the reader's zone: zone offsets run from
// −12 h to +14 h, so the two days of one instant can be up to two days apart. A turn may be filed in
// a later day than its start (appendDay), but no later than the day it was written on in the zone
// furthest east of the writers: any turn shorter than 22 hours is still inside the margin.
const ZONE_MARGIN_DAYS = 2;

// DAY_PATTERN with the signed year: the year 2081 BC (`--since 1500000d`) is -2080, where
// DAY_PATTERN's era year would write 2081, a day after every file's.
const BOUND_DAY_PATTERN = DAY_PATTERN.replace('yyyy', 'uuuu');

/** Sorts after every day file's name: a day past the year 9999 (`--until 9999-12-31` plus the margin), whose 5 digits would sort first. */
const AFTER_EVERY_DAY = '9999-99-99';

/** A time bound's local day, to compare with the day files' names: a day before the year 1 sorts before every file's, one after 9999 after them. */
export function boundDay(time: Date | number): string {
  const day = format(time, BOUND_DAY_PATTERN);
  return /^\d{5}/.test(day) ? AFTER_EVERY_DAY : day;
}

/**
 * The first day file that may hold a turn at or after `time`, whatever zone wrote it: every line of
 * a file named before it is older (`logs prune` deletes only those; `--since` skips them).
 */
export function firstDayFrom(time: Date | number): string {
  return boundDay(addDays(time, -ZONE_MARGIN_DAYS));
}

/** Files named for days outside the query's range hold none of its turns. */
export function fileMayMatch(fileDate: string, query: Query): boolean {
  if (fileDate === '') return true;
  if (query.since !== null && fileDate < firstDayFrom(query.since)) return false;
  if (query.until !== null && fileDate > boundDay(addDays(query.until, ZONE_MARGIN_DAYS))) return false;
  return true;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function jsonEscaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

function longestAsciiRun(text: string): string | null {
  let best = '';
  // eslint-disable-next-line no-control-regex
  for (const run of text.match(/[\u0000-\u007f]+/g) ?? []) if (run.length > best.length) best = run;
  return best === '' ? null : best;
}

