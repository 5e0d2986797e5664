import { readFileSync } from 'node:fs';

/** Running (a zombie nobody has reaped yet counts as gone: in a container, PID 1 may never reap it). */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
