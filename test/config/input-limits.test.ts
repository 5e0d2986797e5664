// Bad input gets one clear line and exit 2 (item 13): values timers cannot take, a quoted `~` in
// ARGO_HOME, durations beyond what a date can hold, standard input past the documented limit or
// silent for long.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STDIN_LIMIT_BYTES, STDIN_SILENCE_MS, readAll } from '../../src/cli/io.js';
import { defaultHome, expandHome, loadSettings } from '../../src/config/settings.js';
import { UsageError } from '../../src/errors.js';
import { parseWhen } from '../../src/query/query.js';
import { thrown } from '../support/thrown.js';

function homeWith(config: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'argo-limits-'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}

describe('config numbers past what a timer accepts are usage errors naming the key', () => {
  it.each([
    [{ retries: { initialDelayMs: 3e9 } }, '"retries.initialDelayMs" must be at most 60000, got 3000000000'],
    [{ retries: { attempts: 1000 } }, '"retries.attempts" must be at most 10, got 1000'],
    [{ stream: { flushMs: 3e9 } }, '"stream.flushMs" must be at most 60000, got 3000000000'],
    [{ timeouts: { idleMs: 3e9 } }, '"timeouts.idleMs" must be at most 300000, got 3000000000'],
    [{ timeouts: { lockWaitMs: 3e9 } }, '"timeouts.lockWaitMs" must be at most 3600000, got 3000000000'],
    [{ timeouts: { lockWaitMs: -1 } }, '"timeouts.lockWaitMs" must be at least 0, got -1'],
  ])('%j', (config, message) => {
    const home = homeWith(config);
    const error = thrown(() => loadSettings({ home }, {}));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(`${join(home, 'config.json')}: ${message}`);
  });

  it('the host names where it came from', () => {
    const home = homeWith({ host: 'file:///x' });
    expect(thrown(() => loadSettings({ home }, {}))).toHaveProperty('message', expect.stringMatching(/config\.json: "host" "file:\/\/\/x" has the scheme "file"/) as unknown);
    expect(thrown(() => loadSettings({ home, host: 'ftp://h' }, {}))).toHaveProperty('message', expect.stringMatching(/^--host "ftp:\/\/h"/) as unknown);
    expect(thrown(() => loadSettings({ home }, { OLLAMA_HOST: 'u:p@h' }))).toHaveProperty('message', expect.stringMatching(/^OLLAMA_HOST "\*\*\*@h"/) as unknown);
  });
});

describe('a `~` that reached argo unexpanded is expanded as a shell would', () => {
  const env = { HOME: '/home/ada' };
  it.each([
    ['~', '/home/ada'],
    ['~/argo', '/home/ada/argo'],
    ['~/a/../b', '/home/ada/b'],
    ['/srv/argo', '/srv/argo'],
    ['dir~/x', join(process.cwd(), 'dir~/x')],
  ])('%j → %j', (value, expanded) => {
    expect(expandHome(value, 'ARGO_HOME', env)).toBe(expanded);
    expect(defaultHome({ ...env, ARGO_HOME: value })).toBe(expanded);
  });

  it('never a folder named "~" in the current directory', () => {
    expect(defaultHome({ ...env, ARGO_HOME: '~/data' })).not.toContain(join(process.cwd(), '~'));
  });

  it('~user is refused with the fix', () => {
    const error = thrown(() => expandHome('~bob/argo', 'ARGO_HOME', env));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe('ARGO_HOME "~bob/argo": only "~" and "~/…" are expanded (your own home); give the full path instead');
    // A line break in the value is refused as a control character, quoted as JSON: the message stays one line.
    expect((thrown(() => expandHome('~bob\n/argo', 'ARGO_HOME', env)) as Error).message).toBe('ARGO_HOME "~bob\\n/argo" holds a control or direction character: give the path without it');
  });

  // An empty path would quietly be the current directory; a blank at either end is a quoting slip.
  it.each([
    ['--home', { home: '' }, {}, '--home is empty: name the data folder (e.g. ~/argo-work), or leave --home out for ARGO_HOME or ~/.argo'],
    ['--home', { home: ' ' }, {}, '--home is blank: name the data folder (e.g. ~/argo-work), or leave --home out for ARGO_HOME or ~/.argo'],
    ['--home', { home: ' /srv/argo' }, {}, '--home " /srv/argo" starts or ends with a blank: remove it (check the quotes around the value)'],
    ['--home', { home: '/srv/argo\n' }, {}, '--home "/srv/argo\\n" starts or ends with a blank: remove it (check the quotes around the value)'],
    ['ARGO_HOME', {}, { ARGO_HOME: ' ~/argo' }, 'ARGO_HOME " ~/argo" starts or ends with a blank: remove it (check the quotes around the value)'],
    ['ARGO_HOME', {}, { ARGO_HOME: '/srv/argo ' }, 'ARGO_HOME "/srv/argo " starts or ends with a blank: remove it (check the quotes around the value)'],
    ['HOME', {}, { HOME: ' /home/ada' }, 'HOME " /home/ada" starts or ends with a blank: remove it (check the quotes around the value)'],
    // Messages name the data home: an escape sequence in it would reach the terminal raw.
    ['ARGO_HOME', {}, { ARGO_HOME: '/tmp/x\x1b[31mRED' }, 'ARGO_HOME "/tmp/x\\u001b[31mRED" holds a control or direction character: give the path without it'],
    ['--home', { home: '/tmp/\u202eevil' }, {}, '--home "/tmp/?evil" holds a control or direction character: give the path without it'],
    ['HOME', {}, { HOME: '/home/a\x07da' }, 'HOME "/home/a\\u0007da" holds a control or direction character: give the path without it'],
  ])('%s: flags %j, env %j → %s', (_where, flags, vars, message) => {
    const error = thrown(() => loadSettings(flags, vars));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(message);
  });

  // Empty or blank ARGO_HOME is unset; empty or blank HOME is the account's home from the system.
  it.each([
    [{ HOME: '/home/ada', ARGO_HOME: '' }, '/home/ada/.argo'],
    [{ HOME: '/home/ada', ARGO_HOME: ' ' }, '/home/ada/.argo'],
    [{ HOME: '/home/ada', ARGO_HOME: '\t' }, '/home/ada/.argo'],
    [{ HOME: '' }, join(userInfo().homedir, '.argo')],
    [{ HOME: '  ' }, join(userInfo().homedir, '.argo')],
    [{}, join(userInfo().homedir, '.argo')],
    [{ HOME: '', ARGO_HOME: '~/argo' }, join(userInfo().homedir, 'argo')],
  ])('%j → %s', (vars, expected) => {
    expect(defaultHome(vars)).toBe(expected);
  });

  it('--home gets the same treatment', () => {
    expect(loadSettings({ home: '~/x' }, { HOME: mkdtempSync(join(tmpdir(), 'argo-user-')) }).home).toMatch(/argo-user-.*\/x$/);
  });
});

