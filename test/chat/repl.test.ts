import { closeSync, mkdtempSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chatEnd, runChat } from '../../src/chat/repl.js';
import type { ChatDriver, ChatEnd, ChatSignal, ChatState, TurnOutcome, TurnStatus } from '../../src/chat/repl.js';
import { UsageError } from '../../src/errors.js';
import type { ReplaySpec } from '../../src/replay/types.js';
import { waitFor } from '../support/wait.js';

interface Call {
  prompt: string;
  state: ChatState;
}

/**
 * A driver that records each turn; `hold` keeps a turn streaming until its signal is aborted;
 * `beforeAsk` keeps it streaming until the promise it returns settles, then it asks (with `asks`);
 * `slow` is what /last and /explain wait for.
 */
function stubDriver(
  options: {
    hold?: (prompt: string) => boolean;
    fail?: (prompt: string) => boolean;
    /** Which turns ask a question (all when true). */
    asks?: boolean | ((prompt: string) => boolean);
    beforeAsk?: (prompt: string) => Promise<void>;
    slow?: () => Promise<void>;
    /** Cuts the question of the turn "go" as a STOP does (not through the chat's signal); that turn fails. */
    stop?: StoppableRun;
    /** /explain waits until its signal aborts (Ollama never says the model's window). */
    explainWaits?: boolean;
    /** Turns whose answer found standard output closed. */
    outputClosed?: (prompt: string) => boolean;
    /** A turn it names streams until the promise settles, then ends interrupted if its signal was aborted meanwhile. */
    streamsUntil?: (prompt: string) => Promise<void> | undefined;
  } = {},
) {
  const calls: Call[] = [];
  const explained: Call[] = [];
  const started: string[] = [];
  const answers: string[] = [];
  const slowCalls: string[] = [];
  // Turns that have returned, and why each held one was aborted.
  const finished: string[] = [];
  const reasons: unknown[] = [];
  const driver: ChatDriver = {
    turn: async (prompt, state, signal, askLine): Promise<TurnOutcome> => {
      calls.push({ prompt, state: { ...state } });
      started.push(prompt);
      const stoppedAtStart = signal.aborted;
      await options.beforeAsk?.(prompt);
      const stop = prompt === 'go' ? options.stop : undefined;
      if (options.asks === true || (typeof options.asks === 'function' && options.asks(prompt))) answers.push(await askLine('Allow? [y/N] ', stop ? AbortSignal.any([signal, stop.signal]) : signal));
      if (stop?.signal.aborted === true) {
        await stop.finished;
        return { status: 'error', stats: null };
      }
      if (options.fail?.(prompt)) throw new UsageError(`cannot send "${prompt}"`);
      if (options.outputClosed?.(prompt)) return { status: 'output-closed', stats: null };
      const streaming = options.streamsUntil?.(prompt);
      if (streaming !== undefined) {
        await streaming;
        if (signal.aborted) reasons.push(signal.reason);
        finished.push(prompt);
        return { status: signal.aborted ? 'interrupted' : 'ok', stats: null };
      }
      // A turn stopped as it started (Ctrl-C right after its Enter) ends at once, as one held does when stopped.
      if (options.hold?.(prompt) === true || stoppedAtStart) {
        if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        reasons.push(signal.reason);
        finished.push(prompt);
        return { status: 'interrupted', stats: null };
      }
      finished.push(prompt);
      return { status: 'ok', stats: `stats for ${prompt}` };
    },
    explain: async (prompt, state, signal) => {
      explained.push({ prompt, state: { ...state } });
      slowCalls.push('explain');
      if (options.explainWaits === true) {
        // As a lookup of the model's window that Ollama never answers: only the signal ends it.
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
        return `explained without the window (${typeof signal.reason === 'string' ? signal.reason : 'Ctrl-C'}): ${prompt}\n`;
      }
      await options.slow?.();
      return `explained: ${prompt}\n`;
    },
    last: async (state) => {
      slowCalls.push('last');
      await options.slow?.();
      return `last of ${state.session}\n`;
    },
    checkSession: (name) => {
      if (name.includes('/')) throw new UsageError(`bad session name "${name}"`);
      return name;
    },
    checkReplay: (spec): ReplaySpec => {
      if (spec === 'session') return { kind: 'session' };
      if (spec === 'none') return { kind: 'none' };
      throw new UsageError(`bad replay "${spec}"`);
    },
    checkModel: (name) => name,
  };
  return { driver, calls, explained, started, answers, slowCalls, finished, reasons };
}

interface StoppableRun {
  signal: AbortSignal;
  /** Closes the question under the user, as a STOP does. */
  stop: () => void;
  /** The stopped turn ends when `finish` is called. */
  finished: Promise<void>;
  finish: () => void;
}

function stoppableRun(): StoppableRun {
  const controller = new AbortController();
  let finish = (): void => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  return { signal: controller.signal, stop: () => controller.abort('stop'), finished, finish: () => finish() };
}

/** The question of the turn "go" waits until `letAsk` is called, so keys can be typed during its answer. */
function askWhenLetOnGo(): { letAsk: () => void; beforeAsk: (prompt: string) => Promise<void> } {
  let letAsk = (): void => undefined;
  const asking = new Promise<void>((resolve) => (letAsk = resolve));
  return { letAsk: () => letAsk(), beforeAsk: (prompt) => (prompt === 'go' ? asking : Promise.resolve()) };
}

