// Pure: the context window a request will get, a token estimate of its body, and the checks that
// catch Ollama cutting a prompt without saying so (see docs/troubleshooting.md).
import { CLI_HINTS } from './fix-hints.js';
import type { FixHints } from './fix-hints.js';
import { hasFeature } from './versions.js';
import type { OllamaVersion } from './versions.js';

/** Ollama's window when neither the request nor the model sets one (OLLAMA_CONTEXT_LENGTH, 4096 in current releases). */
export const OLLAMA_DEFAULT_NUM_CTX = 4096;
/** The same before Ollama 0.6.7. */
const OLD_DEFAULT_NUM_CTX = 2048;

/**
 * Ollama's default window by release: 2048 before 0.6.7, 4096 since (0.15.5+ picks 32768 or more on
 * a GPU of 24 GiB or more, which only the prompt count shows: see truncationSuspected). An unknown
 * release gets today's.
 */
export function defaultWindowOf(version: OllamaVersion | null): number {
  return hasFeature(version, 'defaultWindow4096') ? OLLAMA_DEFAULT_NUM_CTX : OLD_DEFAULT_NUM_CTX;
}

/** `loaded`: what Ollama reports it loaded the model with, asked after an answer (see serverWindow). */
export type WindowSource = 'flag' | 'config' | 'model' | 'default' | 'loaded';

export interface ContextWindow {
  tokens: number;
  source: WindowSource;
}

/** The request's num_ctx (flag or config), else the model's own, else Ollama's default (its release's: defaultWindowOf). */
export function resolveWindow(requested: ContextWindow | null, modelNumCtx: number | null, defaultNumCtx = OLLAMA_DEFAULT_NUM_CTX): ContextWindow {
  if (requested !== null) return requested;
  if (modelNumCtx !== null) return { tokens: modelNumCtx, source: 'model' };
  return { tokens: defaultNumCtx, source: 'default' };
}

/**
 * `num_ctx` from `/api/show`'s `parameters`: a text block of `name value` lines
 * (`num_ctx                        8192`). Ollama prints the number as Go's %v prints a float, so a
 * million or more comes in exponent form (`1.048576e+06`). Null when the model does not set it.
 */
export function numCtxFromParameters(parameters: string | undefined): number | null {
  if (parameters === undefined) return null;
  for (const line of parameters.split('\n')) {
    const match = /^\s*num_ctx\s+(\d+(?:\.\d+)?(?:e\+?\d+)?)\s*$/i.exec(line);
    if (match?.[1] !== undefined) {
      const value = Number(match[1]);
      if (Number.isSafeInteger(value) && value > 0) return value;
    }
  }
  return null;
}

/** Per message: the role markers and separators a chat template wraps around it. */
export const TOKENS_PER_MESSAGE = 4;
const CHARS_PER_TOKEN = 4;
// Scripts whose characters a tokenizer rarely merges: about one token each.
const DENSE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Extended_Pictographic}]/u;

// Any character outside ASCII: one code unit at or above 0x80 (a surrogate included).
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * A rough token count of some text: one token per 4 characters, but one per CJK character or emoji.
 * Tokenizers differ by model; this errs high rather than low for English prose and code.
 */
export function estimateTextTokens(text: string): number {
  // ASCII (most prompts, every tool definition) has no dense character and one character per code
  // unit: one search instead of a test per character.
  if (!NON_ASCII.test(text)) return Math.ceil(text.length / CHARS_PER_TOKEN);
  let sparse = 0;
  let dense = 0;
  for (const char of text) {
    if (DENSE.test(char)) dense++;
    else sparse++;
  }
  return Math.ceil(sparse / CHARS_PER_TOKEN) + dense;
}

/**
 * What one image (or audio clip: both go in a message's `images`) adds to the estimate: the figure
 * Ollama itself counts for one when it decides which older messages to drop to fit the window
 * (server/prompt.go, "Clip images are represented as 768 tokens"). Models differ (Gemma 3 takes 256,
 * LLaVA 576, larger images more on some), so it is a guess, and only ever a warning's: nothing is
 * refused or cut for it.
 */
export const IMAGE_TOKENS = 768;

export interface EstimableBody {
  /** With the calls the model made, sent back in an agent run (a write_file call holds a whole file), and a client's images (argo serve's plain mode). */
  messages?: readonly { role?: string; content: string; tool_calls?: readonly unknown[]; images?: readonly unknown[] }[];
  prompt?: string;
  system?: string;
  /** The tool definitions, which a chat template writes into the prompt as JSON. */
  tools?: readonly unknown[];
}

/** The prompt tokens of a chat or generate body: every message's text, calls and images plus its template overhead, and the tools. */
export function estimatePromptTokens(body: EstimableBody): number {
  if (body.messages === undefined) return [body.system, body.prompt].reduce((sum, text) => (text === undefined ? sum : sum + estimateTextTokens(text) + TOKENS_PER_MESSAGE), 0);
  let sum = asJsonTokens(body.tools);
  for (const message of body.messages) {
    sum += estimateTextTokens(message.content) + asJsonTokens(message.tool_calls) + IMAGE_TOKENS * (message.images?.length ?? 0) + TOKENS_PER_MESSAGE;
  }
  return sum;
}

