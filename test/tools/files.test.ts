import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { editFileTool, writeFileTool } from '../../src/tools/edit.js';
import { GLOB_PATTERNS_MOST, READ_CAP_BYTES, SEARCH_PATTERN_MS, listFilesTool, readFileTool, searchFilesTool } from '../../src/tools/fs.js';
import { confinementOf, fileFailure, isInside, resolveInRoot, rootOnly } from '../../src/tools/root.js';
import { HeldFolder, READ_FLAGS, openInRoot, writeInFolder } from '../../src/tools/root-files.js';
import { runCommandTool } from '../../src/tools/shell.js';
import { ToolError } from '../../src/tools/types.js';
import type { Tool, ToolContext } from '../../src/tools/types.js';
import { defined } from '../support/defined.js';

const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0;

let base: string;
let root: string;
let outside: string;
let context: ToolContext;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'argo-tools-')));
  root = join(base, 'root');
  outside = join(base, 'outside');
  mkdirSync(join(root, 'src', 'deep'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'lines.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  writeFileSync(join(root, 'lines.log'), Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n// TODO later\n');
  writeFileSync(join(root, 'src', 'deep', 'b.ts'), 'export const b = 2;\n');
  writeFileSync(join(root, 'binary.bin'), Buffer.from([1, 2, 0, 3]));
  writeFileSync(join(root, 'big.txt'), `${'x'.repeat(1000)}\n`.repeat(60));
  writeFileSync(join(outside, 'secret.txt'), 'secret\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link-out.txt'));
  symlinkSync(outside, join(root, 'dir-out'));
  symlinkSync(join(root, 'lines.txt'), join(root, 'link-in.txt'));
  symlinkSync(join(outside, 'nothing-yet.txt'), join(root, 'dangling-out.txt'));
  symlinkSync(join(root, 'src'), join(root, 'src-link'));
  // A name that starts with two dots is a name, not a step up.
  writeFileSync(join(root, '..notes'), 'kept inside\n');
  // A link to a folder inside the root: a new file through it is the folder's.
  mkdirSync(join(root, 'sub'));
  symlinkSync(join(root, 'sub'), join(root, 'inner'));
  // Links to nothing inside the root: a file, a folder, a link to a link.
  symlinkSync('not-yet.txt', join(root, 'dangling-in.txt'));
  symlinkSync('sub/none', join(root, 'dangling-dir'));
  symlinkSync('dangling-in.txt', join(root, 'dangling-chain.txt'));
  // The root named through a link, as a --root that is one.
  symlinkSync(root, join(base, 'root-link'));
  context = { root, home: join(base, 'home'), signal: new AbortController().signal };
});

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError);
    return (error as Error).message;
  }
  throw new Error('expected a tool error');
}

