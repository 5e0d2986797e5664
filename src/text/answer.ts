// Pure rules about a model's text: whether it says anything once its reasoning is set aside, and
// how one response's text follows another's on screen.

/** A `<think>` block a model wrote into its text (an unclosed one runs to the end). */
const THINK_BLOCK = /<think>[\s\S]*?(?:<\/think>|$)/g;
const THINK_END = '</think>';

/**
 * True when the text is blank, or only reasoning: `<think>` blocks, or reasoning whose opening tag
 * the model's template wrote (text up to a `</think>` that no `<think>` opened). Seed 001: content
 * after the `<think>` blocks is what makes an answer.
 */
export function isEmptyAnswer(text: string): boolean {
  const end = text.indexOf(THINK_END);
  const open = text.indexOf('<think>');
  const unopened = end !== -1 && (open === -1 || end < open) ? text.slice(end + THINK_END.length) : text;
  return unopened.replace(THINK_BLOCK, '').trim() === '';
}

/** The newlines that put `next` one blank line below text ending in `shownEnd`, counting those either side already has. */
export function paragraphBreak(shownEnd: string, next: string): string {
  const trailing = shownEnd.endsWith('\n\n') ? 2 : shownEnd.endsWith('\n') ? 1 : 0;
  const leading = next.startsWith('\n\n') ? 2 : next.startsWith('\n') ? 1 : 0;
  return '\n'.repeat(Math.max(0, 2 - trailing - leading));
}
