// Issue 9 end to end: hostile names, races, faults and signals, against the Ollama stand-in.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../../src/sessions/store.js';
import { makeEntry } from '../query/helpers.js';
import { startFakeOllama } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { ARGO_BIN, logLines, runArgo, scrubbedEnv, tempHome } from '../support/run-argo.js';
import type { RunOptions } from '../support/run-argo.js';
import { waitFor } from '../support/wait.js';

const ollama = await fakeOllamaPerFile();

const argo = (home: string, args: string[], extra: Partial<RunOptions> = {}) => runArgo(args, { home, host: ollama.url, env: { TZ: 'UTC' }, ...extra });
const record = (home: string, name: string): SessionRecord => JSON.parse(readFileSync(join(home, 'sessions', `${name}.json`), 'utf8')) as SessionRecord;

async function turns(home: string, session: string, count: number): Promise<void> {
  for (let n = 1; n <= count; n++) expect((await argo(home, ['--session', session, `question ${n} of ${session}`])).code).toBe(0);
}

describe('session names and forks (item 4)', () => {
  it.each([
    [['--session', '.hidden', 'hi']],
    [['sessions', 'fork', 'work', '.hidden']],
    [['sessions', 'rename', 'work', '.hidden']],
    [['logs', '--session', '.hidden']],
  ])('%j: a name starting with a dot is refused before any file is touched', async (args) => {
    const home = tempHome();
    await turns(home, 'work', 1);
    const before = logLines(home).length;
    const result = await argo(home, args);
    expect(result.code).toBe(2);
    // No session ".hidden" is on disk: the rule, not a rename of a session that does not exist.
    expect(result.stderr).toMatch(/invalid session name "\.hidden": use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot\n$/);
    expect(existsSync(join(home, 'sessions', '.hidden.json'))).toBe(false);
    expect(logLines(home)).toHaveLength(before);
  });

  it('a fork under a hidden file name (made before names were checked) still protects its parent’s lines', async () => {
    const home = tempHome();
    await turns(home, 'work', 2);
    expect((await argo(home, ['sessions', 'fork', 'work', 'branch'])).code).toBe(0);
    renameSync(join(home, 'sessions', 'branch.json'), join(home, 'sessions', '.branch.json'));
    renameSync(join(home, 'sessions', 'branch.idx'), join(home, 'sessions', '.branch.idx'));
    const refused = await argo(home, ['sessions', 'rm', 'work', '--purge', '--yes']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^argo: session "work" has forks that replay its turns \(branch\)/);
    expect(logLines(home)).toHaveLength(2);
  });

  it('a fork of a fork protects the grandparent’s lines after the middle fork is removed', async () => {
    const home = tempHome();
    await turns(home, 'work', 2);
    expect((await argo(home, ['sessions', 'fork', 'work', 'child'])).code).toBe(0);
    await turns(home, 'child', 1);
    expect((await argo(home, ['sessions', 'fork', 'child', 'grandchild'])).code).toBe(0);
    expect((await argo(home, ['sessions', 'rm', 'child', '--yes'])).code).toBe(0);
    const workId = record(home, 'work').id;

    for (const args of [['sessions', 'rm', 'work', '--purge', '--yes'], ['logs', 'rm', '--session', 'work', '--yes']]) {
      const refused = await argo(home, args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('has forks that replay its turns (grandchild)');
    }
    expect(logLines(home).filter((line) => line.session_id === workId)).toHaveLength(2);
    const replay = await argo(home, ['--session', 'grandchild', '--replay', 'session', '--explain', '--json', 'go on']);
    expect((JSON.parse(replay.stdout) as { turns: unknown[] }).turns).toHaveLength(3); // 2 inherited from work, 1 from child
  });
});

describe('signals and a closed output mid-answer (items 11, 12)', () => {
  it.each([
    ['SIGTERM', 143, 'argo: terminated (SIGTERM) (logged as interrupted)\n', 'interrupted by SIGTERM'],
    ['SIGHUP', 129, 'argo: hung up (SIGHUP) (logged as interrupted)\n', 'interrupted by SIGHUP (the terminal closed)'],
  ] as const)('%s keeps the partial answer, logs it interrupted, aborts the request, exits %i', async (signal, code, stderr, error) => {
    const home = tempHome();
    ollama.options.tokens = ['partial', ' answer', ' never'];
    ollama.setScenario({ hang: 2 });
    let sent = false;
    try {
      const result = await argo(home, ['tell me a long story'], {
        onStdout: (child, text) => {
          if (!sent && text.includes('answer')) {
            sent = true;
            child.kill(signal);
          }
        },
      });
      expect(result).toMatchObject({ code, stdout: 'partial answer\n', stderr });
      expect(logLines(home)).toMatchObject([{ status: 'interrupted', model_response: 'partial answer', error }]);
      await ollama.requests.at(-1)?.settled;
      expect(ollama.requests.at(-1)?.clientAborted).toBe(true);
    } finally {
      ollama.setScenario(undefined);
      ollama.options.tokens = undefined;
    }
  });

  it.each([
    ['argo "…" | head -1', ['tell me a long story'], undefined],
    // The reader gone ends a chat too: the lines after that turn are not sent.
    ['argo chat | head -1', ['chat', '--replay', 'none'], 'tell me a long story\nand another\n'],
  ])('%s: the reader that goes away aborts the request, the turn is logged interrupted, exit 141', async (_case, args, stdin) => {
    const home = tempHome();
    ollama.options.tokens = ['first line\n', 'second', ' line\n', 'more', ' text'];
    ollama.setScenario({ hang: 3 });
    const chats = (): number => ollama.requests.filter((request) => request.path === '/api/chat').length;
    const before = chats();
    let closed = false;
    try {
      const result = await argo(home, args, {
        ...(stdin !== undefined ? { stdin } : {}),
        onStdout: (child, text) => {
          // What head -1 does: read the first line, then close the pipe.
          if (!closed && text.includes('\n')) {
            closed = true;
            child.stdout?.destroy();
          }
        },
      });
      expect(result.code).toBe(141);
      expect(result.stderr).toBe('argo: standard output was closed; the answer was cut short (logged as interrupted)\n');
      expect(logLines(home)).toMatchObject([{ status: 'interrupted', user_prompt: 'tell me a long story', error: 'interrupted: standard output was closed' }]);
      expect(chats() - before).toBe(1);
      await ollama.requests.at(-1)?.settled;
      expect(ollama.requests.at(-1)?.clientAborted).toBe(true);
    } finally {
      ollama.setScenario(undefined);
      ollama.options.tokens = undefined;
    }
  });
});

/** Runs argo under a pseudo-terminal (util-linux `script`), so stdin, stdout and stderr are TTYs. */
function runInTerminal(args: string[], home: string, env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, ARGO_BIN, ...args].map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      // Colour as on any terminal (NO_COLOR empty is unset), unless the case sets it.
      env: scrubbedEnv({ home, host: ollama.url, env: { NO_COLOR: '', TERM: 'xterm', TZ: 'UTC', ...env } }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('terminal escapes in text Argo did not write (item 3) and colour (item 18)', () => {
  const hostile = 'copied \u001b]52;c;cm0gLXJmIH4=\u0007 titled \u001b]0;pwned\u0007 cleared \u001b[2J C1 \u009b31m end';
  const shown = 'copied ^[]52;c;cm0gLXJmIH4=^G titled ^[]0;pwned^G cleared ^[[2J C1 \\x9b31m end';
  const fromTheAnswer = ['\u001b]52', '\u001b]0;pwned', '\u001b[2J', '\u009b'];
  const obeyable = (output: string): string[] => fromTheAnswer.filter((control) => output.includes(control));

  it('the streamed answer, logs --full, logs, sessions show and last neutralize controls on a terminal; --raw keeps them', async () => {
    const home = tempHome();
    ollama.options.reply = hostile;
    try {
      const asked = await runInTerminal(['--session', 'work', `question \u001b]0;x\u0007`], home);
      expect(asked.code).toBe(0);
      expect(asked.output).toContain(shown);
      expect(obeyable(asked.output)).toEqual([]);
      for (const args of [['logs', '--full'], ['sessions', 'show', 'work'], ['last'], ['last', '--full']]) {
        const printed = await runInTerminal(args, home);
        expect(printed.code).toBe(0);
        expect(printed.output).toContain(shown);
        expect(obeyable(printed.output)).toEqual([]);
        expect(printed.output).not.toContain('\u001b]0;x');
        const raw = await runInTerminal([...args, '--raw'], home);
        expect(raw.output).toContain(hostile.replaceAll('\n', '\r\n'));
      }
      const table = await runInTerminal(['logs'], home);
      expect(table.output).toContain('question ^[]0;x^G');
      const rawAnswer = await runInTerminal(['--raw', '--no-log', 'again'], home);
      expect(rawAnswer.output).toContain(hostile);
    } finally {
      ollama.options.reply = undefined;
    }
  });

  it("a hand-edited line's status, timestamp, session id and turn id reach a terminal escaped (last, rerun, sessions fork)", async () => {
    const home = tempHome();
    await argo(home, ['-s', 'evil', 'one']);
    await argo(home, ['-s', 'evil', 'two']);
    const [first, second] = logLines(home);
    const logFile = join(home, 'logs', `${String(first?.timestamp).slice(0, 10)}.log`);
    const edited = readFileSync(logFile, 'utf8')
      .replace(`"id":"${String(second?.id)}"`, `"id":"${String(second?.id)}\\u001b[5m"`)
      .replace(/"status":"ok"/, '"status":"\\u001b]0;HACKED\\u0007"');
    writeFileSync(logFile, edited);
    const last = await runInTerminal(['last', '2', '-s', 'evil'], home);
    expect(last.output).toContain('ended "^[]0;HACKED^G"');
    const forked = await runInTerminal(['sessions', 'fork', 'evil', 'evilfork'], home);
    expect(forked.output).toContain(`at turn ${String(second?.id)}^[[5m into "evilfork"`);
    // The first turn's line again, its timestamp and session id edited, its session removed.
    writeFileSync(logFile, `${readFileSync(logFile, 'utf8')}${JSON.stringify({ ...first, id: 'edited00000a', status: 'ok', timestamp: `${String(first?.timestamp)}\u001b]0;TS\u0007`, session_id: `${String(first?.session_id)}\u001b[5m` })}\n`);
    const explained = await runInTerminal(['rerun', 'edited00000a', '--explain'], home);
    expect(explained.output).toContain('^[]0;TS^G');
    const rerun = await runInTerminal(['rerun', 'edited00000a'], home);
    expect(rerun.output).toContain('was removed; the rerun is logged under its old id (argo logs --session');
    for (const output of [last.output, forked.output, explained.output, rerun.output]) {
      expect(output).not.toContain('\u001b]0;');
      expect(output).not.toContain('\u001b[5m');
    }
  });

  it('piped output stays byte-exact', async () => {
    const home = tempHome();
    ollama.options.reply = hostile;
    try {
      expect((await argo(home, ['--session', 'work', 'hi'])).stdout).toBe(`${hostile}\n`);
      expect((await argo(home, ['logs', '--full'])).stdout).toContain(hostile);
      expect(JSON.parse((await argo(home, ['logs', '--json'])).stdout)).toMatchObject({ model_response: hostile });
    } finally {
      ollama.options.reply = undefined;
    }
  });

  it('an error line quoting the server is neutralized on a terminal', async () => {
    const home = tempHome();
    ollama.setScenario({ errorMidStream: { afterChunks: 1, message: 'bad\u001b]52;c;eA==\u0007model' } });
    try {
      const result = await runInTerminal(['hi'], home);
      expect(result.code).toBe(1);
      expect(result.output).toContain('bad^[]52;c;eA==^Gmodel');
      expect(result.output).not.toContain('\u001b]52');
    } finally {
      ollama.setScenario(undefined);
    }
  });

  const NGINX_502 = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';
  it.each<[string, object, string]>([
    ['a proxy\'s HTML 502 page', { proxyPage: { status: 502, body: NGINX_502 } }, `answered HTTP 502: <html> <head><title>502 Bad Gateway</title></head> <body> <center><h1>502 Bad Gateway</h1></center> <hr><center>nginx</center> </body> </html> (logged as error)\n`],
    ['an error of several lines before the answer', { runnerError: 'boom\r\nargo: fake line' }, 'answered HTTP 500: boom argo: fake line (logged as error)\n'],
    ['an error of several lines mid-answer', { errorMidStream: { afterChunks: 1, message: 'boom\nline2\r\nargo: fake line' } }, 'mid-answer: boom line2 argo: fake line (logged as error)\n'],
  ])('%s: one line on stderr, and one line in the log\'s error (a server could start a line of its own)', async (_case, scenario, ending) => {
    const home = tempHome();
    ollama.setScenario(scenario);
    try {
      const result = await argo(home, ['-s', 'w', 'hi']);
      expect(result.code).toBe(1);
      expect(result.stderr.split('\n')).toHaveLength(2);
      expect(result.stderr).toMatch(/^argo: /);
      expect(result.stderr.endsWith(ending)).toBe(true);
      const [entry] = logLines(home);
      expect(entry).toMatchObject({ status: 'error', error: result.stderr.slice('argo: '.length, -' (logged as error)\n'.length) });
      expect(entry?.error).not.toMatch(/[\r\n]/);
    } finally {
      ollama.setScenario(undefined);
    }
  });

  const CYAN = '\u001b[36m';
  it.each([
    ['a terminal, by default', [], {}, true],
    ['a terminal with NO_COLOR=1', [], { NO_COLOR: '1' }, false],
    ['a terminal with --no-color', ['--no-color'], {}, false],
    ['a terminal with --color never', ['--color', 'never'], {}, false],
    ['a terminal with FORCE_COLOR=0', [], { FORCE_COLOR: '0' }, false],
    ['a terminal with NO_COLOR and --color always', ['--color', 'always'], { NO_COLOR: '1' }, true],
  ] as const)('argo logs on %s: colour %s', async (_label, flags, env, coloured) => {
    const home = tempHome();
    await turns(home, 'work', 1);
    const result = await runInTerminal(['logs', ...flags], home, env);
    expect(result.code).toBe(0);
    expect(result.output.includes(CYAN)).toBe(coloured);
  });

  // The rerun diff's header is dim (ESC[2m) and its changes coloured on a terminal; --no-color is plain.
  it.each([
    [[], true],
    [['--no-color'], false],
  ] as const)('argo rerun --diff %j on a terminal: colour %s', async (flags, coloured) => {
    const home = tempHome();
    await turns(home, 'work', 1);
    const id = String(logLines(home)[0]?.id);
    const result = await runInTerminal(['rerun', id, '--diff', '-o', 'seed=2', ...flags], home);
    expect(result.code).toBe(0);
    expect(result.output).toContain('word diff:');
    expect(result.output.includes('\u001b[2m')).toBe(coloured);
  });

  it.each([
    [[], {}, false],
    [['--color', 'always'], {}, true],
    [[], { FORCE_COLOR: '1' }, true],
  ] as const)('argo logs %j %j through a pipe: colour %s', async (flags, env, coloured) => {
    const home = tempHome();
    await turns(home, 'work', 1);
    const result = await runArgo(['logs', ...flags], { home, host: ollama.url, env: { TZ: 'UTC', NO_COLOR: '', ...env } });
    expect(result.code).toBe(0);
    expect(result.stdout.includes(CYAN)).toBe(coloured);
  });
});

describe('bad input: one line, exit 2, nothing written (item 13)', () => {
  it('standard input past 1 MiB', async () => {
    const home = tempHome();
    const result = await argo(home, ['summarise'], { stdin: 'a'.repeat(1024 * 1024 + 1) });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^argo: standard input is larger than 1 MiB, the most argo takes as a prompt; send a part of it .*\n$/);
    expect(logLines(home)).toEqual([]);
  });

  it.each([
    ['a data home that is a file', (home: string) => ({ ARGO_HOME: join(home, 'file') }), ['memo'], 2, /^argo: the data home .*\/file is a file, not a folder: set ARGO_HOME or --home to a folder\n$/],
    ['an export to a folder that does not exist', () => ({}), ['export', '--format', 'sharegpt', '-o', '/nonexistent-argo/x.jsonl'], 1, /^argo: cannot use \/nonexistent-argo\/x\.jsonl: no such file or folder; check the path and its permissions\n$/],
    ['a path with a line break, quoted so the error stays one line', () => ({}), ['export', '--format', 'sharegpt', '-o', '/nonexistent-argo/a\nb.jsonl'], 1, /^argo: cannot use "\/nonexistent-argo\/a\\nb\.jsonl": no such file or folder; [^\n]*\n$/],
    ['a --system-file with a line break', () => ({}), ['--system-file', '/nonexistent-argo/a\nb', 'hi'], 2, /^argo: --system-file: cannot read "\/nonexistent-argo\/a\\nb": no such file or folder\n$/],
    ['an empty --system-file', () => ({}), ['--system-file', '', 'hi'], 2, /^argo: --system-file is empty: name the file that holds the system prompt, or use --system TEXT\n$/],
    ['a --system-file that is a folder', (home: string) => ({ HOME: home }), ['--system-file', '/', 'hi'], 2, /^argo: --system-file: cannot read \/: it is a folder\n$/],
    ['a rerun id with a line break', () => ({}), ['rerun', 'a\nb'], 2, /^argo: no turn with id "a\\nb" in [^\n]*\n$/],
    ['a config.json that is a folder', (home: string) => {
      mkdirSync(join(home, 'config.json'));
      return {};
    }, ['hi'], 2, /^argo: \/.*\/config\.json is a folder; config\.json must be a file or a link to one \(move it out of the way\)\n$/],
    // Opened without waiting: a pipe nobody writes to once hung every command for good.
    ['a config.json that is a named pipe', (home: string) => {
      execFileSync('mkfifo', [join(home, 'config.json')]);
      return {};
    }, ['hi'], 2, /^argo: \/.*\/config\.json is a named pipe; config\.json must be a file or a link to one \(move it out of the way\)\n$/],
    ['OLLAMA_HOST with a port out of range', () => ({ OLLAMA_HOST: 'http://127.0.0.1:99999' }), ['hi'], 2, /^argo: OLLAMA_HOST "http:\/\/127\.0\.0\.1:99999" has the port "99999", not a number from 0 to 65535/],
    ['OLLAMA_HOST that is no address at all', () => ({ OLLAMA_HOST: 'http://[::1' }), ['hi'], 2, /^argo: OLLAMA_HOST "http:\/\/\[::1" is not a valid address/],
  ])('%s: one line, the right exit code, never "unexpected failure"', async (_name, env, args, code, message) => {
    const home = tempHome();
    writeFileSync(join(home, 'file'), '');
    const result = await argo(home, args, { env: { TZ: 'UTC', ...env(home) } });
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
  });

  // What a user wrote is sent as written or not at all: never with U+FFFD in place of their bytes.
  it('standard input that is not UTF-8 (latin1 café): the byte, its offset and the fix; nothing sent or logged', async () => {
    const home = tempHome();
    const before = ollama.requests.length;
    const result = await argo(home, ['x'], { stdin: Buffer.from('caf\xe9', 'latin1'), env: { TZ: 'UTC', LC_ALL: 'C' } });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(
      'argo: standard input is not UTF-8 (byte 0xe9 at offset 3): convert it first, e.g. iconv -f latin1 -t utf-8 file.txt | argo "…" (-f names the encoding it is in: latin1, cp1252, shift_jis …)\n',
    );
    expect(ollama.requests).toHaveLength(before);
    expect(logLines(home)).toEqual([]);
  });

  it('a program piped in from a shell (head -c 200 node | argo x): said to look like binary data, no conversion offered; nothing sent', async () => {
    const home = tempHome();
    const before = ollama.requests.length;
    const script = `head -c 200 "${process.execPath}" | "${process.execPath}" "${ARGO_BIN}" x`;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn('bash', ['-c', script], { env: scrubbedEnv({ home, host: ollama.url }) });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
      child.on('error', reject).on('close', (code) => resolve({ code, stderr }));
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^argo: standard input looks like binary data, not text \(a NUL byte at offset \d+\): argo sends a model text only; give it text about the data instead \(what file, strings or xxd print, say\)\n$/);
    expect(ollama.requests).toHaveLength(before);
    expect(logLines(home)).toEqual([]);
  });

  it.each<[string, Buffer, string]>([
    ['binary', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00, 0xff]), 'looks like binary data, not text (a NUL byte at offset 7)'],
    ['UTF-16', Buffer.from('\ufeffBe brief.', 'utf16le'), 'is UTF-16 text, not UTF-8 (it starts with a UTF-16 byte order mark): convert it first, e.g. iconv -f utf-16 -t utf-8 FILE > system.txt'],
  ])('a --system-file that is %s is said to be so', async (_case, content, words) => {
    const home = tempHome();
    const file = join(home, 'system.txt');
    writeFileSync(file, content);
    const result = await argo(home, ['--system-file', file, 'hi']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain(`argo: --system-file ${file} ${words.replace('FILE', file)}`);
    expect(logLines(home)).toEqual([]);
  });

  it('--system-file that is not UTF-8: refused the same way', async () => {
    const home = tempHome();
    writeFileSync(join(home, 'system.txt'), Buffer.from('Réponds en français', 'latin1'));
    const result = await argo(home, ['--system-file', join(home, 'system.txt'), 'hi']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `argo: --system-file ${join(home, 'system.txt')} is not UTF-8 (byte 0xe9 at offset 1): convert it first, e.g. iconv -f latin1 -t utf-8 ${join(home, 'system.txt')} > system.txt (-f names the encoding it is in: latin1, cp1252, shift_jis …)\n`,
    );
    expect(logLines(home)).toEqual([]);
  });

  it('a piped chat script with a line that is not UTF-8: the lines before it are sent, it and those after are not; exit 2', async () => {
    const home = tempHome();
    const script = Buffer.concat([Buffer.from('first\n'), Buffer.from('caf\xe9 au lait\n', 'latin1'), Buffer.from('third\n')]);
    const result = await argo(home, ['chat', '-s', 'script'], { stdin: script });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('You said: first\n');
    expect(result.stderr).toBe(
      'argo: line 2 of standard input is not UTF-8 (byte 0xe9 at offset 9): convert it first, e.g. iconv -f latin1 -t utf-8 script.txt | argo chat (-f names the encoding it is in: latin1, cp1252, shift_jis …); the lines before it were sent, it and those after were not\n',
    );
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['first']);
  });

  it('a line that is not UTF-8 inside a """ block is named as such, not as the input ending inside the block', async () => {
    const home = tempHome();
    const script = Buffer.concat([Buffer.from('first\n"""\nabc\n'), Buffer.from('caf\xe9\n', 'latin1'), Buffer.from('"""\nlast\n')]);
    const result = await argo(home, ['chat', '-s', 'script'], { stdin: script });
    expect(result).toMatchObject({ code: 2, stdout: 'You said: first\n' });
    expect(result.stderr).toMatch(/^argo: line 4 of standard input is not UTF-8 \(byte 0xe9 at offset 17\): .*; the lines before it were sent, it and those after were not\n$/);
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['first']);
  });

  it('a piped chat script saved with a byte order mark: its first line is read without it, so a slash command there is the command', async () => {
    const home = tempHome();
    const result = await argo(home, ['chat', '-s', 'script'], { stdin: Buffer.from('\ufeff/replay none\nfirst\n/bye\nnot sent\n') });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('You said: first\n');
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['first']);
  });

  it('a quoted ~ in ARGO_HOME is the home folder, never ./~', async () => {
    const home = tempHome();
    const result = await argo(home, ['--session', 'work', 'hi'], { env: { TZ: 'UTC', ARGO_HOME: '~/data' } });
    expect(result.code).toBe(0);
    expect(logLines(join(home, 'data'))).toHaveLength(1);
    expect(existsSync(join(process.cwd(), '~'))).toBe(false);
  });

  it.each([
    [['logs', '--since', '99999999999d'], /^argo: --since: "99999999999d" reaches further back than a date can go/],
    [['--color', 'sometimes', 'hi'], /^argo: --color must be auto, always or never, got "sometimes"/],
  ])('%j', async (args, message) => {
    const home = tempHome();
    const result = await argo(home, args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.split('\n')).toHaveLength(2);
  });
});

