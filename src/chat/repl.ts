// The `argo chat` loop: reads lines (with line editing and history on a terminal), runs each input
// as one turn through an injected driver, and handles the slash commands. It knows nothing about
// Ollama or the log: the driver does the turn, so the loop is tested with a stub.
import { createInterface } from 'node:readline';
import { ArgoError, UsageError } from '../errors.js';
import type { ReplaySpec } from '../replay/types.js';
import { TerminalGate, inputGone } from './gate.js';
import { HISTORY_SIZE, HistorySaver, recallableHistory } from './history.js';
import { WholeLines } from './whole-lines.js';
import { CHAT_HELP, classifyInput, hidesThinking, isAnswerWord, takeLine } from './input.js';
import type { ChatInput, LineResult, Pending, SlashName } from './input.js';
import { clipText } from '../output/cut.js';
import { untrustedTextFor } from '../output/terminal-text.js';
import { isBlankPrompt } from '../text/prompt.js';

export interface ChatState {
  session: string;
  replay: ReplaySpec;
  /** Null: the usual order (the session's model, ARGO_MODEL, config, default). */
  model: string | null;
  /** A thinking model's reasoning is not shown as it streams (--hide-thinking, config, then /thinking). */
  hideThinking: boolean;
}

export interface TurnOutcome {
  status: TurnStatus;
  /** The `--stats` line of this answer, when Ollama sent its figures. */
  stats: string | null;
}

/**
 * A question asked during a turn (agent mode's "Allow?") on the chat's own input, so its answer is
 * never also a message; '' when `signal` aborts (Ctrl-C) or the input ends.
 */
export type AskLine = (question: string, signal: AbortSignal) => Promise<string>;

/** What the loop asks of the rest of Argo. Errors it throws that are ArgoErrors are shown and the chat goes on. */
export interface ChatDriver {
  /** One turn, exactly as `argo "prompt"` with the same flags would run it; aborting `signal` stops the answer. */
  turn(prompt: string, state: ChatState, signal: AbortSignal, askLine: AskLine): Promise<TurnOutcome>;
  /** The replay decision and request that `prompt` would get, as `--explain` prints it; aborting `signal` ends a wait on Ollama (the model's window). */
  explain(prompt: string, state: ChatState, signal: AbortSignal): Promise<string>;
  /** The session's last answer, or a line saying there is none. */
  last(state: ChatState): Promise<string>;
  /** Each returns the checked value or throws a UsageError naming what is wrong. */
  checkSession(name: string): string;
  checkReplay(spec: string): ReplaySpec;
  checkModel(name: string): string;
}

export interface ChatTerminal {
  input: NodeJS.ReadableStream;
  /** Answers, and the one /last prints again. */
  stdout: { write(text: string): unknown };
  /**
   * Prompts, line editing, notes and what the other slash commands print (/help, /stats, /explain):
   * kept off stdout so `argo chat | tee` holds only answers.
   */
  stderr: NodeJS.WritableStream;
  /** True when input is a terminal: a prompt is drawn, lines can be edited, history is kept. */
  terminal: boolean;
  /**
   * Whether readline edits the line (arrow keys, the up arrow's history), drawing with cursor
   * controls; default `terminal`. False on a terminal that obeys none (TERM=dumb): the terminal's own
   * line editing (Backspace, Ctrl-U) is left on, and Ctrl-C reaches the chat as a signal.
   */
  lineEditing?: boolean;
  /** Where typed lines are kept between chats (0600), or null for none. */
  historyFile: string | null;
  /** The lines it holds, newest first, when read already (so a refusal comes before the banner). */
  recalled?: readonly string[];
  /**
   * Calls `handler` on each stop signal the process gets; returns the unsubscribe. The chat calls
   * `handled` once it has fully dealt with a Ctrl-C (at once at the prompt, after the turn it
   * stopped has ended), so the next one is not taken for an insistent second.
   */
  onInterrupt: (handler: (signal: ChatSignal, handled: () => void) => void) => () => void;
  /**
   * Raises a Ctrl-C key (raw mode sends no signal) as the SIGINT it stands for, which comes back
   * through `onInterrupt`: so it is counted as one, and a second one while the first is being dealt
   * with quits. Without it, the key goes to the chat directly.
   */
  keyInterrupt?: () => void;
  /**
   * Raises the SIGHUP a terminal that went away under the chat stands for (see GateHooks.hangUp),
   * which comes back through `onInterrupt`. Without it, its end answers an open question as Ctrl-D.
   */
  hangUp?: () => void;
  /** How late a signal may be handled after a line sent after it (default SIGNAL_SKEW_MS; see runChat). */
  signalSkewMs?: number;
}

