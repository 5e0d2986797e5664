// One temporary folder per test run: every mkdtemp of the tests (tmpdir() reads TMPDIR) and every
// spawned argo's own (a rescued turn, an export's temporary) lands in it, and it goes when the run
// ends, instead of thousands of folders left in /tmp by each run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const run = mkdtempSync(join(tmpdir(), 'argo-test-run-'));
  process.env.TMPDIR = run;
  return () => rmSync(run, { recursive: true, force: true });
}
