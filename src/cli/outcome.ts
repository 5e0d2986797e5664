/** How a command ended. Commands return one; main() alone turns it, or a thrown error, into an exit code. */
export type Outcome = 'ok' | 'failed' | 'interrupted';

export type ReportOutcome = (outcome: Outcome) => void;

/** Unix conventions: 1 a failure, 2 a usage error, 128 + SIGINT (2) for Ctrl-C. */
export const EXIT_CODES = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;
