/** Errors a user can act on. Only the CLI entry point turns them into messages and exit codes. */
export class ArgoError extends Error {
  override name = 'ArgoError';
}

/** Bad flag, value, name or config. */
export class UsageError extends ArgoError {
  override name = 'UsageError';
}

/** Something failed while doing the work (unreachable, read-only, full). */
export class RuntimeError extends ArgoError {
  override name = 'RuntimeError';
}

/** A usage error in config.json's definitions (a tool, a toolset): its message names the key, whatever list asked for it. */
export class ConfigError extends UsageError {
  override name = 'ConfigError';
}
