// Paths a user or a shell gave (an export's file, the tools root) on a terminal: a
// control in one is shown, not obeyed, as in every message. JSON quoting leaves C1 (U+009B, an 8-bit
// CSI) and bidi controls (U+202E) raw, so the terminal text is neutralized too.
import { mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recordTurns, tempData } from '../query/helpers.js';
import { startInPty } from '../support/pty.js';

/** ESC then OSC 52 (set the clipboard), an 8-bit CSI and a right-to-left override. */
const HOSTILE = 'x\u001b]52;c;QUJD\u0007\u009b\u202e';

function expectNothingObeyed(output: string): void {
  expect(output).not.toContain('\u001b]');
  expect(output).not.toContain('\u0007');
  expect(output).not.toContain('\u009b');
  expect(output).not.toContain('\u202e');
}

describe('argo export -o a file whose name holds controls, on a terminal', () => {
  it('the "wrote" line shows them escaped; the file is written under its real name', async () => {
    const data = tempData();
    await recordTurns(data.paths, 'work', 1);
    const dir = mkdtempSync(join(tmpdir(), 'argo-export-'));
    const name = `${HOSTILE}.jsonl`;
    const terminal = startInPty(['export', '--format', 'sharegpt', '--all', '-o', join(dir, name)], { home: data.home });
    expect((await terminal.exited).code).toBe(0);
    expect(terminal.output).toContain(`argo: wrote 1 trajectory to "${join(dir, 'x')}\\u001b]52;c;QUJD\\u0007\\x9b\\u202e.jsonl"`);
    expectNothingObeyed(terminal.output);
    expect(readdirSync(dir)).toEqual([name]);
  });
});

describe('argo serve on a terminal, its tools root holding controls (a data home cannot)', () => {
  it('the "listening on" line shows them escaped', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'argo-serve-'));
    const root = join(parent, `${HOSTILE}root`);
    const home = join(parent, 'home');
    mkdirSync(root);
    mkdirSync(home, { mode: 0o700 });
    // Nothing answers there: the line saying so is shown, not obeyed, as well.
    const terminal = startInPty(['serve', '--port', '0', '--root', root], { home, host: 'http://127.0.0.1:9' });
    await terminal.waitFor(/listening on .*\r?\n/);
    terminal.kill('SIGTERM');
    await terminal.exited;
    expect(terminal.output).toContain(`(data ${home}, tools root "${join(parent, 'x')}\\u001b]52;c;QUJD\\u0007\\x9b\\u202eroot")`);
    expectNothingObeyed(terminal.output);
  });
});
