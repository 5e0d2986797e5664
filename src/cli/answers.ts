// Answers typed at a [y/N] question. Its own module: the agent's Allow? needs it, and an agent run
// must not load what cli/common.ts brings (chalk, commander).

/** A typed answer that says yes (`y`, `yes`, any case); anything else is no. */
export function isYes(answer: string): boolean {
  return /^\s*y(es)?\s*$/i.test(answer);
}
