// Settings end to end, as a user gives them: each value a source may not hold is one line, exit 2,
// before anything is sent or written.
import { mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile();

beforeEach(() => {
  ollama.requests.length = 0;
});

/** An empty folder to start argo in, to see it stays empty. */
function emptyFolder(): string {
  return mkdtempSync(join(tmpdir(), 'argo-cwd-'));
}

describe('a path given empty or with a blank at an end is refused, never the current directory', () => {
  const fix = 'name the data folder (e.g. ~/argo-work), or leave --home out for ARGO_HOME or ~/.argo';
  it.each<[string, string[], Record<string, string>, string]>([
    ['--home ""', ['--home', '', 'hi'], {}, `argo: --home is empty: ${fix}\n`],
    ['--home "" on a subcommand', ['logs', '--home', '', '--path'], {}, `argo: --home is empty: ${fix}\n`],
    ['--home " "', ['--home', ' ', 'hi'], {}, `argo: --home is blank: ${fix}\n`],
    ['ARGO_HOME with a leading blank', ['hi'], { ARGO_HOME: ' ~/argo' }, 'argo: ARGO_HOME " ~/argo" starts or ends with a blank: remove it (check the quotes around the value)\n'],
  ])('%s', async (_case, args, env, stderr) => {
    const cwd = emptyFolder();
    const result = await runArgo(args, { home: tempHome(), host: ollama.url, env, cwd });
    expect(result).toMatchObject({ code: 2, stdout: '', stderr });
    expect(readdirSync(cwd)).toEqual([]);
    expect(ollama.requests).toEqual([]);
  });

  it('a blank ARGO_HOME counts as unset: the home is ~/.argo', async () => {
    const home = tempHome();
    const result = await runArgo(['logs', '--path'], { home, env: { ARGO_HOME: '  ' } });
    expect(result).toMatchObject({ code: 0, stdout: `${join(home, '.argo', 'logs')}\n`, stderr: '' });
  });

  it('a data home under a file names the file', async () => {
    const home = tempHome();
    writeFileSync(join(home, 'file'), 'x');
    const result = await runArgo(['hi'], { home, host: ollama.url, env: { ARGO_HOME: join(home, 'file', 'sub') } });
    expect(result).toMatchObject({
      code: 2,
      stderr: `argo: the data home ${join(home, 'file', 'sub')} cannot be made: ${join(home, 'file')} is a file, not a folder; set ARGO_HOME or --home to a folder elsewhere\n`,
    });
  });
});

describe('config.json as a link to nothing', () => {
  it('is an error naming the link and where it points, not the defaults', async () => {
    const home = tempHome();
    symlinkSync(join(home, 'dotfiles', 'argo.json'), join(home, 'config.json'));
    const result = await runArgo(['hi'], { home, host: ollama.url });
    expect(result).toMatchObject({
      code: 2,
      stdout: '',
      stderr: `argo: ${join(home, 'config.json')} is a link to ${join(home, 'dotfiles', 'argo.json')}, which does not exist: put the file back there, or remove the link to use the defaults\n`,
    });
    expect(ollama.requests).toEqual([]);
  });
});

describe('OLLAMA_HOST as Ollama reads it', () => {
  it('quotes around it are trimmed, as Ollama trims them', async () => {
    const home = tempHome();
    const result = await runArgo(['hi'], { home, env: { OLLAMA_HOST: `"${ollama.url}"` } });
    expect(result).toMatchObject({ code: 0, stdout: 'You said: hi\n', stderr: '' });
    expect(logLines(home)).toHaveLength(1);
  });

  it('--explain shows the URL a path prefix is asked at, the one the request goes to', async () => {
    const home = tempHome();
    const explained = await runArgo(['--explain', 'hi'], { home, host: `${ollama.url}/x/` });
    expect(explained.stdout).toContain(`request    POST ${ollama.url}/x/api/chat (sha256 `);
    await runArgo(['hi'], { home, host: `${ollama.url}/x/` });
    expect(ollama.requests.map((request) => request.path)).toContain('/x/api/chat');
  });

  it('a scheme in capitals and no port: the port Ollama gives it, 11434, not 80', async () => {
    const home = tempHome();
    const explained = await runArgo(['--explain', 'hi'], { home, env: { OLLAMA_HOST: 'HTTP://127.0.0.1' } });
    expect(explained.stdout).toContain('request    POST http://127.0.0.1:11434/api/chat (sha256 ');
  });
});

describe('a config.json value shaped like a token is said by its type in the error', () => {
  const TOKEN = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  it.each<[string, unknown, string]>([
    ['defaultReplay', { defaultReplay: TOKEN }, '"defaultReplay" must be none, session or last:N, got a value shaped like a key or token (not shown)'],
    ['options.keep_alive', { options: { keep_alive: TOKEN } }, '"options.keep_alive" must be seconds or a duration like 10m, 1h or -1, got a value shaped like a key or token (not shown)'],
  ])('%s: exit 2, one line, the token never shown', async (_case, config, message) => {
    const home = tempHome(config);
    const result = await runArgo(['hi'], { home, host: ollama.url });
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: `argo: ${join(home, 'config.json')}: ${message}\n` });
    expect(ollama.requests).toEqual([]);
  });
});

