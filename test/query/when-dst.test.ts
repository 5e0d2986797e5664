// Durations across daylight-saving changes: set before any date is made, so the whole file runs in Berlin.
process.env.TZ = 'Europe/Berlin';

import { describe, expect, it } from 'vitest';
import { parseWhen } from '../../src/query/query.js';

const HOUR = 3_600_000;

describe('a duration ago is elapsed time, the same across a clock change (Europe/Berlin)', () => {
  it('the zone is Berlin: the clocks changed on 2025-03-30 and 2025-10-26', () => {
    expect(new Date('2025-03-29T12:00:00Z').getTimezoneOffset()).toBe(-60);
    expect(new Date('2025-03-31T12:00:00Z').getTimezoneOffset()).toBe(-120);
    expect(new Date('2025-10-27T12:00:00Z').getTimezoneOffset()).toBe(-60);
  });

  it.each<[string, string, number]>([
    // The day the clocks went forward had 23 hours; 1d is still 24 of them.
    ['2025-03-31T12:00:00+02:00', '1d', 24 * HOUR],
    ['2025-03-30T12:00:00+02:00', '1d', 24 * HOUR],
    ['2025-04-02T12:00:00+02:00', '1w', 168 * HOUR],
    ['2025-03-31T12:00:00+02:00', '1d12h', 36 * HOUR],
    ['2025-03-31T12:00:00+02:00', '2d', 48 * HOUR],
    // The day they went back had 25.
    ['2025-10-27T12:00:00+01:00', '1d', 24 * HOUR],
    ['2025-10-26T12:00:00+01:00', '1d', 24 * HOUR],
    ['2025-10-30T12:00:00+01:00', '1w', 168 * HOUR],
    ['2025-10-27T12:00:00+01:00', '24h', 24 * HOUR],
    ['2025-10-27T12:00:00+01:00', '1440m', 24 * HOUR],
    ['2025-10-27T12:00:00+01:00', '86400s', 24 * HOUR],
    // Away from a change, as before.
    ['2025-01-15T12:00:00+01:00', '1d', 24 * HOUR],
  ])('now %s, %s → that many hours before', (now, duration, elapsed) => {
    const at = new Date(now);
    for (const edge of ['start', 'end'] as const) expect(at.getTime() - parseWhen(duration, at, edge, '--since').getTime()).toBe(elapsed);
  });

  it('a day word is still a calendar day: yesterday across the spring change is 23 hours long', () => {
    const now = new Date('2025-03-31T12:00:00+02:00');
    const start = parseWhen('yesterday', now, 'start', '--since').getTime();
    const end = parseWhen('yesterday', now, 'end', '--until').getTime();
    expect(start).toBe(new Date('2025-03-30T00:00:00+01:00').getTime());
    expect(end + 1 - start).toBe(23 * HOUR);
  });
});
