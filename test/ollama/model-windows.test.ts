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

  it('does not keep a question that failed: the turns waiting on it get no window, the next turn asks again', async () => {
    const windows = new ModelWindows(60_000, () => 1_000);
    let down = true;
    const ask = vi.fn(() => (down ? Promise.reject(new Error('connect ECONNREFUSED')) : Promise.resolve(8192)));
    expect(await Promise.all([windows.get('argo', ask), windows.get('argo', ask)])).toEqual([null, null]);
    expect(ask).toHaveBeenCalledTimes(1);
    down = false;
    expect(await windows.get('argo', ask)).toBe(8192);
    expect(await windows.get('argo', ask)).toBe(8192);
    expect(ask).toHaveBeenCalledTimes(2);
  });
});
