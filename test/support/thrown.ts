/** The error `run` throws, for tests that inspect its fields; fails the test if nothing is thrown. */
export function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
