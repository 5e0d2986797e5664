import { processAlive } from '../../src/log/fs.js';

/**
 * Running: a zombie nobody has reaped yet counts as gone (in a container, PID 1 may never reap it),
 * as it does for Argo. Without /proc (macOS) signal 0 asks alone, and a zombie counts as running there.
 */
export function alive(pid: number): boolean {
  return processAlive(pid);
}
