// `argo memo` end to end: its limits as the user meets them.
import { describe, expect, it } from 'vitest';
import { runArgo, tempHome } from '../support/run-argo.js';

describe('argo memo set: the limits count characters, as the docs do, not UTF-16 units', () => {
  it('a value of 1,000 emoji is kept; one more is refused, counted as characters', async () => {
    const home = tempHome();
    expect(await runArgo(['memo', 'set', 'smile', '😀'.repeat(1000)], { home })).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(await runArgo(['memo', 'get', 'smile'], { home })).toMatchObject({ code: 0, stdout: `${'😀'.repeat(1000)}\n` });
    expect(await runArgo(['memo', 'set', 'more', '😀'.repeat(1001)], { home })).toMatchObject({
      code: 2,
      stderr: 'argo: a memo value may have at most 1000 characters, this one has 1001; shorten it\n',
    });
  });
});