/** `onStopListening`: called when the chat stops listening for signals. */
function terminalIo(terminal: boolean, historyFile: string | null = null, onStopListening = (): void => undefined) {
  const input = new PassThrough();
  const stdout = { text: '', write: (chunk: string) => (stdout.text += chunk) };
  const stderr = new PassThrough();
  let stderrText = '';
  stderr.setEncoding('utf8').on('data', (chunk: string) => (stderrText += chunk));
  type Handler = (signal: ChatSignal, handled: () => void) => void;
  const interrupts: Handler[] = [];
  // Each signal sent, and whether the chat has said it is fully handled.
  const sent: { signal: ChatSignal; handled: boolean }[] = [];
  const send = (signal: ChatSignal): void => {
    const record = { signal, handled: false };
    sent.push(record);
    for (const handler of [...interrupts]) handler(signal, () => (record.handled = true));
  };
  return {
    term: {
      input,
      stdout,
      stderr,
      terminal,
      historyFile,
      onInterrupt: (handler: Handler) => {
        interrupts.push(handler);
        return () => {
          interrupts.splice(interrupts.indexOf(handler), 1);
          onStopListening();
        };
      },
      // As the CLI's: a Ctrl-C key is raised as a SIGINT.
      keyInterrupt: () => send('SIGINT'),
    },
    input,
    stdout,
    stderr: () => stderrText,
    /** A stop signal, SIGINT (Ctrl-C off a terminal) unless told. */
    interrupt: (signal: ChatSignal = 'SIGINT') => send(signal),
    /** Which signals sent so far the chat has said it has fully handled. */
    handled: () => sent.map((record) => record.handled),
    listening: () => interrupts.length,
  };
}

const START: ChatState = { session: 'work', replay: { kind: 'session' }, model: null, hideThinking: false };

describe('how a chat ends, from how its turns ended', () => {
  it.each<[TurnStatus[], ChatEnd]>([
    [[], 'ok'],
    [['ok', 'ok'], 'ok'],
    [['ok', 'interrupted'], 'interrupted'],
    [['error'], 'failed'],
    [['interrupted', 'error', 'ok'], 'failed'],
    [['ok', 'output-closed'], 'output-closed'],
    [['error', 'output-closed'], 'output-closed'],
    [['ok', 'output-failed'], 'output-failed'],
    [['error', 'interrupted', 'output-failed'], 'output-failed'],
  ])('%j: %s', (statuses, end) => {
    expect(chatEnd(new Set(statuses))).toBe(end);
  });
});

