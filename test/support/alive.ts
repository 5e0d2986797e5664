import { existsSync, readFileSync } from 'node:fs';
import { processAlive } from '../../src/log/fs.js';

const HAS_PROC = existsSync('/proc/self/stat');

/**
 * Running (a zombie nobody has reaped yet counts as gone: in a container, PID 1 may never reap it).
 * Without /proc (macOS) signal 0 asks instead, and a zombie counts as running there.
 */
export function alive(pid: number): boolean {
  if (!HAS_PROC) return processAlive(pid);
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
