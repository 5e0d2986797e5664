// `argo chat`: the chat loop (src/chat/repl.ts) driven by the same turn as `argo "question"`.
import { Option } from 'commander';
import type { Command } from 'commander';
import { runChat } from '../chat/repl.js';
import { chatHistoryFile, recallableHistory } from '../chat/history.js';
import type { ChatDriver, ChatEnd, ChatState } from '../chat/repl.js';
import { checkModelName } from '../config/settings.js';
import { CHAT_HINTS } from '../ollama/fix-hints.js';
import type { Settings } from '../config/settings.js';
import { UsageError } from '../errors.js';
import type { LogEntry } from '../log/entry.js';
import { statsLine, turnStats } from '../output/turn-notes.js';
import { readReplaySpec, replaySpecRule, replaySpecText } from '../replay/spec.js';
import type { ReplayReason } from '../replay/types.js';
import { checkSessionNameAt } from '../sessions/names.js';
import type { ChatTools } from './agent.js';
import { ask, entryFigures, newTransport } from './ask.js';
import { NOT_IN_CHAT, agentFlags, checkAgentFlags, checkReason, companionSettings, usesTools } from './ask-flags.js';
import type { CompanionFlags } from './ask-flags.js';
import type { FlagOverrides } from '../config/settings.js';
import { Utf8Lines, notUtf8 } from './io.js';
import type { Io } from './io.js';
import type { OutputFlags } from './output-flags.js';
import { parseReplaySpec } from './parse.js';
import { STOP_LINES, STOP_SIGNALS, isStopSignal } from './outcome.js';
import type { Outcome, ReportOutcome } from './outcome.js';
import { recoverUnfinishedTurns } from './recovery.js';

export interface ChatFlags extends Omit<FlagOverrides, 'options' | 'system'>, CompanionFlags, OutputFlags {
  reason?: ReplayReason;
  stream?: boolean;
  log?: boolean;
  /** Agent mode's flags (with --tools), as for a one-liner. */
  root?: string;
  yes?: boolean;
  ephemeralSystem?: string;
}

export function registerChat(program: Command, io: Io, setOutcome: ReportOutcome): void {
  const command = program
    .command('chat')
    .description('talk in turns: each message is a turn of the session, replayed (session by default) and logged; see docs/chat.md');
  // The same flags as `argo "question"`, so a chat turn is the request a one-liner would send; only
  // --replay's default differs (a chat replays its session).
  const refusable: Option[] = [];
  for (const option of program.options) {
    if (NOT_IN_CHAT.has(option.long ?? '')) {
      // Known, so refused in words of its own rather than as an unknown option like another.
      if (option.long !== '--version') refusable.push(new Option(option.flags).hideHelp());
      continue;
    }
    command.addOption(option.long === '--replay' ? new Option(option.flags, 'none | last:N | session (default: session, whatever ARGO_REPLAY or config say)').argParser(parseReplaySpec) : option);
  }
  for (const option of refusable) command.addOption(option);
  command.action(async (flags: ChatFlags) => {
    const given = refusable.find((option) => command.getOptionValueSource(option.attributeName()) === 'cli');
    if (given !== undefined) throw new UsageError(`"chat" does not take ${given.long ?? given.flags}: it is for one question (argo ${given.long ?? given.flags} "why is the sky blue?"); argo chat --help lists what a chat takes`);
    setOutcome(await chat(flags, io));
  });
}