describe('a day of the log that is a named pipe', () => {
  // Written there, a turn went into the pipe's buffer and was lost (exit 0), and a line longer than
  // the buffer (64 KiB) held argo and the log lock for good, past SIGTERM.
  it.each([
    ['a short answer', ['short']],
    ['an answer longer than the pipe holds', ['long', ' '.repeat(70 * 1024), 'answer']],
  ])('%s: refused at once, the turn rescued, the session counting none; the next turn waits for no lock', async (_case, tokens) => {
    const home = tempHome();
    const logs = join(home, 'logs');
    mkdirSync(logs, { mode: 0o700 });
    // Tomorrow's too, for a test that runs across midnight (UTC).
    const days = [0, 1].map((ahead) => new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10));
    for (const day of days) execFileSync('mkfifo', ['-m', '600', join(logs, `${day}.log`)]);
    ollama.options.tokens = tokens;
    try {
      for (const prompt of ['the first turn', 'the second turn']) {
        const result = await argo(home, ['-s', 'x', prompt]);
        expect(result).toMatchObject({ code: 1, stdout: `${tokens.join('')}\n` });
        const [saved] = readdirSync(join(home, 'rescued')).filter((name) => readFileSync(join(home, 'rescued', name), 'utf8').includes(prompt));
        const day = join(logs, `${days.find((one) => result.stderr.includes(`${one}.log`)) ?? ''}.log`);
        expect(result.stderr).toBe(
          `argo: cannot write the log: ${day} is a named pipe where the day's log goes; the turn was saved to ${join(home, 'rescued', saved ?? '')} — move it away, then add the saved turn back (docs/troubleshooting.md)\n`,
        );
        expect(JSON.parse(readFileSync(join(home, 'rescued', saved ?? ''), 'utf8'))).toMatchObject({ user_prompt: prompt, model_response: tokens.join(''), status: 'ok' });
      }
      expect(existsSync(join(home, 'sessions', 'x.idx'))).toBe(false);
      expect(record(home, 'x')).toMatchObject({ turns: 0 });
      expect(existsSync(join(home, 'locks', 'log.lock'))).toBe(false);
      expect(readdirSync(join(home, 'unfinished'))).toEqual([]);
    } finally {
      ollama.options.tokens = undefined;
    }
  });
});

