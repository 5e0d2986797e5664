import { describe, expect, it } from 'vitest';
import { MALFORMED_PREFIX, OVERLONG_PREFIX, errorWords, guardNdjson } from '../../src/ollama/line-guard.js';

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function pass(chunks: Uint8Array[]): Promise<{ text: string; malformed: string[] }> {
  const malformed: string[] = [];
  const reader = guardNdjson(streamOf(chunks), (line) => malformed.push(line)).getReader();
  const parts: Uint8Array[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
  return { text: Buffer.concat(parts).toString('utf8'), malformed };
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** Splits `text` into pieces of `size` bytes, cutting through multi-byte characters. */
function byteChunks(text: string, size: number): Uint8Array[] {
  const all = bytes(text);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < all.length; i += size) chunks.push(all.slice(i, i + size));
  return chunks;
}

describe('guardNdjson', () => {
  const valid = '{"response":"😀 é 漢字","done":false}\n{"response":"","done":true}\n';

  it.each([1, 2, 3, 5, 7, 64])('passes valid NDJSON through unchanged when split every %i bytes (multi-byte characters cut)', async (size) => {
    expect(await pass(byteChunks(valid, size))).toEqual({ text: valid, malformed: [] });
  });

  it('passes a final line without a trailing newline', async () => {
    expect(await pass([bytes('{"a":1}\n{"b":2}')])).toEqual({ text: '{"a":1}\n{"b":2}', malformed: [] });
  });

  it.each([1, 3, 1000])('drops blank lines (a proxy keep-alive), split every %i bytes', async (size) => {
    expect(await pass(byteChunks('\n{"a":1}\n\n  \r\n{"b":2}\n\n', size))).toEqual({ text: '{"a":1}\n{"b":2}\n', malformed: [] });
    expect(await pass(byteChunks('{"a":1}\n\n', size))).toEqual({ text: '{"a":1}\n', malformed: [] });
  });

  it.each([
    ['a truncated object', '{"response":"The","do'],
    ['plain text', 'upstream connect error'],
    ['an HTML error page', '<html><body>502 Bad Gateway</body></html>'],
    ['JSON that is not an object', 'null'],
    ['a number', '42'],
    ['an array', '[{"response":"x"}]'],
  ])('replaces %s with an error line after every valid line before it, then ends', async (_name, bad) => {
    const input = `{"response":"one","done":false}\n${bad}\n{"response":"two","done":false}\n`;
    for (const size of [1, 4, 1000]) {
      const { text, malformed } = await pass(byteChunks(input, size));
      const lines = text.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toBe('{"response":"one","done":false}');
      expect(JSON.parse(lines[1] ?? '')).toEqual({ error: MALFORMED_PREFIX + bad });
      expect(malformed).toEqual([bad]);
    }
  });

  // The client parses each line with JSON.parse, which takes only JSON's whitespace (space, tab, CR,
  // LF) around a value, and its streaming decoder drops a BOM only at the start of the body: a line
  // the guard passed but JSON.parse refuses would be warned about and dropped, unseen.
  it.each<[string, string, { text: string; malformed: string[] }]>([
    ['JSON whitespace around an object', ' \t{"a":1}\r\n', { text: ' \t{"a":1}\r\n', malformed: [] }],
    ['a line of JSON whitespace only (blank)', '{"a":1}\n \t\r\n{"b":2}\n', { text: '{"a":1}\n{"b":2}\n', malformed: [] }],
    ['a BOM opening the body', '\uFEFF{"a":1}\n{"b":2}\n', { text: '\uFEFF{"a":1}\n{"b":2}\n', malformed: [] }],
    ['a BOM opening the body before a blank line', '\uFEFF\n\uFEFF{"a":1}\n', { text: '\uFEFF{"a":1}\n', malformed: [] }],
    ['a BOM opening a later line', '{"a":1}\n\uFEFF{"b":2}\n', { text: `{"a":1}\n${JSON.stringify({ error: `${MALFORMED_PREFIX}\uFEFF{"b":2}` })}\n`, malformed: ['\uFEFF{"b":2}'] }],
    ['a no-break space before an object', '\u00A0{"a":1}\n', { text: `${JSON.stringify({ error: `${MALFORMED_PREFIX}\u00A0{"a":1}` })}\n`, malformed: ['\u00A0{"a":1}'] }],
    ['a form feed after an object', '{"a":1}\f\n', { text: `${JSON.stringify({ error: `${MALFORMED_PREFIX}{"a":1}\f` })}\n`, malformed: ['{"a":1}\f'] }],
    ['a vertical tab after an object', '{"a":1}\v\n', { text: `${JSON.stringify({ error: `${MALFORMED_PREFIX}{"a":1}\v` })}\n`, malformed: ['{"a":1}\v'] }],
    ['a line of no-break spaces (no JSON whitespace)', '{"a":1}\n\u00A0\u00A0\n', { text: `{"a":1}\n${JSON.stringify({ error: `${MALFORMED_PREFIX}\u00A0\u00A0` })}\n`, malformed: ['\u00A0\u00A0'] }],
    ['a line separator before an object', '\u2028{"a":1}\n', { text: `${JSON.stringify({ error: `${MALFORMED_PREFIX}\u2028{"a":1}` })}\n`, malformed: ['\u2028{"a":1}'] }],
  ])('judges a line as JSON.parse will: %s', async (_name, input, expected) => {
    for (const size of [1, 3, 1000]) expect(await pass(byteChunks(input, size))).toEqual(expected);
  });

  it('what the guard passes, the client\'s own reader takes whole (a BOM opening the body, JSON whitespace), and what it refuses, the client would have dropped', async () => {
    const { Ollama } = await import('ollama');
    const input = '\uFEFF{"a":1,"done":false}\r\n \t{"b":2,"done":true}\t\n';
    const { text } = await pass([bytes(input)]);
    expect(text).toBe(input);
    // The client's NDJSON reader, as it reads a stream (src/utils.ts parseJSON), fed the guard's output.
    const client = new Ollama({ fetch: () => Promise.resolve(new Response(text, { status: 200 })) });
    const chunks: unknown[] = [];
    for await (const chunk of await client.generate({ model: 'm', prompt: 'p', stream: true })) chunks.push(chunk);
    expect(chunks).toEqual([{ a: 1, done: false }, { b: 2, done: true }]);
  });

  it('checks the unterminated last line at the end of the stream', async () => {
    const { text, malformed } = await pass([bytes('{"response":"ok"}\n{"respo')]);
    expect(malformed).toEqual(['{"respo']);
    expect(text).toBe(`{"response":"ok"}\n${JSON.stringify({ error: `${MALFORMED_PREFIX}{"respo` })}\n`);
  });

  it.each([
    ['x'.repeat(500), `${'x'.repeat(80)}…`],
    // Found by test/ollama/line-guard.property.test.ts: the cut split the emoji, leaving a lone surrogate.
    [`${'x'.repeat(79)}😀xx`, `${'x'.repeat(79)}…`],
  ])('shortens a long bad line in the error message (%#)', async (bad, shown) => {
    const { text } = await pass([bytes(`${bad}\n`)]);
    expect((JSON.parse(text) as { error: string }).error).toBe(`${MALFORMED_PREFIX}${shown}`);
  });
});

describe('guardNdjson: a line that does not end', () => {
  /** A body of `lines`, then `endless` without a line end, 10 bytes a chunk, for ever; counts the chunks read. */
  function endlessBody(lines: string, endless: string): { body: ReadableStream<Uint8Array>; chunksRead: () => number } {
    let read = 0;
    const head = byteChunks(lines, 10);
    const body = new ReadableStream<Uint8Array>({
      // Each chunk a turn of the event loop later, as a socket's: a guard that never stops then fails by the test's timeout.
      async pull(controller) {
        await new Promise((resolve) => setImmediate(resolve));
        read++;
        controller.enqueue(head.shift() ?? bytes(endless.repeat(10).slice(0, 10)));
      },
    });
    return { body, chunksRead: () => read };
  }

  it.each([1, 3, 1000])('whole lines that come in one chunk with a tail over the limit go on before the error (chunks of %i bytes)', async (size) => {
    const text = `{"a":1}\n{"b":2}\n${'x'.repeat(30)}`;
    const malformed: string[] = [];
    const reader = guardNdjson(streamOf(byteChunks(text, size)), (line) => malformed.push(line), 20).getReader();
    const parts: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
    const lines = Buffer.concat(parts).toString('utf8').trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['{"a":1}', '{"b":2}']);
    expect(JSON.parse(lines[2] ?? '')).toMatchObject({ error: expect.stringMatching(new RegExp(`^${OVERLONG_PREFIX}x+`)) as unknown });
    expect(lines).toHaveLength(3);
  });

  it('is cut at the limit: the lines before it go on, then an error line quoting its start, and no more is read', async () => {
    const { body, chunksRead } = endlessBody('{"response":"one","done":false}\n', 'a');
    const malformed: string[] = [];
    const reader = guardNdjson(body, (line) => malformed.push(line), 100).getReader();
    const parts: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
    const lines = Buffer.concat(parts).toString('utf8').trim().split('\n');
    expect(lines[0]).toBe('{"response":"one","done":false}');
    expect(JSON.parse(lines[1] ?? '')).toEqual({ error: `${OVERLONG_PREFIX}${'a'.repeat(80)}…` });
    expect(lines).toHaveLength(2);
    expect(malformed).toHaveLength(1);
    // 100 bytes of the line are 10 chunks, the line before it 4: the reading stopped at the limit.
    expect(chunksRead()).toBeLessThanOrEqual(16);
  });

  it.each([
    ['a line of exactly the limit', 100, 'passes'],
    ['a line one byte past the limit', 101, 'is cut'],
  ])('%s %s', async (_name, length, verdict) => {
    const line = `{"response":"${'x'.repeat(length - 15)}"}`;
    expect(line).toHaveLength(length);
    const malformed: string[] = [];
    // The line and its newline, 7 bytes a chunk: the limit is on the line's bytes before its end is seen.
    const reader = guardNdjson(streamOf(byteChunks(`${line}\n`, 7)), (bad) => malformed.push(bad), 100).getReader();
    const parts: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
    const text = Buffer.concat(parts).toString('utf8');
    if (verdict === 'passes') expect({ text, malformed }).toEqual({ text: `${line}\n`, malformed: [] });
    else expect((JSON.parse(text) as { error: string }).error).toBe(`${OVERLONG_PREFIX}${line.slice(0, 80)}…`);
  });
});


describe('errorWords: a server\'s error in words', () => {
  it.each<[unknown, string]>([
    ['model runner crashed', 'model runner crashed'],
    ['', 'an empty error'],
    [null, 'an empty error'],
    [undefined, 'an empty error'],
    [{ message: 'rate limit', type: 'x' }, 'rate limit'],
    [{ message: '', code: 7 }, '{"message":"","code":7}'],
    [{ type: 'x' }, '{"type":"x"}'],
    [{ message: 42 }, '{"message":42}'],
    [['a', 'b'], '["a","b"]'],
    [false, 'false'],
    [429, '429'],
    [{ detail: 'x'.repeat(300) }, `{"detail":"${'x'.repeat(189)}…`],
  ])('%j → %j', (error, words) => {
    expect(errorWords(error)).toBe(words);
  });
});

describe('guardNdjson: an error line whose error is not a plain string', () => {
  const chunk = '{"response":"A","done":false}\n';
  it.each([
    ['{"error":{"message":"rate limit","type":"x"}}', 'rate limit'],
    ['{"error":null}', 'an empty error'],
    ['{"error":""}', 'an empty error'],
    ['{"error":{"code":500}}', '{"code":500}'],
    ['\uFEFF{"error":null}', 'an empty error'],
  ])('%j is passed on as {"error": %j}, after the chunks before it, and ends the stream', async (line, words) => {
    // A BOM is taken only at the very start of the body.
    const first = line.startsWith('\uFEFF') ? '' : chunk;
    const expected = { text: `${first}${JSON.stringify({ error: words })}\n`, malformed: [] };
    expect(await pass([bytes(`${first}${line}\n{"response":"never","done":true}\n`)])).toEqual(expected);
    // As the last line, without its newline.
    expect(await pass([bytes(`${first}${line}`)])).toEqual(expected);
  });

  it.each(['{"error":"model runner crashed"}', '{"response":"error","done":false}', '{"response":"\\"error\\"","done":false}'])('%j is passed on as sent', async (line) => {
    expect(await pass([bytes(`${line}\n`)])).toEqual({ text: `${line}\n`, malformed: [] });
  });
});
