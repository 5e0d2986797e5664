/** How a command ended. Commands return one; main() alone turns it, or a thrown error, into an exit code. */
export type Outcome = 'ok' | 'failed' | 'interrupted' | 'terminated' | 'hung-up' | 'output-closed' | 'output-failed';

export type ReportOutcome = (outcome: Outcome) => void;

/**
 * Unix conventions: 1 a failure, 2 a usage error, 128 + the signal's number when one ended the
 * command: SIGINT (2, Ctrl-C), SIGTERM (15), SIGHUP (1, the terminal closed), SIGPIPE (13, the
 * reader of standard output went away). Standard output that cannot be written (a full disk behind
 * `>`) is a failure.
 */
export const EXIT_CODES = { ok: 0, failed: 1, usage: 2, interrupted: 130, terminated: 143, 'hung-up': 129, 'output-closed': 141, 'output-failed': 1 } as const;

/** The signals that end a command the way Ctrl-C does, and the outcome each stands for. */
export const STOP_SIGNALS = { SIGINT: 'interrupted', SIGTERM: 'terminated', SIGHUP: 'hung-up' } as const satisfies Record<string, Outcome>;
export type StopSignal = keyof typeof STOP_SIGNALS;

/** The ways a command is stopped rather than failing. */
export type Stop = Exclude<Outcome, 'ok' | 'failed'>;

/** What the `argo: ` line on stderr says when a stop ends a command (an answer, or any command a signal quits). */
export const STOP_LINES: Record<Stop, string> = {
  interrupted: 'interrupted',
  terminated: 'terminated (SIGTERM)',
  'hung-up': 'hung up (SIGHUP)',
  'output-closed': 'standard output was closed; the answer was cut short',
  'output-failed': 'standard output could not be written (a full disk?); the answer was cut short',
};

/** Whether `value` names one of STOP_SIGNALS (an abort reason may: a chat cut by SIGTERM). */
export function isStopSignal(value: unknown): value is StopSignal {
  return typeof value === 'string' && Object.hasOwn(STOP_SIGNALS, value);
}
