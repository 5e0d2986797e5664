// Recovery loads the session store only for a turn to log: a load that fails (too many open files)
// must give the turn back for a later argo, and say so, not blame an unreadable journal folder.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { unfinishedDir, writeUnfinished } from '../../src/log/unfinished.js';
import type { TurnOwner } from '../../src/log/unfinished.js';
import { makeDraft } from '../query/helpers.js';
import { recoverUnfinished } from '../../src/turn/recover.js';

// Not hoisted: the helpers above load the real module; recovery's own import of it, later, fails.
vi.doMock('../../src/sessions/record-turn.js', () => {
  throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
});

const ME: TurnOwner = { pid: 100, host: 'box', boot: 'aaaa-1111' };
const DEAD = 200;

describe('recovery when the session store cannot be loaded', () => {
  it('the turn is given back under its own name, and the problem is the turn\'s, not the folder\'s', async () => {
    const home = mkdtempSync(join(tmpdir(), 'argo-recover-load-'));
    await writeUnfinished(home, { owner: { ...ME, pid: DEAD }, day: '2025-03-04', session: { id: null, name: 'work' }, entry: makeDraft('turn00000001') });
    const before = readdirSync(unfinishedDir(home));
    const kill = (pid: number): void => {
      if (pid === DEAD) throw Object.assign(new Error('kill ESRCH'), { code: 'ESRCH' });
    };
    const recovery = await recoverUnfinished(loadSettings({ home, session: 'work' }, {}), { me: ME, kill });
    expect(recovery.recovered).toEqual([]);
    expect(recovery.problems).toHaveLength(1);
    expect(recovery.problems[0]).toMatchObject({ problem: expect.stringMatching(/^cannot be logged \(/) as unknown });
    expect(recovery.problems[0]?.folder).toBeUndefined();
    expect(readdirSync(unfinishedDir(home))).toEqual(before);
  });
});
