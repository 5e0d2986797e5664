// A turn's ending as one word for scripts (`argo --json`'s `error_code`): what to do about it
// without reading the English of `error` — retry later, fix a setting, or nothing (an operator
// stopped it). A failed request takes argo serve's code for it (src/ollama/failure-codes.ts); an
// agent run's own endings are named by its status.
import type { TurnStatus } from '../log/entry.js';
import { failureCode } from '../ollama/failure-codes.js';
import type { CodedFailure } from '../ollama/failure-codes.js';

/** Why a side-effecting call of an agent run was not confirmed: refused on the terminal, or no terminal to ask on (no --yes). */
export type Unconfirmed = 'refused' | 'no-terminal';

export interface TurnEnding {
  status: TurnStatus;
  /** The request's failure when the status is `error`; null when the turn failed on its own side (a result it could not save, a memo it could not read). */
  failure: CodedFailure | null;
  /** Set when a call that was not confirmed ended an agent run (`tool_failures`). */
  unconfirmed: Unconfirmed | null;
}

export function turnErrorCode({ status, failure, unconfirmed }: TurnEnding): string | null {
  switch (status) {
    case 'ok':
      return null;
    case 'error':
      return failureCode(failure ?? { kind: 'argo' });
    case 'tool_failures':
      return unconfirmed === 'refused' ? 'confirmation_refused' : unconfirmed === 'no-terminal' ? 'confirmation_needed' : 'tool_failures';
    default:
      // interrupted, stopped, needs_input, max_iterations, invalid_response: the status says it.
      return status;
  }
}