describe('an Ollama address with a password in it is refused, the password never shown', () => {
  // A password holding a "/": what comes before it reads as a port, the rest as a path.
  const address = () => `http://admin:2024/Pa55word@${ollama.url.slice('http://'.length)}`;
  const shown = () => `"http://***@${ollama.url.slice('http://'.length)}" has user info (name or password before "@"), which argo does not send: use scheme://host:port, e.g. http://127.0.0.1:11434`;
  it.each<[string, string[], (home: string) => Record<string, string>, number, () => string]>([
    ['OLLAMA_HOST, a question', ['hi'], () => ({ OLLAMA_HOST: address() }), 2, () => `argo: OLLAMA_HOST ${shown()}\n`],
    ['OLLAMA_HOST, --explain', ['--explain', 'hi'], () => ({ OLLAMA_HOST: address() }), 2, () => `argo: OLLAMA_HOST ${shown()}\n`],
    ['OLLAMA_HOST, argo serve', ['serve', '--port', '0'], () => ({ OLLAMA_HOST: address() }), 2, () => `argo: OLLAMA_HOST ${shown()}\n`],
    ['OLLAMA_HOST, argo doctor', ['doctor'], () => ({ OLLAMA_HOST: address() }), 1, () => `argo: doctor: the config check failed: OLLAMA_HOST ${shown()}\n`],
    ['--host', ['--host', 'http://user:12345/Pa55word@127.0.0.1', 'hi'], () => ({}), 2, () => 'argo: --host "http://***@127.0.0.1" has user info (name or password before "@"), which argo does not send: use scheme://host:port, e.g. http://127.0.0.1:11434\n'],
  ])('%s: exit %#, nothing sent or written', async (_case, args, env, code, stderr) => {
    const home = tempHome();
    const result = await runArgo(args, { home, env: env(home) });
    expect(result).toMatchObject({ code, stderr: stderr() });
    expect(result.stdout).not.toContain('Pa55word');
    expect(ollama.requests).toEqual([]);
    expect(readdirSync(home)).toEqual([]);
  });

  it('"host" in config.json: refused the same way', async () => {
    const home = tempHome({ host: address() });
    const result = await runArgo(['hi'], { home });
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: `argo: ${join(home, 'config.json')}: "host" ${shown()}\n` });
    expect(ollama.requests).toEqual([]);
  });
});

describe('argo serve refuses a key no client can send', () => {
  const fix = 'use letters, digits and punctuation, e.g. a key from "openssl rand -hex 24"';
  it.each<[string, Record<string, string>, unknown, string]>([
    ['a blank ARGO_API_KEY', { ARGO_API_KEY: ' ' }, undefined, `argo: ARGO_API_KEY is blank, which no client can send: ${fix}, or leave it empty for no key\n`],
    ['a key ending in a line break', { ARGO_API_KEY: 'sk-1\n' }, undefined, `argo: ARGO_API_KEY contains a control character (a line break?), which an Authorization header cannot carry: ${fix}\n`],
    ['a config.json key with a blank at its end', {}, { serve: { apiKey: 'sk-1 ' } }, `"serve.apiKey" starts or ends with a blank, which a client's Authorization header loses: ${fix}\n`],
  ])('%s: exit 2 at start, the key never shown', async (_case, env, config, stderr) => {
    const home = tempHome(config);
    const result = await runArgo(['serve', '--host', '0.0.0.0', '--port', '0'], { home, host: ollama.url, env });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr.endsWith(stderr)).toBe(true);
    expect(result.stderr.split('\n')).toHaveLength(2);
    expect(result.stderr).not.toContain('sk-1');
  });
});
