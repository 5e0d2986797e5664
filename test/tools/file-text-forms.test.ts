// What the file tools show and keep of a file's form: where a read cut short inside a line leads, a
// UTF-8 byte order mark (not shown, kept as it was) and the line endings an append writes.
import { mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { editFileTool, writeFileTool, writePreview } from '../../src/tools/edit.js';
import { READ_CAP_BYTES, readFileTool, searchFilesTool } from '../../src/tools/fs.js';
import type { ToolContext } from '../../src/tools/types.js';

const BOM = '\ufeff';
let root: string;
let context: ToolContext;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'argo-text-forms-')));
  context = { root, home: join(root, '.argo-home'), signal: new AbortController().signal };
});

const LAST_LINE = "it is the file's last line: read_file shows no more of it (run_command, if offered, can: head -c or tail -c)";

describe('read_file: a line cut short says where to go on', () => {
  it.each<[string, string, Record<string, unknown>, number | undefined, string]>([
    // what the file is, its text, the call's arguments, the result budget, the note's end
    ['one line over the cap, no newline', 'y'.repeat(200_000), {}, undefined, `line 1 is longer than the 50 KB cap and was cut there; ${LAST_LINE}`],
    ['one line over the cap and its newline', `${'y'.repeat(200_000)}\n`, {}, undefined, `line 1 is longer than the 50 KB cap and was cut there; ${LAST_LINE}`],
    ['one CRLF line over the cap', `${'y'.repeat(200_000)}\r\n`, {}, undefined, `line 1 is longer than the 50 KB cap and was cut there; ${LAST_LINE}`],
    ['a last line over the cap, after others', `a\nb\n${'y'.repeat(70_000)}`, { offset: 3 }, undefined, `line 3 is longer than the 50 KB cap and was cut there; ${LAST_LINE}`],
    ['a line over the cap within one read chunk, then another', `${'y'.repeat(60_000)}\nz`, {}, undefined, 'line 1 is longer than the 50 KB cap and was cut there; the next line is 2 (read on with offset 2)'],
    ['a line over the cap, its newline at a chunk edge, then another', `${'y'.repeat(64 * 1024 - 1)}\nz`, {}, undefined, 'line 1 is longer than the 50 KB cap and was cut there; the next line is 2 (read on with offset 2)'],
    ['a line over the cap, an empty line after it', `${'y'.repeat(200_000)}\n\n`, {}, undefined, 'line 1 is longer than the 50 KB cap and was cut there; the next line is 2 (read on with offset 2)'],
    ['ten megabytes of one line, over the budget too', 'y'.repeat(10 * 1024 * 1024), {}, 4000, `line 1 is longer than one result holds and was cut; ${LAST_LINE}`],
    ['one line over the budget alone', 'w'.repeat(10_000), {}, 4000, `line 1 is longer than one result holds and was cut; ${LAST_LINE}`],
    ['one line over the budget and its newline', `${'w'.repeat(10_000)}\n`, {}, 4000, `line 1 is longer than one result holds and was cut; ${LAST_LINE}`],
    ['a line over the budget, then another', `${'w'.repeat(10_000)}\nnext`, {}, 4000, 'line 1 is longer than one result holds and was cut; the next line is 2 (read on with offset 2)'],
    ['a line over the budget read alone (limit 1), then one without a newline', `${'w'.repeat(10_000)}\nnext`, { limit: 1 }, 4000, 'line 1 is longer than one result holds and was cut; the next line is 2 (read on with offset 2)'],
    ['a line over the cap and the budget, then another', `${'y'.repeat(200_000)}\nnext\n`, {}, 4000, 'line 1 is longer than one result holds and was cut; the next line is 2 (read on with offset 2)'],
  ])('%s', async (_name, text, args, budget, note) => {
    writeFileSync(join(root, 'wide.txt'), text);
    const result = await readFileTool.run({ path: 'wide.txt', ...args }, { ...context, ...(budget !== undefined ? { resultBudget: budget } : {}) });
    expect(result).toMatchObject({ truncated: true, note });
    if (budget === undefined) expect(Buffer.byteLength(String(result.content))).toBe(READ_CAP_BYTES);
  });

  it('a whole last line read alone (limit 1) is not cut, and says nothing', async () => {
    writeFileSync(join(root, 'two.txt'), 'one\ntwo');
    expect(await readFileTool.run({ path: 'two.txt', offset: 2, limit: 1 }, context)).toEqual({ path: 'two.txt', from_line: 2, to_line: 2, content: 'two' });
  });
});

