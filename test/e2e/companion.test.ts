// The everyday companion (issue 10) end to end: the built bin/argo against the Ollama stand-in.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { MODEL_NAMES_MS } from '../../src/cli/completion-command.js';
import { MODELFILE } from '../../src/ollama/fix-hints.js';
import { startFakeOllama } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { ARGO_BIN, logLines, runArgo, scrubbedEnv, tempHome } from '../support/run-argo.js';
import { waitFor } from '../support/wait.js';

const ollama = await fakeOllamaPerFile({ models: [{ name: 'argo:latest' }, { name: 'llama3:8b' }, { name: 'tiny', numCtx: 256 }] });
beforeEach(() => {
  ollama.setScenario(undefined);
  ollama.options.reply = undefined;
  ollama.requests.length = 0;
});

function argo(args: string[], home: string, extra: { stdin?: string; env?: Record<string, string> } = {}) {
  return runArgo(args, { home, host: ollama.url, ...extra });
}

/**
 * A piped `argo chat -s SESSION` whose first line is "first", with its input kept open for `drive`
 * to go on; `seen` follows what it printed. A step that never comes kills the chat rather than leave
 * it waiting for its input forever.
 */
async function drivenChat(session: string, home: string, seen: { stdout: string; stderr?: string }, drive: (child: ChildProcess) => Promise<void>) {
  let script: Promise<void> = Promise.resolve();
  const result = await runArgo(['chat', '-s', session], {
    home,
    host: ollama.url,
    stdin: 'first\n',
    keepStdinOpen: true,
    onSpawn: (child) => {
      script = drive(child).catch((failure: unknown) => {
        child.kill('SIGKILL');
        throw failure;
      });
    },
    onStdout: (_child, text) => (seen.stdout = text),
    onStderr: (_child, text) => (seen.stderr = text),
  });
  await script;
  return result;
}

function modelBodies(): Record<string, unknown>[] {
  return ollama.requests.filter((r) => r.path === '/api/chat' || r.path === '/api/generate').map((r) => JSON.parse(r.body) as Record<string, unknown>);
}

const words = (count: number): string => Array.from({ length: count }, (_, i) => `word${i}`).join(' ');

describe('help, typos and the version', () => {
  it.each([
    [['sesions'], 'argo: unknown command "sesions" (did you mean "sessions"?); to ask the model, run: argo -- sesions\n'],
    [['doctr'], 'argo: unknown command "doctr" (did you mean "doctor"?); to ask the model, run: argo -- doctr\n'],
  ])('%j is refused as a typo, exit 2, nothing sent', async (args, stderr) => {
    const result = await argo(args, tempHome());
    expect(result).toMatchObject({ code: 2, stdout: '', stderr });
    expect(modelBodies()).toEqual([]);
  });

  it('a lone question word is a question, though one edit from a command ("what", "chat")', async () => {
    const result = await argo(['what'], tempHome(), { stdin: 'some error text\n' });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.stringify(modelBodies())).toContain('some error text');
  });

  it('argo -- word still sends the word', async () => {
    const result = await argo(['--', 'doctr'], tempHome());
    expect(result).toMatchObject({ code: 0, stdout: 'You said: doctr\n' });
  });

  it.each([
    [['--', 'stop'], 'stop', 'default', 'argo'],
    [['--', 'last'], 'last', 'default', 'argo'],
    [['--', 'tools'], 'tools', 'default', 'argo'],
    [['--', 'chat'], 'chat', 'default', 'argo'],
    [['--', 'serve', '--port', '0'], 'serve --port 0', 'default', 'argo'],
    [['--', 'help'], 'help', 'default', 'argo'],
    [['--', '--help'], '--help', 'default', 'argo'],
    [['-s', 'x', '--', 'stop'], 'stop', 'x', 'argo'],
    [['-s', 'stop', '--', 'stop'], 'stop', 'stop', 'argo'],
    [['-m', 'llama3:8b', '-q', '--', '-x is a flag?'], '-x is a flag?', 'default', 'llama3:8b'],
  ])('argo %j asks the model, with the options before --, and runs no command', async (args, prompt, session, model) => {
    const home = tempHome();
    const result = await argo(args, home);
    expect(result).toMatchObject({ code: 0, stdout: `You said: ${prompt}\n`, stderr: '' });
    expect(logLines(home)).toMatchObject([{ session, model, user_prompt: prompt }]);
    expect(existsSync(join(home, 'STOP'))).toBe(false);
  });

  it('argo help and argo help logs show help, exit 0, nothing sent', async () => {
    const home = tempHome();
    const general = await argo(['help'], home);
    expect(general.code).toBe(0);
    expect(general.stdout).toMatch(/^Usage: argo \[options\] \[command\] \[prompt\.\.\.\]/);
    expect(general.stdout).toContain('chat');
    expect(general.stdout).not.toContain('{"kind":"none"}');
    const logs = await argo(['help', 'logs'], home);
    expect(logs.stdout).toMatch(/^Usage: argo logs /);
    expect(logs.stdout).toContain('--truncated');
    expect(modelBodies()).toEqual([]);
  });

  it('-v, -V and --version print the version from package.json', async () => {
    const { version } = (await import('../../package.json', { with: { type: 'json' } })).default as { version: string };
    for (const flag of ['-v', '-V', '--version']) expect((await argo([flag], tempHome())).stdout).toBe(`${version}\n`);
  });

  it('a usage error from commander is one line', async () => {
    const result = await argo(['--replay', 'sometimes', 'hi'], tempHome());
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')).toHaveLength(2);
    expect(result.stderr).toMatch(/^argo: option '-r, --replay <spec>' argument 'sometimes' is invalid/);
  });
});

describe('-o options and the system prompt', () => {
  it('sends checked options, sorted, and logs them; --system goes first in the system message and is logged', async () => {
    const home = tempHome();
    const result = await argo(['-o', 'top_p=0.9', '-o', 'num_predict=50', '-o', 'stop=END', '-o', 'stop=STOP', '--seed', '3', '--system', 'You are terse.', 'hi'], home);
    expect(result.code).toBe(0);
    const [body] = modelBodies();
    expect(JSON.stringify(body?.options)).toBe('{"seed":3,"num_predict":50,"stop":["END","STOP"],"top_p":0.9}');
    const messages = body?.messages as { role: string; content: string }[];
    expect(messages[0]?.role).toBe('system');
    expect(messages[0]?.content.startsWith('You are terse.\n')).toBe(true);
    expect(logLines(home)[0]).toMatchObject({ options: { seed: 3, num_predict: 50, stop: ['END', 'STOP'], top_p: 0.9 }, system: 'You are terse.' });
  });

  it('--system-file reads the prompt from a file', async () => {
    const home = tempHome();
    const file = join(home, 'system.txt');
    writeFileSync(file, 'Answer in French.');
    await argo(['--system-file', file, 'hi'], home);
    expect((modelBodies()[0]?.messages as { content: string }[])[0]?.content.startsWith('Answer in French.')).toBe(true);
  });

  it.each([
    [['-o', 'temprature=0.2', 'hi'], 'argo: -o temprature: unknown Ollama option (did you mean "temperature"?); see docs/cli.md for the list\n'],
    [['-o', 'num_predict=lots', 'hi'], 'argo: -o num_predict=lots: num_predict takes a whole number\n'],
    [['--system', 'a', '--system-file', 'b', 'hi'], 'argo: --system and --system-file both give the system prompt: choose one\n'],
  ])('%j is a usage error', async (args, stderr) => {
    expect(await argo(args, tempHome())).toMatchObject({ code: 2, stdout: '', stderr });
    expect(modelBodies()).toEqual([]);
  });
});

