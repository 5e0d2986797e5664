// Text a tool's outside world wrote (an MCP server's stderr, a start-up failure) that Argo logs and
// shows: one line, its escape sequences and controls gone, secret-looking values masked, bounded.
import { clipText } from '../output/cut.js';
import { cleanLine } from '../output/terminal-text.js';
import { maskSecrets } from '../text/secrets.js';

/** The longest reason a tool is unavailable for (`tools_unavailable[].reason`, the CLI's note, `argo tools`). */
export const UNAVAILABLE_REASON_CHARS = 500;

/**
 * `text` as one line of at most `max` characters (then `…`). Masked before the cut, so a secret
 * across the cut is masked whole rather than left in part; the masking reads a few times `max`
 * characters at most, however long the text.
 */
export function foreignLine(text: string, max: number): string {
  return clipText(maskSecrets(cleanLine(text, 4 * max)), max);
}
