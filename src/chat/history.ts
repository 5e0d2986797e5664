// The chat's `chat_history`: the lines typed at the prompt, oldest first, one a line, shared by
// every chat of the data home. Each chat adds its lines to what the file holds when it writes, under
// a lock, so two chats at once keep each other's lines.
import { join } from 'node:path';
import { isMissing, readDataText, writeFileAtomic } from '../log/fs.js';
import { locksDir, withLock } from '../log/lock.js';
import { neutralizeControls } from '../output/terminal-text.js';

/** The chat history file of the data home `home`. */
export function chatHistoryFile(home: string): string {
  return join(home, 'chat_history');
}

/** The most lines the history keeps (the newest). */
export const HISTORY_SIZE = 1000;

/**
 * The file's lines, oldest first. Never through a link (another's file would become what Up recalls
 * and is sent), never waiting on a named pipe: a link, a folder or a pipe there is an error saying
 * what it is, as for every file of the data home.
 */
function readHistory(file: string): string[] {
  try {
    return readDataText(file).split(/\r?\n/).filter((line) => line !== '');
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

/**
 * What the up arrow recalls, newest first as readline wants it. The file is anyone's to write (a
 * script, an editor): its control characters are shown, not obeyed, when a line is drawn.
 */
export function recallableHistory(file: string): string[] {
  return readHistory(file).slice(-HISTORY_SIZE).reverse().map(neutralizeControls);
}

/**
 * `added` (oldest first) after what `kept` holds, each line once, where it was typed last; the newest
 * `size` lines. A line typed again moves to the end, as readline moves it to the top.
 */
export function mergeHistory(kept: readonly string[], added: readonly string[], size: number = HISTORY_SIZE): string[] {
  const newest = new Map<string, number>();
  added.forEach((line, at) => newest.set(line, at));
  const addedOnce = added.filter((line, at) => newest.get(line) === at);
  return [...kept.filter((line) => !newest.has(line)), ...addedOnce].slice(-size);
}

/**
 * Adds each line typed to the history file, one write at a time: the file as it is now with this
 * chat's new lines after it, replaced whole (private, never through a link). A failure is said once,
 * and its lines are tried again with the next; the chat goes on either way.
 */
export class HistorySaver {
  private writing: Promise<void> = Promise.resolve();
  private waiting: string[] = [];
  private warned = false;

  constructor(
    private readonly file: string,
    private readonly stderr: NodeJS.WritableStream,
  ) {}

  add(line: string): void {
    this.waiting.push(line);
    this.writing = this.writing.then(() => this.write());
  }

  flush(): Promise<void> {
    return this.writing;
  }

  private async write(): Promise<void> {
    // An earlier write took them all.
    if (this.waiting.length === 0) return;
    const lines = this.waiting;
    this.waiting = [];
    try {
      // locksDir takes a path inside the data home: chat_history's folder is the home itself.
      await withLock(locksDir(this.file), 'chat-history', `the chat history ${this.file}`, async () => {
        const merged = mergeHistory(readHistory(this.file), lines);
        await writeFileAtomic(this.file, `${merged.join('\n')}\n`, { inHome: true });
      });
    } catch (error) {
      this.waiting = [...lines, ...this.waiting].slice(-HISTORY_SIZE);
      if (this.warned) return;
      this.warned = true;
      this.stderr.write(`argo: cannot save the chat history to ${this.file} (${error instanceof Error ? error.message : String(error)}); the chat goes on without it\n`);
    }
  }
}