describe('--stats, --json and the request hash', () => {
  it("--stats prints Ollama's figures on stderr; --json includes them; every turn logs request_sha256 of the body sent", async () => {
    const home = tempHome();
    const result = await argo(['--stats', 'hello there'], home);
    expect(result.stderr).toMatch(/^prompt \d+ tokens · answer \d+ tokens · [\d.]+ tokens\/s · load [\d.]+s · total [\d.]+s\n$/);
    const json = await argo(['--json', 'hello there'], home);
    expect(JSON.parse(json.stdout)).toMatchObject({ stats: { answer_tokens: 4, prompt_tokens: expect.any(Number) as unknown } });
    const { createHash } = await import('node:crypto');
    const sent = ollama.requests.filter((r) => r.path === '/api/chat').map((r) => createHash('sha256').update(r.body).digest('hex'));
    expect(logLines(home).map((line) => line.request_sha256)).toEqual(sent);
  });
});

describe('standard input', () => {
  it('keeps indentation and trailing spaces of piped text', async () => {
    await argo(['Fix this:'], tempHome(), { stdin: '    indented line  \n\tsecond\n' });
    const messages = modelBodies()[0]?.messages as { content: string }[];
    expect(messages.at(-1)?.content).toBe('Fix this:\n\n    indented line  \n\tsecond');
  });

  it('piped text after typed words is material: the words decide the type and the reason, the index and a rebuild agree', async () => {
    const home = tempHome();
    const piped = 'The meeting went well. Actually, the budget was approved. What do you mean by churn?';
    expect(await argo(['-s', 'p', 'Summarize this'], home, { stdin: `${piped}\n` })).toMatchObject({ code: 0 });
    expect(await argo(['-s', 'p', 'ok'], home, { stdin: '' })).toMatchObject({ code: 0 });
    expect(logLines(home)[0]).toMatchObject({ user_prompt: `Summarize this\n\n${piped}`, typed_chars: 14, entry_type: 'instruction' });
    // Piped alone, it is the question.
    expect(await argo(['-s', 'q'], home, { stdin: piped })).toMatchObject({ code: 0 });
    expect(logLines(home)[2]).toMatchObject({ entry_type: 'correction' });
    expect(logLines(home)[2]).not.toHaveProperty('typed_chars');
    const explain = async (): Promise<unknown> => {
      const result = await argo(['-s', 'p', '--replay', 'last:2', '--explain', '--json', 'Add a chart'], home, { stdin: piped });
      return (JSON.parse(result.stdout) as { replay_policy: unknown }).replay_policy;
    };
    const planned = await explain();
    expect(planned).toMatchObject({ reason: 'continuation', decisions: [{ entry_type: 'instruction' }, { entry_type: 'other' }] });
    expect(await argo(['sessions', 'reindex', 'p'], home)).toMatchObject({ code: 0 });
    expect(await explain()).toEqual(planned);
    // A rerun keeps where the typed words end, and is typed by them.
    expect(await argo(['rerun', String(logLines(home)[0]?.id)], home, { stdin: '' })).toMatchObject({ code: 0 });
    expect(logLines(home).at(-1)).toMatchObject({ rerun_of: logLines(home)[0]?.id, typed_chars: 14, entry_type: 'instruction' });
  });

  it('--no-stdin leaves standard input to the loop that feeds it', async () => {
    const home = tempHome();
    const script = `while read q; do "${process.execPath}" "${ARGO_BIN}" --no-stdin "$q"; done`;
    // Run asynchronously: the stand-in answers from this process.
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('bash', ['-c', script], { env: scrubbedEnv({ home, host: ollama.url }) });
      let text = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      child.on('error', reject).on('close', () => resolve(text));
      child.stdin.end('one\ntwo\nthree\n');
    });
    expect(out).toBe('You said: one\nYou said: two\nYou said: three\n');
  });

  it('a pipe left open and silent (execFile, ssh without -n) gets one line saying argo waits for it, and is still read', async () => {
    const home = tempHome();
    const line = 'argo: waiting for standard input, which is not a terminal and has not ended; end it, or run argo with --no-stdin (or </dev/null) if no input is coming\n';
    const result = await runArgo(['--no-log', 'summarise'], {
      home,
      host: ollama.url,
      keepStdinOpen: true,
      onStderr: (child, text) => {
        if (text === line) child.stdin?.end('late context\n');
      },
    });
    expect(result).toMatchObject({ code: 0, stderr: line, stdout: 'You said: summarise\n\nlate context\n' });
  });

  it('--no-stdin answers at once though the pipe stays open', async () => {
    const result = await runArgo(['--no-log', '--no-stdin', 'hi'], { home: tempHome(), host: ollama.url, keepStdinOpen: true });
    expect(result).toMatchObject({ code: 0, stderr: '', stdout: 'You said: hi\n' });
  });

  it('bare argo with nothing to read exits 2 with the one line saying how to give a prompt', async () => {
    const result = await argo([], tempHome(), { stdin: '' });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/^argo: no prompt: [^\n]+, pipe it on stdin, or run argo chat\n$/);
  });
});