/**
 * The tokens of a model's answer (its text, its reasoning and its tool calls), counted as a message
 * of a prompt is: for an answer Ollama gave no count of (one cut short before its last chunk).
 */
export function estimateAnswerTokens(answer: { content: string; thinking?: string | undefined; tool_calls?: readonly unknown[] | undefined }): number {
  return estimateTextTokens(answer.content) + estimateTextTokens(answer.thinking ?? '') + asJsonTokens(answer.tool_calls);
}

function asJsonTokens(values: readonly unknown[] | undefined): number {
  return values === undefined || values.length === 0 ? 0 : estimateTextTokens(JSON.stringify(values));
}

export interface TruncationCheck {
  window: ContextWindow;
  estimate: number;
}

/** Before sending: the estimate alone says the prompt will not fit. */
export function overWindow(check: TruncationCheck): boolean {
  return check.estimate > check.window.tokens;
}

/**
 * After the answer: Ollama reports at most the window as `prompt_eval_count` when it cut the
 * prompt, so a count that reaches the window is the sign. A count below the estimate alone proves
 * nothing (a cached prefix is not counted), so it only confirms a prompt already over the window.
 */
export function truncationSuspected(check: TruncationCheck, promptEvalCount: number | null): boolean {
  // Past Ollama's usual default, the count proves the server's window is larger (OLLAMA_CONTEXT_LENGTH,
  // or the larger default recent versions pick on a big GPU): nothing was cut at 4096.
  if (check.window.source === 'default' && promptEvalCount !== null && promptEvalCount > check.window.tokens) return false;
  if (overWindow(check)) return true;
  return promptEvalCount !== null && promptEvalCount >= check.window.tokens;
}

/**
 * Whether a prompt count could be the window itself, for a prompt not checked before sending (a small
 * one): windows are set in round numbers (256, 512, 2048, 300…), so a count that is a multiple of
 * 64 or of 100 is worth asking the model's window about. Any other count cannot be a cut to such a
 * window, and asking after every small prompt would cost a request per question.
 */
export function countMayBeWindow(promptEvalCount: number | null): boolean {
  return promptEvalCount !== null && promptEvalCount > 0 && (promptEvalCount % 64 === 0 || promptEvalCount % 100 === 0);
}

const SOURCE_WORDS: Record<WindowSource, string> = {
  flag: 'from --num-ctx',
  config: 'from config.json options.num_ctx',
  model: "the model's num_ctx",
  default: "Ollama's default",
  loaded: 'the window Ollama loaded the model with',
};

/** A window size that fits the estimate with room for the answer: the next power of two above 1.25×. */
export function suggestedNumCtx(estimate: number, window: number): number {
  let size = Math.max(window * 2, 2048);
  while (size < estimate * 1.25) size *= 2;
  return size;
}

/**
 * What made the prompt long: the turn's planned prompt (its replay), an agent run's first request
 * with the tool definitions, or a later one grown by the tool results sent back (the replay budget is
 * not what to lower then).
 */
export type PromptGrowth = 'planned' | 'tool-definitions' | 'tool-results';

const GROWTH_PROMPT: Record<PromptGrowth, string> = {
  planned: 'the prompt',
  'tool-definitions': 'the prompt with the tool definitions',
  'tool-results': 'the prompt with the tool results so far',
};

/**
 * How a line names its fixes: `hints`, the settings the user can change where the turn was asked (a
 * chat's start-up flags mean starting it again); `replayed`, whether the prompt holds replayed turns,
 * without which replaying less cannot shorten it. Without them, a question's flags, and a replay.
 */
export interface WindowFixes {
  hints?: Pick<FixHints, 'numCtx' | 'replayLess' | 'fewerTools' | 'configFile'>;
  replayed?: boolean;
}

/** What to do about a prompt of about `estimate` tokens too long for a window of `tokens`: a larger window, or a shorter prompt. */
export function windowFix(estimate: number, tokens: number, growth: PromptGrowth = 'planned', fixes: WindowFixes = {}): string {
  const hints = fixes.hints ?? CLI_HINTS;
  const lower = { planned: fixes.replayed === false ? 'shorten the prompt' : hints.replayLess, 'tool-definitions': hints.fewerTools, 'tool-results': `lower the tools' result budgets (toolBudgets in ${hints.configFile})` }[growth];
  return `${hints.numCtx(suggestedNumCtx(estimate, tokens))} or ${lower}`;
}

/** The one stderr line, before sending (`promptEvalCount` null) or after the answer. */
export function truncationLine(check: TruncationCheck, promptEvalCount: number | null, growth: PromptGrowth = 'planned', fixes: WindowFixes = {}): string {
  const { tokens, source } = check.window;
  const fix = windowFix(check.estimate, tokens, growth, fixes);
  const window = `the context window (${tokens} tokens, ${SOURCE_WORDS[source]})`;
  if (promptEvalCount === null || overWindow(check)) {
    const counted = promptEvalCount === null ? '' : `; Ollama read ${promptEvalCount}`;
    return `argo: ${GROWTH_PROMPT[growth]} (about ${check.estimate} tokens) is longer than ${window}${counted}; Ollama cuts such prompts silently — ${fix}`;
  }
  return `argo: Ollama read ${promptEvalCount} prompt tokens, all of ${window}; the prompt was probably cut — ${fix}`;
}
