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

const THINK_START = '<think>';

/**
 * Reasoning whose opening tag the model's template wrote, as a model's text then starts: words up to
 * a `</think>` on a line of its own that ends the text or is followed by a blank line, no `<think>`
 * before it. Tighter than isEmptyAnswer's reading, as this one moves words out of the answer.
 */
const UNOPENED_THINKING = /^((?:(?!<think>)[\s\S])*?)(?:^|\n)<\/think>(?:\n\n|\s*$)/;

/**
 * Reasoning a model wrote into its text ahead of its answer, as a thinking model does when Ollama
 * does not give it a field of its own (before 0.9.0; before 0.12.4 without `think`): the `<think>`
 * blocks the text starts with, whitespace around them aside, or the reasoning before a `</think>`
 * whose opening tag the template wrote. An unclosed block runs to the end: all reasoning, no
 * answer. Null when the text does not start with either (a tag further on is the answer's).
 */
export function leadingThinking(text: string): { thinking: string; answer: string } | null {
  const parts: string[] = [];
  let rest = text.trimStart();
  const unopened = UNOPENED_THINKING.exec(rest);
  if (unopened !== null) {
    parts.push((unopened[1] ?? '').trim());
    rest = rest.slice(unopened[0].length).trimStart();
  }
  while (rest.startsWith(THINK_START)) {
    const end = rest.indexOf(THINK_END, THINK_START.length);
    parts.push(rest.slice(THINK_START.length, end === -1 ? undefined : end).trim());
    rest = end === -1 ? '' : rest.slice(end + THINK_END.length).trimStart();
  }
  if (parts.length === 0) return null;
  return { thinking: parts.filter((part) => part !== '').join('\n\n'), answer: rest };
}

/** The newlines that put `next` one blank line below text ending in `shownEnd`, counting those either side already has. */
export function paragraphBreak(shownEnd: string, next: string): string {
  const trailing = shownEnd.endsWith('\n\n') ? 2 : shownEnd.endsWith('\n') ? 1 : 0;
  const leading = next.startsWith('\n\n') ? 2 : next.startsWith('\n') ? 1 : 0;
  return '\n'.repeat(Math.max(0, 2 - trailing - leading));
}
