import { join } from 'node:path';
import { UsageError } from '../errors.js';

// No leading dot: a record named ".x.json" would be a hidden file, left out of every listing (and so
// of the checks that protect a parent's lines while a fork replays them).
const SESSION_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/** The one rule for session names, used by every command and setting that takes one. */
export function isSessionName(name: string): boolean {
  return SESSION_NAME.test(name);
}

/** Rejects a bad name before any file is touched; `where` names the flag or setting it came from. */
export function checkSessionName(name: string, where: string): string {
  if (!isSessionName(name)) {
    throw new UsageError(
      // Quoted as JSON and cut short: the name may hold a line break or run for pages.
      `${where}: invalid session name ${JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)}: use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot`,
    );
  }
  return name;
}

export function recordPath(dir: string, name: string): string {
  return join(dir, `${name}.json`);
}

export function indexPath(dir: string, name: string): string {
  return join(dir, `${name}.idx`);
}
