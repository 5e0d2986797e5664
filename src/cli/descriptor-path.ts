// Paths that name one of this process's descriptors (`-o /dev/stdout`). On Linux, opening such a
// path makes a new open file: one that starts at offset 0, truncates with "w", and has lost the
// shell's O_APPEND, so `-o /dev/stdout >> all.jsonl` would overwrite what it appends to.
import { readlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

const NAMED: Readonly<Record<string, number>> = { stdin: 0, stdout: 1, stderr: 2 };

/** The descriptor `path` (absolute) names by its spelling alone, or null: /dev/stdout, /dev/fd/N, /proc/self/fd/N. */
export function descriptorNamed(path: string, pid: number = process.pid): number | null {
  const named = /^\/dev\/(stdin|stdout|stderr)$/.exec(path)?.[1];
  if (named !== undefined) return NAMED[named] ?? null;
  const numbered = new RegExp(`^/(?:dev/fd|proc/(?:self|thread-self|${pid})/fd)/(\\d{1,9})$`).exec(path)?.[1];
  return numbered === undefined ? null : Number(numbered);
}

// More links than this in a row is a loop (Linux allows 40).
const MOST_LINKS = 40;

/**
 * The descriptor of this process that writing to `path` would reach, following links one at a time
 * (a link to /dev/stdout, itself a link to /proc/self/fd/1), or null for a path that names none.
 */
export async function descriptorOf(path: string): Promise<number | null> {
  let at = resolve(path);
  for (let hop = 0; hop <= MOST_LINKS; hop++) {
    const fd = descriptorNamed(at);
    if (fd !== null) return fd;
    const next = await readlink(at).catch(() => null);
    if (next === null) return null;
    at = resolve(dirname(at), next);
  }
  return null;
}
