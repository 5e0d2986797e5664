// Pure: how typed lines become chat inputs — multi-line blocks between `"""` and slash commands.
import { UsageError } from '../errors.js';
import { isBlankPrompt } from '../text/prompt.js';
import { similarNames } from '../text/similar.js';

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
  /** `name`: as typed after the slash (`sesion`, `bye.`); `meant`: the command it is closest to, if any. */
  | { kind: 'unknown-command'; name: string; meant: string | null };

/** /bye's other names, as typed. */
const BYE_NAMES = ['exit', 'quit'];

// `/word`, then what may be glued to it (`/bye.`, `/last2`, `/session:work`: never a letter, which
// would be part of the word), then the argument. A `/` anywhere in the first word makes it a path
// (`/etc/hosts is what?`), so such a line matches nothing and is a message.
const SLASH_LINE = /^\/([a-z]+)([^\p{L}\s/][^\s/]*)?(?:\s+([\s\S]*))?$/iu;

/**
 * `/name argument` is a command when the name is one of ours; `//text` sends `/text`; any other
 * `/word`, and a command's name with something glued to it (/bye.), is refused rather than sent,
 * since it is almost always a mistyped command. A line whose first word is a path, or a word with
 * something glued to it that is near no command (/v1, /README.md), is a message.
 */
export function classifyInput(text: string): ChatInput {
  if (text.startsWith('//')) return { kind: 'prompt', text: text.slice(1) };
  const match = SLASH_LINE.exec(text.trim());
  if (!text.startsWith('/') || !match?.[1]) return { kind: 'prompt', text };
  const word = match[1].toLowerCase();
  const glued = match[2] ?? '';
  const argument = (match[3] ?? '').trim();
  if (glued === '') {
    if ((SLASH_COMMANDS as readonly string[]).includes(word)) return { kind: 'command', name: word as SlashName, argument, typed: word };
    if (BYE_NAMES.includes(word)) return { kind: 'command', name: 'bye', argument, typed: word };
  }
  const names = [...SLASH_COMMANDS, ...BYE_NAMES];
  const meant = names.includes(word) ? word : (similarNames(word, names)[0] ?? null);
  // A word with something glued to it and no command near (/v1, /README.md) is a message, not a typo.
  if (glued !== '' && meant === null) return { kind: 'prompt', text };
  return { kind: 'unknown-command', name: `${word}${glued}`, meant };
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
