import { FILE_HEADERS_ONLY, applyPatch, createTwoFilesPatch } from 'diff';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LINE_MOST_CHARS, PREVIEW_MOST_LINES, changedPart, diffPreview, lineCount, shownLine, unreadPreview } from '../../src/tools/diff-preview.js';
import { runs } from '../support/property.js';

const numbered = (count: number, word = 'line'): string => Array.from({ length: count }, (_, index) => `${word} ${index + 1}\n`).join('');

describe('lineCount', () => {
  it.each([
    ['', 0],
    ['a', 1],
    ['a\n', 1],
    ['a\nb', 2],
    ['\n\n', 2],
    ['a\r\nb\r\n', 2],
  ])('%j has %i lines', (text, count) => {
    expect(lineCount(text)).toBe(count);
  });
});

describe('changedPart', () => {
  it.each<[string, string, string, { skipped: number; before: string; after: string }]>([
    // name, before, after, the part diffed
    ['nothing changed', 'a\nb\n', 'a\nb\n', { skipped: 0, before: 'a\nb\n', after: 'a\nb\n' }],
    ['one line in the middle, three lines of context each side', numbered(10), numbered(10).replace('line 5\n', 'five\n'), { skipped: 1, before: 'line 2\nline 3\nline 4\nline 5\nline 6\nline 7\nline 8\n', after: 'line 2\nline 3\nline 4\nfive\nline 6\nline 7\nline 8\n' }],
    ['the first line', 'a\nb\nc\nd\ne\nf\n', 'A\nb\nc\nd\ne\nf\n', { skipped: 0, before: 'a\nb\nc\nd\n', after: 'A\nb\nc\nd\n' }],
    ['a line added at the end', 'a\nb\n', 'a\nb\nc\n', { skipped: 0, before: 'a\nb\n', after: 'a\nb\nc\n' }],
    ['a last line without a newline given one', numbered(6).slice(0, -1), numbered(6), { skipped: 2, before: 'line 3\nline 4\nline 5\nline 6', after: 'line 3\nline 4\nline 5\nline 6\n' }],
    ['a new file', '', 'x\ny\n', { skipped: 0, before: '', after: 'x\ny\n' }],
    ['a file emptied', 'x\ny\n', '', { skipped: 0, before: 'x\ny\n', after: '' }],
    ['a change inside a line: the whole line', numbered(8), numbered(8).replace('line 8', 'line 8!'), { skipped: 4, before: 'line 5\nline 6\nline 7\nline 8\n', after: 'line 5\nline 6\nline 7\nline 8!\n' }],
    ['a repeated line inserted: the shared head and tail never overlap', 'x\nx\nx\n', 'x\nx\nx\nx\n', { skipped: 0, before: 'x\nx\nx\n', after: 'x\nx\nx\nx\n' }],
  ])('%s', (_name, before, after, part) => {
    expect(changedPart(before, after)).toEqual(part);
  });
});