describe('a UTF-8 byte order mark: not shown, not searched, kept', () => {
  it.each<[string, string, Record<string, unknown>, Record<string, unknown>]>([
    ['line 1 without it', `${BOM}#!/bin/sh\necho hi\n`, {}, { content: '#!/bin/sh\necho hi', to_line: 2 }],
    ['a CRLF file', `${BOM}a\r\nb\r\n`, {}, { content: 'a\nb' }],
    ['from line 2, nothing to take', `${BOM}a\nb`, { offset: 2 }, { content: 'b', from_line: 2 }],
    ['a file of the mark alone', BOM, {}, { content: '', to_line: 1 }],
    ['a mark past the start is a character', `a\n${BOM}b`, {}, { content: `a\n${BOM}b` }],
    ['only one is taken', `${BOM}${BOM}a`, {}, { content: `${BOM}a` }],
  ])('read_file: %s', async (_name, text, args, expected) => {
    writeFileSync(join(root, 'bom.txt'), text);
    expect(await readFileTool.run({ path: 'bom.txt', ...args }, context)).toMatchObject(expected);
  });

  it('read_file: a first line over the cap, the mark left out of it', async () => {
    writeFileSync(join(root, 'bom-wide.txt'), `${BOM}${'y'.repeat(200_000)}`);
    const result = await readFileTool.run({ path: 'bom-wide.txt' }, context);
    expect(String(result.content)).toMatch(/^y+$/);
  });

  it('search_files: ^ matches at line 1 of a file that has one', async () => {
    writeFileSync(join(root, 'run.sh'), `${BOM}#!/bin/sh\r\necho\r\n`);
    writeFileSync(join(root, 'plain.sh'), '#!/bin/bash\n');
    expect(await searchFilesTool.run({ pattern: '^#!' }, context)).toEqual({
      matches: [
        { file: 'plain.sh', line: 1, text: '#!/bin/bash' },
        { file: 'run.sh', line: 1, text: '#!/bin/sh' },
      ],
    });
  });

  it.each<[string, string, Record<string, unknown>, string]>([
    // what is done, the file before, the call (edit_file when it has "old"), the file after
    ['an edit of line 1 keeps the one mark', `${BOM}a\nb\n`, { old: 'a', new: 'A' }, `${BOM}A\nb\n`],
    ['an edit of a later line keeps it', `${BOM}a\nb\n`, { old: 'b', new: 'B' }, `${BOM}a\nB\n`],
    ['an edit of the whole text as read_file shows it keeps it', `${BOM}a\nb`, { old: 'a\nb', new: 'c' }, `${BOM}c`],
    ['an overwrite keeps it', `${BOM}a\n`, { content: 'b\n' }, `${BOM}b\n`],
    ['an overwrite that gives it does not double it', `${BOM}a\n`, { content: `${BOM}b\n` }, `${BOM}b\n`],
    ['an overwrite of a file without one adds none', 'a\n', { content: 'b\n' }, 'b\n'],
    ['an overwrite of an empty file adds none', '', { content: 'b\n' }, 'b\n'],
    ['an append keeps it once', `${BOM}a\n`, { content: 'b\n', mode: 'append' }, `${BOM}a\nb\n`],
  ])('%s', async (_name, before, args, after) => {
    writeFileSync(join(root, 'kept.txt'), before);
    await ('old' in args ? editFileTool : writeFileTool).run({ path: 'kept.txt', ...args }, context);
    expect(readFileSync(join(root, 'kept.txt'), 'utf8')).toBe(after);
  });

  it("an overwrite's preview shows the mark kept: line 1 is not said to change", async () => {
    writeFileSync(join(root, 'preview.txt'), `${BOM}same\nold\n`);
    const preview = await writePreview({ path: 'preview.txt', content: 'same\nnew\n' }, context);
    expect(preview).toContain('-old');
    expect(preview).not.toContain('-\ufeffsame');
  });

  it('a new file (mode create) is written as given', async () => {
    await writeFileTool.run({ path: 'new.txt', content: 'x\n', mode: 'create' }, context);
    expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('x\n');
  });
});

describe('write_file append: new lines end as the file\'s do, as an edit\'s do', () => {
  it.each<[string, string | null, string, string, number]>([
    // what the file is, its text (null: none yet), the content appended, the file after, bytes_written
    ['all CRLF', 'a\r\nb\r\n', 'Z\n', 'a\r\nb\r\nZ\r\n', 3],
    ['all CRLF, several lines', 'a\r\n', 'x\ny\n', 'a\r\nx\r\ny\r\n', 6],
    ['all CRLF, content already CRLF', 'a\r\n', 'x\r\n', 'a\r\nx\r\n', 3],
    ['all CRLF, no newline at its end', 'a\r\nb', '\nc', 'a\r\nb\r\nc', 3],
    ['all CRLF, content with no line end', 'a\r\n', 'tail', 'a\r\ntail', 4],
    ['LF', 'a\nb\n', 'Z\n', 'a\nb\nZ\n', 2],
    ['both endings: as given', 'a\r\nb\n', 'Z\n', 'a\r\nb\nZ\n', 2],
    ['no line end yet: as given', 'a', '\nZ\n', 'a\nZ\n', 3],
    ['empty: as given', '', 'Z\n', 'Z\n', 2],
    ['none yet (the append creates it): as given', null, 'Z\n', 'Z\n', 2],
  ])('%s', async (_name, before, content, after, bytes) => {
    if (before !== null) writeFileSync(join(root, 'log.txt'), before);
    expect(await writeFileTool.run({ path: 'log.txt', content, mode: 'append' }, context)).toMatchObject({ bytes_written: bytes });
    expect(readFileSync(join(root, 'log.txt'), 'utf8')).toBe(after);
  });
});
