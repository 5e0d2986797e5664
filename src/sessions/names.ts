import { UsageError } from '../errors.js';

const SESSION_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export function isSessionName(name: string): boolean {
  return SESSION_NAME.test(name) && !/^\.+$/.test(name);
}

/** Rejects a bad name before any file is touched; `where` names the flag or setting it came from. */
export function checkSessionName(name: string, where: string): string {
  if (!isSessionName(name)) {
    throw new UsageError(
      `${where}: invalid session name "${name}": use 1-64 letters, digits, dots, dashes or underscores (not only dots)`,
    );
  }
  return name;
}
