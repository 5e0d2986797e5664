import { mkdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import fg from 'fast-glob';

export const PRIVATE_DIR = 0o700;
export const PRIVATE_FILE = 0o600;

const LOG_NAME = /^(\d{4}-\d{2}-\d{2})\.log$/;

export async function ensurePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_DIR });
}

/** The daily log files, oldest first (their names sort by date); none when the directory is missing. */
export async function listLogFiles(logsDir: string): Promise<string[]> {
  const names = await fg('*.log', { cwd: logsDir, onlyFiles: true });
  return names
    .filter((name) => LOG_NAME.test(name))
    .sort()
    .map((name) => join(logsDir, name));
}

export function logFileName(date: string): string {
  return `${date}.log`;
}

export function isLogFileName(name: string): boolean {
  return LOG_NAME.test(basename(name));
}

/** The local date (yyyy-MM-dd) a daily file holds, from its name. */
export function logFileDate(file: string): string {
  return LOG_NAME.exec(basename(file))?.[1] ?? '';
}