describe('root confinement', () => {
  it.each([
    ['lines.txt', 'lines.txt'],
    ['./src/../lines.txt', 'lines.txt'],
    ['link-in.txt', 'lines.txt'],
    ['new/dir/file.txt', 'new/dir/file.txt'],
    ['..notes', '..notes'],
    ['src/../..notes', '..notes'],
    // A path not there yet is resolved through the real path of its nearest existing folder.
    ['inner/new.txt', 'sub/new.txt'],
    ['inner/new/dir/file.txt', 'sub/new/dir/file.txt'],
  ])('%s resolves inside the root', async (path, expected) => {
    expect(await resolveInRoot(rootOnly(root), path, 'write')).toBe(join(root, expected));
  });

  it.each(['../outside/secret.txt', '/etc/passwd', 'link-out.txt', 'dir-out/secret.txt', 'dir-out/new.txt', '..', '/nowhere/new.txt', '/'])('%s is refused', async (path) => {
    expect(await failure(resolveInRoot(rootOnly(root), path, 'write'))).toBe(`path "${path}" is outside the root directory; use a path inside it`);
  });

  // The root named through a link (a --root that is one, macOS's /tmp): an absolute path through it is inside.
  it.each<[string, string]>([
    ['root-link/lines.txt', 'lines.txt'],
    ['root-link', '.'],
    ['root-link/src/../lines.txt', 'lines.txt'],
    ['root-link/new/dir/file.txt', 'new/dir/file.txt'],
    ['root-link/inner/new.txt', 'sub/new.txt'],
  ])('the absolute path <base>/%s through a link to the root resolves to %s', async (path, expected) => {
    expect(await resolveInRoot(rootOnly(root), join(base, path), 'write')).toBe(join(root, expected));
  });

  it.each(['root-link/../outside/secret.txt', 'root-link/link-out.txt', 'root-link/dir-out/new.txt', 'outside/secret.txt'])('the absolute path <base>/%s is refused', async (path) => {
    expect(await failure(resolveInRoot(rootOnly(root), join(base, path), 'write'))).toBe(`path "${join(base, path)}" is outside the root directory; use a path inside it`);
  });

  it('the file tools and run_command take an absolute path through a link to the root', async () => {
    expect(await readFileTool.run({ path: join(base, 'root-link', 'lines.txt'), limit: 1 }, context)).toMatchObject({ path: 'lines.txt', content: 'line 1' });
    expect(await writeFileTool.run({ path: join(base, 'root-link', 'through-root-link.txt'), content: 'x\n' }, context)).toMatchObject({ path: 'through-root-link.txt', created: true });
    expect(readFileSync(join(root, 'through-root-link.txt'), 'utf8')).toBe('x\n');
    expect((await runCommandTool.run({ command: 'pwd', cwd: join(base, 'root-link', 'src') }, context)).stdout).toBe(`${join(root, 'src')}\n`);
  });

  // No file is made through a link; one to a place inside the root is named, for the model to use.
  it.each<[string, string]>([
    ['dangling-out.txt', 'path "dangling-out.txt" is a symbolic link to a place outside the root directory; use a path inside it'],
    ['dangling-in.txt', '"dangling-in.txt" is a symbolic link to "not-yet.txt", which does not exist; the file tools never make a file through a link: use the path "not-yet.txt" itself'],
    ['dangling-dir/new.txt', '"dangling-dir/new.txt" is a symbolic link to "sub/none/new.txt", which does not exist; the file tools never make a file through a link: use the path "sub/none/new.txt" itself'],
    ['dangling-chain.txt', '"dangling-chain.txt" is a symbolic link to "not-yet.txt", which does not exist; the file tools never make a file through a link: use the path "not-yet.txt" itself'],
  ])('%s, a link to nothing, is refused saying where it leads', async (path, message) => {
    expect(await failure(resolveInRoot(rootOnly(root), path, 'write'))).toBe(message);
    expect(await failure(writeFileTool.run({ path, content: 'x' }, context))).toBe(message);
    expect(readdirSync(root)).not.toContain('not-yet.txt');
  });

  // A path to read, list or edit through a link to nothing does not exist: said so, naming where it leads.
  it.each<[string, Record<string, unknown>, string]>([
    ['read_file', { path: 'dangling-in.txt' }, 'file "dangling-in.txt" does not exist (it is a symbolic link to "not-yet.txt", which does not exist)'],
    ['read_file', { path: 'dangling-chain.txt' }, 'file "dangling-chain.txt" does not exist (it is a symbolic link to "not-yet.txt", which does not exist)'],
    ['read_file', { path: 'dangling-dir/new.txt' }, 'file "dangling-dir/new.txt" does not exist (it leads through a symbolic link to "sub/none/new.txt", which does not exist)'],
    ['read_file', { path: 'dangling-out.txt' }, 'path "dangling-out.txt" is a symbolic link to a place outside the root directory; use a path inside it'],
    ['edit_file', { path: 'dangling-in.txt', old: 'a', new: 'b' }, 'file "dangling-in.txt" does not exist (it is a symbolic link to "not-yet.txt", which does not exist)'],
    ['list_files', { pattern: '*', path: 'dangling-dir' }, 'directory "dangling-dir" does not exist (it is a symbolic link to "sub/none", which does not exist)'],
    ['search_files', { pattern: 'x', path: 'dangling-dir' }, 'directory "dangling-dir" does not exist (it is a symbolic link to "sub/none", which does not exist)'],
    ['run_command', { command: 'true', cwd: 'dangling-dir' }, 'directory "dangling-dir" does not exist (it is a symbolic link to "sub/none", which does not exist)'],
  ])('%s %j through a link to nothing says the path does not exist', async (tool, args, message) => {
    const run = { read_file: readFileTool, edit_file: editFileTool, list_files: listFilesTool, search_files: searchFilesTool, run_command: runCommandTool }[tool];
    expect(await failure(defined(run).run(args, context))).toBe(message);
    expect(readdirSync(root)).not.toContain('not-yet.txt');
  });

  it.each<[string, Record<string, unknown>]>([
    ['read_file', { path: 'lines.txt/' }],
    ['write_file', { path: 'zzz/', content: 'x' }],
    ['write_file', { path: 'zzz/.', content: 'x' }],
    ['edit_file', { path: 'lines.txt/', old: 'line 1', new: 'x' }],
  ])('%s %j: a path ending in "/" names a folder, refused; nothing is made', async (tool, args) => {
    const run = { read_file: readFileTool, write_file: writeFileTool, edit_file: editFileTool }[tool];
    expect(await failure(defined(run).run(args, context))).toBe(`"${String(args.path)}" ends in "/", so it names a folder; give the path of a file`);
    expect(readdirSync(root)).not.toContain('zzz');
  });

  it.each<[string, Record<string, unknown>]>([
    ['write_file', { path: 'src', content: 'x' }],
    ['write_file', { path: 'src', content: 'x', mode: 'append' }],
    ['edit_file', { path: 'src', old: 'a', new: 'b' }],
  ])('%s %j on a folder says so, naming it', async (tool, args) => {
    const run = tool === 'write_file' ? writeFileTool : editFileTool;
    expect(await failure(run.run(args, context))).toBe('"src" is a directory, not a file');
  });

  it.each<[string, NodeJS.ErrnoException | Error, string | null, boolean]>([
    // error, what the tool says (null: the error as it is), whether retrying may help
    ['EACCES', Object.assign(new Error('EACCES: permission denied, open \'/proc/self/fd/21/.x.txt.1234.tmp\''), { code: 'EACCES' }), 'cannot write "d/x.txt": permission denied', false],
    ['EPERM', Object.assign(new Error('EPERM'), { code: 'EPERM' }), 'cannot write "d/x.txt": not permitted', false],
    ['EROFS', Object.assign(new Error('EROFS'), { code: 'EROFS' }), 'cannot write "d/x.txt": the file system is read-only', false],
    ['ENOSPC', Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }), 'cannot write "d/x.txt": no space left on the device', false],
    ['EDQUOT', Object.assign(new Error('EDQUOT'), { code: 'EDQUOT' }), 'cannot write "d/x.txt": the disk quota is used up', false],
    // A path the model can change: another call may succeed.
    ['ELOOP', Object.assign(new Error('ELOOP'), { code: 'ELOOP' }), 'cannot write "d/x.txt": too many symbolic links', true],
    ['ENAMETOOLONG', Object.assign(new Error('ENAMETOOLONG'), { code: 'ENAMETOOLONG' }), 'cannot write "d/x.txt": the name is too long', true],
    ['EMFILE', Object.assign(new Error('EMFILE'), { code: 'EMFILE' }), 'cannot write "d/x.txt": argo has too many files open', true],
    ['EIO, a code without words', Object.assign(new Error('EIO'), { code: 'EIO' }), 'cannot write "d/x.txt" (EIO)', true],
    ['an error without a code (a bug)', new Error('oops'), null, true],
  ])('fileFailure: %s', (_name, error, message, retryable) => {
    const said = fileFailure(error, 'd/x.txt', 'write');
    if (message === null) {
      expect(said).toBe(error);
      return;
    }
    expect(said).toBeInstanceOf(ToolError);
    expect(said).toMatchObject({ message, retryable });
  });

  it.each<[string, string, string]>([
    // tool, path, what it says
    ['read_file', 'x'.repeat(300), `cannot open "${'x'.repeat(300)}": the name is too long`],
    ['write_file', 'x'.repeat(300), `cannot open "${'x'.repeat(300)}": the name is too long`],
    ['read_file', 'loop', 'cannot open "loop": too many symbolic links'],
    ['write_file', 'loop', 'cannot open "loop": too many symbolic links'],
    ['list_files', 'loop', 'cannot open "loop": too many symbolic links'],
  ])('%s on a path the model can change (%#) fails so that it may retry with another', async (tool, path, message) => {
    const own = realpathSync(mkdtempSync(join(tmpdir(), 'argo-tools-path-')));
    symlinkSync('loop', join(own, 'loop'));
    const run = { read_file: readFileTool, write_file: writeFileTool, list_files: listFilesTool }[tool];
    await expect(defined(run).run(tool === 'write_file' ? { path, content: 'x' } : { path }, { ...context, root: own })).rejects.toMatchObject({ message, retryable: true });
  });

  it('fileFailure leaves a tool error as it is', () => {
    const error = new ToolError('said already', false);
    expect(fileFailure(error, 'x', 'read')).toBe(error);
  });

  it.each<[string, string, boolean]>([
    // root, path, inside
    ['/r', '/r', true],
    ['/r', '/r/a.txt', true],
    ['/r', '/r/..notes', true],
    ['/r', '/r/...', true],
    ['/r', '/r/..a/b', true],
    ['/r', '/r/a/../..notes', true],
    ['/r', '/', false],
    ['/r', '/r/..', false],
    ['/r', '/r/../x', false],
    ['/r', '/r-x/a.txt', false],
    ['/r', '/..notes', false],
  ])('isInside(%j, %j) = %s', (rootPath, path, inside) => {
    expect(isInside(rootPath, path)).toBe(inside);
  });

  it('an absolute path inside the root is fine', async () => {
    expect(await resolveInRoot(rootOnly(root), join(root, 'src'), 'write')).toBe(join(root, 'src'));
  });
});