describe('a rescued/ folder that is a planted link', () => {
  it('the folder it points to is neither chmod-ed nor written to: the turn is saved to a private temporary folder', async () => {
    const home = tempHome();
    const logs = join(home, 'logs');
    mkdirSync(logs, { mode: 0o700 });
    // The log cannot take the turn (a folder where each day's file goes, tomorrow's too), so it is rescued.
    for (const ahead of [0, 1]) mkdirSync(join(logs, `${new Date(Date.now() + ahead * 86_400_000).toISOString().slice(0, 10)}.log`));
    const elsewhere = mkdtempSync(join(tmpdir(), 'argo-elsewhere-'));
    chmodSync(elsewhere, 0o755);
    symlinkSync(elsewhere, join(home, 'rescued'));
    const result = await argo(home, ['keep me']);
    expect(result).toMatchObject({ code: 1, stdout: 'You said: keep me\n' });
    expect(statSync(elsewhere).mode & 0o777).toBe(0o755);
    expect(readdirSync(elsewhere)).toEqual([]);
    const saved = /the turn was saved to (\S+\.ndjson)/.exec(result.stderr)?.[1] ?? '';
    expect(saved.startsWith(join(tmpdir(), 'argo-rescued-'))).toBe(true);
    expect(JSON.parse(readFileSync(saved, 'utf8'))).toMatchObject({ user_prompt: 'keep me', status: 'ok' });
  });
});

