// Pure: whether a model's text says anything once its reasoning is set aside.

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