/** Runs a chat until Ctrl-D or /bye. Default replay: `session`. */
export async function chat(flags: ChatFlags, io: Io): Promise<Outcome> {
  const { settings, replay, replaySource } = await companionSettings(flags, { kind: 'session' });
  checkReason(flags.reason, replay, replaySource, settings.paths.config);
  checkAgentFlags(flags, settings);
  let tools: ChatTools | undefined;
  if (usesTools(settings)) {
    const { checkAgentSetup, chatTools, toolboxUnlessStopped } = await import('./agent.js');
    const root = await checkAgentSetup(settings, agentFlags(flags));
    // Its MCP servers start now and serve every turn: a name none of them offers is refused before
    // the first message (exit 2), not at each. Ctrl-C or SIGTERM cuts their start; a STOP skips it.
    const chatToolsNow = await chatTools();
    const controller = new AbortController();
    const stopListening = io.onInterrupt((signal) => controller.abort(signal));
    try {
      // Without MCP servers, checkAgentSetup has checked every name already.
      if (Object.keys(settings.agent.mcpServers).length > 0) await (await toolboxUnlessStopped(settings, root, chatToolsNow, controller.signal))?.close();
    } catch (error) {
      await chatToolsNow.close();
      if (!(error instanceof Error) || error.name !== 'AbortError' || !controller.signal.aborted) throw error;
      const stop = isStopSignal(controller.signal.reason) ? STOP_SIGNALS[controller.signal.reason] : 'interrupted';
      io.stderr.write(`argo: ${STOP_LINES[stop]}\n`);
      return stop;
    } finally {
      stopListening();
    }
    tools = chatToolsNow;
  }
  await recoverUnfinishedTurns(settings, io);
  // Its errors name /model, which the user can type there and then, not --model.
  const transport = newTransport(settings, CHAT_HINTS);
  const terminal = io.stdin.isTTY;
  const forState = (state: ChatState): Settings => ({
    ...settings,
    session: state.session,
    hideThinking: state.hideThinking,
    // A model chosen with /model says so; the chat's own --model keeps its source.
    ...(state.model !== null ? { model: state.model, modelFromFlag: true, modelSource: settings.modelFromFlag && state.model === settings.model ? settings.modelSource : ('chat' as const) } : {}),
  });
  const turnOptions = (prompt: string, state: ChatState, explain: boolean) => ({
    prompt,
    replay: state.replay,
    ...(flags.reason !== undefined && state.replay.kind !== 'none' ? { reason: flags.reason } : {}),
    explain,
    json: false,
    ollamaStream: flags.stream !== false,
    log: flags.log !== false,
    stats: flags.stats === true,
    quiet: flags.quiet === true,
    color: flags.color,
    raw: flags.raw === true,
    agent: agentFlags(flags),
  });
  // Whether the SIGTERM or SIGHUP that ended the chat came while a turn ran: that turn says so on
  // its own line (`argo: terminated (SIGTERM) (logged as interrupted)`, or `argo: interrupted …` when
  // a Ctrl-C had cut it first). Objects: what callbacks set must be seen after the chat.
  const told = { stop: false };
  const running = { turn: false, cutBySignal: false };
  const onInterrupt: typeof io.onInterrupt = (handler) =>
    io.onInterrupt((signal, handled) => {
      if (signal !== 'SIGINT' && running.turn) running.cutBySignal = true;
      handler(signal, handled);
    });
  const driver: ChatDriver = {
    turn: async (prompt, state, signal, askLine) => {
      const seen: { entry?: LogEntry } = {};
      running.turn = true;
      let outcome: Outcome;
      try {
        outcome = await ask(forState(state), turnOptions(prompt, state, false), io, { transport, signal, askLine, onEntry: (logged) => (seen.entry = logged), ...(tools ? { tools } : {}) });
      } finally {
        running.turn = false;
      }
      // A turn that had already answered when the signal came says nothing: the chat's line does.
      if (running.cutBySignal && outcome !== 'ok') told.stop = true;
      const figures = seen.entry === undefined ? null : statsLine(turnStats(entryFigures(seen.entry)));
      // Output that takes no more ends the chat, whether its reader left or its disk is full.
      const status = outcome === 'ok' || outcome === 'interrupted' || outcome === 'output-closed' || outcome === 'output-failed' ? outcome : 'error';
      return { status, stats: figures };
    },
    // What /explain prints is no answer: on standard error, so `argo chat | tee` keeps only answers.
    explain: async (prompt, state, signal) => {
      await ask(forState(state), turnOptions(prompt, state, true), { ...io, stdout: io.stderr }, { transport, signal, ...(tools ? { tools } : {}) });
      return '';
    },
    last: async (state) => (await import('./last.js')).chatLastText(settings.paths, state.session, io, flags),
    checkSession: (name) => checkSessionNameAt(settings.paths.sessions, name, '/session'),
    checkReplay: (text) => {
      const spec = readReplaySpec(text);
      if (spec === null) throw new UsageError(`/replay: ${replaySpecRule(text)}, got "${text}"`);
      return spec;
    },
    checkModel: (name) => checkModelName(name, '/model'),
  };
  const historyFile = chatHistoryFile(settings.home);
  // Read before the banner: a chat_history that cannot be used is refused before the chat starts.
  const recalled = terminal ? recallableHistory(historyFile) : [];
  if (terminal) {
    io.stderr.write(`chat in session ${settings.session} (replay ${replaySpecText(replay)}) · /help for commands · Ctrl-D or /bye to leave\n`);
  }
  // A piped script is read a line at a time while it is UTF-8; at a line that is not, the chat ends
  // there rather than send it changed. (On a terminal, readline reads the keys.)
  const script = terminal ? null : new Utf8Lines();
  if (script !== null) io.stdin.pipe(script);
  let end: ChatEnd;
  try {
    end = await runChat(
      // A dumb terminal cannot redraw a line: its own editing (Backspace) is used, not readline's. So
      // with stderr sent elsewhere (2>file): readline would echo the keys there, the terminal shows them.
      { input: script ?? io.stdin, stdout: io.stdout, stderr: io.stderr, terminal, lineEditing: terminal && !io.dumbTerminal && (io.stderr as { isTTY?: boolean }).isTTY === true, historyFile, recalled, onInterrupt, keyInterrupt: io.keyInterrupt, hangUp: io.hangUp },
      driver,
      { session: settings.session, replay, model: settings.modelFromFlag ? settings.model : null, hideThinking: settings.hideThinking },
    ).catch((error: unknown) => {
      // A line that is not UTF-8 ended the input, inside a block maybe: that line is what to fix.
      if (error instanceof UsageError && ((script?.bad ?? null) !== null || (script?.tooLong ?? null) !== null)) return 'ok' as const;
      throw error;
    });
  } finally {
    // Nothing more is read: a script longer than the chat (after /bye) does not keep argo waiting.
    if (script !== null) {
      io.stdin.unpipe(script);
      io.stdin.pause();
    }
    await tools?.close();
  }
  const bad = script?.bad ?? null;
  const tooLong = script?.tooLong ?? null;
  // A signal, or the reader gone, ended it first: that is how it ended.
  const endedByInput = end === 'ok' || end === 'failed' || end === 'interrupted';
  if (bad !== null && endedByInput) {
    throw new UsageError(`${notUtf8(`line ${bad.line} of standard input`, bad, 'iconv -f latin1 -t utf-8 script.txt | argo chat')}; the lines before it were sent, it and those after were not`);
  }
  if (tooLong !== null && endedByInput) {
    const mib = tooLong.limit / 1024 / 1024;
    throw new UsageError(
      `line ${tooLong.line} of standard input is longer than ${mib} MiB, the most argo takes as one message: shorten it (or send a part of it, e.g. head -c 1000000 big.log | argo "what failed?"); the lines before it were sent, it and those after were not`,
    );
  }
  // Ended by a signal at its prompt: one line says so, as any command a signal quits ends.
  if ((end === 'terminated' || end === 'hung-up') && !told.stop) io.stderr.write(`argo: ${STOP_LINES[end]}\n`);
  return end;
}
