// Timers a test moves by hand, for code that takes its timers as a port (TokenBuffer).
import type { BufferTimers } from '../../src/output/token-buffer.js';

/** Timers under the test's control: `advance(ms)` fires what is due. */
export function manualTimers(): BufferTimers & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let next = 1;
  const due = new Map<number, { at: number; run: () => void }>();
  return {
    setTimeout: (run, ms) => {
      const id = next++;
      due.set(id, { at: now + ms, run });
      return id;
    },
    clearTimeout: (id) => void due.delete(id as number),
    advance(ms) {
      now += ms;
      for (const [id, timer] of [...due].sort((a, b) => a[1].at - b[1].at)) {
        if (timer.at <= now) {
          due.delete(id);
          timer.run();
        }
      }
    },
    pending: () => due.size,
  };
}
