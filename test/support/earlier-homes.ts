// The data homes earlier versions wrote (test/fixtures/earlier-versions), copied for a test to use.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { thisProcess } from '../../src/log/unfinished.js';

export const EARLIER_HOMES = resolve(import.meta.dirname, '../fixtures/earlier-versions');

/** The folder of one earlier version's home, to read (never to write). */
export function earlierHome(name: string): string {
  return join(EARLIER_HOMES, name);
}

/** A pid no process has: one that ran and has ended. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}

/**
 * A copy of an earlier version's home in a fresh temporary folder. Its journal files are made this
 * machine's, written by an argo that has ended (a pid that ran and is gone), in their own shape: a
 * field the version did not write stays absent.
 */
export function copyEarlierHome(name: string): string {
  const home = mkdtempSync(join(tmpdir(), `argo-${name}-`));
  cpSync(earlierHome(name), home, { recursive: true });
  const journal = join(home, 'unfinished');
  const files = existsSync(journal) ? readdirSync(journal) : [];
  const here = thisProcess();
  for (const file of files) {
    const path = join(journal, file);
    const turn = JSON.parse(readFileSync(path, 'utf8')) as { owner: Record<string, unknown> };
    const owner: Record<string, unknown> = { ...turn.owner, pid: deadPid(), host: here.host, boot: here.boot };
    if ('machine' in owner) owner.machine = here.machine;
    writeFileSync(path, `${JSON.stringify({ ...turn, owner })}\n`, { mode: 0o600 });
  }
  return home;
}
