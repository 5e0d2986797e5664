import { describe, expect, it } from 'vitest';
import { oneShotFetch } from '../../src/cli/one-shot-fetch.js';

describe('oneShotFetch', () => {
  it('resolves fetch before it sets the flag, sets it once, and passes every call through', async () => {
    const events: string[] = [];
    const base = ((input: string | URL | Request) => {
      events.push(`fetch ${input as string}`);
      return Promise.resolve(new Response('ok'));
    }) as typeof fetch;
    const wrapped = oneShotFetch(
      () => {
        events.push('resolve');
        return base;
      },
      (flags) => events.push(`flags ${flags}`),
    );
    expect(events).toEqual([]); // nothing loads or changes until a request is made
    expect(await (await wrapped('http://127.0.0.1:1/a')).text()).toBe('ok');
    await wrapped('http://127.0.0.1:1/b');
    expect(events).toEqual(['resolve', 'flags --liftoff-only', 'fetch http://127.0.0.1:1/a', 'fetch http://127.0.0.1:1/b']);
  });
});
