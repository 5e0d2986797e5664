// Pure: what counts as a prompt, the same for the CLI's words, a chat's line and a server request.

/** True when `text` gives the model nothing to answer: empty, or only whitespace (the CLI's "no prompt"). */
export function isBlankPrompt(text: string): boolean {
  return text.trim() === '';
}

/**
 * A question as typed (the CLI's words, Argo mode's last user message): the blanks at its ends are
 * where the words sat, not part of them, so `argo "  hi "` and a text area's `"hi\n"` ask the same.
 */
export function typedPrompt(text: string): string {
  return text.trim();
}
