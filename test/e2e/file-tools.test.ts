// The file tools end to end where a unit test cannot go: files this user may not read or write (as
// root, argo runs as nobody), a --root named through a link, and the question a rewrite asks at a
// terminal.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { FakeToolCall } from '../support/fake-ollama.js';
import { scriptRounds } from '../support/fake-ollama.js';
import { fakeOllamaPerFile } from '../support/fake-ollama-hooks.js';
import { startInPty } from '../support/pty.js';
import { logLines, runArgo, tempHome } from '../support/run-argo.js';

const ollama = await fakeOllamaPerFile({ models: [{ name: 'argo:latest', capabilities: ['completion', 'tools'] }] });
beforeEach(() => {
  ollama.requests.length = 0;
});

const call = (name: string, args: Record<string, unknown>): FakeToolCall => ({ function: { name, arguments: args } });

/** The tool messages the model was sent back, parsed. */
function toolResults(): Record<string, unknown>[] {
  return ollama
    .chatBodies()
    .flatMap((body) => (body.messages ?? []) as { role: string; content: string }[])
    .filter((message) => message.role === 'tool')
    .map((message) => JSON.parse(message.content) as Record<string, unknown>);
}

const FOLDER_NOT_WRITABLE =
  'cannot write "ro/f.txt": its folder is not writable, and an edit or an overwrite replaces the file through a temporary file beside it (write_file with mode "append" still works); the folder\'s permissions must change first';

describe.runIf(process.platform === 'linux' && process.getuid?.() === 0)('files argo may not read or write (argo runs as nobody)', () => {
  const nobody = { uid: 65534, gid: 65534 };
  /** A root and a data home of nobody's: notes.txt, secret.txt nobody may not read, ro/ and ro.txt nobody may not write, ro/f.txt nobody may write. */
  function setUp(): { root: string; home: string } {
    // The run's temporary folder is root's: nobody may pass through it, not list it.
    chmodSync(tmpdir(), statSync(tmpdir()).mode | 0o001);
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-files-nobody-')));
    const home = tempHome();
    writeFileSync(join(root, 'notes.txt'), 'the word is heron\n');
    writeFileSync(join(root, 'secret.txt'), 'the word is hidden\n');
    mkdirSync(join(root, 'ro'));
    writeFileSync(join(root, 'ro.txt'), 'kept\n');
    writeFileSync(join(root, 'ro', 'f.txt'), 'kept\n');
    for (const path of [root, home, join(root, 'notes.txt'), join(root, 'secret.txt'), join(root, 'ro'), join(root, 'ro.txt'), join(root, 'ro', 'f.txt')]) chownSync(path, nobody.uid, nobody.gid);
    chmodSync(join(root, 'secret.txt'), 0o000);
    chmodSync(join(root, 'ro'), 0o555);
    chmodSync(join(root, 'ro.txt'), 0o444);
    return { root, home };
  }
  const run = (home: string, root: string, tools: string, calls: FakeToolCall[]) => {
    scriptRounds(ollama, [{ toolCalls: calls }, { reply: 'Done.' }]);
    return runArgo(['-T', tools, '--yes', '--root', root, 'go'], { home, host: ollama.url, user: nobody });
  };

  it.each<[string, string, FakeToolCall, string]>([
    ['read_file of a file it may not read', 'fs', call('read_file', { path: 'secret.txt' }), 'cannot open "secret.txt": permission denied'],
    ['write_file in a folder it may not write', 'edit', call('write_file', { path: 'ro/new.txt', content: 'x' }), 'cannot write "ro/new.txt": permission denied'],
    ['write_file over a file it may not write', 'edit', call('write_file', { path: 'ro.txt', content: 'x' }), 'cannot write "ro.txt": permission denied'],
    ['edit_file of a file it may not write, though its folder is writable', 'edit', call('edit_file', { path: 'ro.txt', old: 'kept', new: 'changed' }), 'cannot write "ro.txt": permission denied'],
    ['edit_file of a file it may write in a folder it may not', 'edit', call('edit_file', { path: 'ro/f.txt', old: 'kept', new: 'changed' }), FOLDER_NOT_WRITABLE],
    ['write_file over a file it may write in a folder it may not', 'edit', call('write_file', { path: 'ro/f.txt', content: 'x' }), FOLDER_NOT_WRITABLE],
  ])('%s: said in words, for good, after one round; nothing changes', async (_name, tools, toolCall, message) => {
    const { root, home } = setUp();
    const result = await run(home, root, tools, [toolCall]);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n').filter((line) => line.includes(' failed'))).toEqual([
      `argo: tool ${toolCall.function.name} failed: ${message}`,
      `argo: tool ${toolCall.function.name} failed and retrying cannot help (${message}); see argo logs --status tool_failures (logged as tool_failures)`,
    ]);
    expect(result.stderr).not.toContain('/proc/');
    expect(ollama.chatBodies()).toHaveLength(1);
    // The path Argo wrote through (/proc/self/fd/N/…, a temporary name) is nowhere.
    expect(JSON.stringify(logLines(home))).not.toContain('/proc/');
    expect(logLines(home)[0]).toMatchObject({ status: 'tool_failures', tool_calls: [{ outcome: 'failure', error: message }] });
    expect(readFileSync(join(root, 'ro.txt'), 'utf8')).toBe('kept\n');
    expect(readFileSync(join(root, 'ro', 'f.txt'), 'utf8')).toBe('kept\n');
    expect(readdirSync(join(root, 'ro'))).toEqual(['f.txt']);
  });

  it('an append to a file it may write in a folder it may not goes through', async () => {
    const { root, home } = setUp();
    expect(await run(home, root, 'edit', [call('write_file', { path: 'ro/f.txt', content: 'more\n', mode: 'append' })])).toMatchObject({ code: 0, stdout: 'Done.\n' });
    expect(readFileSync(join(root, 'ro', 'f.txt'), 'utf8')).toBe('kept\nmore\n');
  });

  it('search_files passes over a file it may not read, and says so', async () => {
    const { root, home } = setUp();
    expect(await run(home, root, 'fs', [call('search_files', { pattern: 'the word' })])).toMatchObject({ code: 0, stdout: 'Done.\n' });
    expect(toolResults()).toEqual([{ skipped: { unreadable: 1 }, matches: [{ file: 'notes.txt', line: 1, text: 'the word is heron' }] }]);
  });
});

