// The tools array a run sent, kept in the data home by its content's digest
// (`tool-definitions/<sha256>.json`): the log line names the digest, so an export shows the
// definitions the run really had, not today's config. Each file is written once, exclusively.
import { createHash } from 'node:crypto';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileExclusive, ensureHomeFolder, isMissing, readDataText } from '../log/fs.js';
import type { ToolDefinition } from '../ollama/transport.js';

export const DEFINITIONS_FOLDER = 'tool-definitions';

/** The file's text: exactly the `tools` array of the run's requests. */
export function definitionsText(definitions: readonly ToolDefinition[]): string {
  return JSON.stringify(definitions);
}

export function definitionsDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Where a digest's definitions are, relative to the data home. */
export function definitionsPath(digest: string): string {
  return `${DEFINITIONS_FOLDER}/${digest}.json`;
}

/**
 * Stores the run's definitions (once per content) and returns their digest. Looked for on disk every
 * time, not remembered: the folder may be removed while a server runs, and a process may serve two
 * homes.
 */
export async function keepDefinitions(home: string, definitions: readonly ToolDefinition[]): Promise<string> {
  const text = definitionsText(definitions);
  const digest = definitionsDigest(text);
  const folder = await ensureHomeFolder(home, DEFINITIONS_FOLDER);
  const file = join(folder, `${digest}.json`);
  // There already (a regular file, the same content by its name): no write, no flush. Otherwise
  // created exclusively, which is false when another process made it meanwhile.
  const there = await lstat(file).then((stats) => stats.isFile(), () => false);
  if (!there) await createFileExclusive(file, text);
  return digest;
}

function isDefinition(value: unknown): value is ToolDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const { type, function: fn } = value as { type?: unknown; function?: unknown };
  return type === 'function' && typeof fn === 'object' && fn !== null && typeof (fn as { name?: unknown }).name === 'string';
}

/** A digest's definitions; `missing` when its file is gone, `damaged` when it no longer matches its digest. */
export function readDefinitions(home: string, digest: string): ToolDefinition[] | 'missing' | 'damaged' {
  let text: string;
  try {
    text = readDataText(join(home, definitionsPath(digest)));
  } catch (error) {
    if (isMissing(error)) return 'missing';
    return 'damaged';
  }
  if (definitionsDigest(text) !== digest) return 'damaged';
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) && value.every(isDefinition) ? value : 'damaged';
  } catch {
    return 'damaged';
  }
}
