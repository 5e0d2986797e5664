import { describe, expect, it } from 'vitest';
import { isBlankPrompt } from '../../src/text/prompt.js';

describe('isBlankPrompt: what is no prompt, for the CLI, a chat and the server alike', () => {
  it.each([
    ['', true],
    ['   ', true],
    [' \n\t\r ', true],
    // JavaScript's whitespace: a no-break space and a byte order mark are blank too.
    ['\u00a0\ufeff', true],
    ['?', false],
    ['  hi  ', false],
    // Half an emoji is taken as U+FFFD, which is text.
    ['\ufffd', false],
  ])('%j → %s', (text, blank) => {
    expect(isBlankPrompt(text)).toBe(blank);
  });
});