describe('runChat with piped input', () => {
  it('sends each line as one turn, in order, and draws no prompt', async () => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver();
    io.input.end('first question\n  second, indented  \n\nthird\n');
    expect(await runChat(io.term, driver, START)).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['first question', '  second, indented  ', 'third']);
    expect(io.stderr()).toBe('');
  });

  it.each<[ChatSignal, string, ChatEnd, string[]]>([
    ['SIGINT', 'Ctrl-C', 'ok', ['after']],
    ['SIGTERM', 'SIGTERM', 'terminated', []],
  ])('%s while /explain waits on Ollama ends the wait: the explanation comes without the window', async (signal, cutBy, end, sent) => {
    const io = terminalIo(false);
    const { driver, calls, slowCalls } = stubDriver({ explainWaits: true });
    io.input.write('/explain why\n');
    const done = runChat(io.term, driver, START);
    await waitFor(() => expect(slowCalls).toEqual(['explain']));
    io.interrupt(signal);
    await waitFor(() => expect(io.stderr()).toContain(`explained without the window (${cutBy}): why\n`));
    io.input.end('after\n');
    expect(await done).toBe(end);
    expect(calls.map((call) => call.prompt)).toEqual(sent);
  });

  it('ends when the reader of its answers has gone: the lines after that turn are not sent', async () => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver({ outputClosed: (prompt) => prompt === 'second' });
    io.input.end('first\nsecond\nthird\n/stats\n');
    expect(await runChat(io.term, driver, START)).toBe('output-closed');
    expect(calls.map((call) => call.prompt)).toEqual(['first', 'second']);
  });

  it('applies slash commands to the turns after them', async () => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver();
    io.input.end('one\n/session play\n/model llama3:8b\n/replay none\n/thinking hide\ntwo\n/bye\nnever sent\n');
    expect(await runChat(io.term, driver, START)).toBe('ok');
    expect(calls).toEqual([
      { prompt: 'one', state: START },
      { prompt: 'two', state: { session: 'play', replay: { kind: 'none' }, model: 'llama3:8b', hideThinking: true } },
    ]);
    expect(io.stderr()).toBe('session play\nmodel llama3:8b\nreplay none\nthinking hidden (still logged)\n');
  });

  it('sends a """ block as one message', async () => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver();
    io.input.end('"""\ndef f():\n    return 1\n"""\nafter\n');
    await runChat(io.term, driver, START);
    expect(calls.map((call) => call.prompt)).toEqual(['def f():\n    return 1', 'after']);
  });

  it('sends a """ block as a message even when it starts with a slash command', async () => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver();
    io.input.end('"""\n/model fancy\nplease review\n"""\n"""\n/bye\n"""\n"""/help"""\nstill here\n');
    expect(await runChat(io.term, driver, START)).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['/model fancy\nplease review', '/bye', '/help', 'still here']);
    expect(calls.every((call) => call.state.model === null)).toBe(true);
  });

  it.each([
    // the chat's setting (flag or config), the lines typed → hideThinking for each turn, the notes
    [false, '/thinking hide\nq1\nq2\n/thinking SHOW\nq3\n', [true, true, false], 'thinking hidden (still logged)\nthinking shown\n'],
    [true, 'q1\n/thinking show\nq2\n', [true, false], 'thinking shown\n'],
    [false, '/thinking show\nq1\n', [false], 'thinking shown\n'],
  ])('/thinking: hidden from the start %s, typed %j → each turn hides it %j', async (hidden, typed, hides, notes) => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver();
    io.input.end(typed);
    expect(await runChat(io.term, driver, { ...START, hideThinking: hidden })).toBe('ok');
    expect(calls.map((call) => call.state.hideThinking)).toEqual(hides);
    expect(io.stderr()).toBe(notes);
    expect(io.stdout.text).toBe('');
  });

  it('prints help, stats and explain on stderr, and /last (an answer again) on stdout, so a pipe of stdout keeps only answers', async () => {
    const io = terminalIo(false);
    const { driver, calls, explained } = stubDriver();
    io.input.end('/stats\nq1\n/stats\n/last\n/explain what now?\n/explain\nnot sent\nsent\n/help\n');
    await runChat(io.term, driver, START);
    expect(calls.map((call) => call.prompt)).toEqual(['q1', 'sent']);
    expect(explained.map((call) => call.prompt)).toEqual(['what now?', 'not sent']);
    expect(io.stdout.text).toBe('last of work\n');
    expect(io.stderr()).toMatch(
      /^no figures yet: Ollama sends them with each finished answer\nstats for q1\nexplained: what now\?\nthe next message is explained, not sent\nexplained: not sent\nType a question/,
    );
    expect(io.stderr()).toContain('/bye           leave');
    expect(io.stderr()).toContain("/thinking hide|show  hide a thinking model's reasoning from now on, or show it again");
  });

  it('/explain, then /explain TEXT: TEXT is explained in its place, and the next line is sent', async () => {
    const io = terminalIo(false);
    const { driver, calls, explained } = stubDriver();
    io.input.end('/explain\n/explain what now?\nsent\n');
    expect(await runChat(io.term, driver, START)).toBe('ok');
    expect(explained.map((call) => call.prompt)).toEqual(['what now?']);
    expect(calls.map((call) => call.prompt)).toEqual(['sent']);
  });

  it.each([
    ['/sesion x', 'argo: unknown command /sesion (did you mean /session?); /help lists them (start with // to send a line that begins with /)'],
    ['/bogus', 'argo: unknown command /bogus; /help lists them (start with // to send a line that begins with /)'],
    ['/bye.', 'argo: unknown command /bye. (did you mean /bye?); /help lists them (start with // to send a line that begins with /)'],
    ['/last2', 'argo: unknown command /last2 (did you mean /last?); /help lists them (start with // to send a line that begins with /)'],
    ['/session:work', 'argo: unknown command /session:work (did you mean /session?); /help lists them (start with // to send a line that begins with /)'],
    [`/help?${'?'.repeat(50)}`, `argo: unknown command /help${'?'.repeat(36)}… (did you mean /help?); /help lists them (start with // to send a line that begins with /)`],
    ['/session', 'argo: /session needs a session name (e.g. /session work)'],
    ['/session a/b', 'argo: bad session name "a/b"'],
    ['/thinking', 'argo: /thinking needs show or hide (e.g. /thinking hide)'],
    ['/thinking off', 'argo: /thinking: use show or hide, got "off"'],
    ['/thinking hide now', 'argo: /thinking: use show or hide, got "hide now"'],
    ['/replay sometimes', 'argo: bad replay "sometimes"'],
    ['/help x', 'argo: /help takes no argument; nothing done'],
    ['/stats x', 'argo: /stats takes no argument; nothing done'],
    ['/last 3', 'argo: /last takes no argument; nothing done'],
    ['/bye now', 'argo: /bye takes no argument; nothing done'],
    ['/exit now', 'argo: /exit takes no argument; nothing done'],
    ['/quit now', 'argo: /quit takes no argument; nothing done'],
  ])('%j is refused with one line, changes nothing, and is no failure', async (line, said) => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver();
    io.input.end(`${line}\nafter\n`);
    expect(await runChat(io.term, driver, START)).toBe('ok');
    expect(calls).toEqual([{ prompt: 'after', state: START }]);
    expect(io.stdout.text).toBe('');
    expect(io.stderr()).toBe(`${said}\n`);
  });

  it('a mistyped command with controls glued to it is quoted on a terminal with them shown, not obeyed', async () => {
    const io = terminalIo(false);
    Object.assign(io.term.stderr, { isTTY: true });
    const { driver, calls } = stubDriver();
    io.input.end('/bye\u001b]0;pwned\u0007\n');
    expect(await runChat(io.term, driver, START)).toBe('ok');
    expect(calls).toEqual([]);
    expect(io.stderr()).toBe('argo: unknown command /bye^[]0;pwned^G (did you mean /bye?); /help lists them (start with // to send a line that begins with /)\n');
  });

  it('a failed turn is reported, the chat goes on, and the exit code is 1', async () => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver({ fail: (prompt) => prompt === 'bad' });
    io.input.end('bad\n//etc/hosts?\n');
    expect(await runChat(io.term, driver, START)).toBe('failed');
    expect(calls.map((call) => call.prompt)).toEqual(['bad', '/etc/hosts?']);
    expect(io.stderr()).toBe('argo: cannot send "bad"\n');
  });

  it('a failed turn and an interrupted one: the chat ends "failed"', async () => {
    const io = terminalIo(false);
    const { driver, calls, started } = stubDriver({ hold: (prompt) => prompt === 'long', fail: (prompt) => prompt === 'bad' });
    const done = runChat(io.term, driver, START);
    io.input.write('long\n');
    await waitFor(() => expect(started).toEqual(['long']));
    io.interrupt();
    io.input.end('bad\nfine\n');
    expect(await done).toBe('failed');
    expect(calls.map((call) => call.prompt)).toEqual(['long', 'bad', 'fine']);
  });

  it('a script that ends inside a block is a usage error (exit 2): the block is not sent, the messages before it are', async () => {
    const io = terminalIo(false);
    const { driver, calls } = stubDriver();
    io.input.end('before\n"""\nunfinished\nstill\n');
    await expect(runChat(io.term, driver, START)).rejects.toThrow(new UsageError('the input ended inside a """ block: it was not sent (2 line(s)), the messages before it were; end it with a line ending in """'));
    expect(calls.map((call) => call.prompt)).toEqual(['before']);
    expect(io.stderr()).toBe('');
  });

  it('Ctrl-D at a terminal inside a block leaves, saying the block was not sent', async () => {
    const io = terminalIo(true);
    const { driver, calls } = stubDriver();
    io.input.end('"""\nunfinished\n');
    expect(await runChat(io.term, driver, START)).toBe('ok');
    expect(calls).toEqual([]);
    expect(io.stderr()).toContain('argo: the input ended inside a """ block; that block was not sent\n');
  });

  it('Ctrl-C (a signal) stops the streaming answer and the chat goes on; it ends "interrupted"', async () => {
    const io = terminalIo(false);
    const { driver, calls, started } = stubDriver({ hold: (prompt) => prompt === 'long' });
    const done = runChat(io.term, driver, START);
    io.input.write('long\n');
    await waitFor(() => expect(started).toEqual(['long']));
    io.interrupt();
    io.input.end('next\n');
    expect(await done).toBe('interrupted');
    expect(calls.map((call) => call.prompt)).toEqual(['long', 'next']);
  });
});

