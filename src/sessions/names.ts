import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { clipText } from '../output/cut.js';

// No leading dot: a record named ".x.json" would be a hidden file, left out of every listing (and so
// of the checks that protect a parent's lines while a fork replays them).
const SESSION_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;

/** The one rule for session names, used by every command and setting that takes one. */
export function isSessionName(name: string): boolean {
  return SESSION_NAME.test(name);
}

/** The rule of the first versions, which let a name start with a dot (not be only dots). */
const EARLIER_SESSION_NAME = /^(?!\.+$)[A-Za-z0-9._-]{1,64}$/;

/**
 * A name only an earlier version took (".notes"): its session is still on disk, and `argo sessions
 * rename` takes it as the name to rename from, so the session can be used again.
 */
export function isEarlierSessionName(name: string): boolean {
  return !isSessionName(name) && EARLIER_SESSION_NAME.test(name);
}

/**
 * A command to suggest, with session names as its last words: after `--` when one starts with a
 * dash, which the command would read as an unknown option. Names hold nothing a shell would take
 * apart (SESSION_NAME), so no quoting is needed.
 */
export function commandWithNames(command: string, ...names: readonly string[]): string {
  return [command, ...(names.some((name) => name.startsWith('-')) ? ['--'] : []), ...names].join(' ');
}

/** The rule a session name follows, as every refusal of one says it (the CLI's and argo serve's). */
export const SESSION_NAME_RULE = 'use 1-64 letters, digits, dots, dashes or underscores, not starting with a dot';

/**
 * Rejects a bad name before any file is touched; `where` names the flag or setting it came from.
 * A name only an earlier version took (".x") gets the rule like any other, unless `recorded` says a
 * session of that name is on disk: then the refusal names the rename (checkSessionNameAt looks).
 */
export function checkSessionName(name: string, where: string, recorded?: (name: string) => boolean): string {
  if (isEarlierSessionName(name) && recorded?.(name) === true) throw earlierNameError(name, where);
  if (!isSessionName(name)) {
    throw new UsageError(
      // Quoted as JSON and cut short: the name may hold a line break or run for pages.
      `${where}: invalid session name ${JSON.stringify(clipText(name, 80))}: ${SESSION_NAME_RULE}`,
    );
  }
  return name;
}

/** The refusal of a name an earlier version took (".x") whose session is on disk: the rename that makes it usable. */
export function earlierNameError(name: string, where: string): UsageError {
  const renamed = name.replace(/^\.+/, '');
  return new UsageError(
    `${where}: invalid session name "${name}": names no longer start with a dot (the session an earlier version made under it works again once renamed: ${commandWithNames('argo sessions rename', name, renamed)})`,
  );
}

/**
 * checkSessionName, with the rename that makes it usable for a name only an earlier version took
 * (".x") whose record is in `dir` (a damaged one too: the rename or sessions rm deals with it).
 */
export function checkSessionNameAt(dir: string, name: string, where: string): string {
  return checkSessionName(name, where, (earlier) => hasRecord(dir, earlier));
}

/** Whether a record of session `name` is in `dir`, whatever its state (what checkSessionNameAt asks). */
export function hasRecord(dir: string, name: string): boolean {
  return onDisk(recordPath(dir, name));
}

/** Whether anything is at `path`; a folder that cannot be read (or is no folder) holds nothing to rename. */
function onDisk(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

export function recordPath(dir: string, name: string): string {
  return join(dir, `${name}.json`);
}

export function indexPath(dir: string, name: string): string {
  return join(dir, `${name}.idx`);
}
