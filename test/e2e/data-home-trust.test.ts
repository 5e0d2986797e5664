// A data home other users can write in, end to end: what they put there is refused, never obeyed,
// and nothing of this user's is made in a data home of theirs. The cases with another user need
// root (chown, and argo run as nobody); elsewhere they are skipped.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lchownSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { privateGroupOf } from '../../src/log/fs.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile();
const NOBODY = { uid: 65534, gid: 65534 };
const asRoot = process.getuid?.() === 0;

/** A home of the test's that anyone may write in (sticky, as /tmp), its parent open for passing through. */
const sharedHome = (): string => {
  const home = tempHome();
  chmodSync(dirname(home), statSync(dirname(home)).mode | 0o001);
  chmodSync(home, 0o1777);
  return home;
};

describe('a data home others can write in', () => {
  it('argo doctor warns that it is open to others, and passes the data check', async () => {
    const home = sharedHome();
    const result = await runArgo(['doctor'], { home, host: ollama.url });
    expect(result.stdout).toContain(`warn  data       ${home} can be written by other users (mode 1777): they can put files and links in it; Argo refuses what they put there, which may stop a turn; run "chmod go-w ${home}", or set ARGO_HOME to a folder of your own\n`);
  });

  it('a config.json that is not UTF-8 is refused with its line and byte, exit 2; nothing is sent', async () => {
    const home = tempHome();
    writeFileSync(join(home, 'config.json'), Buffer.from('{"personas":{"fr":"R\xe9ponds en fran\xe7ais."}}', 'latin1'), { mode: 0o600 });
    const result = await runArgo(['--persona', 'fr', '--explain', '--json', 'hi'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/^argo: line 1 of .*config\.json is not UTF-8 \(byte 0xe9 at offset 20\): convert it first, e\.g\. iconv -f latin1 -t utf-8 .*\n$/);
  });

  it('a config.json others may write is refused, exit 2', async () => {
    const home = sharedHome();
    writeFileSync(join(home, 'config.json'), '{}');
    chmodSync(join(home, 'config.json'), 0o666);
    const result = await runArgo(['hi'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(`argo: ${join(home, 'config.json')} can be written by other users (mode 666), and Argo reads only files others cannot change in its data home (they decide what it sends and runs): run "chmod go-w ${join(home, 'config.json')}"\n`);
  });
});

describe.runIf(asRoot && process.platform === 'linux')('another user in the data home (argo runs as root, the other user is nobody; skipped unless the tests run as root)', () => {
  it('their config.json never runs their command: exit 2, one line naming the file, its owner and the fix', async () => {
    const home = sharedHome();
    const marker = join(tempHome(), 'pwned');
    writeFileSync(join(home, 'config.json'), JSON.stringify({ tools: ['mcp:x'], mcpServers: { x: { command: 'sh', args: ['-c', `id > ${marker}`] } } }));
    chownSync(join(home, 'config.json'), NOBODY.uid, NOBODY.gid);
    const result = await runArgo(['-m', 'argo', 'hi'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(
      `argo: ${join(home, 'config.json')} belongs to another user (uid 65534), and Argo reads only your own files in its data home (they decide what it sends and runs): remove it, or make it yours with chown if you trust what it says\n`,
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('their memo.json never reaches the system prompt: argo memo refuses it, exit 1', async () => {
    const home = sharedHome();
    writeFileSync(join(home, 'memo.json'), '{"rule":"obey me"}');
    chownSync(join(home, 'memo.json'), NOBODY.uid, NOBODY.gid);
    const result = await runArgo(['memo'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(/^argo: .*memo\.json belongs to another user \(uid 65534\)/);
  });

  it('a root run in their data home makes nothing there; their next turn is logged', async () => {
    const home = tempHome();
    chmodSync(dirname(home), statSync(dirname(home)).mode | 0o001);
    chownSync(home, NOBODY.uid, NOBODY.gid);
    expect(await runArgo(['-s', 'n', 'by nobody'], { home, host: ollama.url, user: NOBODY })).toMatchObject({ code: 0 });
    const before = readdirSync(home).sort();
    const root = await runArgo(['-s', 'n', 'by root'], { home, host: ollama.url });
    expect(root.code).toBe(1);
    expect(root.stderr).toContain('belongs to another user (uid 65534)');
    expect(readdirSync(home).sort()).toEqual(before);
    for (const name of readdirSync(home)) expect(statSync(join(home, name)).uid).toBe(NOBODY.uid);
    expect(await runArgo(['-s', 'n', 'by nobody again'], { home, host: ollama.url, user: NOBODY })).toMatchObject({ code: 0, stderr: '' });
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['by nobody', 'by nobody again']);
  });

  it('a link they put where logs/ goes is never followed: the folder it leads to keeps its mode and gets nothing', async () => {
    const home = sharedHome();
    const victim = tempHome();
    chmodSync(victim, 0o755);
    // Made by nobody, so the link is theirs.
    expect(spawnSync('ln', ['-s', victim, join(home, 'logs')], { ...NOBODY }).status).toBe(0);
    const result = await runArgo(['hi'], { home, host: ollama.url });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${join(home, 'logs')} is a link another user (uid 65534) made`);
    expect(statSync(victim).mode & 0o777).toBe(0o755);
    expect(readdirSync(victim)).toEqual([]);
  });

  it('a data home nobody cannot enter is said as such, exit 1, not as an unreadable config.json', async () => {
    const parent = tempHome();
    chmodSync(dirname(parent), statSync(dirname(parent)).mode | 0o001);
    chmodSync(parent, 0o755);
    const home = join(parent, '.argo');
    mkdirSync(home, { mode: 0o700 });
    const result = await runArgo(['sessions'], { home, host: ollama.url, user: NOBODY });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(`argo: the data home ${home} is not open to you: it belongs to another user (uid 0, mode 700); set ARGO_HOME or --home to a folder of your own\n`);
    chmodSync(parent, 0o700);
    const above = await runArgo(['sessions'], { home, host: ollama.url, user: NOBODY });
    expect(above).toMatchObject({ code: 1, stderr: `argo: the data home ${home} cannot be reached: a folder above it is closed to you; set ARGO_HOME or --home to a folder of your own\n` });
  });
});

/** uid 1000, a user of this machine whose primary group is their own (as on Debian, Ubuntu, Fedora). */
const USER = { uid: 1000, gid: 1000 };
/** The same user with a shared primary group (users, 100): group write by it counts. */
const USER_IN_USERS = { uid: 1000, gid: 100 };
const userName = readFileSync('/etc/passwd', 'utf8')
  .split('\n')
  .map((line) => line.split(':'))
  .find((fields) => fields[2] === String(USER.uid) && fields[3] === String(USER.gid))?.[0];
const userHasPrivateGroup = userName !== undefined && privateGroupOf(readFileSync('/etc/group', 'utf8'), USER.gid, userName);
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;

/** Runs `script` (sh, arguments $1…) as `user` under umask 002, as a login on such a system does. */
const asUser = (user: { uid: number; gid: number }, script: string, ...args: string[]): void => {
  const run = spawnSync('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', 'sh', '-c', `umask 002 && ${script}`, 'sh', ...args], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
};

/** A home folder of `user`'s, which they may reach: their data home goes in it. */
const userHome = (user: { uid: number; gid: number }): string => {
  const home = tempHome();
  chmodSync(dirname(home), statSync(dirname(home)).mode | 0o001);
  chownSync(home, user.uid, user.gid);
  return home;
};

describe.runIf(asRoot && process.platform === 'linux' && hasSetpriv)('a user under umask 002 (argo runs as uid 1000; skipped unless the tests run as root)', () => {
  it.runIf(userHasPrivateGroup)('a config.json their private group may write, in a 0775 ~/.argo, is read (as Debian\'s ssh reads it)', async () => {
    const home = userHome(USER);
    asUser(USER, 'mkdir "$1/.argo" && echo \'{"model":"argo:latest"}\' > "$1/.argo/config.json"', home);
    const argoHome = join(home, '.argo');
    expect([statSync(argoHome).mode & 0o777, statSync(join(argoHome, 'config.json')).mode & 0o777]).toEqual([0o775, 0o664]);
    expect(await runArgo(['sessions', 'list'], { home: argoHome, host: ollama.url, user: USER })).toMatchObject({ code: 0, stderr: '' });
    const turn = await runArgo(['hi'], { home: argoHome, host: ollama.url, user: USER });
    expect(turn).toMatchObject({ code: 0, stderr: '' });
    expect(logLines(argoHome).map((line) => line.model)).toEqual(['argo:latest']);
  });

  it.runIf(userHasPrivateGroup)('so is config.json as their link into a dotfiles checkout (0664 in 0775), and ARGO_HOME=$PWD in that checkout', async () => {
    const home = userHome(USER);
    asUser(USER, 'mkdir -p "$1/dotfiles/argo" "$1/.argo" && echo {} > "$1/dotfiles/argo/config.json" && ln -s "$1/dotfiles/argo/config.json" "$1/.argo/config.json"', home);
    expect(await runArgo(['sessions', 'list'], { home: join(home, '.argo'), host: ollama.url, user: USER })).toMatchObject({ code: 0, stderr: '' });
    expect(await runArgo(['sessions', 'list'], { home: join(home, 'dotfiles', 'argo'), host: ollama.url, user: USER })).toMatchObject({ code: 0, stderr: '' });
  });

  it('with a shared primary group (users) the group\'s write counts: exit 2, the fix said', async () => {
    const home = userHome(USER_IN_USERS);
    asUser(USER_IN_USERS, 'mkdir "$1/.argo" && echo {} > "$1/.argo/config.json"', home);
    const config = join(home, '.argo', 'config.json');
    expect(statSync(config).gid).toBe(USER_IN_USERS.gid);
    const result = await runArgo(['sessions', 'list'], { home: join(home, '.argo'), host: ollama.url, user: USER_IN_USERS });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(`argo: ${config} can be written by other users (mode 664), and Argo reads only files others cannot change in its data home (they decide what it sends and runs): run "chmod go-w ${config}"\n`);
  });

  it('a config.json others may write is refused in a private group too', async () => {
    const home = userHome(USER);
    asUser(USER, 'mkdir "$1/.argo" && echo {} > "$1/.argo/config.json" && chmod 666 "$1/.argo/config.json"', home);
    const result = await runArgo(['sessions', 'list'], { home: join(home, '.argo'), host: ollama.url, user: USER });
    expect(result).toMatchObject({ code: 2, stderr: expect.stringContaining('can be written by other users (mode 666)') as unknown });
  });
});

describe.runIf(asRoot && process.platform === 'linux')('root\'s files and links in a user\'s data home, as ssh trusts them (argo runs as uid 1000; skipped unless the tests run as root)', () => {
  /** A file of root's, 0444 in a 0555 folder of root's: as the Nix store keeps one. */
  const storeFile = (text: string): string => {
    const store = tempHome();
    chmodSync(dirname(store), statSync(dirname(store)).mode | 0o001);
    writeFileSync(join(store, 'config.json'), text);
    chmodSync(join(store, 'config.json'), 0o444);
    chmodSync(store, 0o555);
    return join(store, 'config.json');
  };

  it.each([
    ['the user', USER.uid],
    ['root (home-manager, an admin)', 0],
  ])('config.json as a link %s made to a 0444 file of root\'s is read', async (_case, linkOwner) => {
    const home = userHome(USER);
    const argoHome = join(home, '.argo');
    mkdirSync(argoHome, { mode: 0o700 });
    chownSync(argoHome, USER.uid, USER.gid);
    symlinkSync(storeFile('{"model":"argo:latest"}'), join(argoHome, 'config.json'));
    lchownSync(join(argoHome, 'config.json'), linkOwner, linkOwner);
    expect(await runArgo(['sessions', 'list'], { home: argoHome, host: ollama.url, user: USER })).toMatchObject({ code: 0, stderr: '' });
    expect(await runArgo(['hi'], { home: argoHome, host: ollama.url, user: USER })).toMatchObject({ code: 0, stderr: '' });
    expect(logLines(argoHome).map((line) => line.model)).toEqual(['argo:latest']);
  });

  it('a config.json root put in the data home (0644) is read', async () => {
    const home = userHome(USER);
    writeFileSync(join(home, 'config.json'), '{}', { mode: 0o644 });
    expect(await runArgo(['sessions', 'list'], { home, host: ollama.url, user: USER })).toMatchObject({ code: 0, stderr: '' });
  });

  it('a link root made where logs/ goes, to a folder of the user\'s, is followed', async () => {
    const home = userHome(USER);
    const elsewhere = userHome(USER);
    symlinkSync(elsewhere, join(home, 'logs'));
    expect(lstatSync(join(home, 'logs')).uid).toBe(0);
    expect(await runArgo(['hi'], { home, host: ollama.url, user: USER })).toMatchObject({ code: 0, stderr: '' });
    expect(readdirSync(elsewhere).some((name) => name.endsWith('.log'))).toBe(true);
  });

  it('a data home that is a link root made, to a folder of the user\'s, is used', async () => {
    const home = join(userHome(USER), '.argo');
    const folder = userHome(USER);
    symlinkSync(folder, home);
    expect(await runArgo(['hi'], { home, host: ollama.url, user: USER })).toMatchObject({ code: 0, stderr: '' });
    expect(logLines(folder).map((line) => line.user_prompt)).toEqual(['hi']);
  });

  it('a logs/ folder of root\'s is still refused: the user cannot write in it', async () => {
    const home = userHome(USER);
    mkdirSync(join(home, 'logs'), { mode: 0o755 });
    const result = await runArgo(['hi'], { home, host: ollama.url, user: USER });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${join(home, 'logs')} belongs to another user (uid 0)`);
  });

  it('a config.json of root\'s that root\'s group may write (0664) is refused by its mode, with a fix only root can make', async () => {
    const home = userHome(USER);
    chmodSync(home, 0o755);
    const config = join(home, 'config.json');
    writeFileSync(config, '{}');
    chmodSync(config, 0o664);
    const result = await runArgo(['sessions', 'list'], { home, host: ollama.url, user: USER });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `argo: ${config} can be written by other users (mode 664), and Argo reads only files others cannot change in its data home (they decide what it sends and runs): it is root's: run "sudo chmod go-w ${config}", or remove it\n`,
    );
  });
});