describe('a file checked where it is once open (a link swapped into its path meanwhile)', () => {
  const changed = (path: string) => `"${path}" changed while it was opened (a folder on its way was replaced, perhaps by a link out of the root); try again`;

  // As if resolveInRoot had checked the path before dir-out became a link: the open is what must refuse it.
  it.each([true, false])('with /proc %s: a file inside opens; one reached through a link out, or a link as its last part, does not', async (proc) => {
    const handle = await openInRoot({ root, home: null }, join(root, 'lines.txt'), READ_FLAGS, 'lines.txt', { proc });
    expect((await handle.readFile('utf8')).startsWith('line 1\n')).toBe(true);
    await handle.close();
    expect(await failure(openInRoot({ root, home: null }, join(root, 'dir-out', 'secret.txt'), READ_FLAGS, 'd/secret.txt', { proc }))).toBe(changed('d/secret.txt'));
    expect(await failure(openInRoot({ root, home: null }, join(root, 'link-out.txt'), READ_FLAGS, 'f.txt', { proc }))).toBe(changed('f.txt'));
  });

  it.each([true, false])('with /proc %s: a folder is held from the root down, made where missing; a link on the way is refused', async (proc) => {
    const folder = await HeldFolder.open({ root, home: null }, join(root, 'held', proc ? 'proc' : 'path'), 'held/x.txt', { proc });
    try {
      await writeInFolder({ root, home: null }, folder, 'x.txt', 'one\n', 'overwrite', 'held/x.txt');
      await writeInFolder({ root, home: null }, folder, 'x.txt', 'two\n', 'append', 'held/x.txt');
      expect(await failure(writeInFolder({ root, home: null }, folder, 'x.txt', 'three\n', 'create', 'held/x.txt'))).toBe('"held/x.txt" already exists; use mode "overwrite" to replace it');
    } finally {
      await folder.close();
    }
    expect(readFileSync(join(root, 'held', proc ? 'proc' : 'path', 'x.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(await failure(HeldFolder.open({ root, home: null }, join(root, 'dir-out', 'deeper'), 'dir-out/deeper/x.txt', { proc }))).toBe(changed('dir-out/deeper/x.txt'));
    expect(await failure(HeldFolder.open({ root, home: null }, join(root, 'lines.txt', 'x'), 'lines.txt/x/y.txt', { proc }))).toBe('"lines.txt/x/y.txt" cannot be written: "lines.txt" on its way is a file, not a folder');
    expect(readdirSync(outside)).toEqual(['secret.txt']);
  });
});

describe("Argo's data home inside the root", () => {
  let project: string;
  let data: string;
  let inHome: ToolContext;
  const refused = (path: string) => `path "${path}" is inside Argo's data home (${data}), which the file tools may not use; use a path outside it (or run with a --root that does not hold the data home)`;
  beforeAll(() => {
    project = realpathSync(mkdtempSync(join(tmpdir(), 'argo-home-in-root-')));
    data = join(project, 'argo-data');
    mkdirSync(join(data, 'logs'), { recursive: true });
    writeFileSync(join(data, 'config.json'), '{"serve": {"apiKey": "k3y"}}\n');
    writeFileSync(join(data, 'logs', '2026-01-01.log'), '{"user_prompt": "apiKey"}\n');
    writeFileSync(join(project, 'app.ts'), 'const apiKey = process.env.KEY;\n');
    symlinkSync(join(data, 'config.json'), join(project, 'settings.json'));
    symlinkSync(data, join(project, 'data-link'));
    inHome = { ...context, root: project, home: data };
  });

  const tools = { readFile: readFileTool, writeFile: writeFileTool, editFile: editFileTool, listFiles: listFilesTool, searchFiles: searchFilesTool };
  it.each<[keyof typeof tools, Record<string, unknown>, string]>([
    ['readFile', { path: 'argo-data/config.json' }, 'argo-data/config.json'],
    ['readFile', { path: 'settings.json' }, 'settings.json'],
    ['readFile', { path: 'data-link/logs/2026-01-01.log' }, 'data-link/logs/2026-01-01.log'],
    ['writeFile', { path: 'argo-data/config.json', content: 'x' }, 'argo-data/config.json'],
    ['writeFile', { path: 'argo-data/logs/new.log', content: 'x', mode: 'create' }, 'argo-data/logs/new.log'],
    ['writeFile', { path: 'settings.json', content: 'x', mode: 'append' }, 'settings.json'],
    ['editFile', { path: 'argo-data/config.json', old: 'k3y', new: 'mine' }, 'argo-data/config.json'],
    ['listFiles', { pattern: '*', path: 'argo-data' }, 'argo-data'],
    ['searchFiles', { pattern: 'k3y', path: 'data-link' }, 'data-link'],
  ])('%s %j is refused', async (tool, args, path) => {
    expect(await failure(tools[tool].run(args, inHome))).toBe(refused(path));
    expect(readFileSync(join(data, 'config.json'), 'utf8')).toBe('{"serve": {"apiKey": "k3y"}}\n');
    expect(readdirSync(join(data, 'logs'))).toEqual(['2026-01-01.log']);
  });

  it('list_files and search_files leave it out, whatever the pattern', async () => {
    expect(await listFilesTool.run({ pattern: '**/*' }, inHome)).toEqual({ files: ['app.ts'], count: 1 });
    expect(await listFilesTool.run({ pattern: 'argo-data/**' }, inHome)).toEqual({ files: [], count: 0 });
    expect(await listFilesTool.run({ pattern: '{argo-data,data-link}/*.json' }, inHome)).toEqual({ files: [], count: 0 });
    expect(await searchFilesTool.run({ pattern: 'apiKey|k3y' }, inHome)).toEqual({ matches: [{ file: 'app.ts', line: 1, text: 'const apiKey = process.env.KEY;' }] });
  });

  it('a root that is the data home, or inside it, leaves the tools nothing', async () => {
    expect(await failure(readFileTool.run({ path: 'app.ts' }, { ...context, root: project, home: project }))).toBe(refused('app.ts').replace(data, project));
    expect(await failure(listFilesTool.run({ pattern: '*' }, { ...context, root: join(data, 'logs'), home: data }))).toBe(refused('.'));
  });

  it.each<[string, string, string | null]>([
    // root, data home (both made below the temp folder), the data home the tools must avoid
    ['p', 'p/.argo', 'p/.argo'],
    ['p', 'p', 'p'],
    ['p/sub', 'p', 'p'],
    ['p', 'elsewhere/.argo', null],
    ['p', 'p-other', null],
    // Not made yet: where it would be.
    ['p', 'p/not-yet/.argo', 'p/not-yet/.argo'],
  ])('confinementOf(root %s, home %s): the home avoided is %s', async (rootName, homeName, avoided) => {
    const base = realpathSync(mkdtempSync(join(tmpdir(), 'argo-confine-')));
    for (const name of ['p/sub', 'p/.argo', 'elsewhere/.argo', 'p-other']) mkdirSync(join(base, name), { recursive: true });
    expect(await confinementOf({ root: join(base, rootName), home: join(base, homeName) })).toEqual({ root: join(base, rootName), home: avoided === null ? null : join(base, avoided) });
  });
});

describe('read_file', () => {
  it.each([
    [{ path: 'lines.txt' }, 1, 10, 'line 1'],
    [{ path: 'lines.txt', offset: 3, limit: 2 }, 3, 4, 'line 3\nline 4'],
    [{ path: 'lines.txt', offset: 10 }, 10, 10, 'line 10'],
  ])('%j', async (args, from, to, content) => {
    const result = await readFileTool.run(args, context);
    expect(result).toMatchObject({ path: 'lines.txt', from_line: from, to_line: to });
    expect(String(result.content).startsWith(content)).toBe(true);
  });

  it('reads a file inside the root whose name starts with two dots', async () => {
    expect(await readFileTool.run({ path: '..notes' }, context)).toMatchObject({ path: '..notes', from_line: 1, to_line: 1, content: 'kept inside' });
  });

  it('CRLF line ends, a last line without a newline, lines across read chunks', async () => {
    writeFileSync(join(root, 'crlf.txt'), 'a\r\nb\r\nc');
    expect(await readFileTool.run({ path: 'crlf.txt' }, context)).toMatchObject({ content: 'a\nb\nc', to_line: 3 });
    writeFileSync(join(root, 'long.txt'), Array.from({ length: 20_000 }, (_, i) => `row ${i + 1}`).join('\n'));
    expect(await readFileTool.run({ path: 'long.txt', offset: 19_999 }, context)).toMatchObject({ content: 'row 19999\nrow 20000', from_line: 19_999, to_line: 20_000 });
    expect(await readFileTool.run({ path: 'long.txt', offset: 9_000, limit: 2 }, context)).toMatchObject({ content: 'row 9000\nrow 9001' });
  });

  // Lines are found by index and decoded a chunk at a time: line ends, chunk edges and the size from the stat.
  it.each([
    ['CRLF line ends', 'a\r\nb\r\n', {}, { content: 'a\nb', to_line: 2 }],
    ['a last line that is only a CR', 'x\r\n\r', {}, { content: 'x\n', to_line: 2 }],
    ['CRs inside a line, and only one taken from its end', 'a\rb\r\r\nc', {}, { content: 'a\rb\r\nc', to_line: 2 }],
    ['empty lines', '\n\n\n', {}, { content: '\n\n', to_line: 3 }],
    ['multi-byte characters', 'é\n€\n\u{1F600}', { offset: 2 }, { content: '€\n\u{1F600}', from_line: 2, to_line: 3 }],
    ['an empty file', '', {}, { content: '', to_line: null, note: 'the file is empty' }],
    ['a line ending just past the first chunk', `${'a'.repeat(65_535)}\nend`, { offset: 2 }, { content: 'end', from_line: 2, to_line: 2 }],
    ['a last line without a newline, chunks away', `${'row\n'.repeat(20_000)}last`, { offset: 20_001 }, { content: 'last', from_line: 20_001, to_line: 20_001 }],
    ['a file of exactly one chunk, limit past its end', 'row\n'.repeat(16_384), { offset: 16_383, limit: 5 }, { content: 'row\nrow', to_line: 16_384 }],
  ])('%s', async (_name, text, args, expected) => {
    writeFileSync(join(root, 'table.txt'), text);
    expect(await readFileTool.run({ path: 'table.txt', ...args }, context)).toMatchObject(expected);
  });

  it('a single line longer than the cap is cut off, with a note', async () => {
    writeFileSync(join(root, 'oneline.txt'), `short\n${'y'.repeat(200_000)}\nafter\n`);
    expect(await readFileTool.run({ path: 'oneline.txt' }, context)).toMatchObject({ content: 'short', to_line: 1, truncated: true });
    expect(await readFileTool.run({ path: 'oneline.txt', offset: 3 }, context)).toMatchObject({ content: 'after', from_line: 3 });
  });

  it.each([
    ['longer than a read chunk', 'y'.repeat(200_000), 'y'.repeat(READ_CAP_BYTES)],
    ['within one read chunk', 'y'.repeat(60_000), 'y'.repeat(READ_CAP_BYTES)],
    ['of two-byte characters, cut between them', 'é'.repeat(40_000), 'é'.repeat(READ_CAP_BYTES / 2)],
    ['with a three-byte character across the cap', `y${'€'.repeat(30_000)}`, `y${'€'.repeat(Math.floor((READ_CAP_BYTES - 1) / 3))}`],
  ])('a line %s is shown cut at the cap, and the note leads past it', async (_, line, head) => {
    writeFileSync(join(root, 'long-line.txt'), `short\n${line}\nafter\n`);
    expect(await readFileTool.run({ path: 'long-line.txt', offset: 2 }, context)).toEqual({
      path: 'long-line.txt',
      from_line: 2,
      to_line: 2,
      content: head,
      truncated: true,
      note: 'line 2 is longer than the 50 KB cap and was cut there; the next line is 3 (read on with offset 3)',
    });
  });

  it('a line of exactly the cap is shown whole, not said to be cut', async () => {
    writeFileSync(join(root, 'at-cap.txt'), `short\n${'y'.repeat(READ_CAP_BYTES)}\nafter\n`);
    expect(await readFileTool.run({ path: 'at-cap.txt', offset: 2, limit: 1 }, context)).toEqual({ path: 'at-cap.txt', from_line: 2, to_line: 2, content: 'y'.repeat(READ_CAP_BYTES) });
  });

  it.each([
    ['ten lines', 'lines.txt', 50, 'offset 50 is past the end: the file has 10 lines'],
    ['just past the last line', 'lines.txt', 11, 'offset 11 is past the end: the file has 10 lines'],
    ['one line, without a newline', 'one.txt', 2, 'offset 2 is past the end: the file has 1 line'],
    ['many lines, counted across chunks', 'many.txt', 30_000, 'offset 30000 is past the end: the file has 20,000 lines'],
    ['an empty file', 'empty.txt', 3, 'offset 3 is past the end: the file is empty'],
  ])('past the end (%s): no lines, and a note saying how many there are, before the content', async (_name, path, offset, note) => {
    writeFileSync(join(root, 'one.txt'), 'only');
    writeFileSync(join(root, 'many.txt'), 'row\n'.repeat(20_000));
    writeFileSync(join(root, 'empty.txt'), '');
    const result = await readFileTool.run({ path, offset }, context);
    expect(result).toEqual({ path, from_line: offset, to_line: null, note, content: '' });
    expect(Object.keys(result)).toEqual(['path', 'from_line', 'to_line', 'note', 'content']);
  });

  it('at the last line, no note', async () => {
    expect(await readFileTool.run({ path: 'lines.txt', offset: 10 }, context)).toEqual({ path: 'lines.txt', from_line: 10, to_line: 10, content: 'line 10' });
  });

  it('stops at the 50 KB cap and says where to go on', async () => {
    const result = await readFileTool.run({ path: 'big.txt' }, context);
    expect(Buffer.byteLength(String(result.content))).toBeLessThanOrEqual(READ_CAP_BYTES);
    expect(result).toMatchObject({ truncated: true, to_line: 51, note: 'stopped at the 50 KB cap; read on with offset 52' });
  });

  // Fitted to its budget by whole lines, so the loop never cuts it to a head whose to_line names lines it lacks.
  it.each<[string, Record<string, unknown>, number, { from: number; to: number }]>([
    ['a budget that holds a few lines', { path: 'lines.log' }, 180, { from: 1, to: 3 }],
    ['the same from an offset', { path: 'lines.log', offset: 5 }, 180, { from: 5, to: 7 }],
    ['a limit the budget holds less of', { path: 'lines.log', offset: 2, limit: 60 }, 190, { from: 2, to: 5 }],
    ['past the 50 KB cap: the budget says where to read on', { path: 'big.txt' }, 4000, { from: 1, to: 3 }],
  ])('%s: whole lines that fit, the note first, naming the next line', async (_name, args, budget, { from, to }) => {
    const result = await readFileTool.run(args, { ...context, resultBudget: budget });
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(budget);
    expect(Object.keys(result)).toEqual(['path', 'from_line', 'to_line', 'truncated', 'note', 'content']);
    expect(result).toMatchObject({ from_line: from, to_line: to, truncated: true, note: `stopped at line ${to}, as much as one result holds; read on with offset ${to + 1}` });
    const lines = String(result.content).split('\n');
    expect(lines).toHaveLength(to - from + 1);
    expect(await readFileTool.run({ ...args, offset: from, limit: to - from + 1 }, context)).toMatchObject({ content: result.content });
  });

  it.each([
    ['a budget the read fits', { path: 'lines.txt' }, 4000],
    ['no budget', { path: 'big.txt' }, undefined],
  ])('%s: the read as it is', async (_name, args, budget) => {
    expect(await readFileTool.run(args, { ...context, ...(budget !== undefined ? { resultBudget: budget } : {}) })).toEqual(await readFileTool.run(args, context));
  });

  it('a first line longer than the budget is cut, and the note leads past it', async () => {
    writeFileSync(join(root, 'wide-line.txt'), `${'w'.repeat(10_000)}\nnext\n`);
    const result = await readFileTool.run({ path: 'wide-line.txt' }, { ...context, resultBudget: 4000 });
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(4000);
    expect(result).toMatchObject({ from_line: 1, to_line: 1, truncated: true, note: 'line 1 is longer than one result holds and was cut; the next line is 2 (read on with offset 2)' });
    expect(String(result.content)).toMatch(/^w{3700,}$/);
  });

  // However small the budget, the cut line's result fits it, holding as much of the line as it can.
  it.each<[string, number, string]>([
    // what the first line is, the budget, the line
    ['plain, at the smallest budget', 500, 'w'.repeat(10_000)],
    ['plain', 600, 'w'.repeat(10_000)],
    ['plain, a budget that holds most of it', 9_000, 'w'.repeat(10_000)],
    ['quotes and tabs, which JSON escapes', 500, '"\t'.repeat(4_000)],
    ['emoji, two units each', 500, '😀'.repeat(5_000)],
  ])('a long first line, %s (budget %i), is cut to fit', async (_name, budget, line) => {
    const own = realpathSync(mkdtempSync(join(tmpdir(), 'argo-tools-wide-')));
    writeFileSync(join(own, 'wide.txt'), `${line}\nnext\n`);
    const result = await readFileTool.run({ path: 'wide.txt' }, { ...context, root: own, resultBudget: budget });
    const content = String(result.content);
    expect(JSON.stringify(result).length).toBeLessThanOrEqual(budget);
    expect(result).toMatchObject({ from_line: 1, to_line: 1, truncated: true, note: 'line 1 is longer than one result holds and was cut; the next line is 2 (read on with offset 2)' });
    expect(content.length).toBeGreaterThan(0);
    expect(line.startsWith(content)).toBe(true);
    // The most that fits: one more character would not.
    const longer = line.slice(0, content.length + ((line.codePointAt(content.length) ?? 0) > 0xffff ? 2 : 1));
    expect(JSON.stringify({ ...result, content: longer }).length).toBeGreaterThan(budget);
  });

  it('a path nearly as long as the budget leaves no room for the line: 500 characters of it, for the loop to cut and save', async () => {
    const path = `${'d'.repeat(200)}/${'f'.repeat(200)}.txt`;
    const own = realpathSync(mkdtempSync(join(tmpdir(), 'argo-tools-wide-')));
    mkdirSync(join(own, 'd'.repeat(200)));
    writeFileSync(join(own, path), `${'w'.repeat(10_000)}\n`);
    expect(String((await readFileTool.run({ path }, { ...context, root: own, resultBudget: 500 })).content)).toHaveLength(500);
  });

  it('the note comes before the content: a result cut to its head still says where to read on', async () => {
    expect(Object.keys(await readFileTool.run({ path: 'big.txt' }, context))).toEqual(['path', 'from_line', 'to_line', 'truncated', 'note', 'content']);
  });

  it.each([
    [{ path: 'missing.txt' }, 'does not exist'],
    [{ path: 'src' }, 'is not a file'],
    [{ path: 'binary.bin' }, 'is a binary file'],
    [{ path: 'link-out.txt' }, 'outside the root'],
  ])('%j fails with a tool error', async (args, message) => {
    expect(await failure(readFileTool.run(args, context))).toContain(message);
  });
});

describe('list_files and search_files', () => {
  it('lists with fast-glob, sorted, relative to the root, not following links out', async () => {
    expect(await listFilesTool.run({ pattern: '**/*.ts' }, context)).toEqual({ files: ['src/a.ts', 'src/deep/b.ts'], count: 2 });
    expect(await listFilesTool.run({ pattern: '*.ts', path: 'src/deep' }, context)).toEqual({ files: ['src/deep/b.ts'], count: 1 });
    const all = await listFilesTool.run({ pattern: '**/*' }, context);
    expect(all.files).not.toContain('dir-out/secret.txt');
  });

  // fast-glob enters a linked folder a pattern names outright; what lies outside the root is dropped.
  it.each([['dir-out/**'], ['dir-out/secret.txt'], ['{dir-out,nowhere}/*'], ['dir-out/*.txt'], ['link-out.txt'], ['dangling-out.txt']])('%s finds nothing outside the root', async (pattern) => {
    expect(await listFilesTool.run({ pattern }, context)).toEqual({ files: [], count: 0 });
    expect(await searchFilesTool.run({ pattern: 'secret', glob: pattern }, context)).toEqual({ matches: [] });
  });

  it('a linked folder inside the root is listed when named, as written', async () => {
    expect(await listFilesTool.run({ pattern: 'src-link/*.ts' }, context)).toEqual({ files: ['src-link/a.ts'], count: 1 });
    expect(await listFilesTool.run({ pattern: '{src-link,dir-out}/**' }, context)).toEqual({ files: ['src-link/a.ts', 'src-link/deep/b.ts'], count: 2 });
  });

  it('list_files: the count, and the note when there are more, come before the files', async () => {
    const many = realpathSync(mkdtempSync(join(tmpdir(), 'argo-list-many-')));
    for (let index = 0; index < 1001; index++) writeFileSync(join(many, `f${String(index).padStart(4, '0')}.txt`), '');
    const result = await listFilesTool.run({ pattern: '*' }, { ...context, root: many });
    expect(Object.keys(result)).toEqual(['count', 'truncated', 'note', 'files']);
    expect(result).toMatchObject({ count: 1001, truncated: true, note: 'first 1000 of 1001; narrow the pattern' });
    expect(Object.keys(await listFilesTool.run({ pattern: '*.txt' }, context))).toEqual(['count', 'files']);
  });

  it.each([
    ['list_files', { pattern: '' }, 'the pattern is empty; give a glob such as "**/*.ts", or "**/*" for every file'],
    ['list_files', { pattern: '  ' }, 'the pattern is empty; give a glob such as "**/*.ts", or "**/*" for every file'],
    ['search_files', { pattern: 'x', glob: ' ' }, 'the glob is empty; give a glob such as "**/*.ts", or "**/*" for every file'],
  ])('%s %j is refused', async (tool, args, message) => {
    expect(await failure((tool === 'list_files' ? listFilesTool : searchFilesTool).run(args, context))).toBe(message);
  });

  it('search_files: an empty glob is no glob', async () => {
    expect(await searchFilesTool.run({ pattern: 'TODO', glob: '' }, context)).toEqual(await searchFilesTool.run({ pattern: 'TODO' }, context));
  });

  it('a glob whose braces expand to over 100 patterns is refused; an ordinary one works', async () => {
    const refusal = `"${'{a,b}'.repeat(20)}…" expands to more than ${GLOB_PATTERNS_MOST} patterns (each {…,…} multiplies them); use fewer brace alternatives`;
    expect(await failure(listFilesTool.run({ pattern: '{a,b}'.repeat(21) }, context))).toBe(`pattern ${refusal}`);
    expect(await failure(searchFilesTool.run({ pattern: 'x', glob: '{a,b}'.repeat(21) }, context))).toBe(`glob ${refusal}`);
    expect(await listFilesTool.run({ pattern: 'src/**/*.{ts,js}' }, context)).toEqual({ files: ['src/a.ts', 'src/deep/b.ts'], count: 2 });
  });

  it.each([
    ['../**', 'a bare ".."'],
    ['src/../../*', 'a ".." deeper in'],
    ['/etc/*', 'a leading "/"'],
    ['{..,sub}/*', 'a ".." alternative braces leave unexpanded'],
    ['{sub,..}/*', 'a ".." alternative braces expand'],
    ['src/{deep,{..,x}}/*', 'a ".." in nested braces'],
    ['..{,}/*', 'braces that expand to ".."'],
    ['{.,.}./*', 'braces that spell ".."'],
    ['{/etc,src}/*', 'braces that expand to a leading "/"'],
  ])('pattern %s (%s) is refused as a step out of the root, by both tools', async (pattern) => {
    // Each names the argument it was given in: search_files' pattern is its regular expression.
    const refusal = `"${pattern}" must stay inside the root (no "..", no leading "/")`;
    expect(await failure(listFilesTool.run({ pattern }, context))).toBe(`pattern ${refusal}`);
    expect(await failure(searchFilesTool.run({ pattern: 'x', glob: pattern }, context))).toBe(`glob ${refusal}`);
  });

  it.each([
    ['{1..3}/*', 'a range'],
    ['..notes', 'a name that starts with two dots'],
    ['{..notes,lines.txt}', 'such a name among braces'],
    ['src/{a,b}..ts', 'two dots inside a name'],
  ])('pattern %s (%s) is no step out of the root', async (pattern) => {
    await expect(listFilesTool.run({ pattern }, context)).resolves.toHaveProperty('files');
  });

  it.each([
    [{ pattern: '../**' }, 'must stay inside the root'],
    [{ pattern: '*', path: '../outside' }, 'outside the root'],
    [{ pattern: '*', path: 'lines.txt' }, 'is not a directory'],
  ])('%j is refused', async (args, message) => {
    expect(await failure(listFilesTool.run(args, context))).toContain(message);
  });

  it('searches text files for a regular expression, skipping binaries', async () => {
    expect(await searchFilesTool.run({ pattern: 'export const \\w', glob: '**/*.ts' }, context)).toEqual({
      matches: [
        { file: 'src/a.ts', line: 1, text: 'export const a = 1;' },
        { file: 'src/deep/b.ts', line: 1, text: 'export const b = 2;' },
      ],
    });
    expect(await searchFilesTool.run({ pattern: 'TODO', path: 'src' }, context)).toEqual({ matches: [{ file: 'src/a.ts', line: 2, text: '// TODO later' }] });
  });

  it('search_files says what it did not search: files over 1 MB and binary files, counted before the matches', async () => {
    const mixed = realpathSync(mkdtempSync(join(tmpdir(), 'argo-search-skips-')));
    writeFileSync(join(mixed, 'a.txt'), 'needle\n');
    writeFileSync(join(mixed, 'big.log'), `needle\n${'x'.repeat(1024 * 1024)}`);
    writeFileSync(join(mixed, 'one.bin'), Buffer.from('needle\0'));
    writeFileSync(join(mixed, 'two.bin'), Buffer.from('\0needle'));
    const result = await searchFilesTool.run({ pattern: 'needle' }, { ...context, root: mixed });
    expect(Object.keys(result)).toEqual(['skipped', 'matches']);
    expect(result).toEqual({ skipped: { over_1_mb: 1, binary: 2 }, matches: [{ file: 'a.txt', line: 1, text: 'needle' }] });
    // Nothing skipped, nothing said.
    expect(await searchFilesTool.run({ pattern: 'needle', glob: '*.txt' }, { ...context, root: mixed })).toEqual({ matches: [{ file: 'a.txt', line: 1, text: 'needle' }] });
  });

  it('search_files on CRLF files: a line matches and is shown without its CR', async () => {
    const crlf = realpathSync(mkdtempSync(join(tmpdir(), 'argo-search-crlf-')));
    writeFileSync(join(crlf, 'win.txt'), 'one\r\nthree\r\n');
    expect(await searchFilesTool.run({ pattern: '^three$' }, { ...context, root: crlf })).toEqual({ matches: [{ file: 'win.txt', line: 2, text: 'three' }] });
  });

  it('a bad regular expression is a tool error', async () => {
    expect(await failure(searchFilesTool.run({ pattern: '(' }, context))).toContain('not a valid regular expression');
  });

  it('a pattern that backtracks without end is stopped after 5 s with a tool error, while the process goes on', async () => {
    const hostileRoot = realpathSync(mkdtempSync(join(tmpdir(), 'argo-redos-')));
    writeFileSync(join(hostileRoot, 'a.txt'), `${'a'.repeat(34)}!\n`);
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 20);
    const started = Date.now();
    try {
      expect(await failure(searchFilesTool.run({ pattern: '^(a+)+$' }, { ...context, root: hostileRoot }))).toBe(
        `the pattern "^(a+)+$" took over ${SEARCH_PATTERN_MS / 1000} s and was stopped: it backtracks too much (nested repetition such as (a+)+ or (.*)*); simplify it or narrow the glob`,
      );
    } finally {
      clearInterval(ticking);
    }
    expect(Date.now() - started).toBeLessThan(SEARCH_PATTERN_MS + 5000);
    expect(ticks).toBeGreaterThanOrEqual(SEARCH_PATTERN_MS / 20 / 4);
  });

  it('stops at 200 matches and says so, across batches', async () => {
    const manyRoot = realpathSync(mkdtempSync(join(tmpdir(), 'argo-many-')));
    // 300 files of 1 KB each: several batches, the first of 64 KB.
    for (let index = 0; index < 300; index++) writeFileSync(join(manyRoot, `f${String(index).padStart(3, '0')}.txt`), `hit ${index}\n${'.'.repeat(1000)}\n`);
    const result = await searchFilesTool.run({ pattern: '^hit' }, { ...context, root: manyRoot });
    expect(result.truncated).toBe(true);
    expect(result.matches).toHaveLength(200);
    expect((result.matches as { file: string }[]).at(-1)).toEqual({ file: 'f199.txt', line: 1, text: 'hit 199' });
    expect((await searchFilesTool.run({ pattern: '^hit 2\\d\\d' }, { ...context, root: manyRoot })).matches).toHaveLength(100);
  });
});

// The glob library's wildcards and a line break in a name, as docs/agent.md says (no option changes it).
describe('names with a line break', () => {
  let broken: string;
  beforeAll(() => {
    broken = realpathSync(mkdtempSync(join(tmpdir(), 'argo-line-break-')));
    mkdirSync(join(broken, 'd\nx'));
    for (const name of ['a\nb.txt', '\nnotes', 'plain.txt', 'd\nx/f.txt']) writeFileSync(join(broken, name), '');
  });

  it.each([
    ['*', ['\nnotes'], ['a\nb.txt', 'plain.txt']],
    ['**/*', ['\nnotes', 'd\nx/f.txt'], ['a\nb.txt', 'plain.txt']],
    ['**', ['a\nb.txt', '\nnotes', 'd\nx/f.txt'], ['plain.txt']],
    ['*/*.txt', [], ['d\nx/f.txt']],
    ['?notes', [], ['\nnotes']],
    ['**/?notes', [], ['\nnotes']],
  ])('%j misses %j', async (pattern, missed, found) => {
    const { files } = await listFilesTool.run({ pattern }, { ...context, root: broken });
    expect(files).toEqual(found);
    for (const name of missed) expect(files).not.toContain(name);
  });
});

describe('names that start with a dot', () => {
  let dotted: string;
  beforeAll(() => {
    dotted = realpathSync(mkdtempSync(join(tmpdir(), 'argo-dotted-')));
    for (const folder of ['.github/workflows', 'src/.hidden', '.git', 'node_modules/x']) mkdirSync(join(dotted, folder), { recursive: true });
    for (const file of ['.github/workflows/ci.yml', 'a.yml', '.env', 'src/.hidden/h.yml', 'src/.eslintrc.yml', '.git/config.yml', 'node_modules/x/p.yml']) writeFileSync(join(dotted, file), 'key: needle\n');
  });

  // As a shell's wildcards: a name starting with a dot is matched only where the pattern names the dot; .git and node_modules never.
  it.each<[string, string[]]>([
    ['**/*.yml', ['a.yml']],
    ['**/*', ['a.yml']],
    ['.github/**', ['.github/workflows/ci.yml']],
    ['.github/**/*.yml', ['.github/workflows/ci.yml']],
    ['**/.env', ['.env']],
    ['.*', ['.env']],
    ['**/.*', ['.env', 'src/.eslintrc.yml']],
    ['**/.*/**', ['.github/workflows/ci.yml', 'src/.hidden/h.yml']],
    ['src/.hidden/*', ['src/.hidden/h.yml']],
    ['.git/**', []],
    ['**/.git/*', []],
    ['node_modules/**', []],
  ])('list_files %s finds %j', async (pattern, files) => {
    expect((await listFilesTool.run({ pattern }, { ...context, root: dotted })).files).toEqual(files);
  });

  it('search_files takes its glob the same way', async () => {
    expect(await searchFilesTool.run({ pattern: 'needle', glob: '.github/**' }, { ...context, root: dotted })).toEqual({ matches: [{ file: '.github/workflows/ci.yml', line: 1, text: 'key: needle' }] });
    expect((await searchFilesTool.run({ pattern: 'needle' }, { ...context, root: dotted })).matches).toEqual([{ file: 'a.yml', line: 1, text: 'key: needle' }]);
  });
});

describe.runIf(hasMkfifo)('a named pipe in the root is refused by every file tool, never waited on', () => {
  let pipes: string;
  let pipeContext: ToolContext;
  beforeAll(() => {
    pipes = realpathSync(mkdtempSync(join(tmpdir(), 'argo-fifo-')));
    for (let index = 0; index < 6; index++) execFileSync('mkfifo', [join(pipes, `p${index}`)]);
    writeFileSync(join(pipes, 'plain.txt'), 'plain\n');
    pipeContext = { ...context, root: pipes };
  });
  const notRegular = (path: string) => `"${path}" is not a regular file (a named pipe, a device or a socket); the file tools read and write only regular files`;

  it('read_file, write_file (each mode, and its preview), edit_file', async () => {
    expect(await failure(readFileTool.run({ path: 'p0' }, pipeContext))).toBe('"p0" is not a file');
    expect(await failure(writeFileTool.run({ path: 'p0', content: 'x' }, pipeContext))).toBe(notRegular('p0'));
    expect(await failure(writeFileTool.run({ path: 'p0', content: 'x', mode: 'append' }, pipeContext))).toBe(notRegular('p0'));
    expect(await failure(writeFileTool.run({ path: 'p0', content: 'x', mode: 'create' }, pipeContext))).toBe(notRegular('p0'));
    expect(await failure(defined(writeFileTool.preview)({ path: 'p0', content: 'x' }, pipeContext))).toBe(notRegular('p0'));
    expect(await failure(editFileTool.run({ path: 'p0', old: 'a', new: 'b' }, pipeContext))).toBe(notRegular('p0'));
    expect(statSync(join(pipes, 'p0')).isFIFO()).toBe(true);
  });

  // Each blocked open would hold one of libuv's four threads: all file work of the process would wait.
  it('six writes to pipes at once leave the process free to read and write files', async () => {
    const refused = await Promise.all(Array.from({ length: 6 }, (_, index) => failure(writeFileTool.run({ path: `p${index}`, content: 'x', mode: 'append' }, pipeContext))));
    expect(refused).toEqual(Array.from({ length: 6 }, (_, index) => notRegular(`p${index}`)));
    expect((await readFileTool.run({ path: 'plain.txt' }, pipeContext)).content).toBe('plain');
  });

  it('search_files and list_files pass over them', async () => {
    expect(await searchFilesTool.run({ pattern: '.' }, pipeContext)).toEqual({ matches: [{ file: 'plain.txt', line: 1, text: 'plain' }] });
    expect((await listFilesTool.run({ pattern: '*' }, pipeContext)).files).toEqual(['plain.txt']);
  });
});

describe('a NUL byte in a path or a pattern', () => {
  const NUL = (named: string) => `${named} contains a NUL byte, which no file name can; give it without one`;
  it.each<[string, Record<string, unknown>, string | null]>([
    // the tool the model is offered, its arguments → why the call is invalid (the model is asked again), or null
    ['read_file', { path: 'a\0b' }, NUL('path "a\\0b"')],
    ['read_file', { path: 'a/b' }, null],
    ['list_files', { pattern: '*\0.ts' }, NUL('pattern "*\\0.ts"')],
    ['list_files', { pattern: '*', path: 'src\0' }, NUL('path "src\\0"')],
    ['search_files', { pattern: 'a\0b' }, null],
    ['search_files', { pattern: 'x', path: '\0' }, NUL('path "\\0"')],
    ['search_files', { pattern: 'x', glob: 'a\0\0b' }, NUL('glob "a\\0\\0b"')],
    ['search_files', { pattern: 'a', glob: '*\0' }, NUL('glob "*\\0"')],
    ['search_files', { pattern: 'a', glob: '*.ts' }, null],
    ['write_file', { path: 'new\0.txt', content: 'x\0' }, NUL('path "new\\0.txt"')],
    ['write_file', { path: 'new.txt', content: 'x\0' }, null],
    ['edit_file', { path: 'lines.txt\0', old: 'line', new: 'x' }, NUL('path "lines.txt\\0"')],
  ])('%s %j is an invalid call: %j', async (name, args, reason) => {
    const { builtinTools } = await import('../../src/tools/catalog.js');
    const { validateArguments } = await import('../../src/tools/validate.js');
    const tool = defined(builtinTools().find((offered) => offered.name === name));
    expect(validateArguments(tool, args)).toEqual(reason === null ? { kind: 'ok', args } : { kind: 'invalid', reason });
  });

  it.each<[string, Tool, Record<string, unknown>, string]>([
    ['read_file', readFileTool, { path: 'a\0b' }, 'path "a\\0b"'],
    ['read_file, a NUL at the end', readFileTool, { path: 'lines.txt\0' }, 'path "lines.txt\\0"'],
    ['read_file, a NUL before a trailing slash', readFileTool, { path: 'src\0/' }, 'path "src\\0/"'],
    ['write_file, a NUL before a trailing slash', writeFileTool, { path: 'src\0/', content: 'x' }, 'path "src\\0/"'],
    ['write_file', writeFileTool, { path: 'new\0.txt', content: 'x' }, 'path "new\\0.txt"'],
    ['write_file, an append', writeFileTool, { path: 'new\0.txt', content: 'x', mode: 'append' }, 'path "new\\0.txt"'],
    ['edit_file', editFileTool, { path: 'lines.txt\0', old: 'line', new: 'x' }, 'path "lines.txt\\0"'],
    ['list_files, its path', listFilesTool, { path: 'src\0', pattern: '*' }, 'path "src\\0"'],
    ['list_files, its pattern', listFilesTool, { pattern: '*\0.ts' }, 'pattern "*\\0.ts"'],
    ['search_files, its path', searchFilesTool, { path: '\0', pattern: 'x' }, 'path "\\0"'],
    ['search_files, its glob', searchFilesTool, { pattern: 'x', glob: 'a\0\0b' }, 'glob "a\\0\\0b"'],
  ])('%s: refused, the NUL shown as \\0', async (_name, tool, args, named) => {
    expect(await failure(tool.run(args, context))).toBe(`${named} contains a NUL byte, which no file name can; give it without one`);
  });

  it('write_file and edit_file refuse it in their preview too, and nothing is made', async () => {
    expect(await failure(writeFileTool.preview?.({ path: 'nul\0.txt', content: 'x' }, context) ?? Promise.resolve())).toBe('path "nul\\0.txt" contains a NUL byte, which no file name can; give it without one');
    expect(await failure(editFileTool.preview?.({ path: 'lines.txt\0', old: 'line', new: 'x' }, context) ?? Promise.resolve())).toBe('path "lines.txt\\0" contains a NUL byte, which no file name can; give it without one');
    expect(readdirSync(root).filter((name) => name.startsWith('nul'))).toEqual([]);
  });
});

describe('write_file and edit_file', () => {
  describe('a hard link in the root to a file outside it', () => {
    const hardLinked = (name: string): string => {
      const far = join(outside, `${name}-far.txt`);
      writeFileSync(far, 'outside\n');
      linkSync(far, join(root, `${name}.txt`));
      return far;
    };
    const refusal = (path: string): string =>
      `"${path}" is a hard link (the file has 2 names), and its other names may be outside the root, so the file tools do not append to it; an overwrite or edit_file replaces it under this name alone`;

    it('is not appended to, before the question or at the write: the file outside is untouched', async () => {
      const far = hardLinked('hard-append');
      expect(await failure(writeFileTool.preview?.({ path: 'hard-append.txt', content: 'more\n', mode: 'append' }, context) ?? Promise.resolve())).toBe(refusal('hard-append.txt'));
      expect(await failure(writeFileTool.run({ path: 'hard-append.txt', content: 'more\n', mode: 'append' }, context))).toBe(refusal('hard-append.txt'));
      const folder = await HeldFolder.open({ root, home: null }, root, 'hard-append.txt');
      try {
        expect(await failure(writeInFolder({ root, home: null }, folder, 'hard-append.txt', 'more\n', 'append', 'hard-append.txt'))).toBe(refusal('hard-append.txt'));
      } finally {
        await folder.close();
      }
      expect(readFileSync(far, 'utf8')).toBe('outside\n');
    });

    it.each([
      ['an overwrite', { content: 'inside\n' }, 'inside\n'],
      ['an edit', { old: 'outside', new: 'inside' }, 'inside\n'],
    ])('%s replaces the name in the root with a file of its own: the file outside is untouched', async (_name, args, expected) => {
      const name = `hard-${'old' in args ? 'edit' : 'overwrite'}`;
      const far = hardLinked(name);
      await ('old' in args ? editFileTool : writeFileTool).run({ path: `${name}.txt`, ...args }, context);
      expect(readFileSync(join(root, `${name}.txt`), 'utf8')).toBe(expected);
      expect(readFileSync(far, 'utf8')).toBe('outside\n');
      expect(statSync(far).nlink).toBe(1);
    });
  });

  it('writes, appends, creates (once) and shows a diff as preview', async () => {
    expect(await writeFileTool.run({ path: 'out/new.txt', content: 'one\n' }, context)).toMatchObject({ path: 'out/new.txt', created: true, bytes_written: 4 });
    await writeFileTool.run({ path: 'out/new.txt', content: 'two\n', mode: 'append' }, context);
    expect(readFileSync(join(root, 'out/new.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(await failure(writeFileTool.run({ path: 'out/new.txt', content: 'x', mode: 'create' }, context))).toContain('already exists');
    const preview = await writeFileTool.preview?.({ path: 'out/new.txt', content: 'one\nTHREE\n' }, context);
    expect(preview).toContain('-two');
    expect(preview).toContain('+THREE');
  });

  it('edit_file replaces a file whose name is as long as a name may be (255 bytes)', async () => {
    const name = `${'n'.repeat(251)}.txt`;
    writeFileSync(join(root, name), 'alpha\n');
    expect(await editFileTool.run({ path: name, old: 'alpha', new: 'beta' }, context)).toEqual({ path: name, replaced: 1 });
    expect(readFileSync(join(root, name), 'utf8')).toBe('beta\n');
    expect(readdirSync(root).filter((entry) => entry.endsWith('.tmp'))).toEqual([]);
  });

  it('a new file through a link to a folder inside the root is written in that folder and shown by its real path', async () => {
    expect(await writeFileTool.run({ path: 'inner/new.txt', content: 'through\n' }, context)).toMatchObject({ path: 'sub/new.txt', created: true });
    expect(readFileSync(join(root, 'sub', 'new.txt'), 'utf8')).toBe('through\n');
    expect(await writeFileTool.run({ path: 'inner/new.txt', content: 'again\n', mode: 'append' }, context)).toMatchObject({ path: 'sub/new.txt', created: false });
  });

  it('refuses to write outside the root, through a link or not', async () => {
    for (const path of ['../outside/x.txt', 'dir-out/x.txt', 'link-out.txt']) {
      expect(await failure(writeFileTool.run({ path, content: 'x' }, context))).toContain('outside the root');
    }
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
  });

  it('replaces exactly one occurrence', async () => {
    writeFileSync(join(root, 'edit.txt'), 'alpha beta\ngamma beta\n');
    expect(await failure(editFileTool.run({ path: 'edit.txt', old: 'beta', new: 'B' }, context))).toContain('more than once');
    expect(await failure(editFileTool.run({ path: 'edit.txt', old: 'delta', new: 'D' }, context))).toContain('not found');
    expect(await failure(editFileTool.run({ path: 'nope.txt', old: 'a', new: 'b' }, context))).toContain('does not exist');
    const preview = await editFileTool.preview?.({ path: 'edit.txt', old: 'alpha beta', new: 'alpha B' }, context);
    // As `git diff` shows it: the names, then the hunk.
    expect(preview).toBe('--- a/edit.txt\n+++ b/edit.txt\n@@ -1,2 +1,2 @@\n-alpha beta\n+alpha B\n gamma beta\n');
    expect(await editFileTool.run({ path: 'edit.txt', old: 'alpha beta', new: 'alpha B' }, context)).toEqual({ path: 'edit.txt', replaced: 1 });
    expect(readFileSync(join(root, 'edit.txt'), 'utf8')).toBe('alpha B\ngamma beta\n');
  });

  it('edits of one file in the same round are applied one after another, none lost', async () => {
    writeFileSync(join(root, 'both.txt'), 'one\ntwo\n');
    await Promise.all([
      editFileTool.run({ path: 'both.txt', old: 'one', new: 'ONE' }, context),
      editFileTool.run({ path: 'both.txt', old: 'two', new: 'TWO' }, context),
      writeFileTool.run({ path: 'both.txt', content: 'three\n', mode: 'append' }, context),
    ]);
    expect(readFileSync(join(root, 'both.txt'), 'utf8')).toBe('ONE\nTWO\nthree\n');
  });

  it.each([
    ['LF text in a CRLF file', 'a\r\nb\r\nc\r\n', 'a\nb', 'A\nB', 'A\r\nB\r\nc\r\n'],
    ['CRLF given as it is', 'a\r\nb\r\n', 'a\r\nb', 'A\r\nB', 'A\r\nB\r\n'],
    ['untouched lines keep their own endings', 'a\r\nb\r\nc\nd\n', 'a\nb', 'x\ny', 'x\r\ny\r\nc\nd\n'],
    ['a one-line edit in a CRLF file', 'a\r\nb\r\n', 'b', 'B', 'a\r\nB\r\n'],
    ['one line made two in a CRLF file: the new line ends in CRLF too', 'one\r\ntwo\r\nthree\r\n', 'two', 'two\nand a half', 'one\r\ntwo\r\nand a half\r\nthree\r\n'],
    ['one line made two in a file with both endings: as given', 'a\r\nb\nc\n', 'b', 'b\nb2', 'a\r\nb\nb2\nc\n'],
    ['a leading BOM is kept', '\ufeffa\nb\n', 'b', 'B', '\ufeffa\nB\n'],
  ])('edit_file: %s', async (_, text, old, replacement, expected) => {
    writeFileSync(join(root, 'endings.txt'), text);
    await editFileTool.run({ path: 'endings.txt', old, new: replacement }, context);
    expect(readFileSync(join(root, 'endings.txt'), 'utf8')).toBe(expected);
  });

  it('edit_file and an overwrite replace the file whole, keeping its mode (a script stays executable)', async () => {
    writeFileSync(join(root, 'run.sh'), '#!/bin/sh\necho one\n');
    chmodSync(join(root, 'run.sh'), 0o755);
    await editFileTool.run({ path: 'run.sh', old: 'one', new: 'two' }, context);
    expect(statSync(join(root, 'run.sh')).mode & 0o777).toBe(0o755);
    await writeFileTool.run({ path: 'run.sh', content: '#!/bin/sh\necho three\n' }, context);
    expect(statSync(join(root, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(root, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho three\n');
    // No temporary file is left beside it.
    expect(readdirSync(root).filter((name) => name.startsWith('run.sh'))).toEqual(['run.sh']);
  });

  it('the CRLF form of "old" must occur once too', async () => {
    writeFileSync(join(root, 'twice.txt'), 'a\r\nb\r\na\r\nb\r\n');
    expect(await failure(editFileTool.run({ path: 'twice.txt', old: 'a\nb', new: 'x' }, context))).toContain('more than once');
  });

  it.each([
    ['edit_file on text that is not UTF-8', Buffer.from('caf\xe9 au lait\n', 'latin1'), editFileTool, { old: 'lait', new: 'miel' }, 'is not valid UTF-8'],
    ['edit_file on a file with a NUL byte', Buffer.from('text\0more\n'), editFileTool, { old: 'more', new: 'less' }, 'is a binary file'],
    ['appending to text that is not UTF-8', Buffer.from('caf\xe9\n', 'latin1'), writeFileTool, { content: 'x', mode: 'append' }, 'is not valid UTF-8'],
  ])('%s is refused and the file left as it was', async (_, bytes, tool, args, message) => {
    writeFileSync(join(root, 'raw.bin'), bytes);
    expect(await failure(tool.run({ path: 'raw.bin', ...args }, context))).toContain(message);
    expect(readFileSync(join(root, 'raw.bin'))).toEqual(bytes);
  });

  // A sparse file: 600 MB long, nothing on the disk.
  describe('a file too large to read whole', () => {
    let huge: string;
    beforeAll(() => {
      huge = join(root, 'huge.log');
      writeFileSync(huge, 'head\n');
      truncateSync(huge, 600 * 1024 * 1024);
    });

    it('is overwritten without being read; its preview tells its size', async () => {
      expect(await defined(writeFileTool.preview)({ path: 'huge.log', content: 'small\n' }, context)).toBe('--- a/huge.log\n+++ b/huge.log\n[old: 629,145,600 bytes, too large to show; new: 1 line]\n');
      expect(await writeFileTool.run({ path: 'huge.log', content: 'small\n' }, context)).toMatchObject({ created: false, bytes_written: 6 });
      expect(readFileSync(huge, 'utf8')).toBe('small\n');
      truncateSync(huge, 600 * 1024 * 1024);
    });

    it.each<[string, Tool, Record<string, unknown>]>([
      ['edit_file', editFileTool, { old: 'head', new: 'x' }],
      ['an append', writeFileTool, { content: 'x', mode: 'append' }],
    ])('%s is refused for good, saying its size and the limit', async (_name, tool, args) => {
      const thrown = await tool.run({ path: 'huge.log', ...args }, context).then(() => null, (error: unknown) => error);
      expect(thrown).toMatchObject({ message: '"huge.log" is 629,145,600 bytes; the edit tools change files of up to 64 MB in place (write_file can still replace it whole)', retryable: false });
      expect(statSync(huge).size).toBe(600 * 1024 * 1024);
    });
  });

  it('the preview of an overwrite of a file over 1 MB tells its size; of one under, its diff', async () => {
    writeFileSync(join(root, 'mega.txt'), 'x'.repeat(1024 * 1024 + 1));
    expect(await defined(writeFileTool.preview)({ path: 'mega.txt', content: 'y\n' }, context)).toBe('--- a/mega.txt\n+++ b/mega.txt\n[old: 1,048,577 bytes, too large to show; new: 1 line]\n');
    writeFileSync(join(root, 'mega.txt'), 'x\n');
    expect(await defined(writeFileTool.preview)({ path: 'mega.txt', content: 'y\n' }, context)).toBe('--- a/mega.txt\n+++ b/mega.txt\n@@ -1,1 +1,1 @@\n-x\n+y\n');
  });

  it('the preview of a rewrite of every line of a long file is one line, at once', async () => {
    writeFileSync(join(root, 'rewrite.txt'), Array.from({ length: 15_000 }, (_, index) => `old ${index}\n`).join(''));
    const content = Array.from({ length: 15_000 }, (_, index) => `new ${index}\n`).join('');
    expect(await defined(writeFileTool.preview)({ path: 'rewrite.txt', content }, context)).toBe('--- a/rewrite.txt\n+++ b/rewrite.txt\n[old: 15,000 lines, new: 15,000 lines; too different to show line by line]\n');
  });

  it('overwriting a binary file is still allowed', async () => {
    writeFileSync(join(root, 'replace.bin'), Buffer.from([0, 0xff, 1]));
    await writeFileTool.run({ path: 'replace.bin', content: 'text\n' }, context);
    expect(readFileSync(join(root, 'replace.bin'), 'utf8')).toBe('text\n');
  });
});
