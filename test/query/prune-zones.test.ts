// `logs prune` and `--since` agree on which day files may hold a turn at or after a time, whatever
// zones wrote and read the data home: the writer names a file for its local day, the reader takes
// the cutoff in its own. Each row switches the process's zone (Node reads TZ again when it changes).
import { format } from 'date-fns/format';
import { afterEach, describe, expect, it } from 'vitest';
import { fileMayMatch, firstDayFrom, parseWhen, EMPTY_QUERY } from '../../src/query/query.js';

const ORIGINAL_TZ = process.env.TZ;
afterEach(() => {
  if (ORIGINAL_TZ === undefined) delete process.env.TZ;
  else process.env.TZ = ORIGINAL_TZ;
});

/** What a function returns with the process in `zone`. */
function inZone<T>(zone: string, run: () => T): T {
  process.env.TZ = zone;
  return run();
}

/** The file a turn at `instant` lands in when written in `zone`. */
const fileDay = (zone: string, instant: string): string => inZone(zone, () => format(new Date(instant), 'yyyy-MM-dd'));

/** Whether `logs prune --older-than <when>`, run in `zone` at `now`, deletes the file named `day`. */
const pruned = (zone: string, now: string, when: string, day: string): boolean =>
  inZone(zone, () => day < firstDayFrom(parseWhen(when, new Date(now), 'start', '--older-than')));

describe('logs prune across time zones: a file goes only when every turn it may hold is older than the cutoff', () => {
  it.each<[string, string, string, string, string, boolean]>([
    // writer, turn written at, pruner, pruned at, --older-than, file deleted
    // argo serve in a UTC container, the CLI far east: the turn is "today" there.
    ['UTC', '2026-11-27T23:27:00Z', 'Pacific/Kiritimati', '2026-11-27T23:30:00Z', 'today', false],
    ['UTC', '2026-11-27T23:27:00Z', 'Pacific/Kiritimati', '2026-11-27T23:30:00Z', '12h', false],
    ['UTC', '2026-11-27T23:27:00Z', 'Asia/Tokyo', '2026-11-27T23:30:00Z', '2h', false],
    // The first hour after Berlin's midnight, the UTC writer still on the day before.
    ['UTC', '2026-11-27T23:10:00Z', 'Europe/Berlin', '2026-11-27T23:20:00Z', 'today', false],
    // The widest spread there is: written at UTC−12, pruned at UTC+14, a minute after the turn.
    ['Etc/GMT+12', '2026-11-28T11:59:00Z', 'Etc/GMT-14', '2026-11-28T12:00:00Z', '1m', false],
    ['Etc/GMT+12', '2026-11-28T11:59:00Z', 'Etc/GMT-14', '2026-11-28T12:00:00Z', 'today', false],
    // Old enough whatever the zones: gone.
    ['Etc/GMT+12', '2026-11-28T11:59:00Z', 'Etc/GMT-14', '2026-12-01T12:00:00Z', 'today', true],
    ['UTC', '2026-11-27T23:27:00Z', 'Pacific/Kiritimati', '2026-11-30T23:30:00Z', 'today', true],
    // One zone throughout: files of the two days before the cutoff's are kept too.
    ['UTC', '2025-01-01T12:00:00Z', 'UTC', '2025-03-15T14:00:00Z', '2025-01-04', true],
    ['UTC', '2025-01-01T12:00:00Z', 'UTC', '2025-03-15T14:00:00Z', '2025-01-03', false],
    ['UTC', '2025-02-10T12:00:00Z', 'UTC', '2025-03-15T14:00:00Z', '30d', true],
    ['UTC', '2025-02-11T12:00:00Z', 'UTC', '2025-03-15T14:00:00Z', '30d', false],
    // A cutoff before the year 1 prunes nothing.
    ['UTC', '0001-01-01T12:00:00Z', 'UTC', '2025-03-15T14:00:00Z', '1500000d', false],
  ])('written in %s at %s, pruned in %s at %s, --older-than %s → deleted: %s', (writer, turn, reader, now, when, deleted) => {
    expect(pruned(reader, now, when, fileDay(writer, turn))).toBe(deleted);
  });

  // Every pair of zones, turns and cutoffs an hour apart over four days: no turn at or after the
  // cutoff is ever in a file prune deletes, and --since the cutoff reads every file prune keeps.
  const ZONES = ['Etc/GMT+12', 'Pacific/Pago_Pago', 'America/Los_Angeles', 'UTC', 'Europe/Berlin', 'Asia/Kolkata', 'Asia/Tokyo', 'Pacific/Kiritimati'];
  const HOUR = 3_600_000;
  const START = Date.parse('2026-03-27T00:00:00Z'); // across Berlin's change of clocks
  const hours = Array.from({ length: 96 }, (_, i) => START + i * HOUR);
  it.each(ZONES)('read in %s: no turn newer than the cutoff is deleted, whoever wrote it', (reader) => {
    const written = ZONES.flatMap((writer) => hours.map((at) => ({ at, day: fileDay(writer, new Date(at).toISOString()) })));
    const days = new Set(written.map(({ day }) => day));
    const wrong = inZone(reader, () => {
      const found: string[] = [];
      for (const cutoff of hours) {
        const first = firstDayFrom(cutoff);
        for (const { at, day } of written) {
          if (at >= cutoff && day < first) found.push(`turn ${new Date(at).toISOString()} in ${day} deleted by cutoff ${new Date(cutoff).toISOString()}`);
        }
        // Prune and --since agree: what one deletes, the other skips.
        for (const day of days) if (fileMayMatch(day, { ...EMPTY_QUERY, since: cutoff }) === day < first) found.push(`${day}: --since ${new Date(cutoff).toISOString()} disagrees with prune`);
      }
      return found;
    });
    expect(wrong).toEqual([]);
  });
});
