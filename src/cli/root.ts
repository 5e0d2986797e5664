// `--root`: the one directory tools may use, for a question, a chat and `argo serve` alike.
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { checkGivenPath } from '../config/settings.js';
import { UsageError } from '../errors.js';

/** The real path of `--root` (default: the working directory); a usage error when it is no directory. */
export async function toolRoot(flag: string | undefined): Promise<string> {
  if (flag !== undefined) checkGivenPath(flag, '--root', 'name the directory the tools may use, or leave --root out for the working directory');
  const given = resolve(flag ?? process.cwd());
  const found = await stat(given).catch(() => null);
  if (found === null) throw new UsageError(`--root ${given} does not exist; give a directory the tools may use`);
  if (!found.isDirectory()) throw new UsageError(`--root ${given} is not a directory; give a directory the tools may use`);
  return realpath(given);
}
