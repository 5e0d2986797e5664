import { describe, expect, it } from 'vitest';
import { TextChunks } from '../../src/output/text-chunks.js';

/** Writes each line of `lines` piece by piece; returns what reached the output, one entry per write. */
function written(lines: readonly (readonly string[])[], chunkBytes: number): string[] {
  const writes: string[] = [];
  const text = new TextChunks({ write: (chunk: string) => writes.push(chunk) }, chunkBytes);
  for (const pieces of lines) {
    for (const piece of pieces) text.add(piece);
    text.endLine();
  }
  text.flush();
  return writes;
}

describe('TextChunks: pieces in, the same text out in chunks of whole lines', () => {
  it.each<[string, string[][], number, number]>([
    // name, lines (as pieces), chunk bytes, writes expected
    ['nothing', [], 16, 0],
    ['one short line', [['a', 'b']], 16, 1],
    ['lines that fill several chunks', Array.from({ length: 10 }, (_, i) => ['line ', String(i)]), 16, 4],
    ['non-ASCII pieces (2, 3 and 4 bytes)', [['é', '…', '😀'], ['ü'], ['日本語']], 8, 2],
    ['a piece larger than the buffer goes out whole', [['x'.repeat(100)], ['after']], 8, 2],
    ['an empty piece', [[''], ['']], 16, 1],
  ])('%s', (_name, lines, chunkBytes, writes) => {
    const out = written(lines, chunkBytes);
    expect(out.join('')).toBe(lines.map((pieces) => `${pieces.join('')}\n`).join(''));
    expect(out).toHaveLength(writes);
  });

  it('ends every chunk but an oversized piece on a line end', () => {
    const lines = Array.from({ length: 200 }, (_, i) => ['turn ', String(i), ' ü']);
    const out = written(lines, 64);
    expect(out.length).toBeGreaterThan(10);
    for (const chunk of out) expect(chunk.endsWith('\n')).toBe(true);
  });

  it('writes the same bytes as one write of the whole text, lone surrogates included', () => {
    const lines = [['a\ud800', 'b'], ['\udc00c'], ['😀']];
    const whole = lines.map((pieces) => `${pieces.join('')}\n`).join('');
    expect(Buffer.from(written(lines, 4).join(''))).toEqual(Buffer.from(whole));
  });
});