describe('durations that reach past what a date can hold', () => {
  it.each(['99999999999d', '999999999999w', '9999999999999999999999h'])('--since %s is a usage error, not an empty answer', (value) => {
    const error = thrown(() => parseWhen(value, new Date(2025, 0, 15), 'start', '--since'));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(`--since: "${value}" reaches further back than a date can go; use a shorter duration (e.g. 52w) or a date (2025-01-31)`);
  });

  it('a long but representable duration still works', () => {
    expect(parseWhen('5200w', new Date(2025, 0, 15), 'start', '--since').getFullYear()).toBe(1925);
  });
});

describe('standard input past the documented limit', () => {
  it('reads up to the limit', async () => {
    expect(await readAll(Readable.from([Buffer.alloc(STDIN_LIMIT_BYTES, 'a')]))).toHaveLength(STDIN_LIMIT_BYTES);
  });

  it('stops reading past it, saying the limit', async () => {
    const endless = Readable.from((function* () {
      for (;;) yield Buffer.alloc(64 * 1024, 'a');
    })());
    const failing = readAll(endless);
    await expect(failing).rejects.toBeInstanceOf(UsageError);
    await expect(failing).rejects.toThrow(/^standard input is larger than 1 MiB, the most argo takes as a prompt; send a part of it/);
  });
});

describe('standard input that stays silent', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  type Step = { wait: number } | { write: string } | 'end';
  it.each<[string, Step[], number, string]>([
    ['nothing for the whole wait: said once, however long it goes on', [{ wait: STDIN_SILENCE_MS }, { wait: 60_000 }, { write: 'late' }, 'end'], 1, 'late'],
    ['nothing yet, a moment before the wait ends', [{ wait: STDIN_SILENCE_MS - 1 }, 'end'], 0, ''],
    ['a byte before the wait ends, then a slow rest', [{ wait: 1000 }, { write: 'a' }, { wait: 60_000 }, { write: 'b' }, 'end'], 0, 'ab'],
    ['ended at once, empty', ['end'], 0, ''],
  ])('%s', async (_case, steps, times, text) => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const input = new PassThrough();
    let said = 0;
    const reading = readAll(input, { whenSilent: { afterMs: STDIN_SILENCE_MS, say: () => (said += 1) } });
    for (const step of steps) {
      if (step === 'end') input.end();
      else if ('write' in step) input.write(step.write);
      else await vi.advanceTimersByTimeAsync(step.wait);
    }
    expect(await reading).toBe(text);
    await vi.advanceTimersByTimeAsync(STDIN_SILENCE_MS);
    expect(said).toBe(times);
  });
});