describe('runChat on a terminal', () => {
  it('draws the prompt with the session name, and Ctrl-C stops an answer, not the chat (which ends "interrupted")', async () => {
    const io = terminalIo(true);
    const { driver, calls, started } = stubDriver({ hold: (prompt) => prompt === 'long' });
    const done = runChat(io.term, driver, START);
    await waitFor(() => expect(io.stderr()).toContain('work> '));
    io.input.write('long\r');
    await waitFor(() => expect(started).toEqual(['long']));
    io.input.write('\x03');
    io.input.write('next\r');
    await waitFor(() => expect(calls.map((call) => call.prompt)).toEqual(['long', 'next']));
    io.input.write('\x03');
    await waitFor(() => expect(io.stderr()).toContain('(Ctrl-D or /bye to leave)'));
    io.input.write('\x04');
    expect(await done).toBe('interrupted');
  });

  it('Ctrl-C at the prompt clears the whole line, also with the cursor mid-line', async () => {
    const io = terminalIo(true);
    const { driver, calls } = stubDriver();
    const done = runChat(io.term, driver, START);
    io.input.write('abcdefgh\x1b[D\x1b[D\x1b[D\x03\r');
    io.input.write('next\r');
    await waitFor(() => expect(calls).toHaveLength(1));
    io.input.write('\x04');
    expect(await done).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['next']);
  });

  // Off line editing the terminal hands over what Ctrl-D ends without a line end: it is the line
  // begun, which Ctrl-C (a signal there) clears as it clears any.
  it.each<[string, string[], string[]]>([
    ['text handed over by Ctrl-D, then Ctrl-C', ['rm -rf /', '^C', 'what is 2+2\n'], ['what is 2+2']],
    ['text handed over in two parts', ['rm ', '-rf /', '^C', 'what is 2+2\n'], ['what is 2+2']],
    ['whole lines before it are sent, the rest is cleared', ['first\nrm -rf /', '^C', 'next\n'], ['first', 'next']],
    ['a line end in the same read as the text after it', ['rm -rf /\nhalf', '^C', 'next\n'], ['rm -rf /', 'next']],
    ['without Ctrl-C the parts are one line', ['what is ', '2+2\n'], ['what is 2+2']],
    ['a last line the input ends is sent', ['first\n', 'last words'], ['first', 'last words']],
  ])('TERM=dumb: %s', async (_case, reads, sent) => {
    const io = terminalIo(true);
    const { driver, calls } = stubDriver();
    const done = runChat({ ...io.term, lineEditing: false, signalSkewMs: 0 }, driver, START);
    await waitFor(() => expect(io.stderr()).toContain('work> '));
    let notes = 0;
    for (const read of reads) {
      if (read === '^C') {
        io.interrupt('SIGINT');
        notes++;
        await waitFor(() => expect(io.stderr().split('(Ctrl-D or /bye to leave)')).toHaveLength(notes + 1));
      } else {
        const taken = calls.length;
        io.input.write(read);
        // Each read reaches the chat before the next key: a line it ends is taken first.
        if (read.includes('\n')) await waitFor(() => expect(calls.length).toBeGreaterThan(taken));
        else await new Promise((resolve) => setImmediate(resolve));
      }
    }
    io.input.end();
    expect(await done).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(sent);
  });

  it('a question during a turn reads its answer from the chat input: the answer is no message, Ctrl-C answers ""', async () => {
    const io = terminalIo(true);
    const { driver, calls, answers } = stubDriver({ asks: true });
    const done = runChat(io.term, driver, START);
    io.input.write('go\r');
    await waitFor(() => expect(io.stderr()).toContain('Allow? [y/N] '));
    io.input.write('y\r');
    await waitFor(() => expect(answers).toEqual(['y']));
    io.input.write('again\r');
    await waitFor(() => expect(io.stderr().split('Allow?')).toHaveLength(3));
    io.input.write('\x03');
    await waitFor(() => expect(answers).toEqual(['y', '']));
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['go', 'again']);
  });

  it('Ctrl-D at a question answers no and leaves the chat open; a line typed during the answer is still sent after it', async () => {
    const io = terminalIo(true);
    const { letAsk, beforeAsk } = askWhenLetOnGo();
    const { driver, calls, answers, started } = stubDriver({ asks: true, beforeAsk });
    const done = runChat(io.term, driver, START);
    io.input.write('go\r');
    await waitFor(() => expect(started).toEqual(['go']));
    // Typed while the answer streams: kept for after it.
    io.input.write('next\r');
    letAsk();
    await waitFor(() => expect(io.stderr()).toContain('Allow? [y/N] '));
    io.input.write('\x04');
    await waitFor(() => expect(answers).toEqual(['']));
    await waitFor(() => expect(started).toEqual(['go', 'next']));
    await waitFor(() => expect(io.stderr().split('Allow?')).toHaveLength(3));
    io.input.write('y\r');
    await waitFor(() => expect(answers).toEqual(['', 'y']));
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['go', 'next']);
  });

  it('a question after the input has ended answers "" at once; the lines typed before the end are still sent', async () => {
    const io = terminalIo(true);
    const { letAsk, beforeAsk } = askWhenLetOnGo();
    const { driver, calls, answers, started } = stubDriver({ asks: true, beforeAsk });
    const done = runChat(io.term, driver, START);
    io.input.write('go\r');
    await waitFor(() => expect(started).toEqual(['go']));
    // Typed and ended while the answer streams.
    io.input.end('next\r');
    await waitFor(() => expect(io.input.readableEnded).toBe(true));
    letAsk();
    expect(await done).toBe('ok');
    expect(answers).toEqual(['', '']);
    expect(calls.map((call) => call.prompt)).toEqual(['go', 'next']);
  });

  it('Ctrl-C at the prompt cancels an /explain waiting for its line: the next line is sent', async () => {
    const io = terminalIo(true);
    const { driver, calls, explained } = stubDriver();
    const done = runChat(io.term, driver, START);
    io.input.write('/explain\r');
    await waitFor(() => expect(io.stderr()).toContain('the next message is explained, not sent'));
    io.input.write('\x03');
    await waitFor(() => expect(io.stderr()).toContain('(Ctrl-D or /bye to leave)'));
    io.input.write('hello\r');
    await waitFor(() => expect(calls).toHaveLength(1));
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['hello']);
    expect(explained).toEqual([]);
  });

  it('Enter and Ctrl-C in one read: the answer to that line is stopped as it starts (logged interrupted), not the prompt cleared', async () => {
    const io = terminalIo(true);
    const { driver, calls, finished, reasons } = stubDriver();
    const done = runChat(io.term, driver, START);
    await waitFor(() => expect(io.stderr()).toContain('work> '));
    io.input.write('hello\r\x03');
    io.input.write('after\r');
    await waitFor(() => expect(finished).toEqual(['hello', 'after']));
    io.input.write('/bye\r');
    expect(await done).toBe('interrupted');
    expect(calls.map((call) => call.prompt)).toEqual(['hello', 'after']);
    expect(reasons).toHaveLength(1);
    expect(io.stderr()).not.toContain('(Ctrl-D or /bye to leave)');
  });

  it.each([
    ['/explain: it is cancelled, the next line is sent', '/explain\r\x03'],
    ['a line of a """ block: the block is dropped', '"""\rdropped\r\x03'],
    ['an empty line', '\r\x03'],
  ])('Enter and Ctrl-C in one read after a line that starts no answer, %s: as at the prompt', async (_case, keys) => {
    const io = terminalIo(true);
    const { driver, calls, explained } = stubDriver();
    const done = runChat(io.term, driver, START);
    await waitFor(() => expect(io.stderr()).toContain('work> '));
    io.input.write(keys);
    await waitFor(() => expect(io.stderr()).toContain('(Ctrl-D or /bye to leave)'));
    io.input.write('after\r');
    await waitFor(() => expect(calls).toHaveLength(1));
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['after']);
    expect(explained).toEqual([]);
  });

  it.each([
    ['/last', 'last', 'stdout', 'last of work\n'],
    ['/explain why', 'explain', 'stderr', 'explained: why\n'],
  ])('Ctrl-C while %s runs clears the line typed meanwhile and says how to leave', async (line, call, where, printed) => {
    const io = terminalIo(true);
    let finish = (): void => undefined;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const { driver, calls, slowCalls } = stubDriver({ slow: () => finished });
    const done = runChat(io.term, driver, START);
    io.input.write(`${line}\r`);
    await waitFor(() => expect(slowCalls).toEqual([call]));
    io.input.write('never sent\x03');
    await waitFor(() => expect(io.stderr()).toContain('(Ctrl-D or /bye to leave)'));
    finish();
    await waitFor(() => expect(where === 'stdout' ? io.stdout.text : io.stderr()).toContain(printed));
    io.input.write('after\r');
    await waitFor(() => expect(calls).toHaveLength(1));
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['after']);
  });

  it.each<[string, { ahead?: string; atQuestion?: string; after: string; typedAt: 'turn end' | 'prompt' }, string[], string | null]>([
    ['"y" typed as the question closes', { after: 'y\r', typedAt: 'turn end' }, [], 'y'],
    ['"y" typed at the next prompt', { after: 'y\r', typedAt: 'prompt' }, [], 'y'],
    ['" Yes " typed at the next prompt', { after: ' Yes \r', typedAt: 'prompt' }, [], 'Yes'],
    ['"s" ending the "ye" typed at the question', { atQuestion: 'ye', after: 's\r', typedAt: 'turn end' }, [], 'yes'],
    ['a message', { after: 'tell me more\r', typedAt: 'turn end' }, ['tell me more'], null],
    ['"y" after a message: only the first line can be an answer', { after: 'tell me more\ry\r', typedAt: 'prompt' }, ['tell me more', 'y'], null],
    ['"n" after a line typed ahead during the answer', { ahead: 'next\r', after: 'n\r', typedAt: 'turn end' }, ['next'], 'n'],
  ])('a STOP closes the question; then %s', async (_case, keys, sent, dropped) => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-chat-'));
    const file = join(dir, 'chat_history');
    const io = terminalIo(true, file);
    const run = stoppableRun();
    const { letAsk, beforeAsk } = askWhenLetOnGo();
    const { driver, calls, answers, started } = stubDriver({ asks: (prompt) => prompt === 'go', beforeAsk, stop: run });
    const done = runChat(io.term, driver, START);
    io.input.write('go\r');
    await waitFor(() => expect(started).toEqual(['go']));
    if (keys.ahead !== undefined) io.input.write(keys.ahead);
    letAsk();
    await waitFor(() => expect(io.stderr()).toContain('Allow? [y/N] '));
    if (keys.atQuestion !== undefined) {
      io.input.write(keys.atQuestion);
      await waitFor(() => expect(io.stderr().endsWith(keys.atQuestion ?? '')).toBe(true));
    }
    run.stop();
    await waitFor(() => expect(answers).toEqual(['']));
    if (keys.typedAt === 'turn end') io.input.write(keys.after);
    run.finish();
    if (keys.typedAt === 'prompt') {
      await waitFor(() => expect(io.stderr().split('work> ')).toHaveLength(3));
      io.input.write(keys.after);
    }
    io.input.write('after\r');
    await waitFor(() => expect(calls.map((call) => call.prompt)).toEqual(['go', ...sent, 'after']));
    io.input.write('/bye\r');
    expect(await done).toBe('failed');
    const note = `argo: "${dropped ?? ''}" was not sent: it answers "Allow? [y/N]", which closed unanswered when the run was stopped; type it again to send it as a message\n`;
    if (dropped === null) expect(io.stderr()).not.toContain('was not sent');
    else expect(io.stderr().split(note)).toHaveLength(2);
    // An answer is no line of the history; the lines sent are.
    expect(readFileSync(file, 'utf8')).toBe(['go', ...sent, 'after', '/bye', ''].join('\n'));
  });

  it('Ctrl-C at a question is the user closing it: a "y" typed after is a message', async () => {
    const io = terminalIo(true);
    const { driver, calls, answers } = stubDriver({ asks: true });
    const done = runChat(io.term, driver, START);
    io.input.write('go\r');
    await waitFor(() => expect(io.stderr()).toContain('Allow? [y/N] '));
    io.input.write('\x03');
    await waitFor(() => expect(answers).toEqual(['']));
    io.input.write('y\r');
    await waitFor(() => expect(calls.map((call) => call.prompt)).toEqual(['go', 'y']));
    await waitFor(() => expect(io.stderr().split('Allow?')).toHaveLength(3));
    io.input.write('n\r');
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    expect(io.stderr()).not.toContain('was not sent');
  });

  it('keeps answers to questions out of the history, also one equal to an earlier line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-chat-'));
    const file = join(dir, 'chat_history');
    writeFileSync(file, 'y\n');
    const io = terminalIo(true, file);
    const { driver, calls, answers } = stubDriver({ asks: true });
    const done = runChat(io.term, driver, START);
    io.input.write('go\r');
    await waitFor(() => expect(io.stderr()).toContain('Allow? [y/N] '));
    io.input.write('y\r');
    await waitFor(() => expect(answers).toEqual(['y']));
    // Up arrow: the last line typed at the prompt, not the answer.
    io.input.write('\x1b[A\r');
    await waitFor(() => expect(io.stderr().split('Allow?')).toHaveLength(3));
    io.input.write('n\r');
    await waitFor(() => expect(answers).toEqual(['y', 'n']));
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    expect(calls.map((call) => call.prompt)).toEqual(['go', 'go']);
    expect(readFileSync(file, 'utf8')).toBe('y\ngo\n/bye\n');
  });

  it('keeps typed lines in a private history file and offers them next time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'argo-chat-'));
    const file = join(dir, 'chat_history');
    writeFileSync(file, 'older question\n');
    const io = terminalIo(true, file);
    const { driver, calls } = stubDriver();
    const done = runChat(io.term, driver, START);
    io.input.write('new question\r');
    await waitFor(() => expect(calls).toHaveLength(1));
    // Up arrow twice walks back to the line from the earlier chat.
    io.input.write('\x1b[A\x1b[A\r');
    await waitFor(() => expect(calls).toHaveLength(2));
    io.input.write('/bye\r');
    await done;
    expect(calls.map((call) => call.prompt)).toEqual(['new question', 'older question']);
    expect(readFileSync(file, 'utf8')).toBe('new question\nolder question\n/bye\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('runChat on a terminal: a paste (bracketed paste)', () => {
  const paste = (text: string): string => `\x1b[200~${text}\x1b[201~`;

  it.each<[string, string[], string[]]>([
    ['several lines are one message; a slash command among them is text', [paste('Traceback:\r  File "x.py"\r/bye\rNameError: boom\r')], ['Traceback:\n  File "x.py"\n/bye\nNameError: boom']],
    ['a last line without a line break is part of it', [paste('one\rtwo')], ['one\ntwo']],
    ['what was typed before it on the line begins its first line', ['look at this: ', paste('a\rb\r')], ['look at this: a\nb']],
    ['a paste within a line is typed, not sent', ['say ', paste('hello'), ' world\r'], ['say hello world']],
    ['markers and text cut across reads', ['\x1b[2', '00~one\r', 'tw', 'o\x1b[20', '1~'], ['one\ntwo']],
    ['pasted control characters are dropped, not taken as keys', [paste('a\x15b\x03c\x1a\x04\rd\x1b[A')], ['abc\nd[A']],
    ['line breaks as LF or CRLF', [paste('a\nb\r\nc\n\n')], ['a\nb\nc']],
    ['inside a """ block its lines are lines of the block, even one ending in """', ['"""\r', paste('def f():\r    """Doc."""\r    return 1\r'), '"""\r'], ['def f():\n    """Doc."""\n    return 1']],
    ['only blank lines: nothing sent', [paste('\r  \r'), 'after\r'], ['after']],
    ['two pastes, two messages', [paste('a\rb\r'), paste('c\rd\r')], ['a\nb', 'c\nd']],
    // Keys that begin as a marker does are keys once the rest shows they are not one.
    ['arrow keys cut across reads', ['a\x1b[', 'D\x1b[', 'Cb\r'], ['ab']],
  ])('%s', async (_case, reads, sent) => {
    const io = terminalIo(true);
    const { driver, calls } = stubDriver();
    const done = runChat(io.term, driver, START);
    await waitFor(() => expect(io.stderr()).toContain('work> '));
    for (const read of reads) io.input.write(read);
    await waitFor(() => expect(calls.map((call) => call.prompt)).toEqual(sent));
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    // Asked of the terminal at the start, taken back at the end.
    expect(io.stderr().startsWith('\x1b[?2004h')).toBe(true);
    expect(io.stderr().endsWith('\x1b[?2004l')).toBe(true);
  });

  it('pasted during an answer: kept, and sent as one message after it', async () => {
    const io = terminalIo(true);
    const { driver, calls, started } = stubDriver({ hold: (prompt) => prompt === 'long' });
    const done = runChat(io.term, driver, START);
    io.input.write('long\r');
    await waitFor(() => expect(started).toEqual(['long']));
    io.input.write(paste('x\ry\r'));
    io.input.write('\x03');
    await waitFor(() => expect(calls.map((call) => call.prompt)).toEqual(['long', 'x\ny']));
    io.input.write('/bye\r');
    expect(await done).toBe('interrupted');
  });

  it('pasted at a question: no answer to it, but a message after the turn', async () => {
    const io = terminalIo(true);
    const { driver, calls, answers } = stubDriver({ asks: (prompt) => prompt === 'go' });
    const done = runChat(io.term, driver, START);
    io.input.write('go\r');
    await waitFor(() => expect(io.stderr()).toContain('Allow? [y/N] '));
    io.input.write(paste('y\ry\r'));
    io.input.write('n\r');
    await waitFor(() => expect(calls.map((call) => call.prompt)).toEqual(['go', 'y\ny']));
    io.input.write('/bye\r');
    expect(await done).toBe('ok');
    expect(answers).toEqual(['n']);
  });

  it('its lines stay out of the history; the lines typed are kept', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'argo-chat-')), 'chat_history');
    const io = terminalIo(true, file);
    const { driver, calls } = stubDriver();
    const done = runChat(io.term, driver, START);
    io.input.write('typed\r');
    io.input.write(paste('pasted one\rpasted two\r'));
    await waitFor(() => expect(calls).toHaveLength(2));
    io.input.write('/bye\r');
    await done;
    expect(readFileSync(file, 'utf8')).toBe('typed\n/bye\n');
  });
});

