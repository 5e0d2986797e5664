import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import {
  EMPTY_QUERY,
  REASON_FILTERS,
  TYPE_CHOICES,
  boundDay,
  fileMayMatch,
  grepMatcher,
  linePrefilter,
  matchesQuery,
  modelMatches,
  parseChoices,
  parseDuration,
  parseWhen,
  rawNeedle,
} from '../../src/query/query.js';
import type { Query } from '../../src/query/query.js';
import type { LogEntry } from '../../src/log/entry.js';
import { lineHolds } from '../../src/log/needle.js';
import { makeEntry, policy } from './helpers.js';

// Local-time expectations are built with the same local calendar the code uses, so the table holds in any TZ.
const NOW = new Date(2025, 0, 15, 12, 30, 0); // 2025-01-15 12:30 local

describe('parseDuration', () => {
  it.each<[string, object | null]>([
    ['30m', { minutes: 30 }],
    ['3h', { hours: 3 }],
    ['2d', { days: 2 }],
    ['1w', { weeks: 1 }],
    ['45s', { seconds: 45 }],
    ['1d12h', { days: 1, hours: 12 }],
    ['1h1h', { hours: 2 }],
    ['', null],
    ['2', null],
    ['d', null],
    ['1.5h', null],
    ['-2d', null],
    ['2 days', null],
    ['2y', null],
  ])('%j → %j', (text, expected) => {
    expect(parseDuration(text)).toEqual(expected);
  });
});

