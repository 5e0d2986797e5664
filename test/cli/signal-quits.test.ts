import { describe, expect, it } from 'vitest';
import { SignalCount, processIo, signalQuits } from '../../src/cli/io.js';
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

// A step: a signal, or a command (chat, turn, serve…) starting to listen (+), saying it has handled
// the signals it got (✓) or no longer listening (-).
type Step = StopSignal | `${string}${'+' | '✓' | '-'}`;

describe('which signals count: a command counts each one until it has handled it or stops listening', () => {
  it.each<[string, Step[], boolean[]]>([
    ['nobody listens: it quits', ['SIGINT'], [true]],
    ['a Ctrl-C handled at once (a chat at its prompt) no longer counts', ['chat+', 'SIGINT', 'chat✓', 'SIGINT'], [false, false]],
    ['nor does it toward a SIGTERM', ['chat+', 'SIGINT', 'chat✓', 'SIGTERM'], [false, false]],
    ['handled clears only the signals before it', ['chat+', 'SIGINT', 'chat✓', 'SIGINT', 'SIGINT'], [false, false, true]],
    ['Ctrl-C at a chat prompt, then Ctrl-C mid-answer: the answer is stopped, the process goes on', ['chat+', 'SIGINT', 'chat✓', 'turn+', 'SIGINT'], [false, false]],
    ['… and a second Ctrl-C before that turn is logged quits', ['chat+', 'SIGINT', 'chat✓', 'turn+', 'SIGINT', 'SIGINT'], [false, false, true]],
    ['Ctrl-C at a chat prompt, then SIGTERM mid-answer: the answer is cut, the process goes on', ['chat+', 'SIGINT', 'chat✓', 'turn+', 'SIGTERM'], [false, false]],
    ['Ctrl-C mid-answer, handled once the turn ended: the next answer is stopped too', ['chat+', 'turn+', 'SIGINT', 'turn-', 'chat✓', 'turn+', 'SIGINT'], [false, false]],
    ['one command having handled a signal does not clear it for another still reacting', ['chat+', 'turn+', 'SIGINT', 'chat✓', 'SIGINT'], [false, true]],
    ['SIGTERM mid-answer: the turn stops listening, a second SIGTERM during the chat shutdown quits', ['chat+', 'turn+', 'SIGTERM', 'turn-', 'SIGTERM'], [false, true]],
    ['a command that stopped listening counts nothing more (serve: a new listener for the grace)', ['serve+', 'SIGTERM', 'serve-', 'grace+', 'SIGTERM', 'SIGTERM'], [false, false, true]],
    ['the last listener gone: it quits', ['chat+', 'SIGINT', 'chat-', 'SIGINT'], [false, true]],
    ['handled after stopping listening changes nothing', ['chat+', 'turn+', 'chat-', 'chat✓', 'SIGTERM', 'SIGTERM'], [false, true]],
    ['SIGHUP never counts, handled or not', ['chat+', 'turn+', 'SIGHUP', 'SIGHUP', 'turn-', 'SIGHUP'], [false, false, false]],
  ])('%s', (_case, steps, quits) => {
    const count = new SignalCount();
    const commands = new Map<string, ReturnType<SignalCount['subscribe']>>();
    const said: boolean[] = [];
    for (const step of steps) {
      const name = step.slice(0, -1);
      const command = commands.get(name);
      if (step === 'SIGINT' || step === 'SIGTERM' || step === 'SIGHUP') said.push(count.quits(step));
      else if (step.endsWith('+')) commands.set(name, count.subscribe());
      else if (step.endsWith('✓')) command?.handled();
      else command?.stop();
    }
    expect(said).toEqual(quits);
  });
});
