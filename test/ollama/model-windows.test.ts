import { describe, expect, it, vi } from 'vitest';
import { ModelWindows } from '../../src/ollama/transport.js';

describe('ModelWindows', () => {
  it.each([
    // [max age ms, ms between the two asks, asks of Ollama]
    [Number.POSITIVE_INFINITY, 10_000_000, 1],
    [60_000, 0, 1],
    [60_000, 59_999, 1],
    [60_000, 60_000, 2],
    [60_000, 90_000, 2],
  ])('kept for %s ms, asked again after %s ms: Ollama asked %s time(s)', async (maxAge, gap, asks) => {
    let now = 1_000;
    const windows = new ModelWindows(maxAge, () => now);
    const ask = vi.fn(() => Promise.resolve(4096));
    expect(await windows.get('argo', ask)).toBe(4096);
    now += gap;
    expect(await windows.get('argo', ask)).toBe(4096);
    expect(ask).toHaveBeenCalledTimes(asks);
  });

  it('keeps models apart, and shares one question asked at once', async () => {
    const windows = new ModelWindows();
    const ask = vi.fn((model: string) => Promise.resolve(model === 'small' ? 2048 : null));
    const [a, b, c] = await Promise.all([windows.get('small', () => ask('small')), windows.get('small', () => ask('small')), windows.get('big', () => ask('big'))]);
    expect([a, b, c]).toEqual([2048, 2048, null]);
    expect(ask.mock.calls).toEqual([['small'], ['big']]);
  });

  it('does not keep a question that failed: the turns waiting on it are told, the next turn asks again', async () => {
    const windows = new ModelWindows(60_000, () => 1_000);
    let down = true;
    const ask = vi.fn(() => (down ? Promise.reject(new Error('connect ECONNREFUSED')) : Promise.resolve(8192)));
    const failed = await Promise.allSettled([windows.get('argo', ask), windows.get('argo', ask)]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(ask).toHaveBeenCalledTimes(1);
    down = false;
    expect(await windows.get('argo', ask)).toBe(8192);
    expect(await windows.get('argo', ask)).toBe(8192);
    expect(ask).toHaveBeenCalledTimes(2);
  });

  it.each([
    // turns waiting, how many give up (their signal aborts) → the question cancelled, asked again by the next turn
    [1, 1, true],
    [2, 1, false],
    [2, 2, true],
  ])('%i turn(s) waiting, %i give up: the question is cancelled %s', async (waiting, giveUp, cancelled) => {
    const windows = new ModelWindows();
    const questions: AbortSignal[] = [];
    let answer: (window: number) => void = () => undefined;
    const ask = vi.fn((signal: AbortSignal) => {
      questions.push(signal);
      return new Promise<number | null>((resolve, reject) => {
        answer = resolve;
        signal.addEventListener('abort', () => reject(new Error('aborted')));
      });
    });
    const controllers = Array.from({ length: waiting }, () => new AbortController());
    const waits = controllers.map((controller) => windows.get('argo', ask, controller.signal));
    for (const controller of controllers.slice(0, giveUp)) controller.abort();
    answer(2048);
    const settled = await Promise.allSettled(waits);
    expect(settled.map((result) => result.status)).toEqual(controllers.map((_c, i) => (i < giveUp ? 'rejected' : 'fulfilled')));
    expect(questions[0]?.aborted).toBe(cancelled);
    const again = windows.get('argo', ask);
    answer(4096);
    expect(await again).toBe(cancelled ? 4096 : 2048);
    expect(ask).toHaveBeenCalledTimes(cancelled ? 2 : 1);
  });

  it('a turn whose signal aborted already does not wait', async () => {
    const windows = new ModelWindows();
    const never = vi.fn(() => new Promise<number | null>(() => undefined));
    await expect(windows.get('argo', never, AbortSignal.abort())).rejects.toThrow('cancelled');
  });
});
