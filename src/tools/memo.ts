// memo.json in the data home: one JSON object {key: value}, at most 100 entries, values at most
// 1,000 code points. The store's one codec; the `memo` tool and `argo memo` both go through it.
import { join } from 'node:path';
import { RuntimeError } from '../errors.js';
import { isMissing, readDataText, writeFileAtomic } from '../log/fs.js';
import { KeyedQueue } from '../log/keyed-queue.js';
import { DEFAULT_LOCK_WAIT_MS, LockWaitAbortedError, locksDir, withLock } from '../log/lock.js';
import { CONTROLS } from '../output/terminal-text.js';
import { codePoints } from '../replay/budget.js';
import { maskSecrets } from '../text/secrets.js';
import { quoting } from './foreign-line.js';
import { ToolError, stringArg } from './types.js';
import type { Tool, ToolContext, ToolResult } from './types.js';

export const MEMO_FILE = 'memo.json';
export const MEMO_MAX_ENTRIES = 100;
export const MEMO_MAX_VALUE_CHARS = 1000;
export const MEMO_MAX_KEY_CHARS = 100;

export type Memo = Record<string, string>;

/** A memo rule broken by a set: the message says which limit and how to make room. */
export class MemoLimitError extends Error {
  override name = 'MemoLimitError';
}

export function memoPath(home: string): string {
  return join(home, MEMO_FILE);
}

/**
 * MemoSchema's verdict (memo-schema.ts) without loading zod, which every agent run with a memo would
 * pay at start-up; test/tools/memo.test.ts proves they agree.
 */
export function isMemo(value: unknown): value is Memo {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((item) => typeof item === 'string');
}

/** Parses memo.json's text; throws naming the file and the field that is wrong (zod loads only then). */
export async function parseMemo(text: string, file: string): Promise<Memo> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Every memo command reads the file first, so none can repair it: only an edit or a delete can.
    throw new RuntimeError(`${file} is not valid JSON; fix it by hand or delete it (the memo then starts empty)`);
  }
  if (isMemo(value)) return value;
  const { MemoSchema } = await import('./memo-schema.js');
  const parsed = MemoSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // Quoted as JSON: a memo key may hold a newline, and the error is one line. Masked first, so an
    // unclosed quote in it cannot take the closing one when the whole error is masked.
    const where = issue?.path.length ? JSON.stringify(maskSecrets(issue.path.join('.'))) : 'the top level';
    throw new RuntimeError(`${file}: ${where} must be ${issue?.path.length ? 'a string' : 'an object of strings'}; fix or remove the file`);
  }
  return parsed.data;
}

/**
 * Keys sorted, so the same memo always serialises (and prompts) the same way. Built as own entries:
 * assigning would run Object.prototype's `__proto__` setter for that key and lose the entry.
 */
export function serializeMemo(memo: Memo): string {
  const sorted: Memo = Object.fromEntries(Object.keys(memo).sort().map((key) => [key, memo[key] ?? '']));
  return `${JSON.stringify(sorted, null, 2)}\n`;
}

export async function readMemo(home: string): Promise<Memo> {
  const file = memoPath(home);
  try {
    return await parseMemo(readDataText(file), file);
  } catch (error) {
    if (isMissing(error)) return {};
    throw error;
  }
}

/**
 * What a memo.json edited by hand holds past the limits, in one line naming the fix; null when it
 * keeps them. `argo memo list` and `rm` still read such a file, so the user can mend it.
 */
