import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { UsageError } from '../errors.js';

/** 127.0.0.0/8, ::1 and `localhost`: the only binds that may run without a key. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.startsWith('::ffff:127.');
  return false;
}

/** The key in force, or null; throws when a non-loopback bind has none. An empty key counts as none. */
export function requireKeyFor(host: string, key: string | undefined): string | null {
  const usable = key === undefined || key === '' ? null : key;
  if (usable === null && !isLoopback(host)) {
    throw new UsageError(
      `argo serve --host ${host} listens beyond this machine and needs an API key: set ARGO_API_KEY or "serve.apiKey" in config.json (or bind 127.0.0.1)`,
    );
  }
  return usable;
}

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * Checks `Authorization: Bearer KEY`. Both sides are hashed first so the comparison takes the same
 * time whatever the length or content of the guess.
 */
export function keyChecker(key: string): (authorization: string | undefined) => boolean {
  const expected = digest(key);
  return (authorization) => {
    const given = /^Bearer[ \t]+(.+)$/i.exec(authorization?.trim() ?? '')?.[1] ?? '';
    return timingSafeEqual(digest(given), expected);
  };
}
