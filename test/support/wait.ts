// One patience for every wait on something observable: vitest's own default (1 s) is too short on a
// loaded two-core machine, where a spawned argo or a file write can take several seconds.
import { vi } from 'vitest';

/** How long a test waits for what happens in the background, and how often it looks. */
export const PATIENCE = { timeout: 10_000, interval: 25 };

type WaitOptions = Parameters<typeof vi.waitFor>[1];

/** `vi.waitFor` with PATIENCE unless the caller asks for less or more. */
export function waitFor<T>(check: () => T | Promise<T>, options?: WaitOptions): Promise<T> {
  const given = typeof options === 'number' ? { timeout: options } : options;
  return vi.waitFor(check, { ...PATIENCE, ...given });
}