export function memoOverLimits(memo: Memo, file: string): string | null {
  const keys = Object.keys(memo);
  if (keys.length > MEMO_MAX_ENTRIES) {
    return `${file} holds ${keys.length} entries, more than the ${MEMO_MAX_ENTRIES} allowed; remove ${keys.length - MEMO_MAX_ENTRIES} with "argo memo rm KEY" (argo memo lists them), then ask again`;
  }
  for (const key of keys.sort()) {
    const keyLength = codePoints(key);
    if (keyLength > MEMO_MAX_KEY_CHARS) return `${file}: a key has ${keyLength} characters, more than the ${MEMO_MAX_KEY_CHARS} allowed (${COUNTED}); remove it with "argo memo rm KEY" (argo memo lists them), then ask again`;
    const length = codePoints(memo[key] ?? '');
    if (length > MEMO_MAX_VALUE_CHARS) {
      // Quoted as JSON, masked: a hand-edited key may hold a newline or a secret.
      return `${file}: the value of ${JSON.stringify(maskSecrets(key))} has ${length} characters, more than the ${MEMO_MAX_VALUE_CHARS} allowed (${COUNTED}); shorten it with "argo memo set" or remove it with "argo memo rm", then ask again`;
    }
  }
  return null;
}

/**
 * The memo as an agent run's system prompt takes it: a memo.json past the limits (edited by hand) is
 * refused with what is wrong and the fix, not put whole into every request.
 */
export async function readMemoForPrompt(home: string): Promise<Memo> {
  const memo = await readMemo(home);
  const over = memoOverLimits(memo, memoPath(home));
  if (over !== null) throw new RuntimeError(over);
  return memo;
}

/** How the limits count, as the replay budget does: a flag is one character to a person and 2 here, so the message says so. */
const COUNTED = 'counted in Unicode code points (a flag or a skin-toned emoji is 2)';

/** The memo with `key` set: throws MemoLimitError past either limit. Pure. */
export function withEntry(memo: Memo, key: string, value: string): Memo {
  if (key.trim() === '') throw new MemoLimitError('a memo key must not be empty or only blanks: give it a name, such as "lang"');
  const keyLength = codePoints(key);
  if (keyLength > MEMO_MAX_KEY_CHARS) throw new MemoLimitError(`a memo key may have at most ${MEMO_MAX_KEY_CHARS} characters, ${COUNTED}, this one has ${keyLength}; shorten it`);
  // A key stands bare in the system prompt: a line break in it (a newline, NEL, U+2028) would start an entry of its own.
  if (key.search(CONTROLS) !== -1) throw new MemoLimitError('a memo key must not contain control characters or line breaks (newlines, U+2028, tabs, escapes)');
  const length = codePoints(value);
  if (length > MEMO_MAX_VALUE_CHARS) {
    throw new MemoLimitError(`a memo value may have at most ${MEMO_MAX_VALUE_CHARS} characters, ${COUNTED}, this one has ${length}; shorten it`);
  }
  const entries = Object.keys(memo).length;
  if (!Object.hasOwn(memo, key) && entries >= MEMO_MAX_ENTRIES) {
    // A memo.json edited by hand may hold more than the limit: its real count, and how many must go.
    const held = entries === MEMO_MAX_ENTRIES ? `${MEMO_MAX_ENTRIES} entries` : `it holds ${entries} entries, more than the ${MEMO_MAX_ENTRIES} allowed`;
    const room = entries === MEMO_MAX_ENTRIES ? 'one' : String(entries - MEMO_MAX_ENTRIES + 1);
    throw new MemoLimitError(`the memo is full (${held}); remove ${room} first (argo memo rm KEY)`);
  }
  return { ...memo, [key]: value };
}

/**
 * Read, change, write under the data home's `locks/memo` lock: an atomic write alone lets two
 * processes (or two calls of one round) each write over the other's change. withLock also queues
 * this process's callers, so no queue of our own is needed. `signal` (a tool call's: cut or timed
 * out) ends the wait for the lock, and nothing is written once it has aborted: a call logged as
 * failed or cut never takes effect afterwards.
 */
function update<T>(home: string, change: (memo: Memo) => { memo: Memo | null; result: T }, signal?: AbortSignal): Promise<T> {
  const file = memoPath(home);
  const what = `the memo ${file}`;
  // locksDir takes a path inside the data home: memo.json's folder is the home itself.
  return withLock(
    locksDir(file),
    'memo',
    what,
    async () => {
      const { memo, result } = change(await readMemo(home));
      if (memo === null) return result;
      if (signal?.aborted === true) throw new LockWaitAbortedError(`${what} was not changed: the work was cut`);
      await writeFileAtomic(file, serializeMemo(memo), { inHome: true });
      return result;
    },
    DEFAULT_LOCK_WAIT_MS,
    signal,
  );
}