describe('diffPreview', () => {
  // The part diffed with its line numbers moved gives the diff of the whole files, as the library gives it.
  it.each<[string, string | null, string]>([
    ['one line in a long file', numbered(2000), numbered(2000).replace('line 1000\n', 'one thousand\n')],
    ['two changes far apart: two hunks', numbered(200), numbered(200).replace('line 10\n', 'ten\n').replace('line 150\n', 'x\ny\n')],
    ['two changes close together: one hunk', numbered(40), numbered(40).replace('line 10\n', 'ten\n').replace('line 14\n', '')],
    ['lines added at the end', numbered(50), `${numbered(50)}more\nand more\n`],
    ['lines added at the start', numbered(50), `first\n${numbered(50)}`],
    ['lines removed at the end', numbered(50), numbered(45)],
    ['no newline at the end, before', numbered(20).slice(0, -1), numbered(20)],
    ['no newline at the end, after', numbered(20), `${numbered(20)}tail`],
    ['CRLF lines', numbered(20).replaceAll('\n', '\r\n'), numbered(20).replaceAll('\n', '\r\n').replace('line 7', 'seven')],
    ['nothing changed', numbered(30), numbered(30)],
    ['a new file', null, 'one\ntwo\n'],
    ['a file emptied', 'one\ntwo\n', ''],
    ['everything changed, a few lines', 'a\nb\nc\n', 'x\ny\n'],
  ])('%s: the same diff as of the whole files', async (_name, before, after) => {
    const whole = createTwoFilesPatch(before === null ? '/dev/null' : 'a/f.txt', 'b/f.txt', before ?? '', after, undefined, undefined, { context: 3, headerOptions: FILE_HEADERS_ONLY });
    expect(await diffPreview('f.txt', before, after)).toBe(whole);
  });

  it('a rewrite of every line of a long file is told in one line, at once, not diffed for a minute', async () => {
    const before = numbered(15_000, 'old');
    const after = numbered(15_000, 'new');
    const started = Date.now();
    expect(await diffPreview('big.txt', before, after)).toBe('--- a/big.txt\n+++ b/big.txt\n[old: 15,000 lines, new: 15,000 lines; too different to show line by line]\n');
    // The diff gives up after 250 ms; the rest (finding the shared lines, counting) is linear.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a change past the size the diff takes is told in one line', async () => {
    const line = `${'x'.repeat(99)}\n`;
    const before = line.repeat(12_000);
    const after = line.repeat(12_000).replaceAll('x', 'y');
    expect(await diffPreview('wide.txt', before, after)).toBe('--- a/wide.txt\n+++ b/wide.txt\n[old: 12,000 lines, new: 12,000 lines; too large to show line by line]\n');
    // A new file as large: only the new side is counted.
    expect(await diffPreview('wide.txt', null, after)).toBe('--- /dev/null\n+++ b/wide.txt\n[new: 12,000 lines; too large to show line by line]\n');
  });

  it('a long diff shows its first lines, then how much more there was', async () => {
    const preview = await diffPreview('made.txt', null, numbered(3000));
    const lines = preview.split('\n');
    expect(lines.slice(0, 3)).toEqual(['--- /dev/null', '+++ b/made.txt', '@@ -0,0 +1,3000 @@']);
    expect(lines).toHaveLength(PREVIEW_MOST_LINES + 2);
    expect(lines.at(-3)).toBe(`+line ${PREVIEW_MOST_LINES - 3}`);
    expect(lines.at(-2)).toBe(`[… 2,503 more lines of the diff not shown: 0 removed and 3,000 added in all]`);
    expect(lines.at(-1)).toBe('');
  });

  it('a change in a one-line file of 100,000 characters (minified JSON) shows the change on both sides', async () => {
    const before = JSON.stringify(Array.from({ length: 5000 }, (_, id) => ({ id, v: 'x' })));
    const after = before.replace('{"id":3000,"v":"x"}', '{"id":3000,"v":"CHANGED"}');
    const preview = await diffPreview('data.json', before, after);
    const lines = preview.split('\n');
    expect(lines.slice(0, 3)).toEqual(['--- a/data.json', '+++ b/data.json', '@@ -1,1 +1,1 @@']);
    expect(lines[3]).toMatch(/^-\[… [\d,]+ characters not shown …\].*\{"id":3000,"v":"x"\}.*\[… [\d,]+ more characters not shown …\]$/);
    expect(lines[5]).toMatch(/^\+\[… [\d,]+ characters not shown …\].*\{"id":3000,"v":"CHANGED"\}.*\[… [\d,]+ more characters not shown …\]$/);
    expect(preview).not.toContain('of the diff not shown');
    expect(preview.length).toBeLessThan(3 * LINE_MOST_CHARS);
  });

  it('many long lines: each cut around its change, then the diff by its characters', async () => {
    const wide = (count: number, word: string): string => Array.from({ length: count }, (_, index) => `${word}${index} ${'w'.repeat(3000)}\n`).join('');
    const preview = await diffPreview('wide.txt', wide(200, 'old'), wide(200, 'new'));
    expect(preview.length).toBeLessThan(52_000);
    expect(preview).toMatch(/\n\[… [\d,]+ more lines of the diff not shown: 200 removed and 200 added in all\]\n$/);
    expect(preview).toContain('\n-old0 www');
  });

  it('a diff of long lines is cut by its characters too', async () => {
    const preview = await diffPreview('wide.txt', null, `${'w'.repeat(999)}\n`.repeat(100));
    expect(preview.length).toBeLessThan(52_000);
    expect(preview).toMatch(/\n\[… 5\d more lines of the diff not shown: 0 removed and 100 added in all\]\n$/);
  });
});