describe('continue and the default replay', () => {
  it('-c continues the most recently used session with --replay session', async () => {
    const home = tempHome();
    await argo(['-s', 'old', 'Write a haiku'], home);
    await argo(['-s', 'recent', 'Write a limerick'], home);
    await argo(['-c', 'Make it shorter'], home);
    const last = logLines(home).at(-1);
    expect(last).toMatchObject({ session: 'recent', replay: { enabled: true, session: true } });
    expect(last?.replayed_ids).toEqual([logLines(home)[1]?.id]);
  });

  it('ARGO_REPLAY and config "defaultReplay" set the replay when --replay is not given', async () => {
    const home = tempHome({ defaultReplay: 'last:1' });
    await argo(['Write a function'], home);
    await argo(['Add tests'], home);
    expect(logLines(home)[1]).toMatchObject({ replay: { enabled: true, count: 1 } });
    await argo(['Add docs'], home, { env: { ARGO_REPLAY: 'none' } });
    expect(logLines(home)[2]).toMatchObject({ replay: { enabled: false } });
    expect(await argo(['x'], home, { env: { ARGO_REPLAY: 'always' } })).toMatchObject({ code: 2, stderr: 'argo: ARGO_REPLAY must be none, session or last:N, got "always"\n' });
    // Overridden, it is not read: --replay wins, and a chat always replays its session.
    expect(await argo(['--replay', 'none', 'y'], home, { env: { ARGO_REPLAY: 'always' } })).toMatchObject({ code: 0 });
    expect(logLines(home).at(-1)).toMatchObject({ user_prompt: 'y', replay: { enabled: false } });
    expect(await argo(['chat'], home, { env: { ARGO_REPLAY: 'always' }, stdin: 'z\n' })).toMatchObject({ code: 0 });
    expect(logLines(home).at(-1)).toMatchObject({ user_prompt: 'z', replay: { enabled: true, session: true } });
  });

  it('--explain names the model and where it came from, and the context window', async () => {
    const home = tempHome();
    await argo(['-s', 'w', '-m', 'llama3:8b', 'Write a haiku'], home);
    const explained = await argo(['-s', 'w', '--replay', 'session', '--explain', 'Another'], home, { env: { ARGO_MODEL: 'argo' } });
    expect(explained.stdout).toContain("model      llama3:8b (the session's last model)\n");
    expect(explained.stdout).toMatch(/context {4}about \d+ prompt tokens of a 4096-token window \(Ollama's default\)/);
  });
});

describe('silent truncation, detected', () => {
  it('warns before sending when the estimate exceeds the window, logs it, and argo logs --truncated finds it', async () => {
    const home = tempHome();
    const result = await argo(['-m', 'tiny', words(600)], home);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^argo: the prompt \(about \d+ tokens\) is longer than the context window \(256 tokens, the model's num_ctx\); Ollama cuts such prompts silently — raise --num-ctx \(e\.g\. --num-ctx \d+\) or shorten the prompt\n$/);
    expect(logLines(home)[0]).toMatchObject({ num_ctx: 256, truncation_suspected: true, timings: { prompt_eval_count: 256 } });
    await argo(['a short one'], home);
    const found = await argo(['logs', '--json', '--truncated'], home);
    expect(found.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { id: string }).id)).toEqual([logLines(home)[0]?.id]);
  });

  it('after the answer: a prompt_eval_count that fills the window is reported even when the estimate fitted', async () => {
    const home = tempHome();
    // The stand-in counts a word as a token: 300 one-letter words are ~150 estimated tokens, 300 counted.
    const result = await argo(['--num-ctx', '200', Array.from({ length: 300 }, () => 'a').join(' ')], home);
    expect(result.stderr).toMatch(/^argo: Ollama read 200 prompt tokens, all of the context window \(200 tokens, from --num-ctx\); the prompt was probably cut — raise --num-ctx/);
    expect(logLines(home)[0]).toMatchObject({ num_ctx: 200, truncation_suspected: true });
  });

  it('a prompt that fits says nothing and logs truncation_suspected false', async () => {
    const home = tempHome();
    const result = await argo(['--num-ctx', '8192', 'hello'], home);
    expect(result.stderr).toBe('');
    expect(logLines(home)[0]).toMatchObject({ num_ctx: 8192, truncation_suspected: false, prompt_tokens_estimate: expect.any(Number) as unknown });
  });
});

describe('options written before a command name', () => {
  it('are carried to a command that shares them (chat), --home to every command, and refused elsewhere: never dropped, never misread', async () => {
    const home = tempHome();
    await argo(['-s', 'w', 'first'], home);
    const first = logLines(home)[0];
    const chats = (): number => ollama.requests.filter((r) => r.path === '/api/chat').length;
    // chat shares the question's options: --no-log before it counts.
    expect(await argo(['--no-log', 'chat', '-s', 'w'], home, { stdin: 'quiet please\n' })).toMatchObject({ code: 0 });
    expect(logLines(home)).toHaveLength(1);
    // --home before a command is its data home.
    const elsewhere = tempHome();
    const before = chats();
    expect(await argo(['--home', home, 'rerun', String(first?.id), '--explain'], elsewhere)).toMatchObject({ code: 0 });
    expect(chats()).toBe(before);
    // An option the command has only under its own meaning must be written after its name.
    const write = (flag: string, command: string): string => `argo: write ${flag} after the command's name (argo ${command} ${flag} …): before it, ${flag} is an option of the question\n`;
    expect(await argo(['--explain', 'rerun', String(first?.id)], home)).toMatchObject({ code: 2, stderr: write('--explain', 'rerun') });
    expect(await argo(['-s', 'w', 'last'], home)).toMatchObject({ code: 2, stderr: write('--session', 'last') });
    expect(await argo(['--json', 'doctor'], home)).toMatchObject({ code: 2, stderr: write('--json', 'doctor') });
    // Of two flags for one setting, the one typed is named.
    expect(await argo(['--no-color', 'last'], home)).toMatchObject({ code: 2, stderr: write('--no-color', 'last') });
    expect(await argo(['--color', 'never', 'last'], home)).toMatchObject({ code: 2, stderr: write('--color', 'last') });
    // serve's --host is the address it binds: the question's --host (Ollama's address) must not become it.
    expect(await argo(['--host', 'http://127.0.0.1:11434', 'serve'], home)).toMatchObject({ code: 2, stderr: write('--host', 'serve') });
    // A required option given before the name is refused by name, not reported missing.
    expect(await argo(['-s', 'w', 'logs', 'rm'], home)).toMatchObject({ code: 2, stderr: write('--session', 'logs') });
    expect(await argo(['--stats', 'tools'], home)).toMatchObject({ code: 2, stderr: 'argo: "tools" does not take --stats (argo tools --help lists what it takes)\n' });
    // The same between a command and its subcommand.
    expect(await argo(['sessions', '--json', 'list'], home)).toMatchObject({ code: 2, stderr: 'argo: write --json after the command\'s name (argo sessions list --json …): before it, --json is an option of "sessions"\n' });
    expect(await argo(['logs', '--session', 'w', 'check'], home)).toMatchObject({ code: 2, stderr: 'argo: "logs check" does not take --session (argo logs check --help lists what it takes)\n' });
    expect(await argo(['sessions', '--home', home, 'list'], elsewhere)).toMatchObject({ code: 0 });
    expect(chats()).toBe(before);
    expect(logLines(home)).toHaveLength(1);
  });
});

describe('argo rerun', () => {
  it('rebuilds the exact request (same bytes), sends it to another model with other options, logs rerun_of, and diffs the answers', async () => {
    const home = tempHome();
    await argo(['-s', 'w', 'Write a function'], home);
    await argo(['-s', 'w', '--replay', 'last:1', 'Now add tests'], home);
    const original = logLines(home)[1];
    const sentBefore = ollama.requests.filter((r) => r.path === '/api/chat').at(-1)?.body;
    const explained = await argo(['rerun', String(original?.id), '--explain', '--json'], home);
    const proof = JSON.parse(explained.stdout) as { proved_sha256: string; request: { body: unknown } };
    expect(proof.proved_sha256).toBe(original?.request_sha256);
    expect(JSON.stringify(proof.request.body)).toBe(sentBefore);

    ollama.options.reply = (body) => (body.model === 'llama3:8b' ? 'Tests with vitest, three of them.' : 'unused');
    const result = await argo(['rerun', String(original?.id), '-m', 'llama3:8b', '-o', 'seed=7', '--diff'], home);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Tests with vitest, three of them.\n');
    expect(result.stdout).toMatch(/── word diff: \S+ \(argo\) → \S+ \(llama3:8b\) · \+\d+ −\d+ words\n/);
    expect(result.stdout).toContain('[-You said: Now add tests-]{+Tests with vitest, three of them.+}');
    const rerun = logLines(home).at(-1);
    expect(rerun).toMatchObject({ rerun_of: original?.id, model: 'llama3:8b', options: { seed: 7 }, replayed_ids: original?.replayed_ids });
  });

  it('proves turns sent to /api/generate, without streaming, with keep_alive, options, a system prompt and a mode', async () => {
    const home = tempHome();
    const flags = ['-s', 'g', '--api', 'generate', '--no-stream', '--keep-alive', '10m', '-o', 'num_predict=20', '--system', 'Be exact.', '--mode', 'code'];
    expect(await argo([...flags, 'Write a function'], home)).toMatchObject({ code: 0, stderr: '' });
    expect(await argo([...flags, '--replay', 'last:1', 'Add tests'], home)).toMatchObject({ code: 0, stderr: '' });
    const original = logLines(home)[1];
    const sent = ollama.requests.filter((r) => r.path === '/api/generate').at(-1)?.body;
    const explained = await argo(['rerun', String(original?.id), '--explain', '--json'], home);
    expect(explained.code).toBe(0);
    expect(JSON.stringify((JSON.parse(explained.stdout) as { request: { body: unknown } }).request.body)).toBe(sent);
    const again = await argo(['rerun', String(original?.id)], home);
    expect(again.code).toBe(0);
    expect(ollama.requests.filter((r) => r.path === '/api/generate').at(-1)?.body).toBe(sent);
    expect(logLines(home).at(-1)).toMatchObject({ rerun_of: original?.id, request_sha256: original?.request_sha256 });
  });

  it('logs the persona and mode the request was built with, so a rerun of the rerun is proved too', async () => {
    const home = tempHome();
    expect(await argo(['-s', 'p', '--persona', 'teacher', '--mode', 'code', 'Write a function'], home)).toMatchObject({ code: 0 });
    const original = logLines(home)[0];
    expect(await argo(['rerun', String(original?.id)], home)).toMatchObject({ code: 0 });
    const rerun = logLines(home).at(-1);
    expect(rerun).toMatchObject({ rerun_of: original?.id, persona: 'teacher', active_mode: 'code', request_sha256: original?.request_sha256 });
    expect(await argo(['rerun', String(rerun?.id), '--explain', '--json'], home)).toMatchObject({ code: 0, stderr: '' });
  });

  it('a turn whose session was removed: the rerun is logged under the old id, never in a new session that took its name', async () => {
    const home = tempHome();
    await argo(['-s', 'work', 'Write a function'], home);
    const original = logLines(home)[0];
    expect(await argo(['sessions', 'rename', 'work', 'old'], home)).toMatchObject({ code: 0 });
    await argo(['-s', 'work', 'Something else'], home);
    expect(await argo(['sessions', 'rm', 'old', '--yes'], home)).toMatchObject({ code: 0 });
    const result = await argo(['rerun', String(original?.id)], home);
    // Named as it was when removed ("old"), not as when the turn was asked ("work", another session's now).
    expect(result).toMatchObject({ code: 0, stderr: `argo: the session of turn ${String(original?.id)} ("old") was removed; the rerun is logged under its old id (argo logs --session ${String(original?.session_id)})\n` });
    const rerun = logLines(home).at(-1);
    expect(rerun).toMatchObject({ rerun_of: original?.id, session_id: original?.session_id, session: 'old' });
    const explained = JSON.parse((await argo(['-s', 'work', '-r', 'session', '--explain', '--json', 'Add y'], home)).stdout) as { replayed_ids: string[] };
    expect(explained.replayed_ids).not.toContain(rerun?.id);
  });

  it('a removed session with no note of its last name (an earlier version removed it) is named as a fork\'s link names it, as argo logs names it', async () => {
    const home = tempHome();
    await argo(['-s', 'work', 'Write a function'], home);
    const original = logLines(home)[0];
    expect(await argo(['sessions', 'fork', 'work', 'alt'], home)).toMatchObject({ code: 0 });
    expect(await argo(['sessions', 'rename', 'work', 'work-renamed'], home)).toMatchObject({ code: 0 });
    expect(await argo(['sessions', 'rm', 'work-renamed', '--yes'], home)).toMatchObject({ code: 0 });
    rmSync(join(home, 'sessions', '.removed-sessions.jsonl'));
    const result = await argo(['rerun', String(original?.id)], home);
    expect(result).toMatchObject({ code: 0, stderr: `argo: the session of turn ${String(original?.id)} ("work-renamed") was removed; the rerun is logged under its old id (argo logs --session ${String(original?.session_id)})\n` });
    expect(logLines(home).at(-1)).toMatchObject({ rerun_of: original?.id, session: 'work-renamed' });
  });

  it.each<[string, string[], object | undefined, string, string]>([
    ['a model that is not installed', ['--model', 'missing:model'], undefined, 'error', /^argo: model "missing:model" not found/.source],
    ['an error mid-answer', [], { errorMidStream: { afterChunks: 1, message: 'runner crashed' } }, 'error', /^argo: Ollama reported an error mid-answer: runner crashed/.source],
  ])('--diff when the new turn fails (%s): no diff (it showed the old answer all struck out), one line saying why', async (_case, flags, scenario, status, failure) => {
    const home = tempHome();
    await argo(['-s', 'w', 'hello'], home);
    const id = String(logLines(home)[0]?.id);
    ollama.setScenario(scenario);
    const result = await argo(['rerun', id, '--diff', ...flags], home);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain('word diff');
    expect(result.stdout).not.toContain('[-');
    const lines = result.stderr.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(new RegExp(failure));
    expect(lines[1]).toBe(`argo: no word diff: the new turn ended ${status}, with no whole answer to compare with the old one`);
    expect(logLines(home).at(-1)).toMatchObject({ rerun_of: id, status });
  });

  it("a rerun is typed by today's rules, as every new turn is: a replay plans the same before and after a reindex", async () => {
    const home = tempHome();
    for (const prompt of ['Hello there', 'Add tests', 'ok', 'fine']) await argo(['-s', 'w', prompt], home);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ replay: { classify: { instructionVerbs: ['write', 'explain'] } } }));
    const original = logLines(home).find((line) => line.user_prompt === 'Add tests');
    expect(await argo(['rerun', String(original?.id)], home)).toMatchObject({ code: 0 });
    expect(logLines(home).at(-1)).toMatchObject({ rerun_of: original?.id, entry_type: 'other' });
    const explain = async (): Promise<string> => (JSON.parse((await argo(['-s', 'w', '--replay', 'session', '--explain', '--json', 'Write more'], home)).stdout) as { request_sha256: string }).request_sha256;
    const before = await explain();
    expect(await argo(['sessions', 'reindex', 'w'], home)).toMatchObject({ code: 0 });
    expect(await explain()).toBe(before);
  });

  it('--diff with --json is a usage error, not a diff dropped in silence', async () => {
    const home = tempHome();
    await argo(['hello'], home);
    expect(await argo(['rerun', String(logLines(home)[0]?.id), '--diff', '--json'], home)).toMatchObject({ code: 2, stdout: '', stderr: 'argo: --diff shows a word diff for reading, --json one object for scripts: leave one of them out\n' });
  });

  /** A turn, and one that replayed it, in a fresh home; with the day's log file that holds them. */
  const replayedPair = async () => {
    const home = tempHome();
    await argo(['-s', 'w', 'Write a function'], home);
    await argo(['-s', 'w', '--replay', 'last:1', 'Now add tests'], home);
    const [first, second] = logLines(home);
    return { home, first, second, logFile: join(home, 'logs', `${String(second?.timestamp).slice(0, 10)}.log`) };
  };

  it('refuses, naming the reason, when a replayed turn is gone or the turn is unknown', async () => {
    const { home, first, second, logFile } = await replayedPair();
    // Delete the replayed turn's line by hand.
    const { readFileSync } = await import('node:fs');
    writeFileSync(logFile, readFileSync(logFile, 'utf8').split('\n').filter((line) => !line.startsWith(`{"id":"${String(first?.id)}"`)).join('\n'));
    expect(readFileSync(logFile, 'utf8').endsWith('\n')).toBe(true);
    const refused = await argo(['rerun', String(second?.id)], home);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toBe(`argo: cannot rerun: turn ${String(second?.id)} replayed turn ${String(first?.id)}, which is no longer in the log (deleted or pruned), so its request cannot be rebuilt\n`);
    expect(await argo(['rerun', 'nope'], home)).toMatchObject({ code: 2 });
  });

  it('a turn on an unreadable line is not called deleted: the skipped line is counted and named as what it may be', async () => {
    const { home, first, second, logFile } = await replayedPair();
    const { readFileSync } = await import('node:fs');
    writeFileSync(logFile, readFileSync(logFile, 'utf8').replace(/"status":"ok"/, '"status":1234'));
    const notice = 'argo: skipped 1 unreadable log line; run "argo logs check" to list them\n';
    const ofSecond = await argo(['rerun', String(second?.id), '--explain'], home);
    expect(ofSecond).toMatchObject({ code: 1, stdout: '' });
    expect(ofSecond.stderr).toBe(
      `${notice}argo: cannot rerun: turn ${String(second?.id)} replayed turn ${String(first?.id)}, which is no longer in the log (deleted or pruned), or may be the unreadable log line skipped (argo logs check lists it), so its request cannot be rebuilt\n`,
    );
    const ofFirst = await argo(['rerun', String(first?.id), '--explain'], home);
    expect(ofFirst).toMatchObject({ code: 2, stdout: '' });
    expect(ofFirst.stderr).toBe(`${notice}argo: no turn with id "${String(first?.id)}" in ${join(home, 'logs')} (argo logs shows ids); it may be the unreadable log line skipped (argo logs check lists it)\n`);
  });

  it('refuses when the rebuilt body hash differs (a persona text changed since)', async () => {
    const home = tempHome();
    await argo(['hello'], home);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ personas: { neutral: 'Talk like a pirate.' } }));
    const refused = await argo(['rerun', String(logLines(home)[0]?.id)], home);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^argo: cannot rerun: the rebuilt request of turn \S+ is not the one it sent \(sha256 [0-9a-f]{12}… ≠ [0-9a-f]{12}…\): a persona, mode/);
  });
});

