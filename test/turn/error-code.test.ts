import { describe, expect, it } from 'vitest';
import { failureCode } from '../../src/ollama/failure-codes.js';
import type { CodedFailure } from '../../src/ollama/failure-codes.js';
import { turnErrorCode } from '../../src/turn/error-code.js';
import type { TurnEnding } from '../../src/turn/error-code.js';

describe('failureCode: one word per way a request failed (argo serve and argo --json)', () => {
  it.each<[CodedFailure, string]>([
    [{ kind: 'model-missing', httpStatus: 404 }, 'model_not_found'],
    [{ kind: 'busy', httpStatus: 503 }, 'ollama_busy'],
    [{ kind: 'busy' }, 'ollama_busy'],
    [{ kind: 'busy', httpStatus: 429 }, 'rate_limit_exceeded'],
    [{ kind: 'idle' }, 'ollama_timeout'],
    [{ kind: 'unreachable' }, 'ollama_unreachable'],
    [{ kind: 'too-old' }, 'ollama_too_old'],
    [{ kind: 'too-old', httpStatus: 400 }, 'ollama_too_old'],
    [{ kind: 'http', httpStatus: 400 }, 'ollama_rejected'],
    [{ kind: 'http', httpStatus: 500 }, 'ollama_error'],
    [{ kind: 'http' }, 'ollama_error'],
    [{ kind: 'mid-stream' }, 'ollama_mid_stream'],
    [{ kind: 'dropped' }, 'ollama_dropped'],
    [{ kind: 'truncated' }, 'ollama_truncated'],
    [{ kind: 'malformed' }, 'ollama_malformed'],
    [{ kind: 'argo' }, 'argo_error'],
  ])('%j → %s', (failure, code) => {
    expect(failureCode(failure)).toBe(code);
  });
});

describe("turnErrorCode: a turn's ending as argo --json's error_code", () => {
  const ending = (status: TurnEnding['status'], extra: Partial<TurnEnding> = {}): TurnEnding => ({ status, failure: null, unconfirmed: null, ...extra });
  it.each<[string, TurnEnding, string | null]>([
    ['answered', ending('ok'), null],
    ['a failed request: its failure code', ending('error', { failure: { kind: 'busy', httpStatus: 429 } }), 'rate_limit_exceeded'],
    ['a model not installed', ending('error', { failure: { kind: 'model-missing', httpStatus: 404 } }), 'model_not_found'],
    ["the turn's own failure (a result not saved)", ending('error'), 'argo_error'],
    ['Ctrl-C, a signal, a closed output', ending('interrupted'), 'interrupted'],
    ['the STOP signal', ending('stopped'), 'stopped'],
    ['a required parameter missing', ending('needs_input'), 'needs_input'],
    ['out of rounds', ending('max_iterations'), 'max_iterations'],
    ['invalid responses after the re-asks', ending('invalid_response'), 'invalid_response'],
    ['three all-failure rounds, or a permanent failure', ending('tool_failures'), 'tool_failures'],
    ['a call the user refused', ending('tool_failures', { unconfirmed: 'refused' }), 'confirmation_refused'],
    ['a call with no terminal to ask on and no --yes', ending('tool_failures', { unconfirmed: 'no-terminal' }), 'confirmation_needed'],
  ])('%s', (_case, turn, code) => {
    expect(turnErrorCode(turn)).toBe(code);
  });
});
