// The log lock of a data home held as another argo process would hold it (a long `argo logs rm`),
// until the test lets it go.
import { join } from 'node:path';
import { withLogLock } from '../../src/log/lock.js';

/** Resolves once the lock is held; `letGo` releases it and waits until it is. */
export async function holdLogLock(home: string): Promise<{ letGo: () => Promise<void> }> {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let taken = (): void => undefined;
  const locked = new Promise<void>((resolve) => (taken = resolve));
  const holding = withLogLock(join(home, 'logs'), async () => {
    taken();
    await released;
  });
  await Promise.race([locked, holding]);
  return {
    letGo: async () => {
      release();
      await holding;
    },
  };
}
