import { describe, expect, it } from 'vitest';
import { checkSessionName, checkSessionNameAt, commandWithNames, earlierNameError, isEarlierSessionName, isSessionName } from '../../src/sessions/names.js';
import { UsageError } from '../../src/errors.js';
import { thrown } from '../support/thrown.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

describe('isSessionName: one rule for every command', () => {
  it.each([
    ['work', true],
    ['my-work_2', true],
    ['v1.5', true],
    ['a', true],
    ['x'.repeat(64), true],
    ['x'.repeat(65), false],
    ['', false],
    ['.hidden', false], // a hidden record file is skipped by every listing
    ['.', false],
    ['..', false],
    ['../etc', false],
    ['a/b', false],
    ['my work', false],
    ['trailing.', true],
  ])('%j → %s', (name, valid) => {
    expect(isSessionName(name)).toBe(valid);
  });

  it('a bad name is a usage error naming where it came from', () => {
    const error = thrown(() => checkSessionName('a/b', 'sessions fork'));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe('sessions fork: invalid session name "a/b": use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot');
  });

  it('a name with a leading dot gets the rule like any other: whether such a session is on disk is not known here', () => {
    const error = thrown(() => checkSessionName('.hidden', '--session'));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe('--session: invalid session name ".hidden": use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot');
  });
});

describe('checkSessionNameAt: the rename hint only where the session an earlier version made is on disk', () => {
  const dir = mkdtempSync(join(tmpdir(), 'argo-names-'));
  writeFileSync(join(dir, '.notes.json'), JSON.stringify({ name: '.notes', id: '00000000-0000-4000-8000-000000000001', title: '', turns: 0, created_at: 'x', last_used_at: 'x', last_model: null }));
  writeFileSync(join(dir, '.broken.json'), '{"name":');
  const RULE = 'use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot';
  it.each<[string, string | null]>([
    ['work', null],
    ['.notes', 'sessions fork: invalid session name ".notes": names no longer start with a dot (the session an earlier version made under it works again once renamed: argo sessions rename .notes notes)'],
    // A damaged record is a session on disk too: the rename or sessions rm deals with it.
    ['.broken', 'sessions fork: invalid session name ".broken": names no longer start with a dot (the session an earlier version made under it works again once renamed: argo sessions rename .broken broken)'],
    ['.x', `sessions fork: invalid session name ".x": ${RULE}`],
    ['..', `sessions fork: invalid session name "..": ${RULE}`],
    ['../etc', `sessions fork: invalid session name "../etc": ${RULE}`],
  ])('%j → %s', (name, message) => {
    let outcome: { checked: string } | { error: unknown };
    try {
      outcome = { checked: checkSessionNameAt(dir, name, 'sessions fork') };
    } catch (error) {
      outcome = { error };
    }
    if (message === null) expect(outcome).toEqual({ checked: name });
    else {
      expect(outcome).toEqual({ error: expect.any(UsageError) as unknown });
      expect('error' in outcome && outcome.error instanceof Error ? outcome.error.message : '').toBe(message);
    }
  });
});

// Before names could not start with a dot (3434d19), ".notes" was a session name.
describe('isEarlierSessionName: a name only an earlier version took', () => {
  it.each([
    ['.hidden', true],
    ['..x', true],
    ['.a.b-c_d', true],
    [`.${'x'.repeat(63)}`, true],
    [`.${'x'.repeat(64)}`, false],
    ['.', false],
    ['...', false],
    ['.a/b', false],
    ['. x', false],
    ['work', false], // a name today
    ['', false],
  ])('%j → %s', (name, earlier) => {
    expect(isEarlierSessionName(name)).toBe(earlier);
  });

  it.each([
    ['a\nb', '"a\\nb"'],
    ['x'.repeat(5000), `"${'x'.repeat(80)}…"`],
    // Cut before a surrogate pair, not through it.
    [`${'x'.repeat(79)}😀😀`, `"${'x'.repeat(79)}…"`],
  ])('a name with a line break or of any length stays on one short line', (name, shown) => {
    const message = (thrown(() => checkSessionName(name, '-s')) as Error).message;
    expect(message).toBe(`-s: invalid session name ${shown}: use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot`);
    expect(message).not.toContain('\n');
  });
});

describe('commandWithNames: a suggested command runs as printed', () => {
  it.each([
    ['argo sessions rm', ['work'], 'argo sessions rm work'],
    ['argo sessions rm', ['-dash'], 'argo sessions rm -- -dash'],
    ['argo sessions show', ['--x'], 'argo sessions show -- --x'],
    ['argo sessions show', ['a-'], 'argo sessions show a-'],
    ['argo sessions rename', ['.-x', '-x'], 'argo sessions rename -- .-x -x'],
    ['argo sessions rename', ['.x', 'x'], 'argo sessions rename .x x'],
  ])('%s %j → %s', (command, names, expected) => {
    expect(commandWithNames(command, ...names)).toBe(expected);
  });

  it("an earlier version's name whose renamed form starts with a dash gets the -- it needs", () => {
    expect(earlierNameError('.-x', '--session').message).toContain('argo sessions rename -- .-x -x)');
  });
});
