// Pure: how typed lines become chat inputs — multi-line blocks between `"""` and slash commands.
import { UsageError } from '../errors.js';
import { isBlankPrompt } from '../text/prompt.js';

const FENCE = '"""';

/** Lines gathered so far for a `"""` block; null when not inside one. */
export type Pending = string[] | null;

export type LineResult =
  | { kind: 'more'; pending: string[] }
  /** `block`: it came between `"""` lines, so it is a message even when it starts with a slash. */
  | { kind: 'input'; text: string; block: boolean }
  | { kind: 'empty' };

/**
 * One typed line. `"""` opens a block (text after it on the same line is its first line); a line
 * ending in `"""` closes it. The text keeps its indentation and inner blank lines as typed.
 */
export function takeLine(pending: Pending, line: string): LineResult {
  if (pending !== null) {
    if (line.trimEnd().endsWith(FENCE)) {
      const last = line.trimEnd().slice(0, -FENCE.length);
      const lines = last === '' ? pending : [...pending, last];
      return finish(lines.join('\n'), true);
    }
    return { kind: 'more', pending: [...pending, line] };
  }
  if (line.trimStart().startsWith(FENCE)) {
    const rest = line.trimStart().slice(FENCE.length);
    // `"""one line"""` is a complete block on its own.
    if (rest.length >= FENCE.length && rest.trimEnd().endsWith(FENCE)) return finish(rest.trimEnd().slice(0, -FENCE.length), true);
    return { kind: 'more', pending: rest === '' ? [] : [rest] };
  }
  return finish(line, false);
}

function finish(text: string, block: boolean): LineResult {
  return isBlankPrompt(text) ? { kind: 'empty' } : { kind: 'input', text, block };
}

/** A line that is only an answer to a yes/no question (`y`, `yes`, `n`, `no`, any case), not a message. */
export function isAnswerWord(line: string): boolean {
  return /^\s*(?:y(?:es)?|no?)\s*$/i.test(line);
}

export const SLASH_COMMANDS = ['help', 'session', 'replay', 'model', 'thinking', 'explain', 'stats', 'last', 'bye'] as const;
export type SlashName = (typeof SLASH_COMMANDS)[number];

export type ChatInput =
  | { kind: 'prompt'; text: string }
  /** `typed`: the name as written (lower case), e.g. exit for bye. */
  | { kind: 'command'; name: SlashName; argument: string; typed: string }
  | { kind: 'unknown-command'; name: string };

/**
 * `/name argument` is a command when the name is one of ours; `//text` sends `/text`; any other
 * `/word` is refused rather than sent, since it is almost always a mistyped command.
 */
export function classifyInput(text: string): ChatInput {
  if (text.startsWith('//')) return { kind: 'prompt', text: text.slice(1) };
  const match = /^\/([a-z]+)(?:\s+([\s\S]*))?$/i.exec(text.trim());
  if (!text.startsWith('/') || !match?.[1]) return { kind: 'prompt', text };
  const name = match[1].toLowerCase();
  const argument = (match[2] ?? '').trim();
  if ((SLASH_COMMANDS as readonly string[]).includes(name)) return { kind: 'command', name: name as SlashName, argument, typed: name };
  if (name === 'exit' || name === 'quit') return { kind: 'command', name: 'bye', argument, typed: name };
  return { kind: 'unknown-command', name };
}

/** `/thinking hide` → true, `/thinking show` → false (any case); anything else is refused. */
export function hidesThinking(argument: string): boolean {
  const word = argument.toLowerCase();
  if (word === 'hide' || word === 'show') return word === 'hide';
  throw new UsageError(`/thinking: use show or hide, got "${argument}"`);
}

export const CHAT_HELP = `Type a question and press Enter; each one is a turn of the session, replayed and logged.
  """            start a multi-line message; a line ending in """ ends it
  /session NAME  switch to another session
  /replay SPEC   replay for the next turns: none, last:N or session
  /model NAME    answer with another model
  /thinking hide|show  hide a thinking model's reasoning from now on, or show it again
  /explain [TEXT] show the replay decision and request for TEXT (or for the next line you type)
  /stats         the last answer's token counts and speed
  /last          print the session's last answer again
  /bye           leave (so do Ctrl-D, /exit and /quit)
  //TEXT         send a message that starts with a slash
Ctrl-C stops an answer; the chat goes on.
`;