describe('parseWhen', () => {
  it.each<[string, 'start' | 'end', Date]>([
    ['30m', 'start', new Date(2025, 0, 15, 12, 0, 0)],
    ['3h', 'start', new Date(2025, 0, 15, 9, 30, 0)],
    ['2d', 'start', new Date(2025, 0, 13, 12, 30, 0)],
    ['1w', 'end', new Date(2025, 0, 8, 12, 30, 0)],
    ['1d12h', 'start', new Date(2025, 0, 14, 0, 30, 0)],
    ['now', 'start', NOW],
    ['today', 'start', new Date(2025, 0, 15, 0, 0, 0, 0)],
    ['today', 'end', new Date(2025, 0, 15, 23, 59, 59, 999)],
    ['yesterday', 'start', new Date(2025, 0, 14, 0, 0, 0, 0)],
    ['2025-01-02', 'start', new Date(2025, 0, 2, 0, 0, 0, 0)],
    ['2025-01-02', 'end', new Date(2025, 0, 2, 23, 59, 59, 999)],
    ['2025-01-02T14:05', 'end', new Date(2025, 0, 2, 14, 5, 0, 0)],
    ['2025-01-02 14:05', 'start', new Date(2025, 0, 2, 14, 5, 0, 0)],
    ['2025-01-02T14:05:00Z', 'start', new Date(Date.UTC(2025, 0, 2, 14, 5, 0))],
    ['2025-01-02T14:05:00+02:00', 'start', new Date(Date.UTC(2025, 0, 2, 12, 5, 0))],
    // The furthest offsets there are, each way, in every spelling parseISO takes.
    ['2025-01-02T14:05+14:00', 'start', new Date(Date.UTC(2025, 0, 2, 0, 5, 0))],
    ['2025-01-02T14:05-1400', 'start', new Date(Date.UTC(2025, 0, 3, 4, 5, 0))],
    ['2025-01-02 14:05:00.5+14', 'start', new Date(Date.UTC(2025, 0, 2, 0, 5, 0, 500))],
    ['2025-01-02T14:05-12:00', 'start', new Date(Date.UTC(2025, 0, 3, 2, 5, 0))],
  ])('%j (%s)', (text, edge, expected) => {
    expect(parseWhen(text, NOW, edge, '--since').getTime()).toBe(expected.getTime());
  });

  it.each(['soon', '2025-13-01', '2025-02-30', '2025-1-2', '20250102', '3 days ago', ''])('%j is a usage error naming the flag', (text) => {
    expect(() => parseWhen(text, NOW, 'start', '--since')).toThrow(UsageError);
    expect(() => parseWhen(text, NOW, 'start', '--since')).toThrow(/^--since: cannot read .* use a duration ago \(30m, 3h, 2d/);
  });

  it.each<[string, string]>([
    ['2026-11-27T11:30+99:00', '+99:00'],
    ['2026-11-27T11:30+14:01', '+14:01'],
    ['2026-11-27T11:30:00-1500', '-15:00'],
    ['2026-11-27 11:30+15', '+15:00'],
  ])('%j: no time zone is %s from UTC, a usage error rather than a time days away', (text, offset) => {
    expect(() => parseWhen(text, NOW, 'start', '--since')).toThrow(
      `--since: ${JSON.stringify(text)} is ${offset} from UTC, and no time zone is more than 14:00 from it; give an offset such as +02:00, -05:00 or Z`,
    );
  });

  // parseISO reads an offset it cannot match as UTC: each of these would have been a time hours off.
  it.each([
    '2026-11-27T04:00-5',
    '2026-11-27T10:00+1',
    '2026-11-27T10:00:00+01:00[Europe/Berlin]',
    '2026-11-27T10:00:00+01:00abc',
    '2026-11-27T10:00:00+01:00Z',
    '2026-11-27T10:00:00+01:00:00',
    '2026-11-27T10:00:00+1:00',
    '2026-11-27T10:00:00 +01:00',
    '2026-11-27T10:00 UTC',
    '2026-11-27T10',
    '2026-11-27T10:00:0',
    '2026-11-27Z',
    '2026-11-27+01:00',
    '2026-11-27t10:00',
    '2026-11-27T10:00z',
  ])('%j: an offset or a time it cannot read is a usage error, never UTC', (text) => {
    expect(() => parseWhen(text, NOW, 'start', '--until')).toThrow(UsageError);
    expect(() => parseWhen(text, NOW, 'start', '--until')).toThrow(
      `--until: cannot read ${JSON.stringify(text)} as a time; use a duration ago (30m, 3h, 2d, 1w, 1d12h), a date (2025-01-31), a date and time (2025-01-31T14:00, 2025-01-31 14:00:30), one with an offset (Z, +02:00, -0500 or +14) or now/today/yesterday`,
    );
  });

  it.each<[string, Date]>([
    ['2026-11-27T04:00-05', new Date(Date.UTC(2026, 10, 27, 9, 0))],
    ['2026-11-27T04:00-05:30', new Date(Date.UTC(2026, 10, 27, 9, 30))],
    ['2026-11-27T10:00:00+0100', new Date(Date.UTC(2026, 10, 27, 9, 0))],
    ['2026-11-27T10:00:00,25+01:00', new Date(Date.UTC(2026, 10, 27, 9, 0, 0, 250))],
    ['  2026-11-27T10:00Z  ', new Date(Date.UTC(2026, 10, 27, 10, 0))],
  ])('%j: every offset form read as written', (text, expected) => {
    expect(parseWhen(text, NOW, 'start', '--since').getTime()).toBe(expected.getTime());
  });

  // Found by test/cli/parse.property.test.ts: the value is quoted as JSON, so the error is one line.
  it.each([
    ['1\n2', '--since: cannot read "1\\n2" as a time;'],
    ['99999999999999999999d', '--since: "99999999999999999999d" reaches further back than a date can go;'],
  ])('%j is named on one line', (text, start) => {
    expect(() => parseWhen(text, NOW, 'start', '--since')).toThrow(new RegExp(`^${start.replace(/[\\"()]/g, '\\$&')}[^\n]*$`));
  });
});

describe('parseChoices', () => {
  it('takes comma-separated and repeated values, case-insensitively', () => {
    expect([...parseChoices(['question,Instruction', 'meta'], TYPE_CHOICES, '--type')]).toEqual(['question', 'instruction', 'meta']);
    expect([...parseChoices(['none'], REASON_FILTERS, '--reason')]).toEqual(['none']);
  });

  it('rejects unknown values listing the valid ones', () => {
    expect(() => parseChoices(['question,questions'], TYPE_CHOICES, '--type')).toThrow(
      '--type: unknown value "questions"; use question, instruction, correction, meta, other (several separated by commas)',
    );
    expect(() => parseChoices([','], TYPE_CHOICES, '--type')).toThrow(/give at least one of/);
  });
});

describe('matchesQuery', () => {
  const base = makeEntry({
    timestamp: '2025-01-02T10:00:00.000Z',
    entry_type: 'instruction',
    status: 'ok',
    model: 'llama3:8b',
    user_prompt: 'Explain the Café menu',
    model_response: 'It lists CROISSANTS.',
    replay_policy: policy({ context_strength: 'moderate', reason: 'clarification' }),
  });
  const q = (overrides: Partial<Query>): Query => ({ ...EMPTY_QUERY, ...overrides });

  it.each<[string, Partial<Query>, Partial<LogEntry>, boolean]>([
    ['no filter', {}, {}, true],
    ['session id hit', { sessionIds: new Set([base.session_id]) }, {}, true],
    ['session id miss', { sessionIds: new Set(['other']) }, {}, false],
    ['since inclusive', { since: Date.parse('2025-01-02T10:00:00Z') }, {}, true],
    ['since after', { since: Date.parse('2025-01-02T10:00:01Z') }, {}, false],
    ['until inclusive', { until: Date.parse('2025-01-02T10:00:00Z') }, {}, true],
    ['until before', { until: Date.parse('2025-01-02T09:59:59Z') }, {}, false],
    ['timestamp unreadable with a time filter', { since: 0 }, { timestamp: 'yesterday' }, false],
    ['type hit', { types: new Set(['instruction', 'meta'] as const) }, {}, true],
    ['type miss', { types: new Set(['question'] as const) }, {}, false],
    ['status miss', { statuses: new Set(['error'] as const) }, {}, false],
    ['status hit', { statuses: new Set(['error'] as const) }, { status: 'error' }, true],
    ['strength hit', { strengths: new Set(['moderate'] as const) }, {}, true],
    ['strength none, replayed', { strengths: new Set(['none'] as const) }, {}, false],
    ['strength none, not replayed', { strengths: new Set(['none'] as const) }, { replay_policy: null }, true],
    ['reason hit', { reasons: new Set(['clarification'] as const) }, {}, true],
    ['reason none', { reasons: new Set(['none'] as const) }, { replay_policy: null }, true],
    ['reason miss', { reasons: new Set(['session'] as const) }, {}, false],
    ['model without tag', { models: ['llama3'] }, {}, true],
    ['model exact', { models: ['llama3:8b'] }, {}, true],
    ['model other tag', { models: ['llama3:70b'] }, {}, false],
    ['grep prompt, any case', { grep: 'café MENU' }, {}, true],
    ['grep response', { grep: 'croissants' }, {}, true],
    ['grep absent', { grep: 'bagel' }, {}, false],
    ['grep does not look at other fields', { grep: 'llama3' }, {}, false],
    ['all combined', { types: new Set(['instruction'] as const), grep: 'menu', models: ['llama3'], since: 0 }, {}, true],
    ['agent runs: a plain turn', { agentRuns: true }, {}, false],
    ['agent runs: a run that called nothing', { agentRuns: true }, { tools: ['read_file'], tool_calls: [] }, true],
    ['agent runs: a run with no tool available', { agentRuns: true }, { tools: [] }, true],
  ])('%s', (_name, query, overrides, expected) => {
    expect(matchesQuery({ ...base, ...overrides }, q(query))).toBe(expected);
  });
});

describe('modelMatches', () => {
  it.each<[string, string, boolean]>([
    ['argo', 'argo', true],
    ['argo:latest', 'argo', true],
    ['argo', 'argo:latest', true],
    ['argo:latest', 'argo:latest', true],
    ['argo:7b', 'argo', true],
    ['argo:7b', 'argo:latest', false],
    ['ARGO:7B', 'argo:7b', true],
    ['argonaut', 'argo', false],
    ['registry.local:5000/team/argo', 'registry.local:5000/team/argo', true],
    ['registry.local:5000/team/argo:1', 'registry.local:5000/team/argo', true],
    // Other spellings of one model, as Ollama reads them: library/ and registry.ollama.ai/ filled in.
    ['library/llama3:8b', 'llama3:8b', true],
    ['library/llama3:8b', 'llama3', true],
    ['llama3:8b', 'library/llama3:8b', true],
    ['argo', 'library/argo', true],
    ['argo', 'registry.ollama.ai/library/argo:latest', true],
    ['registry.ollama.ai/library/argo:7b', 'ARGO:7B', true],
    ['argo@sha256:0123', 'argo:latest', true],
    ['argo:7b', 'argo@sha256:0123', true],
    ['team/argo', 'argo', false],
    ['registry.local:5000/library/argo', 'argo', false],
    ['library/llama3:8b', 'llama3:70b', false],
  ])('%s by %s → %s', (model, filter, expected) => {
    expect(modelMatches(model, filter)).toBe(expected);
  });
});

/** The line as Python's json.dumps writes it by default (ensure_ascii): every non-ASCII code unit as \uXXXX. */
function asciiOnlyJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

describe('the raw-line prefilter never rejects a line the query keeps', () => {
  // Every (needle, text) pair where the precise match succeeds must pass the raw prefilter on the stored line.
  const texts = [
    'Explain the Café menu',
    'say "hello" \\ world',
    'tab\there and a\nnewline',
    'ÉCOLE élève',
    '日本語のテキスト',
    'emoji 🎉 party',
    'Straße',
  ];
  const needles = ['café', 'CAFÉ', '"hello"', '\\ world', 'a\nnew', 'tab\th', 'école', 'ÉLÈVE', '日本', '🎉 PARTY', 'STRASSE', 'straße', 'x'];

  for (const needle of needles) {
    for (const text of texts) {
      const entry = makeEntry({ user_prompt: text, model_response: '' });
      const query = { ...EMPTY_QUERY, grep: needle };
      if (!grepMatcher(needle)?.test(text)) continue;
      // As Argo writes the line, and as Python's json.dumps does (every non-ASCII character a \u escape).
      it.each([
        ['as stored', JSON.stringify(entry)],
        ['with \\u escapes', asciiOnlyJson(entry)],
      ])(`${JSON.stringify(needle)} in ${JSON.stringify(text)}, %s`, (_form, raw) => {
        expect(JSON.parse(raw)).toEqual(entry);
        const needle = rawNeedle(query);
        if (needle) expect(lineHolds(needle, Buffer.from(raw, 'utf8'))).toBe(true);
        expect(linePrefilter(query)?.(raw) ?? true).toBe(true);
        const withSession = { ...query, sessionIds: new Set([entry.session_id]) };
        expect(linePrefilter(withSession)?.(raw) ?? true).toBe(true);
        expect(matchesQuery(entry, query)).toBe(true);
      });
    }
  }

  it('an ASCII needle alone needs no per-line test; a session filter carries the grep per line', () => {
    expect(rawNeedle({ ...EMPTY_QUERY, grep: 'menu' })).toEqual({ kind: 'text', text: 'menu', caseless: true });
    expect(linePrefilter({ ...EMPTY_QUERY, grep: 'menu' })).toBeNull();
    const both = { ...EMPTY_QUERY, grep: 'menu', sessionIds: new Set(['a-b']) };
    expect(rawNeedle(both)).toEqual({ kind: 'json-string', values: ['a-b'] });
    expect(linePrefilter(both)?.('{"user_prompt":"MENU"}')).toBe(true);
    expect(linePrefilter(both)?.('{"user_prompt":"bagel"}')).toBe(false);
  });

  it.each<[string, string, boolean]>([
    ['café', '{"user_prompt":"caf\\u00e9 au lait"}', true],
    ['café', '{"user_prompt":"cafe au lait"}', false],
    ['café', '{"user_prompt":"CAFÉ"}', true],
    ['日本', '{"user_prompt":"\\u65e5\\u672c"}', true],
    ['日本', '{"user_prompt":"nihon"}', false],
  ])('a non-ASCII needle %j: a line with a \\u escape is decoded, not rejected (%s)', (grep, line, passes) => {
    expect(linePrefilter({ ...EMPTY_QUERY, grep })?.(line)).toBe(passes);
  });

  // An agent run's line as the writer stores it: the needle for --tool and for agent runs must be in it.
  const run = makeEntry({
    tools: ['read_file', 'run_command'],
    tool_calls: [{ id: 'c1', name: 'read_file', arguments: { path: 'a "quoted" name.txt' }, outcome: 'success', round: 1, ms: 3, result_chars: 2, result: '{}' }],
  });
  it.each<[string, Partial<Query>, boolean]>([
    ['a called tool', { tools: new Set(['read_file']) }, true],
    ['one of several tools', { tools: new Set(['fetch_url', 'read_file']) }, true],
    ['a tool available but not called', { tools: new Set(['run_command']) }, false],
    ['agent runs', { agentRuns: true }, true],
    ['a tool and agent runs', { tools: new Set(['read_file']), agentRuns: true }, true],
  ])('%s: the stored line holds the needle, and the query keeps it as expected', (_name, query, kept) => {
    const whole = { ...EMPTY_QUERY, ...query };
    const needle = rawNeedle(whole);
    expect(needle).not.toBeNull();
    if (needle) expect(lineHolds(needle, Buffer.from(JSON.stringify(run), 'utf8'))).toBe(true);
    expect(matchesQuery(run, whole)).toBe(kept);
  });

  // A turn of argo serve whose client was answered with calls of its own tools.
  const clientCalls = makeEntry({ client_fields: ['tools'], client_tool_calls: [{ id: 'call_1_0', name: 'get_time', arguments: { tz: 'Europe/Paris' } }] });
  it.each<[string, Partial<Query>, boolean]>([
    ['a client tool it was answered with', { tools: new Set(['get_time']) }, true],
    ['another tool', { tools: new Set(['read_file']) }, false],
    ['agent runs: it is none', { agentRuns: true }, false],
  ])('a client\'s tool calls (client_tool_calls): %s', (_name, query, kept) => {
    const whole = { ...EMPTY_QUERY, ...query };
    const needle = rawNeedle(whole);
    if (needle && kept) expect(lineHolds(needle, Buffer.from(JSON.stringify(clientCalls), 'utf8'))).toBe(true);
    expect(matchesQuery(clientCalls, whole)).toBe(kept);
  });

  it.each<[string, Partial<Query>, ReturnType<typeof rawNeedle>]>([
    ['nothing to search', {}, null],
    ['session ids first', { sessionIds: new Set(['s-1']), grep: 'menu', tools: new Set(['read_file']), agentRuns: true }, { kind: 'json-string', values: ['s-1'] }],
    ['grep text before tools', { grep: 'menu', tools: new Set(['read_file']) }, { kind: 'text', text: 'menu', caseless: true }],
    ['tools when grep has no ASCII', { grep: '日本', tools: new Set(['read_file']) }, { kind: 'json-string', values: ['read_file'] }],
    ['tools before agent runs', { tools: new Set(['read_file', 'memo']), agentRuns: true }, { kind: 'json-string', values: ['read_file', 'memo'] }],
    ['agent runs: the key', { agentRuns: true }, { kind: 'json-string', values: ['tools'] }],
    ['an empty tool set is no filter', { tools: new Set() }, null],
  ])('rawNeedle: %s', (_name, query, expected) => {
    expect(rawNeedle({ ...EMPTY_QUERY, ...query })).toEqual(expected);
  });

  it('rejects lines that cannot hold the text', () => {
    const needle = rawNeedle({ ...EMPTY_QUERY, grep: 'croissant' });
    expect(needle).not.toBeNull();
    if (needle) expect(lineHolds(needle, Buffer.from(JSON.stringify(makeEntry())))).toBe(false);
  });
});

describe('boundDay: a bound as a day file name compares', () => {
  it.each<[Date, string]>([
    [new Date(2025, 0, 2, 23, 59), '2025-01-02'],
    [new Date(999, 11, 31), '0999-12-31'],
    // The signed year: before every file's name, where the era year (2081) would sort after them.
    [new Date(-2080, 0, 18), '-2080-01-18'],
    // Past the year 9999 (--until 9999-12-31 and its margin): after every file's name, not before.
    [new Date(10000, 0, 2), '9999-99-99'],
    [new Date(9999, 11, 31), '9999-12-31'],
  ])('%s → %s', (date, day) => {
    expect(boundDay(date)).toBe(day);
    expect(boundDay(date.getTime())).toBe(day);
  });
});

describe('fileMayMatch', () => {
  const at = (text: string): number => new Date(text).getTime();
  it.each<[string, Partial<Query>, boolean]>([
    ['2025-01-02', {}, true],
    ['2025-01-02', { since: at('2025-01-02T23:00:00') }, true],
    ['2025-01-01', { since: at('2025-01-02T23:00:00') }, true],
    // Written at UTC−11 and read at UTC+14 (or the other way round): one instant, days two apart.
    ['2024-12-31', { since: at('2025-01-02T23:00:00') }, true],
    ['2024-12-30', { since: at('2025-01-02T23:00:00') }, false],
    ['2025-01-05', { until: at('2025-01-02T01:00:00') }, false],
    ['2025-01-04', { until: at('2025-01-02T01:00:00') }, true],
    ['2025-01-03', { until: at('2025-01-02T01:00:00') }, true],
    ['', { since: at('2030-01-01T00:00:00') }, true],
    // Bounds before the year 1 (--since 1500000d): the signed year sorts before every file's.
    ['2025-01-02', { since: new Date(-2080, 0, 18).getTime() }, true],
    ['0001-01-01', { since: new Date(-712, 11, 30).getTime() }, true],
    ['2025-01-02', { until: new Date(-2080, 0, 18).getTime() }, false],
    ['2025-01-02', { until: at('9999-12-31T23:59:59') }, true],
    ['9999-12-31', { since: at('9999-12-30T00:00:00') }, true],
  ])('%s with %j → %s', (date, query, expected) => {
    expect(fileMayMatch(date, { ...EMPTY_QUERY, ...query })).toBe(expected);
  });
});
