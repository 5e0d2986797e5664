import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Where a shell is installed (Debian, macOS, Homebrew), or null. Tests of a shell that is not
 * installed are skipped, so they show as skipped, not as passed or failed.
 */
export function installedShell(shell: 'bash' | 'zsh' | 'fish'): string | null {
  return ['/usr/bin', '/bin', '/opt/homebrew/bin', '/usr/local/bin'].map((dir) => join(dir, shell)).find((path) => existsSync(path)) ?? null;
}