describe('the first turn of a session whose record cannot be made', () => {
  // A folder Argo may not write in: another user's for root (who may write anywhere), read-only otherwise.
  const unwritable = (dir: string): void => (process.getuid?.() === 0 ? chownSync(dir, 65534, 65534) : chmodSync(dir, 0o500));
  const writable = (dir: string): void => (process.getuid?.() === 0 ? chownSync(dir, 0, 0) : chmodSync(dir, 0o700));

  /** The recipe docs/troubleshooting.md gives for it, as written there, for this data home and saved file. */
  const recipe = (home: string, saved: string): string => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/troubleshooting.md'), 'utf8');
    const after = doc.slice(doc.indexOf('**`cannot create session "g"'));
    const block = /```sh\n([\s\S]*?)```/.exec(after)?.[1] ?? '';
    expect(block).toMatch(/^f=~\/\.argo\/rescued\/unlogged-….ndjson /);
    return block.replace(/^f=.*$/m, `f='${saved}'`).replaceAll('~/.argo', `'${home}'`);
  };

  it('is saved with its session and id; the recipe in troubleshooting.md gives the session back, the turn in it', async () => {
    const home = tempHome();
    mkdirSync(join(home, 'sessions'), { mode: 0o700 });
    unwritable(join(home, 'sessions'));
    const asked = await argo(home, ['-s', 'g', 'full from start']);
    writable(join(home, 'sessions'));
    const saved = /the turn was saved to (\S+\.ndjson) — /.exec(asked.stderr)?.[1] ?? '';
    expect(asked).toMatchObject({ code: 1, stdout: 'You said: full from start\n' });
    expect(asked.stderr).toMatch(/^argo: cannot create session "g" in .*\/sessions \(.*\); the turn was saved to .*\/rescued\/unlogged-.*\.ndjson — .*, then make the session's record and add the saved turn back \(docs\/troubleshooting\.md\)\n$/);
    // The file named is the record (or the folder), never the temporary copy written first.
    expect(asked.stderr).not.toMatch(/\.tmp/);
    const line = JSON.parse(readFileSync(saved, 'utf8')) as { id: string; session: string; session_id: string };
    expect(line).toMatchObject({ session: 'g', session_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown });

    const bin = mkdtempSync(join(tmpdir(), 'argo-bin-'));
    symlinkSync(ARGO_BIN, join(bin, 'argo'));
    const env = { ...scrubbedEnv({ home, host: ollama.url, env: { TZ: 'UTC' } }), PATH: `${bin}:${process.env.PATH ?? ''}` };
    const run = spawnSync('bash', ['-c', recipe(home, saved)], { env, encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.stdout).toMatch(/^reindexed 1 session: 1 turn\ng [0-9a-f-]{36} · 1 turn\n/);
    expect(existsSync(saved)).toBe(false);
    expect(record(home, 'g')).toMatchObject({ id: line.session_id, title: 'full from start', turns: 1, last_turn_id: line.id });
    expect(statSync(join(home, 'sessions', 'g.json')).mode & 0o777).toBe(0o600);
    const listed = await argo(home, ['logs']);
    expect(listed.stdout).toMatch(/ g {2,}.* full from start\n$/);
    expect(listed.stdout).not.toContain('(removed)');
    const next = await argo(home, ['-s', 'g', '-r', 'session', '--explain', '--json', 'and then?']);
    expect((JSON.parse(next.stdout) as { turns: { id: string }[] }).turns.map((turn) => turn.id)).toEqual([line.id]);
  });
});

describe('a signal during logs rm (item 10)', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s removes the temporary copy, leaves the original intact and says so in one line', async (signal) => {
    const home = tempHome();
    const logs = join(home, 'logs');
    mkdirSync(logs, { recursive: true, mode: 0o700 });
    const [doomed, kept] = ['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222'];
    const line = (id: string, session: string): string =>
      JSON.stringify(makeEntry({ id, session_id: session, user_prompt: 'why?', model_response: 'x'.repeat(2000) }));
    // About 80 MB, so the rewrite is still running when the signal arrives.
    const block = Array.from({ length: 1000 }, (_, i) => line(`t${i}`, i % 2 === 0 ? doomed : kept)).join('\n') + '\n';
    const file = join(logs, '2025-01-02.log');
    writeFileSync(file, block.repeat(40), { mode: 0o600 });
    const before = statSync(file).size;

    const temporary = (): string[] => readdirSync(logs).filter((name) => name.endsWith('.tmp'));
    const result = await runArgo(['logs', 'rm', '--session', doomed, '--yes'], {
      home,
      onSpawn: (child) =>
        void waitFor(() => expect(temporary()).not.toEqual([]), { timeout: 20_000, interval: 2 }).then(() => child.kill(signal)),
    });
    expect(result.code).toBe(signal === 'SIGINT' ? 130 : 143);
    // Ended by a signal, not a failure of its own: still one line saying so.
    expect(result.stderr).toBe(signal === 'SIGINT' ? 'argo: interrupted\n' : 'argo: terminated (SIGTERM)\n');
    expect(temporary()).toEqual([]);
    expect(statSync(file).size).toBe(before);
    expect(existsSync(join(home, 'locks', 'log.lock'))).toBe(false);
  }, 60_000);
});

