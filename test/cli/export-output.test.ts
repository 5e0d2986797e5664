// `argo export -o FILE` that fails at its last step: the rename over FILE is made to fail through a
// stand-in for node:fs/promises, so the test runs anywhere, as any user.
import { mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { RuntimeError, UsageError } from '../../src/errors.js';
import { recordTurns, tempData } from '../query/helpers.js';

const failing = vi.hoisted(() => ({ onto: null as string | null }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof FsPromises>();
  const rename: typeof original.rename = async (from, to) => {
    if (String(to) === failing.onto) throw Object.assign(new Error(`ENOSPC: no space left on device, rename '${String(from)}' -> '${String(to)}'`), { code: 'ENOSPC', path: String(from), dest: String(to) });
    return original.rename(from, to);
  };
  return { ...original, rename, default: { ...original, rename } };
});

const { buildProgram } = await import('../../src/cli/main.js');
const { processIo } = await import('../../src/cli/io.js');
const { checkOutputName } = await import('../../src/cli/agent-commands.js');

describe('export -o: a rename that fails leaves nothing beside the file, and is said of the file asked for', () => {
  it('the earlier file is kept as it was, no temporary file is left, the error names FILE', async () => {
    const { home, paths } = tempData();
    await recordTurns(paths, 'work', 2);
    const dir = mkdtempSync(join(tmpdir(), 'argo-export-out-'));
    const file = join(dir, 'runs.jsonl');
    writeFileSync(file, 'earlier\n');
    failing.onto = file;
    try {
      const program = await buildProgram(processIo(), () => undefined, ['export']);
      const error: unknown = await program.parseAsync(['export', '--format', 'sharegpt', '--all', '--home', home, '-o', file], { from: 'user' }).then(
        () => null,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(RuntimeError);
      expect((error as Error).message).toBe(`cannot use ${file}: no space left on the device; free some space on its disk (df -h shows which) and try again`);
    } finally {
      failing.onto = null;
    }
    expect(readdirSync(dir)).toEqual(['runs.jsonl']);
    expect(readFileSync(file, 'utf8')).toBe('earlier\n');
  });
});

describe('checkOutputName: an --output that cannot name a file is refused before anything is read', () => {
  const folder = mkdtempSync(join(tmpdir(), 'argo-export-folder-'));
  const link = join(mkdtempSync(join(tmpdir(), 'argo-export-link-')), 'to-folder');
  symlinkSync(folder, link);
  it.each<[string, string | null]>([
    ['', '--output needs a file name (leave it out to write to standard output)'],
    ['out/', '--output out/ ends in "/", so it names a folder, not a file: give a file\'s name (such as runs.jsonl)'],
    ['runs.jsonl/', '--output runs.jsonl/ ends in "/", so it names a folder, not a file: give a file\'s name (such as runs.jsonl)'],
    ['/', '--output / ends in "/", so it names a folder, not a file: give a file\'s name (such as runs.jsonl)'],
    // A blank at either end is a quoting slip, never the file meant.
    [' ', '--output is blank: give a file\'s name (such as runs.jsonl), or leave it out to write to standard output'],
    [' runs.jsonl', '--output " runs.jsonl" starts or ends with a blank: remove it (check the quotes around the value)'],
    ['runs.jsonl\n', '--output "runs.jsonl\\n" starts or ends with a blank: remove it (check the quotes around the value)'],
    // A folder that is there, without the "/", and a link to one: refused up front as well.
    [folder, `--output ${folder} is a folder, not a file: give a file's name in it (such as ${folder}/runs.jsonl)`],
    [link, `--output ${link} is a folder, not a file: give a file's name in it (such as ${link}/runs.jsonl)`],
    ['.', "--output . is a folder, not a file: give a file's name in it (such as runs.jsonl)"],
    ['runs.jsonl', null],
    ['my runs.jsonl', null],
    ['out/runs.jsonl', null],
    [join(folder, 'runs.jsonl'), null],
    ['/dev/stdout', null],
  ])('%j', async (output, message) => {
    if (message === null) await expect(checkOutputName(output)).resolves.toBeUndefined();
    else await expect(checkOutputName(output)).rejects.toThrow(new UsageError(message));
  });
});