describe('shownLine: a long diff line cut around its change', () => {
  const digits = (count: number, from = 0): string => Array.from({ length: count }, (_, index) => String((from + index) % 10)).join('');
  const text = digits(5000);
  const changedAt = (at: number): string => `${text.slice(0, at)}X${text.slice(at + 1)}`;
  it.each<[string, string, string | null, string]>([
    // name, the line, its counterpart, as shown
    ['a short line: whole', '-abc', '+abd', '-abc'],
    [`a line of ${LINE_MOST_CHARS} characters: whole`, `+${digits(LINE_MOST_CHARS)}`, null, `+${digits(LINE_MOST_CHARS)}`],
    ['no counterpart: its start', `+${text}`, null, `+${digits(1000)}[… 4,000 more characters not shown …]`],
    ['a context line: its start', ` ${text}`, null, ` ${digits(1000)}[… 4,000 more characters not shown …]`],
    ['changed in the middle: from 200 characters before the change', `-${text}`, `+${changedAt(2500)}`, `-[… 2,300 characters not shown …]${digits(1000, 2300)}[… 1,700 more characters not shown …]`],
    ['its counterpart the same way', `+${changedAt(2500)}`, `-${text}`, `+[… 2,300 characters not shown …]${changedAt(2500).slice(2300, 3300)}[… 1,700 more characters not shown …]`],
    ['changed near the start: from the start', `-${text}`, `+${changedAt(150)}`, `-${digits(1000)}[… 4,000 more characters not shown …]`],
    ['changed near the end: its last characters', `-${text}`, `+${changedAt(4900)}`, `-[… 4,000 characters not shown …]${digits(1000, 4000)}`],
    ['text added at its end: its last characters', `+${text}tail`, `-${text}`, `+[… 4,004 characters not shown …]${`${text}tail`.slice(4004)}`],
  ])('%s', (_name, line, counterpart, shown) => {
    expect(shownLine(line, counterpart)).toBe(shown);
  });

  it('never cuts an emoji in half', () => {
    const emoji = '😀'.repeat(3000);
    for (const counterpart of [null, `+${emoji.slice(0, 2401)}x`, `+${emoji.slice(0, 2400)}x`]) {
      const shown = shownLine(`-${emoji}`, counterpart).replace(/\[… [\d,]+ (?:more )?characters not shown …\]/g, '');
      expect(shown.slice(1)).toMatch(/^(?:😀)+$/u);
    }
  });

  it('as a property: the part shown is the line\'s own, holds where it first differs, and is at most LINE_MOST_CHARS long', () => {
    const line = fc.string({ unit: fc.constantFrom('a', 'b'), minLength: 0, maxLength: 4000 });
    fc.assert(
      fc.property(line, line, (text, other) => {
        const shown = shownLine(`-${text}`, `+${other}`);
        const before = Number((/^-\[… ([\d,]+) characters not shown …\]/.exec(shown)?.[1] ?? '0').replaceAll(',', ''));
        const part = shown.slice(1).replace(/^\[… [\d,]+ characters not shown …\]/, '').replace(/\[… [\d,]+ more characters not shown …\]$/, '');
        expect(text.slice(before, before + part.length)).toBe(part);
        expect(part.length).toBe(Math.min(text.length, LINE_MOST_CHARS));
        let differs = 0;
        while (differs < Math.min(text.length, other.length) && text[differs] === other[differs]) differs++;
        if (differs < text.length) expect(differs >= before && differs < before + part.length).toBe(true);
      }),
      runs(300),
    );
  });
});

describe('unreadPreview', () => {
  it.each([
    ['two lines', 'a\nb\n', '--- a/huge.log\n+++ b/huge.log\n[old: 629,145,600 bytes, too large to show; new: 2 lines]\n'],
    ['one line', 'a', '--- a/huge.log\n+++ b/huge.log\n[old: 629,145,600 bytes, too large to show; new: 1 line]\n'],
  ])('%s', (_name, after, preview) => {
    expect(unreadPreview('huge.log', 600 * 1024 * 1024, after)).toBe(preview);
  });
});

describe('diffPreview, as a property', () => {
  // Few distinct lines, so repeats make the shared head and tail ambiguous; any line end, or none at the end.
  const texts = fc.array(fc.constantFrom('a', 'b', 'c', ''), { maxLength: 40 }).chain((words) =>
    fc.constantFrom('\n', '\r\n').chain((end) => fc.boolean().map((last) => words.map((word) => `${word}${end}`).join('').slice(0, last || words.length === 0 ? undefined : -end.length))),
  );

  it('the diff shown, applied to the old text, gives the new one', async () => {
    await fc.assert(
      fc.asyncProperty(texts, texts, async (before, after) => {
        const preview = await diffPreview('f.txt', before, after);
        expect(applyPatch(before, preview)).toBe(after);
      }),
      runs(500),
    );
  });

  // An edit somewhere in a text: the shared head and tail are long, and moved line numbers matter.
  it('the same for a text changed in one place', async () => {
    const edited = fc.tuple(texts, fc.nat(), fc.nat({ max: 5 }), texts).map(([before, at, removed, inserted]) => {
      const lines = before.split(/(?<=\n)/);
      const start = Math.min(at, lines.length);
      return { before, after: [...lines.slice(0, start), inserted, ...lines.slice(start + removed)].join('') };
    });
    await fc.assert(
      fc.asyncProperty(edited, async ({ before, after }) => {
        expect(applyPatch(before, await diffPreview('f.txt', before, after))).toBe(after);
      }),
      runs(500),
    );
  });
});
