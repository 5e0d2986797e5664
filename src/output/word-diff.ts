// Pure: a word diff of two answers, for a terminal (colours) or plain text (`[-old-]{+new+}`).
import type { ChalkInstance } from 'chalk';
import { diffWords } from 'diff';
import { neutralizeControls } from './terminal-text.js';

export interface WordDiff {
  text: string;
  added: number;
  removed: number;
}


function countWords(text: string): number {
  return text.split(/\s+/).filter((word) => word !== '').length;
}

/**
 * `color` with a level above 0 marks removed words red and struck through and added words green
 * and underlined (as `git diff --word-diff=color`); otherwise the markers of `--word-diff=plain`.
 */
export function wordDiff(before: string, after: string, color: ChalkInstance): WordDiff {
  const plain = color.level === 0;
  let added = 0;
  let removed = 0;
  const parts = diffWords(neutralizeControls(before), neutralizeControls(after)).map((change) => {
    if (change.added) {
      added += countWords(change.value);
      return plain ? `{+${change.value}+}` : color.green.underline(change.value);
    }
    if (change.removed) {
      removed += countWords(change.value);
      return plain ? `[-${change.value}-]` : color.red.strikethrough(change.value);
    }
    return change.value;
  });
  return { text: parts.join(''), added, removed };
}

/** `+3 −2 words` or `the answers are the same`. */
export function diffSummary(diff: WordDiff): string {
  if (diff.added === 0 && diff.removed === 0) return 'the answers are the same';
  return `+${diff.added} −${diff.removed} words`;
}
