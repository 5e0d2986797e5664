// `argo logs --stats` counts turns checked as Latin-1 (turnsToCount) and must count exactly what it
// counted from the turns every reader sees (searchTurns): the same totals and the same number of
// unreadable lines, for every query it takes, on odd lines and generated ones.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ScanStats } from '../../src/log/scan.js';
import { EMPTY_QUERY } from '../../src/query/query.js';
import type { Query } from '../../src/query/query.js';
import { countableFromLatin1, searchTurns, turnsToCount } from '../../src/query/search.js';
import { StatsAccumulator } from '../../src/query/stats.js';
import type { HistoryStats } from '../../src/query/stats.js';
import { logEntry } from '../support/entry-arbitrary.js';
import { ODD_LOG_FILES, line } from '../support/odd-log-lines.js';
import { hostileText, runs } from '../support/property.js';

const root = mkdtempSync(join(tmpdir(), 'argo-count-turns-'));
let homes = 0;

/** A logs folder holding these files' contents, one day each. */
function logsOf(contents: readonly (string | Buffer)[]): string {
  const logs = join(root, `${homes++}`, 'logs');
  mkdirSync(logs, { recursive: true });
  contents.forEach((content, day) => writeFileSync(join(logs, `2025-01-${String(day + 10).padStart(2, '0')}.log`), content));
  return logs;
}

async function counted(logs: string, query: Query, fast: boolean): Promise<{ stats: HistoryStats; unreadable: number }> {
  const scan = new ScanStats();
  const totals = new StatsAccumulator();
  if (fast) for await (const turn of turnsToCount(logs, query, scan)) totals.add(turn);
  else for await (const { entry } of searchTurns(logs, query, scan)) totals.add(entry);
  return { stats: totals.result(), unreadable: scan.unreadable };
}

const QUERIES: [string, Query][] = [
  ['no filter', EMPTY_QUERY],
  ['--since, --until', { ...EMPTY_QUERY, since: Date.parse('2025-01-01T00:00:00Z'), until: Date.parse('2025-01-20T00:00:00Z') }],
  ['--status', { ...EMPTY_QUERY, statuses: new Set(['ok', 'error']) }],
  ['--model, a non-ASCII one among them', { ...EMPTY_QUERY, models: ['モデル', 'argo'] }],
  ['--type, --strength, --reason', { ...EMPTY_QUERY, types: new Set(['question']), strengths: new Set(['none', 'strong']), reasons: new Set(['none', 'continuation']) }],
  ['--truncated', { ...EMPTY_QUERY, truncated: true }],
];

describe('countableFromLatin1', () => {
  it.each([
    ['no filter', EMPTY_QUERY, true],
    ['a time range, statuses and models', QUERIES[1]?.[1] ?? EMPTY_QUERY, true],
    ['a session', { ...EMPTY_QUERY, sessionIds: new Set(['x']) }, false],
    ['text to find', { ...EMPTY_QUERY, grep: 'word' }, false],
    ['a tool', { ...EMPTY_QUERY, tools: new Set(['read_file']) }, false],
    ['agent runs', { ...EMPTY_QUERY, agentRuns: true as const }, false],
  ])('%s: %s', (_name, query, expected) => {
    expect(countableFromLatin1(query)).toBe(expected);
  });
});

describe('turnsToCount counts what searchTurns finds', () => {
  const free = [
    line('u', { status: 'fertig ✓', model: 'モデル:7b', timestamp: '2025-01-12T10:00:00.000+09:00' }),
    line('v', { model: 'モデル', timestamp: '２０２５-01-12' }),
    line('w', { status: 'ok', model: 'caf\u00e9' }).replace('caf\u00e9', 'caf\\u00e9'),
    line('x', { truncation_suspected: true, replay_policy: null }),
    line('y', { status: 'fertig ✓' }),
    line('z', { timestamp: '2025-01-12T10:00:00.000+09:00\u00a0' }),
  ].join('');
  const logs = logsOf([...ODD_LOG_FILES.map(([, content]) => content), free]);

  it.each(QUERIES)('%s', async (_name, query) => {
    expect(countableFromLatin1(query)).toBe(true);
    const expected = await counted(logs, query, false);
    expect(expected.stats.turns).toBeGreaterThan(0);
    expect(await counted(logs, query, true)).toEqual(expected);
  });

  it('every odd file on its own', async () => {
    for (const [name, content] of ODD_LOG_FILES) {
      const one = logsOf([content]);
      expect(await counted(one, EMPTY_QUERY, true), name).toEqual(await counted(one, EMPTY_QUERY, false));
    }
  });
});

const turnLine = fc
  .tuple(logEntry, fc.option(hostileText(4), { nil: undefined }))
  .map(([entry, status]) => JSON.stringify(status === undefined ? entry : { ...entry, status }))
  .chain((text) =>
    fc.oneof(
      { arbitrary: fc.constant(Buffer.from(text, 'utf8')), weight: 4 },
      fc.tuple(fc.nat({ max: text.length }), fc.integer({ min: 0x80, max: 0xff })).map(([at, byte]) => {
        const raw = Buffer.from(text, 'utf8');
        const cut = Math.min(at, raw.length);
        return Buffer.concat([raw.subarray(0, cut), Buffer.from([byte]), raw.subarray(cut)]);
      }),
    ),
  );

describe('turnsToCount agrees with searchTurns on generated files', () => {
  it('turns with text of every kind in their free fields, some bytes damaged', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(turnLine, { maxLength: 5 }), { minLength: 1, maxLength: 2 }), fc.constantFrom(...QUERIES), async (days, [, query]) => {
        const logs = logsOf(days.map((lines) => Buffer.concat(lines.flatMap((each) => [each, Buffer.from('\n')]))));
        expect(await counted(logs, query, true)).toEqual(await counted(logs, query, false));
      }),
      runs(200),
    );
  });
});
