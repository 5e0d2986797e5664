// TokenBuffer, for generated streams: whatever the chunking, the timing and the limits, what it
// writes is exactly what it was given, in order, in no more writes than chunks, none of them empty,
// and no chunk waits longer than flushMs.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TokenBuffer } from '../../src/output/token-buffer.js';
import { manualTimers } from '../support/manual-timers.js';
import { hostileText, runs } from '../support/property.js';

/** What happens to the buffer: a chunk arrives, time passes, or the caller flushes. */
type Step = { push: string } | { wait: number } | { flush: true };

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: hostileText(3).map((push) => ({ push })), weight: 6 },
  { arbitrary: fc.nat({ max: 120 }).map((wait) => ({ wait })), weight: 2 },
  { arbitrary: fc.constant({ flush: true as const }), weight: 1 },
);

describe('TokenBuffer', () => {
  it('writes exactly the chunks it was given, in order, the first one at once, none later than flushMs, never an empty write', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 12 }), fc.nat({ max: 100 }), (steps, flushChunks, flushMs) => {
        const writes: string[] = [];
        const timers = manualTimers();
        const buffer = new TokenBuffer((text) => writes.push(text), { flushChunks, flushMs }, timers);
        const pushed: string[] = [];
        for (const each of steps) {
          if ('push' in each) {
            buffer.push(each.push);
            pushed.push(each.push);
            // The answer starts on screen with its first words.
            if (pushed.join('') === each.push && each.push !== '') expect(writes).toEqual([each.push]);
          } else if ('wait' in each) {
            timers.advance(each.wait);
            // No chunk waits longer than flushMs.
            if (each.wait >= flushMs) expect(writes.join('')).toBe(pushed.join(''));
          } else buffer.flush();
          expect(pushed.join('').startsWith(writes.join(''))).toBe(true);
        }
        buffer.flush();
        expect(writes.join('')).toBe(pushed.join(''));
        expect(writes.every((write) => write !== '')).toBe(true);
        expect(buffer.writes).toBe(writes.length);
        expect(writes.length).toBeLessThanOrEqual(pushed.filter((chunk) => chunk !== '').length);
        expect(timers.pending()).toBe(0);
      }),
      runs(400),
    );
  });
});