describe('calls on one file in a round', () => {
  it('run in the order the model made them, every time: an overwrite, an append, an edit of what was appended', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-files-order-')));
    for (let run = 0; run < 8; run++) {
      const path = `q${run}.txt`;
      scriptRounds(ollama, [
        { toolCalls: [call('write_file', { path, content: 'A\n' }), call('write_file', { path, content: 'B\n', mode: 'append' }), call('edit_file', { path, old: 'B', new: 'C' })] },
        { reply: 'Done.' },
      ]);
      expect(await runArgo(['-T', 'edit', '--yes', '--root', root, 'go'], { home: tempHome(), host: ollama.url })).toMatchObject({ code: 0, stdout: 'Done.\n' });
      expect(readFileSync(join(root, path), 'utf8')).toBe('A\nC\n');
    }
  });
});

describe('a --root named through a link', () => {
  it('takes absolute paths through the link, for the file tools and run_command alike', async () => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'argo-files-linked-')));
    mkdirSync(join(base, 'real', 'src'), { recursive: true });
    writeFileSync(join(base, 'real', 'notes.txt'), 'the word is heron\n');
    symlinkSync(join(base, 'real'), join(base, 'link'));
    const link = join(base, 'link');
    scriptRounds(ollama, [{ toolCalls: [call('read_file', { path: join(link, 'notes.txt') }), call('write_file', { path: join(link, 'made.txt'), content: 'made\n' }), call('run_command', { command: 'pwd', cwd: join(link, 'src') })] }, { reply: 'Done.' }]);
    const result = await runArgo(['-T', 'fs,edit,shell', '--yes', '--root', link, 'go'], { home: tempHome(), host: ollama.url });
    expect(result).toMatchObject({ code: 0, stdout: 'Done.\n' });
    expect(toolResults()).toEqual([
      { path: 'notes.txt', from_line: 1, to_line: 1, content: 'the word is heron' },
      { path: 'made.txt', mode: 'overwrite', bytes_written: 5, created: true },
      { exit_code: 0, stdout: `${join(base, 'real', 'src')}\n`, stderr: '' },
    ]);
    expect(readFileSync(join(base, 'real', 'made.txt'), 'utf8')).toBe('made\n');
  });
});

describe('the question before a write, at a terminal', () => {
  const numbered = (count: number, word: string): string => Array.from({ length: count }, (_, index) => `${word} ${index + 1}\n`).join('');

  it('a rewrite of every line of a long file is asked about at once, in one line, and written on "y"', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-files-tty-')));
    writeFileSync(join(root, 'big.txt'), numbered(15_000, 'old'));
    const content = numbered(15_000, 'new');
    scriptRounds(ollama, [{ toolCalls: [call('write_file', { path: 'big.txt', content })] }, { reply: 'Rewritten.' }]);
    const terminal = startInPty(['-T', 'edit', '--root', root, 'rewrite it'], { home: tempHome(), host: ollama.url });
    await terminal.waitFor('Allow? [y/N]');
    expect(terminal.output).toMatch(/argo: write_file wants to run:\r\n--- a\/big\.txt\r\n\+\+\+ b\/big\.txt\r\n\[old: 15,000 lines, new: 15,000 lines; too different to show line by line\]\r\nAllow\? \[y\/N\]/);
    terminal.write('y\r');
    expect((await terminal.exited).code).toBe(0);
    expect(readFileSync(join(root, 'big.txt'), 'utf8')).toBe(content);
  });

  it('a new file of many lines shows its first lines and says how many more there are; Ctrl-C at the question stops the run', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-files-tty-')));
    scriptRounds(ollama, [{ toolCalls: [call('write_file', { path: 'made.txt', content: numbered(3000, 'line') })] }, { reply: 'never' }]);
    const terminal = startInPty(['-T', 'edit', '--root', root, 'make it'], { home: tempHome(), host: ollama.url, rows: 1000 });
    await terminal.waitFor('Allow? [y/N]');
    expect(terminal.output).toContain('+line 497\r\n[… 2,503 more lines of the diff not shown: 0 removed and 3,000 added in all]\r\nAllow? [y/N]');
    expect(terminal.output).not.toContain('+line 498');
    terminal.write('\x03');
    expect((await terminal.exited).code).toBe(130);
  });
});
