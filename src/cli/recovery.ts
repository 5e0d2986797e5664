// The commands that read or write the log first log the turns an earlier argo left unfinished
// (turn/recover.ts), and say so in one line.
import { untrustedTextFor } from '../output/terminal-text.js';
import { recoverOnce, recoveryLines } from '../turn/recover.js';
import type { RecoverySettings } from '../turn/recover.js';
import type { Io } from './io.js';

/** Recovers once per process; `who` starts each line ("argo", "argo serve"). */
export async function recoverUnfinishedTurns(settings: RecoverySettings, io: Pick<Io, 'stderr'>, who = 'argo'): Promise<void> {
  const recovery = recoverOnce(settings);
  if (recovery === null) return;
  // Paths and problems quote the file system: shown, never obeyed, on a terminal.
  for (const line of recoveryLines(await recovery)) io.stderr.write(`${who}: ${untrustedTextFor(io.stderr)(line)}\n`);
}
