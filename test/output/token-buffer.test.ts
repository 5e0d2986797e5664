import { describe, expect, it } from 'vitest';
import { TokenBuffer } from '../../src/output/token-buffer.js';
import { manualTimers } from '../support/manual-timers.js';

function setup(flushChunks = 10, flushMs = 50) {
  const writes: string[] = [];
  const timers = manualTimers();
  const buffer = new TokenBuffer((text) => writes.push(text), { flushChunks, flushMs }, timers);
  return { writes, timers, buffer };
}

describe('TokenBuffer', () => {
  it('writes the first chunk at once so the answer starts immediately', () => {
    const { writes, buffer } = setup();
    buffer.push('Hello');
    expect(writes).toEqual(['Hello']);
  });

  it('then writes every 10 chunks', () => {
    const { writes, buffer } = setup();
    for (let i = 0; i < 21; i++) buffer.push(`t${i} `);
    expect(writes).toHaveLength(3);
    expect(writes[1]).toBe('t1 t2 t3 t4 t5 t6 t7 t8 t9 t10 ');
    expect(writes[2]).toBe('t11 t12 t13 t14 t15 t16 t17 t18 t19 t20 ');
  });

  it('or 50 ms after the oldest unwritten chunk, whichever comes first', () => {
    const { writes, timers, buffer } = setup();
    buffer.push('a');
    buffer.push('b');
    timers.advance(30);
    buffer.push('c');
    expect(writes).toEqual(['a']);
    timers.advance(20);
    expect(writes).toEqual(['a', 'bc']);
    expect(timers.pending()).toBe(0);
  });

  it('flush() writes the rest and cancels the timer', () => {
    const { writes, timers, buffer } = setup();
    buffer.push('a');
    buffer.push('b');
    buffer.flush();
    expect(writes).toEqual(['a', 'b']);
    expect(timers.pending()).toBe(0);
    buffer.flush();
    expect(writes).toEqual(['a', 'b']);
  });

  it('ignores empty chunks', () => {
    const { writes, buffer } = setup();
    buffer.push('');
    buffer.push('x');
    buffer.push('');
    buffer.flush();
    expect(writes).toEqual(['x']);
  });

  it('costs about 100 writes per 1,000 fast chunks', () => {
    const { buffer } = setup();
    for (let i = 0; i < 1000; i++) buffer.push('w ');
    buffer.flush();
    expect(buffer.writes).toBe(101);
  });

  it('keeps every character across flushes, multi-byte included', () => {
    const { writes, timers, buffer } = setup(3, 50);
    const chunks = ['😀', 'é', '漢', '字', ' ', '🚀🚀', 'end'];
    for (const chunk of chunks) {
      buffer.push(chunk);
      timers.advance(10);
    }
    buffer.flush();
    expect(writes.join('')).toBe(chunks.join(''));
  });
});