export function setMemo(home: string, key: string, value: string, signal?: AbortSignal): Promise<void> {
  return update(home, (memo) => ({ memo: withEntry(memo, key, value), result: undefined }), signal);
}

/** True when the key was there. */
export function deleteMemo(home: string, key: string, signal?: AbortSignal): Promise<boolean> {
  return update(home, (memo) => {
    if (!Object.hasOwn(memo, key)) return { memo: null, result: false };
    const rest = { ...memo };
    // eslint-disable-next-line @typescript-eslint/no-dynamic-delete -- a record keyed by user strings
    delete rest[key];
    return { memo: rest, result: true };
  }, signal);
}

/** `text` as a JSON string on one line: JSON.stringify leaves the line breaks NEL, U+2028 and U+2029 raw. */
function oneLineString(text: string): string {
  return JSON.stringify(text).replace(/[\u0085\u2028\u2029]/g, (lineBreak) => `\\u${lineBreak.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The system prompt's memo block; empty when there is nothing to remember. Values are JSON strings
 * so none can start a line of its own; so is a key with controls (a memo.json edited by hand).
 */
export function memoPrompt(memo: Memo): string {
  const keys = Object.keys(memo).sort();
  if (keys.length === 0) return '';
  const shownKey = (key: string): string => (key.search(CONTROLS) === -1 ? key : oneLineString(key));
  return ['Memo (notes kept with the memo tool):', ...keys.map((key) => `- ${shownKey(key)}: ${oneLineString(memo[key] ?? '')}`)].join('\n');
}

const OPERATIONS = ['get', 'set', 'delete', 'list'] as const;

// A round's calls run in parallel; memo calls of one data home run one at a time, in the order they
// were made (as file edits do, tools/edit.ts), so a get after a set in one round sees the set.
const memoCalls = new KeyedQueue();

export const memoTool: Tool = {
  name: 'memo',
  description: `Remember things across runs: set a key to a value (at most ${MEMO_MAX_VALUE_CHARS} characters, ${MEMO_MAX_ENTRIES} entries), get it, delete it or list all. The memo is shown in the system prompt.`,
  parameters: {
    type: 'object',
    properties: {
      operation: { type: 'string', enum: [...OPERATIONS] },
      key: { type: 'string', description: 'for get, set and delete' },
      value: { type: 'string', description: 'for set' },
    },
    required: ['operation'],
    additionalProperties: false,
  },
  // It writes only Argo's own store: a side effect, but never asked about.
  sideEffects: true,
  ownStore: true,
  // Lined up before any await: a call's place in line is its place in the round.
  run: (args, context) => memoCalls.run(context.home, () => runMemoCall(args, context)),
};

async function runMemoCall(args: Record<string, unknown>, context: ToolContext): Promise<ToolResult> {
  const operation = stringArg(args, 'operation');
  const key = stringArg(args, 'key');
  if (operation === 'list') return { memo: await readMemo(context.home) };
  if (key === undefined) throw new ToolError(quoting`key is required for ${operation ?? 'this operation'}`);
  switch (operation) {
    case 'get': {
      const memo = await readMemo(context.home);
      return Object.hasOwn(memo, key) ? { key, value: memo[key] } : { key, value: null };
    }
    case 'set': {
      const value = stringArg(args, 'value');
      if (value === undefined) throw new ToolError('value is required for set');
      try {
        await setMemo(context.home, key, value, context.signal);
      } catch (error) {
        if (error instanceof MemoLimitError) throw new ToolError(error.message, false);
        throw error;
      }
      return { key, saved: true };
    }
    default:
      return { key, deleted: await deleteMemo(context.home, key, context.signal) };
  }
}
