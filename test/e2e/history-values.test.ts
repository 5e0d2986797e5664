// Values the history commands refuse, end to end: exit 2, one line naming the value and what is taken.
import { describe, expect, it } from 'vitest';
import { recordTurns, tempData } from '../query/helpers.js';
import { runArgo } from '../support/run-argo.js';

const ACCEPTED = 'use a duration ago (30m, 3h, 2d, 1w, 1d12h), a date (2025-01-31), a date and time (2025-01-31T14:00, 2025-01-31 14:00:30), one with an offset (Z, +02:00, -0500 or +14) or now/today/yesterday';

describe('a time Argo cannot read is refused, never taken for UTC', () => {
  it.each<[string[], string]>([
    [['logs', '--since', '2026-11-27T04:00-5'], `argo: --since: cannot read "2026-11-27T04:00-5" as a time; ${ACCEPTED}\n`],
    [['logs', '--until', '2026-11-27T10:00:00+01:00[Europe/Berlin]'], `argo: --until: cannot read "2026-11-27T10:00:00+01:00[Europe/Berlin]" as a time; ${ACCEPTED}\n`],
    [['export', '--format', 'sharegpt', '--since', '2026-11-27T10:00:00+01:00Z'], `argo: --since: cannot read "2026-11-27T10:00:00+01:00Z" as a time; ${ACCEPTED}\n`],
    [['logs', 'prune', '--older-than', '2026-11-27T10:00+1', '--yes'], `argo: --older-than: cannot read "2026-11-27T10:00+1" as a time; ${ACCEPTED}\n`],
  ])('%j', async (args, stderr) => {
    const data = tempData();
    await recordTurns(data.paths, 'work', 1, { date: '2025-01-01' });
    expect(await runArgo(args, { home: data.home, env: { TZ: 'UTC' } })).toMatchObject({ code: 2, stdout: '', stderr });
    // Nothing pruned: the day's file is still listed.
    expect((await runArgo(['logs', '--json'], { home: data.home })).stdout).not.toBe('');
  });

  it('an offset it reads is applied: --since 04:00-05 is 09:00 UTC', async () => {
    const data = tempData();
    await recordTurns(data.paths, 'work', 2, { date: '2026-11-27', start: '2026-11-27T08:59:00Z' });
    const listed = await runArgo(['logs', '--json', '--since', '2026-11-27T04:00-05'], { home: data.home, env: { TZ: 'UTC' } });
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { timestamp: string }).timestamp)).toEqual(['2026-11-27T09:00:00.000Z']);
  });
});

describe('a count too large to be held exactly says so, naming the largest', () => {
  it.each<[string[], string]>([
    [['last', '999999999999999999999'], "argo: command-argument value '999999999999999999999' is invalid for argument 'n'. it is too large: the largest is 9007199254740991. (see argo last --help)\n"],
    [['logs', '-n', '999999999999999999999'], "argo: option '-n, --limit <n>' argument '999999999999999999999' is invalid. it is too large: the largest is 9007199254740991. (see argo logs --help)\n"],
  ])('%j', async (args, stderr) => {
    const data = tempData();
    expect(await runArgo(args, { home: data.home })).toMatchObject({ code: 2, stdout: '', stderr });
  });
});
