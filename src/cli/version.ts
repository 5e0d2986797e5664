import { readFileSync } from 'node:fs';

/** The version in package.json (read from the installed package, so it cannot drift from it). */
export function packageVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const version = (JSON.parse(text) as { version?: unknown }).version;
  return typeof version === 'string' ? version : 'unknown';
}
