/** Errors a user can act on. Only the CLI entry point turns them into messages and exit codes. */
export class ArgoError extends Error {
  override name = 'ArgoError';
  constructor(
    message: string,
    readonly exitCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Bad flag, value, name or config: exit 2. */
export class UsageError extends ArgoError {
  override name = 'UsageError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 2, options);
  }
}

/** Something failed while doing the work: exit 1. */
export class RuntimeError extends ArgoError {
  override name = 'RuntimeError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 1, options);
  }
}
