// `argo logs -f` names each new row's session as it is when the row is printed: created, renamed or
// removed while the follow runs.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { makeEntry, recordTurns, tempData, writeEntries } from '../query/helpers.js';
import { readSession } from '../../src/sessions/store.js';
import { defined } from '../support/defined.js';
import type { Home } from '../query/helpers.js';
import { ARGO_BIN, runArgo, scrubbedEnv } from '../support/run-argo.js';
import { waitFor } from '../support/wait.js';

const ENV = { TZ: 'UTC' };

/** The follower's table rows; `row(text)` is the one whose prompt holds text. */
function follow(home: string, args: string[]): { row: (text: string) => Promise<string>; stop: () => Promise<{ code: number | null; stderr: string }>; stderr: () => string } {
  const child = spawn(process.execPath, [ARGO_BIN, 'logs', '-f', ...args], { env: scrubbedEnv({ home, env: ENV }) });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    row: async (text) => {
      let found = '';
      await waitFor(() => {
        found = stdout.split('\n').find((line) => line.includes(text)) ?? '';
        expect(found, `stderr: ${stderr}`).not.toBe('');
      });
      return found;
    },
    stop: async () => {
      child.kill('SIGINT');
      return { code: await exited, stderr };
    },
    stderr: () => stderr,
  };
}

/** The session column of a table row: the words between the time and the type (a name may be followed by "(removed)"). */
const sessionOf = (row: string): string => /^\S+\s+\S+\s+\S+\s+(\S+(?: \((?:removed|damaged record)\))?)/.exec(row)?.[1] ?? `(no session in ${JSON.stringify(row)})`;

const turn = (data: Home, name: string, prompt: string): Promise<unknown> => recordTurns(data.paths, name, 1, { date: '2025-01-02', shape: () => ({ user_prompt: prompt }) });

describe('argo logs -f: each row under the name its session has as it is printed', () => {
  it('a session waited for with -s, created while following, is not "(removed)"', async () => {
    const data = tempData();
    const follower = follow(data.home, ['-s', 'nightly']);
    await waitFor(() => {
      expect(follower.stderr()).toBe('no session named "nightly" yet; following, its turns are shown as they are written\n');
    });
    await turn(data, 'nightly', 'nightly job');
    expect(sessionOf(await follower.row('nightly job'))).toBe('nightly');
    expect((await follower.stop()).code).toBe(0);
  });

  it('a new session is not "(removed)", though another was renamed before the follow began', async () => {
    const data = tempData();
    await turn(data, 'old', 'x');
    expect((await runArgo(['sessions', 'rename', 'old', 'older'], { home: data.home, env: ENV })).code).toBe(0);
    const follower = follow(data.home, []);
    expect(sessionOf(await follower.row('x'))).toBe('older');
    await turn(data, 'fresh', 'first fresh');
    await turn(data, 'fresh', 'second fresh');
    expect(sessionOf(await follower.row('first fresh'))).toBe('fresh');
    expect(sessionOf(await follower.row('second fresh'))).toBe('fresh');
    expect((await follower.stop()).code).toBe(0);
  });

  it('a session renamed while following is shown under its new name, and its old name under the session that took it', async () => {
    const data = tempData();
    await turn(data, 'alpha', 'first');
    const follower = follow(data.home, []);
    expect(sessionOf(await follower.row('first'))).toBe('alpha');
    expect((await runArgo(['sessions', 'rename', 'alpha', 'beta'], { home: data.home, env: ENV })).code).toBe(0);
    await turn(data, 'beta', '2nd');
    expect(sessionOf(await follower.row('2nd'))).toBe('beta');
    await turn(data, 'alpha', '3rd, new alpha');
    expect(sessionOf(await follower.row('3rd, new alpha'))).toBe('alpha');
    const beta = defined(await readSession(data.paths.sessions, 'beta'), 'session beta').id;
    expect((await runArgo(['sessions', 'rm', 'beta', '--yes'], { home: data.home, env: ENV })).code).toBe(0);
    // A turn logged under the removed session's id (as argo rerun logs one): shown as removed.
    writeEntries(data.paths, '2025-01-02', [makeEntry({ id: 'after-rm', session: 'beta', session_id: beta, user_prompt: 'after removal' })]);
    expect(sessionOf(await follower.row('after removal'))).toBe('beta (removed)');
    expect(await follower.stop()).toEqual({ code: 0, stderr: '' });
  });
});
