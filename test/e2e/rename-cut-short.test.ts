// `argo sessions rename` meeting what a killed rename, or a first question asked elsewhere, left behind.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeUnfinished } from '../../src/log/unfinished.js';
import { encodeRecord } from '../../src/sessions/store.js';
import type { SessionRecord } from '../../src/sessions/store.js';
import { makeDraft } from '../query/helpers.js';
import { runArgo, tempHome } from '../support/run-argo.js';

const argo = (home: string, args: string[]) => runArgo(args, { home, env: { TZ: 'UTC' } });

const play: SessionRecord = {
  name: 'play',
  id: '0b9d2a8e-51a4-4c57-9f0e-3f1b2c4d5e6f',
  title: 'Why is the sky blue?',
  turns: 0,
  created_at: '2025-01-02T10:00:00.000Z',
  last_used_at: '2025-01-02T10:00:00.000Z',
  last_model: null,
};

/** A data home where `argo sessions rename play games` was killed after the new record (and, `sourceGone`, after the old one went). */
function cutShort(sourceGone: boolean): string {
  const home = tempHome();
  const sessions = join(home, 'sessions');
  mkdirSync(sessions, { mode: 0o700 });
  if (!sourceGone) writeFileSync(join(sessions, 'play.json'), encodeRecord(play), { mode: 0o600 });
  writeFileSync(join(sessions, 'games.json'), encodeRecord({ ...play, name: 'games', renamed_from: 'play' }), { mode: 0o600 });
  return home;
}

const records = async (home: string): Promise<SessionRecord[]> => JSON.parse((await argo(home, ['sessions', '--json'])).stdout) as SessionRecord[];

describe('argo sessions rename after a rename killed part-way', () => {
  it.each([
    ['the old record still there', false],
    ['the old record gone already', true],
  ])('the same rename run again finishes it and succeeds (%s)', async (_case, sourceGone) => {
    const home = cutShort(sourceGone);
    expect(await argo(home, ['sessions', 'rename', 'play', 'games'])).toMatchObject({
      code: 0,
      stdout: 'renamed session "play" to "games" (an earlier argo had begun it)\n',
      stderr: '',
    });
    expect(readdirSync(join(home, 'sessions')).filter((file) => !file.startsWith('.'))).toEqual(['games.json']);
    expect(await records(home)).toEqual([{ ...play, name: 'games' }]);
  });

  it('renaming the half-renamed session on: no mark of its first old name is carried', async () => {
    const home = cutShort(true);
    expect(await argo(home, ['sessions', 'rename', 'games', 'other'])).toMatchObject({ code: 0, stdout: 'renamed session "games" to "other"\n', stderr: '' });
    expect(await records(home)).toEqual([{ ...play, name: 'other' }]);
    expect(await argo(home, ['sessions', 'rename', 'other', 'other'])).toMatchObject({ code: 0, stdout: 'session "other" already has that name; nothing renamed\n' });
  });

  it('another rename onto the name still says the earlier one was finished, and exits 2', async () => {
    const home = cutShort(false);
    writeFileSync(join(home, 'sessions', 'work.json'), encodeRecord({ ...play, name: 'work', id: 'c2f1e3a4-0000-4000-8000-000000000001' }), { mode: 0o600 });
    const result = await argo(home, ['sessions', 'rename', 'work', 'games']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe('argo: session "play" was being renamed to "games" when an earlier argo stopped: that rename is finished now, and "games" is that session\'s name\n');
  });
});

describe("argo sessions rename onto the name of a session another host's argo is starting", () => {
  it('is refused naming that host, and says how to free the name', async () => {
    const home = cutShort(false);
    const turn = { owner: { pid: 4242, host: 'otherbox', boot: null }, day: '2025-01-02', session: { id: null, name: 'newx' }, entry: makeDraft('firstturn001') };
    await writeUnfinished(home, turn);
    const result = await argo(home, ['sessions', 'rename', 'games', 'newx']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    const file = join(home, 'unfinished', 'firstturn001.json');
    expect(result.stderr).toBe(
      `argo: session "newx" is being started by a question of argo pid 4242 on otherbox (${file}), which only that host can log: ` +
        `once that argo has ended, any argo command there that reads the log (argo logs) logs it, and the name is that session's; ` +
        `if argo will not run there again, move the file out of ${join(home, 'unfinished')} (it holds the question) and the name is free\n`,
    );
  });
});