/** A signal sent up to this long before a line was read counts as sent before it. */
const SIGNAL_SKEW_MS = 50;

/**
 * SIGINT is Ctrl-C (a signal when input is not a terminal): it stops the answer, not the chat.
 * SIGTERM and SIGHUP (the terminal closed) end the chat; the turn in flight gets the signal as its
 * abort reason, so it is cut and logged as that signal cuts a one-liner.
 */
export type ChatSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/**
 * How a turn ended, as far as the chat is concerned: 'output-closed' (the reader of standard output
 * went away, as with `argo chat | head -1`) and 'output-failed' (it could not be written: a full
 * disk) also end the chat, since no answer can reach anyone.
 */
export type TurnStatus = 'ok' | 'interrupted' | 'error' | 'output-closed' | 'output-failed';

/** How a chat ended, for its exit code (the CLI's outcomes of the same names). */
export type ChatEnd = 'ok' | 'failed' | 'interrupted' | 'terminated' | 'hung-up' | 'output-closed' | 'output-failed';

const ENDED_BY: Record<Exclude<ChatSignal, 'SIGINT'>, ChatEnd> = { SIGTERM: 'terminated', SIGHUP: 'hung-up' };

/**
 * A failed turn outweighs an interrupted one: it needs fixing, while an answer stopped with Ctrl-C
 * was asked for. Either means the chat did not get every answer whole, so neither is 'ok'.
 */
export function chatEnd(statuses: ReadonlySet<TurnStatus>): ChatEnd {
  // The reader gone ended the chat, as it ends a one-liner (141), whatever came before.
  if (statuses.has('output-closed')) return 'output-closed';
  // Output that could not be written is a failure to fix (exit 1), not a reader that left (141).
  if (statuses.has('output-failed')) return 'output-failed';
  if (statuses.has('error')) return 'failed';
  return statuses.has('interrupted') ? 'interrupted' : 'ok';
}

const TAKES_NO_ARGUMENT: ReadonlySet<SlashName> = new Set(['help', 'stats', 'last', 'bye']);
/** What a command that needs an argument shows as an example when it is missing. */
const EXAMPLE_ARGUMENT: Partial<Record<SlashName, string>> = { session: 'work', replay: 'last:3', model: 'llama3', thinking: 'hide' };

/**
 * Runs the chat until Ctrl-D, /bye, the end of input, SIGTERM, SIGHUP or the reader of its answers
 * going away; a signal that ended it
 * decides how it ends, else how its turns ended do (chatEnd).
 */