describe('when the chat has handled a Ctrl-C signal (a later one is then no insistent second)', () => {
  it.each<[string, { terminal: boolean; hold: boolean; before: boolean[]; after: boolean[] }]>([
    ['piped, at the prompt: at once', { terminal: false, hold: false, before: [true], after: [true] }],
    ['on a terminal, at the prompt: at once', { terminal: true, hold: false, before: [true], after: [true] }],
    ['piped, mid-answer: once that turn has ended', { terminal: false, hold: true, before: [false], after: [true] }],
    ['on a terminal, mid-answer: once that turn has ended', { terminal: true, hold: true, before: [false], after: [true] }],
  ])('%s', async (_case, { terminal, hold, before, after }) => {
    const io = terminalIo(terminal);
    let finish = (): void => undefined;
    const ending = new Promise<void>((resolve) => (finish = resolve));
    const { driver, started, finished } = stubDriver({ hold: (prompt) => hold && prompt === 'long' });
    // The stopped turn ends only when `finish` is called, as a turn that is still being logged.
    const turn = driver.turn.bind(driver);
    driver.turn = async (...args) => {
      const outcome = await turn(...args);
      await ending;
      return outcome;
    };
    const done = runChat(io.term, driver, START);
    const enter = terminal ? '\r' : '\n';
    if (hold) {
      io.input.write(`long${enter}`);
      await waitFor(() => expect(started).toEqual(['long']));
    } else if (terminal) await waitFor(() => expect(io.stderr()).toContain('work> '));
    io.interrupt('SIGINT');
    if (hold) await waitFor(() => expect(finished).toEqual(['long']));
    expect(io.handled()).toEqual(before);
    finish();
    io.input.write(`next${enter}`);
    await waitFor(() => expect(started).toEqual(hold ? ['long', 'next'] : ['next']));
    expect(io.handled()).toEqual(after);
    io.input.end(terminal ? '/bye\r' : '');
    await done;
  });

  it('a Ctrl-C key on a terminal counts as the signal: mid-answer, handled once that turn has ended', async () => {
    const io = terminalIo(true);
    let finish = (): void => undefined;
    const ending = new Promise<void>((resolve) => (finish = resolve));
    const { driver, started, finished } = stubDriver({ hold: (prompt) => prompt === 'long' });
    const turn = driver.turn.bind(driver);
    driver.turn = async (...args) => {
      const outcome = await turn(...args);
      await ending;
      return outcome;
    };
    const done = runChat(io.term, driver, START);
    io.input.write('long\r');
    await waitFor(() => expect(started).toEqual(['long']));
    io.input.write('\x03');
    await waitFor(() => expect(finished).toEqual(['long']));
    // Still being dealt with: a second one now would quit.
    expect(io.handled()).toEqual([false]);
    finish();
    io.input.write('next\r');
    await waitFor(() => expect(started).toEqual(['long', 'next']));
    expect(io.handled()).toEqual([true]);
    io.input.write('\x03');
    await waitFor(() => expect(io.stderr()).toContain('(Ctrl-D or /bye to leave)'));
    // At the prompt it is dealt with at once.
    expect(io.handled()).toEqual([true, true]);
    io.input.end('/bye\r');
    expect(await done).toBe('interrupted');
  });

  it('piped, during a slash command (/last still reading): once that command has ended', async () => {
    const io = terminalIo(false);
    let finish = (): void => undefined;
    const reading = new Promise<void>((resolve) => (finish = resolve));
    const { driver, slowCalls, started } = stubDriver({ slow: () => reading });
    const done = runChat(io.term, driver, START);
    io.input.write('/last\n');
    await waitFor(() => expect(slowCalls).toEqual(['last']));
    io.interrupt('SIGINT');
    expect(io.handled()).toEqual([false]);
    finish();
    io.input.write('next\n');
    await waitFor(() => expect(started).toEqual(['next']));
    expect(io.handled()).toEqual([true]);
    io.input.end('');
    await done;
  });

  // Without line editing the input ending is all the chat sees: Ctrl-D leaves the terminal a
  // terminal, a window closed does not. (/dev/ptmx: a terminal's descriptor; a file's is none.)
  const fileDescriptor = (): number => openSync(join(mkdtempSync(join(tmpdir(), 'argo-repl-')), 'not-a-tty'), 'wx');
  it.each<[string, (() => number) | null, ChatEnd, number]>([
    ['Ctrl-D (still a terminal) answers no', () => openSync('/dev/ptmx', 'r+'), 'ok', 0],
    ['a stream without a descriptor ending answers no', null, 'ok', 0],
    ['the terminal gone (no terminal any more) is its hang-up, which closes the question', fileDescriptor, 'hung-up', 1],
  ])('TERM=dumb, the input ended at a question: %s', async (_case, open, end, hangUps) => {
    const io = terminalIo(true);
    const fd = open?.();
    try {
      Object.assign(io.input, { fd });
      let hungUp = 0;
      const { driver, answers } = stubDriver({ asks: true });
      const done = runChat({ ...io.term, lineEditing: false, hangUp: () => {
          hungUp++;
          io.interrupt('SIGHUP');
        } }, driver, START);
      io.input.write('go\n');
      await waitFor(() => expect(io.stderr()).toContain('Allow? [y/N] '));
      io.input.end();
      expect(await done).toBe(end);
      expect(answers).toEqual(['']);
      expect(hungUp).toBe(hangUps);
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  });

  it.each([
    ['piped', false],
    ['on a terminal without line editing (TERM=dumb)', true],
  ])('%s: a SIGINT sent before a line but handled just after it was read does not stop its answer', async (_case, terminal) => {
    const io = terminalIo(terminal);
    let end = (): void => undefined;
    const ending = new Promise<void>((resolve) => (end = resolve));
    const { driver, started, finished, reasons } = stubDriver({ streamsUntil: () => ending });
    const done = runChat({ ...io.term, lineEditing: false, signalSkewMs: 200 }, driver, START);
    // Listening after readline: the line has been read when the signal is handled, a moment later,
    // as a signal the kernel delivers late (well within the 200 ms the chat allows for it).
    io.input.once('data', () => setImmediate(() => io.interrupt('SIGINT')));
    io.input.write('story\n');
    await waitFor(() => expect(started).toEqual(['story']));
    end();
    await waitFor(() => expect(finished).toEqual(['story']));
    // It found the chat at its prompt, with nothing to stop: dealt with at once.
    expect(io.handled()).toEqual([true]);
    expect(started).toEqual(['story']);
    io.input.end('');
    expect(await done).toBe('ok');
    expect(reasons).toEqual([]);
  });

  it('a SIGTERM is never handled: a second one during the chat\'s shutdown quits', async () => {
    const io = terminalIo(false);
    const { driver, started } = stubDriver({ hold: () => true });
    const done = runChat(io.term, driver, START);
    io.input.write('long\n');
    await waitFor(() => expect(started).toEqual(['long']));
    io.interrupt('SIGTERM');
    expect(await done).toBe('terminated');
    expect(io.handled()).toEqual([false]);
  });
});

describe('SIGTERM and SIGHUP end the chat, piped or on a terminal, idle or mid-answer', () => {
  it.each<[string, { terminal: boolean; signal: ChatSignal; lines: string[]; cut: string | null; ends: ChatEnd }]>([
    ['piped, mid-answer, a line read after it', { terminal: false, signal: 'SIGTERM', lines: ['first', 'long', 'after'], cut: 'long', ends: 'terminated' }],
    ['piped, idle', { terminal: false, signal: 'SIGHUP', lines: ['first'], cut: null, ends: 'hung-up' }],
    ['piped, after a failed turn (the signal outweighs it)', { terminal: false, signal: 'SIGTERM', lines: ['bad'], cut: null, ends: 'terminated' }],
    ['on a terminal, mid-answer, a line typed ahead', { terminal: true, signal: 'SIGHUP', lines: ['first', 'long', 'after'], cut: 'long', ends: 'hung-up' }],
    ['on a terminal, idle at the prompt', { terminal: true, signal: 'SIGTERM', lines: ['first'], cut: null, ends: 'terminated' }],
  ])('%s', async (_case, { terminal, signal, lines, cut, ends }) => {
    const file = join(mkdtempSync(join(tmpdir(), 'argo-chat-')), 'chat_history');
    const io = terminalIo(terminal, terminal ? file : null);
    const { driver, calls, started, finished, reasons } = stubDriver({ hold: (prompt) => prompt === 'long', fail: (prompt) => prompt === 'bad' });
    const done = runChat(io.term, driver, START);
    const typed = (some: string[]): string => some.map((line) => `${line}${terminal ? '\r' : '\n'}`).join('');
    const sent = cut === null ? lines : lines.slice(0, lines.indexOf(cut) + 1);
    // Piped, readline reads the lines after the cut one with it; on a terminal they are typed during its answer.
    io.input.write(typed(terminal ? sent : lines));
    if (cut !== null) {
      await waitFor(() => expect(started).toEqual(sent));
      if (terminal) io.input.write(typed(lines.slice(sent.length)));
    } else if (terminal) await waitFor(() => expect(io.stderr().split('work> ')).toHaveLength(sent.length + 2));
    else await waitFor(() => expect([...finished, ...(io.stderr().includes('cannot send') ? ['bad'] : [])]).toEqual(sent));
    io.interrupt(signal);
    expect(await done).toBe(ends);
    // The turn in flight got the signal (its driver logs it so); no line after it was sent.
    expect(calls.map((call) => call.prompt)).toEqual(sent);
    expect(reasons).toEqual(cut === null ? [] : [signal]);
    expect(io.listening()).toBe(0);
    if (terminal) expect(readFileSync(file, 'utf8')).toBe(`${sent.join('\n')}\n`);
  });

  it('keeps listening until the history is written: a late SIGTERM is the chat\'s, not one that quits before it is saved', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'argo-chat-')), 'chat_history');
    const saved: string[] = [];
    const io = terminalIo(true, file, () => saved.push(readFileSync(file, 'utf8')));
    const { driver } = stubDriver();
    const done = runChat(io.term, driver, START);
    io.input.write('first\r/bye\r');
    expect(await done).toBe('ok');
    expect(saved).toEqual(['first\n/bye\n']);
  });

  it('a SIGINT (kill -INT) on a terminal is Ctrl-C: it stops the answer and the chat goes on', async () => {
    const io = terminalIo(true);
    const { driver, calls, started, reasons } = stubDriver({ hold: (prompt) => prompt === 'long' });
    const done = runChat(io.term, driver, START);
    io.input.write('long\r');
    await waitFor(() => expect(started).toEqual(['long']));
    io.interrupt('SIGINT');
    io.input.write('next\r');
    await waitFor(() => expect(calls.map((call) => call.prompt)).toEqual(['long', 'next']));
    io.input.write('/bye\r');
    expect(await done).toBe('interrupted');
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).not.toBe('SIGINT');
  });
});