describe('argo chat with piped lines', () => {
  it('each line is one turn of the session, replayed (session by default), logged; no prompt is drawn', async () => {
    const home = tempHome();
    const result = await argo(['chat', '-s', 'talk'], home, { stdin: 'Write a haiku\nMake it rhyme\n/stats\n' });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('You said: Write a haiku\nYou said: Make it rhyme\n');
    // /stats is no answer: on standard error.
    expect(result.stderr).toMatch(/^prompt \d+ tokens · answer 5 tokens/);
    const lines = logLines(home);
    expect(lines.map((line) => line.session)).toEqual(['talk', 'talk']);
    expect(lines[1]).toMatchObject({ replay: { session: true } });
    // The same request a one-liner with the same flags sends.
    await argo(['-s', 'talk2', 'Write a haiku'], home);
    await argo(['-s', 'talk2', '--replay', 'session', 'Make it rhyme'], home);
    const bodies = modelBodies().map((body) => JSON.stringify(body));
    expect(bodies[3]).toBe(bodies[1]);
  });

  it.each([
    // The session replay is the chat's own, not a flag typed: the message says so.
    [['--reason', 'clarification'], /^argo: argo chat \(by default\) replays the whole session, which always uses reason "session"; give --replay last:N with --reason clarification \(argo chat -r last:3 --reason clarification\)\n$/],
    [['--replay', 'session', '--reason', 'clarification'], /^argo: --replay session always uses reason "session"; use --replay last:N with --reason clarification\n$/],
    [['--replay', 'none', '--reason', 'continuation'], /^argo: --reason needs --replay last:N or --replay session/],
  ])('%j is refused as the one-liner refuses it: exit 2, nothing logged', async (flags, message) => {
    const home = tempHome();
    const result = await argo(['chat', '-s', 'talk', ...flags], home, { stdin: 'Add a thing\n' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(logLines(home)).toEqual([]);
  });

  it('slash commands switch session, model and replay; /last prints the last answer', async () => {
    const home = tempHome();
    const result = await argo(['chat'], home, { stdin: '/last\none\n/session other\n/model llama3:8b\n/replay none\ntwo\n/last\n/bye\nthree\n' });
    // /last before any turn says there is none, and is no failure of the chat.
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('no answer yet in session "default"\nYou said: one\nYou said: two\nYou said: two\n');
    expect(logLines(home).map((line) => [line.session, line.model])).toEqual([
      ['default', 'argo'],
      ['other', 'llama3:8b'],
    ]);
  });

  it.each([
    ['chosen with /model', []],
    ['the chat started with -m', ['-m', 'nosuch']],
  ])('a missing model %s: the hint names /model, which works there and then, on stderr and in the log', async (_case, flags) => {
    const home = tempHome();
    const stdin = flags.length === 0 ? '/model nosuch\nhi\n' : 'hi\n';
    const result = await argo(['chat', ...flags], home, { stdin });
    expect(result.code).toBe(1);
    const hint = /, or use an installed one \(\/model argo:latest\)/;
    expect(result.stderr).toMatch(hint);
    expect(result.stderr).not.toContain('--model');
    expect(logLines(home).map((line) => line.error)).toEqual([expect.stringMatching(hint)]);
  });

  it.each([
    ['a model chosen with /model is named as such', [], '/model llama3:8b\n/explain hi\n', /^model {6}llama3:8b \(\/model\)$/m],
    ["the chat's own --model keeps its source", ['-m', 'llama3:8b'], '/explain hi\n', /^model {6}llama3:8b \(--model\)$/m],
  ])('%s in /explain', async (_case, flags, stdin, line) => {
    const result = await argo(['chat', ...flags], tempHome(), { stdin });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(line);
  });

  it('a """ block is a message even when it starts with a slash command; /model refuses a name with a space', async () => {
    const home = tempHome();
    const result = await argo(['chat', '-s', 'p4'], home, { stdin: '"""\n/model fancy\nplease review the line above\n"""\n"""\n/bye\n"""\n/model two words\nstill here\n' });
    // A refused command is no failure of the chat.
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('argo: /model: a model name has no spaces or control characters (ollama list shows the names, e.g. llama3.2)\n');
    expect(logLines(home).map((line) => [line.user_prompt, line.model])).toEqual([
      ['/model fancy\nplease review the line above', 'argo'],
      ['/bye', 'argo'],
      ['still here', 'argo'],
    ]);
  });

  it.each([
    ['all', 'use none, session, or last:N with N a whole number of 1 or more'],
    ['last:9007199254740992', 'N is too large: use last:N with N of at most 9007199254740991'],
  ])('/replay %s is refused with the rule the flag has; the chat goes on with its replay', async (spec, rule) => {
    const home = tempHome();
    const result = await argo(['chat', '-s', 'r1', '-r', 'none'], home, { stdin: `/replay ${spec}\nstill here\n` });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`argo: /replay: ${rule}, got "${spec}"\n`);
    expect(logLines(home).map((line) => [line.user_prompt, line.replay_policy])).toEqual([['still here', null]]);
  });

  it('a script that ends inside a """ block: the messages before it answered and logged, the block not sent, exit 2', async () => {
    const home = tempHome();
    const result = await argo(['chat', '-s', 'open'], home, { stdin: 'first\n"""\nforgot to close\n' });
    expect(result).toMatchObject({ code: 2, stdout: 'You said: first\n', stderr: 'argo: the input ended inside a """ block: it was not sent (1 line(s)), the messages before it were; end it with a line ending in """\n' });
    expect(logLines(home).map((line) => line.user_prompt)).toEqual(['first']);
  });

  it.each(['--json', '--explain', '--no-stdin'])('argo chat %s: refused as a flag for one question, exit 2', async (flag) => {
    const result = await argo(['chat', flag], tempHome(), { stdin: 'hi\n' });
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: `argo: "chat" does not take ${flag}: it is for one question (argo ${flag} "why is the sky blue?"); argo chat --help lists what a chat takes\n` });
    // Before the command's name: refused as well, never pointed to the place after it.
    const before = await argo([flag, 'chat'], tempHome(), { stdin: 'hi\n' });
    expect(before).toMatchObject({ code: 2, stdout: '', stderr: `argo: "chat" does not take ${flag} (argo chat --help lists what it takes)\n` });
  });

  it('Ctrl-C stops one answer after another without leaving the chat (off a terminal Ctrl-C is a signal)', async () => {
    const home = tempHome();
    ollama.options.reply = () => 'partial answer never finished';
    ollama.setScenario({ hang: 2 });
    let stopped = 0;
    const result = await runArgo(['chat', '-s', 'talk'], {
      home,
      host: ollama.url,
      stdin: 'first\n',
      keepStdinOpen: true,
      onStdout: (child, text) => {
        // Each answer hangs after its first words: stop it there, then ask the next question.
        const shown = text.split('partial answer').length - 1;
        if (shown <= stopped) return;
        stopped = shown;
        child.kill('SIGINT');
      },
      onStderr: (child, text) => {
        const notes = text.match(/^argo: interrupted/gm)?.length ?? 0;
        if (notes === 1 && child.stdin?.writable) child.stdin.write('second\n');
        if (notes === 2) child.stdin?.end();
      },
    });
    // The chat went on after each Ctrl-C and ended with its input; its answers were cut short, so
    // it exits 130 as a one-liner stopped by Ctrl-C does.
    expect(result.signal).toBeNull();
    expect(result.code).toBe(130);
    expect(logLines(home).map((line) => [line.user_prompt, line.status])).toEqual([
      ['first', 'interrupted'],
      ['second', 'interrupted'],
    ]);
  });

  it.each([
    ['SIGINT', 130, 'argo: interrupted (logged as interrupted)\n', 'interrupted by the user', ['third']],
    ['SIGTERM', 143, 'argo: terminated (SIGTERM) (logged as interrupted)\n', 'interrupted by SIGTERM', []],
  ] as const)('a Ctrl-C at the prompt of a piped chat no longer counts: %s mid-answer later cuts that answer, logged interrupted, exit %i', async (signal, code, told, error, after) => {
    const home = tempHome();
    const seen = { stdout: '', stderr: '' };
    // /stats answers on stderr, a line each time ("prompt N tokens · …").
    const withoutStats = (text: string): string => text.replace(/^prompt \d+ tokens.*\n/gm, '');
    const statsShown = (): number => seen.stderr.split(/^prompt \d+ tokens/m).length - 1;
    const drive = async (child: ChildProcess): Promise<void> => {
      const send = (text: string): void => {
        if (child.stdin?.writable === true) child.stdin.write(text);
      };
      await waitFor(() => expect(seen.stdout).toContain('You said: first\n'));
      // Answered only once the first turn is over: the chat is idle at its prompt.
      send('/stats\n');
      await waitFor(() => expect(statsShown()).toBe(1));
      child.kill('SIGINT');
      // Node runs a signal's handlers after the input read in the same turn of its event loop: two
      // commands answered one after the other after the kill prove the chat has had the signal.
      for (const shown of [2, 3]) {
        send('/stats\n');
        await waitFor(() => expect(statsShown()).toBe(shown));
      }
      ollama.setScenario({ holdAfter: 1 });
      send('second\n');
      await ollama.waitForHold();
      child.kill(signal);
      if (signal === 'SIGTERM') return;
      await waitFor(() => expect(withoutStats(seen.stderr)).toBe(told));
      ollama.setScenario(undefined);
      send('third\n');
      await waitFor(() => expect(seen.stdout).toContain('You said: third\n'));
      child.stdin?.end();
    };
    const result = await drivenChat('talk', home, seen, drive);
    expect(result).toMatchObject({ code, signal: null });
    expect(withoutStats(result.stderr)).toBe(told);
    expect(logLines(home).map((line) => [line.user_prompt, line.status, line.error])).toEqual([
      ['first', 'ok', null],
      ['second', 'interrupted', error],
      ...after.map((prompt) => [prompt, 'ok', null]),
    ]);
  });

  it('a Ctrl-C at the prompt of a piped chat never stops the answer to a line sent right after it (read, maybe, before the signal)', async () => {
    const home = tempHome();
    const seen = { stdout: '' };
    const drive = async (child: ChildProcess): Promise<void> => {
      await waitFor(() => expect(logLines(home)).toHaveLength(1));
      ollama.setScenario({ holdAfter: 1 });
      child.kill('SIGINT');
      child.stdin?.write('Write a long story\n');
      // The answer is asked for well after the signal and the line were both handled.
      await ollama.waitForHold();
      ollama.release();
      await waitFor(() => expect(seen.stdout).toContain('You said: Write a long story\n'));
      child.stdin?.end();
    };
    const result = await drivenChat('notes', home, seen, drive);
    expect(result).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(logLines(home).map((line) => [line.user_prompt, line.status])).toEqual([
      ['first', 'ok'],
      ['Write a long story', 'ok'],
    ]);
  });

  it.each([
    ['SIGTERM', ['SIGTERM'], 143, /^argo: terminated \(SIGTERM\) \(logged as interrupted\)\n$/, /^interrupted by SIGTERM$/],
    ['SIGHUP', ['SIGHUP'], 129, /^argo: hung up \(SIGHUP\) \(logged as interrupted\)\n$/, /^interrupted by SIGHUP \(the terminal closed\)$/],
    // Both pending at once, either may be taken first: the turn names the one that cut it, on the one line.
    ['Ctrl-C and SIGHUP together', ['SIGINT', 'SIGHUP'], 129, /^argo: (interrupted|hung up \(SIGHUP\)) \(logged as interrupted\)\n$/, /^interrupted by (the user|SIGHUP \(the terminal closed\))$/],
  ] as const)('%s mid-answer ends the chat (its input still open): the turn is cut and logged interrupted, the line read after it is not sent, one line, exit %i', async (_name, signals, code, told, error) => {
    const home = tempHome();
    let asked = false;
    const result = await runArgo(['chat', '-s', 'talk'], {
      home,
      host: ollama.url,
      stdin: 'first\n',
      keepStdinOpen: true,
      onStdout: (child, text) => {
        if (asked || !text.includes('You said: first\n')) return;
        asked = true;
        // The next answer is held after its first chunk; the chat has read the line after it by then.
        ollama.setScenario({ holdAfter: 1 });
        child.stdin?.write('second\nthird\n');
        void ollama.waitForHold().then(() => {
          for (const signal of signals) child.kill(signal);
        });
      },
    });
    expect(result).toMatchObject({ code, signal: null });
    expect(result.stderr).toMatch(told);
    expect(logLines(home).map((line) => [line.user_prompt, line.status, line.error])).toEqual([
      ['first', 'ok', null],
      ['second', 'interrupted', expect.stringMatching(error)],
    ]);
    expect(modelBodies()).toHaveLength(2);
    const held = ollama.requests.at(-1);
    await held?.settled;
    expect(held?.clientAborted).toBe(true);
  });

  it.each([
    ['SIGTERM', 143, 'argo: terminated (SIGTERM)\n'],
    ['SIGHUP', 129, 'argo: hung up (SIGHUP)\n'],
  ] as const)('%s while the chat waits for its next line ends it at once with one line, exit %i; the turn before is kept', async (signal, code, told) => {
    const home = tempHome();
    const result = await runArgo(['chat', '-s', 'talk'], {
      home,
      host: ollama.url,
      stdin: 'first\n',
      keepStdinOpen: true,
      onSpawn: (child) => void waitFor(() => expect(logLines(home)).toHaveLength(1)).then(() => child.kill(signal)),
    });
    expect(result).toMatchObject({ code, signal: null, stdout: 'You said: first\n', stderr: told });
    expect(logLines(home).map((line) => [line.user_prompt, line.status])).toEqual([['first', 'ok']]);
  });

  it('argo last and -c with no readable session say why: none yet, or a damaged record to remove', async () => {
    const home = tempHome();
    expect(await argo(['last'], home)).toMatchObject({ code: 2, stderr: 'argo: last: there is no session yet; ask something first (argo "…")\n' });
    mkdirSync(join(home, 'sessions'), { recursive: true });
    writeFileSync(join(home, 'sessions', 'default.json'), 'garbage');
    for (const [args, where] of [[['last'], 'last'], [['-c', 'hi'], '--continue']] as const) {
      const result = await argo([...args], home);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^argo: ${where}: no session can be read: .*default\\.json is damaged \\(.*\\); argo sessions rm default removes it, argo -s NAME starts another\\n$`));
    }
  });

  it('argo last prints the last answer of the most recently used session; N, -s, --json', async () => {
    const home = tempHome();
    await argo(['chat', '-s', 'a'], home, { stdin: 'first\nsecond\n' });
    await argo(['-s', 'b', 'third'], home);
    expect((await argo(['last'], home)).stdout).toBe('You said: third\n');
    expect((await argo(['last', '2', '-s', 'a'], home)).stdout).toBe('You said: first\n\nYou said: second\n');
    const json = (await argo(['last', '-s', 'a', '--json'], home)).stdout;
    expect((JSON.parse(json) as { user_prompt: string }).user_prompt).toBe('second');
  });

  it.each([
    ['no session named: the most recently used', [], {}, undefined, 'b'],
    ['ARGO_SESSION', [], { ARGO_SESSION: 'a' }, undefined, 'a'],
    ['config "session"', [], {}, { session: 'a' }, 'a'],
    ['ARGO_SESSION over config', [], { ARGO_SESSION: 'a' }, { session: 'b' }, 'a'],
    ['-s over ARGO_SESSION', ['-s', 'b'], { ARGO_SESSION: 'a' }, undefined, 'b'],
  ])('argo last reads the session a question would use: %s', async (_case, args, env, config, session) => {
    const home = tempHome(config);
    await argo(['-s', 'a', 'in a'], home);
    await argo(['-s', 'b', 'in b'], home);
    expect(await argo(['last', ...args], home, { env })).toMatchObject({ code: 0, stdout: `You said: in ${session}\n`, stderr: '' });
  });

  it('argo last with ARGO_SESSION naming no session says where the name came from', async () => {
    const home = tempHome();
    await argo(['-s', 'a', 'in a'], home);
    expect(await argo(['last'], home, { env: { ARGO_SESSION: 'nope' } })).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'argo: no session named "nope" (from ARGO_SESSION); argo sessions lists them\n',
    });
  });

  it('argo last says on stderr when the turn failed: no answer to copy, and where to see why', async () => {
    const home = tempHome();
    await argo(['-s', 'a', 'fine'], home);
    expect(await argo(['-s', 'a', '--host', 'http://127.0.0.1:1', 'down'], home)).toMatchObject({ code: 1 });
    const failed = logLines(home).at(-1);
    expect(failed).toMatchObject({ status: 'error', model_response: '' });
    // Nothing to print for it, and a failure: `argo last > answer.txt && publish` publishes nothing.
    expect(await argo(['last', '2'], home)).toEqual(
      expect.objectContaining({ code: 1, stdout: 'You said: fine\n', stderr: `argo: turn ${String(failed?.id)} ended "error", so it has no answer (argo last 2 -s a --full shows why)\n` }),
    );
    expect(await argo(['last'], home)).toEqual(
      expect.objectContaining({ code: 1, stdout: '', stderr: `argo: turn ${String(failed?.id)} ended "error", so it has no answer (argo last -s a --full shows why)\n` }),
    );
    expect(await argo(['last', '--json'], home)).toMatchObject({ code: 0 });
    expect((await argo(['last', '--full'], home)).stdout).toContain('(the connection to Ollama at http://127.0.0.1:1 failed before an answer');
  });

  it('argo last exits 1 for a turn that failed mid-answer: its partial text is printed, said partial on stderr, and `argo last > f && publish` publishes nothing', async () => {
    const home = tempHome();
    ollama.setScenario({ errorMidStream: { afterChunks: 2, message: 'runner crashed' } });
    expect(await argo(['-s', 'a', 'cut me'], home)).toMatchObject({ code: 1 });
    const failed = logLines(home).at(-1);
    expect(failed).toMatchObject({ status: 'error' });
    const partial = String(failed?.model_response);
    expect(partial).not.toBe('');
    expect(await argo(['last'], home)).toEqual(
      expect.objectContaining({ code: 1, stdout: `${partial}\n`, stderr: `argo: turn ${String(failed?.id)} ended "error", so its answer is partial (argo last -s a --full shows why)\n` }),
    );
    // As logged or for reading, the turn is shown whole: nothing partial about what they print.
    expect(await argo(['last', '--json'], home)).toMatchObject({ code: 0 });
    expect(await argo(['last', '--full'], home)).toMatchObject({ code: 0 });
  });
});

describe('argo completion', () => {
  it('prints a bash script that completes commands and asks argo for session names', async () => {
    const home = tempHome();
    await argo(['-s', 'work', 'hi'], home);
    const script = (await argo(['completion', 'bash'], home)).stdout;
    expect(script).toContain('complete -o default -F _argo argo');
    // With --home before it, the script still names every command.
    expect((await argo(['--home', home, 'completion', 'bash'], home)).stdout).toBe(script);
    expect(script).toContain('rerun');
    const sessions = await argo(['__complete', 'sessions'], home);
    expect(sessions.stdout).toBe('work\n');
    const models = await argo(['__complete', 'models'], home);
    expect(models.stdout).toBe('argo:latest\nllama3:8b\ntiny:latest\n');
    expect((await argo(['completion', 'tcsh'], home)).code).toBe(2);
  });

  it('model names from an Ollama that never answers: nothing, within MODEL_NAMES_MS, not timeouts.idleMs', async () => {
    // Takes the connection and says nothing, as a stuck Ollama does.
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const started = Date.now();
      const result = await runArgo(['__complete', 'models'], { home: tempHome(), host: `http://127.0.0.1:${port}` });
      const took = Date.now() - started;
      expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
      // The shell waits this long at most; idleMs (120 s by default) is two orders of magnitude more.
      expect(took).toBeGreaterThanOrEqual(MODEL_NAMES_MS);
      expect(took).toBeLessThan(MODEL_NAMES_MS + 5000);
    } finally {
      silent.close();
    }
  });
});

