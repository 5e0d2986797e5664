import { describe, expect, it } from 'vitest';
import { checkFailure } from '../../src/cli/logs.js';

describe('checkFailure', () => {
  it.each<[{ unreadable: number; damagedFiles: number; files: number; blockedDays: number }, string]>([
    [{ unreadable: 1, damagedFiles: 1, files: 1, blockedDays: 0 }, '1 unreadable line in 1 of 1 log file; readers skip them. Fix or delete those lines by hand if you want them gone'],
    [{ unreadable: 4, damagedFiles: 2, files: 3, blockedDays: 0 }, '4 unreadable lines in 2 of 3 log files; readers skip them. Fix or delete those lines by hand if you want them gone'],
    [{ unreadable: 0, damagedFiles: 0, files: 2, blockedDays: 1 }, '1 day of the log cannot be written (listed above)'],
    [{ unreadable: 0, damagedFiles: 0, files: 0, blockedDays: 2 }, '2 days of the log cannot be written (listed above)'],
    // Both: one line, not two.
    [
      { unreadable: 1, damagedFiles: 1, files: 1, blockedDays: 1 },
      '1 day of the log cannot be written (listed above), and 1 unreadable line in 1 of 1 log file; readers skip them. Fix or delete those lines by hand if you want them gone',
    ],
  ])('%j → %s', (found, line) => {
    expect(checkFailure(found)).toBe(line);
  });
});
