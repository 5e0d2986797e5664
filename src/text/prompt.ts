// Pure: what counts as a prompt, the same for the CLI's words, a chat's line and a server request.

/** True when `text` gives the model nothing to answer: empty, or only whitespace (the CLI's "no prompt"). */
export function isBlankPrompt(text: string): boolean {
  return text.trim() === '';
}