export async function runChat(term: ChatTerminal, driver: ChatDriver, initial: ChatState): Promise<ChatEnd> {
  const state: ChatState = { ...initial };
  const editing = term.lineEditing ?? term.terminal;
  const history = term.terminal && term.historyFile !== null ? [...(term.recalled ?? recallableHistory(term.historyFile))] : [];
  let current: AbortController | null = null;
  // Set while /explain runs (it streams no answer, so Ctrl-C there also clears the line).
  let explaining: AbortController | null = null;
  // On a terminal readline reads and draws through a gate, held while an answer streams.
  const gate = editing
    ? new TerminalGate(term.input, term.stderr, {
        interrupt: () => ctrlC(),
        ...(term.hangUp === undefined ? {} : { hangUp: term.hangUp }),
        // Back from Ctrl-Z (`fg`): the prompt or question is drawn again with what was typed on it.
        resumed: () => {
          if (atPrompt || asking) rl.prompt(true);
        },
        paste: {
          start: () => (pasting.from = linesSeen + 1),
          end: () => {
            if (pasting.from !== null && linesSeen >= pasting.from) pastes.push({ from: pasting.from, to: linesSeen, own: true });
            pasting.from = null;
          },
        },
      })
    : null;
  // Off line editing the terminal edits the line, but readline would keep what Ctrl-D hands over.
  const wholeLines = term.terminal && !editing ? new WholeLines(term.input) : null;
  // The paste of several lines readline is being given (`from`: the number its first line will
  // have), and the pastes whose lines the loop has yet to take: each one message (`own`), or lines
  // of a """ block begun before it. Objects, as `awaiting`.
  const pasting: { from: number | null } = { from: null };
  const pastes: { from: number; to: number; own: boolean }[] = [];
  const rl = createInterface({
    input: gate?.input ?? wholeLines?.output ?? term.input,
    output: gate?.output ?? term.stderr,
    terminal: editing,
    history,
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
  });
  const saver = term.terminal && term.historyFile !== null ? new HistorySaver(term.historyFile, term.stderr) : null;
  // Lines readline has given the chat so far (a question's answer is none of them), and when each
  // not yet taken by the loop was read, off line editing (see signalSettled).
  let linesSeen = 0;
  const readAt: number[] = [];
  rl.on('line', () => {
    linesSeen++;
    if (!editing) readAt.push(performance.now());
  });
  // Lines the loop has taken, and the number of the one whose answer runs now.
  let linesTaken = 0;
  let answering = 0;
  // True while a question of a turn is open: its answer is no line of the chat.
  let asking = false;
  // A question the run closed before the user answered (a STOP): the first line typed after it, when
  // it is only y/n, was meant as its answer. `line`: that line's number, once known. An object, so
  // the narrowing of a `let` does not hide changes made in callbacks.
  const awaiting: { late: { question: string; line: number | null } | null } = { late: null };
  const isLateAnswer = (number: number, text: string): boolean => awaiting.late?.line === number && isAnswerWord(text);
  // The history without answers: readline adds every line, so an answer is taken out again here
  // (readline reads the line it returns before this event, which lets a listener change the list).
  let kept = [...history];
  rl.on('history', (lines: string[]) => {
    // Emitted before the line itself: it will be line linesSeen + 1. A paste's lines are no lines
    // typed: a long log pasted would push the rest out.
    if (asking || pasting.from !== null || isLateAnswer(linesSeen + 1, lines[0] ?? '')) {
      lines.splice(0, lines.length, ...kept);
      return;
    }
    kept = [...lines];
    // Newest first: the line just typed.
    if (lines[0] !== undefined) saver?.add(lines[0]);
  });
  // Without line editing readline keeps no history: each line not blank is added here, so a chat
  // under TERM=dumb is kept too.
  if (!editing && saver !== null) {
    rl.on('line', (line: string) => {
      if (line.trim() === '' || isLateAnswer(linesSeen, line)) return;
      saver.add(line);
    });
  }

  let pending: Pending = null;
  // A block the input ended inside: never sent.
  let unsent: Pending;
  let explainNext = false;
  let lastStats: string | null = null;
  // An input is being handled: the loop draws the prompt when it is done.
  let busy = false;
  // How the turns ended so far; a refused slash command is no turn.
  const ended = new Set<TurnStatus>();
  const note = (text: string): void => void term.stderr.write(`${text}\n`);

  // The prompt is on the terminal and no Enter has ended its row yet.
  let atPrompt = false;
  rl.on('line', () => {
    // A last line the input ended without Enter (Ctrl-D twice after text, under TERM=dumb): its
    // row is still open, so what follows starts on the next one.
    if (atPrompt && (term.input as { readableEnded?: boolean }).readableEnded === true) term.stderr.write('\n');
    atPrompt = false;
  });
  // Ctrl-D may close the interface while an answer streams: drawing a prompt then would resume input and keep the process alive.
  let closed = false;
  rl.on('close', () => {
    closed = true;
    // Left at the prompt (Ctrl-D, SIGTERM, SIGHUP, the input ended): its row is ended before
    // anything else is written, so a last line (`argo: terminated (SIGTERM)`) or the shell's
    // prompt starts at the left edge, not after `work> ` and what was typed.
    if (atPrompt) term.stderr.write('\n');
    atPrompt = false;
  });
  // Ctrl-C signals whose answer or slash command is still running: handled once the input has been dealt with.
  let handledWhenDone: (() => void)[] = [];
  // Set by a Ctrl-C that came after lines were entered and before the loop took them (Enter and
  // Ctrl-C in one read), to the last of them: the first answer or /explain they start is stopped as
  // it starts; if they start none, the Ctrl-C acts as at the prompt once they are taken. An object,
  // as `awaiting`.
  const stopping: { upTo: number | null } = { upTo: null };
  const stoppable = (): AbortController => {
    const controller = new AbortController();
    if (stopping.upTo !== null) {
      stopping.upTo = null;
      controller.abort();
    }
    return controller;
  };
  // What Ctrl-C does at the prompt: the line goes, with what was begun there (a """ block, an
  // /explain waiting for its line). Never leave.
  const clearLine = (): void => {
    if (!term.terminal || closed) return;
    pending = null;
    explainNext = false;
    // Ctrl-U deletes only what is left of the cursor: go to the end first. Without line editing
    // the terminal has dropped what it had yet to hand over; what Ctrl-D handed over goes here.
    if (editing) {
      rl.write(null, { ctrl: true, name: 'e' });
      rl.write(null, { ctrl: true, name: 'u' });
    }
    wholeLines?.dropLine();
    term.stderr.write('\n');
    note('(Ctrl-D or /bye to leave)');
  };
  // Ctrl-C applies to the input of a line entered before it — the answer streaming, or the one about
  // to start — never to a line entered after it. `handled`: given for a signal (kill -INT, Ctrl-C
  // when piped, a key raised as one). `keyed`: a key, whose place among the keys is known; a
  // signal's is not (see signalSettled), so only lines the loop has taken came before it.
  const interrupt = (handled: (() => void) | undefined, keyed: boolean): void => {
    const before = keyed ? linesSeen : linesTaken;
    if (current !== null) {
      if (answering <= before) {
        current.abort();
        if (handled !== undefined) handledWhenDone.push(handled);
      } else handled?.();
      return;
    }
    if (!busy && linesTaken < before) {
      stopping.upTo = before;
      if (handled !== undefined) handledWhenDone.push(handled);
      return;
    }
    explaining?.abort();
    // A slash command still running (/explain cut just now, /last) has not dealt with it yet: a
    // second Ctrl-C before it ends quits, as one during an answer does.
    if (handled !== undefined) {
      if (busy) handledWhenDone.push(handled);
      else handled();
    }
    clearLine();
    if (!busy) prompt();
  };
  // A Ctrl-C key: at the prompt or a question readline reads it, while an answer streams the gate
  // does. Raised as a signal, it comes back through onInterrupt marked as a key.
  let keyRaised = false;
  const ctrlC = (): void => {
    if (term.keyInterrupt === undefined) {
      interrupt(undefined, true);
      return;
    }
    keyRaised = true;
    try {
      term.keyInterrupt();
    } finally {
      keyRaised = false;
    }
  };
  rl.on('SIGINT', ctrlC);
  // SIGTERM or SIGHUP: the turn in flight is cut (and logged by its driver) and no line is read
  // after it. An object, as `awaiting`: the loop must see what the signal's callback set.
  const ending: { by: Exclude<ChatSignal, 'SIGINT'> | null } = { by: null };
  const leave = (signal: Exclude<ChatSignal, 'SIGINT'>): void => {
    ending.by ??= signal;
    current?.abort(signal);
    explaining?.abort(signal);
    rl.close();
  };
  // On a terminal Ctrl-C is a keypress readline reports; a SIGINT (kill -INT) means the same.
  const stopListening = term.onInterrupt((signal, handled) => (signal === 'SIGINT' ? interrupt(handled, keyRaised) : leave(signal)));

  const prompt = (): void => {
    if (!term.terminal || closed) return;
    rl.setPrompt(pending === null ? `${state.session}> ` : '... ');
    // The cursor stays where it was on what is on the line (typed ahead, or kept from a question).
    rl.prompt(true);
    atPrompt = true;
  };

  const askLine: AskLine = (question, signal) =>
    new Promise((resolve) => {
      // Once the terminal's input has ended nobody can answer: asking would wait forever.
      if (closed || signal.aborted || gate?.ended === true) {
        resolve('');
        return;
      }
      const open = new AbortController();
      let settled = false;
      const done = (answer: string): void => {
        if (settled) return;
        settled = true;
        asking = false;
        signal.removeEventListener('abort', cancel);
        rl.off('close', onClose);
        gate?.hold();
        resolve(answer);
      };
      // Answers '' and takes the question off the line; readline stays open for the chat.
      const close = (): void => {
        done('');
        open.abort();
      };
      // The run's signal: Ctrl-C, which aborted `current`, is the user's doing; anything else (a
      // STOP) closed the question under the user, who may be typing its answer right now.
      const cancel = (): void => {
        const typed = rl.line;
        const byUser = current?.signal.aborted === true;
        close();
        if (!byUser) expectLateAnswer(question, typed);
      };
      // The input ended: Ctrl-D answers no, but a terminal gone (its window closed) is no answer. Its
      // hang-up closes the question, as the gate's does when lines are edited.
      const onClose = (): void => {
        if (term.terminal && term.hangUp !== undefined && inputGone(term.input)) term.hangUp();
        else done('');
      };
      signal.addEventListener('abort', cancel, { once: true });
      rl.once('close', onClose);
      asking = true;
      // Only keys typed after the question answer it: those typed earlier stay held for the chat.
      // Ctrl-D here answers no, and does not end the chat.
      gate?.ask(close);
      rl.question(question, { signal: open.signal }, done);
    });

  // The late answer is the first line whose keys come after the question closed: lines typed ahead
  // during the answer come before it, and are messages.
  const expectLateAnswer = (question: string, typed: string): void => {
    const late = { question, line: null as number | null };
    awaiting.late = late;
    const reached = (): void => {
      late.line = linesSeen + 1;
    };
    if (gate === null) reached();
    else gate.markLateAnswer(typed, reached);
  };

  const run = async (text: string, block: boolean): Promise<'leave' | 'stay'> => {
    const input: ChatInput = block ? { kind: 'prompt', text } : classifyInput(text);
    if (input.kind === 'unknown-command') {
      // What was typed may hold anything glued to the word (`/bye\x1b…`): shown, never obeyed.
      const typed = untrustedTextFor(term.stderr as { isTTY?: boolean })(clipText(input.name, 40));
      const meant = input.meant === null ? '' : ` (did you mean /${input.meant}?)`;
      note(`argo: unknown command /${typed}${meant}; /help lists them (start with // to send a line that begins with /)`);
      return 'stay';
    }
    // Slash commands and /explain run with the gate open: Ctrl-C reaches the chat's interrupt.
    if (input.kind === 'command') return command(input.name, input.argument, input.typed);
    if (explainNext) {
      explainNext = false;
      await explain(input.text);
      return 'stay';
    }
    current = stoppable();
    answering = linesTaken;
    // Held only while an answer streams; the loop releases it after the next prompt.
    gate?.hold();
    try {
      const outcome = await driver.turn(input.text, state, current.signal, askLine);
      ended.add(outcome.status);
      if (outcome.stats !== null) lastStats = outcome.stats;
      if (outcome.status === 'output-closed' || outcome.status === 'output-failed') return 'leave';
    } catch (error) {
      ended.add('error');
      throw error;
    } finally {
      current = null;
    }
    return 'stay';
  };

  // /explain may wait on Ollama (the model's window): Ctrl-C or a signal that ends the chat ends that wait.
  const explain = async (text: string): Promise<void> => {
    explaining = stoppable();
    try {
      term.stderr.write(await driver.explain(text, state, explaining.signal));
    } finally {
      explaining = null;
    }
  };

  /** `typed`: the name as the user wrote it (/exit for /bye), for the messages. */
  const command = async (name: SlashName, argument: string, typed: string): Promise<'leave' | 'stay'> => {
    const needs = (what: string): boolean => {
      if (argument !== '') return true;
      note(`argo: /${name} needs ${what} (e.g. /${name} ${EXAMPLE_ARGUMENT[name] ?? ''})`);
      return false;
    };
    if (argument !== '' && TAKES_NO_ARGUMENT.has(name)) {
      note(`argo: /${typed} takes no argument; nothing done`);
      return 'stay';
    }
    switch (name) {
      case 'bye':
        return 'leave';
      case 'help':
        term.stderr.write(CHAT_HELP);
        return 'stay';
      case 'session':
        if (needs('a session name')) {
          state.session = driver.checkSession(argument);
          note(`session ${state.session}`);
        }
        return 'stay';
      case 'replay':
        if (needs('none, last:N or session')) {
          state.replay = driver.checkReplay(argument);
          note(`replay ${argument}`);
        }
        return 'stay';
      case 'model':
        if (needs('a model name')) {
          state.model = driver.checkModel(argument);
          note(`model ${state.model}`);
        }
        return 'stay';
      case 'thinking':
        if (needs('show or hide')) {
          state.hideThinking = hidesThinking(argument);
          note(state.hideThinking ? 'thinking hidden (still logged)' : 'thinking shown');
        }
        return 'stay';
      case 'explain':
        if (argument === '') {
          explainNext = true;
          note('the next message is explained, not sent');
        } else {
          // An /explain waiting for its line is answered by this one: the next line is sent.
          explainNext = false;
          await explain(argument);
        }
        return 'stay';
      case 'stats':
        note(lastStats ?? 'no figures yet: Ollama sends them with each finished answer');
        return 'stay';
      // An answer printed again: on stdout with the answers, so a pipe keeps it as it kept the first.
      case 'last':
        term.stdout.write(await driver.last(state));
        return 'stay';
    }
  };

  // Off line editing Ctrl-C comes as a signal, and a signal sent just before a line may be handled
  // after it: the kernel can take milliseconds to deliver it (over 20 ms seen on a busy machine),
  // and Node handles the input of a turn of its event loop before its signals. A line is taken only
  // once it was read `signalSkewMs` ago, then after one more look at what is pending, so that such a
  // signal finds the chat still at its prompt. Lines read while an answer streamed wait no more.
  const signalSettled = async (): Promise<void> => {
    const wait = (readAt.shift() ?? 0) + (term.signalSkewMs ?? SIGNAL_SKEW_MS) - performance.now();
    if (wait <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, wait));
    await new Promise((resolve) => setImmediate(resolve));
  };

  /** A line of a paste (line linesTaken): none of them closes a """ block or is a command. */
  const takePasted = (line: string, paste: { from: number; to: number; own: boolean }): LineResult => {
    if (linesTaken === paste.from) paste.own = pending === null;
    if (linesTaken === paste.to) pastes.shift();
    const lines = [...(pending ?? []), line];
    if (linesTaken < paste.to || !paste.own) {
      pending = lines;
      return { kind: 'more', pending: lines };
    }
    pending = null;
    const text = lines.join('\n');
    return isBlankPrompt(text) ? { kind: 'empty' } : { kind: 'input', text, block: true };
  };

  try {
    prompt();
    for await (const line of rl) {
      if (!editing) await signalSettled();
      // Lines readline had read before a signal closed it still come: none of them is handled.
      if (ending.by !== null) break;
      linesTaken++;
      let next: 'leave' | 'stay' = 'stay';
      const late = awaiting.late?.line === linesTaken ? awaiting.late : null;
      if (late !== null) awaiting.late = null;
      const paste = pastes[0] !== undefined && pastes[0].from <= linesTaken ? pastes[0] : null;
      let taken: LineResult;
      if (paste !== null) taken = takePasted(line, paste);
      // Inside a """ block a line is part of a message, whatever it says.
      else if (late !== null && pending === null && isAnswerWord(line)) {
        const shown = untrustedTextFor(term.stderr as { isTTY?: boolean });
        note(`argo: "${shown(line.trim())}" was not sent: it answers "${shown(late.question.trim())}", which closed unanswered when the run was stopped; type it again to send it as a message`);
        taken = { kind: 'empty' };
      } else {
        taken = takeLine(pending, line);
        pending = taken.kind === 'more' ? taken.pending : null;
      }
      if (taken.kind === 'input') {
        busy = true;
        try {
          next = await run(taken.text, taken.block);
        } catch (error) {
          if (!(error instanceof ArgoError)) throw error;
          // It may quote what Ollama or a file said: shown, never obeyed.
          note(`argo: ${untrustedTextFor(term.stderr as { isTTY?: boolean })(error.message)}`);
        } finally {
          busy = false;
        }
      }
      for (const handled of handledWhenDone) handled();
      handledWhenDone = [];
      if (next === 'leave') break;
      if (stopping.upTo !== null && linesTaken >= stopping.upTo) {
        stopping.upTo = null;
        clearLine();
      }
      // Within a paste no prompt: its lines are on the screen as they came.
      if (paste !== null && linesTaken < paste.to) continue;
      prompt();
      // After the prompt, so what was typed meanwhile shows on it.
      gate?.release();
    }
    unsent = ending.by === null ? pending : null;
    // At a terminal Ctrl-D leaves; a script that ends so forgot its closing line (see below).
    if (unsent !== null && term.terminal) note('argo: the input ended inside a """ block; that block was not sent');
  } finally {
    rl.close();
    gate?.close();
    wholeLines?.close();
    // Still listening while the history is written: a late SIGTERM or SIGHUP is the chat's (it ends
    // it so), not main's, which would quit before the history is saved.
    try {
      await saver?.flush();
    } finally {
      stopListening();
    }
  }
  const end = ending.by !== null ? ENDED_BY[ending.by] : chatEnd(ended);
  if (unsent !== null && !term.terminal && end !== 'output-closed' && end !== 'output-failed') {
    throw new UsageError(`the input ended inside a """ block: it was not sent (${unsent.length} line(s)), the messages before it were; end it with a line ending in """`);
  }
  return end;
}
