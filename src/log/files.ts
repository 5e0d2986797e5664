import { basename, join } from 'node:path';

const LOG_NAME = /^(\d{4}-\d{2}-\d{2})\.log$/;

/** Names of the files in `dir` matching `pattern`, sorted; none when the directory is missing. */
export async function listFiles(dir: string, pattern: string): Promise<string[]> {
  // Loaded on first use: a plain question never lists a directory, so it need not pay for the import.
  const { default: fg } = await import('fast-glob');
  return (await fg(pattern, { cwd: dir, onlyFiles: true })).sort();
}

/** The daily log files, oldest first (their names sort by date); none when the directory is missing. */
export async function listLogFiles(logsDir: string): Promise<string[]> {
  const names = await listFiles(logsDir, '*.log');
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
