import { beforeAll, describe, expect, it } from 'vitest';
import { buildQuery, checkFailure } from '../../src/cli/logs.js';
import type { WaitedName } from '../../src/cli/logs.js';
import { SessionLookup, deleteSession } from '../../src/sessions/store.js';
import { recordTurns, tempData } from '../query/helpers.js';
import type { Home } from '../query/helpers.js';

describe('checkFailure', () => {
  it.each<[{ unreadable: number; damagedFiles: number; files: number; blockedDays: number; repeated?: number }, string]>([
    [{ unreadable: 1, damagedFiles: 1, files: 1, blockedDays: 0 }, '1 unreadable line in 1 of 1 log file; readers skip them. Fix or delete those lines by hand if you want them gone'],
    [{ unreadable: 4, damagedFiles: 2, files: 3, blockedDays: 0 }, '4 unreadable lines in 2 of 3 log files; readers skip them. Fix or delete those lines by hand if you want them gone'],
    [{ unreadable: 0, damagedFiles: 0, files: 2, blockedDays: 1 }, '1 day of the log cannot be written (listed above)'],
    [{ unreadable: 0, damagedFiles: 0, files: 0, blockedDays: 2 }, '2 days of the log cannot be written (listed above)'],
    // Both: one line, not two.
    [
      { unreadable: 1, damagedFiles: 1, files: 1, blockedDays: 1 },
      '1 day of the log cannot be written (listed above), and 1 unreadable line in 1 of 1 log file; readers skip them. Fix or delete those lines by hand if you want them gone',
    ],
    [
      { unreadable: 0, damagedFiles: 0, files: 2, blockedDays: 0, repeated: 1 },
      '1 line repeats a turn logged earlier (listed above); argo logs shows such a turn twice and --stats counts it twice. Delete the later copy by hand',
    ],
    [
      { unreadable: 2, damagedFiles: 1, files: 2, blockedDays: 1, repeated: 3 },
      '1 day of the log cannot be written (listed above), and 3 lines repeat a turn logged earlier (listed above); argo logs shows such a turn twice and --stats counts it twice. Delete the later copy by hand, and 2 unreadable lines in 1 of 2 log files; readers skip them. Fix or delete those lines by hand if you want them gone',
    ],
  ])('%j → %s', (found, line) => {
    expect(checkFailure(found)).toBe(line);
  });
});

describe('buildQuery: -s names, and the ones --follow waits for', () => {
  let data: Home;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    data = tempData();
    ids.play = (await recordTurns(data.paths, 'play', 1)).session.id;
    // A removed session: turns in the log under its name, no record.
    ids.gone = (await recordTurns(data.paths, 'gone', 1)).session.id;
    await deleteSession(data.paths.sessions, 'gone');
  });

  it.each<[string[] | ((ids: Record<string, string>) => string[]), boolean, string[], WaitedName[]]>([
    [['play'], true, ['play'], []],
    [['job'], true, [], [{ name: 'job', removed: false }]],
    [['play,job'], true, ['play'], [{ name: 'job', removed: false }]],
    // A removed session's turns are still shown; a new session taking its name is waited for, without a "not yet".
    [['gone'], true, ['gone'], [{ name: 'gone', removed: true }]],
    // An id matched is not waited for, a live session's or a removed one's, in any case.
    [(known) => [known.play ?? ''], true, ['play'], []],
    [(known) => [(known.play ?? '').toUpperCase()], true, ['play'], []],
    [(known) => [known.gone ?? ''], true, ['gone'], []],
    [['play'], false, ['play'], []],
    [['gone'], false, ['gone'], []],
  ])('-s %j, following %s: ids of %j, waiting for %j', async (given, follow, sessions, waited) => {
    const session = typeof given === 'function' ? given(ids) : given;
    const notYet: WaitedName[] = [];
    const query = await buildQuery({ session }, new Date(), new SessionLookup(data.paths.sessions), data.paths, follow ? notYet : undefined);
    expect([...(query.sessionIds ?? [])].sort()).toEqual(sessions.map((name) => ids[name]).sort());
    expect(notYet).toEqual(waited);
  });

  it.each<[string[], boolean, RegExp]>([
    [['job'], false, /^--session: no session named "job"; /],
    [['00000000-0000-4000-8000-000000000009'], false, /^--session: no session with id 00000000-0000-4000-8000-000000000009/],
    [['00000000-0000-4000-8000-000000000009'], true, /^--session: no session with id 00000000-0000-4000-8000-000000000009/],
    [['a b'], true, /invalid session name "a b"/],
  ])('-s %j, following %s, is refused', async (session, follow, message) => {
    await expect(buildQuery({ session }, new Date(), new SessionLookup(data.paths.sessions), data.paths, follow ? [] : undefined)).rejects.toThrow(message);
  });
});