describe('doctor --json', () => {
  it('one object with every check; the missing model hint says how to create argo, and suggests a model that can answer', async () => {
    const home = tempHome();
    // Listed first, but an embedding model cannot answer: never the one suggested.
    const fresh = await startFakeOllama({ models: [{ name: 'all-minilm:latest', capabilities: ['embedding'] }, { name: 'llama3:8b' }] });
    try {
      const result = await runArgo(['doctor', '--json'], { home, host: fresh.url });
      expect(result.code).toBe(1);
      const report = JSON.parse(result.stdout) as { ok: boolean; checks: { check: string; ok: boolean; detail: string }[] };
      expect(report.ok).toBe(false);
      expect(report.checks.map((check) => check.check)).toEqual(['config', 'data', 'unfinished', 'ollama', 'model']);
      expect(report.checks.find((check) => check.check === 'model')?.detail).toBe(`argo is not installed (installed: all-minilm:latest, llama3:8b); create it with "ollama create argo -f ${MODELFILE}", or use an installed one (--model llama3:8b)`);
      const asked = await runArgo(['hi'], { home, host: fresh.url });
      expect(asked.stderr).toContain(`Create it with "ollama create argo -f ${MODELFILE}", or use an installed one (--model llama3:8b)`);
    } finally {
      await fresh.close();
    }
  });

  it('an unreachable Ollama is described in plain words', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
      });
    });
    const result = await runArgo(['doctor'], { home: tempHome(), host: `http://127.0.0.1:${closedPort}` });
    expect(result.stdout).toContain(`FAIL  ollama     cannot reach Ollama at http://127.0.0.1:${closedPort} (connection refused); start it with "ollama serve"`);
    const blocked = await runArgo(['doctor'], { home: tempHome(), host: 'http://127.0.0.1:9' });
    expect(blocked.stdout).toContain('(HTTP clients refuse that port; run Ollama on another one)');
    expect(statSync(ARGO_BIN).isFile()).toBe(true);
  });
});