describe('doctor on a terminal (item 3)', () => {
  it('shows what the server reports without obeying its control characters', async () => {
    const hostile = await startFakeOllama({ version: '0.12.0\u001b]0;pwned\u0007' });
    try {
      const home = tempHome();
      const result = await runInTerminal(['doctor'], home, { OLLAMA_HOST: hostile.url });
      expect(result.output).toContain('0.12.0^[]0;pwned^G');
      expect(result.output).not.toContain('\u001b]0;pwned');
    } finally {
      await hostile.close();
    }
  });

  it('a data home whose name holds an OSC sequence is refused in one line that shows it, without obeying it', async () => {
    // Every message naming a file of it would carry the sequence: refused before anything is done.
    const home = join(tempHome(), 'home\u001b]0;pwned\u0007');
    mkdirSync(home, { mode: 0o700 });
    const result = await runInTerminal(['doctor', '--home', home], tempHome());
    // doctor says it as its failed config check.
    expect(result.code).toBe(1);
    const failures = result.output.split('\r\n').filter((line) => line.startsWith('argo: '));
    expect(failures).toEqual([expect.stringMatching(/^argo: doctor: the config check failed: --home "\S+home\\u001b\]0;pwned\\u0007" holds a control or direction character: give the path without it$/)]);
    expect(result.output).not.toContain('\u001b]0;pwned');
  });
});
