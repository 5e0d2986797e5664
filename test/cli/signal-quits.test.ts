import { describe, expect, it } from 'vitest';
import { processIo, signalQuits } from '../../src/cli/io.js';
import type { StopSignal } from '../../src/cli/outcome.js';

describe('whether a stop signal ends the process at once', () => {
  it.each<[string, boolean, StopSignal[], boolean[]]>([
    ['no command handles signals: each quits', false, ['SIGTERM'], [true]],
    ['a second Ctrl-C while the first is handled quits', true, ['SIGINT', 'SIGINT'], [false, true]],
    ['a second SIGTERM likewise', true, ['SIGTERM', 'SIGTERM'], [false, true]],
    ['Ctrl-C after SIGTERM likewise', true, ['SIGTERM', 'SIGINT'], [false, true]],
    ['repeated SIGHUPs (a terminal closing) never do', true, ['SIGHUP', 'SIGHUP', 'SIGHUP'], [false, false, false]],
    ['a SIGHUP does not count toward a later SIGTERM', true, ['SIGHUP', 'SIGTERM', 'SIGHUP', 'SIGTERM'], [false, false, false, true]],
  ])('%s', (_case, handled, signals, quits) => {
    // A command handling signals, as ask or chat do (no signal is sent: signalQuits is asked directly).
    const stopListening = handled ? processIo().onInterrupt(() => undefined) : () => undefined;
    try {
      expect(signals.map((signal) => signalQuits(signal))).toEqual(quits);
    } finally {
      stopListening();
    }
  });
});
