import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TYPED_AHEAD_IGNORED, TerminalAnswers, isYes } from '../../src/cli/answers.js';
import { waitFor } from '../support/wait.js';

describe('isYes: what a typed answer to a [y/N] question means', () => {
  it.each<[string, boolean]>([
    ['y', true],
    ['Y', true],
    ['yes', true],
    [' Yes ', true],
    ['YES\n', true],
    ['', false],
    ['n', false],
    ['no', false],
    ['ye', false],
    ['yes please', false],
    ['yy', false],
  ])('%j → %s', (answer, yes) => {
    expect(isYes(answer)).toBe(yes);
  });
});

describe('TerminalAnswers: only keys typed after a question is shown answer it', () => {
  // Per question: what is typed before it is shown, then what is typed at it.
  it.each<[string, [before: string, at: string][], string[], number]>([
    ['nothing typed early', [['', 'y\n']], ['y'], 0],
    ['"y" and Enter typed early do not answer: the "n" typed at it does', [['y\n', 'n\n']], ['n'], 1],
    ['an Enter typed early does not answer no', [['\n', 'yes\n']], ['yes'], 1],
    ['keys typed without Enter early are not the start of the answer', [['y', 'n\n']], ['n'], 1],
    ['keys typed early before two questions: said once', [['y\n', 'n\n'], ['y\n', 'y\n']], ['n', 'y'], 1],
    ['keys typed between two questions only', [['', 'n\n'], ['y\n', 'no\n']], ['n', 'no'], 1],
  ])('%s', async (_case, questions, answers, notes) => {
    const stdin = new PassThrough();
    const stderr = new PassThrough();
    let said = '';
    stderr.setEncoding('utf8').on('data', (text: string) => (said += text));
    const terminal = new TerminalAnswers({ stdin: stdin as unknown as NodeJS.ReadStream, stderr: stderr as unknown as NodeJS.WriteStream, keyInterrupt: () => undefined, hangUp: () => undefined });
    const got: string[] = [];
    try {
      for (const [before, at] of questions) {
        stdin.write(before);
        // Read, and held, before the question is asked.
        await new Promise((resolve) => setImmediate(resolve));
        const asked = said.length;
        const answer = terminal.ask('Allow? [y/N] ');
        await waitFor(() => expect(said.slice(asked)).toContain('Allow? [y/N] '));
        stdin.write(at);
        got.push(await answer);
      }
    } finally {
      terminal.close();
    }
    expect(got).toEqual(answers);
    expect(said.split(TYPED_AHEAD_IGNORED)).toHaveLength(notes + 1);
  });
});

describe('TerminalAnswers: the terminal going away at a question is a hang-up, never an answer', () => {
  const failed = (code: string): Error => Object.assign(new Error(`read ${code}`), { code });

  it.each<[string, (stdin: PassThrough) => void, boolean]>([
    ['Ctrl-D (its input ends, the terminal still there) answers no', (stdin) => stdin.end(), false],
    ['a read failing with EIO is a hang-up', (stdin) => stdin.emit('error', failed('EIO')), true],
    ['a read failing with ENXIO is a hang-up', (stdin) => stdin.emit('error', failed('ENXIO')), true],
    ['a read failing with EBADF is a hang-up', (stdin) => stdin.emit('error', failed('EBADF')), true],
  ])('%s', async (_case, happen, hangsUp) => {
    const stdin = new PassThrough();
    const stderr = new PassThrough();
    let hangUps = 0;
    const terminal = new TerminalAnswers({ stdin: stdin as unknown as NodeJS.ReadStream, stderr: stderr as unknown as NodeJS.WriteStream, keyInterrupt: () => undefined, hangUp: () => {
      hangUps++;
    } });
    const run = new AbortController();
    let answered = false;
    try {
      const answer = terminal.ask('Allow? [y/N] ', run.signal).finally(() => (answered = true));
      happen(stdin);
      if (!hangsUp) await answer;
      // The question waits for the hang-up's abort of the run: nobody answered it.
      await new Promise((resolve) => setImmediate(resolve));
      expect({ hangUps, answered }).toEqual({ hangUps: hangsUp ? 1 : 0, answered: !hangsUp });
      run.abort('SIGHUP');
      expect(await answer).toBe('');
    } finally {
      terminal.close();
    }
  });

  it('a read failing otherwise is no hang-up: the failure is not hidden', () => {
    const stdin = new PassThrough();
    const terminal = new TerminalAnswers({ stdin: stdin as unknown as NodeJS.ReadStream, stderr: new PassThrough() as unknown as NodeJS.WriteStream, keyInterrupt: () => undefined, hangUp: () => undefined });
    try {
      expect(() => stdin.emit('error', Object.assign(new Error('read EPERM'), { code: 'EPERM' }))).toThrow('read EPERM');
    } finally {
      terminal.close();
    }
  });
});
